# Observation weights (gpu_kmeans(weights =); R/weights.R, src/weights.h,
# src/cpu_weights.h).

# Small data with integer coordinates and whole weights, the rows replicated.
# (wmin = 0: rows of weight 0 too, which can take the weighted fit one
# iteration more to settle their own labels.)
wt_data <- function(n = 60, d = 2, seed = 1, wmax = 4, wmin = 1) {
  set.seed(seed)
  x <- matrix(sample(0:20, n * d, TRUE), n, d)
  w <- sample(wmin:wmax, n, TRUE)
  w[1:3] <- c(1, 2, 3)  # some weight > 1 and some rows of weight 1
  idx <- rep(seq_len(n), w)
  list(x = x, w = w, idx = idx, xr = x[idx, , drop = FALSE])
}

# Real-valued data (sums rounded at every step) with whole weights.
wt_blobs <- function(n = 200, d = 3, k = 4, seed = 2, wmax = 5, wmin = 1) {
  set.seed(seed)
  x <- make_blobs(n, d, k, sd = 2, spread = 10)
  w <- sample(wmin:wmax, n, TRUE)
  idx <- rep(seq_len(n), w)
  list(x = x, w = w, idx = idx, xr = x[idx, , drop = FALSE])
}

# The components a weighted fit shares with the fit of the replicated rows
# (all but size, and the cluster of each replicated row).
# (zero: there are rows of weight 0, which can take one more iteration.)
same_as_replicated <- function(a, b, idx, zero = FALSE) {
  expect_identical(unname(a$centers), unname(b$centers))
  expect_identical(a$withinss, b$withinss)
  expect_identical(a$tot.withinss, b$tot.withinss)
  expect_identical(unname(a$cluster[idx]), unname(b$cluster))
  if (zero) expect_true((a$iter - b$iter) %in% 0:1) else expect_identical(a$iter, b$iter)
  if (!zero) expect_identical(a$ifault, b$ifault)
}

# ---- errors -----------------------------------------------------------------

test_that("bad weights are errors naming the problem, and draw no random numbers", {
  x <- as.matrix(iris[, 1:4])
  n <- nrow(x)
  bad <- list(
    list(c(-1, rep(1, n - 1)), "'weights' must be non-negative \\(found -1 at position 1\\)"),
    list(c(1, 2, -0.5, -3, rep(1, n - 4)), "non-negative \\(found -0.5 at position 3, and 1 more\\)"),
    list(c(NA, rep(1, n - 1)), "must not contain NA or NaN \\(found NA at position 1\\)"),
    list(c(2, NaN, rep(1, n - 2)), "must not contain NA or NaN \\(found NaN at position 2\\)"),
    list(c(rep(1, n - 1), NA_integer_), "NA or NaN \\(found NA at position 150\\)"),
    list(c(Inf, rep(1, n - 1)), "'weights' must be finite \\(found Inf at position 1\\)"),
    list(c(1, -Inf, rep(1, n - 2)), "must be finite \\(found -Inf at position 2\\)"),
    list(rep(1, n - 1), "one value per row of 'x' \\(150\\), not 149"),
    list(rep(1, n + 1), "one value per row of 'x' \\(150\\), not 151"),
    list(numeric(0), "one value per row of 'x' \\(150\\), not 0"),
    list(2, "one value per row of 'x' \\(150\\), not 1"),
    list(rep(0, n), "must not all be zero"),
    list(rep(0L, n), "must not all be zero"),
    list(rep("1", n), "'weights' must be a numeric vector .* not a character vector"),
    list(rep(TRUE, n), "must be a numeric vector .* not a logical vector"),
    list(factor(rep(1, n)), "must be a numeric vector .* not a factor"),
    list(as.list(rep(1, n)), "must be a numeric vector .* not a list"),
    list(data.frame(w = rep(1, n)), "must be a numeric vector .* not a data frame"),
    list(matrix(1, n, 2), "must be a numeric vector .* not a numeric matrix"),
    list(complex(real = rep(1, n)), "must be a numeric vector .* not a complex vector"))
  for (b in bad) {
    set.seed(4)
    before <- get_seed()
    expect_error(gpu_kmeans(x, 3, weights = b[[1]]), b[[2]])
    expect_identical(get_seed(), before)
  }
  # one error per problem, named; not a wrong fit
  expect_error(gpu_kmeans(x, 3, weights = c(-1, NA, rep(1, n - 2))), "NA or NaN")
})

