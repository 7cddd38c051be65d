# Spherical k-means benchmark (not a test): gpu_kmeans(distance = "cosine")
# on embeddings-like data (a common direction, topics around it, noise,
# lengths unrelated to the topic).
#   Rscript inst/bench/bench_cosine.R cpu > inst/bench/results/cosine-cpu-<date>-<machine>.txt
#       the CPU engine on 1e5 x 384, k = 64: time to convergence on 1 and all
#       threads, without the distance bounds, single precision, the
#       device-agnostic path over step() (the CUDA engine's) run on the CPU
#       engine, and the matrix-product recipe in R (normalise, max.col(x %*% t(centers)), normalised sums) from the
#       same centers, checked to give the same fit;
#   Rscript inst/bench/bench_cosine.R gpu OUTDIR [peer.txt]     (a GPU machine:
#       sh tools/gpu-session.sh OUT cosine runs the PyTorch peer first)
#       a check that the CUDA fit equals the CPU engine's (2e4 x 384, k = 64),
#       then the issue's problem, 1e6 x 384 with k = 1024, 20 iterations from
#       the same centers in double and single precision, beside the PyTorch
#       recipe of inst/bench/peer_torch.py --cosine (normalised x, argmax of
#       x c^T, index_add_, normalised sums) from peer.txt; writes
#       OUTDIR/cosine-gpu-<date>.csv.
suppressPackageStartupMessages(library(gpukmeans))
options(gpukmeans.progress = FALSE)
args <- commandArgs(trailingOnly = TRUE)
mode <- if (length(args)) args[1L] else "cpu"
stopifnot(mode %in% c("cpu", "gpu"))
today <- format(Sys.Date())

# n rows in d dimensions around k topics (unit directions) with a common
# direction, cosine to the own topic about 0.6, lengths uniform in [0.5, 2].
embeddings <- function(n, d, k, seed = 1) {
  set.seed(seed)
  unit <- function(m) m / sqrt(rowSums(m^2))
  topics <- unit(matrix(rnorm(k * d), k))
  common <- unit(matrix(rnorm(d), 1))[1, ]
  x <- matrix(rnorm(n * d, sd = 0.06), n)
  x <- x + topics[sample.int(k, n, replace = TRUE), , drop = FALSE]
  x <- x + rep(0.3 * common, each = n)
  x * runif(n, 0.5, 2)
}

# The recipe in R: assign by the argmax of the dot products of unit rows,
# centers the normalised sums; from unit centers C until no label changes.
recipe <- function(xn, C, iter.max) {
  cl <- integer(nrow(xn))
  for (it in seq_len(iter.max)) {
    new <- max.col(xn %*% t(C), ties.method = "first")
    if (identical(new, cl)) return(list(cluster = cl, iter = it, centers = C))
    cl <- new
    s <- rowsum(xn, cl, reorder = TRUE)
    C[as.integer(rownames(s)), ] <- s / sqrt(rowSums(s^2))
  }
  list(cluster = cl, iter = iter.max + 1L, centers = C)
}

secs <- function(expr) system.time(expr)[["elapsed"]]

