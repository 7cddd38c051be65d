# Time to convergence on the CPU: gpu_kmeans() on the CPU engine, with its
# exact distance bounds (the default) and without them (plain Lloyd), beside
# stats::kmeans(algorithm = "Lloyd"), from random starts (k rows drawn with
# set.seed(seed)), iter.max = 500, on Gaussian blobs of several shapes,
# uniform data (points keep moving) and the bundled `boxes` data set.
# Not a test: run by hand and commit the output with the date and machine.
#   Rscript inst/bench/bench_convergence_cpu.R [quick] \
#     > inst/bench/results/cpu-convergence-<date>-<machine>.txt
#
# Columns: iterations; seconds (median of the runs, elapsed time of the whole
# call from R) for stats, the CPU engine without bounds (plain, 1 and 2
# threads) and with bounds (1 and 2 threads); speedups over stats; the share of the n k
# point-center distances of all iterations that the bounds skipped; "same":
# cluster, iter and size identical to stats, centers identical with one
# thread (all.equal(tolerance = 1e-10) with two: threads add in another
# order; the 2-thread fits with bounds have the centers of the plain
# 2-thread engine bit for bit).  The per-iteration kinds (P plain, F full with bounds set, B
# bounded) and skipped shares come from the engine's internal log
# (GPUKMEANS_CPU_BOUNDS_LOG, src/cpu_bounds.h); GPUKMEANS_CPU_BOUNDS = "off"
# is the plain engine.
suppressPackageStartupMessages(library(gpukmeans))
options(gpukmeans.progress = FALSE)
quick <- "quick" %in% commandArgs(trailingOnly = TRUE)
reps <- if (quick) 1L else 3L

uniform <- function(n, d) {
  set.seed(42)
  matrix(runif(n * d), n, d)
}
problems <- list(
  list(name = "blobs 2e5 x 8, k = 50 (target)", x = function() simulate_blobs(2e5, 8, 50, seed = 1), k = 50,
       seeds = if (quick) 1:2 else 1:5),
  list(name = "blobs 1e5 x 4, k = 12", x = function() simulate_blobs(1e5, 4, 12, seed = 2), k = 12, seeds = 1:3),
  list(name = "blobs 5e4 x 2, k = 256", x = function() simulate_blobs(5e4, 2, 256, seed = 3), k = 256, seeds = 1:2),
  list(name = "blobs 5e4 x 16, k = 256", x = function() simulate_blobs(5e4, 16, 256, seed = 4), k = 256, seeds = 1:2),
  list(name = "blobs 3e4 x 64, k = 50", x = function() simulate_blobs(3e4, 64, 50, seed = 5), k = 50, seeds = 1:2),
  list(name = "uniform 1e5 x 2, k = 50", x = function() uniform(1e5, 2), k = 50, seeds = 1:2),
  list(name = "boxes 21600 x 2, k = 48", x = function() as.matrix(boxes), k = 48, seeds = 1:3),
  list(name = "boxes 21600 x 2, k = 96", x = function() as.matrix(boxes), k = 96, seeds = 1:2)
)

# One gpu_kmeans fit on the CPU engine: its elapsed seconds and, with a
# log file, the engine's per-iteration log.
run_gk <- function(x, c0, threads, bounds, log = FALSE) {
  f <- if (log) tempfile() else ""
  old <- Sys.getenv(c("GPUKMEANS_CPU_BOUNDS", "GPUKMEANS_CPU_BOUNDS_LOG"), unset = NA)
  on.exit({
    for (v in names(old)) if (is.na(old[[v]])) Sys.unsetenv(v) else do.call(Sys.setenv, as.list(old[v]))
  })
  Sys.setenv(GPUKMEANS_CPU_BOUNDS = bounds)
  if (log) Sys.setenv(GPUKMEANS_CPU_BOUNDS_LOG = f) else Sys.unsetenv("GPUKMEANS_CPU_BOUNDS_LOG")
  options(gpukmeans.threads = threads)
  t <- system.time(fit <- suppressWarnings(gpu_kmeans(x, c0, iter.max = 500, backend = "cpu")))[["elapsed"]]
  lg <- if (log) utils::read.table(f, col.names = c("iter", "kind", "changed", "evals", "n", "k", "seconds")) else NULL
  if (log) unlink(f)
  list(fit = fit, seconds = t, log = lg)
}
med <- function(f, reps) {
  runs <- lapply(seq_len(reps), function(r) f())
  list(fit = runs[[1]]$fit, seconds = stats::median(vapply(runs, `[[`, 0, "seconds")), log = runs[[1]]$log)
}
same_fit <- function(g, s, exact) {
  identical(g$cluster, s$cluster) && identical(g$iter, s$iter) && identical(g$size, s$size) &&
    (if (exact) identical(g$centers, s$centers) else isTRUE(all.equal(g$centers, s$centers, tolerance = 1e-10)))
}
load_avg <- function() {
  la <- tryCatch(readLines("/proc/loadavg", n = 1L), error = function(e) NA_character_)
  paste(strsplit(la, " ")[[1]][1:3], collapse = " ")
}