test_that("weights with other algorithms, too many centers, backend = 'cuda' are clear errors", {
  x <- as.matrix(iris[, 1:4])
  w <- rep(1:2, 75)
  expect_error(gpu_kmeans(x, 3, algorithm = "Hartigan-Wong", weights = w),
               "'weights' are for algorithm = \"Lloyd\" only: algorithm = \"Hartigan-Wong\"")
  expect_error(gpu_kmeans(x, 3, algorithm = "MacQueen", weights = w), "\"Lloyd\" only")
  w0 <- c(1, 2, rep(0, 148))
  expect_error(gpu_kmeans(x, 3, weights = w0), "more cluster centers than rows with positive weight \\(3 > 2\\)")
  expect_error(gpu_kmeans(x, 3, weights = w0, init = "kmeans++"), "rows with positive weight \\(3 > 2\\)")
  # three rows of positive weight, two distinct
  w3 <- c(1, 1, 1, rep(0, 147))
  x3 <- x
  x3[2, ] <- x3[1, ]
  expect_error(gpu_kmeans(x3, 3, weights = w3), "more cluster centers than distinct data points with positive weight")
  expect_error(gpu_kmeans(x3, 3, nstart = 2, weights = w3), "distinct data points with positive weight")
  for (init in c("kmeans++", "kmeans||")) {
    err <- tryCatch(gpu_kmeans(x3, 3, weights = w3, init = init), error = identity)
    expect_s3_class(err, "gpukmeans_data_error")
    expect_match(conditionMessage(err), "more cluster centers than distinct data points with positive weight")
  }
  # the CUDA engine fits weights: without a device, backend = "cuda" fails as
  # without weights (test-weights-cuda.R runs them on a GPU)
  expect_true(gpukmeans:::gk_cuda_supports_weights_cpp())
  if (!has_gpu()) {
    expect_error(gpu_kmeans(x, 3, weights = w, backend = "cuda"), "not available")
    expect_error(gpu_kmeans(x, 3, weights = rep(1, 150), backend = "cuda"), "not available")
  }
})

test_that("the engine refuses weights it cannot fit (the driver's check)", {
  # lloyd_parts (the step interface) has no weights: its engines get none
  # from R; gk_fit_cpp with an engine without weights is refused in C++.
  x <- as.matrix(iris[, 1:4])
  st <- list(x[c(1, 51, 101), ])
  if (!has_gpu()) {  # (with a device the CUDA engine fits them: test-weights-cuda.R)
    err <- tryCatch(gpukmeans:::gk_fit_cpp(x, st, 10L, FALSE, "cuda", 1L, 0L, FALSE, NULL, Inf, list(),
                                            weights = rep(2, 150)), error = identity)
    expect_s3_class(err, "gpukmeans_error")  # not built / no device: never a fit
  }
  err <- tryCatch(gpukmeans:::gk_fit_cpp(x, st, 10L, FALSE, "cpu", 1L, 0L, FALSE, NULL, Inf, list(),
                                          weights = rep(2, 149)), error = identity)
  expect_s3_class(err, "gpukmeans_invalid")
  # the spherical engine has no weights: refused in C++ too
  err <- tryCatch(gpukmeans:::gk_fit_cpp(x / sqrt(rowSums(x^2)), list(st[[1]] / sqrt(rowSums(st[[1]]^2))), 10L, FALSE, "cpu",
                                          1L, 0L, FALSE, NULL, Inf, list(), spherical = TRUE,
                                          weights = rep(2, 150)), error = identity)
  expect_s3_class(err, "gpukmeans_unsupported")
})

test_that("backend = 'auto' runs weighted fits on the CPU engine, saying so once where a GPU would run them", {
  x <- as.matrix(iris[, 1:4])
  fit <- gpu_kmeans(x, 3, weights = rep(1:2, 75), backend = "auto")
  expect_identical(attr(fit, "backend"), "cpu")
  st <- gpukmeans:::.gk_state
  old <- st$weights_told
  on.exit(st$weights_told <- old)
  st$weights_told <- NULL
  wb <- gpukmeans:::weighted_backend
  expect_message(e <- wb("auto", 0L, 1e9, 2, supports = FALSE, gpu_reason = function() NULL),
                 class = "gpukmeans_fallback")
  expect_identical(e, "cpu")
  expect_silent(e <- wb("auto", 0L, 1e9, 2, supports = FALSE, gpu_reason = function() NULL))  # once
  expect_identical(e, "cpu")
  st$weights_told <- NULL
  expect_silent(wb("auto", 0L, 10, 2, supports = FALSE, gpu_reason = function() NULL))  # small: CPU anyway
  expect_silent(wb("auto", 0L, 1e9, 2, supports = FALSE, gpu_reason = function() "no GPU"))
  expect_identical(wb("cpu", 0L, 1e9, 2, supports = FALSE, gpu_reason = function() NULL), "cpu")
  expect_error(wb("cuda", 0L, 1e9, 2, supports = FALSE, gpu_reason = function() NULL),
               class = "gpukmeans_unsupported")
})

