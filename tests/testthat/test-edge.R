# Edge cases of the Lloyd iteration, against stats::kmeans.
local_edition(3)

test_backends("k = 1 equals stats (MacQueen inside stats): iter 1, column means", function(backend) {
  x <- iris[, 1:4]
  p <- expect_kmeans_parity(x, 1, seed = 1)
  expect_identical(p$g$iter, 1L)
  expect_null(p$g$ifault)
  expect_identical(p$g$cluster, rep(1L, 150L))
  expect_identical(p$g$size, 150L)
  expect_equal(p$g$centers[1, ], colMeans(x), tolerance = 1e-12)
  expect_identical(dimnames(p$g$centers), list("1", names(x)))
  expect_equal(p$g$betweenss, 0, tolerance = 1e-10)
  # k = 1 as a 1-row centers matrix
  p <- expect_kmeans_parity(x, as.matrix(x[7, ]))
  expect_identical(p$g$iter, 1L)
  # k = 1 on a 1-D vector, and with iter.max = 1
  expect_kmeans_parity(precip, 1, seed = 2)
  expect_kmeans_parity(x, 1, iter.max = 1, seed = 3)
})

test_backends("a length-1 centers is a number, exactly as stats", function(backend) {
  # a 1 x 1 matrix on 1-D data is the number of clusters, not a center
  p <- expect_kmeans_parity(precip, matrix(3, 1, 1), seed = 13)
  expect_identical(nrow(p$g$centers), 3L)
  expect_kmeans_parity(faithful, 3L, seed = 13)
  expect_kmeans_parity(faithful, 3.0, seed = 13)
})

test_backends("n = 1 with k = 1, and n = k, equal stats", function(backend) {
  x1 <- matrix(c(1.5, -2, 3), nrow = 1)
  p <- expect_kmeans_parity(x1, 1, seed = 1)
  expect_identical(p$g$cluster, 1L)
  expect_equal(unname(p$g$centers), x1)
  expect_identical(p$g$withinss, 0)
  set.seed(1)
  x <- matrix(rnorm(7 * 3), 7)
  p <- expect_kmeans_parity(x, 7, seed = 2)
  expect_identical(sort(p$g$cluster), 1:7)
  expect_identical(p$g$size, rep(1L, 7))
  expect_equal(p$g$withinss, rep(0, 7))
  expect_kmeans_parity(x, x)
})

test_backends("data with duplicated rows equal stats (rbind(x, x))", function(backend) {
  x <- as.matrix(iris[, 1:4])
  xx <- rbind(x, x)
  for (seed in 1:4) {
    expect_kmeans_parity(xx, 3, seed = seed)
    expect_kmeans_parity(xx, 3, nstart = 3, seed = seed)
  }
  p <- expect_kmeans_parity(xx, x[c(1, 51, 101), ])
  expect_identical(p$g$size, 2L * c(50L, 62L, 38L))
})

test_backends("heavy duplicates take the unique(x) path exactly as stats", function(backend) {
  # 5 distinct rows, each 40 times: sample.int(200, k) almost surely hits a
  # duplicate, so stats redraws from unique(x) -- different RNG use.
  x <- cbind(rep(c(1, 2, 3, 4, 5), each = 40), rep(c(0, 10, 0, 10, 0), each = 40))
  for (seed in 1:8) {
    expect_kmeans_parity(x, 3, seed = seed)
    expect_kmeans_parity(x, 5, seed = seed)
    expect_kmeans_parity(x, 2, nstart = 4, seed = seed)
  }
  # a seed where the first draw has no duplicate also agrees (k = 2 often)
  x2 <- rbind(x, cbind(101:300, 0))
  for (seed in 1:4) expect_kmeans_parity(x2, 2, seed = seed)
})

test_backends("0 and -0 are the same value for unique(x), as in stats", function(backend) {
  x <- cbind(c(0, -0, 1, 2, 0, 3), c(1, 1, 5, 7, 1, 2))
  expect_identical(nrow(unique(x)), 4L)
  for (seed in 1:4) expect_kmeans_parity(x, 2, nstart = 2, seed = seed)
  expect_error(gpu_kmeans(x, 5, nstart = 2), "more cluster centers than distinct data points.",
               fixed = TRUE)
  expect_error(gpu_kmeans(x, rbind(c(0, 1), c(-0, 1))), "initial centers are not distinct")
})

