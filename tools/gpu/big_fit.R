# Shared by the probes of a large fit's wall time outside upload and compute
# (rest-probe.R, totss-probe.R, switch-turns.R; issue 16): bench_upload.R's
# data and one fit with the engine's stage log.  Sourced, not run.
suppressPackageStartupMessages(library(gpukmeans))
options(gpukmeans.progress = FALSE)

# bench_upload.R's 1e8 x 16 (1e7 uniform values repeated) and its 256 starting centers
big_data <- function(n = 1e8) {
  set.seed(1)
  x <- matrix(rep_len(runif(1e7 + 17), n * 16), n, 16)
  list(x = x, c0 = x[1:256, ])
}

# A small fit first, so that the device and the package are warm.
warm_up <- function(d, prec) {
  invisible(suppressWarnings(gpu_kmeans(d$x[1:1e5, ], d$c0, iter.max = 2, precision = prec, backend = "cuda")))
}

# One fit of 10 iterations with the environment variables `env` (named) set
# for it: wall, the timing attribute's parts, R's gc time, totss, the
# labels, and the engine's stages (GPUKMEANS_STAGE_LOG) as "stage seconds | ..." (those of
# 2 ms or more).
big_fit <- function(d, prec, env = character()) {
  sl <- tempfile()
  do.call(Sys.setenv, as.list(c(GPUKMEANS_STAGE_LOG = sl, env)))
  on.exit(Sys.unsetenv(c("GPUKMEANS_STAGE_LOG", names(env))))
  g0 <- gc.time()[1]
  t0 <- Sys.time()
  f <- suppressWarnings(gpu_kmeans(d$x, d$c0, iter.max = 10, precision = prec, backend = "cuda"))
  wall <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
  tm <- attr(f, "timing")
  st <- utils::read.table(sl, col.names = c("stage", "seconds"))
  rest <- wall - tm[["transfer_to_device"]] - tm[["compute"]]
  list(wall = wall, up = tm[["transfer_to_device"]], compute = tm[["compute"]], down = tm[["transfer_to_host"]],
       rest = rest, gc = gc.time()[1] - g0, totss = f$totss, cluster = f$cluster,
       stages = paste(sprintf("%s %.3f", st$stage, st$seconds)[st$seconds >= 0.002], collapse = " | "))
}

# "wall ... upload ... compute ... download ... rest ... (..%)" of a big_fit()
fit_line <- function(z) {
  sprintf("wall %.3f upload %.3f compute %.3f download %.3f rest %.3f (%.1f%%)", z$wall, z$up, z$compute, z$down,
          z$rest, 100 * z$rest / z$wall)
}
