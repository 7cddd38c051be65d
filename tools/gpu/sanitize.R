# A small run of every CUDA path, for compute-sanitizer on the GPU machine
# (tools/gpu/sanitize.sh): plain, bounded and step-by-step Lloyd in both
# precisions, the packed tensor-core tiles and the double filters, the
# carried sums, k-means++
# and k-means||, predict, streamed x, rows in the order of their clusters,
# the error paths, and several engines on one GPU (tools/gpu/sanitize-multi.R).
suppressPackageStartupMessages(library(gpukmeans))
options(gpukmeans.progress = FALSE)
fit <- function(x, c0, iter, single, bounds) {
  gpukmeans:::gk_fit_cpp(x, list(c0), iter, single, "cuda", 0L, 0L, FALSE, NULL, Inf, list(tuning = c(0L, 0L, 0L, bounds)))
}
# GK_SANITIZE_QUICK=true: smaller data and no sweep (racecheck is ~1000x slower)
quick <- identical(Sys.getenv("GK_SANITIZE_QUICK"), "true")
set.seed(1)
x2 <- simulate_blobs(if (quick) 4001 else 20011, 2, 8, seed = 1)
x16 <- simulate_blobs(if (quick) 1201 else 6007, 16, 20, seed = 2)
x130 <- simulate_blobs(if (quick) 301 else 1003, 130, 5, seed = 3)
for (x in list(x2, x16, x130)) {
  for (single in c(FALSE, TRUE)) {
    a <- fit(x, x[1:12, ], 40L, single, 1L)
    b <- fit(x, x[1:12, ], 40L, single, 2L)
    if (!single) stopifnot(identical(a$cluster, b$cluster), identical(a$centers, b$centers))
  }
  p <- gpukmeans:::gk_fit_parts_cpp(x, x[1:12, ], 20L, 3L, FALSE, "cuda", 1L, 0L)
  for (init in c("kmeans++", "kmeans||")) {
    set.seed(4); f <- gpu_kmeans(x, 10, init = init, iter.max = 20, backend = "cuda")
    set.seed(4); f <- gpu_kmeans(x, 10, init = init, iter.max = 20, backend = "cuda", precision = "single")
  }
  invisible(predict(f, x[1:100, ]))
}
# the packed tensor-core tiles (single, d > 8, k >= 32) and the certified
# filter (double, k >= 128): partial tiles of points, coordinates and centers
for (x in list(x16, x130)) {
  for (k in c(40L, 130L)) {
    for (single in c(FALSE, TRUE)) invisible(fit(x, x[seq_len(k), ], 15L, single, 1L))
    f <- gpu_kmeans(x, x[seq_len(k), ], iter.max = 10, precision = "single", backend = "cuda")
    invisible(predict(f, x[seq_len(min(333, nrow(x))), ]))
  }
}
# the double filter's ways with the points its bound leaves: the pair, the
# candidate pass (by shape from k d = 16384; forced here), both, neither
# (and the tile's update without its tree), the settle pass (without both)
# or every center's exact distance; and a center outside the float image's
# box
for (sc in list(c("1", "0", "1", "1"), c("0", "1", "1", "1"), c("1", "1", "1", "0"), c("0", "0", "0", "0"),
                c("0", "0", "1", "1")))
  withr::with_envvar(c(GPUKMEANS_DFILTER = "1", GPUKMEANS_DF_PAIR = sc[1], GPUKMEANS_DF_CAND = sc[2],
                       GPUKMEANS_DF_TOP2 = sc[3], GPUKMEANS_DF_SETTLE = sc[4]), {
    for (x in list(x16, x130)) invisible(fit(x, x[seq_len(130), ], 10L, FALSE, 1L))
    invisible(fit(x16, rbind(x16[1:129, ], 1e12), 3L, FALSE, 1L))
    # (the settle pass's lists for 600 centers: blocks of 1024 threads)
    if (sc[4] == "1") invisible(fit(x16, x16[seq_len(600), ], 3L, FALSE, 1L))
  })
