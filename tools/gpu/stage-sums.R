# The staged upload's column sums (issue 16's "rest"), three ways in one run
# on one machine: GPUKMEANS_STAGE_SUMS = 0 (none: the host's totss makes the
# column means itself, a second pass over x while the device fits), 1 (the
# upload adds them up, one chunk's chain a thread at a time) and the
# default (up to four chunks' chains a thread at once).  bench_upload.R's
# 1e8 x 16 data, k = 256, 10 iterations; the three ways take turns, fit
# after fit; each line the median of `reps` fits by wall time, with the
# engine's stages (GPUKMEANS_STAGE_LOG) of that fit.
#   GPU machine:  sh tools/gpu/run-r.sh tools/gpu/stage-sums.R [reps]
suppressPackageStartupMessages(library(gpukmeans))
options(gpukmeans.progress = FALSE)
args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args)) as.integer(args[1]) else 3L
n <- 1e8
set.seed(1)
x <- matrix(rep_len(runif(1e7 + 17), n * 16), n, 16)
c0 <- x[1:256, ]
modes <- c("0", "1", "4")
for (prec in c("single", "double")) {
  invisible(suppressWarnings(gpu_kmeans(x[1:1e5, ], c0, iter.max = 2, precision = prec, backend = "cuda")))
  runs <- list()
  for (r in seq_len(reps)) for (mode in modes) {
    sl <- tempfile()
    Sys.setenv(GPUKMEANS_STAGE_LOG = sl, GPUKMEANS_STAGE_SUMS = mode)
    t0 <- Sys.time()
    f <- suppressWarnings(gpu_kmeans(x, c0, iter.max = 10, precision = prec, backend = "cuda"))
    wall <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
    Sys.unsetenv(c("GPUKMEANS_STAGE_LOG", "GPUKMEANS_STAGE_SUMS"))
    tm <- attr(f, "timing")
    st <- utils::read.table(sl, col.names = c("stage", "seconds"))
    runs[[length(runs) + 1L]] <- list(mode = mode, wall = wall, up = tm[["transfer_to_device"]],
                                      compute = tm[["compute"]], totss = f$totss,
                                      stages = paste(sprintf("%s %.3f", st$stage, st$seconds)[st$seconds >= 0.002],
                                                     collapse = " | "))
    rm(f)
  }
  for (mode in modes) {
    m <- Filter(function(z) z$mode == mode, runs)
    walls <- vapply(m, `[[`, 0, "wall")
    z <- m[[order(walls)[(length(m) + 1L) %/% 2L]]]
    rest <- z$wall - z$up - z$compute
    cat(sprintf("%s sums %s: wall %.3f (fits %.3f-%.3f) upload %.3f compute %.3f rest %.3f (%.1f%%) totss %.17g | %s\n",
                prec, mode, z$wall, min(walls), max(walls), z$up, z$compute, rest, 100 * rest / z$wall, z$totss,
                z$stages))
  }
}
