# How the certified double filter settles the points its bound leaves
# (src/cuda/detail/dfilter.cuh, df_candidates.cuh): every listed point to
# every center ("none"), the two nearest where proven ("pair",
# GPUKMEANS_DF_PAIR, from 32 columns), the candidates whose bound passes
# ("cand", GPUKMEANS_DF_CAND), or both (the default); on bench.R's D and E
# and 1e6 x 64, k = 1024 (double, 10 iterations), alternating in one
# process, every fit checked against the first.  (Was df-pair.R.)
#   sh tools/gpu/run-r.sh tools/gpu/df-screens.R [reps]
suppressPackageStartupMessages(library(gpukmeans))
options(gpukmeans.progress = FALSE, gpukmeans.cuda_tuning = c(0L, 0L, 0L, 1L))  # plain iterations, as bench.R
args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args)) as.integer(args[1]) else 3L
blobs <- function(n, d, k, seed = 1L) {  # (bench.R's)
  set.seed(seed)
  centers <- matrix(runif(k * d, 0, 100), k, d)
  x <- centers[sample.int(k, n, replace = TRUE), , drop = FALSE]
  x + rnorm(length(x))
}
screens <- list(none = c("0", "0"), pair = c("1", "0"), cand = c("0", "1"), both = c("1", "1"))
parts <- c("cluster", "centers", "withinss", "size", "iter")
cat("device:", gpukmeans_info()$devices$name[1], "|", format(Sys.time(), "%Y-%m-%d"), "| double, 10 iterations\n")
for (p in list(c(1e7, 16, 256), c(1e6, 128, 4096), c(1e6, 64, 1024))) {
  x <- blobs(p[1], p[2], p[3])
  set.seed(2L)
  c0 <- x[sample.int(nrow(x), p[3]), , drop = FALSE]
  fit <- function(sc) {
    withr::local_envvar(GPUKMEANS_DF_PAIR = sc[1], GPUKMEANS_DF_CAND = sc[2])
    gpukmeans:::gk_fit_cpp(x, list(c0), 10L, FALSE, "cuda", 0L, 0L, FALSE, NULL, Inf, gpukmeans:::cuda_options())
  }
  invisible(fit(screens$both))
  ms <- lapply(screens, function(s) numeric(0))
  every <- numeric(0)
  ref <- NULL
  for (r in seq_len(reps)) for (sc in names(screens)) {
    z <- fit(screens[[sc]])
    ms[[sc]] <- c(ms[[sc]], 1000 * z$timing[["compute"]] / min(z$iter, 10L))
    every[sc] <- z$screen_every
    if (is.null(ref)) ref <- z
    if (!identical(z[parts], ref[parts])) cat("  DIFFERENT FIT with screen", sc, "\n")
  }
  cat(sprintf("%.0e x %d, k = %d: exact share %.2f%%; ms/iter (median of %d) and share given every center's exact distance:\n",
              p[1], p[2], p[3], 100 * ref$screen_exact, reps))
  for (sc in names(screens))
    cat(sprintf("  %-5s %8.3f ms  [%s]  every center %.2f%%\n", sc, median(ms[[sc]]),
                paste(sprintf("%.2f", ms[[sc]]), collapse = " "), 100 * every[[sc]]))
  rm(x); invisible(gc())
}