if (mode == "cpu") {
  cores <- parallel::detectCores()
  cat("gpukmeans spherical k-means benchmark (CPU engine) |", today, "\n")
  cat("machine:", sub("model name\\s*:\\s*", "", grep("model name", readLines("/proc/cpuinfo"), value = TRUE)[1]),
      "|", cores, "cores (shared with other jobs: timings are noisy) |", R.version.string, "\n")
  cat("load average at start:", readLines("/proc/loadavg"), "\n")
  cat("BLAS:", extSoftVersion()[["BLAS"]], "\n\n")
  n <- 1e5; d <- 384; k <- 64
  x <- embeddings(n, d, k)
  set.seed(2)
  c0 <- x[sample.int(n, k), ]
  xn <- gpukmeans:::cosine_rows(x)
  cat(sprintf("problem: %g x %d, k = %d, from %d random rows (the same centers for every run)\n\n", n, d, k, k))
  cat(sprintf("%-44s %7s %5s %9s %9s  %s\n", "run", "threads", "iter", "total_s", "ms/iter", "same fit"))
  ref <- NULL
  line <- function(what, th, iter, total, ms, same) {
    cat(sprintf("%-44s %7s %5d %9.2f %9.1f  %s\n", what, th, iter, total, ms, same))
  }
  for (th in unique(c(1L, cores))) {
    options(gpukmeans.threads = th)
    t <- secs(f <- gpu_kmeans(x, c0, distance = "cosine", backend = "cpu"))
    if (is.null(ref)) ref <- f
    same <- identical(f$cluster, ref$cluster) && identical(f$iter, ref$iter)
    line("gpukmeans cosine, double (own path, bounds)", th, f$iter, t,
         1000 * attr(f, "timing")[["compute"]] / f$iter, if (same) "yes" else "NO")
  }
  Sys.setenv(GPUKMEANS_CPU_BOUNDS = "off")  # internal switch (src/cpu_bounds.h): plain Lloyd
  t <- secs(f <- gpu_kmeans(x, c0, distance = "cosine", backend = "cpu"))
  Sys.unsetenv("GPUKMEANS_CPU_BOUNDS")
  line("gpukmeans cosine, double, bounds off", cores, f$iter, t, 1000 * attr(f, "timing")[["compute"]] / f$iter,
       if (identical(f$cluster, ref$cluster) && identical(f$iter, ref$iter)) "yes" else "NO")
  t <- secs(s <- gpu_kmeans(x, c0, distance = "cosine", backend = "cpu", precision = "single"))
  line("gpukmeans cosine, single", cores, s$iter, t, 1000 * attr(s, "timing")[["compute"]] / s$iter,
       sprintf("labels %.4f%% equal", 100 * mean(s$cluster == ref$cluster)))
  # the device-agnostic path (the CUDA engine's), 5 iterations
  c0n <- gpukmeans:::cosine_rows(c0)
  t <- secs(p <- gpukmeans:::gk_spherical_parts_cpp(xn, c0n, 5L, 1L, FALSE, "cpu", cores, 0L))
  line("over step() (the CUDA engine's path), 5 it.", cores, 5L, t, 1000 * t / 5, "")
  # the Euclidean fit on the unit rows, for scale
  t <- secs(e <- suppressWarnings(gpu_kmeans(xn, c0n, backend = "cpu", iter.max = ref$iter)))
  line("gpukmeans euclidean on the unit rows", cores, e$iter, t, 1000 * attr(e, "timing")[["compute"]] / e$iter,
       if (identical(e$cluster, ref$cluster)) "yes (same labels)" else "(other labels)")
  # the matrix-product recipe in R, to convergence
  t <- secs(r <- recipe(xn, c0n, 200L))
  same <- identical(r$cluster, ref$cluster) && identical(r$iter, ref$iter)
  line("R recipe: max.col(xn %*% t(C)) (BLAS)", "BLAS", r$iter, t, 1000 * t / r$iter,
       if (same) sprintf("yes (centers to %.1e)", max(abs(r$centers - unname(ref$centers)))) else "NO")
  cat(sprintf("\ntot.withinss (sum of 1 - cos) %.6f, totss %.6f, between/total %.4f\n",
              ref$tot.withinss, ref$totss, ref$betweenss / ref$totss))
  cat("ms/iter: the engine's compute time over the iterations (gpukmeans), wall time otherwise;\n",
      "total_s: the whole call from R (unit rows, totss, all iterations).\n", sep = "")
} else {
  outdir <- if (length(args) >= 2L) args[2L] else "."
  peer <- if (length(args) >= 3L) args[3L] else ""
  info <- gpukmeans_info()
  if (!nrow(info$devices)) stop("no CUDA device: ", info$message)
  card <- info$devices$name[1L]
  cat("gpukmeans spherical k-means benchmark |", card, "|", today, "\n\n")
  # 1. The CUDA fit is the CPU engine's (double: the same labels; single: nearly).
  x <- embeddings(2e4, 384, 64, seed = 3)
  set.seed(4)
  c0 <- x[sample.int(nrow(x), 64), ]
  a <- gpu_kmeans(x, c0, distance = "cosine", backend = "cpu")
  b <- gpu_kmeans(x, c0, distance = "cosine", backend = "cuda")
  s <- gpu_kmeans(x, c0, distance = "cosine", backend = "cuda", precision = "single")
  cat(sprintf("2e4 x 384, k = 64: CUDA double vs CPU: labels identical %s, iter %d / %d, max |center diff| %.2e\n",
              identical(a$cluster, b$cluster), b$iter, a$iter, max(abs(a$centers - b$centers), na.rm = TRUE)))
  cat(sprintf("                   CUDA single vs CPU double: %.4f%% of labels equal\n\n",
              100 * mean(s$cluster == a$cluster)))
  # 2. The issue's problem.
  n <- 1e6; d <- 384; k <- 1024; iters <- 20L
  t <- secs(x <- embeddings(n, d, k))
  cat(sprintf("1e6 x 384 data made in %.1f s\n", t))
  set.seed(5)
  c0 <- x[sample.int(n, k), ]
  rows <- list()
  for (precision in c("single", "double")) {
    t <- secs(f <- suppressWarnings(gpu_kmeans(x, c0, iter.max = iters, distance = "cosine", backend = "cuda",
                                                precision = precision)))
    tm <- attr(f, "timing")
    it <- min(f$iter, iters)
    rows[[length(rows) + 1L]] <- data.frame(date = today, card = card, n = n, d = d, k = k, engine = "gpukmeans-cuda",
                                            precision = precision, ms_per_iter = 1000 * tm[["compute"]] / it,
                                            transfer_to_device_s = tm[["transfer_to_device"]], total_s = t,
                                            iterations = it)
  }
  if (nzchar(peer) && file.exists(peer)) {
    for (l in grep("^torch-cosine ", readLines(peer), value = TRUE)) {
      f <- strsplit(l, " ")[[1]]
      v <- function(key) as.numeric(sub(".*=", "", f[startsWith(f, paste0(key, "="))]))
      if (v("n") != n || v("k") != k) next
      rows[[length(rows) + 1L]] <- data.frame(date = today, card = card, n = n, d = d, k = k,
                                              engine = paste0("torch-", sub("mode=", "", f[2L])),
                                              precision = if (grepl("fp64", f[2L])) "double" else "single",
                                              ms_per_iter = as.numeric(f[length(f)]), transfer_to_device_s = NA,
                                              total_s = NA, iterations = NA)
    }
  }
  res <- do.call(rbind, rows)
  print(res[, c("engine", "precision", "ms_per_iter", "transfer_to_device_s", "total_s", "iterations")], row.names = FALSE)
  write.csv(res, file.path(outdir, sprintf("cosine-gpu-%s.csv", today)), row.names = FALSE)
  cat("\nms_per_iter: gpukmeans' compute phase (the steps, the centers' round trips between them) over the\n",
      "iterations run; torch: CUDA events around one iteration (median), data already on the device.\n", sep = "")
}
