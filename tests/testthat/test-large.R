# A larger random case against stats (a few seconds).
local_edition(3)

test_backends("2e5 x 8, k = 50 equals stats", function(backend) {
  set.seed(42)
  x <- make_blobs(2e5, 8, 50, sd = 3, spread = 20)
  p <- expect_kmeans_parity(x, 50, iter.max = 30, seed = 1)
  expect_identical(sum(p$g$size), 200000L)
  expect_identical(p$g$size, tabulate(p$g$cluster, 50L))
})

test_backends("2e4 x 3 uniform data, k = 40, nstart = 2 equals stats", function(backend) {
  set.seed(43)
  x <- matrix(runif(6e4), ncol = 3)
  expect_kmeans_parity(x, 40, iter.max = 20, nstart = 2, seed = 2)
})
