# x streamed from host memory against x resident on the GPU (not a test).
#   Rscript inst/bench/bench_stream.R OUTDIR [ceilings.txt] [big | bigonly]     (GPU machine)
# ceilings.txt: the output of `python3 inst/bench/peer_torch.py --ceilings`
# in the same run (the card's pinned host-to-device copy rate, the link's
# ceiling).  Part 1: 1e8 x 16 (12.8 GB in double), k = 256, centers the
# first 256 rows, both precisions, resident and streamed (the same fit;
# streamed as the host allows, the default: in double x page-locked in
# place, in single a pinned float image of x; then x page-locked in single
# precision, and staged through pinned buffers filled by host threads):
# seconds per iteration from the difference of fits of 12 and 4 iterations
# (so the upload, the final within-SS passes and the labels' download drop
# out), against max(resident compute, bytes of x as stored / pinned copy
# rate), the floor of a streamed iteration.  Part 2 (argument "big"): a
# double matrix larger than the card's memory (rows = 1.05 x the card's
# bytes / 128), k = 64, 3 iterations, streamed, beside the CPU engine's fit
# from the same centers ("bigonly": part 2 alone).  Writes
# OUTDIR/stream-<date>.csv.
suppressPackageStartupMessages(library(gpukmeans))
options(gpukmeans.progress = FALSE)
args <- commandArgs(trailingOnly = TRUE)
outdir <- if (length(args)) args[1L] else "."
info <- gpukmeans_info()
if (!nrow(info$devices)) stop("no CUDA device: ", info$message)
card <- info$devices$name[1L]
today <- format(Sys.Date())
pinned <- NA_real_
if (length(args) >= 2L && file.exists(args[2L])) {
  l <- readLines(args[2L])
  m <- regmatches(l, regexpr("(?<=h2d_pinned_GBps )[0-9.]+", l, perl = TRUE))
  if (length(m)) pinned <- as.numeric(m[1L])
}
cat(sprintf("gpukmeans streaming benchmark | %s | %s | pinned host-to-device copy (PyTorch, same run): %.1f GB/s | host threads %d\n",
            card, today, pinned, as.integer(info$cpu_threads)))

timed_fit <- function(x, c0, iters, prec, stream, copy = "auto") {
  withr::local_options(gpukmeans.stream = stream, gpukmeans.stream_copy = copy)
  t0 <- Sys.time()
  f <- suppressWarnings(gpu_kmeans(x, c0, iter.max = iters, precision = prec, backend = "cuda"))
  list(fit = f, wall = as.numeric(difftime(Sys.time(), t0, units = "secs")), compute = attr(f, "timing")[["compute"]])
}

rows <- list()
if (!"bigonly" %in% args) {
n <- 1e8; d <- 16L; k <- 256L
set.seed(1)
x <- suppressWarnings(matrix(runif(1e7 + 17), n, d))
c0 <- x[seq_len(k), ]
invisible(gpu_kmeans(x[1:1e5, ], c0, iter.max = 2, backend = "cuda"))  # warm up
for (prec in c("double", "single")) {
  res <- list()
  modes <- c("auto", if (prec == "single") "registered", "staged")
  for (mode in c("resident", modes)) {
    copy <- if (mode == "resident") "auto" else mode
    a <- timed_fit(x, c0, 4L, prec, mode != "resident", copy)
    b <- timed_fit(x, c0, 12L, prec, mode != "resident", copy)
    res[[mode]] <- list(a = a, b = b, per_iter = (b$compute - a$compute) / 8)
  }
  # the floor of a streamed iteration: x as stored over the link, or the
  # resident iteration
  bytes <- n * d * if (prec == "double") 8 else 4
  floor_s <- max(res$resident$per_iter, bytes / (pinned * 1e9))
  for (mode in modes) {
    same <- identical(res[[mode]]$b$fit$cluster, res$resident$b$fit$cluster) &&
      identical(res[[mode]]$b$fit$centers, res$resident$b$fit$centers)
    st <- res[[mode]]$per_iter
    up <- attr(res[[mode]]$b$fit, "timing")[["transfer_to_device"]]
    cat(sprintf("%.0e x %d k=%d %-6s %-10s resident %7.4f s/iter | streamed %7.4f s/iter = %5.1f GB/s of stored x (%3.0f%% of pinned) | floor %7.4f s -> %.2fx | upload pass %.2f s (resident %.2f s) | wall of 12 iterations: resident %.2f s, streamed %.2f s | fits identical: %s | %s\n",
                n, d, k, prec, mode, res$resident$per_iter, st, bytes / st / 1e9, 100 * bytes / st / 1e9 / pinned,
                floor_s, st / floor_s, up, attr(res$resident$b$fit, "timing")[["transfer_to_device"]],
                res$resident$b$wall, res[[mode]]$b$wall, same, attr(res[[mode]]$b$fit, "device")))
    rows[[length(rows) + 1L]] <- data.frame(date = today, card = card, n = n, d = d, k = k, precision = prec,
      copy = mode,
      resident_s_per_iter = res$resident$per_iter, streamed_s_per_iter = st, bytes_per_iter = bytes,
      pinned_GBps = pinned, floor_s = floor_s, ratio_to_floor = st / floor_s, upload_s = up,
      resident_wall_12 = res$resident$b$wall, streamed_wall_12 = res[[mode]]$b$wall, identical = same,
      stringsAsFactors = FALSE)
  }
}
rm(x); invisible(gc())
}

