# The CPU engine's assignment on points ordered in space (src/cpu_spatial.h):
# at d <= 3 the points are sorted along a Z curve once for the data, each
# block of 64 ordered points lists the centers its box can need, and its points take
# the nearest of those by the exact rule.  Every fit is plain Lloyd's bit
# for bit (all components and warnings), with one thread and two, and with
# one thread stats' own.  The internal switch GPUKMEANS_CPU_SPATIAL (read at
# each fit): "0" never, "1" at d <= 3 whatever the shape; unset, by shape
# (n >= 2^15, at d = 3 2^18, k >= 8, iter.max >= 3, no weights).  The iterations' log
# (GPUKMEANS_CPU_BOUNDS_LOG, src/cpu_bounds.h) names an iteration on the
# ordered points S.
local_edition(3)

spatial_parts <- c("cluster", "centers", "totss", "withinss", "tot.withinss", "betweenss", "size", "iter", "ifault")

# A CPU fit under the switch `mode` (NA: unset) with `threads` threads (two:
# on small data too, so that the iterations' passes run on two slots): its
# value, warnings and the kinds of iteration its log names.
spatial_fit <- function(x, centers, mode, threads = 1L, ...) {
  log <- withr::local_tempfile()
  withr::local_envvar(GPUKMEANS_CPU_SPATIAL = mode, GPUKMEANS_CPU_BOUNDS_LOG = log)
  withr::local_options(gpukmeans.threads = threads, gpukmeans.progress = FALSE,
                       gpukmeans.work_per_thread = if (threads > 1L) 0 else NULL)
  r <- with_warnings(gpu_kmeans(x, centers, backend = "cpu", ...))
  r$kinds <- if (file.exists(log)) unique(utils::read.table(log)$V2) else character()
  r
}

# The ordered points' fit against plain Lloyd's (mode "0"), with 1 and 2
# threads, and with 1 thread against stats (double precision).
expect_spatial_identical <- function(x, centers, ..., mode = "1", stats = TRUE, label = "") {
  for (threads in 1:2) {
    lab <- sprintf("%s, %d thread(s)", label, threads)
    ref <- spatial_fit(x, centers, "0", threads, ...)
    got <- spatial_fit(x, centers, mode, threads, ...)
    expect_false("S" %in% ref$kinds, label = paste(lab, ": GPUKMEANS_CPU_SPATIAL=0 orders nothing"))
    expect_identical(got$kinds, "S", label = paste(lab, ": every iteration on the ordered points"))
    expect_identical(unclass(got$value)[spatial_parts], unclass(ref$value)[spatial_parts], label = lab)
    expect_identical(got$warnings, ref$warnings, label = paste(lab, "warnings"))
    if (stats && threads == 1L && !identical(list(...)$precision, "single")) {
      s <- with_warnings(stats::kmeans(x, centers, ..., algorithm = "Lloyd"))
      for (part in c("cluster", "centers", "withinss", "size", "iter", "ifault"))
        expect_identical(unclass(got$value)[[part]], s$value[[part]], label = paste(lab, "stats'", part))
      expect_identical(got$warnings, s$warnings, label = paste(lab, "stats' warnings"))
    }
  }
}

test_that("cpu spatial: exact ties, bisectors, a lattice", {
  expect_spatial_identical(matrix(0:40, ncol = 1), matrix(c(0, 2, 7, 11)), iter.max = 50, label = "ties, d 1")
  x <- rbind(cbind(0, seq(-5, 5, length.out = 50)), cbind(c(-1, 1), 0))
  expect_spatial_identical(x, rbind(c(-1, 0), c(1, 0)), iter.max = 20, label = "on the bisector")
  g <- as.matrix(expand.grid(0:40, 0:40))
  expect_spatial_identical(g, g[c(1, 14, 27, 100, 169, 700, 1200), ], iter.max = 50, label = "lattice")
})

test_that("cpu spatial: duplicate points, near-duplicate centers, an empty cluster", {
  x <- matrix(rep(c(1, 2, 3, 10, 11), each = 300), ncol = 1)
  x <- cbind(x, x %% 3)
  expect_spatial_identical(x, x[c(1, 301, 601, 901), ], iter.max = 30, label = "duplicate points")
  set.seed(1)
  y <- matrix(rnorm(4000), ncol = 2)
  c0 <- rbind(c(0, 0), c(1e-15, 0), c(1, 1), c(1 + 2^-52, 1), c(1, 1 + 2^-52), c(1e4, 1e4))
  expect_spatial_identical(y, c0, iter.max = 50, label = "near-duplicate centers and one far away")
})

test_that("cpu spatial: the small-d adversarial cases, scales 1e-200 to 4e153", {
  set.seed(81)
  for (d in 1:3) {
    # (the largest scale just below the values' limit, sqrt(.Machine$double.xmax / d) / 2:
    # 3.87e153 at d = 3)
    cases <- small_d_cases(6000, d, c(1e-200, 1e-20, 1e20, 1e150, if (d < 3) 4e153 else 3.85e153))
    for (name in names(cases)) {
      cs <- cases[[name]]
      expect_spatial_identical(cs$x, unique(cs$centers), iter.max = cs$iter.max, label = paste(name, "d", d))
    }
  }
})

