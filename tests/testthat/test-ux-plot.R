with_null_device <- function(expr) {
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expr
}

test_that("plot draws 1-D, 2-D and 10-D fits and returns the fit invisibly", {
  x1 <- simulate_blobs(300, 1, 3, seed = 1)
  f1 <- gpu_kmeans(x1, attr(x1, "centers"))
  with_null_device({
    expect_invisible(res <- plot(f1, x1))
    expect_identical(res, f1)
    expect_silent(plot(f1, as.vector(x1)))
  })

  set.seed(1)
  f2 <- gpu_kmeans(boxes, 12, nstart = 2, iter.max = 50)
  with_null_device({
    expect_invisible(plot(f2, boxes))
    expect_silent(plot(f2, boxes, which = c(2, 1), col = "grey", pch = ".",
                       main = "boxes", max_points = 1000))
  })

  x10 <- simulate_blobs(500, 10, 4, seed = 2)
  f10 <- gpu_kmeans(x10, attr(x10, "centers"))
  with_null_device({
    expect_invisible(plot(f10, x10))
    expect_silent(plot(f10, as.data.frame(x10), which = c(1, 3)))
  })
})

test_that("plot errors clearly without the right data", {
  fit <- gpu_kmeans(faithful, faithful[c(1, 2), ])
  with_null_device({
    expect_error(plot(fit), "'data' is required")
    expect_error(plot(fit, iris[, 1:3]), "'data' has 3 columns but the fit's centers have 2")
    expect_error(plot(fit, faithful[1:10, ]), "'data' has 10 rows but the fit has 272 points")
    expect_error(plot(fit, faithful, which = c(1, 1)), "'which' must be two different")
    expect_error(plot(fit, faithful, which = 3), "'which'")
  })
})

test_that("plot copes with an empty cluster (NaN center)", {
  x <- matrix(c(0, 0.1, 0.2, 10, 10.1), ncol = 1)
  fit <- suppressWarnings(gpu_kmeans(x, matrix(c(0, 5, 10), ncol = 1)))
  skip_if_not(any(is.nan(fit$centers)))
  with_null_device(expect_invisible(plot(fit, x)))
})
