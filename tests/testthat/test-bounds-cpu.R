# Exact acceleration of the CPU engine's Lloyd loop by distance bounds
# (src/cpu_bounds.h): every variant gives the fit of plain Lloyd, bit for
# bit, on data made to trip bounds (ties, bisectors, duplicates,
# near-duplicate centers, clusters that empty, extreme scales).  The
# internal switch GPUKMEANS_CPU_BOUNDS (read by the engine at each fit)
# forces plain Lloyd ("off") or a variant at every iteration ("hamerly",
# "yinyang", "yinyang:G"; ":cycle" runs the pattern full, bounded, bounded,
# plain, plain to cover the transitions); "auto" is the default choice.
local_edition(3)

bounds_modes <- c("hamerly", "yinyang", "yinyang:2", "hamerly:cycle", "yinyang:3:cycle", "auto")
fit_parts <- c("cluster", "centers", "totss", "withinss", "tot.withinss", "betweenss", "size", "iter", "ifault")

# A CPU fit with the bounds switch `mode` and `threads` threads, its
# warnings collected.
fit_mode <- function(x, centers, mode, threads = 1L, ...) {
  withr::local_envvar(GPUKMEANS_CPU_BOUNDS = mode)
  withr::local_options(gpukmeans.threads = threads, gpukmeans.progress = FALSE)
  with_warnings(gpu_kmeans(x, centers, backend = "cpu", ...))
}

# Every variant, with 1 and 2 threads, equals plain Lloyd bit for bit (all
# components and warnings); with 1 thread plain Lloyd equals stats.
expect_bounds_identical <- function(x, centers, ..., modes = bounds_modes, stats = TRUE) {
  for (threads in 1:2) {
    ref <- fit_mode(x, centers, "off", threads, ...)
    for (m in modes) {
      b <- fit_mode(x, centers, m, threads, ...)
      expect_identical(unclass(b$value)[fit_parts], unclass(ref$value)[fit_parts],
                       label = sprintf("%s with %d thread(s)", m, threads))
      expect_identical(b$warnings, ref$warnings)
    }
    if (stats && threads == 1L && !identical(list(...)$precision, "single")) {
      s <- with_warnings(stats::kmeans(x, centers, ..., algorithm = "Lloyd"))
      for (part in c("cluster", "centers", "withinss", "size", "iter", "ifault"))
        expect_identical(unclass(ref$value)[[part]], s$value[[part]], label = part)
      expect_identical(ref$warnings, s$warnings)
    }
  }
}

test_that("exact ties: points halfway between centers", {
  expect_bounds_identical(matrix(0:40, ncol = 1), matrix(c(0, 2, 7, 11)), iter.max = 50)
  # every point on the bisector of the two centers, and the centers themselves
  x <- rbind(cbind(0, seq(-5, 5, length.out = 50)), cbind(c(-1, 1), 0))
  expect_bounds_identical(x, rbind(c(-1, 0), c(1, 0)), iter.max = 20)
  # a lattice: many exact ties at every iteration
  g <- as.matrix(expand.grid(0:12, 0:12))
  expect_bounds_identical(g, g[c(1, 14, 27, 100, 169), ], iter.max = 50)
})

test_that("duplicate points and near-duplicate centers", {
  x <- matrix(rep(c(1, 2, 3, 10, 11), each = 30), ncol = 1)
  x <- cbind(x, x %% 3)
  expect_bounds_identical(x, x[c(1, 31, 61, 91), ], iter.max = 30)
  set.seed(1)
  y <- matrix(rnorm(400), ncol = 2)
  c0 <- rbind(c(0, 0), c(1e-15, 0), c(1, 1), c(1 + 2^-52, 1), c(1, 1 + 2^-52))
  expect_bounds_identical(y, c0, iter.max = 50)
})

test_that("empty clusters: from the start and emptied mid-run (NaN centers)", {
  set.seed(2)
  x <- rbind(matrix(rnorm(200), ncol = 2), matrix(rnorm(200, 20), ncol = 2))
  expect_bounds_identical(x, rbind(c(0, 0), c(20, 20), c(1e6, 1e6), c(10, 10)), iter.max = 30)
  # found by search: cluster 2 has points after the first assignment and
  # none at the end
  set.seed(123)
  y <- matrix(round(rnorm(60), 1), ncol = 2)
  c0 <- y[sample.int(30, 8), ]
  first <- fit_mode(y, c0, "off", iter.max = 1)$value
  last <- fit_mode(y, c0, "off", iter.max = 50)$value
  expect_true(all(first$size > 0) && any(last$size == 0))
  expect_bounds_identical(y, c0, iter.max = 50)
})

test_that("scales from 1e-300 to 1e300, and sums that overflow", {
  set.seed(3)
  x <- matrix(rnorm(300), ncol = 3)
  for (sc in c(1e-300, 1e-160, 1e-20, 1e20, 1e150))
    expect_bounds_identical(x * sc, x[1:5, ] * sc, iter.max = 30)
  # Squared distances overflow to Inf: a point with no distance below Inf
  # goes to center 1 in the engine (stats keeps the previous point's label),
  # so only plain and bounded Lloyd are compared; and the cluster sums
  # overflow to Inf (centers Inf or NaN mid-run).  (Where the package
  # refuses such data as a data error, there is nothing to compare.)
  huge <- x * 1e300
  big <- x / max(abs(x)) * 1.7e308
  accepted <- function(y, c0) {
    tryCatch({
      fit_mode(y, c0, "off", iter.max = 1)
      TRUE
    }, gpukmeans_data_error = function(e) FALSE)
  }
  if (accepted(huge, huge[1:5, ]))
    expect_bounds_identical(huge, huge[1:5, ], iter.max = 30, stats = FALSE)
  if (accepted(big, big[1:4, ]))
    expect_bounds_identical(big, big[1:4, ], iter.max = 10, stats = FALSE)
})

