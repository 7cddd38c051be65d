# CUDA engine, d <= 2: the rows ordered in space (src/cuda/ordered.cu) and
# the small-d assignment through warp boxes (src/cuda/detail/
# wbox_kernels.cuh).  Once a handle, the rows are sorted along a Z curve;
# each warp lists the centers its rows' box can need
# (src/cuda/detail/warp_box.cuh says why the scan's choice is always
# listed) and computes its points' distances to those only, with the scan's
# arithmetic, so fits are the plain scan's bit for bit in both precisions
# (and in double stats::kmeans's), labels put back in row order.  Ordered
# fits run plain iterations only: in single precision, where bounded
# iterations may round differently, the reference is the plain fit.  The internal
# switch GPUKMEANS_ORDER (read at each fit): 0 never, 1 at d <= 2 where the
# fit allows it; unset, at d = 2 from 2^16 rows with k <= 1024 in single
# precision and k <= 200 in double, where iter.max may repay the ordering:
# from 10 iterations with k >= 50, else from 30, five times as many in
# double above 2^21 rows (or on a handle already ordered: nstart).  The
# sums are carried from one iteration to the next (only the points that
# moved are added and taken away; GPUKMEANS_DELTA_SUMS=0 makes them afresh),
# and the update runs in the assignment kernel's last block
# (GPUKMEANS_ORDER_FUSED=0: in a kernel of its own).  On sm_90+ each
# iteration's kernel, and each within-SS pass, is launched as a
# programmatic dependent of the kernel before (GPUKMEANS_PDL=0, read at
# the upload: one after the other).
# The upload keeps the ordering's memory in its own allocation and leaves
# the columns' ranges there from its pass over x (GPUKMEANS_ORDER_ROOM=0: it
# does not, and the fit allocates it and finds the ranges itself).  The
# ordering sorts the rows; the ordered copy of x is made by the first
# iteration of the handle's first ordered fit, which reads x through the
# permutation (later fits on the handle, nstart, read the copy).  A fit
# that will order whatever it plans sorts the rows before it plans.  The raw
# fit's rows_ordered is 1 where the iterations ran on the ordered rows.
# Fits need n >= 2^18 (below, the persistent kernel runs).
local_edition(3)

fit_parts <- c("cluster", "centers", "withinss", "size", "iter", "totss")

ordered_raw <- function(x, centers, order, single = FALSE, iter.max = 15L, bounds = 1L, env = character()) {
  cuda_fit_raw(x, centers, iter.max, single, bounds, env = c(env, GPUKMEANS_ORDER = order))
}

# The ordered rows' fit (under env) against the rows as given, in one precision.
expect_ordered_exact <- function(x, centers, single = FALSE, iter.max = 15L, label = "", bounds = 1L,
                                 env = character()) {
  ref <- ordered_raw(x, centers, "0", single, iter.max, bounds)
  expect_identical(ref$rows_ordered, 0L, label = paste(label, "GPUKMEANS_ORDER=0 keeps the rows"))
  got <- ordered_raw(x, centers, "1", single, iter.max, bounds, env)
  expect_identical(got$rows_ordered, 1L, label = paste(label, "GPUKMEANS_ORDER=1 orders them"))
  for (comp in fit_parts)
    expect_identical(got[[comp]], ref[[comp]], label = paste(label, if (single) "single" else "double", comp))
}

test_that("cuda ordered rows: blobs at d = 1, 2 give the scan's fit and predictions, and stats' in double", {
  skip_if_no_gpu()
  set.seed(61)
  for (d in 1:2) {
    x <- make_blobs(270000, d, 40, sd = 1, spread = 50)
    c0 <- x[seq_len(60), , drop = FALSE]
    for (prec in c("single", "double")) for (tuning in list(c(0L, 0L, 0L, 1L), NULL)) {
      fits <- lapply(c("0", "1"), function(o) {
        withr::local_envvar(GPUKMEANS_ORDER = o)
        plain <- o == "0" && prec == "single"  # (see above)
        withr::local_options(gpukmeans.cuda_tuning = if (plain) c(0L, 0L, 0L, 1L) else tuning)
        fit <- suppressWarnings(gpu_kmeans(x, c0, iter.max = 20L, precision = prec, backend = "cuda"))
        list(fit = strip_gk(fit), pred = predict(fit, x[seq_len(50001), , drop = FALSE]))
      })
      lab <- paste("d", d, prec, if (is.null(tuning)) "default bounds" else "plain")
      expect_identical(fits[[2]]$fit, fits[[1]]$fit, label = paste(lab, "fit"))
      expect_identical(fits[[2]]$pred, fits[[1]]$pred, label = paste(lab, "predict"))
    }
    ref <- suppressWarnings(stats::kmeans(x, c0, iter.max = 20L, algorithm = "Lloyd"))
    got <- withr::with_envvar(c(GPUKMEANS_ORDER = "1"),
                              suppressWarnings(gpu_kmeans(x, c0, iter.max = 20L, backend = "cuda")))
    expect_identical(got$cluster, ref$cluster, label = paste("d", d, "stats' labels"))
    expect_identical(got$iter, ref$iter)
    expect_equal(got$centers, ref$centers, tolerance = 1e-13, label = paste("d", d, "stats' centers"))
    # converged and stopped early, nstart (the handle's ordered copy reused)
    for (prec in c("single", "double")) {
      fits <- lapply(c("0", "1"), function(o) {
        withr::local_envvar(GPUKMEANS_ORDER = o)
        if (o == "0" && prec == "single") withr::local_options(gpukmeans.cuda_tuning = c(0L, 0L, 0L, 1L))
        set.seed(62)
        list(strip_gk(suppressWarnings(gpu_kmeans(x, 12L, iter.max = 300L, nstart = 3L, precision = prec,
                                                  backend = "cuda"))),
             strip_gk(suppressWarnings(gpu_kmeans(x, c0, iter.max = 2L, precision = prec, backend = "cuda"))),
             # (one iteration a start: the first start's makes the ordered copy, the second reads it)
             strip_gk(suppressWarnings(gpu_kmeans(x, 12L, iter.max = 1L, nstart = 2L, precision = prec,
                                                  backend = "cuda"))))
      })
      expect_identical(fits[[2]], fits[[1]], label = paste("d", d, prec, "nstart 3, iter.max 2, one iteration a start"))
    }
  }
})

