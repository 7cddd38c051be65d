test_that("boxes has the promised shape", {
  expect_s3_class(boxes, "data.frame")
  expect_identical(dim(boxes), c(21600L, 2L))
  expect_identical(names(boxes), c("x", "y"))
  expect_true(all(vapply(boxes, is.double, logical(1))))
  expect_false(anyNA(boxes))
})

test_that("gpu_kmeans recovers the 12 boxes from good starts", {
  truth <- rep(1:12, each = 1800)
  # one point of each box as the start
  fit <- gpu_kmeans(boxes, boxes[seq(1, 21600, by = 1800), ], iter.max = 50)
  tab <- table(found = fit$cluster, box = truth)
  expect_identical(dim(tab), c(12L, 12L))
  # each found cluster holds the points of exactly one box, and vice versa
  expect_true(all(rowSums(tab > 0) == 1L))
  expect_true(all(colSums(tab > 0) == 1L))
  expect_identical(unname(fit$size), rep(1800L, 12))
  # random starts: enough of them find the boxes too
  set.seed(1)
  fit2 <- gpu_kmeans(boxes, 12, nstart = 20, iter.max = 100)
  tab2 <- table(fit2$cluster, truth)
  expect_true(all(rowSums(tab2 > 0) == 1L))
  expect_equal(fit2$tot.withinss, fit$tot.withinss)
})

test_that("simulate_blobs returns a matrix with centers and labels", {
  x <- simulate_blobs(1000, 3, 4, sd = 0.5, seed = 42)
  expect_true(is.matrix(x))
  expect_true(is.double(x))
  expect_identical(dim(x), c(1000L, 3L))
  expect_identical(dim(attr(x, "centers")), c(4L, 3L))
  lab <- attr(x, "labels")
  expect_true(is.integer(lab))
  expect_length(lab, 1000L)
  expect_true(all(lab %in% 1:4))
  expect_identical(as.vector(table(lab)), rep(250L, 4))   # equal sizes
  expect_true(all(abs(attr(x, "centers")) <= 5))          # spread = 10 * sd
  # the points lie around their centers
  means <- rowsum(unclass(x)[, 1:3], lab) / 250
  expect_equal(unname(means), unname(attr(x, "centers")), tolerance = 0.1)
  # unequal sizes differ by at most one
  expect_true(diff(range(table(attr(simulate_blobs(10, 1, 3), "labels")))) <= 1)
})

test_that("simulate_blobs is reproducible and its seed argument is local", {
  set.seed(7); a <- simulate_blobs(200, 2, 3)
  set.seed(7); b <- simulate_blobs(200, 2, 3)
  expect_identical(a, b)
  set.seed(8); c <- simulate_blobs(200, 2, 3)
  expect_false(identical(a, c))
  set.seed(1)
  before <- .Random.seed
  s1 <- simulate_blobs(100, 2, 2, seed = 3)
  expect_identical(.Random.seed, before)      # the session's stream is untouched
  expect_identical(s1, simulate_blobs(100, 2, 2, seed = 3))
  set.seed(3)
  expect_identical(s1, simulate_blobs(100, 2, 2))
})

test_that("simulate_blobs rejects bad arguments clearly", {
  expect_error(simulate_blobs(0, 2, 2), "'n' must be a single positive whole number")
  expect_error(simulate_blobs(10.5, 2, 2), "'n'")
  expect_error(simulate_blobs(c(10, 20), 2, 2), "'n'")
  expect_error(simulate_blobs("10", 2, 2), "'n'")
  expect_error(simulate_blobs(10, NA, 2), "'d' must be")
  expect_error(simulate_blobs(10, 2, 0), "'k' must be")
  expect_error(simulate_blobs(10, 2, 11), "'k' \\(11\\) must not be larger than 'n' \\(10\\)")
  expect_error(simulate_blobs(10, 2, 2, sd = -1), "'sd' must be a single non-negative")
  expect_error(simulate_blobs(10, 2, 2, spread = Inf), "'spread'")
  expect_error(simulate_blobs(10, 2, 2, seed = "a"), "'seed' must be NULL or a single")
  expect_error(simulate_blobs(3e9, 2, 2), "'n' must be at most")
  expect_error(simulate_blobs(2e9, 2, 2), "too large for an R matrix")
})
