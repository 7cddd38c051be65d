# The upload of x to the GPU (not a test): the staged upload through pinned
# buffers (the default for large data) against one pageable copy, beside the
# card's pinned and pageable copy rates measured by PyTorch in the same run
# (inst/bench/peer_torch.py --ceilings), and where the wall time of a fit
# of 1e8 rows goes.
#   Rscript inst/bench/bench_upload.R OUTDIR [ceilings.txt] [reps]     (GPU machine)
# Data: 1e7 and 1e8 rows x 16 (runif, repeated: the copy does not look at
# the values), k = 256 (centers: the first 256 rows), 10 iterations, both
# precisions; each line the median (by wall time) of `reps` fits (3).
# Writes OUTDIR/upload-<date>.csv.
suppressPackageStartupMessages(library(gpukmeans))
options(gpukmeans.progress = FALSE)
args <- commandArgs(trailingOnly = TRUE)
outdir <- if (length(args)) args[1L] else "."
reps <- if (length(args) >= 3L) as.integer(args[3L]) else 3L
info <- gpukmeans_info()
if (!nrow(info$devices)) stop("no CUDA device: ", info$message)
card <- info$devices$name[1L]
today <- format(Sys.Date())
ceil <- c(pinned = NA_real_, pageable = NA_real_)
if (length(args) >= 2L && file.exists(args[2L])) {
  l <- readLines(args[2L])
  for (w in names(ceil)) {
    m <- regmatches(l, regexpr(sprintf("(?<=h2d_%s_GBps )[0-9.]+", w), l, perl = TRUE))
    if (length(m)) ceil[[w]] <- as.numeric(m[1L])
  }
}
cat(sprintf("gpukmeans upload benchmark | %s | %s | card's copy rates (PyTorch, same run): pinned %.1f GB/s, pageable %.1f GB/s | host threads %d\n",
            card, today, ceil[["pinned"]], ceil[["pageable"]], as.integer(info$cpu_threads)))
rows <- list()
for (n in c(1e7, 1e8)) {
  set.seed(1)
  x <- matrix(rep_len(runif(1e7 + 17), n * 16), n, 16)
  c0 <- x[1:256, ]
  for (prec in c("double", "single")) {
    for (staging in c(0L, 1L)) {
      withr::local_options(gpukmeans.cuda_tuning = c(0L, 0L, 0L, 0L, staging))
      invisible(gpu_kmeans(x[1:1e5, ], c0, iter.max = 2, precision = prec, backend = "cuda"))
      # `reps` fits (a shared host's other work moves the rest by tens of
      # milliseconds from one fit to the next): the one of median wall time
      fits <- lapply(seq_len(reps), function(r) {
        t0 <- Sys.time()
        f <- suppressWarnings(gpu_kmeans(x, c0, iter.max = 10, precision = prec, backend = "cuda"))
        wall <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
        tm <- attr(f, "timing")
        c(wall = wall, up = tm[["transfer_to_device"]], compute = tm[["compute"]],
          other = wall - tm[["transfer_to_device"]] - tm[["compute"]])
      })
      walls <- vapply(fits, `[[`, 0, "wall")
      m <- fits[[order(walls)[(reps + 1L) %/% 2L]]]
      others <- vapply(fits, `[[`, 0, "other")
      wall <- m[["wall"]]; up <- m[["up"]]; other <- m[["other"]]
      tm <- c(compute = m[["compute"]])
      gbps <- n * 16 * 8 / up / 1e9  # the bytes of x as R holds it (double)
      cat(sprintf("%.0e x 16 %-6s %-9s upload %6.3f s = %5.1f GB/s of R's doubles (%3.0f%% of pinned) | compute %6.3f s | rest %6.3f s (%4.1f%% of %6.3f s; over %d fits %.3f-%.3f s)\n",
                  n, prec, if (staging == 0L) "staged" else "pageable", up, gbps, 100 * gbps / ceil[["pinned"]],
                  tm[["compute"]], other, 100 * other / wall, wall, reps, min(others), max(others)))
      rows[[length(rows) + 1L]] <- data.frame(date = today, card = card, n = n, d = 16L, k = 256L, precision = prec,
        upload = if (staging == 0L) "staged" else "pageable", upload_s = up, upload_GBps = gbps,
        pinned_ceiling_GBps = ceil[["pinned"]], compute_s = tm[["compute"]], wall_s = wall, rest_s = other,
        fits = reps, rest_min_s = min(others), rest_max_s = max(others), stringsAsFactors = FALSE)
    }
  }
  rm(x); invisible(gc())
}
write.csv(do.call(rbind, rows), file.path(outdir, sprintf("upload-%s.csv", today)), row.names = FALSE)
