# CUDA engine, d <= 3: the small-d kernel through a grid of cells
# (src/cuda/detail/cell_grid.cuh).  Each iteration a grid over the centers'
# box lists, per cell, the centers that can be nearest to a point of it; a
# point computes its distances to those only, with the full scan's
# arithmetic, so fits are the scan's bit for bit in both precisions (and in
# double stats::kmeans's).  Points outside the grid, and cells with too many
# candidates, scan every center.  The internal switch GPUKMEANS_GRID (read
# at each fit): 0 never, 1 at d <= 3 from k = 2; unset, at d <= 2 from
# k = 160.  The internal
# list's grid_share is the share of point-iterations the lists served (-1:
# no grid).  Fits need n >= 2^18 (below, the persistent kernel runs).
local_edition(3)

fit_parts <- c("cluster", "centers", "withinss", "size", "iter", "totss")

grid_raw <- function(x, centers, grid, single = FALSE, iter.max = 15L, bounds = 1L) {
  cuda_fit_raw(x, centers, iter.max, single, bounds, env = c(GPUKMEANS_GRID = grid))
}

# The grid's fit (switch `grid`) against the scan's, in one precision;
# returns the grid's share.
expect_grid_exact <- function(x, centers, grid = "1", single = FALSE, iter.max = 15L, label = "") {
  ref <- grid_raw(x, centers, "0", single, iter.max)
  expect_identical(ref$grid_share, -1, label = paste(label, "GPUKMEANS_GRID=0 runs no grid"))
  got <- grid_raw(x, centers, grid, single, iter.max)
  for (comp in fit_parts)
    expect_identical(got[[comp]], ref[[comp]], label = paste(label, if (single) "single" else "double", comp))
  if (!smem_capped()) {  # (helper-gpu.R)
    expect_gte(got$grid_share, 0)
    expect_lte(got$grid_share, 1)
  }
  invisible(got$grid_share)
}

test_that("cuda grid: blobs at d = 1, 2, 3 give the scan's fit and predictions, and stats' in double", {
  skip_if_no_gpu()
  set.seed(21)
  for (d in 1:3) {
    x <- make_blobs(270000, d, 40, sd = 1, spread = 50)
    c0 <- x[seq_len(60), , drop = FALSE]
    for (prec in c("single", "double")) for (tuning in list(c(0L, 0L, 0L, 1L), NULL)) {
      fits <- lapply(c("0", "1"), function(g) {
        withr::local_envvar(GPUKMEANS_GRID = g)
        withr::local_options(gpukmeans.cuda_tuning = tuning)
        fit <- suppressWarnings(gpu_kmeans(x, c0, iter.max = 20L, precision = prec, backend = "cuda"))
        list(fit = strip_gk(fit), pred = predict(fit, x[seq_len(50001), , drop = FALSE]))
      })
      lab <- paste("d", d, prec, if (is.null(tuning)) "default bounds" else "plain")
      expect_identical(fits[[2]]$fit, fits[[1]]$fit, label = paste(lab, "fit"))
      expect_identical(fits[[2]]$pred, fits[[1]]$pred, label = paste(lab, "predict"))
    }
    share <- grid_raw(x, c0, "1", iter.max = 20L)$grid_share
    expect_gt(share, 0.95, label = paste("d", d, "share served by the lists"))
    ref <- suppressWarnings(stats::kmeans(x, c0, iter.max = 20L, algorithm = "Lloyd"))
    got <- withr::with_envvar(c(GPUKMEANS_GRID = "1"),
                              suppressWarnings(gpu_kmeans(x, c0, iter.max = 20L, backend = "cuda")))
    expect_identical(got$cluster, ref$cluster, label = paste("d", d, "stats' labels"))
    expect_identical(got$iter, ref$iter)
    expect_equal(got$centers, ref$centers, tolerance = 1e-13, label = paste("d", d, "stats' centers"))
  }
})

test_that("cuda grid: exact ties, bisectors, duplicate and NaN centers, outliers, scales", {
  skip_if_no_gpu()
  set.seed(22)
  n <- 270000
  for (d in 1:3) {
    for (single in c(FALSE, TRUE)) {
      # (helper-gpu.R; at the tiny and huge scales the grid's range is left
      # in part: the scan)
      cases <- small_d_cases(n, d, if (single) c(1e-6, 1e6) else c(1e-200, 1e-20, 1e20, 1e150))
      for (name in names(cases)) {
        cs <- cases[[name]]
        lab <- paste(name, "d", d)
        share <- expect_grid_exact(cs$x, cs$centers, single = single, iter.max = cs$iter.max, label = lab)
        if (name %in% c("lattice", "bisectors")) expect_gt(share, 0.5, label = paste(lab, "share"))
        # (heavy tails: points outside the grid scan every center)
        if (name == "tails") expect_lt(share, 1, label = paste(lab, "share"))
        # (the grid's float values are relative to its middle, scaled)
        if (name == "longitude, latitude") expect_gt(share, 0.9, label = paste(lab, "share"))
        if (!is.null(cs$scale) && cs$scale >= 1e-20) expect_gt(share, 0.9, label = paste(lab, "share"))
      }
    }
  }
})

test_that("cuda grid: by shape (switch, limits) and weighted fits", {
  skip_if_no_gpu()
  set.seed(23)
  x <- make_blobs(270000, 2, 30, sd = 2, spread = 40)
  # by default from k = 160 in single precision and 96 in double; below,
  # and from k = 2, when GPUKMEANS_GRID=1; up to k = 1500 here (the fused
  # sums' shared memory leaves the small-d kernel near k = 1900 at d = 2);
  # d = 3 only when GPUKMEANS_GRID=1
  for (single in c(FALSE, TRUE)) {
    low <- if (single) 159L else 95L
    for (k in c(2L, low)) {
      expect_identical(grid_raw(x, x[seq_len(k), ], NA, single, iter.max = 3L)$grid_share, -1)
      expect_grid_exact(x, x[seq_len(k), ], "1", single, iter.max = 5L, label = paste("k", k))
    }
    for (k in c(low + 1L, 1500L)) {
      share <- expect_grid_exact(x, x[seq_len(k), ], NA, single, iter.max = 4L, label = paste("k", k))
      if (!smem_capped()) expect_gt(share, 0.9)
    }
  }
  x3 <- make_blobs(270000, 3, 30, sd = 2, spread = 40)
  expect_identical(grid_raw(x3, x3[1:300, ], NA, iter.max = 2L)$grid_share, -1)
  expect_gt(expect_grid_exact(x3, x3[1:300, ], "1", iter.max = 3L, label = "d 3"), 0)
  # weighted fits: the assignment without sums, then the weighted update
  w <- runif(nrow(x), 0.5, 2)
  fits <- lapply(c("0", "1"), function(g) {
    withr::local_envvar(GPUKMEANS_GRID = g)
    strip_gk(suppressWarnings(gpu_kmeans(x, x[1:200, ], iter.max = 10L, backend = "cuda", weights = w)))
  })
  expect_identical(fits[[2]], fits[[1]])
  z <- withr::with_envvar(c(GPUKMEANS_GRID = "1"),
                          gpukmeans:::gk_fit_cpp(x, list(x[1:200, ]), 10L, FALSE, "cuda", 0L, 0L, FALSE, NULL, Inf,
                                                 list(tuning = c(0L, 0L, 0L, 1L)), weights = w))
  expect_gt(z$grid_share, 0.5)
})