test_that("the distinct rows are those !duplicated(x) keeps, in the same order", {
  # gk_unique_rows: one pass through an open-addressed table (src/distinct_rows.h)
  # (and with 3 bits of the hashes kept: distinct rows then share slots and
  # hashes, so that the rows' values decide)
  same_rows <- function(m, label) {
    expect_identical(gpukmeans:::gk_unique_rows(m), which(!duplicated(m)), label = label)
    withr::with_envvar(c(GPUKMEANS_DISTINCT_HASH_BITS = "3"),
      expect_identical(gpukmeans:::gk_unique_rows(m), which(!duplicated(m)), label = paste(label, "(3 bits)")))
  }
  set.seed(91)
  x <- matrix(rnorm(6000), ncol = 3)
  same_rows(x, "all distinct")
  same_rows(rbind(x, x[sample.int(2000, 700), ], x[1:5, ]), "repeats after their first")
  same_rows(matrix(sample(0:6, 30000, TRUE), ncol = 3), "many repeats, table full of equal hashes' neighbours")
  same_rows(matrix(sample(0:3, 5000, TRUE), ncol = 1), "one column")
  same_rows(cbind(1, 1:50 %% 7, c(rep(0, 49), 2^-1074)), "rows that differ in the last column, by a subnormal")
  same_rows(cbind(c(0, -0, 0, 1, -0), c(-0, 0, 0, 1, -0)), "0 and -0 alike")
  same_rows(matrix(rnorm(50 * 40), ncol = 50)[rep(1:40, 3), ], "d = 50, each row three times")
  same_rows(matrix(numeric(0), ncol = 2), "no rows")
  same_rows(matrix(c(1e308, -1e308, .Machine$double.xmin), ncol = 1)[c(1, 2, 1, 3, 3), , drop = FALSE], "extremes")
  # two threads from 2^17 rows: the rows split by hash into parts, a table each
  y <- matrix(rnorm(2 * (2^17 + 5)), ncol = 2)
  y <- rbind(y, y[sample.int(nrow(y), 30000), ])[sample.int(nrow(y) + 30000), ]
  expect_identical(gpukmeans:::gk_unique_rows(y, 2L), which(!duplicated(y)), label = "two threads, repeats")
  z <- matrix(sample(0:20, 2 * (2^17 + 5), TRUE), ncol = 2)
  expect_identical(gpukmeans:::gk_unique_rows(z, 2L), which(!duplicated(z)), label = "two threads, 441 rows")
  withr::with_envvar(c(GPUKMEANS_DISTINCT_HASH_BITS = "3"),
    expect_identical(gpukmeans:::gk_unique_rows(z, 2L), which(!duplicated(z)), label = "two threads, 3 bits"))
})

test_backends("a logical matrix is used as 0/1 data, as stats", function(backend) {
  set.seed(1)
  x <- matrix(runif(300) > 0.5, ncol = 3)
  expect_kmeans_parity(x, 3, seed = 2)
})

test_backends("ties go to the first (lowest index) center, as stats", function(backend) {
  # point 2 is exactly halfway between centers 0 and 2
  x <- c(0, 1, 2)
  p <- expect_kmeans_parity(x, matrix(c(0, 2)))
  expect_identical(p$g$cluster[2], 1L)
  p <- expect_kmeans_parity(x, matrix(c(2, 0)))
  expect_identical(p$g$cluster[2], 1L)
  # 2-D: (2, 10) equidistant to (1, 0) and (3, 0)
  x <- rbind(c(1, 0), c(3, 0), c(2, 10), c(1, 0), c(3, 0))
  p <- expect_kmeans_parity(x, rbind(c(1, 0), c(3, 0)), iter.max = 1)
  expect_identical(p$g$cluster[3], 1L)
})

