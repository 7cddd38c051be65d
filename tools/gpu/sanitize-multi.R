# Several CUDA engines on one GPU (device = c(0, 0), c(0, 0, 0)) for
# compute-sanitizer: the joint iterations of src/cuda/lloyd_devices.cu
# (plain and bounded, both precisions, the double filter and the packed
# tensor-core tiles), the blocks uploaded in place with strided staging,
# k-means++ and the k-means|| rounds together (each part's passes on its
# device, the trees on the first; src/cuda/init_pp.cu, init_par.cu) and on
# the first device's engine over all rows (gathered from the parts' device
# copies), a traced fit (step by step); with two GPUs, the together paths
# across them too.  Sourced by tools/gpu/sanitize.R; alone:
#   GK_SANITIZE_SCRIPT=tools/gpu/sanitize-multi.R sh tools/gpu/sanitize.sh OUTDIR memcheck
suppressPackageStartupMessages(library(gpukmeans))
options(gpukmeans.progress = FALSE)
quick <- identical(Sys.getenv("GK_SANITIZE_QUICK"), "true")
xm <- simulate_blobs(if (quick) 1501 else 9001, 16, 20, seed = 9)
for (dev in list(c(0L, 0L), c(0L, 0L, 0L))) {
  for (single in c(FALSE, TRUE)) for (bounds in c(1L, 2L)) for (staging in c(1L, 2L)) {
    invisible(gpukmeans:::gk_fit_cpp(xm, list(xm[1:130, ]), 12L, single, "cuda", 2L, dev, FALSE, NULL, Inf,
                                     list(tuning = c(0L, 0L, 0L, bounds, staging))))
  }
  for (prec in c("double", "single")) for (init in c("kmeans||", "kmeans++")) for (together in c(TRUE, FALSE)) {
    withr::with_options(list(gpukmeans.init_together = together), {
      set.seed(10); invisible(gpu_kmeans(xm, 8, init = init, iter.max = 10, precision = prec, backend = "cuda",
                                         device = dev))
    })
  }
  invisible(capture.output(gpu_kmeans(xm, xm[1:5, ], iter.max = 4, backend = "cuda", device = dev, trace = TRUE)))
}
if (length(gpukmeans:::check_devices("all")) > 1L) {
  for (prec in c("double", "single")) for (init in c("kmeans||", "kmeans++")) {
    set.seed(10); invisible(gpu_kmeans(xm, 8, init = init, iter.max = 10, precision = prec, backend = "cuda",
                                       device = c(0L, 1L)))
  }
}
cat("sanitize-multi.R: done\n")
