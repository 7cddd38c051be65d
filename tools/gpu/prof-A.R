# Where problem A's compute phase goes (issue 15: A <= 0.010 ms an
# iteration): the compute phase of repeated fits, by precision.  On the GPU
# machine:  sh tools/gpu/run-r.sh tools/gpu/prof-A.R [fits]
# (under ncu, the kernels' own durations; see tools/cuda-dev/LOG.md).
suppressPackageStartupMessages(library(gpukmeans))
options(gpukmeans.progress = FALSE, gpukmeans.cuda_tuning = c(0L, 0L, 0L, 1L))  # plain iterations, as bench.R
args <- commandArgs(trailingOnly = TRUE)
fits <- if (length(args)) as.integer(args[1]) else 30L
set.seed(1)
centers <- matrix(runif(12 * 2, 0, 100), 12, 2)
x <- centers[sample.int(12, 21600, replace = TRUE), ] + rnorm(21600 * 2)
set.seed(2)
c0 <- x[sample.int(nrow(x), 12), ]
for (prec in c("single", "double")) {
  invisible(gpu_kmeans(x, c0, iter.max = 2L, precision = prec, backend = "cuda"))
  ms <- vapply(seq_len(fits), function(i) {
    f <- suppressWarnings(gpu_kmeans(x, c0, iter.max = 10L, precision = prec, backend = "cuda"))
    1000 * attr(f, "timing")[["compute"]] / min(f$iter, 10L)
  }, 0)
  cat(sprintf("A %s: compute phase ms/iter over %d fits: median %.4f, min %.4f, max %.4f\n", prec, fits,
              median(ms), min(ms), max(ms)))
}
