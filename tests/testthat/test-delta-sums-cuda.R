# CUDA engine: cluster sums carried from one iteration to the next.  The
# sums are exact 128-bit fixed-point integers, so instead of adding every
# point afresh each iteration, the Lloyd loop on one device (tiled path,
# d > 8) adds only the points that moved: to their new cluster, and taken
# from their old one (k_accumulate_moves, against a copy of the labels the
# sums hold).  Integer sums in any order are the same integers, so fits are
# bit for bit those of sums made afresh.  The internal switch
# GPUKMEANS_DELTA_SUMS=0 (read at each fit) makes them afresh; the internal
# list's sums_share is the share of points the carrying iterations added
# (the movers, or every point where more than 1/8 (single) or 1/4 (double)
# had moved and the iteration summed afresh, as the first always does; -1:
# none carried).  The fused small-d kernels make their sums afresh.  A fit
# that carried its sums also keeps each point's within-SS term in the moves'
# buffer, and the second within-SS pass reads those instead of x: the
# withinss compared below (one and several engines, shared and global
# counters) check that path against the one that computes them again.
local_edition(3)

delta_parts <- c("cluster", "centers", "withinss", "size", "iter", "totss")

delta_raw <- function(x, centers, delta, single = FALSE, iter.max = 15L, bounds = 1L, device = 0L) {
  cuda_fit_raw(x, centers, iter.max, single, bounds, env = c(GPUKMEANS_DELTA_SUMS = delta), device = device)
}

# The carried sums' fit against sums made afresh, in one precision; returns
# the carried fit (its sums_share checked to lie in (0, 1]).
expect_delta_exact <- function(x, centers, single = FALSE, iter.max = 15L, bounds = 1L, label = "") {
  lab <- paste(label, if (single) "single" else "double")
  ref <- delta_raw(x, centers, "0", single, iter.max, bounds)
  expect_identical(ref$sums_share, -1, label = paste(lab, "GPUKMEANS_DELTA_SUMS=0 carries no sums"))
  got <- delta_raw(x, centers, "", single, iter.max, bounds)
  for (comp in delta_parts) expect_identical(got[[comp]], ref[[comp]], label = paste(lab, comp))
  expect_identical(got$exact_fraction, ref$exact_fraction, label = paste(lab, "bounded iterations"))
  expect_gt(got$sums_share, 0, label = paste(lab, "sums carried"))
  expect_lte(got$sums_share, 1, label = paste(lab, "share of points added"))
  invisible(got)
}

test_that("cuda delta sums: the small-d kernels make their sums afresh", {
  skip_if_no_gpu()
  set.seed(31)
  for (d in c(2, 8)) {
    x <- make_blobs(280000, d, 20, sd = 1.5, spread = 30)
    c0 <- x[sample.int(nrow(x), 20), , drop = FALSE]
    for (single in c(FALSE, TRUE))
      expect_identical(delta_raw(x, c0, "", single)$sums_share, -1, label = paste("d", d, "single", single))
  }
})

test_that("cuda delta sums: the tiled path, one and several coordinate groups, shared and global sums", {
  skip_if_no_gpu()
  set.seed(32)
  # (k, d, n): one coordinate group of shared counters; several (k d sums
  # above the block's shared memory); global atomics (one column's sums
  # larger than it)
  for (shape in list(c(64, 16, 150000), c(300, 40, 60000), c(5000, 10, 40000))) {
    k <- shape[1]
    d <- shape[2]
    x <- make_blobs(shape[3], d, k, sd = 2, spread = 20)
    c0 <- x[sample.int(nrow(x), k), , drop = FALSE]
    for (single in c(FALSE, TRUE)) {
      got <- expect_delta_exact(x, c0, single, 12L, label = paste("tiled k", k, "d", d))
      # every point in the first iteration, the movers after
      if (got$iter > 2L) expect_lt(got$sums_share, 1, label = paste("tiled k", k, "d", d, "movers only"))
    }
  }
})

