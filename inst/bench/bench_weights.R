# Observation weights on the CPU engine: weighted vs unweighted fits of the
# same data from the same initial centers, on one and two threads.
# Not a test: run by hand and commit the output with the date and machine.
#   Rscript inst/bench/bench_weights.R [quick] \
#     > inst/bench/results/cpu-weights-<date>-<machine>.txt
#
# Data: simulate_blobs(1e6, 8, 50) (quick: 2e5 rows); k = 50; initial
# centers: 50 rows drawn with set.seed(1).  Weights: none; all 2 (the
# weighted code with every row added twice: the unweighted fit up to
# rounding, withinss doubled); whole numbers 1..10; whole numbers 1..1e4 (long runs
# of additions, each computed in a few steps); fractional (runif(0.5, 2)).
# Columns: iterations to convergence (iter.max = 500), seconds of the whole
# call from R (median of the runs) on 1 and 2 threads, seconds per
# iteration, the ratio to the unweighted fit on the same threads, and checks:
# weights 2 give the unweighted labels and iterations, its centers and 2x its
# withinss to rounding; every weighted fit is identical on 1 and 2 threads.
suppressPackageStartupMessages(library(gpukmeans))
options(gpukmeans.progress = FALSE)
quick <- "quick" %in% commandArgs(trailingOnly = TRUE)
reps <- if (quick) 1L else 3L
n <- if (quick) 2e5 else 1e6
d <- 8L
k <- 50L

cat("date:", format(Sys.time(), "%Y-%m-%d %H:%M %Z"), "\n")
cat("machine:", sub("model name\\s*:\\s*", "", grep("model name", readLines("/proc/cpuinfo"), value = TRUE)[1]),
    "|", parallel::detectCores(), "cores |", R.version.string, "\n")
cat("load average at start:", readLines("/proc/loadavg"), "(a shared machine: other jobs ran beside this one)\n")
cat(sprintf("data: simulate_blobs(%g, %d, %d, seed = 1); k = %d; centers: x[sample.int(n, k), ] after set.seed(1); iter.max = 500; %d run(s) per timing (median)\n\n",
            n, d, k, k, reps))

x <- simulate_blobs(n, d, k, seed = 1)
set.seed(1)
c0 <- x[sample.int(nrow(x), k), ]
set.seed(2)
weights <- list(
  "none" = NULL,
  "all 2" = rep(2, n),
  "whole 1..10" = sample.int(10L, n, TRUE),
  "whole 1..1e4" = sample.int(10000L, n, TRUE),
  "fractional" = runif(n, 0.5, 2))

time_fit <- function(w, threads) {
  options(gpukmeans.threads = threads)
  fit <- NULL
  secs <- vapply(seq_len(reps), function(r) {
    t <- system.time(fit <<- gpu_kmeans(x, c0, iter.max = 500, weights = w, backend = "cpu"))[["elapsed"]]
    t
  }, 0)
  list(fit = fit, secs = stats::median(secs))
}

cat(sprintf("%-14s %5s %9s %9s %11s %11s %8s %8s %s\n", "weights", "iter", "s 1t", "s 2t",
            "ms/iter 1t", "ms/iter 2t", "x 1t", "x 2t", "checks"))
base <- NULL
for (name in names(weights)) {
  w <- weights[[name]]
  r1 <- time_fit(w, 1L)
  r2 <- time_fit(w, 2L)
  if (is.null(base)) base <- list(r1 = r1, r2 = r2)
  it <- r1$fit$iter
  checks <- character()
  if (!is.null(w)) {
    a <- unclass(r1$fit)
    b <- unclass(r2$fit)
    attributes(a) <- attributes(b) <- list(names = names(a))
    checks <- c(checks, if (identical(a, b)) "1t = 2t" else "1t != 2t (!)")
  }
  if (identical(name, "all 2")) {
    same <- identical(r1$fit$cluster, base$r1$fit$cluster) && identical(r1$fit$iter, base$r1$fit$iter) &&
      isTRUE(all.equal(r1$fit$centers, base$r1$fit$centers, tolerance = 1e-12)) &&
      isTRUE(all.equal(r1$fit$withinss, 2 * base$r1$fit$withinss, tolerance = 1e-12))
    checks <- c(checks, if (same) "= unweighted (labels, iter; centers, 2x withinss to 1e-12)" else "differs from unweighted (!)")
  }
  cat(sprintf("%-14s %5d %9.3f %9.3f %11.2f %11.2f %7.2fx %7.2fx %s\n", name, it, r1$secs, r2$secs,
              1000 * r1$secs / it, 1000 * r2$secs / r2$fit$iter,
              (r1$secs / it) / (base$r1$secs / base$r1$fit$iter),
              (r2$secs / r2$fit$iter) / (base$r2$secs / base$r2$fit$iter), paste(checks, collapse = "; ")))
}
cat("\nload average at end:", readLines("/proc/loadavg"), "\n")
cat("(x 1t, x 2t: seconds per iteration relative to the unweighted fit on the same threads)\n")
