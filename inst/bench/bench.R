# GPU benchmark (not a test): the five standard problems and a scaling sweep.
#
#   Rscript inst/bench/bench.R OUTDIR [PEER_OUTPUT]
#   GK_BENCH_QUICK=1 Rscript inst/bench/bench.R OUTDIR    (CUDA on A-E only: a
#                                     before/after comparison of two builds)
#
# OUTDIR receives gpu-problems-<date>.csv and gpu-scaling-<date>.csv (format:
# inst/bench/results/README.md).  PEER_OUTPUT, if given, is the output of
# peer_torch.py from the same run on the same machine; its figures are merged
# in as engines "torch-fp32" / "torch-tf32".
#
# Every fit starts from fixed centers (rows drawn with a fixed seed) and runs
# at most `iters` iterations; ms per iteration is the compute phase (CUDA
# events) over the iterations actually run.  These are plain Lloyd
# iterations: every point is assigned afresh each iteration; only the
# cluster sums are carried from one iteration to the next (exact integers:
# each iteration adds the points that moved, printed as the share of
# point-iterations added; the same fit with sums made afresh every
# iteration, GPUKMEANS_DELTA_SUMS=0, is printed beside it).  At d = 2 the
# same fits run to convergence as well, printed below the 10-iteration line.  The distance bounds, which skip
# most distances once few points move, are switched off here
# (bench_convergence.R measures them to convergence).  Unlike the peer,
# which computes all n k distances, the engine skips centers it proves
# farther: at d <= 3 a point computes its distances only to the centers its
# cell of a grid over the centers lists (printed: the share of
# point-iterations the lists served), or at d = 2, on the rows ordered in
# space once a fit (the ordering's time included), to those its warp's
# box lists (printed); in double precision the certified
# filter computes exact distances only for the points its float bound
# leaves open.  Labels are those of the full computation either way.  End-to-end seconds are measured
# in R around the whole call (upload, iterations, download, the kmeans object).
suppressPackageStartupMessages(library(gpukmeans))
args <- commandArgs(trailingOnly = TRUE)
outdir <- if (length(args) >= 1L) args[1L] else "."
peer_file <- if (length(args) >= 2L) args[2L] else NA
iters <- 10L
quick <- nzchar(Sys.getenv("GK_BENCH_QUICK"))
options(gpukmeans.cuda_tuning = c(0L, 0L, 0L, 1L))  # plain iterations (see above)
info <- gpukmeans_info()
if (!nrow(info$devices)) stop("no CUDA device: ", info$message)
card <- info$devices$name[1L]
today <- format(Sys.Date())
options(gpukmeans.progress = FALSE)
cat("gpukmeans benchmark |", card, "|", today, "| CUDA runtime", info$runtime_version,
    "driver", info$driver_version, "| CPU threads", info$cpu_threads, "\n")

blobs <- function(n, d, k, seed = 1L) {
  set.seed(seed)
  centers <- matrix(runif(k * d, 0, 100), k, d)
  lab <- sample.int(k, n, replace = TRUE)
  x <- centers[lab, , drop = FALSE]
  x <- x + rnorm(length(x))
  x
}
start_centers <- function(x, k, seed = 2L) {
  set.seed(seed)
  x[sample.int(nrow(x), k), , drop = FALSE]
}
row_of <- function(problem, n, d, k, precision, engine, fit = NULL, elapsed = NA, ms = NA, iters_run = NA) {
  tm <- if (is.null(fit)) NULL else attr(fit, "timing")
  get <- function(name) if (!is.null(tm) && name %in% names(tm)) tm[[name]] else NA_real_
  if (!is.null(fit)) {
    iters_run <- min(fit$iter, iters)
    if (is.na(ms)) ms <- 1000 * get("compute") / iters_run
  }
  data.frame(date = today, card = card, problem = problem, n = n, d = d, k = k,
             precision = precision, engine = engine, ms_per_iter = ms,
             transfer_to_device_s = get("transfer_to_device"), compute_s = get("compute"),
             transfer_to_host_s = get("transfer_to_host"), total_s = elapsed,
             iterations = iters_run, stringsAsFactors = FALSE)
}
# Median wall time of repeated evaluations (at least 3, until 0.3 s have
# passed, at most 15), so that millisecond fits are timed to microseconds;
# for fits, also the median of their compute phases (the last fit's alone
# caught a stray delay now and then: 0.43 ms an iteration for B's 0.05).
timed <- function(expr, env = parent.frame()) {
  e <- substitute(expr)
  times <- numeric(0)
  computes <- numeric(0)
  repeat {
    t0 <- Sys.time()
    v <- suppressWarnings(eval(e, env))
    times <- c(times, as.numeric(difftime(Sys.time(), t0, units = "secs")))
    tm <- attr(v, "timing")
    computes <- c(computes, if (is.null(tm)) NA_real_ else tm[["compute"]])
    if (length(times) >= 15L || (length(times) >= 3L && sum(times) > 0.3) || sum(times) > 5) break
  }
  list(value = v, elapsed = stats::median(times), compute = stats::median(computes))
}
# ms per iteration of a timed() fit: its median compute phase over the
# iterations run
iter_ms <- function(r) 1000 * r$compute / min(r$value$iter, iters)

