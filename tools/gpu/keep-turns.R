# The device blocks kept between handles (src/cuda/kept_memory.cu) on and
# off (GPUKMEANS_KEEP_DEVICE=0), taking turns in one process: bench.R's
# problems A, C and D, 10 iterations from fixed rows, a fresh handle each
# call; per variant the medians of the calls' wall time and compute phase.
# C's fits come before D's, as in bench.R, so that D's handles may take
# blocks C's left.
# GPU machine:  sh tools/gpu/run-r.sh tools/gpu/keep-turns.R [turns]
suppressPackageStartupMessages(library(gpukmeans))
options(gpukmeans.progress = FALSE, gpukmeans.cuda_tuning = c(0L, 0L, 0L, 1L))
args <- commandArgs(trailingOnly = TRUE)
turns <- if (length(args)) as.integer(args[1]) else 2L
source(file.path("tools", "gpu", "blobs.R"))
problem <- function(n, d, k) {
  x <- bench_blobs(n, d, k)
  set.seed(2)
  list(x = x, c0 = x[sample.int(nrow(x), k), , drop = FALSE])
}
probs <- list(A = problem(21600, 2, 12), C = problem(1e6, 2, 1000), D = problem(1e7, 16, 256))
cat("device blocks kept or not |", gpukmeans_info()$devices$name[1], "|", format(Sys.Date()), "\n")
fit <- function(p, prec) suppressWarnings(gpu_kmeans(p$x, p$c0, iter.max = 10L, precision = prec, backend = "cuda"))
for (nm in names(probs)) for (prec in c("single", "double")) invisible(fit(probs[[nm]], prec))  # (kernels loaded)
for (t in seq_len(turns)) for (keep in c(TRUE, FALSE)) {
  Sys.setenv(GPUKMEANS_KEEP_DEVICE = if (keep) "" else "0")
  for (nm in names(probs)) for (prec in c("single", "double")) {
    reps <- if (nm == "D") 5L else 9L
    wall <- comp <- numeric(reps)
    for (r in seq_len(reps)) {
      t0 <- Sys.time()
      f <- fit(probs[[nm]], prec)
      wall[r] <- as.numeric(Sys.time()) - as.numeric(t0)
      comp[r] <- attr(f, "timing")[["compute"]]
    }
    cat(sprintf("turn %d, kept %-5s %s %-6s: wall %8.3f ms, compute %.4f ms an iteration (medians of %d)\n", t, keep, nm,
                prec, 1e3 * median(wall), 1e3 * median(comp) / min(f$iter, 10L), reps))
  }
}
Sys.unsetenv("GPUKMEANS_KEEP_DEVICE")
