# Initialisation benchmark (not a test): time of init = "random", "kmeans++"
# and "kmeans||" on problems B, D and E beside the time of 10 Lloyd
# iterations, and the tot.withinss each reaches after those iterations.
#   Rscript inst/bench/bench_init.R OUTDIR      (on the GPU machine)
suppressPackageStartupMessages(library(gpukmeans))
options(gpukmeans.progress = FALSE)
args <- commandArgs(trailingOnly = TRUE)
outdir <- if (length(args)) args[1L] else "."
info <- gpukmeans_info()
if (!nrow(info$devices)) stop("no CUDA device: ", info$message)
card <- info$devices$name[1L]
today <- format(Sys.Date())
cat("gpukmeans init benchmark |", card, "|", today, "\n")
blobs <- function(n, d, k, seed = 1L) {
  set.seed(seed)
  centers <- matrix(runif(k * d, 0, 100), k, d)
  x <- centers[sample.int(k, n, replace = TRUE), , drop = FALSE]
  x + rnorm(length(x))
}
problems <- data.frame(id = c("B", "D", "E"), n = c(1e6, 1e7, 1e6), d = c(2, 16, 128),
                       k = c(100, 256, 4096))
rows <- list()
for (i in seq_len(nrow(problems))) {
  p <- problems[i, ]
  x <- blobs(p$n, p$d, p$k)
  for (prec in c("single", "double")) for (init in c("random", "kmeans++", "kmeans||")) {
    set.seed(3)
    invisible(suppressWarnings(gpu_kmeans(x[1:min(nrow(x), 5e4), ], min(p$k, 100), iter.max = 1L,
                                          init = init, precision = prec, backend = "cuda")))  # warm-up
    set.seed(7)
    t0 <- Sys.time()
    fit <- suppressWarnings(gpu_kmeans(x, p$k, iter.max = 10L, init = init, precision = prec,
                                       backend = "cuda"))
    total <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
    tm <- attr(fit, "timing")
    rows[[length(rows) + 1L]] <- data.frame(date = today, card = card, problem = p$id, n = p$n,
      d = p$d, k = p$k, precision = prec, init = init, init_ms = 1000 * tm[["init"]],
      lloyd_ms = 1000 * tm[["compute"]], iterations = min(fit$iter, 10L),
      tot_withinss = fit$tot.withinss, total_s = total)
    r <- rows[[length(rows)]]
    cat(sprintf("%s %-6s %-9s init %9.2f ms | 10 Lloyd iterations %9.2f ms | tot.withinss %.6g\n",
                p$id, prec, init, r$init_ms, r$lloyd_ms, r$tot_withinss))
  }
  rm(x); invisible(gc())
}
res <- do.call(rbind, rows)
write.csv(res, file.path(outdir, sprintf("gpu-init-%s.csv", today)), row.names = FALSE)
