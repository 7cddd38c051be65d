# The CPU engine's certified screen (src/cpu_screen.h): fast fused
# multiply-add distances with an error bound decide most labels, the exact
# rule the rest.  Whatever the screen decides, a fit must equal the fit of
# the exact rule alone bit for bit (and stats with one thread), on data made
# to defeat the bound: exact ties, points on bisectors, duplicate points,
# centers a rounding apart, clusters that empty (NaN centers),
# scales from 1e-300 to 1e300, large offsets.  The internal switch
# GPUKMEANS_CPU_SCREEN ("on", "off", "auto"; for double data "double", the
# double pass alone, and "float", the float pass alone) is read at each fit;
# bounds are off so that every iteration is a plain (screened) one.
local_edition(3)

fit_parts <- c("cluster", "centers", "totss", "withinss", "tot.withinss", "betweenss", "size", "iter", "ifault")

screen_fit <- function(x, centers, screen, threads = 1L, log = NULL, ...) {
  withr::local_envvar(GPUKMEANS_CPU_SCREEN = screen, GPUKMEANS_CPU_BOUNDS = "off",
                      GPUKMEANS_CPU_BOUNDS_LOG = if (is.null(log)) NA else log)
  withr::local_options(gpukmeans.threads = threads, gpukmeans.progress = FALSE)
  with_warnings(gpu_kmeans(x, centers, backend = "cpu", ...))
}

# Screened = exact alone, all components and warnings, with 1 and 2
# threads, through both passes, the double pass alone and the float pass
# alone; with 1 thread each equals stats (double precision).
expect_screen_identical <- function(x, centers, ..., stats = TRUE) {
  s <- if (stats && !identical(list(...)$precision, "single"))
    with_warnings(stats::kmeans(x, centers, ..., algorithm = "Lloyd"))
  for (threads in 1:2) {
    ref <- screen_fit(x, centers, "off", threads, ...)
    for (mode in c("on", "double", "float")) {
      got <- screen_fit(x, centers, mode, threads, ...)
      expect_identical(unclass(got$value)[fit_parts], unclass(ref$value)[fit_parts],
                       label = sprintf("screened fit (%s) with %d thread(s)", mode, threads))
      expect_identical(got$warnings, ref$warnings)
      if (!is.null(s) && threads == 1L) {
        for (part in c("cluster", "centers", "withinss", "size", "iter", "ifault"))
          expect_identical(unclass(got$value)[[part]], s$value[[part]], label = paste(mode, part))
        expect_identical(got$warnings, s$warnings)
      }
    }
  }
}

# The share of the n k distances that the plain iterations computed exactly
# (GPUKMEANS_CPU_BOUNDS_LOG: iter kind changed evals n k seconds).
exact_share <- function(x, centers, screen, ...) {
  f <- withr::local_tempfile()
  screen_fit(x, centers, screen, 2L, log = f, ...)
  log <- utils::read.table(f, col.names = c("iter", "kind", "changed", "evals", "n", "k", "seconds"))
  sum(log$evals) / sum(as.numeric(log$n) * log$k)
}

test_that("the screen decides most labels and changes no bit (blobs, uniform, d = 8 to 300)", {
  for (shape in list(c(d = 8, k = 20), c(d = 16, k = 40), c(d = 64, k = 33), c(d = 300, k = 9))) {
    x <- simulate_blobs(1500, shape[["d"]], shape[["k"]], seed = shape[["d"]])
    set.seed(shape[["k"]])
    c0 <- x[sample.int(1500, shape[["k"]]), ]
    expect_screen_identical(x, c0, iter.max = 30)
    for (mode in c("on", "double", "float")) expect_lt(exact_share(x, c0, mode, iter.max = 30), 0.2)
    expect_identical(exact_share(x, c0, "off", iter.max = 30), 1)
  }
  set.seed(5)
  u <- matrix(runif(2000 * 24), ncol = 24)
  expect_screen_identical(u, u[1:50, ], iter.max = 20)
})