test_that("cpu spatial: blocks and groups cut anywhere, tiny n, one and two iterations, single precision", {
  set.seed(82)
  x <- matrix(runif(2 * (1024 * 16 + 37)), ncol = 2)
  expect_spatial_identical(x, x[1:40, ], iter.max = 30, label = "n = 16421")
  expect_spatial_identical(x[1:50, ], x[1:7, ], iter.max = 30, label = "n = 50, one block")
  expect_spatial_identical(x[, 1, drop = FALSE], x[1:25, 1, drop = FALSE], iter.max = 30, label = "d 1")
  x3 <- cbind(x, x[, 1] * x[, 2])
  expect_spatial_identical(x3, x3[1:40, ], iter.max = 30, label = "d 3")
  expect_spatial_identical(x3, x3[1:40, ], iter.max = 30, precision = "single", label = "d 3, single precision")
  for (it in 1:2) expect_spatial_identical(x, x[1:40, ], iter.max = it, label = paste("iter.max", it))
  expect_spatial_identical(x, x[1:40, ], iter.max = 30, precision = "single", label = "single precision")
  # trace = TRUE: every iteration's line, its tot.withinss as before
  tr <- lapply(c("0", "1"), function(m) withr::with_envvar(c(GPUKMEANS_CPU_SPATIAL = m), utils::capture.output(
    fit <- suppressWarnings(gpu_kmeans(x, x[1:40, ], iter.max = 30, backend = "cpu", trace = TRUE)))))
  expect_length(tr[[1]], 30)
  expect_identical(tr[[2]], tr[[1]])
})

test_that("cpu spatial: the order made on two slots (n >= 2^17), d 1 to 3", {
  # the columns' ranges, the keys, the counting sort and the scatter of the
  # points each run on two stretches of rows; the first iterations apply
  # the labels row by row through the points' places, the later ones from
  # the changed blocks
  set.seed(85)
  x <- make_blobs(2^17 + 77, 2, 12, sd = 1, spread = 30)
  expect_spatial_identical(x, x[1:12, ], iter.max = 40, stats = FALSE, label = "n = 2^17 + 77, d 2")
  expect_spatial_identical(x[, 2, drop = FALSE], x[1:9, 2, drop = FALSE], iter.max = 40, stats = FALSE,
                           label = "n = 2^17 + 77, d 1")
  y <- make_blobs(2^17 + 77, 3, 20, sd = 1, spread = 30)
  expect_spatial_identical(y, y[1:20, ], iter.max = 40, stats = FALSE, label = "n = 2^17 + 77, d 3")
})

test_that("cpu spatial: chosen by shape, and nstart draws the numbers stats draws", {
  set.seed(83)
  x <- make_blobs(40000, 2, 30, sd = 1, spread = 40)
  c0 <- x[1:30, ]
  expect_spatial_identical(x, c0, iter.max = 100, mode = NA, label = "blobs, by shape")
  expect_false("S" %in% spatial_fit(x, c0[1:7, ], NA, iter.max = 100)$kinds, label = "k = 7")
  expect_identical(spatial_fit(x, c0[1:8, ], NA, iter.max = 100)$kinds, "S", label = "k = 8")
  expect_false("S" %in% spatial_fit(x[1:20000, ], c0, NA, iter.max = 100)$kinds, label = "n = 20000")
  expect_false("S" %in% spatial_fit(x, c0, NA, iter.max = 2)$kinds, label = "iter.max = 2")
  expect_false("S" %in% spatial_fit(cbind(x, x[, 1]), cbind(c0, c0[, 1]), NA, iter.max = 100)$kinds,
               label = "d = 3, n = 40000")
  y <- make_blobs(2^18, 3, 8, sd = 1, spread = 40)
  expect_identical(spatial_fit(y, y[1:8, ], NA, iter.max = 3)$kinds, "S", label = "d = 3, n = 2^18")
  expect_false("S" %in% spatial_fit(y[-1, ], y[1:8, ], NA, iter.max = 3)$kinds, label = "d = 3, n = 2^18 - 1")
  expect_false("S" %in% spatial_fit(cbind(y, y[, 1]), cbind(y[1:8, ], y[1:8, 1]), NA, iter.max = 3)$kinds,
               label = "d = 4")
  expect_false("S" %in% spatial_fit(x, c0, NA, iter.max = 100, weights = runif(nrow(x), 0.5, 2))$kinds, label = "weights")
  for (threads in 1:2) {
    fits <- lapply(c("0", "1"), function(m) {
      set.seed(84)
      f <- spatial_fit(x, 30L, m, threads, nstart = 3L, iter.max = 100)
      list(fit = unclass(f$value)[spatial_parts], seed = .Random.seed, kinds = f$kinds)
    })
    expect_identical(fits[[2]]$kinds, "S")
    expect_identical(fits[[2]]$fit, fits[[1]]$fit, label = paste("nstart 3,", threads, "thread(s)"))
    expect_identical(fits[[2]]$seed, fits[[1]]$seed)
  }
  set.seed(84)
  s <- suppressWarnings(stats::kmeans(x, 30L, nstart = 3L, iter.max = 100, algorithm = "Lloyd"))
  set.seed(84)
  got <- spatial_fit(x, 30L, "1", 1L, nstart = 3L, iter.max = 100)$value
  expect_identical(got$cluster, s$cluster)
  expect_identical(got$centers, s$centers)
})
