# Argument checking. Where stats gives the same error, check stats too.
local_edition(3)

x <- as.matrix(iris[, 1:4])

test_that("missing centers", {
  expect_error(gpu_kmeans(x), "'centers' must be a number or a matrix")
  expect_error(stats::kmeans(x), "'centers' must be a number or a matrix")
})

test_that("NA, NaN or Inf in x", {
  for (bad in list(NA_real_, NaN, Inf, -Inf)) {
    xb <- x
    xb[5, 2] <- bad
    expect_error(gpu_kmeans(xb, 3), "NA, NaN or infinite")
  }
  df <- iris[, 1:4]
  df[3, 1] <- NA
  expect_error(gpu_kmeans(df, 3), "NA, NaN or infinite")
  expect_error(gpu_kmeans(c(1, 2, NA, 4), 2), "NA, NaN or infinite")
  xi <- matrix(1:10, 5)
  xi[2, 2] <- NA_integer_
  expect_error(gpu_kmeans(xi, 2), "NA, NaN or infinite")
})

test_that("non-numeric data.frame columns", {
  expect_error(gpu_kmeans(iris, 3), "must be numeric")
  df <- data.frame(a = c(1, 2, 3, 4), b = c("a", "b", "c", "d"))
  expect_error(gpu_kmeans(df, 2), "must be numeric")
})

test_that("zero rows", {
  expect_error(gpu_kmeans(matrix(numeric(0), 0, 2), 1), "'x' has no rows")
  expect_error(gpu_kmeans(iris[0, 1:4], 1), "'x' has no rows")
  expect_error(gpu_kmeans(numeric(0), 1), "'x' has no rows")
})

test_that("k < 1", {
  expect_error(gpu_kmeans(x, 0), "'centers' must be at least 1")
  expect_error(gpu_kmeans(x, -1), "'centers' must be at least 1")
  expect_error(gpu_kmeans(x, 0L), "'centers' must be at least 1")
})

test_that("NA, NaN, Inf or logical k", {
  expect_error(gpu_kmeans(x, NA), "'centers' must be a number")
  expect_error(gpu_kmeans(x, NA_real_), "'centers' must be a number of clusters or a matrix of initial centers, not NA")
  expect_error(gpu_kmeans(x, NA_integer_), "'centers' must be a number of clusters")
  expect_error(gpu_kmeans(x, NaN), "'centers' must be a number of clusters or a matrix of initial centers, not NaN")
  expect_error(gpu_kmeans(x, Inf), "'centers' \\(the number of clusters\\) must be finite, not Inf")
  # stats fails on TRUE too ("invalid 'size' argument")
  expect_error(gpu_kmeans(x, TRUE), "'centers' must be a number \\(of clusters\\) or a numeric matrix of initial centers, not TRUE")
  expect_error(stats::kmeans(x, TRUE, algorithm = "Lloyd"))
})

test_that("centers a list or character", {
  expect_error(gpu_kmeans(x, list(1, 2)), "'centers' must be a number or a numeric matrix")
  expect_error(gpu_kmeans(x, matrix(letters[1:8], 2)),
               "'centers' must be a number or a numeric matrix")
  expect_error(gpu_kmeans(x, c("1", "2")), "'centers' must be a number or a numeric matrix")
})

test_that("centers a length-1 character", {
  expect_error(gpu_kmeans(x, "3"), "'centers' must be a number \\(of clusters\\) or a numeric matrix of initial centers, not \"3\" \\(a character string\\)")
})

test_that("more cluster centers than data points", {
  expect_error(gpu_kmeans(x[1:5, ], 6), "more cluster centers than data points")
  expect_error(gpu_kmeans(x[1:5, ], 6, nstart = 3), "more cluster centers than")
  expect_error(gpu_kmeans(x[1:2, ], x[1:3, ]), "more cluster centers than data points")
  expect_error(stats::kmeans(x[1:2, ], x[1:3, ], algorithm = "Lloyd"),
               "more cluster centers than data points")
})

