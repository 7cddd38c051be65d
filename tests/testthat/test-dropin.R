# gpu_kmeans() in place of kmeans(): every call and habit of stats works
# (issue 12).  Compared with stats::kmeans() itself wherever stats defines
# the behaviour.
local_edition(3)

x <- as.matrix(iris[, 1:4])

# ---- predict(): columns by name ---------------------------------------------

test_that("predict() matches columns by name: reordered, or with extra columns", {
  fit <- gpu_kmeans(x, x[c(1, 51, 101), ])
  ref <- predict(fit, x)
  expect_identical(ref, fit$cluster)
  # by position, the reversed columns would give other clusters ...
  expect_false(identical(nearest_center(x[, 4:1], fit$centers), unname(ref)))
  # ... by name they give the same
  expect_identical(predict(fit, x[, 4:1]), ref)
  expect_identical(predict(fit, iris[, c(3, 1, 4, 2)]), ref)
  # columns the fit does not use are left out (Species, a factor, too)
  expect_identical(predict(fit, iris), ref)
  expect_identical(predict(fit, cbind(z = 0, x)), ref)
  # a 1-D fit on a named column
  g1 <- gpu_kmeans(data.frame(v = precip), matrix(c(10, 40, 60)))
  expect_identical(predict(g1, data.frame(w = 1, v = c(5, 38, 70))), c(1L, 2L, 3L))
})

test_that("predict() refuses newdata whose names differ from the fit's", {
  fit <- gpu_kmeans(x, x[c(1, 51, 101), ])
  expect_error(predict(fit, iris[, c(1, 2, 3)]), "'newdata' has no column 'Petal.Width'")
  nd <- x
  colnames(nd) <- c("a", "b", "c", "d")
  expect_error(predict(fit, nd),
               "'newdata' has no columns 'Sepal.Length', 'Sepal.Width', 'Petal.Length', 'Petal.Width'")
  expect_error(predict(fit, cbind(x, Sepal.Length = 0)),
               "more than one column named 'Sepal.Length'")
})

test_that("predict() takes columns in order when either side has no names", {
  fit <- gpu_kmeans(x, x[c(1, 51, 101), ])
  nd <- x[, 4:1]
  expect_identical(predict(fit, unname(nd)), nearest_center(nd, fit$centers))
  fit0 <- gpu_kmeans(unname(x), unname(x[c(1, 51, 101), ]))
  expect_null(colnames(fit0$centers))
  expect_identical(predict(fit0, nd), nearest_center(nd, fit0$centers))
  expect_error(predict(fit0, nd[, 1:3]), "'newdata' has 3 columns but the centers have 4")
  expect_error(predict(fit, x, "cpu", 6), "unused argument in predict\\(\\): 6")
})

# ---- all.equal() ----------------------------------------------------------

test_that("all.equal() on two identical fits is TRUE (R's regression test for PR#16623)", {
  set.seed(23)
  x2 <- rbind(matrix(rnorm(100, sd = 0.3), ncol = 2),
              matrix(rnorm(100, mean = 1, sd = 0.3), ncol = 2))
  k1 <- gpu_kmeans(x2, 1)
  k2 <- gpu_kmeans(x2, centers = k1$centers)
  stopifnot(all.equal(k1, k2), k1$cluster == 1)
  expect_true(all.equal(k1, k2))
  # run metadata are compared only when asked
  attr(k2, "timing") <- attr(k1, "timing") * 2 + 1
  attr(k2, "device") <- "some other device"
  expect_true(all.equal(k1, k2))
  expect_match(all.equal(k1, k2, check.run = TRUE), "timing", all = FALSE)
  expect_match(all.equal(k1, k2, check.run = TRUE), "device", all = FALSE)
  # a difference in the fit is one
  k3 <- k1
  k3$centers[1, 1] <- k3$centers[1, 1] + 1
  expect_match(all.equal(k1, k3), "centers")
  k3 <- k1
  k3$iter <- 2L
  expect_match(all.equal(k1, k3), "iter")
})

test_that("all.equal() of a fit and the stats fit it reproduces is TRUE", {
  for (seed in 1:3) {
    p <- run_pair(x, 3, nstart = 3, seed = seed)
    expect_false(is.null(attr(p$g, "start_tot_withinss")))
    expect_true(all.equal(p$g, p$s))
  }
  # but not of another fit
  p2 <- run_pair(x, 4, seed = 1)
  expect_type(all.equal(p2$g, p$s), "character")
  expect_error(all.equal(p$g, p$g, check.run = NA), "'check.run' must be TRUE or FALSE")
})

