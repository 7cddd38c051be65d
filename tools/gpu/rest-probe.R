# Where the wall time outside upload and compute goes in inst/bench/bench_upload.R's
# fits (its data: 1e7 uniform values repeated), fit by fit: R's garbage
# collection time (gc.time()), the engine's stages (GPUKMEANS_STAGE_LOG) and
# the timing attribute.  GPU machine:  sh tools/gpu/run-r.sh tools/gpu/rest-probe.R [fits]
suppressPackageStartupMessages(library(gpukmeans))
options(gpukmeans.progress = FALSE)
args <- commandArgs(trailingOnly = TRUE)
fits <- if (length(args)) as.integer(args[1]) else 4L
n <- 1e8
set.seed(1)
x <- matrix(rep_len(runif(1e7 + 17), n * 16), n, 16)
c0 <- x[1:256, ]
for (prec in c("single", "double")) {
  invisible(gpu_kmeans(x[1:1e5, ], c0, iter.max = 2, precision = prec, backend = "cuda"))
  for (r in seq_len(fits)) {
    sl <- tempfile()
    Sys.setenv(GPUKMEANS_STAGE_LOG = sl)
    g0 <- gc.time()[1]
    t0 <- Sys.time()
    f <- suppressWarnings(gpu_kmeans(x, c0, iter.max = 10, precision = prec, backend = "cuda"))
    wall <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
    g1 <- gc.time()[1]
    Sys.unsetenv("GPUKMEANS_STAGE_LOG")
    tm <- attr(f, "timing")
    st <- utils::read.table(sl, col.names = c("stage", "seconds"))
    rest <- wall - tm[["transfer_to_device"]] - tm[["compute"]]
    cat(sprintf("%s fit %d: wall %.3f upload %.3f compute %.3f download %.3f rest %.3f (%.1f%%) | R gc %.3f s | stages: %s\n",
                prec, r, wall, tm[["transfer_to_device"]], tm[["compute"]], tm[["transfer_to_host"]], rest,
                100 * rest / wall, g1 - g0, paste(sprintf("%s %.3f", st$stage, st$seconds)[st$seconds >= 0.002], collapse = " | ")))
    rm(f)
  }
}