# ---- weights of 1 -------------------------------------------------------------

test_that("weights = rep(1, n) is the fit without weights (identical, every component)", {
  b <- wt_blobs(n = 300)
  x <- b$x
  cases <- list(list(init = "random", nstart = 1), list(init = "random", nstart = 3),
                list(init = "kmeans++", nstart = 2), list(init = "kmeans||", nstart = 2))
  for (cs in cases) for (precision in c("double", "single")) for (wpt in c(2^17, 0)) {
    withr::local_options(gpukmeans.work_per_thread = wpt)  # 0: both threads on this small fit
    set.seed(10); a <- gpu_kmeans(x, 4, nstart = cs$nstart, init = cs$init, precision = precision)
    sa <- get_seed()
    set.seed(10); g <- gpu_kmeans(x, 4, nstart = cs$nstart, init = cs$init, precision = precision,
                                  weights = rep(1, nrow(x)))
    expect_identical(strip_gk(g), strip_gk(a))
    expect_identical(get_seed(), sa)
    set.seed(10); g <- gpu_kmeans(x, 4, nstart = cs$nstart, init = cs$init, precision = precision,
                                  weights = rep(1L, nrow(x)))
    expect_identical(strip_gk(g), strip_gk(a))
  }
})

# ---- whole weights are replicated rows ----------------------------------------

test_that("whole weights give the bits of the one-thread fit of the replicated rows (double, CPU)", {
  withr::local_options(gpukmeans.threads = 1L)
  for (s in 1:4) {
    zero <- s > 2
    for (dat in list(wt_data(seed = s, wmin = 1 - zero), wt_blobs(seed = s, wmin = 1 - zero))) {
      c0 <- dat$x[which(dat$w > 0)[c(1, 6, 11)], , drop = FALSE]
      a <- gpu_kmeans(dat$x, c0, weights = dat$w)
      b <- gpu_kmeans(dat$xr, c0)
      same_as_replicated(a, b, dat$idx, zero)
      expect_identical(a$totss, b$totss)
      expect_identical(a$betweenss, b$betweenss)
      # size counts rows, not weights
      expect_identical(a$size, tabulate(a$cluster, 3))
      expect_identical(as.numeric(tapply(dat$w, factor(a$cluster, 1:3), sum)), as.numeric(b$size))
    }
  }
})

test_that("a weighted fit does not depend on the threads; replicated rows: one thread's bits", {
  dat <- wt_blobs(n = 3000, d = 4, k = 6, seed = 5, wmax = 7)
  c0 <- dat$x[which(dat$w > 0)[1:6], ]
  fits <- lapply(1:2, function(t) {
    withr::local_options(gpukmeans.threads = t, gpukmeans.work_per_thread = 0)
    gpu_kmeans(dat$x, c0, weights = dat$w)
  })
  expect_identical(strip_gk(fits[[1]]), strip_gk(fits[[2]]))
  expect_identical(attr(fits[[2]], "device"), "CPU, 2 threads")
  withr::local_options(gpukmeans.threads = 1L)
  same_as_replicated(fits[[2]], gpu_kmeans(dat$xr, c0), dat$idx)
  # the same with k-means++ starts drawn from the same seed, on 2 threads
  withr::local_options(gpukmeans.threads = 2L, gpukmeans.work_per_thread = 0)
  set.seed(8); p2 <- gpu_kmeans(dat$x, 6, init = "kmeans++", nstart = 2, weights = dat$w)
  withr::local_options(gpukmeans.threads = 1L)
  set.seed(8); p1 <- gpu_kmeans(dat$x, 6, init = "kmeans++", nstart = 2, weights = dat$w)
  expect_identical(strip_gk(p1), strip_gk(p2))
})

test_that("large whole weights (long runs of additions) give the replicated fit's bits", {
  withr::local_options(gpukmeans.threads = 1L)
  set.seed(3)
  x <- make_blobs(40, 2, 3, sd = 3, spread = 20)
  w <- c(20000, 1, 1, 12345, sample(1:3000, 36, TRUE))
  idx <- rep(seq_len(40), w)
  c0 <- x[c(1, 2, 4), ]
  a <- gpu_kmeans(x, c0, weights = w)
  b <- gpu_kmeans(x[idx, ], c0)
  same_as_replicated(a, b, idx)
  expect_identical(a$totss, b$totss)
  # the adder itself, on random and fixed cases (ties, sums crossing 0, long runs)
  expect_identical(unname(gpukmeans:::gk_repeat_block_check_cpp(3000L, 7)), c(0L, 0L))
})