test_that("more cluster centers than distinct data points", {
  xd <- rbind(x[1:3, ], x[1:3, ], x[1:3, ])
  expect_error(gpu_kmeans(xd, 4, nstart = 2),
               "more cluster centers than distinct data points.", fixed = TRUE)
  expect_error(stats::kmeans(xd, 4, nstart = 2, algorithm = "Lloyd"),
               "more cluster centers than distinct data points.", fixed = TRUE)
  # nstart = 1: the first draw has duplicates, then unique(x) is too small
  xd <- matrix(rep(c(1, 2), each = 50), ncol = 1)
  set.seed(1)
  expect_error(stats::kmeans(xd, 3, algorithm = "Lloyd"),
               "more cluster centers than distinct data points.", fixed = TRUE)
  set.seed(1)
  expect_error(gpu_kmeans(xd, 3),
               "more cluster centers than distinct data points.", fixed = TRUE)
})

test_that("duplicated center rows", {
  ctr <- x[c(1, 51, 1), ]
  expect_error(gpu_kmeans(x, ctr), "initial centers are not distinct")
  expect_error(stats::kmeans(x, ctr, algorithm = "Lloyd"), "initial centers are not distinct")
  expect_error(gpu_kmeans(precip, matrix(c(10, 20, 10))), "initial centers are not distinct")
  # rows equal in all but one column are distinct
  ok <- gpu_kmeans(x, rbind(x[1, ], x[1, ] + c(0, 0, 0, 1e-12)), iter.max = 100L)
  expect_identical(nrow(ok$centers), 2L)
})

test_that("centers with NA or NaN rows: duplicates first, as stats, then the values", {
  na2 <- rbind(c(NA, 1), c(NA, 1), c(0, 0))
  nan2 <- rbind(c(NaN, 1), c(NaN, 1), c(0, 0))
  one <- rbind(c(NA, 1), c(NaN, 1), c(0, 0))  # (NA and NaN differ for duplicated())
  x2 <- x[, 1:2]
  for (ctr in list(na2, nan2)) {
    expect_error(stats::kmeans(x2, ctr, algorithm = "Lloyd"), "initial centers are not distinct")
    expect_error(gpu_kmeans(x2, ctr), "initial centers are not distinct")
  }
  expect_identical(anyDuplicated(one), 0L)
  expect_error(gpu_kmeans(x2, one), "'centers' must not contain NA, NaN or infinite values", fixed = TRUE)
  expect_error(gpu_kmeans(x2, rbind(c(Inf, 1), c(Inf, 1))), "initial centers are not distinct")
  expect_error(gpu_kmeans(x2, rbind(c(Inf, 1), c(-Inf, 1))),
               "'centers' must not contain NA, NaN or infinite values", fixed = TRUE)
})

test_that("column mismatch between x and centers", {
  expect_error(gpu_kmeans(x, x[1:3, 1:3]),
               "must have same number of columns in 'x' and 'centers'")
  expect_error(stats::kmeans(x, x[1:3, 1:3], algorithm = "Lloyd"),
               "must have same number of columns in 'x' and 'centers'")
  expect_error(gpu_kmeans(x[, 1:2], x[1:3, ]),
               "must have same number of columns in 'x' and 'centers'")
})

test_that("iter.max must be positive", {
  expect_error(gpu_kmeans(x, 3, iter.max = 0), "'iter.max' must be positive")
  expect_error(gpu_kmeans(x, 3, iter.max = NA), "'iter.max' must be positive")
  expect_error(gpu_kmeans(x, 3, iter.max = -5L), "'iter.max' must be positive")
  expect_error(stats::kmeans(x, 3, iter.max = 0, algorithm = "Lloyd"),
               "'iter.max' must be positive")
})

test_that("nstart must be a positive whole number", {
  expect_error(gpu_kmeans(x, 3, nstart = 0), "'nstart' must be a positive whole number")
  expect_error(gpu_kmeans(x, 3, nstart = -1), "'nstart' must be a positive whole number")
  expect_error(gpu_kmeans(x, 3, nstart = 1.5), "'nstart' must be a positive whole number")
  expect_error(gpu_kmeans(x, 3, nstart = NA), "'nstart' must be a positive whole number")
})

