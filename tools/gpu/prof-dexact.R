# The double filter's exact pass on the benchmark's blobs (problem E or D of
# inst/bench/bench.R), for a profiler: Rscript prof-dexact.R E|D
a <- commandArgs(TRUE)
p <- if (length(a) && a[1] == "D") c(1e7, 16, 256) else c(1e6, 128, 4096)
library(gpukmeans)
options(gpukmeans.cuda_tuning = c(0L, 0L, 0L, 1L), gpukmeans.progress = FALSE)
set.seed(1)
n <- p[1]; d <- p[2]; k <- p[3]
centers <- matrix(runif(k * d, 0, 100), k, d)
x <- centers[sample.int(k, n, replace = TRUE), , drop = FALSE]
x <- x + rnorm(length(x))
set.seed(2)
c0 <- x[sample.int(n, k), , drop = FALSE]
f <- suppressWarnings(gpu_kmeans(x, c0, iter.max = 3L, backend = "cuda"))
cat("iter", f$iter, "compute", attr(f, "timing")[["compute"]], "\n")
