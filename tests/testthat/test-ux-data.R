# The bundled data set and the blob generator.
test_that("boxes has 21 600 rows in two numeric columns", {
  expect_s3_class(boxes, "data.frame")
  expect_identical(dim(boxes), c(21600L, 2L))
  expect_identical(names(boxes), c("x", "y"))
  expect_true(all(vapply(boxes, is.double, logical(1))))
  expect_false(anyNA(boxes))
})

test_that("gpu_kmeans recovers the 12 boxes from good starts", {
  truth <- rep(1:12, each = 1800)
  means <- rowsum(as.matrix(boxes), truth) / 1800
  fit <- gpu_kmeans(boxes, means, backend = "cpu")
  tab <- table(fit$cluster, truth)
  expect_identical(dim(tab), c(12L, 12L))
  # every found cluster is exactly one box
  expect_true(all(rowSums(tab > 0) == 1L))
  expect_identical(as.integer(fit$size), rep(1800L, 12))
  expect_identical(fit$iter, 2L)  # iteration 1 always "changes" every point
})

test_that("simulate_blobs has the promised shape and attributes", {
  x <- simulate_blobs(1003, 3, 7, sd = 0.5, seed = 11)
  expect_true(is.matrix(x) && is.double(x))
  expect_identical(dim(x), c(1003L, 3L))
  expect_identical(colnames(x), c("x1", "x2", "x3"))
  expect_identical(dim(attr(x, "centers")), c(7L, 3L))
  lab <- attr(x, "labels")
  expect_type(lab, "integer")
  expect_length(lab, 1003L)
  expect_true(all(table(lab) %in% c(143L, 144L)))
  # points scatter around their own center with the given sd
  dev <- x - attr(x, "centers")[lab, ]
  expect_equal(sd(as.vector(dev)), 0.5, tolerance = 0.1)
})

test_that("simulate_blobs is reproducible and leaves the session's RNG alone with seed", {
  set.seed(5); before <- .Random.seed
  a <- simulate_blobs(100, 2, 3, seed = 1)
  expect_identical(.Random.seed, before)
  expect_identical(a, simulate_blobs(100, 2, 3, seed = 1))
  set.seed(9); b <- simulate_blobs(100, 2, 3)
  set.seed(9); expect_identical(b, simulate_blobs(100, 2, 3))
  expect_false(identical(a, b))
})

test_that("simulate_blobs rejects bad arguments", {
  expect_error(simulate_blobs(0, 2, 1), "'n' must be a single positive whole number")
  expect_error(simulate_blobs(10, 2.5, 1), "'d' must be a single positive whole number")
  expect_error(simulate_blobs(10, 2, 11), "'k' \\(11\\) must not be larger than 'n' \\(10\\)")
  expect_error(simulate_blobs(10, 2, 2, sd = -1), "'sd' must be a single non-negative")
  expect_error(simulate_blobs(10, 2, 2, seed = "a"), "'seed' must be NULL or a single number")
})