# the small-d filter (double, d <= 8; bounds from the second iteration: the
# graph batches at any n, the first iteration through the filter), with a
# center outside the float image's box, and predict through it
withr::with_envvar(c(GPUKMEANS_DFILTER = "1"), {
  invisible(fit(x2, x2[1:100, ], 5L, FALSE, 2L))
  invisible(fit(x2, rbind(x2[1:50, ], 1e12), 3L, FALSE, 2L))
  invisible(predict(gpu_kmeans(x2, x2[1:40, ], iter.max = 5, backend = "cuda"), x2))
})
# the small-d kernel on the grid of cells (d <= 3; forced from k = 2, and
# bounds from the second iteration: graph batches at any n), with a center
# far outside (the lists of most cells too long: their points scan), and
# predict through it
x3 <- simulate_blobs(if (quick) 3001 else 12007, 3, 8, seed = 9)
withr::with_envvar(c(GPUKMEANS_GRID = "1"), {
  for (x in list(x2[, 1, drop = FALSE], x2, x3)) for (single in c(FALSE, TRUE)) {
    invisible(fit(x, x[1:60, , drop = FALSE], 5L, single, 2L))
    invisible(fit(x, rbind(x[1:40, , drop = FALSE], 1e6), 3L, single, 2L))
  }
  invisible(predict(gpu_kmeans(x3, x3[1:40, ], iter.max = 5, backend = "cuda"), x3))
})
# spherical k-means, the quality pass (silhouette) and a sweep of k
xs <- simulate_blobs(3001, 24, 6, seed = 5)
for (prec in c("double", "single")) {
  set.seed(5); invisible(gpu_kmeans(xs, 6, distance = "cosine", precision = prec, backend = "cuda", iter.max = 30))
  invisible(gpu_silhouette(fit(x16, x16[1:12, ], 20L, prec == "single", 1L)$cluster, x16, backend = "cuda"))
  invisible(gpu_silhouette(fit(x16, x16[1:12, ], 20L, prec == "single", 1L)$cluster, x16, method = "simplified", backend = "cuda"))
}
if (!quick) { set.seed(6); invisible(gpu_kmeans_sweep(x16, 2:5, nstart = 2, backend = "cuda")) }
# observation weights: whole and fractional, Lloyd and the initialisations
w <- rep_len(c(0, 1, 3), nrow(x16))
for (prec in c("double", "single")) {
  for (init in c("random", "kmeans++", "kmeans||")) {
    set.seed(7); invisible(gpu_kmeans(x16, 6, weights = w, init = init, precision = prec, backend = "cuda", iter.max = 20))
  }
  set.seed(7); invisible(gpu_kmeans(x16, 6, weights = runif(nrow(x16)), precision = prec, backend = "cuda", iter.max = 20))
}
# x streamed from host memory in chunks (src/cuda/streamed.cu), each copy
# mode: Lloyd step by step, the within-SS passes, predict, the k-means||
# rounds and the k-means++ steps chunk by chunk
for (copy in c("auto", "staged", "registered")) {
  withr::with_options(list(gpukmeans.stream = TRUE, gpukmeans.stream_rows = 997, gpukmeans.stream_copy = copy), {
    for (x in list(x2, x16)) {
      for (prec in c("double", "single")) {
        set.seed(8); f <- gpu_kmeans(x, 6, iter.max = 15, precision = prec, backend = "cuda")
        invisible(predict(f, x[seq_len(min(1500, nrow(x))), ]))
        set.seed(8); invisible(gpu_kmeans(x, 6, init = "kmeans||", iter.max = 5, precision = prec, backend = "cuda"))
        set.seed(8); invisible(gpu_kmeans(x, 6, init = "kmeans++", iter.max = 5, precision = prec, backend = "cuda"))
      }
    }
  })
}
# the carried sums (d > 8): the moved points' list, the sums of several
# coordinate groups (x130, k = 130) and by global atomics (k = 5000), in
# and out of forced bounds, against sums made afresh
u16 <- matrix(runif((if (quick) 6000 else 20000) * 16), ncol = 16)
for (single in c(FALSE, TRUE)) {
  for (case in list(list(x16, 40L, 2L), list(x130, 130L, 1L), list(u16, 150L, 2L), list(u16, 5000L, 1L))) {
    x <- case[[1]]
    c0 <- x[seq_len(min(case[[2]], nrow(x))), ]
    a <- fit(x, c0, 25L, single, case[[3]])
    b <- withr::with_envvar(c(GPUKMEANS_DELTA_SUMS = "0"), fit(x, c0, 25L, single, case[[3]]))
    stopifnot(a$sums_share > 0, identical(a$cluster, b$cluster), identical(a$centers, b$centers))
  }
}
out <- capture.output(gpu_kmeans(x2, x2[1:4, ], iter.max = 5, backend = "cuda", trace = TRUE))
e <- tryCatch(gpu_kmeans(x2 * 1e200, 3, backend = "cuda"), error = identity)
stopifnot(inherits(e, "gpukmeans_data_error"))
# rows in the order of their clusters: whole warps add their sums as one
# (detail/warp_sums.cuh) in the small-d kernel and the grid, the tiled sums
# (carried and afresh), the within-SS passes and the weighted kernels
for (x in list(x2, x16)) {
  xo <- x[order(fit(x, x[1:8, ], 30L, FALSE, 1L)$cluster), ]
  c0 <- xo[round(seq(1, nrow(xo), length.out = 8)), ]
  for (single in c(FALSE, TRUE)) {
    invisible(fit(xo, c0, 10L, single, 1L))
    invisible(withr::with_envvar(c(GPUKMEANS_GRID = "1", GPUKMEANS_DELTA_SUMS = "0"), fit(xo, c0, 10L, single, 1L)))
    invisible(gpu_kmeans(xo, c0, weights = rep_len(c(1, 2.5), nrow(xo)), iter.max = 10, backend = "cuda",
                         precision = if (single) "single" else "double"))
  }
}
# several engines on one GPU (their joint iterations)
source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1])),
                 "sanitize-multi.R"))
cat("sanitize.R: done\n")