# ---- iter.max ---------------------------------------------------------------

test_that("the default iter.max is 1000, so that a fit converges by default", {
  expect_identical(formals(gpu_kmeans)$iter.max, 1000L)
  expect_identical(formals(stats::kmeans)$iter.max, 10L)
  # boxes, 12 clusters, one random start: stats' default stops before the
  # end for these seeds ...
  for (seed in c(1, 2)) {
    set.seed(seed)
    s10 <- with_warnings(stats::kmeans(boxes, 12, algorithm = "Lloyd"))
    expect_identical(s10$warnings, "did not converge in 10 iterations")
    # ... gpu_kmeans' default goes on to convergence, without a warning, and
    # is then stats' own fit with iter.max = 1000
    p <- expect_kmeans_parity(boxes, 12, iter.max = 1000, seed = seed)
    set.seed(seed)
    expect_silent(g <- gpu_kmeans(boxes, 12))
    expect_null(g$ifault)
    expect_true(all.equal(g, p$s))
    # and with stats' default given explicitly, stats' unfinished fit
    p <- expect_kmeans_parity(boxes, 12, iter.max = 10, seed = seed)
    expect_identical(p$g$ifault, 2L)
    expect_identical(p$g_warn, "did not converge in 10 iterations")
  }
})

test_that("a huge iter.max means no limit; fractional ones are truncated as in stats", {
  for (big in list(Inf, 1e12, 3e9, 2^31, 2^31 - 1)) {
    set.seed(4)
    g <- gpu_kmeans(x, 3, iter.max = big)
    set.seed(4)
    s <- stats::kmeans(x, 3, iter.max = 1000, algorithm = "Lloyd")
    expect_same_fit(g, s)
  }
  # stats cannot take them: as.integer() gives NA
  expect_error(suppressWarnings(stats::kmeans(x, 3, iter.max = 3e9, algorithm = "Lloyd")),
               "'iter.max' must be positive")
  expect_kmeans_parity(x, x[1:3, ], iter.max = 2.7)
  expect_kmeans_parity(x, x[1:3, ], iter.max = 1.2)
  expect_error(gpu_kmeans(x, 3, iter.max = 0.5), "'iter.max' must be positive, not 0.5")
  expect_error(gpu_kmeans(x, 3, iter.max = "10"),
               "'iter.max' must be a single number \\(of iterations\\), not \"10\" \\(a character string\\)")
  expect_error(gpu_kmeans(x, 3, iter.max = 1:2),
               "'iter.max' must be a single number \\(of iterations\\), not an integer vector of length 2")
})

# ---- algorithm = "Hartigan-Wong" / "MacQueen" --------------------------------

test_that("algorithm = 'Hartigan-Wong' and 'MacQueen' are stats::kmeans() itself", {
  for (alg in c("Hartigan-Wong", "MacQueen")) {
    for (seed in 1:3) {
      set.seed(seed)
      g <- suppressMessages(gpu_kmeans(iris[, 1:4], 3, iter.max = 10, nstart = 2, algorithm = alg))
      g_seed <- get_seed()
      set.seed(seed)
      s <- stats::kmeans(iris[, 1:4], 3, nstart = 2, algorithm = alg)
      expect_identical(strip_gk(g), unclass(s))
      expect_identical(g_seed, get_seed())
      expect_identical(class(g), c("gpu_kmeans", "kmeans"))
      expect_identical(attr(g, "backend"), "stats")
      expect_identical(attr(g, "device"), sprintf("CPU, 1 thread (stats::kmeans, %s)", alg))
      expect_identical(names(attr(g, "timing")), c("compute", "total"))
      expect_true(all(attr(g, "timing") >= 0))
      expect_true(all.equal(g, s))
    }
    # a centers matrix, and a number given as 2.5
    g <- suppressMessages(gpu_kmeans(x, x[c(1, 51, 101), ], algorithm = alg))
    expect_identical(strip_gk(g), unclass(stats::kmeans(x, x[c(1, 51, 101), ], algorithm = alg)))
    set.seed(9)
    g <- suppressMessages(gpu_kmeans(faithful, 2.5, iter.max = 10, algorithm = alg))
    set.seed(9)
    expect_identical(strip_gk(g), unclass(stats::kmeans(faithful, 2.5, algorithm = alg)))
    expect_output(print(g), "Backend: stats \\[CPU, 1 thread \\(stats::kmeans")
  }
})

