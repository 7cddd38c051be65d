# Does the grid of cells gain when a warp's points share a cell?  bench.R's
# blobs, 1e6 points, given in their own order and ordered along a Z curve
# (Morton code of a 1024 x 1024 grid over the data's box): ms an iteration
# (compute phase, median of 5 fits of 10 plain iterations), scan and grid
# (GPUKMEANS_GRID=0 / 1), and whether the ordered fit's labels (put back in
# the given order) and centers equal the given order's.
#   Rscript tools/gpu/grid-sorted.R
library(gpukmeans)
options(gpukmeans.cuda_tuning = c(0L, 0L, 0L, 1L), gpukmeans.progress = FALSE)
cat("grid-sorted |", gpukmeans_info()$devices$name[1], "|", format(Sys.Date()), "\n")
source(file.path("tools", "gpu", "blobs.R"))
ms_of <- function(x, c0, prec) {
  invisible(suppressWarnings(gpu_kmeans(x, c0, iter.max = 2L, precision = prec, backend = "cuda")))
  median(sapply(1:5, function(i) {
    f <- suppressWarnings(gpu_kmeans(x, c0, iter.max = 10L, precision = prec, backend = "cuda"))
    1000 * attr(f, "timing")[["compute"]] / min(10, f$iter)
  }))
}
for (p in list(c(2, 100), c(2, 300), c(2, 1000), c(1, 64))) {
  x <- bench_blobs(1e6, p[1], p[2])
  set.seed(2)
  c0 <- x[sample.int(nrow(x), p[2]), , drop = FALSE]
  o <- z_order(x)
  xs <- x[o, , drop = FALSE]
  for (prec in c("single", "double")) {
    for (g in c("0", "1")) {
      Sys.setenv(GPUKMEANS_GRID = g)
      a <- suppressWarnings(gpu_kmeans(x, c0, iter.max = 10L, precision = prec, backend = "cuda"))
      b <- suppressWarnings(gpu_kmeans(xs, c0, iter.max = 10L, precision = prec, backend = "cuda"))
      back <- integer(length(o)); back[o] <- b$cluster
      same <- identical(back, a$cluster) && identical(unname(a$centers), unname(b$centers))
      cat(sprintf("d %d k %4d %-6s %-4s given %.4f z-ordered %.4f ms/iter  same fit: %s\n", p[1], p[2], prec,
                  if (g == "0") "scan" else "grid", ms_of(x, c0, prec), ms_of(xs, c0, prec), same))
    }
  }
}
Sys.unsetenv("GPUKMEANS_GRID")
