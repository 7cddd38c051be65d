# CUDA engine: the within-cluster sums of squares of a fit.  Each point's
# term is its exact distance to its center (no FMA, coordinate order), and
# the terms of a cluster are added as exact fixed-point integers, so the
# result is the exactly rounded sum of the terms.  The kernel takes one or
# four points a thread a step (four where the centers take k d >= 2^18
# doubles; the internal switch GPUKMEANS_WSS_POINTS = 1 or 4 forces either):
# the same operations per point, so the same bits.  Checked here: both
# forms against each other and, in double precision, against the terms
# added up in R; with the terms computed again (small d) and kept from the
# carried sums (d > 8).
local_edition(3)

wss_fit <- function(x, centers, points, single = FALSE, iter.max = 2L) {
  cuda_fit_raw(x, centers, iter.max, single, env = c(GPUKMEANS_WSS_POINTS = points))
}

# Each cluster's sum of the exact terms, in R (long double sums: within a
# few units in the last place of the exactly rounded sum).
wss_in_r <- function(x, fit) {
  cl <- fit$cluster
  cen <- fit$centers
  terms <- rowSums((x - cen[cl, , drop = FALSE])^2)
  vapply(seq_len(nrow(cen)), function(c) sum(terms[cl == c]), numeric(1))
}

expect_wss_forms <- function(x, centers, label) {
  for (single in c(FALSE, TRUE)) {
    lab <- paste(label, if (single) "single" else "double")
    one <- wss_fit(x, centers, "1", single)
    four <- wss_fit(x, centers, "4", single)
    expect_identical(four$cluster, one$cluster, label = paste(lab, "labels"))
    expect_identical(four$withinss, one$withinss, label = paste(lab, "withinss, 4 points a step"))
    expect_identical(four$size, one$size, label = paste(lab, "size, 4 points a step"))
    expect_identical(one$size, tabulate(one$cluster, nrow(centers)), label = paste(lab, "size"))
    if (!single)
      expect_equal(one$withinss, wss_in_r(x, one), tolerance = 1e-12, label = paste(lab, "withinss against R"))
  }
}

blobs <- function(n, d, k, seed) {
  set.seed(seed)
  mu <- matrix(runif(k * d, -50, 50), k, d)
  x <- mu[sample.int(k, n, replace = TRUE), , drop = FALSE] + rnorm(n * d)
  list(x = x, centers = x[sample.int(n, k), , drop = FALSE])
}

test_that("cuda within-SS: one and four points a step, small d (terms computed twice)", {
  skip_if_no_gpu()
  b <- blobs(20011, 3, 17, 1)
  expect_wss_forms(b$x, b$centers, "d 3")
})

test_that("cuda within-SS: one and four points a step, d > 8 (terms kept from the carried sums)", {
  skip_if_no_gpu()
  b <- blobs(30001, 24, 40, 2)
  expect_wss_forms(b$x, b$centers, "d 24")
})

test_that("cuda within-SS: one and four points a step where the centers are large (k d >= 2^18)", {
  skip_if_no_gpu()
  b <- blobs(6007, 128, 2048, 3)
  expect_wss_forms(b$x, b$centers, "d 128, k 2048")
})

test_that("cuda within-SS: an empty cluster's sum is 0 in both forms", {
  skip_if_no_gpu()
  b <- blobs(5003, 10, 6, 4)
  centers <- rbind(b$centers, rep(1e6, 10))  # far from every point: empty after the first assignment
  for (points in c("1", "4")) {
    f <- wss_fit(b$x, centers, points, iter.max = 1L)
    expect_identical(f$size[7], 0L, label = paste(points, "points: the far center's size"))
    expect_identical(f$withinss[7], 0, label = paste(points, "points: the far center's withinss"))
  }
})
