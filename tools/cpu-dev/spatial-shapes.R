# The CPU engine's points ordered in space (src/cpu_spatial.h) against the
# iterations as before (Hamerly or plain, src/cpu_bounds.h), by shape: blobs
# (bench.R's: centers U(0, 100)^d, noise N(0, 1)) and uniform points, d = 1
# and 2 (or those given), from k random rows, at most iter.max iterations (10, and 1000 but
# for k = 1000).  R's elapsed time of the whole call, the ordering
# included: the median of 3 calls, or one call where it takes over half a
# second; 1 and all threads; and whether the fits are the same.  Sets
# SpatialOrder::wanted's thresholds.  Run here (no GPU needed):
#   Rscript tools/cpu-dev/spatial-shapes.R [threads, as "2" or "4,8,16"] [d, as "3" or "2,1"]
library(gpukmeans)
options(gpukmeans.progress = FALSE)
args <- commandArgs(TRUE)
int_list <- function(a) as.integer(strsplit(a, ",")[[1]])
threads <- if (length(args) && nzchar(args[1])) int_list(args[1]) else c(1L, 2L)
dims <- if (length(args) >= 2L) int_list(args[2]) else c(2L, 1L)
shapes <- expand.grid(n = c(5e4, 1e6), k = c(4L, 8L, 16L, 32L, 100L, 1000L), d = dims,
                      data = c("blobs", "uniform"), stringsAsFactors = FALSE)
shapes <- shapes[shapes$k < shapes$n / 50, ]
# (one call where it takes over half a second)
med <- function(f) {
  t1 <- system.time(f())[["elapsed"]]
  if (t1 > 0.5) t1 else stats::median(c(t1, vapply(1:2, function(i) system.time(f())[["elapsed"]], 0)))
}
cat("spatial-shapes |", R.version.string, "|", parallel::detectCores(), "cores |", format(Sys.time(), "%Y-%m-%d %H:%M"), "\n")
cat(sprintf("%-8s %8s %5s %2s %8s %3s %9s %9s %6s %5s\n", "data", "n", "k", "d", "iter.max", "th", "before s", "spatial s", "ratio", "same"))
for (i in seq_len(nrow(shapes))) {
  s <- shapes[i, ]
  set.seed(1)
  x <- if (s$data == "blobs") {
    cen <- matrix(runif(s$k * s$d, 0, 100), s$k, s$d)
    cen[sample.int(s$k, s$n, TRUE), , drop = FALSE] + rnorm(s$n * s$d)
  } else matrix(runif(s$n * s$d), ncol = s$d)
  c0 <- x[sample.int(s$n, s$k), , drop = FALSE]
  for (it in if (s$k == 1000L) 10L else c(10L, 1000L)) for (th in threads) {
    options(gpukmeans.threads = th)
    fit <- function(mode) withr::with_envvar(c(GPUKMEANS_CPU_SPATIAL = mode),
                                             suppressWarnings(gpu_kmeans(x, c0, iter.max = it, backend = "cpu")))
    a <- med(function() fit("0"))
    b <- med(function() fit("1"))
    same <- identical(unclass(fit("0"))[1:9], unclass(fit("1"))[1:9])
    cat(sprintf("%-8s %8.0f %5d %2d %8d %3d %9.4f %9.4f %6.2f %5s\n", s$data, s$n, s$k, s$d, it, th, a, b, a / b, same))
    flush(stdout())
  }
}