test_that("totss of whole weights whose runs cross and span totss' chunks of 2^16 rows is the replicated fit's", {
  set.seed(5)
  x <- make_blobs(9, 3, 2, sd = 1.5, spread = 8)
  # runs that start inside a chunk and end in a later one, span several
  # whole chunks, end exactly on a boundary; rows of weight 0 and 1
  w <- c(3, 150000, 70000, 0, 65536 - 220003 %% 65536, 1, 2^17 + 5, 0, 2)
  idx <- rep(seq_len(9), w)
  c0 <- x[c(1, 7), ]
  for (threads in 1:2) {
    withr::local_options(gpukmeans.threads = threads)
    a <- gpu_kmeans(x, c0, weights = w, iter.max = 2)
    b <- gpu_kmeans(x[idx, ], c0, iter.max = 2)
    expect_identical(a$totss, b$totss)
    expect_equal(a$totss, sum(scale(x[idx, ], scale = FALSE)^2), tolerance = 1e-13)
  }
})

test_that("totss of fractional and whole weights mixed over more than one chunk of 2^16 rows is the weighted sum", {
  set.seed(6)
  n <- 70000
  x <- cbind(rnorm(n, 50, 3), runif(n, -1, 1))
  w <- sample(c(0.25, 1, 2.5, 3), n, TRUE)
  w[c(10, 40000)] <- c(1e5, 2^17)  # whole runs longer than a chunk, among fractional rows
  m <- colSums(w * x) / sum(w)
  a <- suppressWarnings(gpu_kmeans(x, x[1:3, ], weights = w, iter.max = 1, backend = "cpu"))  # (not converged)
  expect_equal(a$totss, sum(w * rowSums(sweep(x, 2, m)^2)), tolerance = 1e-12)
})

test_that("whole weights up to 2^53 on data with zeros and tiny values end at once (the CPU engine's long runs)", {
  set.seed(8)
  x <- cbind(make_blobs(3000, 2, 3, sd = 2, spread = 10), 0)  # a column of zeros: zero terms
  x[1:5, 1] <- c(1e-310, 5e-324, 3e-320, 2.2e-308, 0)
  c0 <- x[c(10, 20, 30), ]
  for (w in list(rep(2^53, 3000), rep(2^40, 3000), sample(c(1, 2^45, 2^53), 3000, TRUE))) {
    # (such weights repeat rows 2^40..2^53 times: the sums of the replicated
    # rows in stats' order stall, as stats' would; the point here is that the
    # fit ends, on any number of threads, with the same result)
    a <- withr::with_options(list(gpukmeans.threads = 1L),
                             suppressWarnings(gpu_kmeans(x, c0, weights = w, backend = "cpu", iter.max = 50)))
    b <- withr::with_options(list(gpukmeans.threads = 2L),
                             suppressWarnings(gpu_kmeans(x, c0, weights = w, backend = "cpu", iter.max = 50)))
    expect_identical(a$cluster, b$cluster)
    expect_identical(a$centers, b$centers)
    expect_true(all(is.finite(a$centers)))
    expect_true(all(a$centers[, 3] == 0))
  }
})

test_that("whole weights equal stats::kmeans on the replicated rows (random starts, nstart >= 2: the same draws)", {
  for (s in 1:4) {
    dat <- wt_blobs(n = 150, seed = 20 + s)
    set.seed(s); ra <- with_warnings(gpu_kmeans(dat$x, 4, nstart = 3, weights = dat$w, iter.max = 10))
    a <- ra$value
    sa <- get_seed()
    set.seed(s); r <- with_warnings(stats::kmeans(dat$xr, 4, nstart = 3, algorithm = "Lloyd"))
    b <- r$value
    expect_identical(get_seed(), sa)
    expect_identical(ra$warnings, r$warnings)
    same_as_replicated(a, b, dat$idx)
    expect_equal(a$totss, b$totss, tolerance = 1e-14)
    expect_equal(a$betweenss, b$betweenss, tolerance = 1e-12)
  }
  # given centers, several k, single start
  dat <- wt_data(seed = 9)
  for (k in 2:5) {
    c0 <- dat$x[which(dat$w > 0)[seq_len(k) * 3], , drop = FALSE]
    a <- gpu_kmeans(dat$x, c0, weights = dat$w, iter.max = 10)
    b <- suppressWarnings(stats::kmeans(dat$xr, c0, algorithm = "Lloyd"))
    same_as_replicated(a, b, dat$idx)
  }
})