test_that("cuda ordered rows: exact ties, bisectors, duplicate and NaN centers, outliers, scales", {
  skip_if_no_gpu()
  set.seed(63)
  n <- 270000
  for (d in 1:2) {
    for (single in c(FALSE, TRUE)) {
      # (helper-gpu.R; in double, where the float box distances underflow or
      # overflow, every center is listed; single precision refuses data
      # varying by too little)
      cases <- small_d_cases(n, d, if (single) c(1e-6, 1e6) else c(1e-200, 1e-20, 1e20, 1e150))
      for (name in names(cases))
        expect_ordered_exact(cases[[name]]$x, cases[[name]]$centers, single = single,
                             iter.max = cases[[name]]$iter.max, label = paste(name, "d", d))
    }
  }
})

test_that("cuda ordered rows, double: rows far from the origin, spread below float's step", {
  # (the list's bound R comes from the points' and centers' float images,
  # which here all but coincide: warp_box.cuh's eps for both keeps every
  # needed center listed)
  skip_if_no_gpu()
  set.seed(71)
  n <- 270000
  for (d in 1:2) {
    x <- 1e6 + matrix(runif(n * d), ncol = d) * 1e-3
    centers <- x[sample.int(n, 60), , drop = FALSE]
    expect_ordered_exact(x, centers, iter.max = 8L, label = paste("offset 1e6, d", d))
  }
})

test_that("cuda ordered rows: by shape, and not where the fit reads rows in their order", {
  skip_if_no_gpu()
  set.seed(64)
  x <- make_blobs(270000, 2, 30, sd = 2, spread = 40)
  by_shape <- function(x, k, single, iter.max = 100L) {
    ordered_raw(x, x[seq_len(k), , drop = FALSE], NA, single, iter.max)$rows_ordered
  }
  # unset: d = 2 from 2^16 rows, k <= 1024 (single) or 200 (double), and
  # iter.max from 10 with k >= 50, else from 30
  expect_identical(by_shape(x, 100L, TRUE, iter.max = 9L), 0L)
  expect_identical(by_shape(x, 100L, TRUE, iter.max = 10L), 1L)
  expect_identical(by_shape(x, 50L, FALSE, iter.max = 10L), 1L)
  expect_identical(by_shape(x, 49L, TRUE, iter.max = 29L), 0L)
  expect_identical(by_shape(x, 49L, FALSE, iter.max = 30L), 1L)
  expect_identical(by_shape(x, 100L, TRUE), 1L)
  # (1024 centers' sums and values need more shared memory a block than a
  # 48 KB device has: the small path does not run there, helper-gpu.R)
  if (!smem_capped()) expect_identical(by_shape(x, 1024L, TRUE), 1L)
  expect_identical(by_shape(x, 1025L, TRUE), 0L)
  expect_identical(by_shape(x, 200L, FALSE), 1L)
  expect_identical(by_shape(x, 201L, FALSE), 0L)
  expect_identical(by_shape(x[, 1, drop = FALSE], 50L, TRUE), 0L)
  expect_identical(by_shape(cbind(x, x[, 1]), 50L, TRUE), 0L)
  # double precision above 2^21 rows: from 50 iterations
  big <- rbind(x, x, x, x, x, x, x, x)
  expect_identical(by_shape(big, 100L, FALSE, iter.max = 49L), 0L)
  expect_identical(by_shape(big, 100L, FALSE, iter.max = 50L), 1L)
  expect_identical(by_shape(big, 100L, TRUE, iter.max = 10L), 1L)
  # bounds forced from the second iteration: the rows as given (bounded
  # iterations read them in row order)
  expect_identical(ordered_raw(x, x[1:50, ], "1", FALSE, 5L, bounds = 2L)$rows_ordered, 0L)
  # the default bounds mode (where they pay): plain iterations on the
  # ordered rows, the same fit in double precision
  expect_ordered_exact(x, x[1:50, ], iter.max = 200L, label = "to convergence", bounds = 3L)
  # a weighted fit: the rows as given
  w <- runif(nrow(x), 0.5, 2)
  z <- withr::with_envvar(c(GPUKMEANS_ORDER = "1"),
                          gpukmeans:::gk_fit_cpp(x, list(x[1:20, ]), 5L, FALSE, "cuda", 0L, 0L, FALSE, NULL, Inf,
                                                 list(tuning = c(0L, 0L, 0L, 1L)), weights = w))
  expect_identical(z$rows_ordered, 0L)
  # a trace (every iteration's within-SS reads the labels in row order):
  # the rows as given, the same fit
  fits <- lapply(c("0", "1"), function(o) {
    withr::local_envvar(GPUKMEANS_ORDER = o)
    capture.output(f <- suppressWarnings(gpu_kmeans(x, x[1:20, ], iter.max = 4L, trace = TRUE, backend = "cuda")))
    strip_gk(f)
  })
  expect_identical(fits[[2]], fits[[1]])
})

