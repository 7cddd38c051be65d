# An internal switch of a large fit, its values taking turns fit after fit
# on one machine (issue 16's "rest"): bench_upload.R's 1e8 x 16 data, k =
# 256, 10 iterations; each line the median of `reps` fits by wall time, with
# the engine's stages (GPUKMEANS_STAGE_LOG) of that fit and its totss, and
# whether every fit of that value gave the first fit's labels.
#   GPU machine:  sh tools/gpu/run-r.sh tools/gpu/switch-turns.R VAR reps value...
# e.g. GPUKMEANS_STAGE_SUMS 3 0 1 4 (the staged upload's column sums: none,
# one chunk's chain a thread at a time, up to four), GPUKMEANS_LABELS_OUT 3
# 0 1 (the labels copied into the result, or written there in place).
source(file.path("tools", "gpu", "big_fit.R"))
args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 3L) stop("usage: switch-turns.R VAR reps value...")
var <- args[1]
reps <- as.integer(args[2])
values <- args[-(1:2)]
d <- big_data()
for (prec in c("single", "double")) {
  warm_up(d, prec)
  runs <- list()
  ref <- NULL  # the first fit's labels
  for (r in seq_len(reps)) for (v in values) {
    z <- big_fit(d, prec, setNames(v, var))
    if (is.null(ref)) ref <- z$cluster
    z$same <- identical(z$cluster, ref)
    z$cluster <- NULL
    z$value <- v
    runs[[length(runs) + 1L]] <- z
  }
  for (v in values) {
    m <- Filter(function(z) z$value == v, runs)
    walls <- vapply(m, `[[`, 0, "wall")
    z <- m[[order(walls)[(length(m) + 1L) %/% 2L]]]
    same <- all(vapply(m, `[[`, NA, "same"))
    cat(sprintf("%s %s=%s: %s (fits %.3f-%.3f) totss %.17g, labels as the first fit's: %s | %s\n", prec, var, v,
                fit_line(z), min(walls), max(walls), z$totss, same, z$stages))
  }
}