test_that("k-means++ with whole weights draws the replicated rows' centers when sums are exact; its first center always", {
  dat <- wt_data(seed = 11)
  for (s in 1:15) {
    set.seed(s); a <- gpukmeans:::gk_init_rows_weighted(dat$x, 5, "kmeans++", weights = dat$w)[[1]]
    set.seed(s); b <- gpukmeans:::gk_init_rows(dat$xr, 5, "kmeans++")[[1]]
    expect_identical(a, dat$idx[b])
  }
  # real-valued data: the first center is still the replicated one's
  dat <- wt_blobs(seed = 12)
  for (s in 1:10) {
    set.seed(s); a <- gpukmeans:::gk_init_rows_weighted(dat$x, 4, "kmeans++", weights = dat$w)[[1]]
    set.seed(s); b <- gpukmeans:::gk_init_rows(dat$xr, 4, "kmeans++")[[1]]
    expect_identical(a[1], dat$idx[b[1]])
    expect_true(all(dat$w[a] > 0))
  }
})

# ---- zero weights --------------------------------------------------------------

test_that("rows of weight 0 are as if dropped (centers, withinss, totss identical), but get a cluster", {
  for (s in 1:3) {
    dat <- wt_blobs(n = 250, seed = 30 + s, wmax = 3, wmin = 0)
    w <- dat$w
    w[w > 0] <- w[w > 0] + 0.25 * (s - 1)  # whole weights, then fractional ones
    pos <- which(w > 0)
    zero <- which(w == 0)
    expect_gt(length(zero), 10)
    for (init in c("random", "matrix")) {
      cen <- if (init == "random") 4 else dat$x[pos[c(2, 9, 17, 30)], ]
      set.seed(s); a <- gpu_kmeans(dat$x, cen, weights = w, nstart = 2)
      sa <- get_seed()
      set.seed(s); b <- gpu_kmeans(dat$x[pos, ], cen, weights = w[pos], nstart = 2)
      expect_identical(get_seed(), sa)  # random starts: stats' draws on x[w > 0, ]
      for (comp in c("centers", "withinss", "tot.withinss", "totss", "betweenss"))
        expect_identical(unname(a[[comp]]), unname(b[[comp]]))
      expect_identical(unname(a$cluster[pos]), unname(b$cluster))
      # a row of weight 0 goes to its nearest center, and is counted in size
      expect_identical(unname(a$cluster[zero]), nearest_center(dat$x[zero, ], a$centers))
      expect_identical(a$size, b$size + tabulate(a$cluster[zero], 4))
      # it can take one more iteration to settle its own label
      expect_true((a$iter - b$iter) %in% 0:1)
    }
  }
})

test_that("random starts never draw a row of weight 0: stats' draws on x[w > 0, ]", {
  x <- as.matrix(iris[, 1:4])
  w <- rep(c(0, 1, 2), 50)
  pos <- which(w > 0)
  for (nstart in c(1, 4)) {
    # the weighted fit from stats' starts on x[w > 0, ]: with given centers
    set.seed(2); a <- suppressWarnings(gpu_kmeans(x, 5, weights = w, nstart = nstart, iter.max = 2))
    sa <- get_seed()
    set.seed(2)
    if (nstart == 1) {
      c0 <- x[pos[sample.int(length(pos), 5)], ]
      b <- suppressWarnings(gpu_kmeans(x, c0, weights = w, iter.max = 2))
    } else {
      keep <- pos[!duplicated(x[pos, ])]
      fits <- lapply(1:nstart, function(i) suppressWarnings(
        gpu_kmeans(x, x[keep[sample.int(length(keep), 5)], ], weights = w, iter.max = 2)))
      b <- fits[[which.min(vapply(fits, function(f) f$tot.withinss, 0))]]
    }
    expect_identical(get_seed(), sa)
    expect_identical(strip_gk(a)$centers, strip_gk(b)$centers)
  }
  # rows drawn by the seeded inits are rows of positive weight
  for (init in c("kmeans++", "kmeans||")) for (s in 1:10) {
    set.seed(s)
    rows <- unlist(gpukmeans:::gk_init_rows_weighted(x, 8, init, weights = w, nstart = 2))
    expect_true(all(w[rows] > 0))
  }
})

