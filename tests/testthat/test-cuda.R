# CUDA engine. Every test skips cleanly without a CUDA device.
# Reference: stats::kmeans for small shapes, the CPU engine for big ones.
local_edition(3)

gk_cuda <- function(...) gpu_kmeans(..., backend = "cuda")

# CPU engine as reference with more threads (only runs on the GPU machine).
gk_cpu_ref <- function(...) {
  withr::with_options(
    list(gpukmeans.threads = max(2L, min(8L, parallel::detectCores(), na.rm = TRUE))),
    gpu_kmeans(..., backend = "cpu"))
}

# cuda fit a equals cpu fit b (both gpu_kmeans)
expect_same_gk <- function(a, b, tolerance = 1e-10) {
  a0 <- strip_gk(a)
  b0 <- strip_gk(b)
  expect_lte(abs(a0$betweenss - b0$betweenss), tolerance * abs(b0$totss))
  a0$betweenss <- b0$betweenss <- NULL
  expect_equal(a0, b0, tolerance = tolerance)
  expect_identical(a$cluster, b$cluster)
  expect_identical(a$iter, b$iter)
  expect_identical(a$size, b$size)
  expect_identical(a$ifault, b$ifault)
}

# cuda vs stats (fit, warnings, RNG state) and vs the CPU engine
cuda_parity <- function(x, centers, ..., seed = NULL) {
  p <- expect_kmeans_parity(x, centers, ..., backend = "cuda", seed = seed)
  expect_identical(attr(p$g, "backend"), "cuda")
  if (!is.null(seed)) set.seed(seed)
  # run_pair() gives both sides stats' default iter.max (10) unless given
  args <- list(...)
  if (is.null(args$iter.max)) args$iter.max <- 10L
  cpu <- suppressWarnings(do.call(gpu_kmeans, c(list(x, centers), args, backend = "cpu")))
  expect_same_gk(p$g, cpu)
  invisible(p)
}

# cuda vs CPU engine (fit, warnings) for shapes too big for stats
cuda_vs_cpu <- function(x, centers, ..., seed = NULL) {
  if (!is.null(seed)) set.seed(seed)
  a <- with_warnings(gk_cuda(x, centers, ...))
  if (!is.null(seed)) set.seed(seed)
  b <- with_warnings(gk_cpu_ref(x, centers, ...))
  expect_identical(attr(a$value, "backend"), "cuda")
  expect_same_gk(a$value, b$value)
  expect_identical(a$warnings, b$warnings)
  invisible(a$value)
}

test_that("cuda: the stats cases (datasets, seeds, nstart)", {
  skip_if_no_gpu()
  x <- iris[, 1:4]
  cuda_parity(x, x[c(1, 51, 101), ])
  for (seed in 1:3) {
    cuda_parity(x, 3, seed = seed)
    cuda_parity(x, 4, nstart = 5, seed = seed)
  }
  p <- cuda_parity(USArrests, 4, seed = 3)
  expect_identical(names(p$g$cluster), rownames(USArrests))
  cuda_parity(faithful, 2, seed = 11)
  cuda_parity(quakes, 6, seed = 22)
  p <- cuda_parity(precip, 3, seed = 5)
  expect_identical(names(p$g$cluster), names(precip))
  set.seed(99)
  xi <- matrix(sample.int(1000L, 600L, replace = TRUE), ncol = 3)
  cuda_parity(xi, 4, seed = 8)
})

test_that("cuda: k = 1, n = 1, n = k, duplicates, ties", {
  skip_if_no_gpu()
  p <- cuda_parity(iris[, 1:4], 1, seed = 1)
  expect_identical(p$g$iter, 1L)
  cuda_parity(matrix(c(1.5, -2, 3), nrow = 1), 1, seed = 1)
  set.seed(1)
  x <- matrix(rnorm(33 * 5), 33)
  p <- cuda_parity(x, 33, seed = 2)
  expect_identical(p$g$size, rep(1L, 33))
  xx <- rbind(as.matrix(iris[, 1:4]), as.matrix(iris[, 1:4]))
  cuda_parity(xx, 3, nstart = 3, seed = 4)
  xd <- cbind(rep(c(1, 2, 3, 4, 5), each = 40), rep(c(0, 10, 0, 10, 0), each = 40))
  for (seed in 1:4) cuda_parity(xd, 3, seed = seed)
  p <- cuda_parity(c(0, 1, 2), matrix(c(0, 2)))
  expect_identical(p$g$cluster[2], 1L)
})

test_that("cuda: empty clusters and non-convergence as stats", {
  skip_if_no_gpu()
  x <- as.matrix(iris[, 1:4])
  ctr <- rbind(x[c(1, 51, 101), ], c(100, 100, 100, 100))
  expect_warning(gk_cuda(x, ctr), "empty cluster: try a better set of initial centers")
  p <- cuda_parity(x, ctr)
  expect_identical(p$g$size[4], 0L)
  expect_true(all(is.nan(p$g$centers[4, ])))
  ctr2 <- rbind(x[1, ], c(-50, -50, -50, -50), x[c(51, 101), ])
  p <- cuda_parity(x, ctr2)
  expect_identical(p$g$size[2], 0L)
  expect_warning(g <- gk_cuda(x, x[1:3, ], iter.max = 1), "did not converge in 1 iteration")
  expect_identical(g$ifault, 2L)
  p <- cuda_parity(x, x[1:3, ], iter.max = 2)
  expect_identical(p$g$ifault, 2L)
  # many empty clusters in a bigger problem (far-away centers)
  set.seed(6)
  xb <- matrix(rnorm(20011 * 3), ncol = 3)
  far <- matrix(1e6 + seq_len(40 * 3), ncol = 3)
  ctr <- rbind(xb[1:24, ], far)
  g <- cuda_vs_cpu(xb, ctr, iter.max = 5)
  expect_identical(g$size[25:64], integer(40))
})

