# The within-SS passes (k_withinss), for a profiler (ncu -k regex:k_withinss):
# bench.R's blobs at d = 2 .. 128 (B, D and E among them), each fitted in
# single and double precision with one, then four points a thread a step
# (GPUKMEANS_WSS_POINTS, read when a fit is planned).
#   Rscript prof-wss.R          (prints the order of the fits)
library(gpukmeans)
options(gpukmeans.cuda_tuning = c(0L, 0L, 0L, 1L), gpukmeans.progress = FALSE)
shapes <- list(c(1e6, 2, 100), c(1e7, 16, 256), c(4e6, 16, 256), c(2e6, 32, 256), c(1e6, 64, 1024),
               c(1e6, 128, 1024), c(1e6, 128, 4096))
for (p in shapes) {
  set.seed(1)
  n <- p[1]; d <- p[2]; k <- p[3]
  centers <- matrix(runif(k * d, 0, 100), k, d)
  x <- centers[sample.int(k, n, replace = TRUE), , drop = FALSE]
  x <- x + rnorm(length(x))
  c0 <- x[sample.int(n, k), , drop = FALSE]
  for (pts in c("1", "4")) {
    Sys.setenv(GPUKMEANS_WSS_POINTS = pts)
    for (prec in c("single", "double")) {
      f <- suppressWarnings(gpu_kmeans(x, c0, iter.max = 2L, backend = "cuda", precision = prec))
      cat(sprintf("fit n %g d %d k %d points %s %s: tot.withinss %.17g\n", n, d, k, pts, prec,
                  f$tot.withinss))
    }
  }
}
Sys.unsetenv("GPUKMEANS_WSS_POINTS")
