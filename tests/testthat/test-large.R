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

# Past 2^31 values on the device (issue: size limits).  About 30 GB of host
# memory and 10 GB of device memory, a minute: only with
# GPUKMEANS_TEST_LARGE=true (the GPU machine's runs set it).  7 centers
# repeated in turn: a row read at an offset wrapped to 32 bits (2^29 rows of
# 8 values, 2^29 mod 7 = 4) would get another row's label.
test_that("cuda: 3e8 x 8 (2.4e9 values) in single precision: every label, size and center right, predict too", {
  skip_if_no_gpu()
  skip_if_not(identical(Sys.getenv("GPUKMEANS_TEST_LARGE"), "true"),
              "GPUKMEANS_TEST_LARGE=true runs it (30 GB of RAM, 10 GB of GPU memory)")
  n <- 3e8
  d <- 8L
  k <- 7L
  ctr <- matrix(c(0, 10, 20, 30, 40, 50, 60), k, d) + matrix(seq_len(d) / 4, k, d, byrow = TRUE)
  lab <- rep_len(seq_len(k), n)
  x <- matrix(0, n, d)
  for (j in seq_len(d)) x[, j] <- ctr[lab, j]
  f <- gpu_kmeans(x, ctr, iter.max = 5, precision = "single", backend = "cuda")
  expect_identical(f$iter, 2L)  # stats' count: the pass that assigns, the pass that changes nothing
  expect_identical(length(f$cluster), as.integer(n))
  expect_true(identical(f$cluster, lab))
  expect_identical(f$size, tabulate(lab, k))
  expect_equal(unname(f$centers), ctr, tolerance = 1e-6)
  expect_lt(f$tot.withinss, 1e-3 * f$totss)
  p <- predict(f, x)
  expect_true(identical(p, lab))
})