test_that("cuda ordered rows: sums carried or afresh, the update fused or not, memory kept or not, dependent launches or not: the same fit", {
  skip_if_no_gpu()
  set.seed(65)
  x <- make_blobs(300000, 2, 60, sd = 1.5, spread = 30)
  c0 <- x[seq_len(80), ]
  for (single in c(FALSE, TRUE))
    for (iters in c(1L, 3L, 200L)) {
      label <- paste(if (single) "single" else "double", iters, "iterations:")
      expect_ordered_exact(x, c0, single, iters, label = paste(label, "sums carried"))
      expect_ordered_exact(x, c0, single, iters, label = paste(label, "sums afresh"),
                           env = c(GPUKMEANS_DELTA_SUMS = "0"))
      expect_ordered_exact(x, c0, single, iters, label = paste(label, "the update a kernel of its own"),
                           env = c(GPUKMEANS_ORDER_FUSED = "0"))
      expect_ordered_exact(x, c0, single, iters, label = paste(label, "the fit's own memory"),
                           env = c(GPUKMEANS_ORDER_ROOM = "0"))
      expect_ordered_exact(x, c0, single, iters, label = paste(label, "each kernel launched after the last"),
                           env = c(GPUKMEANS_PDL = "0"))
    }
  # the centers of empty clusters (NaN) and points that keep moving between
  # near-equal centers
  y <- rbind(x, matrix(c(1e4, 1e4), 1))
  cy <- rbind(c0[1:40, ], c(-1e4, -1e4), c0[41:79, ] + 1e-9)
  for (single in c(FALSE, TRUE)) {
    expect_ordered_exact(y, cy, single, 100L, label = paste("empty and near-equal centers", single))
    expect_ordered_exact(y, cy, single, 100L, label = paste("empty and near-equal centers, sums afresh", single),
                         env = c(GPUKMEANS_DELTA_SUMS = "0"))
  }
})

test_that("cuda ordered rows: crowded cells (a far outlier, every row one point), n not a multiple of a warp", {
  # The ordering's cells are 1/256 of each column's range a side: a single
  # far row puts every other row in one cell (one key), and rows all equal
  # leave the range empty (every key 0).  Boxes then hold rows from one
  # cell only, ties everywhere: the fit must still be the scan's.
  skip_if_no_gpu()
  set.seed(73)
  n <- 2^18 + 12345
  u <- matrix(runif(n * 2), ncol = 2)
  far <- rbind(u[-1, ], c(1e9, -1e9))
  c_far <- rbind(u[1:40, ], c(1e9, -1e9))
  same <- matrix(c(2.5, -7.25), n, 2, byrow = TRUE)
  c_same <- rbind(c(2.5, -7.25), c(3, -7), c(2, -7.5), c(2.5, -7.25) + 1e-6)
  for (single in c(FALSE, TRUE)) {
    prec <- if (single) "single" else "double"
    expect_ordered_exact(far, c_far, single, 12L, label = paste("far outlier", prec))
    expect_ordered_exact(same, c_same, single, 4L, label = paste("every row one point", prec))
    expect_ordered_exact(u, u[1:60, ], single, 12L, label = paste("uniform, odd n", prec))
  }
  # every row one point: every row takes the center on it, the others are
  # empty, and the second iteration changes nothing
  got <- ordered_raw(same, c_same, "1", FALSE, 4L)
  expect_identical(got$rows_ordered, 1L)
  expect_identical(tabulate(got$cluster, 4L), c(as.integer(n), 0L, 0L, 0L))
  expect_identical(got$iter, 2L)
})
