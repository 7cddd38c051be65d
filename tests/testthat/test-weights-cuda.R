# Observation weights on the CUDA engine (src/cuda/weights.cu,
# detail/weight_fixed.cuh; src/weights.h says what they mean).  GPU only.

cw_data <- function(n = 300, d = 3, seed = 1, wmax = 5, wmin = 1, int = FALSE) {
  set.seed(seed)
  x <- if (int) matrix(sample(0:20, n * d, TRUE), n, d) else make_blobs(n, d, 4, sd = 2, spread = 10)
  w <- sample(wmin:wmax, n, TRUE)
  w[1:3] <- c(1, 2, 3)
  idx <- rep(seq_len(n), w)
  list(x = x, w = w, idx = idx, xr = x[idx, , drop = FALSE])
}

# a (weighted) and b (the replicated rows) share every component but size
# and totss; rows of weight 0 may take one iteration more.
cw_same <- function(a, b, idx, zero = FALSE) {
  expect_identical(unname(a$centers), unname(b$centers))
  expect_identical(a$withinss, b$withinss)
  expect_identical(a$tot.withinss, b$tot.withinss)
  expect_identical(unname(a$cluster[idx]), unname(b$cluster))
  if (zero) expect_true((a$iter - b$iter) %in% 0:1) else expect_identical(a$iter, b$iter)
  expect_equal(a$totss, b$totss, tolerance = 1e-12)
}

test_that("CUDA, double: whole weights give the bits of the CUDA fit of the replicated rows", {
  skip_if_no_gpu()
  for (s in 1:4) {
    zero <- s > 2
    for (int in c(TRUE, FALSE)) {
      dat <- cw_data(seed = s, wmin = 1 - zero, int = int)
      c0 <- dat$x[which(dat$w > 0)[c(1, 6, 11, 16)], , drop = FALSE]
      a <- gpu_kmeans(dat$x, c0, weights = dat$w, backend = "cuda")
      b <- gpu_kmeans(dat$xr, c0, backend = "cuda")
      cw_same(a, b, dat$idx, zero)
      expect_identical(a$size, tabulate(a$cluster, 4))  # rows, not weights
      expect_identical(as.numeric(tapply(dat$w, factor(a$cluster, 1:4), sum)), as.numeric(b$size))
      # and the CPU engine's weighted fit: the same labels and iterations; the
      # same sums on integer data (exact in both), else equal to rounding (the
      # CPU engine adds in stats' order, the CUDA engine exactly, as without
      # weights)
      p <- gpu_kmeans(dat$x, c0, weights = dat$w, backend = "cpu")
      expect_identical(a$cluster, p$cluster)
      expect_identical(a$iter, p$iter)
      expect_identical(a$totss, p$totss)  # the CPU engine's code on the host
      if (int) {  # (the squared distances to the means are not integers: withinss to rounding)
        expect_identical(unname(a$centers), unname(p$centers))
        expect_equal(a$withinss, p$withinss, tolerance = 1e-13)
      } else {
        expect_equal(unname(a$centers), unname(p$centers), tolerance = 1e-13)
        expect_equal(a$withinss, p$withinss, tolerance = 1e-12)
      }
    }
  }
})

test_that("CUDA, double: larger data and k (shared limbs over several column groups, many blocks)", {
  skip_if_no_gpu()
  set.seed(3)
  n <- 20000; d <- 20; k <- 30
  x <- make_blobs(n, d, k, sd = 1, spread = 8)
  w <- sample(0:3, n, TRUE)
  idx <- rep(seq_len(n), w)
  c0 <- x[which(w > 0)[1:k], ]
  a <- gpu_kmeans(x, c0, weights = w, backend = "cuda", iter.max = 50)
  b <- gpu_kmeans(x[idx, ], c0, backend = "cuda", iter.max = 50)
  cw_same(a, b, idx, zero = TRUE)
})

test_that("CUDA, double: rows of weight 0 and a cluster of weight 0 (NaN center, as empty)", {
  skip_if_no_gpu()
  dat <- cw_data(n = 60, d = 2, seed = 4, int = TRUE)
  w <- dat$w
  c0 <- rbind(dat$x[1, ], dat$x[2, ], c(100, 100))
  x <- rbind(dat$x, c(100, 100))
  w <- c(w, 0)  # the only row near the third center weighs 0
  a <- suppressWarnings(gpu_kmeans(x, c0, weights = w, backend = "cuda", iter.max = 1))
  p <- suppressWarnings(gpu_kmeans(x, c0, weights = w, backend = "cpu", iter.max = 1))
  expect_true(all(is.nan(a$centers[3, ])))
  expect_identical(unname(a$centers), unname(p$centers))
  expect_identical(a$size, p$size)
  expect_equal(a$withinss, p$withinss, tolerance = 1e-13)
})

