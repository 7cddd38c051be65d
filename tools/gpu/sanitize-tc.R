# The packed tensor-core tiles alone, for compute-sanitizer's slower tools
# (racecheck): single-precision fits and predictions through the wgmma
# kernel (compute capability 9.0) and the mma.sync one, with partial tiles
# of points, coordinates and centers.
#   GK_SANITIZE_SCRIPT=tools/gpu/sanitize-tc.R sh tools/gpu/sanitize.sh OUT racecheck
suppressPackageStartupMessages(library(gpukmeans))
options(gpukmeans.progress = FALSE)
for (wg in c(NA, "0")) {
  withr::with_envvar(c(GPUKMEANS_TC_WGMMA = wg), {
    for (sh in list(c(301, 130, 5, 40), c(1201, 16, 20, 130), c(259, 17, 4, 129))) {
      x <- simulate_blobs(sh[1], sh[2], sh[3], seed = 3)
      f <- gpu_kmeans(x, x[seq_len(sh[4]), ], iter.max = 4, precision = "single", backend = "cuda")
      invisible(predict(f, x[seq_len(min(333, nrow(x))), ]))
    }
  })
}
cat("sanitize-tc.R: done\n")