# From the engine's internal result (-1: did not run): in double precision
# the share of point-iterations whose labels the certified filter
# (src/cuda/detail/dfilter.cuh) left to exact distances, and the share given
# every center's exact distance (the others: two, or a few candidates'); in
# both, the share the grid of cells' lists served (cell_grid.cuh, d <= 3),
# and whether the iterations ran on the rows ordered in space (ordered.cu).
screen_shares <- function(x, c0, prec) {
  z <- gpukmeans:::gk_fit_cpp(x, list(c0), iters, prec == "single", "cuda", 0L, 0L, FALSE, NULL, Inf,
                              gpukmeans:::cuda_options())
  c(z$screen_exact, z$screen_every, z$grid_share, z$sums_share, z$rows_ordered)
}
# ms per iteration of the same fit with its cluster sums made afresh every
# iteration (nothing carried)
fresh_sums_ms <- function(x, c0, prec) {
  Sys.setenv(GPUKMEANS_DELTA_SUMS = "0")
  on.exit(Sys.unsetenv("GPUKMEANS_DELTA_SUMS"))
  iter_ms(timed(gpu_kmeans(x, c0, iter.max = iters, precision = prec, backend = "cuda")))
}

# ... and with the packed tiles' products through mma.sync where the device
# runs them through wgmma (compute capability 9.0: src/cuda/detail/wgmma.cuh)
mma_sync_ms <- function(x, c0) {
  Sys.setenv(GPUKMEANS_TC_WGMMA = "0")
  on.exit(Sys.unsetenv("GPUKMEANS_TC_WGMMA"))
  iter_ms(timed(gpu_kmeans(x, c0, iter.max = iters, precision = "single", backend = "cuda")))
}
wgmma_device <- identical(info$devices$compute_capability[1L], "9.0")

problems <- data.frame(id = c("A", "B", "C", "D", "E"),
                       n = c(21600, 1e6, 1e6, 1e7, 1e6), d = c(2, 2, 2, 16, 128),
                       k = c(12, 100, 1000, 256, 4096))
rows <- list()
for (i in seq_len(nrow(problems))) {
  p <- problems[i, ]
  x <- blobs(p$n, p$d, p$k)
  c0 <- start_centers(x, p$k)
  for (prec in c("single", "double")) {
    # warm-up: the timed fit's own kernels loaded (CUDA loads a kernel at its
    # first launch) and its plans made; a 2-iteration fit leaves out the
    # rows' ordering, which only fits of 10 iterations and more run
    invisible(timed(gpu_kmeans(x, c0, iter.max = iters, precision = prec, backend = "cuda")))
    r <- timed(gpu_kmeans(x, c0, iter.max = iters, precision = prec, backend = "cuda"))
    rows[[length(rows) + 1L]] <- row_of(p$id, p$n, p$d, p$k, prec, "gpukmeans-cuda", r$value, r$elapsed,
                                        ms = iter_ms(r))
    share <- screen_shares(x, c0, prec)
    cat(sprintf("%s %-6s cuda  %9.4f ms/iter  (%d iterations, end to end %.3f s)%s%s%s%s%s\n", p$id, prec,
                tail(rows, 1)[[1]]$ms_per_iter, min(r$value$iter, iters), r$elapsed,
                if (share[4] >= 0) sprintf("  [sums: %.1f%% of point-iterations added; made afresh: %.4f ms/iter]",
                                           100 * share[4], fresh_sums_ms(x, c0, prec)) else "",
                if (share[1] >= 0) sprintf("  [certified filter: %.2f%% of point-iterations exact, %.2f%% every center]",
                                           100 * share[1], 100 * share[2]) else "",
                if (share[3] >= 0) sprintf("  [grid: %.2f%% of point-iterations from cell lists]", 100 * share[3]) else "",
                if (share[5] == 1) "  [rows ordered in space: each warp's own candidate list]" else "",
                if (prec == "single" && p$d > 8 && p$k >= 32 && wgmma_device)
                  sprintf("  [tensor cores by wgmma; by mma.sync: %.4f ms/iter]", mma_sync_ms(x, c0)) else ""))
    # At d = 2, the same fit to convergence (at most 500 iterations): ms an
    # iteration of everything the compute phase holds (the plans, the rows'
    # ordering where it runs, the final within-SS), which a 10-iteration fit
    # divides by 10 only.
    if (p$d == 2) {
      rc <- timed(gpu_kmeans(x, c0, iter.max = 500L, precision = prec, backend = "cuda"))
      cat(sprintf("%s %-6s cuda  %9.4f ms/iter  to convergence (%d iterations, compute %.3f ms)\n", p$id, prec,
                  1000 * rc$compute / rc$value$iter, rc$value$iter, 1000 * rc$compute))
    }
  }
  # The CPU engine on all host threads, a few iterations (E would take minutes).
  if (!quick && p$id != "E") {
    r <- timed(gpu_kmeans(x, c0, iter.max = 3L, backend = "cpu"))
    rows[[length(rows) + 1L]] <- row_of(p$id, p$n, p$d, p$k, "double", "gpukmeans-cpu",
                                        elapsed = r$elapsed, ms = 1000 * r$elapsed / min(r$value$iter, 3L),
                                        iters_run = min(r$value$iter, 3L))
  }
  # stats::kmeans where it finishes in seconds: A and B, end to end, iters iterations.
  if (!quick && p$id %in% c("A", "B")) {
    r <- timed(kmeans(x, c0, iter.max = iters, algorithm = "Lloyd"))
    it <- min(r$value$iter, iters)
    rows[[length(rows) + 1L]] <- row_of(p$id, p$n, p$d, p$k, "double", "stats",
                                        elapsed = r$elapsed, ms = 1000 * r$elapsed / it, iters_run = it)
    g <- timed(gpu_kmeans(x, c0, iter.max = iters, backend = "cuda"))
    same <- identical(g$value$cluster, r$value$cluster) && identical(g$value$iter, r$value$iter)
    cat(sprintf("%s end to end, double, %d iterations: stats %.3f s, gpukmeans %.4f s: %.0fx (same labels and iter: %s)\n",
                p$id, it, r$elapsed, g$elapsed, r$elapsed / g$elapsed, same))
  }
  rm(x); invisible(gc())
}
res <- do.call(rbind, rows)

