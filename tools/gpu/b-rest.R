# Where the wall time of bench.R's problem B goes (1e6 x 2, k = 100, 10
# iterations from fixed rows, a fresh handle each call), or of problem A
# (21600 x 2, k = 12), whose call is nearly all fixed cost: the timing
# attribute's parts, R's gc time, the engine's stages (GPUKMEANS_STAGE_LOG)
# and what R spends around gk_fit_cpp (wall less the stages' sum).
# GPU machine:  sh tools/gpu/run-r.sh tools/gpu/b-rest.R [fits] [B|A]
suppressPackageStartupMessages(library(gpukmeans))
options(gpukmeans.progress = FALSE, gpukmeans.cuda_tuning = c(0L, 0L, 0L, 1L))
args <- commandArgs(trailingOnly = TRUE)
fits <- if (length(args)) as.integer(args[1]) else 5L
source(file.path("tools", "gpu", "blobs.R"))
problem <- if (length(args) >= 2L) args[2] else "B"
shape <- switch(problem, A = c(21600, 12), B = c(1e6, 100), stop("problem: A or B"))
x <- bench_blobs(shape[1], 2, shape[2])
set.seed(2)  # (bench.R's starts)
c0 <- x[sample.int(nrow(x), shape[2]), , drop = FALSE]
cat(problem, "wall time |", gpukmeans_info()$devices$name[1], "|", format(Sys.Date()), "\n")
early <- if (identical(Sys.getenv("GPUKMEANS_EARLY"), "0")) "off" else "on"
mid <- if (identical(Sys.getenv("GPUKMEANS_MID_STAGING"), "0")) "one pageable copy" else "staged"
for (prec in c("single", "double")) {
  # (the process's first call also loads the kernels and, staged, makes the pinned buffers)
  t0 <- Sys.time()
  invisible(suppressWarnings(gpu_kmeans(x, c0, iter.max = 10L, precision = prec, backend = "cuda")))
  cat(sprintf("%s: the first call %.2f ms\n", prec, 1e3 * as.numeric(difftime(Sys.time(), t0, units = "secs"))))
  walls <- ups <- downs <- waits <- numeric(0)
  for (r in seq_len(fits)) {
    sl <- tempfile()
    Sys.setenv(GPUKMEANS_STAGE_LOG = sl)
    g0 <- gc.time()[1]
    t0 <- Sys.time()
    f <- suppressWarnings(gpu_kmeans(x, c0, iter.max = 10L, precision = prec, backend = "cuda"))
    wall <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
    Sys.unsetenv("GPUKMEANS_STAGE_LOG")
    tm <- attr(f, "timing")
    st <- utils::read.table(sl, col.names = c("stage", "seconds"))
    cat(sprintf("%s fit %d: wall %.2f ms | upload %.2f compute %.2f download %.2f | R gc %.2f | around the engine %.2f | stages (ms): %s\n",
                prec, r, 1e3 * wall, 1e3 * tm[["transfer_to_device"]], 1e3 * tm[["compute"]],
                1e3 * tm[["transfer_to_host"]], 1e3 * (gc.time()[1] - g0), 1e3 * (wall - sum(st$seconds)),
                paste(sprintf("%s %.2f", st$stage, 1e3 * st$seconds), collapse = " ")))
    walls <- c(walls, wall)
    ups <- c(ups, tm[["transfer_to_device"]])
    downs <- c(downs, tm[["transfer_to_host"]])
    waits <- c(waits, sum(st$seconds[st$stage == "fit"]))
  }
  # (the work beside the upload: GPUKMEANS_EARLY=0 leaves it out)
  cat(sprintf("%s, early work %s, upload %s: median of %d calls: wall %.2f ms, upload %.2f, download %.2f, after the fit (totss) %.2f\n",
              prec, early, mid, fits, 1e3 * median(walls), 1e3 * median(ups), 1e3 * median(downs), 1e3 * median(waits)))
}
