# The staged upload's variants on one card in one run (issue 16): threads
# started per buffer or once per copy (GPUKMEANS_STAGE_TEAM), beside one
# pageable copy, for a 1e8 x 16 fit in both precisions.  On the GPU machine:
#   sh tools/gpu/run-r.sh tools/gpu/upload-variants.R [n] [reps]
suppressPackageStartupMessages(library(gpukmeans))
options(gpukmeans.progress = FALSE)
args <- commandArgs(trailingOnly = TRUE)
n <- if (length(args) >= 1L) as.numeric(args[1]) else 1e8
reps <- if (length(args) >= 2L) as.integer(args[2]) else 2L
info <- gpukmeans_info()
cat(sprintf("upload variants | %s | %s | n = %g x 16, k = 256, 10 iterations | host threads %d\n",
            info$devices$name[1L], format(Sys.Date()), n, as.integer(info$cpu_threads)))
set.seed(1)
x <- matrix(rep_len(runif(1e7 + 17), n * 16), n, 16)
c0 <- x[1:256, ]
variants <- list(c(team = "0", staging = 0L), c(team = "1", staging = 0L), c(team = "1", staging = 1L))
for (prec in c("double", "single")) {
  invisible(gpu_kmeans(x[1:1e5, ], c0, iter.max = 2, precision = prec, backend = "cuda"))
  for (v in variants) {
    Sys.setenv(GPUKMEANS_STAGE_TEAM = v[["team"]])
    options(gpukmeans.cuda_tuning = c(0L, 0L, 0L, 0L, as.integer(v[["staging"]])))
    up <- wall <- down <- numeric(0)
    for (r in seq_len(reps)) {
      t0 <- Sys.time()
      f <- suppressWarnings(gpu_kmeans(x, c0, iter.max = 10, precision = prec, backend = "cuda"))
      wall <- c(wall, as.numeric(difftime(Sys.time(), t0, units = "secs")))
      up <- c(up, attr(f, "timing")[["transfer_to_device"]])
      down <- c(down, attr(f, "timing")[["transfer_to_host"]])
    }
    label <- if (v[["staging"]] == "1") "pageable copy" else
      sprintf("staged, %s", if (v[["team"]] == "1") "one team of threads per copy" else "fresh threads per buffer")
    cat(sprintf("%-6s %-44s upload %.3f s (best of %d; %.1f GB/s of R's doubles) | download %.3f s | wall %.3f s\n",
                prec, label, min(up), reps, n * 16 * 8 / min(up) / 1e9, min(down), min(wall)))
  }
}
Sys.unsetenv("GPUKMEANS_STAGE_TEAM")
options(gpukmeans.cuda_tuning = NULL)