test_that("Hartigan-Wong: stats' warnings, trace output and errors", {
  suppressMessages(gpu_kmeans(x, 2, algorithm = "MacQueen"))  # the one-time message
  ctr <- x[1:5, ]
  s <- with_warnings(stats::kmeans(x, ctr, iter.max = 1))
  g <- with_warnings(gpu_kmeans(x, ctr, iter.max = 1, algorithm = "Hartigan-Wong"))
  expect_true(length(s$warnings) > 0L)
  expect_identical(g$warnings, s$warnings)
  expect_identical(strip_gk(g$value), unclass(s$value))
  out_s <- capture.output(invisible(stats::kmeans(x, ctr, trace = 1)))
  out_g <- capture.output(invisible(gpu_kmeans(x, ctr, iter.max = 10, trace = 1,
                                               algorithm = "Hartigan-Wong")))
  expect_true(length(out_s) > 0L)
  expect_identical(out_g, out_s)
  # what only the Lloyd engines have is refused, not ignored
  expect_error(gpu_kmeans(x, 3, algorithm = "Hartigan-Wong", init = "kmeans++"),
               "init = \"kmeans\\+\\+\" is for algorithm = \"Lloyd\" only")
  expect_error(gpu_kmeans(x, 3, algorithm = "MacQueen", precision = "single"),
               "precision = \"single\" is for algorithm = \"Lloyd\" only")
  expect_error(gpu_kmeans(x, 3, algorithm = "MacQueen", backend = "cuda"),
               "backend = \"cuda\" is for algorithm = \"Lloyd\" only")
  # a cuda default from the options does not stop stats' algorithms
  withr::local_options(gpukmeans.backend = "cuda")
  expect_identical(attr(gpu_kmeans(x, ctr, algorithm = "MacQueen"), "backend"), "stats")
})

test_that("the stats message comes once per session, with its own class", {
  st <- gpukmeans:::.gk_state
  old <- st$stats_told
  on.exit(st$stats_told <- old)
  st$stats_told <- NULL
  expect_message(gpu_kmeans(x, x[1:3, ], algorithm = "Hartigan-Wong"),
                 "runs stats::kmeans\\(\\) itself", class = "gpukmeans_stats")
  expect_silent(gpu_kmeans(x, x[1:3, ], algorithm = "MacQueen"))
  expect_silent(gpu_kmeans(x, x[1:3, ], algorithm = "Hartigan-Wong"))
})

test_that("the default algorithm is Lloyd, the first choice", {
  expect_identical(eval(formals(gpu_kmeans)$algorithm)[1], "Lloyd")
  expect_identical(attr(gpu_kmeans(x, x[1:3, ]), "backend"), "cpu")
})

# ---- numbers stats reads leniently ------------------------------------------

test_that("a fractional number of centers is read as stats reads it", {
  xf <- as.matrix(faithful)
  for (seed in 1:3) {
    p <- expect_kmeans_parity(xf, 2.5, seed = seed)
    expect_identical(nrow(p$g$centers), 2L)
    # the rule of thumb k = sqrt(n / 2)
    p <- expect_kmeans_parity(xf, sqrt(nrow(xf) / 2), seed = seed)
    expect_identical(nrow(p$g$centers), 11L)
    expect_kmeans_parity(xf, 3.9, nstart = 3, seed = seed)
  }
  # few rows, and duplicated ones (the unique(x) path)
  for (seed in 1:6) expect_kmeans_parity(xf[1:4, ], 2.5, seed = seed)
  for (seed in 1:6) expect_kmeans_parity(xf[c(1:3, 1:3, 1:3), ], 2.9, seed = seed)
  expect_error(gpu_kmeans(xf, 0.5), "'centers' must be at least 1, not 0.5")
})

test_that("a fractional nstart >= 2 is rounded down as in stats; 1 < nstart < 2 is refused", {
  xf <- as.matrix(faithful)
  for (seed in 1:3) {
    p <- expect_kmeans_parity(xf, 3, nstart = 2.5, seed = seed)
    q <- run_pair(xf, 3, nstart = 2, seed = seed)
    expect_identical(p$g_seed, q$g_seed)
    expect_length(attr(p$g, "start_tot_withinss"), 2L)
  }
  expect_error(suppressWarnings(stats::kmeans(xf, 3, nstart = 1.5, algorithm = "Lloyd")))
  expect_error(gpu_kmeans(xf, 3, nstart = 1.5), "'nstart' must be a positive whole number, not 1.5")
  expect_error(gpu_kmeans(xf, 3, nstart = TRUE), "'nstart' must be a positive whole number, not TRUE")
})

