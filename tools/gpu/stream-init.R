# k-means|| on streamed x against resident x and the CPU engine (issue 16), on the GPU machine:
#   sh tools/gpu/run-r.sh tools/gpu/stream-init.R [cpu]
# (cpu: also the CPU engine's k-means|| on the host, which streamed x ran before)
suppressPackageStartupMessages(library(gpukmeans))
options(gpukmeans.progress = FALSE)
n <- 2e7; d <- 16L; k <- 256L
set.seed(1)
m <- n / 10
x <- matrix(0, n, d)
for (j in seq_len(d)) x[, j] <- rep(stats::runif(m), 10) + rep((0:9) * 1e-7, each = m)
run <- function(opts, backend = "cuda", prec = "double") withr::with_options(opts, {
  set.seed(5)
  t <- Sys.time()
  f <- suppressWarnings(gpu_kmeans(x, k, init = "kmeans||", iter.max = 1, precision = prec, backend = backend))
  list(f = f, wall = as.numeric(Sys.time() - t, units = "secs"))
})
for (prec in c("double", "single")) {
  r <- run(list(gpukmeans.stream = FALSE), prec = prec)
  if (prec == "double") rd <- r
  s <- run(list(gpukmeans.stream = TRUE), prec = prec)
  cat(sprintf("%s n = %g, d = %d, k = %d, kmeans||: resident init %.3f s | streamed init %.3f s (%s) | same fit: %s\n", prec, n, d, k,
              attr(r$f, "timing")[["init"]], attr(s$f, "timing")[["init"]], attr(s$f, "device"),
              identical(r$f$cluster, s$f$cluster) && identical(r$f$centers, s$f$centers)))
}
if (!identical(commandArgs(trailingOnly = TRUE)[1], "cpu")) quit(save = "no")
c1 <- run(list(), backend = "cpu")
cat(sprintf("double, the CPU engine's k-means|| on the host (the streamed path before): init %.3f s (%s) | same labels as the GPU: %s\n",
            attr(c1$f, "timing")[["init"]], attr(c1$f, "device"), identical(unname(c1$f$cluster), unname(rd$f$cluster))))
