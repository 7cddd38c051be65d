# The returned object: components, types, class, attributes and methods.
local_edition(3)

fit_pair <- function() {
  x <- as.matrix(iris[, 1:4])
  ctr <- x[c(1, 51, 101), ]
  list(x = x,
       g = gpu_kmeans(x, ctr),
       s = stats::kmeans(x, ctr, algorithm = "Lloyd"))
}

test_that("components, order and types are those of a kmeans object", {
  f <- fit_pair()
  g <- f$g
  expect_identical(names(g), c("cluster", "centers", "totss", "withinss",
                               "tot.withinss", "betweenss", "size", "iter", "ifault"))
  expect_identical(class(g), c("gpu_kmeans", "kmeans"))
  expect_true(inherits(g, "kmeans"))
  expect_type(g, "list")
  expect_type(g$cluster, "integer")
  expect_type(g$centers, "double")
  expect_true(is.matrix(g$centers))
  expect_identical(dim(g$centers), c(3L, 4L))
  expect_type(g$totss, "double")
  expect_length(g$totss, 1L)
  expect_type(g$withinss, "double")
  expect_length(g$withinss, 3L)
  expect_type(g$tot.withinss, "double")
  expect_type(g$betweenss, "double")
  expect_type(g$size, "integer")
  expect_type(g$iter, "integer")
  expect_length(g$iter, 1L)
  expect_null(g$ifault)
  expect_identical(lengths(unclass(g)), lengths(unclass(f$s)))
})

test_that("attributes: backend, timing and nothing undocumented", {
  g <- fit_pair()$g
  expect_identical(attr(g, "backend"), "cpu")
  tm <- attr(g, "timing")
  expect_type(tm, "double")
  expect_true(all(c("total", "compute") %in% names(tm)))
  expect_false(anyNA(tm))
  expect_true(all(tm >= 0))
  expect_true(tm[["total"]] >= tm[["compute"]])
  extra <- setdiff(names(attributes(g)), c("names", "class"))
  expect_true(all(extra %in% gk_extra_attrs), label = paste(extra, collapse = ", "))
})

test_that("print shows the stats output plus a Backend line", {
  f <- fit_pair()
  out <- capture.output(print(f$g))
  expect_true(any(grepl("K-means clustering with 3 clusters of sizes", out, fixed = TRUE)))
  expect_true(any(grepl("Cluster means:", out, fixed = TRUE)))
  expect_true(any(grepl("^Backend:", out)))
  # every line printed by stats' print.kmeans is there too
  expect_identical(setdiff(capture.output(print(f$s)), out), character())
  expect_output(print(f$g), "K-means clustering with 3 clusters of sizes 50, 62, 38")
  # print returns its argument invisibly
  out <- capture.output(v <- withVisible(print(f$g)))
  expect_false(v$visible)
  expect_identical(v$value, f$g)
})

test_that("fitted() equals fitted() of the stats fit", {
  f <- fit_pair()
  expect_equal(fitted(f$g), fitted(f$s), tolerance = 1e-10)
  expect_equal(fitted(f$g, method = "centers"), fitted(f$s, method = "centers"),
               tolerance = 1e-10)
  expect_identical(fitted(f$g, method = "classes"), fitted(f$s, method = "classes"))
  p <- run_pair(USArrests, 3, seed = 1)
  expect_equal(fitted(p$g), fitted(p$s), tolerance = 1e-10)
  expect_identical(fitted(p$g, method = "classes"), fitted(p$s, method = "classes"))
})

test_that("predict() returns nearest-center indices", {
  f <- fit_pair()
  g <- f$g
  pr <- predict(g, f$x)
  expect_type(pr, "integer")
  expect_length(pr, nrow(f$x))
  expect_identical(unname(pr), unname(g$cluster))
  nd <- f$x[c(3, 60, 120, 7), ] + 0.05
  expect_identical(unname(predict(g, nd)), nearest_center(nd, g$centers))
  # data.frame newdata
  expect_identical(unname(predict(g, iris[1:20, 1:4])), unname(g$cluster[1:20]))
  # a single row
  expect_identical(unname(predict(g, f$x[101, , drop = FALSE])), unname(g$cluster[101]))
  # random new points
  set.seed(3)
  nd <- matrix(runif(400, 0, 8), ncol = 4)
  expect_identical(unname(predict(g, nd)), nearest_center(nd, g$centers))
})

test_that("predict() on a 1-D fit takes a plain vector", {
  g <- gpu_kmeans(precip, matrix(c(10, 40, 60)))
  expect_identical(unname(predict(g, precip)), unname(g$cluster))
  nd <- c(5, 25, 38, 55, 70)
  expect_identical(unname(predict(g, nd)), nearest_center(matrix(nd), g$centers))
  expect_identical(unname(predict(g, data.frame(v = nd))),
                   nearest_center(matrix(nd), g$centers))
})

test_that("predict() on a named-rows fit, and column mismatch errors", {
  set.seed(2)
  g <- gpu_kmeans(USArrests, 4)
  expect_identical(unname(predict(g, USArrests)), unname(g$cluster))
  expect_error(predict(g, USArrests[, 1:3]), "'newdata' has no column 'Rape'")
  # an extra named column is not used (columns are matched by name)
  expect_identical(predict(g, as.matrix(cbind(USArrests, z = 1))), predict(g, USArrests))
  # without names, the number of columns must match
  expect_error(predict(g, unname(as.matrix(cbind(USArrests, z = 1)))),
               "'newdata' has 5 columns but the centers have 4")
  expect_error(predict(g, unname(as.matrix(USArrests[, 1:3]))),
               "'newdata' has 3 columns but the centers have 4")
})

test_that("trace = TRUE prints one line per iteration", {
  x <- as.matrix(iris[, 1:4])
  expect_output(gpu_kmeans(x, x[c(1, 51, 101), ], trace = TRUE), "iter")
  out <- capture.output(fit <- gpu_kmeans(x, x[c(1, 51, 101), ], trace = TRUE))
  expect_length(out, fit$iter)
  expect_true(all(grepl("iter", out)))
  # trace does not change the result
  expect_equal(strip_gk(fit), strip_gk(gpu_kmeans(x, x[c(1, 51, 101), ])))
  out <- capture.output(fit <- gpu_kmeans(faithful, as.matrix(faithful[1:2, ]), trace = TRUE))
  expect_length(out, fit$iter)
  # no output without trace
  expect_silent(gpu_kmeans(x, x[c(1, 51, 101), ]))
})
