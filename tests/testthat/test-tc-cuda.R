# CUDA engine, single precision with d > 8: the assignment on packed,
# fragment-native tensor-core tiles (src/cuda/detail/tc_tiles.cuh) does the
# arithmetic of the unpacked kernel, so fits and predictions are identical
# bit for bit.  On a device of compute capability 9.0 (H100, H200) the packed
# tiles' products run through wgmma (src/cuda/detail/wgmma.cuh), elsewhere
# through mma.sync; both must give the unpacked kernel's fits.  The internal
# switches (read at each fit): GPUKMEANS_TC=0 keeps the unpacked kernel,
# GPUKMEANS_TC_WGMMA=0 the packed mma.sync one.  Partial tiles of points,
# coordinates and centers, several fits on one handle (nstart), empty
# clusters and predict.
local_edition(3)

# The fit, its predictions and its warnings ("did not converge", "empty
# cluster"), which the kernels must give alike too.  kernel: "unpacked",
# "mma.sync" (packed) or "default" (packed, wgmma where the device has it).
tc_fit <- function(x, centers, kernel, ...) {
  withr::local_envvar(GPUKMEANS_TC = if (kernel == "unpacked") "0" else NA,
                      GPUKMEANS_TC_WGMMA = if (kernel == "mma.sync") "0" else NA)
  warned <- character(0)
  fit <- withCallingHandlers(gpu_kmeans(x, centers, precision = "single", backend = "cuda", ...),
                             warning = function(w) {
                               warned <<- c(warned, conditionMessage(w))
                               invokeRestart("muffleWarning")
                             })
  list(fit = strip_gk(fit), pred = predict(fit, x[seq_len(min(nrow(x), 3001)), , drop = FALSE]), warned = warned)
}

expect_tc_identical <- function(x, centers, label, ...) {
  ref <- tc_fit(x, centers, "unpacked", ...)
  for (kernel in c("mma.sync", "default")) {
    got <- tc_fit(x, centers, kernel, ...)
    what <- paste(label, kernel)
    expect_identical(got$fit, ref$fit, label = paste(what, "fit"))
    expect_identical(got$pred, ref$pred, label = paste(what, "predict"))
    expect_identical(got$warned, ref$warned, label = paste(what, "warnings"))
  }
  invisible(got$fit)
}

test_that("cuda tc: packed tiles give the unpacked kernel's fit at several shapes", {
  skip_if_no_gpu()
  set.seed(11)
  # (n, d, k): partial point tiles (n not a multiple of 128), coordinates not
  # a multiple of 16, centers not a multiple of 128, several center tiles
  for (sh in list(c(5000, 9, 32), c(4099, 16, 100), c(20001, 17, 256), c(3001, 33, 300), c(2050, 130, 129),
                  c(1500, 300, 64))) {
    x <- make_blobs(sh[1], sh[2], max(2, sh[3] %/% 3), sd = 1.5, spread = 8)
    fit <- expect_tc_identical(x, x[seq_len(sh[3]), , drop = FALSE], paste(sh, collapse = "x"), iter.max = 25)
    expect_length(fit$cluster, sh[1])
    expect_true(all(fit$cluster >= 1 & fit$cluster <= sh[3]))
  }
})

test_that("cuda tc: nstart, empty clusters, duplicate points and data far from the origin", {
  skip_if_no_gpu()
  set.seed(12)
  x <- make_blobs(6000, 24, 20, sd = 1, spread = 6)
  set.seed(5)
  a <- tc_fit(x, 64, "unpacked", nstart = 3, iter.max = 20)
  for (kernel in c("mma.sync", "default")) {
    set.seed(5)
    expect_identical(tc_fit(x, 64, kernel, nstart = 3, iter.max = 20), a, label = kernel)  # fits, predictions, warnings
  }
  # centers far from every point: their clusters are empty at once
  c0 <- rbind(x[1:40, ], matrix(1e4 + seq_len(24 * 24), ncol = 24))
  fit <- expect_tc_identical(x, c0, "empty clusters", iter.max = 15)
  expect_true(any(fit$size == 0) || anyNA(fit$centers))
  # every point twice (exact ties between duplicate centers)
  g <- as.matrix(expand.grid(0:3, 0:3, 0:3)) + 0
  g <- cbind(g, g, g, g)[rep(seq_len(64), 40), ]
  expect_tc_identical(g, g[seq(1, 64, by = 2), ], "lattice", iter.max = 10)
  expect_tc_identical(x + 1e5, x[1:50, ] + 1e5, "offset", iter.max = 20)
})
