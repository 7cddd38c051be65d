# The certified double filter's exact pass with and without k_df_pair (the
# listed points whose image leaves two candidates get two exact distances:
# GPUKMEANS_DF_PAIR, src/cuda/detail/dfilter.cuh), on bench.R's D and E and
# 1e6 x 64, k = 1024 (double, 10 iterations), alternating in one process:
#   sh tools/gpu/run-r.sh tools/gpu/df-pair.R [reps]
suppressPackageStartupMessages(library(gpukmeans))
options(gpukmeans.progress = FALSE)
args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args)) as.integer(args[1]) else 3L
blobs <- function(n, d, k, seed = 1L) {  # (bench.R's)
  set.seed(seed)
  centers <- matrix(runif(k * d, 0, 100), k, d)
  x <- centers[sample.int(k, n, replace = TRUE), , drop = FALSE]
  x + rnorm(length(x))
}
cat("device:", gpukmeans_info()$devices$name[1], "|", format(Sys.time(), "%Y-%m-%d"), "| double, 10 iterations\n")
for (p in list(c(1e7, 16, 256, 0), c(1e6, 128, 4096, 0), c(1e6, 64, 1024, 0))) {
  x <- blobs(p[1], p[2], p[3])
  set.seed(2L)
  c0 <- x[sample.int(nrow(x), p[3]), , drop = FALSE]
  fit <- function(pair) {
    withr::local_envvar(GPUKMEANS_DF_PAIR = pair)
    gpukmeans:::gk_fit_cpp(x, list(c0), 10L, FALSE, "cuda", 0L, 0L, FALSE, NULL, Inf, gpukmeans:::cuda_options())
  }
  invisible(fit("1"))
  ms <- list(`0` = numeric(0), `1` = numeric(0))
  ref <- NULL
  for (r in seq_len(reps)) for (pr in c("0", "1")) {
    z <- fit(pr)
    ms[[pr]] <- c(ms[[pr]], 1000 * z$timing[["compute"]] / min(z$iter, 10L))
    if (is.null(ref)) ref <- z
    same <- identical(z[c("cluster", "centers", "withinss", "size", "iter")], ref[c("cluster", "centers", "withinss", "size", "iter")])
    if (!same) cat("  DIFFERENT FIT with GPUKMEANS_DF_PAIR =", pr, "\n")
  }
  cat(sprintf("%.0e x %d, k = %d: exact share %.2f%% | ms/iter, every listed point to every center: %s | the two nearest where proven: %s | median %.2f -> %.2f\n",
              p[1], p[2], p[3], 100 * ref$screen_exact, paste(sprintf("%.2f", ms[["0"]]), collapse = " "),
              paste(sprintf("%.2f", ms[["1"]]), collapse = " "), median(ms[["0"]]), median(ms[["1"]])))
  rm(x); invisible(gc())
}
