# k-means++ when x is streamed from host memory (issue 16).  A greedy
# k-means++ step reads every row once (its distances to the step's
# candidates), so on the device each of the k - 1 steps brings all of x over
# the link again: its floor is (k - 1) x one streamed pass, measured here as
# the time of one streamed Lloyd pass (the same bytes over the link).  This
# prints, on one data set and card, k-means++ on streamed x (on the device,
# chunk by chunk), that floor, k-means++ on resident x, and with "host" the
# CPU engine's k-means++ on all the host's threads (what streamed x ran
# before, in double).  Not a test: on the GPU machine,
#   sh tools/gpu/run-r.sh inst/bench/bench_stream_pp.R [n] [k] [host]
# and commit the output with the date and the card.
suppressPackageStartupMessages(library(gpukmeans))
options(gpukmeans.progress = FALSE)
args <- commandArgs(trailingOnly = TRUE)
n <- if (length(args) >= 1L) as.numeric(args[1]) else 2e7
k <- if (length(args) >= 2L) as.integer(args[2]) else 256L
with_host <- length(args) >= 3L && args[3] == "host"
d <- 16L
info <- gpukmeans_info()
cat(sprintf("k-means++ on streamed x | %s | %s, %d host threads | n = %g, d = %d, k = %d\n", format(Sys.Date()),
            info$devices$name[1], gpukmeans:::cpu_threads(), n, d, k))
set.seed(1)
m <- n / 10
x <- matrix(0, n, d)
for (j in seq_len(d)) x[, j] <- rep(stats::runif(m), 10) + rep((0:9) * 1e-7, each = m)
fit <- function(opts, centers, iter.max, prec, init = "random", backend = "cuda") withr::with_options(opts, {
  set.seed(5)
  t <- Sys.time()
  f <- suppressWarnings(gpu_kmeans(x, centers, init = init, iter.max = iter.max, precision = prec, backend = backend))
  list(f = f, wall = as.numeric(Sys.time() - t, units = "secs"))
})
c0 <- x[seq_len(k) * 7L, ]
for (prec in c("double", "single")) {
  # one streamed pass: Lloyd from given centers, 6 iterations against 2
  # (the difference / 4: the upload and the result left out)
  p6 <- fit(list(gpukmeans.stream = TRUE), c0, 6L, prec)
  p2 <- fit(list(gpukmeans.stream = TRUE), c0, 2L, prec)
  pass <- (attr(p6$f, "timing")[["compute"]] - attr(p2$f, "timing")[["compute"]]) / 4
  res <- fit(list(gpukmeans.stream = FALSE), k, 1L, prec, init = "kmeans++")
  str <- fit(list(gpukmeans.stream = TRUE), k, 1L, prec, init = "kmeans++")
  same <- identical(res$f$cluster, str$f$cluster) && identical(res$f$centers, str$f$centers)
  cat(sprintf(paste0("%s: streamed pass %.3f s (%.1f GB/s) -> floor of k-means++ on streamed x %.1f s ",
                     "| k-means++ on streamed x %.2f s (%.2fx the floor) | on resident x %.2f s | same fit: %s | %s\n"),
              prec, pass, n * d * (if (prec == "double") 8 else 4) / pass / 1e9, (k - 1) * pass,
              attr(str$f, "timing")[["init"]], attr(str$f, "timing")[["init"]] / ((k - 1) * pass),
              attr(res$f, "timing")[["init"]], same, attr(str$f, "device")))
  if (with_host && prec == "double") {
    h <- fit(list(), k, 1L, prec, init = "kmeans++", backend = "cpu")
    cat(sprintf("%s: the CPU engine's k-means++ on the host (%s) %.2f s | same fit: %s\n", prec, attr(h$f, "device"),
                attr(h$f, "timing")[["init"]], identical(unname(h$f$cluster), unname(res$f$cluster))))
  }
}