test_that("exact ties, bisectors, lattices: the exact rule decides", {
  # every point on the bisector of two centers (16 coordinates)
  x <- cbind(0, matrix(seq(-5, 5, length.out = 64 * 15), ncol = 15))
  c0 <- rbind(c(-1, rep(0, 15)), c(1, rep(0, 15)), c(0, rep(3, 15)), c(0, rep(-3, 15)),
              c(5, rep(1, 15)), c(-5, rep(1, 15)), c(0, rep(1, 15)), c(0, rep(-1, 15)))
  expect_screen_identical(x, c0, iter.max = 20)
  # a lattice in 8 dimensions: many points equidistant from several centers
  g <- as.matrix(expand.grid(rep(list(0:2), 8)))
  set.seed(6)
  expect_screen_identical(g, g[sample.int(nrow(g), 12), ], iter.max = 30)
})

test_that("duplicate points and centers a rounding apart", {
  set.seed(7)
  y <- matrix(rnorm(800 * 10), ncol = 10)
  y <- rbind(y, y[1:200, ])  # duplicate points
  c0 <- y[c(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), ]
  c0[2, ] <- c0[1, ]
  c0[2, 3] <- c0[1, 3] * (1 + 2^-52)  # centers one rounding apart: ties but for the last bits
  c0[4, ] <- c0[3, ] * (1 + 2^-52)
  c0[6, ] <- c0[5, ]
  c0[6, 1] <- c0[5, 1] + 2^-40
  expect_screen_identical(y, c0, iter.max = 40)
})

test_that("clusters that empty: NaN centers are never chosen", {
  set.seed(8)
  x <- rbind(matrix(rnorm(4000), ncol = 8), matrix(rnorm(4000, 20), ncol = 8))
  c0 <- rbind(rep(0, 8), rep(20, 8), rep(1e6, 8), rep(10, 8), rep(0.5, 8), rep(19, 8), rep(-3, 8), rep(30, 8))
  expect_screen_identical(x, c0, iter.max = 30)
  fit <- screen_fit(x, c0, "on", iter.max = 30)$value
  expect_true(any(fit$size == 0))
})

test_that("scales from 1e-300 to 1e300 and large offsets", {
  set.seed(9)
  x <- matrix(rnorm(600 * 12), ncol = 12)
  c0 <- x[1:10, ]
  for (sc in c(1e-300, 1e-170, 1e-20, 1e20, 1e140))
    expect_screen_identical(x * sc, c0 * sc, iter.max = 20)
  # squares overflow: compared with the exact rule only (as test-bounds-cpu.R)
  huge <- x * 1e300
  ok <- tryCatch({
    screen_fit(huge, huge[1:10, ], "off", iter.max = 1)
    TRUE
  }, gpukmeans_data_error = function(e) FALSE)
  if (ok) expect_screen_identical(huge, huge[1:10, ], iter.max = 10, stats = FALSE)
  # far from the origin: the bound is void for most points, results the same
  expect_screen_identical(x + 1e8, c0 + 1e8, iter.max = 20)
  expect_screen_identical(x * 1e-3 + 1e4, c0 * 1e-3 + 1e4, iter.max = 20)
})

test_that("the float pass: data far from the origin, centers closer than float can tell", {
  # clusters of spread 1 around 1e8 (measurements in their own units): the
  # double pass, unshifted, cannot tell most points' centers apart, the
  # float pass, shifted by the centers' mean, can
  x <- simulate_blobs(2000, 12, 40, seed = 21)
  set.seed(21)
  c0 <- x[sample.int(2000, 40), ]
  expect_screen_identical(x + 1e8, c0 + 1e8, iter.max = 20)
  expect_lt(exact_share(x + 1e8, c0 + 1e8, "float", iter.max = 20), 0.2)
  expect_lt(exact_share(x + 1e8, c0 + 1e8, "on", iter.max = 20), 0.2)
  expect_gt(exact_share(x + 1e8, c0 + 1e8, "double", iter.max = 20), 0.8)
  # each center with a twin 1e-7 away: the float pass cannot split a twin
  # pair's points, the double pass after it can (one iteration, before the
  # twins move apart)
  twins <- rbind(c0, c0 + 1e-7)
  expect_screen_identical(x, twins, iter.max = 1)
  expect_gt(exact_share(x, twins, "float", iter.max = 1), 0.8)
  expect_lt(exact_share(x, twins, "on", iter.max = 1), 0.2)
  expect_lt(exact_share(x, twins, "double", iter.max = 1), 0.2)
  # enough points that the float pass's record says to skip it
  expect_screen_identical(rbind(x, x + 0.01, x - 0.01), twins, iter.max = 2)
})

