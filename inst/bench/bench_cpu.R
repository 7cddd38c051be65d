# CPU engine vs stats::kmeans(algorithm = "Lloyd") from the same centers,
# with a fixed number of iterations, on 1 thread and on all threads, as the
# engine chooses (the default: at d <= 3 the points ordered in space,
# src/cpu_spatial.h; else distance bounds, src/cpu_bounds.h), at d <= 3
# with the distance bounds instead (GPUKMEANS_CPU_SPATIAL=0), and plain
# (every distance in every iteration; GPUKMEANS_CPU_BOUNDS=off).
# Not a test: run by hand and commit the output with the date and machine.
#   Rscript inst/bench/bench_cpu.R [iterations] > inst/bench/results/cpu-<date>-<machine>.txt
suppressPackageStartupMessages(library(gpukmeans))
options(gpukmeans.progress = FALSE)
args <- commandArgs(trailingOnly = TRUE)
iters <- if (length(args)) as.integer(args[1]) else 20L
cores <- parallel::detectCores()
problems <- list(list(n = 1e6, d = 2, k = 100), list(n = 1e6, d = 16, k = 256),
                 list(n = 1e5, d = 64, k = 256))  # the last: issue 15's CPU goal

cat("date:", format(Sys.time(), "%Y-%m-%d %H:%M %Z"), "\n")
cat("machine:", sub("model name\\s*:\\s*", "", grep("model name", readLines("/proc/cpuinfo"), value = TRUE)[1]),
    "|", cores, "cores |", R.version.string, "\n")
cat("iterations per fit: at most", iters, "(iter.max =", iters, "); load average at start:",
    readLines("/proc/loadavg"), "\n\n")
cat(sprintf("%-18s %-16s %8s %6s %12s %9s\n", "problem", "engine", "threads", "iters", "ms/iter", "speedup"))
for (p in problems) {
  set.seed(42)
  x <- matrix(rnorm(p$n * p$d), ncol = p$d) + matrix(runif(p$n * p$d, 0, 20), ncol = p$d)
  c0 <- x[sample.int(nrow(x), p$k), , drop = FALSE]
  label <- sprintf("%gx%d k=%d", p$n, p$d, p$k)
  t_stats <- system.time(s <- suppressWarnings(kmeans(x, c0, iter.max = iters, algorithm = "Lloyd")))[["elapsed"]]
  ms_stats <- 1000 * t_stats / min(s$iter, iters)
  cat(sprintf("%-18s %-16s %8d %6d %12.1f %9s\n", label, "stats", 1L, min(s$iter, iters), ms_stats, "1.00x"))
  variants <- list(gpukmeans = c(GPUKMEANS_CPU_BOUNDS = "auto"),
                   "gpukmeans bounds" = c(GPUKMEANS_CPU_BOUNDS = "auto", GPUKMEANS_CPU_SPATIAL = "0"),
                   "gpukmeans plain" = c(GPUKMEANS_CPU_BOUNDS = "off"))
  if (p$d > 2) variants[["gpukmeans bounds"]] <- NULL  # (the default there)
  for (th in unique(c(1L, cores))) for (engine in names(variants)) {
    options(gpukmeans.threads = th)
    t <- withr::with_envvar(variants[[engine]], system.time(
      g <- suppressWarnings(gpu_kmeans(x, c0, iter.max = iters, backend = "cpu")))[["elapsed"]])
    stopifnot(identical(g$cluster, s$cluster), identical(g$iter, s$iter),
              isTRUE(all.equal(unname(g$centers), unname(s$centers), tolerance = 1e-10)))
    ms <- 1000 * t / min(g$iter, iters)
    cat(sprintf("%-18s %-16s %8d %6d %12.1f %8.2fx\n", label, engine, th, min(g$iter, iters), ms, ms_stats / ms))
  }
}
cat("\n(ms/iter from R's elapsed time of the whole call; labels and iter checked identical to stats,",
    "centers equal to rounding (1 thread: identical))\n")