if (any(c("big", "bigonly") %in% args)) {
  mem <- info$devices$memory_total_gb[1L] * 2^30
  n <- ceiling(1.05 * mem / 128)  # 16 doubles a row: 1.05 x the card
  k <- 64L
  cat(sprintf("big: %.3e x 16 doubles = %.1f GB (the card: %.1f GB)\n", n, n * 128 / 1e9, mem / 1e9))
  set.seed(2)
  t0 <- Sys.time()
  x <- suppressWarnings(matrix(runif(1e7 + 31), n, 16L))  # (recycled: one allocation)
  cat(sprintf("big: made x in %.1f s\n", as.numeric(difftime(Sys.time(), t0, units = "secs"))))
  c0 <- x[seq_len(k), ]
  g <- timed_fit(x, c0, 3L, "double", NA)
  cat(sprintf("big: streamed fit, 3 iterations: wall %.1f s, compute %.1f s (%.2f s a pass over x, 5 passes: %.1f GB/s), upload pass %.1f s | %s\n",
              g$wall, g$compute, g$compute / 5, n * 128 * 5 / g$compute / 1e9,
              attr(g$fit, "timing")[["transfer_to_device"]], attr(g$fit, "device")))
  t0 <- Sys.time()
  cpu <- suppressWarnings(gpu_kmeans(x, c0, iter.max = 3L, backend = "cpu"))
  cpu_wall <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
  differ <- sum(g$fit$cluster != cpu$cluster)
  rel <- max(abs(g$fit$centers - cpu$centers) / pmax(abs(cpu$centers), 1e-300))
  cat(sprintf("big: CPU engine, same centers: wall %.1f s | labels differing: %d of %.0f | largest relative center difference %.2e | iter %d / %d | tot.withinss %.10e / %.10e\n",
              cpu_wall, differ, n, rel, g$fit$iter, cpu$iter, g$fit$tot.withinss, cpu$tot.withinss))
  rows[[length(rows) + 1L]] <- data.frame(date = today, card = card, n = n, d = 16L, k = k, precision = "double",
    copy = "page-locked x (larger than the card)", resident_s_per_iter = NA,
    streamed_s_per_iter = g$compute / 5,  # per pass: 3 iterations and the 2 within-SS passes
    bytes_per_iter = n * 128, pinned_GBps = pinned, floor_s = n * 128 / (pinned * 1e9),
    ratio_to_floor = g$compute / 5 / (n * 128 / (pinned * 1e9)),
    upload_s = attr(g$fit, "timing")[["transfer_to_device"]], resident_wall_12 = NA, streamed_wall_12 = NA,
    identical = NA, stringsAsFactors = FALSE)
}
write.csv(do.call(rbind, rows), file.path(outdir, sprintf("stream%s-%s.csv", if ("bigonly" %in% args) "-big" else "", today)),
          row.names = FALSE)
