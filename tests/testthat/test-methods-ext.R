# Other packages' methods for "kmeans" work on a gpu_kmeans fit.
local_edition(3)

test_that("broom tidy/glance/augment equal those of the stats fit", {
  skip_if_not_installed("broom")
  x <- iris[, 1:4]
  ctr <- x[c(1, 51, 101), ]
  g <- gpu_kmeans(x, ctr)
  s <- stats::kmeans(x, ctr, algorithm = "Lloyd")
  expect_equal(broom::tidy(g), broom::tidy(s), tolerance = 1e-10)
  expect_equal(broom::glance(g), broom::glance(s), tolerance = 1e-10)
  expect_equal(broom::augment(g, data = iris), broom::augment(s, data = iris))
  expect_identical(nrow(broom::tidy(g)), 3L)
  set.seed(4); g <- gpu_kmeans(USArrests, 3)
  set.seed(4); s <- stats::kmeans(USArrests, 3, algorithm = "Lloyd")
  expect_equal(broom::augment(g, data = USArrests), broom::augment(s, data = USArrests))
  expect_equal(broom::tidy(g), broom::tidy(s), tolerance = 1e-10)
})

test_that("clue::cl_predict works and equals predict()", {
  skip_if_not_installed("clue")
  x <- as.matrix(iris[, 1:4])
  g <- gpu_kmeans(x, x[c(1, 51, 101), ])
  s <- stats::kmeans(x, x[c(1, 51, 101), ], algorithm = "Lloyd")
  set.seed(8)
  nd <- matrix(runif(200, 0, 8), ncol = 4)
  cp <- clue::cl_predict(g, nd)
  expect_identical(as.integer(cp), as.integer(predict(g, nd)))
  expect_identical(as.integer(cp), as.integer(clue::cl_predict(s, nd)))
  expect_identical(as.integer(clue::cl_class_ids(g)), g$cluster)
})

test_that("factoextra::fviz_cluster accepts a gpu_kmeans fit", {
  skip_if_not_installed("factoextra")
  x <- scale(USArrests)
  set.seed(1); g <- gpu_kmeans(x, 3)
  p <- factoextra::fviz_cluster(g, data = x)
  expect_s3_class(p, "ggplot")
})