test_that("integer data, d = 1, k = 1, k = n, no convergence", {
  set.seed(4)
  xi <- matrix(sample.int(20L, 600, replace = TRUE), ncol = 3)
  expect_type(xi, "integer")
  expect_bounds_identical(xi, unique(xi)[1:6, ], iter.max = 30)
  x1 <- matrix(c(rnorm(150), rnorm(150, 6)), ncol = 1)
  expect_bounds_identical(x1, x1[c(1, 2, 151, 152), , drop = FALSE], iter.max = 40)
  y <- matrix(rnorm(400), ncol = 2)
  expect_bounds_identical(y, y[3, , drop = FALSE], iter.max = 10)
  expect_bounds_identical(y[1:30, ], y[1:30, ], iter.max = 10)
  expect_bounds_identical(y, y[1:8, ], iter.max = 2)  # "did not converge"
})

test_that("random starts on blobs and uniform data, and single precision", {
  x <- simulate_blobs(2000, 3, 12, seed = 2)
  for (s in 1:2) {
    set.seed(s)
    expect_bounds_identical(x, x[sample.int(2000, 12), ], iter.max = 100)
  }
  y <- simulate_blobs(2000, 5, 60, seed = 3)
  set.seed(9)
  expect_bounds_identical(y, y[sample.int(2000, 60), ], iter.max = 100)
  set.seed(4)
  u <- matrix(runif(3000), ncol = 2)
  expect_bounds_identical(u, u[sample.int(1500, 30), ], iter.max = 100)
  expect_bounds_identical(y, y[1:30, ], iter.max = 100, precision = "single")
})

test_that("trace output is the same with and without bounds", {
  x <- simulate_blobs(2000, 2, 6, seed = 5)
  c0 <- x[1:6, ]
  out <- function(mode) {
    withr::local_envvar(GPUKMEANS_CPU_BOUNDS = mode)
    utils::capture.output(invisible(gpu_kmeans(x, c0, iter.max = 30, trace = TRUE, backend = "cpu")))
  }
  plain <- out("off")
  expect_true(any(grepl("tot.withinss", plain)))
  for (m in c("hamerly", "yinyang:2", "hamerly:cycle")) expect_identical(out(m), plain)
})

# The per-iteration log (GPUKMEANS_CPU_BOUNDS_LOG): iter, kind, changed,
# distances computed, n, k, seconds.
bounds_log <- function(x, centers, mode, ...) {
  f <- withr::local_tempfile()
  withr::local_envvar(GPUKMEANS_CPU_BOUNDS = mode, GPUKMEANS_CPU_BOUNDS_LOG = f)
  withr::local_options(gpukmeans.threads = 2L, gpukmeans.progress = FALSE)
  fit <- gpu_kmeans(x, centers, backend = "cpu", ...)
  log <- utils::read.table(f, col.names = c("iter", "kind", "changed", "evals", "n", "k", "seconds"))
  list(fit = fit, log = log)
}

test_that("the bounds skip most distances once points settle", {
  x <- simulate_blobs(20000, 4, 20, seed = 6)
  set.seed(6)
  c0 <- x[sample.int(20000, 20), ]
  for (m in c("hamerly", "yinyang:3")) {
    r <- bounds_log(x, c0, m, iter.max = 100)
    expect_identical(nrow(r$log), r$fit$iter)
    expect_identical(r$log$kind[1], "F")
    expect_true(all(r$log$kind[-1] == "B"))
    expect_lt(sum(r$log$evals), 0.3 * nrow(r$log) * 20000 * 20)
  }
})

test_that("auto: plain Lloyd for tiny problems, bounds for larger ones", {
  small <- bounds_log(iris[, 1:4], as.matrix(iris[c(1, 51, 101), 1:4]), "auto", iter.max = 10)
  expect_true(all(small$log$kind == "P"))
  x <- simulate_blobs(20000, 4, 30, seed = 7)
  big <- bounds_log(x, x[1:30, ], "auto", iter.max = 100)
  expect_true(any(big$log$kind == "B"))
  off <- bounds_log(x, x[1:30, ], "off", iter.max = 100)
  expect_true(all(off$log$kind == "P"))
  expect_identical(big$fit$cluster, off$fit$cluster)
  expect_identical(big$fit$centers, off$fit$centers)
  # many centers in the plane: Yinyang groups
  y <- simulate_blobs(3000, 2, 200, seed = 8)
  yy <- bounds_log(y, y[1:200, ], "auto", iter.max = 50)
  expect_true(any(yy$log$kind == "B"))
  yoff <- bounds_log(y, y[1:200, ], "off", iter.max = 50)
  expect_identical(unclass(yy$fit)[fit_parts], unclass(yoff$fit)[fit_parts])
})