test_that("cuda delta sums: in and out of bounded iterations the sums stay the labels'", {
  skip_if_no_gpu()
  set.seed(33)
  # uniform data at d = 16: forced bounds hold few points, so the fit
  # leaves bounded iterations (plain ones then carry the bounded ones' sums)
  # and enters them again (their first iteration sums afresh)
  x <- matrix(runif(200000 * 16), ncol = 16)
  c0 <- x[sample.int(nrow(x), 150), ]
  for (single in c(FALSE, TRUE)) {
    got <- expect_delta_exact(x, c0, single, 40L, bounds = 2L, label = "uniform, forced bounds")
    prof <- got$exact_fraction
    left <- which(prof < 1)
    expect_true(length(left) > 0 && any(prof[seq_along(prof) > min(left)] == 1),
                label = "the fit left bounded iterations for plain ones")
  }
  # blobs at d = 16, bounded from the second iteration to convergence
  x <- make_blobs(300000, 16, 50, sd = 1, spread = 10)
  c0 <- x[sample.int(nrow(x), 50), ]
  for (single in c(FALSE, TRUE)) {
    got <- expect_delta_exact(x, c0, single, 30L, bounds = 2L, label = "blobs, forced bounds")
    expect_true(any(got$exact_fraction < 1), label = "bounded iterations ran")
  }
})

test_that("cuda delta sums: gpu_kmeans with nstart, trace and an empty cluster; stats' fit in double", {
  skip_if_no_gpu()
  set.seed(34)
  x <- make_blobs(100000, 12, 15, sd = 3, spread = 5)
  fits <- lapply(c("0", ""), function(v) withr::with_envvar(c(GPUKMEANS_DELTA_SUMS = v), suppressWarnings({
    set.seed(5)
    a <- strip_gk(gpu_kmeans(x, 15, nstart = 3L, iter.max = 30L, backend = "cuda"))
    out <- utils::capture.output(b <- strip_gk(gpu_kmeans(x, x[1:15, ], iter.max = 30L, trace = TRUE,
                                                           backend = "cuda")))
    list(a = a, b = b, out = out)
  })))
  expect_identical(fits[[2]]$a, fits[[1]]$a, label = "nstart = 3")
  expect_identical(fits[[2]]$b, fits[[1]]$b, label = "trace")
  expect_identical(fits[[2]]$out, fits[[1]]$out, label = "trace's lines")
  expect_gt(length(fits[[2]]$out), 1L)
  # a center far from every point: its cluster is empty after the first
  # iteration (stats' error, or its NaN center, alike)
  c1 <- rbind(x[1:9, ], rep(1e4, 12))
  r <- lapply(c("0", ""), function(v) withr::with_envvar(c(GPUKMEANS_DELTA_SUMS = v), suppressWarnings(
    tryCatch(strip_gk(gpu_kmeans(x, c1, iter.max = 20L, backend = "cuda")), error = conditionMessage))))
  expect_identical(r[[2]], r[[1]], label = "an empty cluster")
  # against stats::kmeans itself on the tiled path
  y <- make_blobs(60000, 12, 40, sd = 2, spread = 10)
  c2 <- y[sample.int(nrow(y), 40), ]
  ref <- suppressWarnings(stats::kmeans(y, c2, iter.max = 25L, algorithm = "Lloyd"))
  got <- suppressWarnings(gpu_kmeans(y, c2, iter.max = 25L, backend = "cuda"))
  expect_identical(got$cluster, ref$cluster)
  expect_identical(got$iter, ref$iter)
  expect_identical(got$size, ref$size)
  expect_equal(got$centers, ref$centers, tolerance = 1e-13)
  expect_gt(delta_raw(y, c2, "", iter.max = 25L)$sums_share, 0)
})

test_that("cuda delta sums: several engines (device = c(0, 0), c(0, 0, 0)) carry their parts' sums", {
  skip_if_no_gpu()
  set.seed(35)
  x <- make_blobs(120000, 16, 40, sd = 2, spread = 6)
  c0 <- x[sample.int(nrow(x), 40), ]
  for (single in c(FALSE, TRUE)) for (bounds in c(1L, 2L)) {
    lab <- paste(if (single) "single" else "double", "bounds", bounds)
    one <- delta_raw(x, c0, "0", single, 25L, bounds)
    for (dev in list(c(0L, 0L), c(0L, 0L, 0L))) {
      parts <- lapply(c("0", ""), function(v) delta_raw(x, c0, v, single, 25L, bounds, device = dev))
      for (comp in delta_parts) {
        expect_identical(parts[[2]][[comp]], one[[comp]], label = paste(lab, length(dev), "engines carried", comp))
        expect_identical(parts[[1]][[comp]], one[[comp]], label = paste(lab, length(dev), "engines afresh", comp))
      }
      expect_identical(parts[[2]]$exact_fraction, one$exact_fraction, label = paste(lab, "bounded iterations"))
      expect_identical(parts[[1]]$sums_share, -1)
      if (bounds == 1L) expect_gt(parts[[2]]$sums_share, 0, label = paste(lab, length(dev), "engines: sums carried"))
    }
  }
})