cat("date:", format(Sys.time(), "%Y-%m-%d %H:%M %Z"), "\n")
cat("machine:", sub("model name\\s*:\\s*", "", grep("model name", readLines("/proc/cpuinfo"), value = TRUE)[1]),
    "|", parallel::detectCores(), "cores |", R.version.string, "\n")
cat("load average at start:", load_avg(), "(a shared machine: other jobs ran beside this one)\n")
cat("OMP_WAIT_POLICY:", Sys.getenv("OMP_WAIT_POLICY", "(unset: GNU OpenMP spins, then sleeps)"), "\n")
cat("iter.max = 500, random starts (set.seed(seed); x[sample.int(n, k), ]);", reps,
    "run(s) per gpu_kmeans timing (median), one stats run\n\n")
cat(sprintf("%-32s %4s %4s %8s %8s %8s %8s %8s %7s %7s %7s %5s\n", "problem", "seed", "iter", "stats", "plain1t",
            "plain2t", "bounds1t", "bounds2t", "x stats", "x st 2t", "skipped", "same"))
details <- list()
for (p in problems) {
  x <- p$x()
  storage.mode(x) <- "double"
  for (seed in p$seeds) {
    set.seed(seed)
    c0 <- x[sample.int(nrow(x), p$k), , drop = FALSE]
    ts <- system.time(s <- suppressWarnings(kmeans(x, c0, iter.max = 500, algorithm = "Lloyd")))[["elapsed"]]
    plain <- med(function() run_gk(x, c0, 1L, "off"), reps)
    plain2 <- med(function() run_gk(x, c0, 2L, "off"), reps)
    b1 <- med(function() run_gk(x, c0, 1L, "auto", log = TRUE), reps)
    b2 <- med(function() run_gk(x, c0, 2L, "auto"), reps)
    lg <- b1$log
    skipped <- 1 - sum(as.numeric(lg$evals)) / sum(as.numeric(lg$n) * lg$k)
    ok <- same_fit(plain$fit, s, TRUE) && same_fit(b1$fit, s, TRUE) && same_fit(plain2$fit, s, FALSE) &&
      same_fit(b2$fit, s, FALSE) && identical(b2$fit$centers, plain2$fit$centers)
    cat(sprintf("%-32s %4d %4d %8.3f %8.3f %8.3f %8.3f %8.3f %6.1fx %6.1fx %6.1f%% %5s\n", p$name, seed, s$iter, ts,
                plain$seconds, plain2$seconds, b1$seconds, b2$seconds, ts / b1$seconds, ts / b2$seconds,
                100 * skipped, if (ok) "yes" else "NO"))
    if (seed == p$seeds[1]) details[[p$name]] <- lg
  }
}
cat("\nload average at end:", load_avg(), "\n")

cat("\nPer iteration, first seed of each problem (1 thread): kind and share of the n k distances skipped, %\n")
cat("(P plain, F full: every distance, bounds set; B bounded)\n")
for (nm in names(details)) {
  lg <- details[[nm]]
  sk <- round(100 * (1 - lg$evals / (as.numeric(lg$n) * lg$k)))
  cells <- sprintf("%3d:%s%3d", lg$iter, lg$kind, sk)
  cat("\n", nm, " (", nrow(lg), " iterations, ", sprintf("%.3f", sum(lg$seconds)), " s in the loop)\n", sep = "")
  for (i in seq(1, length(cells), by = 10)) cat("  ", paste(cells[i:min(length(cells), i + 9)], collapse = "  "), "\n")
}