test_that("CUDA: fractional weights equal the CPU engine's fit to rounding; single precision close", {
  skip_if_no_gpu()
  for (s in 1:3) {
    dat <- cw_data(n = 2000, d = 4, seed = s)
    set.seed(s + 10)
    w <- runif(nrow(dat$x)) * 10^(s - 2)
    w[sample(nrow(dat$x), 50)] <- 0
    c0 <- dat$x[which(w > 0)[c(1, 6, 11, 16)], ]
    a <- gpu_kmeans(dat$x, c0, weights = w, backend = "cuda")
    p <- gpu_kmeans(dat$x, c0, weights = w, backend = "cpu")
    expect_identical(a$cluster, p$cluster)
    expect_identical(a$iter, p$iter)
    expect_equal(unname(a$centers), unname(p$centers), tolerance = 1e-12)
    expect_equal(a$withinss, p$withinss, tolerance = 1e-10)
    expect_identical(a$totss, p$totss)
    f <- gpu_kmeans(dat$x, c0, weights = w, backend = "cuda", precision = "single")
    expect_equal(unname(f$centers), unname(p$centers), tolerance = 1e-4)
    expect_equal(f$tot.withinss, p$tot.withinss, tolerance = 1e-4)
  }
})

test_that("CUDA: very large and very small weights do not overflow", {
  skip_if_no_gpu()
  dat <- cw_data(n = 5000, d = 3, seed = 7)
  c0 <- dat$x[c(1, 6, 11, 16), ]
  # huge whole weights: exact sums on the device, the fit of the same weights
  # scaled down (the CPU engine repeats rows in stats' order, which stalls
  # at such counts, as stats' sums would)
  for (pair in list(list(rep(2^53, 5000), rep(1, 5000)), list(dat$w * 2^40, dat$w))) {
    a <- gpu_kmeans(dat$x, c0, weights = pair[[1]], backend = "cuda")
    b <- gpu_kmeans(dat$x, c0, weights = pair[[2]], backend = "cuda")
    expect_identical(a$cluster, b$cluster)
    expect_equal(unname(a$centers), unname(b$centers), tolerance = 1e-14)
    expect_equal(a$withinss / pair[[1]][1] * pair[[2]][1], b$withinss, tolerance = 1e-12)
  }
  # tiny and huge fractional weights: products, as on the CPU engine
  for (w in list(dat$w * 2^-60, dat$w * 1e300)) {
    a <- gpu_kmeans(dat$x, c0, weights = w, backend = "cuda")
    p <- gpu_kmeans(dat$x, c0, weights = w, backend = "cpu")
    expect_identical(a$cluster, p$cluster)
    expect_equal(unname(a$centers), unname(p$centers), tolerance = 1e-12)
    expect_equal(a$withinss, p$withinss, tolerance = 1e-10)
  }
})

test_that("CUDA, double: k-means++ and k-means|| with weights draw the CPU engine's rows", {
  skip_if_no_gpu()
  for (s in 1:3) {
    dat <- cw_data(n = 500, d = 3, seed = s, wmin = 0, int = TRUE)
    for (init in c("kmeans++", "kmeans||")) {
      set.seed(s); a <- gpu_kmeans(dat$x, 4, init = init, nstart = 2, weights = dat$w, backend = "cuda")
      set.seed(s); p <- gpu_kmeans(dat$x, 4, init = init, nstart = 2, weights = dat$w, backend = "cpu")
      expect_identical(unname(a$centers), unname(p$centers))
      expect_identical(a$cluster, p$cluster)
      expect_equal(a$withinss, p$withinss, tolerance = 1e-13)  # sums of non-integer squares: to rounding
      expect_identical(a$iter, p$iter)
    }
  }
})

test_that("CUDA: predict and fitted are unchanged by weights", {
  skip_if_no_gpu()
  dat <- cw_data(n = 400, d = 3, seed = 2)
  a <- gpu_kmeans(dat$x, 4, weights = dat$w, backend = "cuda", nstart = 1)
  expect_identical(unname(predict(a, dat$x)), unname(a$cluster))
})

test_that("CUDA: a weighted fit with bounds forced equals the one without (weighted fits run plain iterations)", {
  skip_if_no_gpu()
  dat <- cw_data(n = 20000, d = 4, seed = 9, wmin = 0)
  c0 <- dat$x[which(dat$w > 0)[1:8], ]
  fit <- function(mode, precision) {
    withr::local_options(gpukmeans.cuda_tuning = c(0L, 0L, 0L, mode))
    gpu_kmeans(dat$x, c0, weights = dat$w, backend = "cuda", precision = precision, iter.max = 50)
  }
  for (precision in c("double", "single")) {
    b2 <- fit(2L, precision)
    b1 <- fit(1L, precision)
    expect_identical(unname(b2$centers), unname(b1$centers))
    expect_identical(b2$cluster, b1$cluster)
    expect_identical(b2$withinss, b1$withinss)
    expect_identical(b2$iter, b1$iter)
  }
})

test_that("CUDA: traced fits (progress) give the same weighted fit", {
  skip_if_no_gpu()
  dat <- cw_data(n = 1000, d = 3, seed = 5)
  c0 <- dat$x[c(1, 6, 11, 16), ]
  a <- gpu_kmeans(dat$x, c0, weights = dat$w, backend = "cuda")
  utils::capture.output(b <- gpu_kmeans(dat$x, c0, weights = dat$w, backend = "cuda", trace = TRUE))
  expect_identical(unname(a$centers), unname(b$centers))
  expect_identical(a$withinss, b$withinss)
})
