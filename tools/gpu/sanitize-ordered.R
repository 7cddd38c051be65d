# The rows ordered in space under compute-sanitizer (issue 15: the warp
# boxes' kernel, its update in the last block, the within-SS passes, all
# launched as programmatic dependents on sm_90+, or not): small data,
# GPUKMEANS_ORDER=1, both precisions, d = 1 and 2, 10 iterations and to
# convergence, each fit checked against the rows as given (racecheck,
# GK_SANITIZE_QUICK: d = 2, single, 4 iterations).  Run as
#   GK_SANITIZE_SCRIPT=tools/gpu/sanitize-ordered.R sh tools/gpu/sanitize.sh OUTDIR memcheck racecheck
library(gpukmeans)
options(gpukmeans.cuda_tuning = c(0L, 0L, 0L, 1L), gpukmeans.progress = FALSE)
quick <- nzchar(Sys.getenv("GK_SANITIZE_QUICK"))
set.seed(5)
n <- 262144L  # (the least n whose fits run graph batches, which the ordered rows need)
same <- TRUE
for (d in if (quick) 2L else 1:2) {
  cen <- matrix(runif(20 * d, 0, 50), 20, d)
  x <- cen[sample.int(20, n, replace = TRUE), , drop = FALSE] + rnorm(n * d)
  c0 <- x[1:25, , drop = FALSE]
  for (prec in if (quick) "single" else c("single", "double")) for (it in if (quick) 4L else c(10L, 200L)) {
    fits <- lapply(list(c(GPUKMEANS_ORDER = "0"), c(GPUKMEANS_ORDER = "1"),
                        c(GPUKMEANS_ORDER = "1", GPUKMEANS_PDL = "0")), function(env) {
      withr::with_envvar(env, suppressWarnings(gpu_kmeans(x, c0, iter.max = it, precision = prec,
                                                          backend = "cuda")))[c("cluster", "centers", "withinss",
                                                                                "iter")]
    })
    ok <- identical(fits[[2]], fits[[1]]) && identical(fits[[3]], fits[[1]])
    same <- same && ok
    # (the engine's own result says whether the iterations ran on the ordered rows)
    raw <- withr::with_envvar(c(GPUKMEANS_ORDER = "1"),
                              gpukmeans:::gk_fit_cpp(x, list(c0), it, prec == "single", "cuda", 0L, 0L, FALSE, NULL,
                                                     Inf, list(tuning = c(0L, 0L, 0L, 1L))))
    cat(sprintf("d %d %s iter.max %d: same fits %s, rows ordered %d\n", d, prec, it, ok, raw$rows_ordered))
  }
}
cat("sanitize-ordered.R: done, all the same:", same, "\n")
