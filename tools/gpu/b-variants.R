# Problem B (1e6 x 2, k = 100, bench.R's blobs and start) over 10 iterations
# and to convergence under the ordered rows' internal switches, taking turns
# in one run (issue 15): ms an iteration of the compute phase over the
# iterations run (as bench.R: R's iter is iter.max + 1 where a fit did not
# converge, as stats'; the runs of 2026-12-02 divided by that), median of
# 9 fits (a fresh upload each, as bench.R), and whether every variant's
# fit is the default's, bit for bit.  no_pdl: each kernel launched after
# the last (GPUKMEANS_PDL=0, read at the upload).  Run on the GPU machine:
#   sh tools/gpu/run-r.sh tools/gpu/b-variants.R
library(gpukmeans)
options(gpukmeans.cuda_tuning = c(0L, 0L, 0L, 1L), gpukmeans.progress = FALSE)
set.seed(1L)
cen <- matrix(runif(200, 0, 100), 100, 2)
x <- cen[sample.int(100, 1e6, replace = TRUE), ] + rnorm(2e6)
set.seed(2L)
c0 <- x[sample.int(nrow(x), 100), ]
variants <- list(default = character(), no_pdl = c(GPUKMEANS_PDL = "0"))
cat("B variants |", gpukmeans_info()$devices$name[1], "|", format(Sys.Date()), "\n")
for (prec in c("single", "double")) for (iters in c(10L, 500L)) {
  ms <- lapply(variants, function(v) numeric(0))
  fits <- list()
  for (round in 1:3) for (v in names(variants)) {
    withr::with_envvar(variants[[v]], for (rep in 1:3) {
      f <- suppressWarnings(gpu_kmeans(x, c0, iter.max = iters, precision = prec, backend = "cuda"))
      ms[[v]] <- c(ms[[v]], 1000 * attr(f, "timing")[["compute"]] / min(f$iter, iters))
      fits[[v]] <- f[c("cluster", "centers", "withinss", "size", "iter")]
    })
  }
  same <- vapply(fits, function(f) identical(f, fits$default), TRUE)
  cat(sprintf("%s iter.max %d (iter %d): %s | same fit: %s\n", prec, iters, fits$default$iter,
              paste(sprintf("%s %.4f", names(ms), vapply(ms, median, 0)), collapse = ", "),
              paste(names(same), same, collapse = ", ")))
}