test_backends("empty cluster: same warning, NaN center row and size 0 as stats", function(backend) {
  x <- as.matrix(iris[, 1:4])
  ctr <- rbind(x[c(1, 51, 101), ], far = c(100, 100, 100, 100))
  msg <- "empty cluster: try a better set of initial centers"
  # stats warns (twice, in R 4.2); the count is compared by the parity check
  expect_identical(unique(with_warnings(stats::kmeans(x, ctr, algorithm = "Lloyd"))$warnings),
                   msg)
  expect_identical(unique(with_warnings(gpu_kmeans(x, ctr))$warnings), msg)
  p <- expect_kmeans_parity(x, ctr)
  expect_true(length(p$g_warn) >= 1L)
  expect_identical(p$g$size[4], 0L)
  expect_true(all(is.nan(p$g$centers[4, ])))
  expect_identical(p$g$withinss[4], 0)
  expect_false(any(p$g$cluster == 4L))
  expect_null(p$g$ifault)
  # the empty center may be in the middle of the list too
  ctr2 <- rbind(x[1, ], c(-50, -50, -50, -50), x[c(51, 101), ])
  p <- expect_kmeans_parity(x, ctr2)
  expect_identical(p$g$size[2], 0L)
  expect_false(anyNA(p$g$cluster))
})

test_backends("a cluster that empties during the iterations (not at the start) as stats", function(backend) {
  x <- c(0.304, 0.475, 0.994, 0.521, 0.843, 0.723, 0.615, 0.739, 0.417,
         0.373, 0.968, 0.607, 0.474, 0.858, 0.435, 0.082, 0.421, 0.175,
         0.618, 0.372, 0.222, 0.36, 0.533, 0.796, 0.771, 0.923, 0.467,
         0.996, 0.214, 0.215, 0.178, 0.258, 0.806, 0.165, 0.977, 0.036,
         0.826, 0.041, 0.053, 0.513)
  ctr <- c(0.012, 0.147, 0.189, 0.249, 0.283, 0.412, 0.434, 0.498)
  # every center has points at the start ...
  expect_true(all(tabulate(nearest_center(matrix(x), matrix(ctr)), 8L) > 0L))
  p <- expect_kmeans_parity(x, matrix(ctr), iter.max = 50)
  # ... but cluster 2 ends empty, with a NaN center
  expect_identical(p$g$size[2], 0L)
  expect_true(is.nan(p$g$centers[2, 1]))
  expect_identical(unique(p$g_warn), "empty cluster: try a better set of initial centers")
  expect_identical(p$g$iter, 5L)
})

test_backends("not converged: warning, ifault 2L and iter = iter.max + 1 as stats", function(backend) {
  x <- as.matrix(iris[, 1:4])
  ctr <- x[c(1, 2, 3), ]
  expect_warning(stats::kmeans(x, ctr, iter.max = 1, algorithm = "Lloyd"),
                 "did not converge in 1 iteration")
  expect_warning(g <- gpu_kmeans(x, ctr, iter.max = 1),
                 "did not converge in 1 iteration")
  expect_identical(g$ifault, 2L)
  expect_identical(g$iter, 2L)
  p <- expect_kmeans_parity(x, ctr, iter.max = 1)
  expect_identical(p$g_warn, "did not converge in 1 iteration")
  # iter.max = 1: labels are those of the initial centers, centers updated
  expect_identical(unname(p$g$cluster), nearest_center(x, ctr))
  p <- expect_kmeans_parity(x, ctr, iter.max = 2)
  expect_identical(p$g_warn, "did not converge in 2 iterations")
  expect_identical(p$g$ifault, 2L)
})

test_backends("'did not converge in 3 iterations' as stats", function(backend) {
  set.seed(3)
  x <- matrix(runif(3000), ncol = 3)
  expect_warning(stats::kmeans(x, x[1:8, ], iter.max = 3L, algorithm = "Lloyd"),
                 "did not converge in 3 iterations")
  expect_warning(g <- gpu_kmeans(x, x[1:8, ], iter.max = 3L),
                 "did not converge in 3 iterations")
  expect_identical(g$ifault, 2L)
  expect_identical(g$iter, 4L)
  p <- expect_kmeans_parity(x, x[1:8, ], iter.max = 3L)
  # and with random starts: one warning per start, as stats
  p <- expect_kmeans_parity(x, 8, iter.max = 3L, nstart = 3, seed = 4)
  expect_identical(p$g_warn, rep("did not converge in 3 iterations", 3))
})

test_backends("converged fits have ifault NULL and a 9-component list", function(backend) {
  p <- expect_kmeans_parity(faithful, 2, seed = 1)
  expect_null(p$g$ifault)
  expect_length(unclass(p$g), 9L)
  expect_true("ifault" %in% names(p$g))
})
