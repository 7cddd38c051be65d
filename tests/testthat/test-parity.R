# gpu_kmeans against stats::kmeans(algorithm = "Lloyd"), on each engine.
local_edition(3)

test_backends("iris[, 1:4] with a centers matrix equals stats", function(backend) {
  x <- iris[, 1:4]
  p <- expect_kmeans_parity(x, as.matrix(x[c(1, 51, 101), ]))
  expect_identical(colnames(p$g$centers), names(iris)[1:4])
  expect_identical(rownames(p$g$centers), c("1", "2", "3"))
  expect_null(names(p$g$cluster))
  expect_identical(p$g$size, c(50L, 62L, 38L))
})

test_backends("iris[, 1:4] with a number of centers and a seed equals stats", function(backend) {
  for (seed in c(1, 7, 2024)) {
    expect_kmeans_parity(iris[, 1:4], 3, seed = seed)
    expect_kmeans_parity(iris[, 1:4], 5, seed = seed)
  }
})

test_backends("faithful equals stats", function(backend) {
  expect_kmeans_parity(faithful, 2, seed = 11)
  expect_kmeans_parity(faithful, 4, seed = 12)
  p <- expect_kmeans_parity(faithful, as.matrix(faithful[c(1, 2), ]))
  expect_identical(colnames(p$g$centers), c("eruptions", "waiting"))
})

test_backends("USArrests: row names become names(cluster)", function(backend) {
  p <- expect_kmeans_parity(USArrests, 4, seed = 3)
  expect_identical(names(p$g$cluster), rownames(USArrests))
  expect_identical(colnames(p$g$centers), names(USArrests))
  p <- expect_kmeans_parity(scale(USArrests), 3, seed = 4)
  expect_identical(names(p$g$cluster), rownames(USArrests))
})

test_backends("quakes (all numeric columns, one of them integer) equals stats", function(backend) {
  expect_kmeans_parity(quakes[, 1:3], 5, seed = 21)
  expect_kmeans_parity(quakes, 6, seed = 22)
})

test_backends("precip (named numeric vector, 1-D) equals stats", function(backend) {
  p <- expect_kmeans_parity(precip, 3, seed = 5)
  expect_identical(names(p$g$cluster), names(precip))
  expect_identical(dim(p$g$centers), c(3L, 1L))
  expect_identical(dimnames(p$g$centers), list(c("1", "2", "3"), NULL))
  expect_kmeans_parity(precip, matrix(c(10, 40, 60), ncol = 1))
  expect_kmeans_parity(unname(precip), 4, seed = 6)
})

test_backends("an unnamed numeric vector equals stats", function(backend) {
  x <- c(1, 2, 3, 10, 11, 12, 30, 31)
  p <- expect_kmeans_parity(x, matrix(c(1, 10, 30)))
  expect_identical(p$g$cluster, rep(1:3, c(3L, 3L, 2L)))
  expect_equal(unname(p$g$centers[, 1]), c(2, 11, 30.5))
})

test_backends("an integer matrix equals stats", function(backend) {
  set.seed(99)
  x <- matrix(sample.int(1000L, 600L, replace = TRUE), ncol = 3)
  expect_type(x, "integer")
  expect_kmeans_parity(x, 4, seed = 8)
  p <- expect_kmeans_parity(x, x[c(1, 2, 3), ])
  expect_type(p$g$centers, "double")
})

test_backends("centers given as a data.frame equal stats", function(backend) {
  x <- iris[, 1:4]
  p <- expect_kmeans_parity(x, x[c(1, 51, 101), ])
  # column names come from x, row names are 1..k (as stats)
  expect_identical(dimnames(p$g$centers), list(c("1", "2", "3"), names(x)))
  # centers with other column names: still colnames(x)
  ctr <- setNames(x[c(10, 60, 110), ], c("a", "b", "c", "d"))
  p <- expect_kmeans_parity(as.matrix(x), ctr)
  expect_identical(colnames(p$g$centers), names(x))
})

