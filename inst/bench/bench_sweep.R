# Choosing-k benchmark (not a test): the exact silhouette (gpu_silhouette)
# at n = 1e5 and 1e6 (d = 16), the sampled and simplified ones at n = 1e7,
# and gpu_kmeans_sweep(k = 2:20) on simulate_blobs(1e6, 16, 10); first a
# check that the CUDA widths are the CPU engine's bit for bit.
#   Rscript inst/bench/bench_sweep.R OUTDIR          (on the GPU machine)
#   Rscript inst/bench/bench_sweep.R OUTDIR cpu      (the CPU engine, small sizes)
# Goals (the issue): exact average silhouette of n = 1e5, d = 16 in <= 1 s on
# an H200, n = 1e6 in <= 100 s.
suppressPackageStartupMessages(library(gpukmeans))
options(gpukmeans.progress = FALSE)
args <- commandArgs(trailingOnly = TRUE)
outdir <- if (length(args)) args[1L] else "."
cpu <- length(args) >= 2L && args[2L] == "cpu"
backend <- if (cpu) "cpu" else "cuda"
info <- gpukmeans_info()
if (!cpu && !nrow(info$devices)) stop("no CUDA device: ", info$message)
where <- if (cpu) sprintf("CPU, %d threads", getOption("gpukmeans.threads", parallel::detectCores())) else
  info$devices$name[1L]
today <- format(Sys.Date())
cat("gpukmeans choosing-k benchmark |", where, "|", today, "\n")

rows <- list()
record <- function(what, n, d, k, seconds, value, method) {
  rows[[length(rows) + 1L]] <<- data.frame(date = today, device = where, what = what, n = n, d = d, k = k,
                                           method = method, seconds = seconds, value = value)
  cat(sprintf("%-34s n = %8.0f d = %3d k = %3d  %9.3f s  %s = %.6f\n", what, n, d, k, seconds,
              if (what == "sweep") "best silhouette" else "average width", value))
}
fit_for <- function(x, k) {
  set.seed(1)
  suppressWarnings(gpu_kmeans(x, k, init = "kmeans++", iter.max = 30, backend = backend))
}

# 1. The engines agree (GPU run only): exact, sampled and simplified widths.
if (!cpu) {
  x <- simulate_blobs(5000, 16, 10, seed = 2)
  fit <- fit_for(x, 10)
  same <- TRUE
  for (m in c("exact", "simplified")) {
    a <- gpu_silhouette(fit, x, method = m, backend = "cpu")
    b <- gpu_silhouette(fit, x, method = m, backend = "cuda")
    same <- same && identical(unclass(a)[, 1:3], unclass(b)[, 1:3])
  }
  if (requireNamespace("cluster", quietly = TRUE)) {
    ref <- cluster::silhouette(fit$cluster, dist(x))
    b <- gpu_silhouette(fit, x, backend = "cuda")
    cat(sprintf("CUDA vs cluster::silhouette: max |difference| %.3g\n",
                max(abs(b[, "sil_width"] - ref[, "sil_width"]))))
  }
  cat("CUDA widths identical to the CPU engine's:", same, "\n")
  if (!same) stop("the CUDA widths differ from the CPU engine's")
}

# 2. The exact silhouette alone (one fit, k = 10), after a warm-up.
sizes <- if (cpu) c(5e3, 1e4, 2e4) else c(1e5, 1e6)
invisible(gpu_silhouette(fit_for(simulate_blobs(2000, 16, 10, seed = 3), 10),
                         simulate_blobs(2000, 16, 10, seed = 3), backend = backend))
for (n in sizes) {
  x <- simulate_blobs(n, 16, 10, seed = 1)
  fit <- fit_for(x, 10)
  s <- gpu_silhouette(fit, x, method = "exact", backend = backend)
  record("exact silhouette", n, 16, 10, attr(s, "timing")[["compute"]], mean(s[, "sil_width"]), "exact")
  rm(s); invisible(gc())
}

# 3. Sampled and simplified at a size where the exact one is out of reach.
n_big <- if (cpu) 1e6 else 1e7
x <- simulate_blobs(n_big, 16, 10, seed = 1)
fit <- fit_for(x, 10)
s <- gpu_silhouette(fit, x, method = "simplified", backend = backend)
record("simplified silhouette", n_big, 16, 10, attr(s, "timing")[["compute"]], mean(s[, "sil_width"]),
       "simplified")
rm(s); invisible(gc())
if (!cpu) {
  set.seed(4)
  s <- gpu_silhouette(fit, x, method = "sampled", sample_size = 10000, backend = backend)
  record("sampled silhouette (10000 rows)", n_big, 16, 10, attr(s, "timing")[["compute"]],
         mean(s[, "sil_width"]), "sampled")
  rm(s)
}
rm(x, fit); invisible(gc())

# 4. The sweep over k = 2:20 (nstart = 1, k-means++), silhouette "auto".
n_sweep <- if (cpu) 2e4 else 1e6
x <- simulate_blobs(n_sweep, 16, 10, seed = 1)
set.seed(5)
t0 <- Sys.time()
sw <- suppressWarnings(gpu_kmeans_sweep(x, k = 2:20, backend = backend))
total <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
print(sw)
record("sweep", n_sweep, 16, 20, total, max(sw$table$silhouette, na.rm = TRUE),
       sw$table$silhouette_method[1L])
tm <- cbind(sw$timing, sw$table[, c("silhouette", "silhouette_method")])
write.csv(tm, file.path(outdir, sprintf("sweep-per-k-%s-%s.csv", backend, today)), row.names = FALSE)

res <- do.call(rbind, rows)
write.csv(res, file.path(outdir, sprintf("sweep-%s-%s.csv", backend, today)), row.names = FALSE)
