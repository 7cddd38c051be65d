# The host's totss beside a large CUDA fit (issue 16's "rest"): bench_upload.R's
# 1e8 x 16 data, k = 256, 10 iterations; fits with totss on the host while
# the device fits (the default) and with it computed first, alone
# (GPUKMEANS_TOTSS_SERIAL=1), each line the engine's stages (GPUKMEANS_STAGE_LOG:
# totss_task, the concurrent task's own seconds; totss, the serial pass).
#   GPU machine:  sh tools/gpu/run-r.sh tools/gpu/totss-probe.R [fits]
suppressPackageStartupMessages(library(gpukmeans))
options(gpukmeans.progress = FALSE)
args <- commandArgs(trailingOnly = TRUE)
fits <- if (length(args)) as.integer(args[1]) else 2L
n <- 1e8
set.seed(1)
x <- matrix(rep_len(runif(1e7 + 17), n * 16), n, 16)
c0 <- x[1:256, ]
t0 <- Sys.time()
invisible(gpukmeans:::gk_first_nonfinite(x, gpukmeans:::cpu_threads(n * 16)))
cat(sprintf("one read of x on the host (the non-finite scan, %d threads): %.3f s\n",
            gpukmeans:::cpu_threads(n * 16), as.numeric(difftime(Sys.time(), t0, units = "secs"))))
for (prec in c("single", "double")) {
  invisible(suppressWarnings(gpu_kmeans(x[1:1e5, ], c0, iter.max = 2, precision = prec, backend = "cuda")))
  for (serial in c("0", "1")) for (r in seq_len(fits)) {
    sl <- tempfile()
    Sys.setenv(GPUKMEANS_STAGE_LOG = sl, GPUKMEANS_TOTSS_SERIAL = serial)
    t0 <- Sys.time()
    f <- suppressWarnings(gpu_kmeans(x, c0, iter.max = 10, precision = prec, backend = "cuda"))
    wall <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
    Sys.unsetenv(c("GPUKMEANS_STAGE_LOG", "GPUKMEANS_TOTSS_SERIAL"))
    tm <- attr(f, "timing")
    st <- utils::read.table(sl, col.names = c("stage", "seconds"))
    rest <- wall - tm[["transfer_to_device"]] - tm[["compute"]]
    cat(sprintf("%s serial %s: wall %.3f upload %.3f compute %.3f download %.3f rest %.3f (%.1f%%) | %s\n",
                prec, serial, wall, tm[["transfer_to_device"]], tm[["compute"]], tm[["transfer_to_host"]], rest,
                100 * rest / wall, paste(sprintf("%s %.3f", st$stage, st$seconds)[st$seconds >= 0.002], collapse = " | ")))
    rm(f)
  }
}
