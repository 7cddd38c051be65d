# The host's totss beside a large CUDA fit (issue 16's "rest"): bench_upload.R's
# 1e8 x 16 data, k = 256, 10 iterations; fits with totss on the host while
# the device fits (the default) and with it computed first, alone
# (GPUKMEANS_TOTSS_SERIAL=1), each line the engine's stages (GPUKMEANS_STAGE_LOG:
# totss_task, the concurrent task's own seconds; totss, the serial pass).
#   GPU machine:  sh tools/gpu/run-r.sh tools/gpu/totss-probe.R [fits]
source(file.path("tools", "gpu", "big_fit.R"))
args <- commandArgs(trailingOnly = TRUE)
fits <- if (length(args)) as.integer(args[1]) else 2L
d <- big_data()
threads <- gpukmeans:::cpu_threads(length(d$x))
t0 <- Sys.time()
invisible(gpukmeans:::gk_first_nonfinite(d$x, threads))
cat(sprintf("one read of x on the host (the non-finite scan, %d threads): %.3f s\n",
            threads, as.numeric(difftime(Sys.time(), t0, units = "secs"))))
for (prec in c("single", "double")) {
  warm_up(d, prec)
  for (serial in c("0", "1")) for (r in seq_len(fits)) {
    z <- big_fit(d, prec, c(GPUKMEANS_TOTSS_SERIAL = serial))
    cat(sprintf("%s serial %s: %s | %s\n", prec, serial, fit_line(z), z$stages))
  }
}