test_that("single precision, predict and the default choice", {
  x <- simulate_blobs(3000, 32, 25, seed = 10)
  set.seed(10)
  c0 <- x[sample.int(3000, 25), ]
  expect_screen_identical(x, c0, iter.max = 30, precision = "single")
  expect_lt(exact_share(x, c0, "on", iter.max = 30, precision = "single"), 0.3)
  fit <- screen_fit(x, c0, "off", iter.max = 30)$value
  newx <- simulate_blobs(500, 32, 25, seed = 11)
  withr::with_envvar(c(GPUKMEANS_CPU_SCREEN = "on"), p_on <- predict(fit, newx))
  withr::with_envvar(c(GPUKMEANS_CPU_SCREEN = "off"), p_off <- predict(fit, newx))
  expect_identical(p_on, p_off)
  # auto screens from k = 32 on, not below
  expect_identical(exact_share(x, c0, "auto", iter.max = 30), 1)
  y <- simulate_blobs(3000, 4, 40, seed = 13)
  expect_lt(exact_share(y, y[1:40, ], "auto", iter.max = 30), 0.3)
  small <- simulate_blobs(1000, 2, 3, seed = 12)
  expect_identical(exact_share(small, small[1:3, ], "auto", iter.max = 10), 1)
})

test_that("Hamerly's full passes through the screen: the fit of plain Lloyd", {
  # bounds set from the screen's lower bounds, checked by the bounded
  # iterations that follow (forced at every iteration, and the cycle of
  # full, bounded and plain iterations)
  hamerly_fit <- function(x, centers, mode, screen, ...) {
    withr::local_envvar(GPUKMEANS_CPU_SCREEN = screen, GPUKMEANS_CPU_BOUNDS = mode)
    withr::local_options(gpukmeans.threads = 2L, gpukmeans.progress = FALSE)
    with_warnings(gpu_kmeans(x, centers, backend = "cpu", ...))
  }
  x <- simulate_blobs(3000, 16, 30, seed = 13)
  set.seed(13)
  cases <- list(list(x = x, c0 = x[sample.int(3000, 30), ]))
  set.seed(14)
  y <- matrix(rnorm(1200 * 10), ncol = 10)
  c0 <- y[1:10, ]
  c0[2, ] <- c0[1, ]
  c0[2, 3] <- c0[1, 3] * (1 + 2^-52)
  cases[[2]] <- list(x = y, c0 = c0)
  cases[[3]] <- list(x = y * 1e-170, c0 = y[1:10, ] * 1e-170)
  cases[[4]] <- list(x = y + 1e6, c0 = y[1:10, ] + 1e6)
  z <- rbind(matrix(rnorm(4000), ncol = 8), matrix(rnorm(4000, 20), ncol = 8))
  cases[[5]] <- list(x = z, c0 = rbind(rep(0, 8), rep(20, 8), rep(1e6, 8), rep(10, 8), rep(0.5, 8),
                                       rep(19, 8), rep(-3, 8), rep(30, 8)))
  for (cs in cases) {
    ref <- hamerly_fit(cs$x, cs$c0, "off", "off", iter.max = 40)
    for (mode in c("hamerly", "hamerly:cycle", "auto")) for (screen in c("on", "double", "float")) {
      got <- hamerly_fit(cs$x, cs$c0, mode, screen, iter.max = 40)
      expect_identical(unclass(got$value)[fit_parts], unclass(ref$value)[fit_parts], label = paste(mode, screen))
      expect_identical(got$warnings, ref$warnings)
    }
  }
})