test_that("a cluster whose rows all weigh 0 is empty: NaN center and stats' warning, as on the dropped rows", {
  x <- matrix(c(0, 0.1, 10, 10.1, 20), ncol = 1)
  w <- c(1, 1, 1, 1, 0)
  c0 <- matrix(c(0, 10, 20), ncol = 1)
  a <- with_warnings(gpu_kmeans(x, c0, weights = w, iter.max = 10))
  b <- with_warnings(stats::kmeans(x[1:4, , drop = FALSE], c0, algorithm = "Lloyd"))
  expect_identical(a$warnings, b$warnings)
  expect_true(length(a$warnings) > 0)
  expect_identical(unname(a$value$centers), unname(b$value$centers))
  expect_true(is.nan(a$value$centers[3]))
  expect_identical(a$value$withinss, b$value$withinss)
  expect_identical(a$value$size, c(2L, 3L, 0L))  # row 5 (weight 0) moved to cluster 2
  expect_identical(unname(a$value$cluster), c(1L, 1L, 2L, 2L, 2L))
})

# ---- weighted sums and the initialisation -------------------------------------

test_that("centers, withinss and totss are weighted sums (fractional weights, a plain R reference)", {
  set.seed(40)
  x <- make_blobs(300, 3, 4, sd = 2, spread = 10)
  w <- runif(300) * 3
  w[1:20] <- 0
  for (precision in c("double", "single")) {
    fit <- gpu_kmeans(x, 4, weights = w, init = "kmeans++", precision = precision)
    tol <- if (precision == "double") 1e-13 else 1e-5
    for (j in 1:4) {
      r <- fit$cluster == j & w > 0
      expect_equal(unname(fit$centers[j, ]), colSums(w[r] * x[r, , drop = FALSE]) / sum(w[r]), tolerance = tol)
      expect_equal(fit$withinss[j], sum(w * rowSums((x - fit$centers[fit$cluster, ])^2) * (fit$cluster == j)),
                   tolerance = tol)
    }
    m <- colSums(w * x) / sum(w)
    expect_equal(fit$totss, sum(w * rowSums(sweep(x, 2, m)^2)), tolerance = 1e-13)
    expect_identical(fit$tot.withinss, sum(fit$withinss))
    expect_identical(fit$betweenss, fit$totss - fit$tot.withinss)
    expect_identical(fit$size, tabulate(fit$cluster, 4))
    expect_identical(unname(fit$cluster), nearest_center(x, fit$centers))
  }
  # k = 1: the weighted mean
  fit <- gpu_kmeans(x, 1, weights = w)
  expect_equal(unname(fit$centers[1, ]), colSums(w * x) / sum(w), tolerance = 1e-14)
  expect_equal(fit$tot.withinss, fit$totss, tolerance = 1e-13)
  expect_identical(fit$iter, 1L)
})

test_that("weights change the fit: a heavy row pulls its center; the fit minimises the weighted objective", {
  x <- matrix(c(0, 1, 2, 10, 11, 12), ncol = 1)
  fit <- gpu_kmeans(x, matrix(c(0, 10), ncol = 1), weights = c(1, 1, 1, 1, 1, 8))
  expect_identical(unname(fit$centers[, 1]), c(1, (10 + 11 + 8 * 12) / 10))
  expect_identical(fit$withinss[1], 2)
})

test_that("weighted k-means++ and k-means|| are reproducible with set.seed and follow the weights", {
  x <- as.matrix(iris[, 1:4])
  w <- rep(c(1, 0.5, 3), 50)
  for (init in c("kmeans++", "kmeans||")) {
    set.seed(5); a <- gpu_kmeans(x, 3, init = init, weights = w, nstart = 2)
    set.seed(5); b <- gpu_kmeans(x, 3, init = init, weights = w, nstart = 2)
    expect_identical(strip_gk(a), strip_gk(b))
    set.seed(5); r1 <- gpukmeans:::gk_init_rows_weighted(x, 3, init, weights = w, nstart = 3)
    set.seed(5); r2 <- gpukmeans:::gk_init_rows_weighted(x, 3, init, weights = w, nstart = 3)
    expect_identical(r1, r2)
    # a row with almost all the weight is always a center
    wh <- rep(1e-6, 150)
    wh[77] <- 1e6
    for (s in 1:5) {
      set.seed(s)
      expect_true(77L %in% gpukmeans:::gk_init_rows_weighted(x, 3, init, weights = wh)[[1]])
    }
    # k-means++'s first center: with probability proportional to the weight
    if (init == "kmeans++") {
      set.seed(1)
      first <- vapply(1:400, function(i) gpukmeans:::gk_init_rows_weighted(x, 2, init, weights = w)[[1]][1], 1L)
      share <- as.vector(table(w[first])) / 400  # shares of weights 0.5, 1, 3
      expect_equal(share, c(0.5, 1, 3) / 4.5, tolerance = 0.25)
    }
  }
})

