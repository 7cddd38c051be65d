# A large Matrix source on one GPU: read block by block to the device (the
# source's view, R/matrix_sources.R) against the ways before it: the source
# read into a scratch file (read_matrix_source(), what gpu_kmeans() did for
# a source above options(gpukmeans.source_memory)) and as.matrix() by hand.
# For each: wall seconds of gpu_kmeans() (reading included), its
# transfer_to_device, the peak resident memory the way added (VmHWM, reset
# before each through /proc/self/clear_refs), and that the fits agree.
# usage (GPU machine): sh tools/gpu/run-r.sh tools/gpu/source-bench.R [n] [d] [k] [density]
args <- as.numeric(commandArgs(TRUE))
n <- if (length(args) >= 1) args[1] else 1e7
d <- if (length(args) >= 2) args[2] else 16
k <- if (length(args) >= 3) args[3] else 256
density <- if (length(args) >= 4) args[4] else 0.5
suppressMessages({ library(gpukmeans); library(Matrix) })
source("tools/gpu/blobs.R")
info <- gpukmeans_info()
cat(sprintf("gpukmeans %s, %s, %s\n", packageVersion("gpukmeans"), info$devices$name[1], format(Sys.time(), tz = "UTC", usetz = TRUE)))
status_gb <- function(field) {
  l <- grep(paste0("^", field, ":"), readLines("/proc/self/status"), value = TRUE)
  as.numeric(gsub("[^0-9]", "", l)) / 2^20
}
reset_peak <- function() isTRUE(tryCatch({ writeLines("5", "/proc/self/clear_refs"); TRUE }, error = function(e) FALSE))

t0 <- Sys.time()
x <- bench_blobs(n, d, k)
x[sample.int(length(x), floor((1 - density) * length(x)))] <- 0
m <- methods::as(x, "CsparseMatrix")
rm(x); invisible(gc())
cat(sprintf("source: %s x %s dgCMatrix, %.0f%% nonzero (%.2f GB; dense %.2f GB), made in %.1f s\n",
            format(n, big.mark = ","), d, 100 * length(m@x) / (n * d), (length(m@x) * 12 + (d + 1) * 4) / 1e9,
            n * d * 8 / 1e9, as.numeric(difftime(Sys.time(), t0, units = "secs"))))

run <- function(label, prep, precision) {
  invisible(gc())
  base <- status_gb("VmRSS")
  peak_ok <- reset_peak()
  t1 <- Sys.time()
  data <- prep()
  set.seed(7)
  fit <- gpu_kmeans(data, k, iter.max = 10, precision = precision, backend = "cuda")
  wall <- as.numeric(difftime(Sys.time(), t1, units = "secs"))
  peak <- if (peak_ok) status_gb("VmHWM") - base else NA
  rm(data); invisible(gc())
  cat(sprintf("%-28s %-6s wall %6.2f s  to device %6.2f s  compute %5.3f s  peak +%5.2f GB  iter %d\n",
              label, precision, wall, attr(fit, "timing")[["transfer_to_device"]],
              attr(fit, "timing")[["compute"]], peak, fit$iter))
  cat("   device:", attr(fit, "device"), "\n")
  fit
}
for (precision in c("double", "single")) {
  a <- run("source, block by block", function() m, precision)
  b <- run("source via scratch file", function() gpukmeans:::read_matrix_source(m), precision)
  c <- run("as.matrix() by hand", function() as.matrix(m), precision)
  same <- function(f, g) identical(unname(f$cluster), unname(g$cluster)) && identical(unname(f$centers), unname(g$centers)) &&
    identical(f$totss, g$totss) && identical(f$withinss, g$withinss)
  cat(sprintf("   identical fits (%s): block by block = scratch %s, = as.matrix %s\n", precision, same(a, b), same(a, c)))
}
