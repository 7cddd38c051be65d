# Where the wall time outside upload and compute goes in inst/bench/bench_upload.R's
# fits (its data: 1e7 uniform values repeated), fit by fit: R's garbage
# collection time (gc.time()), the engine's stages (GPUKMEANS_STAGE_LOG) and
# the timing attribute.  GPU machine:  sh tools/gpu/run-r.sh tools/gpu/rest-probe.R [fits]
source(file.path("tools", "gpu", "big_fit.R"))
args <- commandArgs(trailingOnly = TRUE)
fits <- if (length(args)) as.integer(args[1]) else 4L
d <- big_data()
for (prec in c("single", "double")) {
  warm_up(d, prec)
  for (r in seq_len(fits)) {
    z <- big_fit(d, prec)
    cat(sprintf("%s fit %d: %s | R gc %.3f s | stages: %s\n", prec, r, fit_line(z), z$gc, z$stages))
  }
}