test_backends("a data.frame input gives its column names to centers", function(backend) {
  df <- data.frame(alpha = c(1, 2, 10, 11), beta = c(5, 6, 50, 51))
  p <- expect_kmeans_parity(df, df[c(1, 3), ])
  expect_identical(colnames(p$g$centers), c("alpha", "beta"))
  expect_identical(p$g$cluster, c(1L, 1L, 2L, 2L))
  expect_equal(unname(p$g$centers), rbind(c(1.5, 5.5), c(10.5, 50.5)))
  # a matrix without dimnames gives NULL column names
  m <- unname(as.matrix(df))
  p <- expect_kmeans_parity(m, m[c(1, 3), ])
  expect_identical(dimnames(p$g$centers), list(c("1", "2"), NULL))
})

test_backends("algorithm = 'Forgy' is Lloyd, as in stats", function(backend) {
  x <- iris[, 1:4]
  set.seed(31); s <- stats::kmeans(x, 3, algorithm = "Forgy")
  set.seed(31); g <- gpu_kmeans(x, 3, algorithm = "Forgy")
  expect_same_fit(g, s)
  set.seed(31); g2 <- gpu_kmeans(x, 3, algorithm = "Lloyd")
  expect_equal(strip_gk(g2), strip_gk(g))
})

test_backends("totss over several of its chunks of 2^16 rows is R's two-pass sum, on any number of threads", function(backend) {
  # (the column means and the squared deviations are each added in long
  # double chunk by chunk, src/column_sum.h: R's colMeans adds one chain a
  # column, so the two agree to rounding, not bit for bit)
  set.seed(3)
  x <- cbind(rnorm(200003, 1e4, 0.5), runif(200003), rnorm(200003, -3, 7))
  ref <- sum(scale(x, scale = FALSE)^2)
  fits <- lapply(c(1L, 2L, 3L), function(t) {
    withr::local_options(gpukmeans.threads = t)
    suppressWarnings(gpu_kmeans(x, x[1:4, ], iter.max = 1L))  # (not converged: a warning, as stats)
  })
  expect_equal(fits[[1]]$totss, ref, tolerance = 1e-13)
  expect_identical(fits[[2]]$totss, fits[[1]]$totss)
  expect_identical(fits[[3]]$totss, fits[[1]]$totss)
})

test_backends("totss, betweenss and tot.withinss are consistent", function(backend) {
  set.seed(2)
  g <- gpu_kmeans(faithful, 3)
  expect_equal(g$tot.withinss, sum(g$withinss), tolerance = 1e-12)
  expect_equal(g$betweenss, g$totss - g$tot.withinss, tolerance = 1e-12)
  expect_equal(g$totss, sum(scale(faithful, scale = FALSE)^2), tolerance = 1e-12)
  expect_identical(sum(g$size), nrow(faithful))
  expect_identical(tabulate(g$cluster, 3L), g$size)
})

test_backends("a time series (ts) is data, as in stats", function(backend) {
  p <- expect_kmeans_parity(Nile, 3, seed = 1)
  expect_null(names(p$g$cluster))
  expect_kmeans_parity(EuStockMarkets, 4, seed = 2)
})

test_backends("a tibble is a data.frame, as in stats", function(backend) {
  skip_if_not_installed("tibble")
  tb <- tibble::as_tibble(iris[, 1:4])
  p <- expect_kmeans_parity(tb, 3, seed = 3)
  expect_identical(colnames(p$g$centers), names(iris)[1:4])
})

test_backends("a one-column data.frame keeps its column name", function(backend) {
  df <- faithful[, "waiting", drop = FALSE]
  p <- expect_kmeans_parity(df, 2, seed = 4)
  expect_identical(dimnames(p$g$centers), list(c("1", "2"), "waiting"))
})

test_backends("centers as a plain numeric vector (1-D data), as stats", function(backend) {
  # stats does as.matrix(centers): a vector of length > 1 is a 1-column matrix
  p <- expect_kmeans_parity(c(1, 2, 3, 10, 11, 12, 30, 31), c(1, 10, 30))
  expect_identical(p$g$cluster, rep(1:3, c(3L, 3L, 2L)))
  expect_kmeans_parity(precip, c(10, 40, 60))
  expect_kmeans_parity(c(0, 1, 2), c(2, 0))
  expect_error(gpu_kmeans(precip, c(10, 20, 10)), "initial centers are not distinct")
  expect_error(stats::kmeans(precip, c(10, 20, 10)), "initial centers are not distinct")
})