# The peer's figures from the same run.
if (!is.na(peer_file) && file.exists(peer_file)) {
  peer <- grep("^torch tf32=", readLines(peer_file), value = TRUE)
  for (line in peer) {
    f <- strsplit(line, " ")[[1]]
    kv <- function(key) sub(paste0("^", key, "="), "", grep(paste0("^", key, "="), f, value = TRUE))
    res <- rbind(res, data.frame(date = today, card = card, problem = f[3],
                                 n = as.numeric(kv("n")), d = as.numeric(kv("d")), k = as.numeric(kv("k")),
                                 precision = "single",
                                 engine = if (kv("tf32") == "True") "torch-tf32" else "torch-fp32",
                                 ms_per_iter = as.numeric(f[length(f)]), transfer_to_device_s = NA,
                                 compute_s = NA, transfer_to_host_s = NA, total_s = NA, iterations = NA,
                                 stringsAsFactors = FALSE))
  }
}
if (quick) {
  print(with(res, tapply(ms_per_iter, list(problem, precision), function(v) v[1])))
  quit(save = "no")
}
write.csv(res, file.path(outdir, sprintf("gpu-problems-%s.csv", today)), row.names = FALSE)

# Scaling with n for k = 5, 100, 1000 (d = 2), beside stats where it is quick.
srows <- list()
for (k in c(5, 100, 1000)) for (n in 10^(3:7)) {
  if (n < k * 2) next
  x <- blobs(n, 2, k)
  c0 <- start_centers(x, k)
  invisible(timed(gpu_kmeans(x, c0, iter.max = 2L, backend = "cuda")))
  r <- timed(gpu_kmeans(x, c0, iter.max = iters, backend = "cuda"))
  it <- min(r$value$iter, iters)
  srows[[length(srows) + 1L]] <- data.frame(date = today, card = card, n = n, d = 2, k = k,
    engine = "gpukmeans-cuda", ms_per_iter = iter_ms(r),
    total_s = r$elapsed, iterations = it)
  if (n * k <= 1e8) {
    s <- timed(kmeans(x, c0, iter.max = 3L, algorithm = "Lloyd"))
    its <- min(s$value$iter, 3L)
    srows[[length(srows) + 1L]] <- data.frame(date = today, card = card, n = n, d = 2, k = k,
      engine = "stats", ms_per_iter = 1000 * s$elapsed / its, total_s = s$elapsed, iterations = its)
  }
}
scaling <- do.call(rbind, srows)
write.csv(scaling, file.path(outdir, sprintf("gpu-scaling-%s.csv", today)), row.names = FALSE)

cat("\nms per iteration (compute phase), ", card, ", ", today, "\n", sep = "")
wide <- with(res, tapply(ms_per_iter, list(problem, paste(engine, precision)), function(v) v[1]))
print(round(wide, 4))
if (all(c("torch-fp32 single", "gpukmeans-cuda single") %in% colnames(wide))) {
  cat("\nspeedup over the PyTorch fp32 recipe (same card, same run):\n")
  print(round(cbind(single = wide[, "torch-fp32 single"] / wide[, "gpukmeans-cuda single"],
                    double = wide[, "torch-fp32 single"] / wide[, "gpukmeans-cuda double"]), 1))
}
