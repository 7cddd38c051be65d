# A Lloyd fit leaves the check that x is finite to the engine (HostData::finite,
# src/nonfinite.h): the CUDA engine's staged upload checks the values it
# copies, the CPU engine, the other uploads and the multi-device composite
# scan x first.  Whichever engine and copy finds the value, the error is the
# one R's own check gives, naming the first bad value in column-major order,
# and the generator is where stats::kmeans() leaves it.

# x: 3000 x 7 doubles = 21000 values, so that the staged copy's small test
# buffers (64 KiB: 8192 doubles or 16384 floats) split it into chunks.
nf_x <- function() {
  set.seed(11)
  matrix(rnorm(3000 * 7), 3000, 7)
}
nf_places <- c(1, 2, 2999, 3001, 8192, 8193, 16384, 16385, 20999, 21000)

# R's own message for the first bad value of x (the check of data_matrix(),
# as for algorithm = "Hartigan-Wong").
r_message <- function(x) gpukmeans:::data_matrix(x)$problem

# The configurations an engine takes x in: list(name, backend, options).
nf_configs <- function() {
  list(
    list("cpu", "cpu", list()),
    list("cuda staged (small buffers)", "cuda", list(gpukmeans.cuda_tuning = c(0L, 0L, 0L, 0L, 2L))),
    list("cuda one pageable copy", "cuda", list(gpukmeans.cuda_tuning = c(0L, 0L, 0L, 0L, 1L))),
    list("cuda streamed", "cuda", list(gpukmeans.stream = TRUE, gpukmeans.stream_rows = 700)),
    list("cpu, two parts", "cpu", list(gpukmeans.cpu_parts = 2L))
  )
}

for (cfg in nf_configs()) {
  for (precision in c("double", "single")) {
    test_that(sprintf("a value that is not finite is found where R finds it [%s, %s]", cfg[[1]], precision), {
      if (cfg[[2]] == "cuda") skip_if_no_gpu()
      withr::local_options(c(list(gpukmeans.backend = cfg[[2]]), cfg[[3]]))
      x <- nf_x()
      values <- list(NA_real_, NaN, Inf, -Inf)
      for (p in nf_places) {
        v <- values[[p %% 4 + 1]]
        y <- x
        y[p] <- v
        msg <- r_message(y)
        expect_match(msg, sprintf("in row %d, column %d\\)$", (p - 1) %% 3000 + 1, (p - 1) %/% 3000 + 1))
        expect_error(gpu_kmeans(y, 5, precision = precision), msg, fixed = TRUE)
        # the first of several, also when a later chunk is copied first by no one
        y[min(21000, p + 9000)] <- NaN
        y[max(1, p - 1)] <- if (p > 1) Inf else y[max(1, p - 1)]
        expect_error(gpu_kmeans(y, 5, precision = precision), r_message(y), fixed = TRUE)
      }
    })
  }
  test_that(sprintf("predict() names the value of newdata that is not finite [%s]", cfg[[1]]), {
    if (cfg[[2]] == "cuda") skip_if_no_gpu()
    withr::local_options(c(list(gpukmeans.backend = cfg[[2]]), cfg[[3]]))
    x <- nf_x()
    fit <- gpu_kmeans(x, x[1:5, ], backend = cfg[[2]])  # (converged: its labels are the nearest centers)
    for (p in nf_places) {
      y <- x
      y[p] <- c(NA, NaN, Inf, -Inf)[p %% 4 + 1]
      msg <- gpukmeans:::data_matrix(y, "newdata")$problem
      expect_match(msg, "^'newdata' must not contain")
      expect_error(predict(fit, y, backend = cfg[[2]]), msg, fixed = TRUE)
    }
    # a bad value is named before a wrong number of columns
    expect_error(predict(fit, cbind(y, 1), backend = cfg[[2]]), "'newdata' must not contain", fixed = TRUE)
    expect_identical(predict(fit, x, backend = cfg[[2]]), fit$cluster)
  })
  test_that(sprintf("after that error the generator is where stats leaves it [%s]", cfg[[1]]), {
    if (cfg[[2]] == "cuda") skip_if_no_gpu()
    withr::local_options(c(list(gpukmeans.backend = cfg[[2]]), cfg[[3]]))
    y <- nf_x()
    y[4321] <- NA
    for (args in list(list(5), list(5, nstart = 3), list(y[c(1, 9, 77), ]))) {
      set.seed(3)
      expect_error(suppressWarnings(do.call(stats::kmeans, c(list(y), args))))
      s_seed <- get_seed()
      set.seed(3)
      expect_error(do.call(gpu_kmeans, c(list(y), args)), r_message(y), fixed = TRUE)
      expect_identical(get_seed(), s_seed)
    }
    # k-means++ draws its numbers start by start: none before this error
    set.seed(3)
    before <- get_seed()
    expect_error(gpu_kmeans(y, 5, init = "kmeans++", nstart = 2), r_message(y), fixed = TRUE)
    expect_identical(get_seed(), before)
  })
}

test_that("an error that comes first still names the value that is not finite", {
  withr::local_options(gpukmeans.backend = "cpu")
  # two distinct rows and NaN: stats stops on the data, not on the centers
  y <- rbind(matrix(1, 5, 2), matrix(2, 5, 2))
  y[6, 2] <- NaN
  expect_error(gpu_kmeans(y, 4, nstart = 2), r_message(y), fixed = TRUE)
  expect_error(gpu_kmeans(y, 4), r_message(y), fixed = TRUE)
  # bad weights and bad data: the data first, as before any draw
  expect_error(gpu_kmeans(y, 2, weights = rep(-1, 10)), r_message(y), fixed = TRUE)
  # finite data: the other error itself
  expect_error(gpu_kmeans(matrix(1, 5, 2), 2, nstart = 2), "more cluster centers than distinct data points.")
})

test_that("the engines signal the first bad value's place with class gpukmeans_nonfinite", {
  x <- nf_x()
  x[c(9000, 12000)] <- c(Inf, NA)
  engines <- list(list("cpu", list()))
  if (has_gpu()) {
    engines <- c(engines, list(list("cuda", list(tuning = c(0L, 0L, 0L, 0L, 2L))),
                               list("cuda", list(tuning = c(0L, 0L, 0L, 0L, 1L))),
                               list("cuda", list(stream = 2L, stream_rows = 700))))
  }
  for (e in engines) {
    for (single in c(FALSE, TRUE)) {
      err <- tryCatch(gpukmeans:::gk_fit_cpp(x, list(x[1:3, ]), 10L, single, e[[1]], 1L, 0L, FALSE, NULL, Inf,
                                             e[[2]], finite = FALSE),
                      error = function(e) e)
      expect_s3_class(err, "gpukmeans_nonfinite")
      expect_identical(err$index, 9000)
    }
  }
  # told that x is finite, an engine does not look
  ok <- gpukmeans:::gk_fit_cpp(x[1:10, ], list(x[1:3, ]), 10L, FALSE, "cpu", 1L, 0L, FALSE, NULL, Inf, list(),
                               finite = FALSE)
  expect_identical(ok$size, tabulate(ok$cluster, 3))
})
