# CUDA engine: bounded Lloyd iterations (distance bounds, src/cuda/bounds.cu)
# give the plain iterations' fit, bit for bit, in double precision.
local_edition(3)

# A fit through the glue with the CUDA engine's bounds mode:
# 1 = never (plain Lloyd), 2 = from the second iteration, 3 = where they pay.
fit_bounds <- function(x, centers, iter.max, bounds, single = FALSE) {
  gpukmeans:::gk_fit_cpp(as.matrix(x), list(as.matrix(centers)), as.integer(iter.max), single, "cuda", 0L, 0L,
                         FALSE, NULL, Inf, list(tuning = c(0L, 0L, 0L, as.integer(bounds))))
}

expect_bounded_equals_plain <- function(x, centers, iter.max = 100L, label = "") {
  plain <- fit_bounds(x, centers, iter.max, 1L)
  for (b in c(2L, 3L)) {
    bounded <- fit_bounds(x, centers, iter.max, b)
    for (comp in c("cluster", "centers", "withinss", "size", "iter", "totss"))
      expect_identical(bounded[[comp]], plain[[comp]], label = paste(label, "bounds", b, comp))
  }
  invisible(plain)
}

test_that("cuda: bounded iterations equal plain ones on blobs, uniform data and many shapes", {
  skip_if_no_gpu()
  set.seed(1)
  for (sh in list(c(20000, 2, 10), c(30011, 3, 64), c(20000, 16, 40), c(5000, 130, 33), c(50000, 1, 100),
                  c(4099, 8, 300))) {
    x <- make_blobs(sh[1], sh[2], max(2, sh[3] %/% 2), sd = 2, spread = 10)
    expect_bounded_equals_plain(x, x[seq_len(sh[3]), , drop = FALSE], 200L, paste(sh, collapse = "x"))
    u <- matrix(runif(sh[1] * sh[2]), ncol = sh[2])
    expect_bounded_equals_plain(u, u[seq_len(sh[3]), , drop = FALSE], 60L, paste("uniform", paste(sh, collapse = "x")))
  }
})

test_that("cuda: bounded iterations are exact on adversarial data", {
  skip_if_no_gpu()
  set.seed(2)
  # exact ties: points halfway between centers, duplicated points and centers
  g <- as.matrix(expand.grid(0:40, 0:40)) + 0
  expect_bounded_equals_plain(g, g[c(1, 5, 20, 300, 700, 1000, 1681), ], 100L, "grid ties")
  xd <- rbind(g, g, g)
  expect_bounded_equals_plain(xd, xd[c(2, 3, 4, 5, 6), ], 100L, "duplicates")
  # near-duplicate centers (1 ulp apart)
  x <- make_blobs(20000, 4, 8, sd = 1, spread = 5)
  c0 <- x[1:8, ]
  c0[2, ] <- c0[1, ] * (1 + 2^-52)
  expect_bounded_equals_plain(x, c0, 100L, "near-duplicate centers")
  # clusters that empty mid-run (NaN centers)
  c1 <- rbind(x[1:6, ], c(50, 50, 50, 50), c(-50, -50, -50, -50))
  p <- expect_bounded_equals_plain(x, c1, 100L, "empty clusters")
  expect_true(any(p$size == 0L))
  # tiny and huge scales, far from the origin, integer data
  for (sc in c(1e-300, 1e-150, 1e-20, 1e20, 1e150)) {
    expect_bounded_equals_plain(x * sc, c0 * sc, 50L, paste("scale", sc))
  }
  expect_bounded_equals_plain(x + 1e8, c0 + 1e8, 50L, "offset 1e8")
  xi <- matrix(sample.int(50L, 60000L, replace = TRUE), ncol = 3) + 0
  expect_bounded_equals_plain(xi, unique(xi)[1:30, ], 100L, "integers")
  # k = 2, d = 1, and not converged within iter.max
  expect_bounded_equals_plain(x[, 1, drop = FALSE], x[1:2, 1, drop = FALSE], 100L, "k = 2, d = 1")
  expect_bounded_equals_plain(x, x[1:40, ], 7L, "iter.max 7")
})

