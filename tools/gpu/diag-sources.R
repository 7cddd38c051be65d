# On a GPU machine (sh tools/gpu/run-r.sh tools/gpu/diag-sources.R): where
# the time of a fit of a large dgCMatrix read block by block goes, in one
# warm process: the same fit (1e7 x 50, 10% nonzero, 16 given centers, 10
# iterations) on device 0, again, on devices 0 and 1, and on 0 again, each
# with its stage log (src/stage_log.h; the first fit includes the CUDA
# context's start).  The seconds outside the logged stages are R's.
suppressPackageStartupMessages({ library(gpukmeans); library(Matrix) })
options(gpukmeans.progress = FALSE, gpukmeans.source_memory = 0)
set.seed(1); n <- 1e7; d <- 50; nnz <- round(n * d * 0.1)
m <- sparseMatrix(i = sample.int(n, nnz, replace = TRUE), j = sample.int(d, nnz, replace = TRUE), x = rnorm(nnz), dims = c(n, d))
centers <- unique(as.matrix(m[1:1000, ]))[1:16, ]
cat("threads:", gpukmeans:::cpu_threads(n * 16 * d), " cores:", parallel::detectCores(), "\n")
for (dev in list(0L, 0L, c(0L, 1L), 0L)) {
  f <- tempfile(); Sys.setenv(GPUKMEANS_STAGE_LOG = f)
  t <- system.time(z <- suppressWarnings(gpu_kmeans(m, centers, iter.max = 10, device = dev)))[["elapsed"]]
  Sys.unsetenv("GPUKMEANS_STAGE_LOG")
  cat(sprintf("device %s: %.2f s | %s\n", paste(dev, collapse = ","), t, paste(readLines(f), collapse = ", ")))
}
