# Matrix sources (not a test): the host memory and time of fitting a sparse
# Matrix that is read into memory (options(gpukmeans.source_memory = Inf))
# against one read into a scratch file (= 0), each in a fresh R process.
#   Rscript inst/bench/bench_sources.R [n] [d] [density] [backend]
# Data: an n x d dgCMatrix with that share of nonzero values (rnorm), k = 16
# (given centers: its first 16 distinct rows), 10 iterations.  Prints, per mode, the
# anonymous (RssAnon) and file-backed (RssFile + RssShmem) resident memory of the
# process after the data was read (the scratch file's pages are file
# pages: the kernel may write them out and drop them), its peak resident
# memory (VmHWM, both kinds), and the seconds of the read and of the fit.
args <- commandArgs(trailingOnly = TRUE)
n <- if (length(args) >= 1L) as.numeric(args[1L]) else 2e6
d <- if (length(args) >= 2L) as.integer(args[2L]) else 50L
density <- if (length(args) >= 3L) as.numeric(args[3L]) else 0.1
backend <- if (length(args) >= 4L) args[4L] else "auto"

if (!nzchar(Sys.getenv("GK_SOURCES_CHILD"))) {
  suppressPackageStartupMessages(library(gpukmeans))
  cat(sprintf("gpukmeans source benchmark | %s | %s | %s | %g x %d dgCMatrix, density %g (dense: %.2f GiB) | backend %s\n",
              format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"), R.version.string,
              if (nrow(gpukmeans_info()$devices)) paste(unique(gpukmeans_info()$devices$name), collapse = ", ") else "no GPU",
              n, d, density,
              n * d * 8 / 2^30, backend))
  script <- normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)))
  for (mode in c("memory", "scratch")) {
    out <- system2(file.path(R.home("bin"), "Rscript"), c(script, n, d, density, backend),
                   env = c(sprintf("GK_SOURCES_CHILD=%s", mode)), stdout = TRUE)
    cat(out, sep = "\n")
  }
  quit(save = "no")
}

mode <- Sys.getenv("GK_SOURCES_CHILD")
suppressPackageStartupMessages({ library(gpukmeans); library(Matrix) })
options(gpukmeans.progress = FALSE, gpukmeans.source_memory = if (mode == "memory") Inf else 0)
status_mib <- function(field) {
  l <- grep(paste0("^", field, ":"), readLines("/proc/self/status"), value = TRUE)
  as.numeric(gsub("[^0-9]", "", l)) / 1024
}
set.seed(1)
nnz <- round(n * d * density)
m <- sparseMatrix(i = sample.int(n, nnz, replace = TRUE), j = sample.int(d, nnz, replace = TRUE),
                  x = rnorm(nnz), dims = c(n, d))
invisible(gc())
base_anon <- status_mib("RssAnon")
t0 <- Sys.time()
x <- gpukmeans:::data_matrix(m)$x
t_read <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
invisible(gc())
anon <- status_mib("RssAnon") - base_anon
file <- status_mib("RssFile") + status_mib("RssShmem")
centers <- unique(as.matrix(m[1:1000, ]))[1:16, ]  # (sparse rows repeat: 16 distinct ones)
rm(x); invisible(gc())
t0 <- Sys.time()
f <- suppressWarnings(gpu_kmeans(m, centers, iter.max = 10, backend = backend))  # (10 iterations: not converged)
t_fit <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
scratch_fs <- if (mode == "scratch") system2("df", c("--output=fstype", tempdir()), stdout = TRUE)[2L] else ""
cat(sprintf("%-8s read %6.2f s | after the read: anonymous +%7.0f MiB, file-backed %7.0f MiB | fit (read included) %6.2f s on %s | peak resident %7.0f MiB | tot.withinss %.10g%s\n",
            mode, t_read, anon, file, t_fit, attr(f, "device"), status_mib("VmHWM"), f$tot.withinss,
            if (nzchar(scratch_fs)) sprintf(" | scratch file system %s", scratch_fs) else ""))