test_that("NA in a centers matrix", {
  ctr <- x[c(1, 51, 101), ]
  ctr[2, 3] <- NA
  expect_error(gpu_kmeans(x, ctr), "'centers' must not contain NA, NaN or infinite values")
  ctr[2, 3] <- Inf
  expect_error(gpu_kmeans(x, ctr), "'centers' must not contain NA, NaN or infinite values")
  ctr[2, 3] <- NaN
  expect_error(gpu_kmeans(x, ctr), "'centers' must not contain NA, NaN or infinite values")
})

test_that("unknown arguments are rejected, named or not, as stats does", {
  expect_error(gpu_kmeans(x, 3, foo = 1), "unused argument (foo = 1)", fixed = TRUE)
  expect_error(stats::kmeans(x, 3, foo = 1), "unused argument (foo = 1)", fixed = TRUE)
  # a misspelt argument is not silently swallowed by ...
  expect_error(gpu_kmeans(x, 3, iter.maxx = 5), "unused argument (iter.maxx = 5)", fixed = TRUE)
  # an extra positional argument after stats' six
  expect_error(gpu_kmeans(x, 3, 10, 1, "Lloyd", FALSE, 5), "unused argument (5)", fixed = TRUE)
  expect_error(stats::kmeans(x, 3, 10, 1, "Lloyd", FALSE, 5), "unused argument (5)", fixed = TRUE)
  expect_error(gpu_kmeans(x, 3, 10, 1, "Lloyd", FALSE, "single", foo = 2),
               "unused arguments (\"single\", foo = 2)", fixed = TRUE)
  # stats' six arguments by position work as in stats
  set.seed(1); g <- gpu_kmeans(x, 3, 10, 1, "Lloyd", FALSE)
  set.seed(1); s <- stats::kmeans(x, 3, 10, 1, "Lloyd", FALSE)
  expect_same_fit(g, s)
})

test_that("invalid algorithm / precision values", {
  expect_error(gpu_kmeans(x, 3, algorithm = "Elkan"), "should be one of")
  expect_error(stats::kmeans(x, 3, algorithm = "Elkan"), "should be one of")
  expect_error(gpu_kmeans(x, 3, precision = "half"), "should be one of")
})

test_that("backend = 'cuda' without a usable GPU says it is not available", {
  skip_if(has_gpu(), "a CUDA device is present")
  expect_error(gpu_kmeans(x, 3, backend = "cuda"), "not available")
})

test_that("errors leave the RNG state alone where stats would not draw", {
  set.seed(1)
  before <- get_seed()
  expect_error(gpu_kmeans(x, x[c(1, 1), ]))
  expect_identical(get_seed(), before)
})

test_that("a CUDA device the probe marks unusable is named, with the reason, in backend = \"cuda\"'s error", {
  state <- get(".gk_state", asNamespace("gpukmeans"))
  old <- list(probe = state$probe, pid = state$probe_pid)
  on.exit({
    state$probe <- old$probe
    state$probe_pid <- old$pid
  })
  state$probe <- list(built = TRUE, device_count = 2L, message = "",
                      devices = data.frame(id = 0:1, name = c("Card A", "Card B"), usable = c(TRUE, FALSE),
                                           why = c("", "compute capability 3.5 is below 6.0"),
                                           stringsAsFactors = FALSE))
  state$probe_pid <- Sys.getpid()
  reason <- gpukmeans:::cuda_unavailable_reason
  expect_null(reason(0L))
  expect_identical(reason(1L), "CUDA device 1 (Card B) cannot be used: compute capability 3.5 is below 6.0")
  expect_identical(reason(2L), "device 2 requested but only 2 CUDA devices are found")
  expect_error(gpu_kmeans(x, 3, backend = "cuda", device = 1),
               "backend = \"cuda\" is not available: CUDA device 1 (Card B) cannot be used: compute capability 3.5 is below 6.0",
               fixed = TRUE)
})
