# Observation weights on the CUDA engine (not a test): weighted vs unweighted
# fits of the same data from the same initial centers, both precisions.
#   Rscript inst/bench/bench_weights_gpu.R      (on the GPU machine)
# Data: simulate_blobs(4e6, 16, 256, seed = 4); k = 256; 256 rows drawn with
# set.seed(1) as initial centers; iter.max = 30.  Weights: none (plain
# iterations: the weighted fits have no distance bounds yet), all 2, whole
# 1..10, fractional (runif(0.5, 2)).  Prints ms per iteration (compute
# phase), the ratio to the unweighted fit, and checks that weights 2 give
# the unweighted labels and iterations, and its centers to the last bits
# (the sums of the replicated rows are twice the integers; their
# conversion to double may round differently in the last bit).
suppressPackageStartupMessages(library(gpukmeans))
options(gpukmeans.progress = FALSE)
info <- gpukmeans_info()
if (!nrow(info$devices)) stop("no CUDA device: ", info$message)
cat("gpukmeans weights on the CUDA engine |", info$devices$name[1L], "|", format(Sys.Date()), "\n")
x <- simulate_blobs(4e6, 16, 256, seed = 4)
set.seed(1)
c0 <- x[sample.int(nrow(x), 256L), ]
set.seed(2)
ws <- list(none = NULL, `all 2` = rep(2, nrow(x)), `whole 1..10` = sample.int(10L, nrow(x), replace = TRUE) + 0,
           fractional = runif(nrow(x), 0.5, 2))
fit <- function(w, prec) {
  withr::with_options(list(gpukmeans.cuda_tuning = if (is.null(w)) c(0L, 0L, 0L, 1L)), {
    invisible(gpu_kmeans(x[1:1e5, ], c0, iter.max = 2, weights = w[1:1e5], precision = prec, backend = "cuda"))
    suppressWarnings(gpu_kmeans(x, c0, iter.max = 30, weights = w, precision = prec, backend = "cuda"))
  })
}
for (prec in c("double", "single")) {
  base <- NULL
  for (nm in names(ws)) {
    f <- fit(ws[[nm]], prec)
    ms <- 1000 * attr(f, "timing")[["compute"]] / f$iter
    if (is.null(base)) base <- list(f = f, ms = ms)
    check <- if (nm == "all 2") {
      sprintf("labels %s, iter %s, centers %s", identical(f$cluster, base$f$cluster), identical(f$iter, base$f$iter),
              isTRUE(all.equal(f$centers, base$f$centers, tolerance = if (prec == "double") 1e-15 else 1e-7)))
    } else ""
    cat(sprintf("%-6s %-12s %3d it %8.3f ms/iter  %5.2fx  %s\n", prec, nm, f$iter, ms, ms / base$ms, check))
  }
}
