# CUDA engine: the within-cluster sums of squares of a fit.  Each point's
# term is its exact distance to its center (no FMA, coordinate order), and
# the terms of a cluster are added as exact fixed-point integers, so the
# result is the exactly rounded sum of the terms.  The kernel takes one or
# four points a thread a step (four where the centers take k d >= 2^18
# doubles; the internal switch GPUKMEANS_WSS_POINTS = 1 or 4 forces either):
# the same operations per point, so the same bits.  Where a grid the
# device holds at once has a thread for every few rows (and the shared
# counters fit), both passes run in one cooperative launch instead
# (k_withinss_one; the fit's withinss_one is 1; GPUKMEANS_WSS_ONE=0 keeps
# the two passes): the same terms and scales, so the same bits again.
# Checked here: the three forms against each other and, in double
# precision, against the terms added up in R; with the terms computed again
# (small d) and kept from the carried sums (d > 8); on rows ordered in
# space, whose labels the pass puts back in row order.
local_edition(3)

wss_fit <- function(x, centers, points, single = FALSE, iter.max = 2L, one = "0", env = character()) {
  cuda_fit_raw(x, centers, iter.max, single, env = c(env, GPUKMEANS_WSS_POINTS = points, GPUKMEANS_WSS_ONE = one))
}
wss_parts <- c("cluster", "centers", "withinss", "size", "iter")

# Each cluster's sum of the exact terms, in R (long double sums: within a
# few units in the last place of the exactly rounded sum).
wss_in_r <- function(x, fit) {
  cl <- fit$cluster
  cen <- fit$centers
  terms <- rowSums((x - cen[cl, , drop = FALSE])^2)
  vapply(seq_len(nrow(cen)), function(c) sum(terms[cl == c]), numeric(1))
}

# fused: whether the one-launch form must have run (else it may or may not,
# as the device's shared memory allows)
expect_wss_forms <- function(x, centers, label, fused = TRUE) {
  for (single in c(FALSE, TRUE)) {
    lab <- paste(label, if (single) "single" else "double")
    one <- wss_fit(x, centers, "1", single)
    four <- wss_fit(x, centers, "4", single)
    both <- wss_fit(x, centers, "1", single, one = "1")
    expect_identical(one$withinss_one, 0L, label = paste(lab, "GPUKMEANS_WSS_ONE=0: two passes"))
    if (fused) expect_identical(both$withinss_one, 1L, label = paste(lab, "one launch"))
    expect_identical(four$cluster, one$cluster, label = paste(lab, "labels"))
    expect_identical(four$withinss, one$withinss, label = paste(lab, "withinss, 4 points a step"))
    expect_identical(four$size, one$size, label = paste(lab, "size, 4 points a step"))
    for (comp in wss_parts)
      expect_identical(both[[comp]], one[[comp]], label = paste(lab, comp, "in one launch"))
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
  b <- blobs(20011, 2, 17, 6)  # (d = 2: the one-launch kernel's own form, d a constant)
  expect_wss_forms(b$x, b$centers, "d 2")
})

test_that("cuda within-SS: one and four points a step, d > 8 (terms kept from the carried sums)", {
  skip_if_no_gpu()
  b <- blobs(30001, 24, 40, 2)
  expect_wss_forms(b$x, b$centers, "d 24")
})

test_that("cuda within-SS: one and four points a step where the centers are large (k d >= 2^18)", {
  skip_if_no_gpu()
  b <- blobs(6007, 128, 2048, 3)
  expect_wss_forms(b$x, b$centers, "d 128, k 2048", fused = FALSE)  # (65 KB of counters a block)
})

test_that("cuda within-SS: an empty cluster's sum is 0 in both forms", {
  skip_if_no_gpu()
  b <- blobs(5003, 10, 6, 4)
  centers <- rbind(b$centers, rep(1e6, 10))  # far from every point: empty after the first assignment
  for (points in c("1", "4")) for (one in c("0", "1")) {
    f <- wss_fit(b$x, centers, points, iter.max = 1L, one = one)
    lab <- paste(points, "points,", if (one == "1") "one launch" else "two passes")
    expect_identical(f$withinss_one, as.integer(one), label = paste(lab, ": the form"))
    expect_identical(f$size[7], 0L, label = paste(lab, ": the far center's size"))
    expect_identical(f$withinss[7], 0, label = paste(lab, ": the far center's withinss"))
  }
})

test_that("cuda within-SS in one launch: rows ordered in space (labels put back in row order), up to 4 rows a thread", {
  skip_if_no_gpu()
  # 3e5 rows: one to four a thread (58 SMs and more); 1e6: four on 132 SMs
  # (H100, H200), two passes on fewer; 3e6: more than a grid of at most
  # 2048 threads an SM holds on fewer than 366 SMs, two passes
  for (n in c(300007, 1e6, 3e6)) {
    b <- blobs(n, 2, 100, 5)
    for (single in c(FALSE, TRUE)) {
      lab <- paste("n", n, if (single) "single" else "double")
      env <- c(GPUKMEANS_ORDER = "1")
      two <- wss_fit(b$x, b$centers, "1", single, iter.max = 10L, env = env)
      one <- wss_fit(b$x, b$centers, "1", single, iter.max = 10L, one = "1", env = env)
      expect_identical(two$rows_ordered, 1L, label = paste(lab, "rows ordered"))
      expect_identical(one$rows_ordered, 1L, label = paste(lab, "rows ordered, one launch"))
      expect_identical(two$withinss_one, 0L, label = paste(lab, "two passes"))
      if (n < 1e6) expect_identical(one$withinss_one, 1L, label = paste(lab, "one launch"))
      if (n > 1e6) expect_identical(one$withinss_one, 0L, label = paste(lab, "too many rows for one launch"))
      for (comp in wss_parts)
        expect_identical(one[[comp]], two[[comp]], label = paste(lab, comp, "in one launch"))
      expect_identical(one$size, tabulate(one$cluster, 100L), label = paste(lab, "size"))
      if (!single && n <= 1e6)
        expect_equal(one$withinss, wss_in_r(b$x, one), tolerance = 1e-12, label = paste(lab, "withinss against R"))
    }
  }
})
