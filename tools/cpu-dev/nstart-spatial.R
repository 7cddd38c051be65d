# nstart on the CPU engine at d = 2 (the points ordered in space,
# src/cpu_spatial.h, shared by the starts) and the distinct rows that
# stats' rule for nstart >= 2 draws from (gk_unique_rows): seconds, median
# of three calls, with the library first on .libPaths() given as the first
# argument (say an older build, to compare) and the threads as the second.
#   Rscript tools/cpu-dev/nstart-spatial.R [lib] [threads]
args <- commandArgs(TRUE)
if (length(args) >= 1L && nzchar(args[1])) .libPaths(c(args[1], .libPaths()))
threads <- if (length(args) >= 2L) as.integer(args[2]) else 1L
suppressPackageStartupMessages(library(gpukmeans))
options(gpukmeans.progress = FALSE, gpukmeans.threads = threads)
cat(sprintf("nstart-spatial | gpukmeans from %s | %d thread(s) | %d cores | %s\n",
            dirname(find.package("gpukmeans")), threads, parallel::detectCores(), format(Sys.time(), "%Y-%m-%d %H:%M")))
med3 <- function(f) stats::median(vapply(1:3, function(i) system.time(f())[["elapsed"]], 0))
set.seed(1)
x <- matrix(rnorm(2e6), ncol = 2)
u_threads <- if (length(formals(gpukmeans:::gk_unique_rows)) > 1L) list(threads) else list()  # (older builds: one thread)
t_u <- med3(function() do.call(gpukmeans:::gk_unique_rows, c(list(x), u_threads)))
cat(sprintf("gk_unique_rows, 1e6 x 2 distinct rows: %.3f s\n", t_u))
for (k in c(8L, 100L)) {
  ctr <- matrix(runif(2 * k, 0, 100), k)
  set.seed(k)
  b <- ctr[sample.int(k, 1e6, TRUE), ] + matrix(rnorm(2e6), ncol = 2)
  for (it in c(10L, 100L)) {
    fit <- NULL
    t <- med3(function() {
      set.seed(2)
      fit <<- suppressWarnings(gpu_kmeans(b, k, nstart = 10L, iter.max = it, backend = "cpu"))
    })
    cat(sprintf("1e6 x 2 blobs, k = %3d, nstart = 10, iter.max = %3d: %.3f s, tot.withinss %.6f\n", k, it, t,
                fit$tot.withinss))
  }
}
