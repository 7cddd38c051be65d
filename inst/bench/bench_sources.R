# Matrix sources (not a test): the host memory and time of fitting a sparse
# Matrix, each way in a fresh R process:
#   memory   read into memory (options(gpukmeans.source_memory = Inf)), then fitted;
#   scratch  read into a scratch file (= 0, read_matrix_source()), then fitted:
#            what a large source took before 2026-11-27, and still takes
#            wherever a fit needs all of x on the host (the CPU engine);
#   direct   given to gpu_kmeans() itself (= 0): on CUDA devices, read
#            block by block straight to the devices (R/matrix_sources.R;
#            several devices since 2026-11-27, each its rows), or, where
#            it does not fit on the device (one device), streamed from the
#            dgCMatrix's slots at every pass (since 2026-11-28); on the CPU
#            engine, its slots read at every pass (since 2026-11-28, the
#            nineteenth session; before, the scratch file).
#   Rscript inst/bench/bench_sources.R [n] [d] [density] [backend] [precision] [devices]
# With GK_SOURCES_STREAM=1 in the environment every way streams x to the
# device at every pass, as where it does not fit there.
# devices: gpu_kmeans()'s device, e.g. 0 (the default) or 0,1.
# Data: an n x d dgCMatrix with that share of nonzero values (rnorm), k = 16
# (given centers: its first 16 distinct rows), 10 iterations (GK_SOURCES_ITER
# in the environment: that many at most).  Prints, per
# way, the anonymous (RssAnon) and file-backed (RssFile + RssShmem) resident
# memory added after the read (after the fit for direct; the scratch file's
# pages are file pages: the kernel may write them out and drop them), the
# peak resident memory (VmHWM, both kinds) less that before the read, and
# the seconds of the read and of the fit (read included).
args <- commandArgs(trailingOnly = TRUE)
n <- if (length(args) >= 1L) as.numeric(args[1L]) else 2e6
d <- if (length(args) >= 2L) as.integer(args[2L]) else 50L
density <- if (length(args) >= 3L) as.numeric(args[3L]) else 0.1
backend <- if (length(args) >= 4L) args[4L] else "auto"
precision <- if (length(args) >= 5L) args[5L] else "double"
devices <- if (length(args) >= 6L) args[6L] else "0"
device <- as.integer(strsplit(devices, ",", fixed = TRUE)[[1L]])

if (!nzchar(Sys.getenv("GK_SOURCES_CHILD"))) {
  suppressPackageStartupMessages(library(gpukmeans))
  cat(sprintf("gpukmeans source benchmark | %s | %s | %s | %g x %d dgCMatrix, density %g (dense: %.2f GiB) | backend %s | %s precision | device %s | iter.max %s%s\n",
              format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"), R.version.string,
              if (nrow(gpukmeans_info()$devices)) paste(unique(gpukmeans_info()$devices$name), collapse = ", ") else "no GPU",
              n, d, density,
              n * d * 8 / 2^30, backend, precision, devices, Sys.getenv("GK_SOURCES_ITER", "10"),
              if (nzchar(Sys.getenv("GK_SOURCES_STREAM"))) " | streamed (GK_SOURCES_STREAM)" else ""))
  script <- normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)))
  for (mode in c("memory", "scratch", "direct")) {
    out <- system2(file.path(R.home("bin"), "Rscript"), c(script, n, d, density, backend, precision, devices),
                   env = c(sprintf("GK_SOURCES_CHILD=%s", mode)), stdout = TRUE)
    cat(out, sep = "\n")
  }
  quit(save = "no")
}

mode <- Sys.getenv("GK_SOURCES_CHILD")
suppressPackageStartupMessages({ library(gpukmeans); library(Matrix) })
options(gpukmeans.progress = FALSE, gpukmeans.source_memory = if (mode == "memory") Inf else 0)
# (GK_SOURCES_STREAM=1 in the environment: x streamed to the device at every
# pass, as where it does not fit there: from host memory, from the scratch
# file's pages, or, direct, from the dgCMatrix's slots)
if (nzchar(Sys.getenv("GK_SOURCES_STREAM"))) options(gpukmeans.stream = TRUE)
status_mib <- function(field) {
  l <- grep(paste0("^", field, ":"), readLines("/proc/self/status"), value = TRUE)
  as.numeric(gsub("[^0-9]", "", l)) / 1024
}
set.seed(1)
nnz <- round(n * d * density)
m <- sparseMatrix(i = sample.int(n, nnz, replace = TRUE), j = sample.int(d, nnz, replace = TRUE),
                  x = rnorm(nnz), dims = c(n, d))
centers <- unique(as.matrix(m[1:1000, ]))[1:16, ]  # (sparse rows repeat: 16 distinct ones)
invisible(gc())
base_anon <- status_mib("RssAnon")
base_file <- status_mib("RssFile") + status_mib("RssShmem")
# (the peak from here on: /proc/self/clear_refs resets VmHWM to the current resident memory)
peak_reset <- isTRUE(tryCatch({ writeLines("5", "/proc/self/clear_refs"); TRUE }, error = function(e) FALSE))
base_peak <- status_mib("VmHWM")
t_read <- NA
stages <- tempfile()  # (direct: where the engine's read goes, src/stage_log.h)
if (mode == "direct") Sys.setenv(GPUKMEANS_STAGE_LOG = stages)
t0 <- Sys.time()
if (mode != "direct") {
  x <- gpukmeans:::data_matrix(m)$x
  t_read <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
}
fit_of <- if (mode == "direct") m else x
f <- suppressWarnings(gpu_kmeans(fit_of, centers, iter.max = as.integer(Sys.getenv("GK_SOURCES_ITER", "10")), backend = backend, precision = precision,
                                   device = device))  # (10 iterations: not converged)
t_fit <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
invisible(gc())
anon <- status_mib("RssAnon") - base_anon
file <- status_mib("RssFile") + status_mib("RssShmem") - base_file
scratch_fs <- if (mode == "scratch") system2("df", c("--output=fstype", tempdir()), stdout = TRUE)[2L] else ""
cat(sprintf("%-8s read %6s s | after: anonymous +%6.0f MiB, file-backed +%6.0f MiB | fit (read included) %6.2f s, %d iterations | peak resident +%6.0f MiB%s | tot.withinss %.10g | labels %.0f | %s%s\n",
            mode, if (is.na(t_read)) "-" else sprintf("%.2f", t_read), anon, file, t_fit, f$iter,
            status_mib("VmHWM") - base_peak, if (peak_reset) "" else " (not reset: since start)",
            f$tot.withinss, sum(as.numeric(f$cluster) * seq_along(f$cluster)), attr(f, "device"),
            if (nzchar(scratch_fs)) sprintf(" | scratch file system %s", scratch_fs) else ""))
if (file.exists(stages)) {
  l <- grep("^source_", readLines(stages), value = TRUE)
  cat(sprintf("         (direct, seconds: %s)\n", paste(sub(" ", " ", sub("^source_", "", l)), collapse = ", ")))
}