test_that("cuda: bounded iterations in single precision stay as close to double as plain ones", {
  skip_if_no_gpu()
  set.seed(3)
  x <- make_blobs(100000, 16, 30, sd = 1, spread = 30)
  c0 <- x[1:30, ]
  d <- fit_bounds(x, c0, 300L, 1L)
  # Over hundreds of iterations single precision may take another path than
  # double (on an H100, 2026-11-23: plain single agreed with double on 99.4%
  # of labels): bounded single must agree with double as well as plain
  # single does, and reach the same objective.
  plain <- fit_bounds(x, c0, 300L, 1L, single = TRUE)
  agree_plain <- mean(plain$cluster == d$cluster)
  expect_gte(agree_plain, 0.98)
  for (b in c(2L, 3L)) {
    s <- fit_bounds(x, c0, 300L, b, single = TRUE)
    expect_gte(mean(s$cluster == d$cluster), agree_plain - 0.01)
    expect_equal(sum(s$withinss), sum(d$withinss), tolerance = 1e-5)
  }
})

test_that("cuda: where they pay, no bounds when the plain iterations run on the tensor cores at high d", {
  skip_if_no_gpu()
  # d = 128, k = 1024 (k d >= 32768): the tensor cores in single precision,
  # the certified filter in double: plain iterations.  The same data in 95
  # columns, where bounds still pay, is the control: there the host
  # switches to bounds between two batches of plain iterations.
  set.seed(12)
  x <- make_blobs(131072, 128, 100, sd = 1, spread = 5)
  c0 <- x[1:1024, ]
  parts <- c("cluster", "centers", "withinss", "size", "iter", "totss")
  for (single in c(FALSE, TRUE)) {
    where <- fit_bounds(x, c0, 60L, 3L, single)
    forced <- fit_bounds(x, c0, 60L, 2L, single)
    control <- fit_bounds(x[, 1:95], c0[, 1:95], 60L, 3L, single)
    # (with less shared memory a block than the tensor cores' tiles take, the
    # plain iterations are the SIMT kernel's, and the bounds pay there)
    if (!smem_capped()) expect_true(all(where$exact_fraction == 1), label = paste("d = 128, single =", single))
    expect_lt(min(control$exact_fraction), 1, label = paste("d = 95, single =", single))
    expect_lt(min(forced$exact_fraction), 1)  # (bounds do run at d = 128 when asked for)
    if (!single) expect_identical(where[parts], forced[parts])
  }
})

test_that("cuda: gpu_kmeans to convergence with bounds where they pay equals stats", {
  skip_if_no_gpu()
  x <- simulate_blobs(100000, 4, 20, seed = 4)
  withr::local_options(gpukmeans.cuda_tuning = c(0L, 0L, 0L, 3L))
  p <- expect_kmeans_parity(x, 20, iter.max = 500, seed = 5, backend = "cuda", tolerance = 1e-12)
  expect_null(p$g$ifault)
})

test_that("cuda: a fit's profile holds one share an iteration run, whether or not its last batch was read back", {
  # A fit of plain iterations only leaves its last batch running (no read of
  # the state before the within-SS): its profile, all ones, then comes from
  # the state finish() copies.  Bounded fits read their last batch back for
  # their counts.  Rows as given and ordered (d = 2), the tiled path (d = 8),
  # iter.max reached or not.
  skip_if_no_gpu()
  set.seed(14)
  cases <- list(list(x = make_blobs(300000, 2, 30, sd = 1, spread = 40), order = "0"),
                list(x = make_blobs(300000, 2, 30, sd = 1, spread = 40), order = "1"),
                list(x = make_blobs(300000, 8, 30, sd = 1, spread = 20), order = "0"))
  for (cs in cases) for (single in c(FALSE, TRUE)) for (iter_max in c(3L, 300L)) for (bounds in c(1L, 3L)) {
    c0 <- cs$x[seq_len(60), ]
    got <- cuda_fit_raw(cs$x, c0, iter_max, single, bounds, env = c(GPUKMEANS_ORDER = cs$order))
    lab <- sprintf("d = %d, order %s, single = %s, iter.max = %d, bounds %d", ncol(cs$x), cs$order, single,
                   iter_max, bounds)
    run <- min(got$iter, iter_max)
    expect_length(got$exact_fraction, run)
    expect_true(all(got$exact_fraction > 0 & got$exact_fraction <= 1), label = lab)
    if (bounds == 1L) expect_true(all(got$exact_fraction == 1), label = lab)
    if (iter_max == 3L) expect_identical(got$iter, 4L, label = lab)
  }
})