test_that("nstart > 1 keeps the start with the smallest weighted tot.withinss", {
  dat <- wt_blobs(n = 400, k = 6, seed = 50)
  w <- dat$w + 0.5
  set.seed(3); fit <- suppressWarnings(gpu_kmeans(dat$x, 6, nstart = 6, weights = w, iter.max = 3))
  starts <- attr(fit, "start_tot_withinss")
  expect_length(starts, 6)
  expect_identical(fit$tot.withinss, min(starts))
  # each start as a fit of its own, from the same draws (stats' draws among distinct rows)
  set.seed(3)
  keep <- which(!duplicated(dat$x))
  one <- vapply(1:6, function(i) {
    c0 <- dat$x[keep[sample.int(length(keep), 6)], ]
    suppressWarnings(gpu_kmeans(dat$x, c0, weights = w, iter.max = 3))$tot.withinss
  }, 0)
  expect_identical(one, starts)
  expect_identical(fit$tot.withinss, one[which.min(one)])
})

test_that("a data frame, integer weights and names: the same fit as a matrix and doubles", {
  df <- iris[, 1:4]
  w <- rep(1:3, 50)
  names(w) <- rownames(df)
  set.seed(1); a <- gpu_kmeans(df, 3, weights = w, nstart = 2)
  set.seed(1); b <- gpu_kmeans(as.matrix(df), 3, weights = as.double(w), nstart = 2)
  expect_identical(strip_gk(a), strip_gk(b))
  expect_identical(colnames(a$centers), names(df))
  # a one-column matrix of weights is a vector
  set.seed(1); m <- gpu_kmeans(df, 3, weights = matrix(w), nstart = 2)
  expect_identical(strip_gk(m), strip_gk(a))
})

test_that("single precision is close to double precision with weights", {
  dat <- wt_blobs(n = 2000, d = 5, k = 5, seed = 60, wmax = 6)
  w <- dat$w * 0.7
  c0 <- dat$x[which(w > 0)[1:5], ]
  d <- gpu_kmeans(dat$x + 1e4, c0 + 1e4, weights = w)
  s <- gpu_kmeans(dat$x + 1e4, c0 + 1e4, weights = w, precision = "single")
  expect_identical(s$cluster, d$cluster)
  expect_equal(s$centers, d$centers, tolerance = 1e-6)
  expect_equal(s$withinss, d$withinss, tolerance = 1e-4)
  expect_identical(s$totss, d$totss)  # totss: always from the double data
  # whole weights in single precision: the weighted fit of the same stored values
  withr::local_options(gpukmeans.threads = 2L, gpukmeans.work_per_thread = 0)
  s2 <- gpu_kmeans(dat$x + 1e4, c0 + 1e4, weights = w, precision = "single")
  expect_identical(strip_gk(s2), strip_gk(s))
})

test_that("the fit of weights is a kmeans object: methods, all.equal, broom", {
  x <- as.matrix(iris[, 1:4])
  w <- rep(c(0.5, 2, 1), 50)
  set.seed(1); fit <- gpu_kmeans(x, 3, weights = w, nstart = 3)
  expect_s3_class(fit, c("gpu_kmeans", "kmeans"), exact = TRUE)
  expect_identical(names(fit), names(stats::kmeans(x, 3)))
  expect_null(attr(fit, "weights"))
  expect_identical(predict(fit, x), unname(fit$cluster))
  expect_identical(unname(fitted(fit, "classes")), unname(fit$cluster))
  expect_true(isTRUE(all.equal(fit, fit)))
  set.seed(1); fit2 <- gpu_kmeans(x, 3, weights = w * 2, nstart = 3)
  expect_true(isTRUE(all.equal(fit$centers, fit2$centers)))
  expect_false(isTRUE(all.equal(fit, fit2)))  # withinss doubled
  expect_equal(fit2$tot.withinss, 2 * fit$tot.withinss, tolerance = 1e-14)
  out <- capture.output(print(fit))
  expect_false(any(grepl("weight", out)))
  skip_if_not_installed("broom")
  g <- broom::glance(fit)
  expect_identical(g$tot.withinss, fit$tot.withinss)
  expect_identical(g$totss, fit$totss)
  td <- broom::tidy(fit)
  expect_identical(td$size, fit$size)
  expect_identical(as.integer(broom::augment(fit, data = iris)$.cluster), unname(fit$cluster))
})