# ---- the generator after an error --------------------------------------------

test_that("after an error stats raises after drawing, the generator is where stats leaves it", {
  xna <- x
  xna[7, 2] <- NA
  xinf <- x
  xinf[3, 1] <- Inf
  cases <- list(
    list(x, 3, iter.max = 0), list(x, 3, iter.max = -1), list(x, 3, iter.max = NA),
    list(x, 3, iter.max = 0.5), list(x, 3, iter.max = "a"), list(x, 3, iter.max = 0, nstart = 3),
    list(x, 2.5, iter.max = 0), list(x, 1, iter.max = 0),
    list(xna, 3), list(xna, 3, nstart = 4), list(xinf, 2), list(xinf, 1),
    list(xinf, 3, iter.max = 0),
    list(iris, 3),                          # a factor column
    list(matrix(letters[1:20], 10), 2),     # character data
    list(rbind(x[1:2, ], x[1:2, ]), 3)       # more centers than distinct points
  )
  for (i in seq_along(cases)) {
    for (alg in c("Lloyd", "Hartigan-Wong")) {
      args <- c(cases[[i]], algorithm = alg)
      set.seed(i)
      fresh <- get_seed()
      expect_error(suppressWarnings(do.call(stats::kmeans, args)))
      s_seed <- get_seed()
      set.seed(i)
      expect_error(suppressMessages(do.call(gpu_kmeans, args)))
      expect_identical(get_seed(), s_seed, label = sprintf("case %d, %s", i, alg))
      # stats did draw before failing, so this can fail
      expect_false(identical(s_seed, fresh))
    }
  }
})

test_that("those errors name the real problem", {
  xna <- x
  xna[7, 2] <- NA
  expect_error(gpu_kmeans(xna, 3), "'x' must not contain NA, NaN or infinite values \\(found NA in row 7, column 2\\)")
  expect_error(gpu_kmeans(iris, 3), "'x' must be numeric: column 'Species' is not numeric \\(a factor\\)")
  expect_error(gpu_kmeans(matrix(letters[1:20], 10), 2), "'x' must be numeric .*not a character matrix")
  expect_error(gpu_kmeans(matrix(1i, 5, 2), 2), "'x' must be numeric .*not a complex matrix")
  expect_error(gpu_kmeans(list(1, 2), 1), "'x' must be numeric .*not a list")
  expect_error(gpu_kmeans(x, 3, iter.max = 0), "'iter.max' must be positive, not 0")
})

test_that("errors stats raises before drawing draw nothing here either", {
  for (case in list(list(x, 200), list(x, -1), list(x, NA_real_), list(x, Inf),
                    list(x, 3, nstart = NA), list(x, 3, nstart = 0), list(x, x[c(1, 1), ]))) {
    set.seed(3)
    before <- get_seed()
    expect_error(suppressWarnings(do.call(stats::kmeans, c(case, algorithm = "Lloyd"))))
    expect_identical(get_seed(), before)
    expect_error(do.call(gpu_kmeans, case))
    expect_identical(get_seed(), before)
  }
})

# ---- R's regression data for PR#15364 ----------------------------------------

test_backends("PR#15364 data (points 1 and 2 ulps apart): stats' labels, sizes and warnings", function(backend) {
  rr <- c(rep(-0.4, 5), rep(-0.4 - 1.11e-16, 14), -.5)
  expect_identical(length(unique(rr)), 3L)
  for (threads in 1:2) {
    withr::local_options(gpukmeans.threads = threads, gpukmeans.work_per_thread = 0)
    for (seed in 1:20) {
      p <- run_pair(rr, 3, seed = seed, backend = backend)
      expect_identical(p$g_seed, p$s_seed)
      expect_identical(sum(p$g$size), 20L)
      if (backend == "cpu") {
        expect_identical(p$g$cluster, p$s$cluster)
        expect_identical(p$g$size, p$s$size)
        expect_identical(p$g$iter, p$s$iter)
        expect_identical(p$g_warn, p$s_warn)
        expect_equal(p$g$centers, p$s$centers, tolerance = 1e-15)
        if (threads == 1L) expect_identical(p$g$centers, p$s$centers)
      }
    }
  }
})
