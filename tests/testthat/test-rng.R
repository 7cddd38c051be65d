# Same RNG use as stats::kmeans: same draws, same state afterwards.
local_edition(3)

test_backends("set.seed parity for nstart = 1 over several seeds", function(backend) {
  x <- as.matrix(faithful)
  for (seed in c(1, 2, 3, 42, 123456)) {
    expect_kmeans_parity(x, 3, nstart = 1, seed = seed)
  }
})

test_backends("set.seed parity for nstart = 5 over several seeds", function(backend) {
  x <- iris[, 1:4]
  for (seed in c(1, 2, 3, 42, 123456)) {
    expect_kmeans_parity(x, 4, nstart = 5, seed = seed)
  }
  for (seed in c(10, 20)) {
    expect_kmeans_parity(USArrests, 3, nstart = 5, seed = seed)
  }
})

test_backends("the next random number after the call is the same as after stats", function(backend) {
  set.seed(77); invisible(stats::kmeans(faithful, 3, nstart = 3, algorithm = "Lloyd"))
  u_s <- runif(3)
  set.seed(77); invisible(gpu_kmeans(faithful, 3, nstart = 3))
  u_g <- runif(3)
  expect_identical(u_g, u_s)
})

test_backends("a centers matrix consumes no random numbers (as stats)", function(backend) {
  set.seed(5)
  before <- get_seed()
  g <- gpu_kmeans(iris[, 1:4], as.matrix(iris[c(1, 51, 101), 1:4]))
  expect_identical(get_seed(), before)
  # nstart is ignored for a centers matrix, as in stats
  p <- expect_kmeans_parity(iris[, 1:4], as.matrix(iris[c(1, 51, 101), 1:4]),
                            nstart = 4, seed = 5)
  expect_identical(p$g_seed, before)
})

test_backends("the same seed gives the same fit twice", function(backend) {
  set.seed(9); g1 <- gpu_kmeans(quakes, 4, nstart = 3, iter.max = 50)
  set.seed(9); g2 <- gpu_kmeans(quakes, 4, nstart = 3, iter.max = 50)
  expect_identical(strip_gk(g1), strip_gk(g2))
})

test_backends("k = 1 with a number consumes the same random numbers as stats", function(backend) {
  expect_kmeans_parity(faithful, 1, seed = 4)
  expect_kmeans_parity(faithful, 1, nstart = 3, seed = 4)
})

test_backends("RNG kind does not matter: parity under a different RNG kind", function(backend) {
  suppressWarnings(withr::local_seed(2, .rng_kind = "Mersenne-Twister",
                                     .rng_sample_kind = "Rounding"))
  s <- suppressWarnings(stats::kmeans(faithful, 3, algorithm = "Lloyd"))
  after_s <- get_seed()
  suppressWarnings(withr::local_seed(2, .rng_kind = "Mersenne-Twister",
                                     .rng_sample_kind = "Rounding"))
  g <- suppressWarnings(gpu_kmeans(faithful, 3))
  expect_same_fit(g, s)
  expect_identical(get_seed(), after_s)
})

test_backends("nstart = 10 on blobs: ties between equal partitions resolved as stats", function(backend) {
  # many starts converge to the same partition with permuted labels; stats
  # keeps the first start with the strictly smallest tot.withinss
  set.seed(50)
  x <- make_blobs(3000, 2, 3, sd = 1, spread = 20)
  for (seed in 1:5) expect_kmeans_parity(x, 3, nstart = 10, seed = seed)
  set.seed(51)
  x <- make_blobs(5000, 5, 6, sd = 2, spread = 10)
  for (seed in 1:3) expect_kmeans_parity(x, 6, nstart = 8, iter.max = 50, seed = seed)
})

test_backends("no .Random.seed is created when no random numbers are needed (as stats)", function(backend) {
  withr::local_preserve_seed()
  x <- as.matrix(iris[, 1:4])
  if (exists(".Random.seed", envir = globalenv(), inherits = FALSE))
    rm(".Random.seed", envir = globalenv())
  invisible(stats::kmeans(x, x[c(1, 51, 101), ], algorithm = "Lloyd"))
  expect_false(exists(".Random.seed", envir = globalenv(), inherits = FALSE))
  invisible(gpu_kmeans(x, x[c(1, 51, 101), ]))
  expect_false(exists(".Random.seed", envir = globalenv(), inherits = FALSE))
  fit <- gpu_kmeans(x, x[c(1, 51, 101), ])
  if (exists(".Random.seed", envir = globalenv(), inherits = FALSE))
    rm(".Random.seed", envir = globalenv())
  invisible(predict(fit, x[1:5, ]))
  expect_false(exists(".Random.seed", envir = globalenv(), inherits = FALSE))
})