test_backends("weights on each engine: both engines fit them (the same labels; centers equal to rounding)", function(backend) {
  x <- as.matrix(iris[, 1:4])
  w <- rep(1:3, 50)
  set.seed(1); fit <- gpu_kmeans(x, 3, weights = w)
  expect_identical(attr(fit, "backend"), backend)
  set.seed(1); ref <- gpu_kmeans(x, 3, weights = w, backend = "cpu")
  # (the CPU engine adds in stats' order, the CUDA engine exactly: as without weights)
  expect_equal(unname(fit$centers), unname(ref$centers), tolerance = 1e-14)
  expect_identical(fit$cluster, ref$cluster)
  expect_identical(fit$iter, ref$iter)
})

test_that("trace shows the weighted tot.withinss", {
  x <- as.matrix(iris[, 1:4])
  w <- rep(c(1, 2, 0.5), 50)
  out <- capture.output(fit <- gpu_kmeans(x, x[c(1, 51, 101), ], weights = w, trace = TRUE))
  last <- as.numeric(sub(".*tot.withinss = ", "", out[length(out)]))
  expect_equal(last, fit$tot.withinss, tolerance = 1e-8)
  expect_false(isTRUE(all.equal(last, gpu_kmeans(x, x[c(1, 51, 101), ])$tot.withinss, tolerance = 1e-3)))
})

test_that("the example of ?gpu_kmeans: whole weights are stats::kmeans on the repeated rows", {
  w <- rep(1:3, length.out = nrow(faithful))
  set.seed(3); a <- gpu_kmeans(faithful, 2, nstart = 2, weights = w)
  set.seed(3); b <- stats::kmeans(faithful[rep(seq_len(nrow(faithful)), w), ], 2, nstart = 2, iter.max = 100,
                                  algorithm = "Lloyd")
  expect_identical(unname(a$centers), unname(b$centers))
  expect_identical(a$tot.withinss, b$tot.withinss)
})

test_that("very large and very small weights: the fit of weights 1 (centers), the sums of squares in their units", {
  x <- as.matrix(iris[, 1:4])
  c0 <- x[c(1, 51, 101), ]
  w <- rep(c(1, 3, 2), 50)
  ref <- gpu_kmeans(x, c0, weights = w)
  for (s in c(2^100, 1e300, 2^-100, 1e-300, 4e-320)) {
    fit <- gpu_kmeans(x, c0, weights = w * s)
    expect_identical(fit$cluster, ref$cluster)
    expect_identical(fit$iter, ref$iter)
    expect_false(anyNA(fit$centers))
    tol <- if (s < 1e-310) 1e-3 else 1e-14  # subnormal weights carry few bits
    expect_equal(fit$centers, ref$centers, tolerance = tol)
    if (s * 1000 < .Machine$double.xmax && s > 1e-300) {
      expect_equal(fit$withinss / s, ref$withinss, tolerance = 1e-14)
      expect_equal(fit$totss / s, ref$totss, tolerance = 1e-14)
    }
  }
  # a power of two between 2^-64 and 2^64 is not rescaled: whole weights stay repeated rows
  expect_null(attr(gpukmeans:::check_weights(w * 2^40, 150), "scale"))
  expect_identical(attr(gpukmeans:::check_weights(w * 2^70, 150), "scale"), 2^72)
  # weights so large that the weighted sums of squares exceed double precision: Inf, not NaN
  big <- gpu_kmeans(x * 1e150, c0 * 1e150, weights = w * 1e300)
  expect_identical(big$cluster, ref$cluster)
  expect_true(all(is.infinite(big$withinss)))
  expect_false(anyNA(big$centers))
})

test_that("weights with comm (MPI ranks) or distance = 'cosine' are classed errors, never ignored", {
  x <- as.matrix(iris[, 1:4])
  err <- tryCatch(gpu_kmeans(x, 3, weights = rep(1:3, 50), comm = 0), error = identity)
  expect_s3_class(err, "gpukmeans_unsupported")
  expect_match(conditionMessage(err), "'weights' are not supported with 'comm'")
  set.seed(1)
  before <- get_seed()
  err <- tryCatch(gpu_kmeans(x, 3, weights = rep(1:3, 50), distance = "cosine"), error = identity)
  expect_s3_class(err, "gpukmeans_unsupported")
  expect_match(conditionMessage(err), "distance = \"cosine\"")
  expect_identical(get_seed(), before)
  # weights of 1 are no weights: the spherical fit
  set.seed(1); a <- gpu_kmeans(x, 3, distance = "cosine")
  set.seed(1); b <- gpu_kmeans(x, 3, distance = "cosine", weights = rep(1, 150))
  expect_identical(strip_gk(a), strip_gk(b))
})
