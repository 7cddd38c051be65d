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
