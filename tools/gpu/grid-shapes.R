# The small-d kernel with and without the grid of cells (GPUKMEANS_GRID=1 /
# 0) on bench.R's blobs, 1e6 points: ms an iteration (compute phase, median
# of 5 fits of 10 plain iterations) by d, k and precision.
#   Rscript tools/gpu/grid-shapes.R
library(gpukmeans)
options(gpukmeans.cuda_tuning = c(0L, 0L, 0L, 1L), gpukmeans.progress = FALSE)
cat("grid-shapes |", gpukmeans_info()$devices$name[1], "|", format(Sys.Date()), "\n")
source(file.path("tools", "gpu", "blobs.R"))
for (p in list(c(2, 100), c(2, 160), c(2, 300), c(2, 1000), c(1, 64), c(1, 160), c(1, 300))) {
  x <- bench_blobs(1e6, p[1], p[2])
  set.seed(2)
  c0 <- x[sample.int(nrow(x), p[2]), , drop = FALSE]
  for (prec in c("single", "double")) {
    ms <- sapply(c("0", "1"), function(g) {
      Sys.setenv(GPUKMEANS_GRID = g)
      invisible(suppressWarnings(gpu_kmeans(x, c0, iter.max = 2L, precision = prec, backend = "cuda")))
      median(sapply(1:5, function(i) {
        f <- suppressWarnings(gpu_kmeans(x, c0, iter.max = 10L, precision = prec, backend = "cuda"))
        1000 * attr(f, "timing")[["compute"]] / min(10, f$iter)
      }))
    })
    cat(sprintf("d %d k %4d %-6s scan %.4f grid %.4f ms/iter (grid/scan %.2f)\n", p[1], p[2], prec, ms[1], ms[2],
                ms[2] / ms[1]))
  }
}
Sys.unsetenv("GPUKMEANS_GRID")