test_that("cuda: k in {1, 2, 31, 32, 33} x d in {1, 2, 3, 17, 128} equals stats", {
  skip_if_no_gpu()
  n <- 4099L
  for (d in c(1L, 2L, 3L, 17L, 128L)) {
    set.seed(d)
    x <- make_blobs(n, d, 40, sd = 2, spread = 10)
    for (k in c(1L, 2L, 31L, 32L, 33L)) {
      cuda_parity(x, k, iter.max = 8, seed = k)
    }
  }
})

test_that("cuda: d = 1000 equals stats", {
  skip_if_no_gpu()
  set.seed(1000)
  x <- make_blobs(2003, 1000, 20, sd = 1, spread = 2)
  cuda_parity(x, 33, iter.max = 5, seed = 1)
  cuda_parity(x, 2, iter.max = 5, seed = 2)
})

test_that("cuda: n = 100003 (not a multiple of any block size)", {
  skip_if_no_gpu()
  set.seed(7)
  x <- make_blobs(100003, 3, 32, sd = 2, spread = 20)
  cuda_vs_cpu(x, 32, iter.max = 20, seed = 1)
  cuda_vs_cpu(x, 33, iter.max = 10, nstart = 2, seed = 2)
  cuda_vs_cpu(x[, 1, drop = FALSE], 31, iter.max = 10, seed = 3)
})

test_that("cuda: k = 1000, 5000 and 20000 against the CPU engine", {
  skip_if_no_gpu()
  set.seed(8)
  x <- matrix(runif(20011 * 17), ncol = 17)
  cuda_vs_cpu(x, 1000, iter.max = 4, seed = 1)
  set.seed(9)
  x <- matrix(runif(30011 * 3), ncol = 3)
  cuda_vs_cpu(x, 5000, iter.max = 3, seed = 2)
  set.seed(10)
  x <- matrix(runif(40009 * 2), ncol = 2)
  cuda_vs_cpu(x, 20000, iter.max = 2, seed = 3)
})

test_that("cuda: 20 repeated fits are identical (determinism)", {
  skip_if_no_gpu()
  set.seed(11)
  x <- make_blobs(50003, 17, 64, sd = 3, spread = 10)
  ctr <- x[1:64, ]
  ref <- strip_gk(suppressWarnings(gk_cuda(x, ctr, iter.max = 10)))
  same <- vapply(1:20, function(i) {
    identical(strip_gk(suppressWarnings(gk_cuda(x, ctr, iter.max = 10))), ref)
  }, logical(1))
  expect_true(all(same))
  refs <- strip_gk(suppressWarnings(gk_cuda(x, ctr, iter.max = 10, precision = "single")))
  same <- vapply(1:5, function(i) {
    identical(strip_gk(suppressWarnings(
      gk_cuda(x, ctr, iter.max = 10, precision = "single"))), refs)
  }, logical(1))
  expect_true(all(same))
})

test_that("cuda: single precision vs double", {
  skip_if_no_gpu()
  set.seed(20)
  x <- make_blobs(100003, 6, 10, sd = 1, spread = 100, with_labels = TRUE)
  ctr <- x[match(1:10, attr(x, "label")), ]
  attr(x, "label") <- NULL
  gd <- gk_cuda(x, ctr, iter.max = 50, precision = "double")
  gs <- gk_cuda(x, ctr, iter.max = 50, precision = "single")
  expect_identical(attr(gs, "backend"), "cuda")
  expect_type(gs$centers, "double")
  expect_gte(mean(gs$cluster == gd$cluster), 0.999)
  expect_lt(abs(gs$tot.withinss - gd$tot.withinss) / gd$tot.withinss, 1e-5)
  cs <- gpu_kmeans(x, ctr, iter.max = 50, precision = "single", backend = "cpu")
  expect_gte(mean(gs$cluster == cs$cluster), 0.999)
})

test_that("cuda: predict equals CPU predict", {
  skip_if_no_gpu()
  set.seed(12)
  x <- make_blobs(20011, 5, 37, sd = 2, spread = 10)
  set.seed(1)
  g <- suppressWarnings(gk_cuda(x, 37, iter.max = 50))
  set.seed(1)
  cp <- suppressWarnings(gpu_kmeans(x, 37, iter.max = 50, backend = "cpu"))
  nd <- matrix(runif(5001 * 5, -12, 12), ncol = 5)
  pg <- predict(g, nd)
  expect_type(pg, "integer")
  expect_identical(pg, predict(cp, nd))
  expect_identical(unname(pg), nearest_center(nd, g$centers))
  if (is.null(g$ifault)) expect_identical(unname(predict(g, x)), unname(g$cluster))
})

test_that("cuda: timing and device attributes", {
  skip_if_no_gpu()
  g <- gk_cuda(iris[, 1:4], iris[c(1, 51, 101), 1:4])
  tm <- attr(g, "timing")
  expect_true(all(c("transfer_to_device", "compute", "transfer_to_host", "total")
                  %in% names(tm)))
  expect_false(anyNA(tm))
  expect_true(all(tm >= 0))
  dev <- attr(g, "device")
  expect_type(dev, "character")
  expect_length(dev, 1L)
  expect_true(nzchar(dev))
  expect_output(print(g), "Backend:")
  expect_identical(attr(gpu_kmeans(faithful, 2, backend = "cuda"), "backend"), "cuda")
})
