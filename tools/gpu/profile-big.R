# Where the wall time of a big GPU fit goes (issue 16: "everything outside
# upload and compute <= 10% of a 1e8-row fit"), stage by stage from R, on the
# GPU machine:  sh tools/gpu/run-r.sh tools/gpu/profile-big.R [n] [reps]
# Prints the R-side stages (input checks, starts, the engine call, the
# result object), the engine's own timing inside the call, and an Rprof
# summary of one whole gpu_kmeans() call per precision.
suppressPackageStartupMessages(library(gpukmeans))
options(gpukmeans.progress = FALSE)
args <- commandArgs(trailingOnly = TRUE)
n <- if (length(args) >= 1L) as.numeric(args[1]) else 1e8
reps <- if (length(args) >= 2L) as.integer(args[2]) else 2L
d <- 16L
k <- 256L
cat("device:", gpukmeans_info()$devices$name[1], "| n =", n, "d =", d, "k =", k, "| 10 iterations\n")
t0 <- Sys.time()
set.seed(1)
x <- matrix(runif(n * d), ncol = d)
c0 <- x[seq_len(k), ]
cat(sprintf("(data made in %.1f s)\n", as.numeric(Sys.time() - t0, units = "secs")))
el <- function(expr) {
  t <- Sys.time()
  force(expr)
  as.numeric(Sys.time() - t, units = "secs")
}
for (prec in c("single", "double")) {
  for (r in seq_len(reps)) {
    th <- gpukmeans:::cpu_threads(as.numeric(n) * d)
    # (a Lloyd fit leaves the non-finite check to the engine: timed apart)
    s_data <- el(dm <- gpukmeans:::data_matrix(x, check_finite = FALSE))
    s_nonfinite <- el(gpukmeans:::gk_first_nonfinite(x, th))
    s_starts <- el(st <- gpukmeans:::weighted_initial_centers(x, c0, 1L, "random", NULL))
    s_call <- el(z <- gpukmeans:::gk_fit_cpp(x, st$starts, 10L, prec == "single", "cuda", th, 0L, FALSE, NULL,
                                             Inf, gpukmeans:::cuda_options(), finite = FALSE))
    s_new <- el(fit <- gpukmeans:::new_gpu_kmeans(x, z, k, NULL, "cuda", 1L, Sys.time()))
    s_total <- el(g <- suppressWarnings(gpu_kmeans(x, c0, iter.max = 10L, precision = prec, backend = "cuda")))
    tm <- z$timing
    inside <- s_call - sum(tm[c("transfer_to_device", "compute", "transfer_to_host", "init")], na.rm = TRUE)
    cat(sprintf("%s rep %d: data_matrix %.3f (an R non-finite scan, not in the fit: %.3f, %d threads) | starts %.3f | engine call %.3f = upload %.3f + compute %.3f + download %.3f + init %.3f + other %.3f | result object %.3f | whole gpu_kmeans %.3f (its timing: %s)\n",
                prec, r, s_data, s_nonfinite, th, s_starts, s_call, tm[["transfer_to_device"]], tm[["compute"]],
                tm[["transfer_to_host"]], tm[["init"]], inside, s_new, s_total,
                paste(sprintf("%s=%.3f", names(attr(g, "timing")), attr(g, "timing")), collapse = " ")))
  }
  sl <- tempfile()
  Sys.setenv(GPUKMEANS_STAGE_LOG = sl)
  g <- suppressWarnings(gpu_kmeans(x, c0, iter.max = 10L, precision = prec, backend = "cuda"))
  Sys.unsetenv("GPUKMEANS_STAGE_LOG")
  cat("stages inside the engine call (GPUKMEANS_STAGE_LOG, seconds since the previous mark),", prec, ":\n")
  st <- utils::read.table(sl, col.names = c("stage", "seconds"))
  cat(paste(sprintf("%s %.3f", st$stage, st$seconds), collapse = " | "), "\n")
  f <- tempfile()
  Rprof(f, interval = 0.005)
  g <- suppressWarnings(gpu_kmeans(x, c0, iter.max = 10L, precision = prec, backend = "cuda"))
  Rprof(NULL)
  p <- summaryRprof(f)
  cat("Rprof,", prec, ": by total time\n")
  print(utils::head(p$by.total, 15))
}
