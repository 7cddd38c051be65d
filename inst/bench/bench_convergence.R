# Time to convergence on the GPU (not a test): Lloyd from the same starts
# with the CUDA engine's distance bounds (default) and without them (plain
# iterations), both precisions.  Prints iterations, seconds, the speed-up,
# whether the double-precision fits are identical, and the share of points
# whose distances were computed per iteration.
#   Rscript inst/bench/bench_convergence.R OUTDIR      (on the GPU machine)
# Writes OUTDIR/convergence-<date>.csv (one row per fit) and
# OUTDIR/convergence-profile-<date>.csv (per iteration).
suppressPackageStartupMessages(library(gpukmeans))
options(gpukmeans.progress = FALSE)
args <- commandArgs(trailingOnly = TRUE)
outdir <- if (length(args)) args[1L] else "."
info <- gpukmeans_info()
if (!nrow(info$devices)) stop("no CUDA device: ", info$message)
card <- info$devices$name[1L]
today <- format(Sys.Date())
cat("gpukmeans time-to-convergence benchmark |", card, "|", today, "\n")

# A fit through the engine with the bounds mode (3 where they pay, 1 never)
# from a seeded start spec (the same rows for both modes).
fit <- function(x, start, prec, bounds, iter.max = 2000L) {
  t0 <- Sys.time()
  z <- gpukmeans:::gk_fit_cpp(x, list(start), iter.max, prec == "single", "cuda", 0L, 0L, FALSE, NULL, Inf,
                              list(tuning = c(0L, 0L, 0L, as.integer(bounds))))
  z$wall <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
  z
}

# Data sets: the D problem as blobs (the issue's case), uniform data (points
# keep moving), and a real-data recipe: the 'boxes' data set scaled up by
# jittered copies.
boxes_big <- function(copies) {
  set.seed(9)
  b <- as.matrix(gpukmeans::boxes)
  x <- b[rep(seq_len(nrow(b)), copies), ]
  x + matrix(rnorm(length(x), sd = 0.01), nrow(x))
}
sets <- list(
  list(id = "D blobs", x = function() simulate_blobs(1e7, 16, 256, seed = 4), k = 256L),
  list(id = "B blobs", x = function() simulate_blobs(1e6, 2, 100, seed = 5), k = 100L),
  list(id = "uniform 1e6x8", x = function() { set.seed(7); matrix(runif(8e6), ncol = 8) }, k = 64L),
  list(id = "boxes x100", x = function() boxes_big(100), k = 12L),
  list(id = "E blobs", x = function() simulate_blobs(1e6, 128, 4096, seed = 6), k = 4096L))  # last: the longest
rows <- list()
profiles <- list()
for (s in sets) {
  x <- s$x()
  for (init in c("kmeans||", "random")) {
    set.seed(11)
    start <- if (init == "random") x[sample.int(nrow(x), s$k), , drop = FALSE] else
      list(method = "kmeans||", k = s$k, seed = floor(runif(2) * 4294967296))
    for (prec in c("single", "double")) {
      invisible(fit(x[seq_len(min(nrow(x), 1e5)), , drop = FALSE], start, prec, 3L, 3L))  # warm-up
      plain <- fit(x, start, prec, 1L)
      bounded <- fit(x, start, prec, 3L)
      same <- identical(plain$cluster, bounded$cluster) && identical(plain$centers, bounded$centers) &&
        identical(plain$iter, bounded$iter)
      ex <- bounded$exact_fraction
      cat(sprintf("%-14s %-8s %-6s plain %5d it %8.3f s | bounded %5d it %8.3f s (compute %.3f s) %6.1fx | identical %s | exact share: mean %.3f, last half %.4f\n",
                  s$id, init, prec, plain$iter, plain$timing[["compute"]], bounded$iter,
                  bounded$wall, bounded$timing[["compute"]], plain$timing[["compute"]] / bounded$timing[["compute"]],
                  same, mean(ex), mean(ex[seq(length(ex) %/% 2 + 1, length.out = max(1, length(ex) - length(ex) %/% 2))])))
      rows[[length(rows) + 1L]] <- data.frame(date = today, card = card, data = s$id, n = nrow(x), d = ncol(x),
        k = s$k, init = init, precision = prec, iter_plain = plain$iter, compute_plain_s = plain$timing[["compute"]],
        iter_bounded = bounded$iter, compute_bounded_s = bounded$timing[["compute"]], wall_bounded_s = bounded$wall,
        identical = same, stringsAsFactors = FALSE)
      profiles[[length(profiles) + 1L]] <- data.frame(data = s$id, init = init, precision = prec,
        iteration = seq_along(ex), exact_share = ex, stringsAsFactors = FALSE)
    }
  }
  rm(x); invisible(gc())
}
write.csv(do.call(rbind, rows), file.path(outdir, sprintf("convergence-%s.csv", today)), row.names = FALSE)
write.csv(do.call(rbind, profiles), file.path(outdir, sprintf("convergence-profile-%s.csv", today)), row.names = FALSE)
