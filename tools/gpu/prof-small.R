# The small-d kernels on the benchmark's blobs (problem B or C of
# inst/bench/bench.R), 3 plain iterations, for a profiler:
#   Rscript prof-small.R B|C single|double
# (GPUKMEANS_GRID=0 / unset: the scan / the grid of cells)
a <- commandArgs(TRUE)
p <- if (length(a) && a[1] == "C") c(1e6, 2, 1000) else c(1e6, 2, 100)
prec <- if (length(a) >= 2) a[2] else "single"
library(gpukmeans)
options(gpukmeans.cuda_tuning = c(0L, 0L, 0L, 1L), gpukmeans.progress = FALSE)
set.seed(1)
n <- p[1]; d <- p[2]; k <- p[3]
centers <- matrix(runif(k * d, 0, 100), k, d)
x <- centers[sample.int(k, n, replace = TRUE), , drop = FALSE]
x <- x + rnorm(length(x))
set.seed(2)
c0 <- x[sample.int(n, k), , drop = FALSE]
f <- suppressWarnings(gpu_kmeans(x, c0, iter.max = 3L, backend = "cuda", precision = prec))
cat("iter", f$iter, "compute", attr(f, "timing")[["compute"]], "\n")
