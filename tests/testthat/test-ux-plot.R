# plot.gpu_kmeans on 1-D, 2-D and 10-D fits.
with_null_device <- function(code) {
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  force(code)
}

test_that("plot works for 2-D data and returns the fit invisibly", {
  set.seed(1)
  fit <- gpu_kmeans(faithful, 2, backend = "cpu")
  with_null_device(expect_invisible(res <- plot(fit, faithful)))
  expect_identical(res, fit)
})

test_that("plot works for 1-D data (a strip plot)", {
  set.seed(2)
  fit <- gpu_kmeans(precip, 3, iter.max = 50, backend = "cpu")
  with_null_device(expect_identical(plot(fit, precip), fit))
})

test_that("plot works for 10-D data (principal components)", {
  x <- simulate_blobs(500, 10, 4, seed = 3)
  fit <- gpu_kmeans(x, attr(x, "centers"), backend = "cpu")
  with_null_device(expect_identical(plot(fit, x), fit))
  with_null_device(expect_identical(plot(fit, x, which = c(2, 3)), fit))
})

test_that("plot works with an empty cluster (NaN center)", {
  x <- cbind(c(1, 2, 3, 10, 11, 12), 0)
  fit <- suppressWarnings(gpu_kmeans(x, rbind(c(2, 0), c(11, 0), c(100, 0)), backend = "cpu"))
  expect_true(anyNA(fit$centers))
  with_null_device(expect_identical(plot(fit, x), fit))
})

test_that("plot explains what is missing or wrong", {
  set.seed(1)
  fit <- gpu_kmeans(faithful, 2, backend = "cpu")
  expect_error(plot(fit), "'data' is required")
  expect_error(with_null_device(plot(fit, iris[, 1:3])), "3 columns but the fit's centers have 2")
  expect_error(with_null_device(plot(fit, faithful[1:10, ])), "10 rows but the fit has 272 points")
  expect_error(with_null_device(plot(fit, faithful, which = c(1, 1))), "'which' must be two different")
})
