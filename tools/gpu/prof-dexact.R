# A few plain iterations on a problem of inst/bench/bench.R's blobs, for a
# profiler (ncu): the double filter's exact pass (E, D), the small-d kernels
# and the grid of cells (B, C; GPUKMEANS_GRID=0 / 1 for the scan / the grid).
#   Rscript prof-dexact.R E|D|C|B [double|single] [z]
# (z: the rows ordered along a Z curve first, tools/gpu/grid-sorted.R's
# order: a warp's rows then share a cell of the grid)
a <- commandArgs(TRUE)
shapes <- list(E = c(1e6, 128, 4096), D = c(1e7, 16, 256), C = c(1e6, 2, 1000), B = c(1e6, 2, 100))
p <- shapes[[if (length(a) && a[1] %in% names(shapes)) a[1] else "E"]]
prec <- if (length(a) >= 2) a[2] else "double"
library(gpukmeans)
options(gpukmeans.cuda_tuning = c(0L, 0L, 0L, 1L), gpukmeans.progress = FALSE)
set.seed(1)
n <- p[1]; d <- p[2]; k <- p[3]
centers <- matrix(runif(k * d, 0, 100), k, d)
x <- centers[sample.int(k, n, replace = TRUE), , drop = FALSE]
x <- x + rnorm(length(x))
set.seed(2)
c0 <- x[sample.int(n, k), , drop = FALSE]
if (length(a) >= 3 && a[3] == "z") {
  cell <- function(v) pmin(1023L, as.integer(1024 * (v - min(v)) / (max(v) - min(v))))
  spread <- function(v) {
    for (s in c(8, 4, 2, 1)) v <- bitwAnd(bitwOr(v, bitwShiftL(v, s)), c(`8` = 0x00FF00FF, `4` = 0x0F0F0F0F,
                                                                         `2` = 0x33333333, `1` = 0x55555555)[[as.character(s)]])
    v
  }
  key <- spread(cell(x[, 1]))
  if (d > 1) key <- bitwOr(key, bitwShiftL(spread(cell(x[, 2])), 1))
  x <- x[order(key), , drop = FALSE]
}
f <- suppressWarnings(gpu_kmeans(x, c0, iter.max = 3L, backend = "cuda", precision = prec))
cat("iter", f$iter, "compute", attr(f, "timing")[["compute"]], "\n")
