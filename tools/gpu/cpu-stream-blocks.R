# The streamed CPU engine's block size (src/cpu_stream_engine.cpp,
# GPUKMEANS_CPU_STREAM_BLOCK, internal): a dgCMatrix of n x 50, 10% nonzero,
# k = 16 from given centers, fitted with backend = "cpu" in one warm process,
# 10 iterations and 1, each block size in turn, twice; the seconds per
# iteration are the difference over 9.
#   Rscript tools/gpu/cpu-stream-blocks.R [n]   (on a GPU machine: sh tools/gpu/run-r.sh ...)
args <- commandArgs(trailingOnly = TRUE)
n <- if (length(args)) as.numeric(args[1L]) else 2e6
suppressPackageStartupMessages({ library(gpukmeans); library(Matrix) })
options(gpukmeans.progress = FALSE, gpukmeans.source_memory = 0)
set.seed(1)
d <- 50
nnz <- round(n * d * 0.1)
m <- sparseMatrix(i = sample.int(n, nnz, replace = TRUE), j = sample.int(d, nnz, replace = TRUE),
                  x = rnorm(nnz), dims = c(n, d))
centers <- unique(as.matrix(m[1:1000, ]))[1:16, ]
cat(sprintf("streamed CPU engine, block sizes | %s | %g x %d dgCMatrix, 10%% nonzero, k = 16 | %d threads\n",
            format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"), n, d, gpukmeans:::cpu_threads()))
for (b in rep(c(33554432, 8388608, 2097152), 2)) {
  Sys.setenv(GPUKMEANS_CPU_STREAM_BLOCK = b)
  t <- system.time(f <- suppressWarnings(gpu_kmeans(m, centers, iter.max = 10, backend = "cpu")))[["elapsed"]]
  t1 <- system.time(suppressWarnings(gpu_kmeans(m, centers, iter.max = 1, backend = "cpu")))[["elapsed"]]
  cat(sprintf("block %5.0f MiB: 10 iterations %.2f s, 1 iteration %.2f s, %.3f s an iteration | %s | tot.withinss %.10g\n",
              b / 2^20, t, t1, (t - t1) / 9, attr(f, "device"), f$tot.withinss))
}
