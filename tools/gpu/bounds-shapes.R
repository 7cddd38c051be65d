# Bounded ("where they pay", mode 3) against plain Lloyd to convergence, compute
# seconds, on blobs of several shapes between bench.R's D and E (the data
# behind BoundsPolicy::worth, src/cuda/detail/fit.hpp):
#   sh tools/gpu/run-r.sh tools/gpu/bounds-shapes.R
suppressPackageStartupMessages(library(gpukmeans))
options(gpukmeans.progress = FALSE)
fit <- function(x, start, prec, bounds, iter.max = 2000L)
  gpukmeans:::gk_fit_cpp(x, list(start), iter.max, prec == "single", "cuda", 0L, 0L, FALSE, NULL, Inf,
                         list(tuning = c(0L, 0L, 0L, as.integer(bounds))))
for (p in list(c(1e6, 32, 512), c(1e6, 32, 1024), c(1e6, 64, 1024), c(1e6, 64, 256), c(5e5, 128, 512), c(2e5, 256, 1024))) {
  x <- simulate_blobs(p[1], p[2], p[3], seed = 6)
  for (init in c("kmeans||", "random")) {
    set.seed(11)
    start <- if (init == "random") x[sample.int(nrow(x), p[3]), , drop = FALSE] else
      list(method = "kmeans||", k = p[3], seed = floor(runif(2) * 4294967296))
    for (prec in c("single", "double")) {
      invisible(fit(x[1:1e5, ], start, prec, 3L, 3L))
      a <- fit(x, start, prec, 1L); b <- fit(x, start, prec, 3L)
      cat(sprintf("%.0e x %d k %d (kd %d) %-8s %-6s plain %4d it %.3f s | bounded %4d it %.3f s | %.2fx\n", p[1], p[2], p[3],
                  p[2] * p[3], init, prec, a$iter, a$timing[["compute"]], b$iter, b$timing[["compute"]],
                  a$timing[["compute"]] / b$timing[["compute"]]))
    }
  }
}
