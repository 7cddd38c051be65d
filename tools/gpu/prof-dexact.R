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
source(file.path("tools", "gpu", "blobs.R"))
n <- p[1]; d <- p[2]; k <- p[3]
x <- bench_blobs(n, d, k)
set.seed(2)
c0 <- x[sample.int(n, k), , drop = FALSE]
if (length(a) >= 3 && a[3] == "z") x <- x[z_order(x), , drop = FALSE]
f <- suppressWarnings(gpu_kmeans(x, c0, iter.max = 3L, backend = "cuda", precision = prec))
cat("iter", f$iter, "compute", attr(f, "timing")[["compute"]], "\n")
