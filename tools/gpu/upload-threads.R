# The staged upload's host threads (options(gpukmeans.threads)) on one card in one run, 1e8 x 16,
# k = 256, 10 iterations, both precisions, twice (issue 16).  On the GPU machine:
#   sh tools/gpu/run-r.sh tools/gpu/upload-threads.R [threads ...]   (default 4 8 12 16)
suppressPackageStartupMessages(library(gpukmeans))
options(gpukmeans.progress = FALSE)
n <- 1e8
set.seed(1)
x <- matrix(rep_len(runif(1e7 + 17), n * 16), n, 16)
c0 <- x[1:256, ]
invisible(gpu_kmeans(x[1:1e5, ], c0, iter.max = 2, backend = "cuda"))
threads <- as.integer(commandArgs(trailingOnly = TRUE))
if (!length(threads)) threads <- c(4L, 8L, 12L, 16L)
for (rep in 1:2) for (prec in c("double", "single")) for (th in threads) {
  options(gpukmeans.threads = th)
  f <- suppressWarnings(gpu_kmeans(x, c0, iter.max = 10, precision = prec, backend = "cuda"))
  tm <- attr(f, "timing")
  cat(sprintf("rep %d %s threads %2d: upload %.3f s (%.1f GB/s of R's doubles) download %.3f\n", rep, prec, th,
              tm[["transfer_to_device"]], n * 128 / tm[["transfer_to_device"]] / 1e9, tm[["transfer_to_host"]]))
}
