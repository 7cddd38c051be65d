# Work the CUDA engine starts beside a plain upload (src/cuda_engine.cpp's
# start_totss, src/labels.h's PageToucher): totss on a host thread of its
# own, and the labels' fresh pages touched while x crosses to the device.
# Neither may change a bit of a fit: each case fits with it and without it
# (the internal GPUKMEANS_EARLY=0) and compares everything but the timing,
# checks totss against the CPU engine's (the same function: the same bits)
# and against R's own sum, and reads from the stage log that the early task
# ran where it should (else the comparison would prove nothing).

early_fit <- function(x, centers, single, weights = NULL, early = TRUE, tuning = c(0L, 0L, 0L, 1L),
                      finite = TRUE, engine = "cuda") {
  withr::local_envvar(GPUKMEANS_EARLY = if (early) "" else "0")
  gpukmeans:::gk_fit_cpp(x, list(centers), 5L, single, engine, 0L, 0L, FALSE, NULL, Inf, list(tuning = tuning),
                         FALSE, weights, finite)
}

without_timing <- function(f) f[setdiff(names(f), "timing")]

early_cases <- list(
  # labels of 1.2 MB: the pages are touched (from 1 MiB)
  "double, 3e5 rows" = list(n = 3e5, single = FALSE),
  "single, 3e5 rows" = list(n = 3e5, single = TRUE),
  # labels below 1 MiB: totss only
  "double, 5000 rows" = list(n = 5000, single = FALSE),
  "double, weighted" = list(n = 3e5, single = FALSE, weighted = TRUE),
  "single, weighted" = list(n = 3e5, single = TRUE, weighted = TRUE)
)

for (case_name in names(early_cases)) {
  cs <- early_cases[[case_name]]
  test_that(sprintf("totss and the labels' pages started beside the upload change no bit of a fit [%s]",
                    case_name), {
    skip_if_no_gpu()
    set.seed(11)
    n <- cs$n
    x <- cbind(rnorm(n, 1e3), rnorm(n) * 50, runif(n))
    centers <- x[sample.int(n, 7), ]
    w <- if (isTRUE(cs$weighted)) runif(n, 0, 3) else NULL
    on <- with_stages(early_fit(x, centers, cs$single, w), "^totss_early")
    off <- with_stages(early_fit(x, centers, cs$single, w, early = FALSE), "^totss_early")
    expect_identical(on$stages, "totss_early")
    expect_identical(off$stages, character(0))
    expect_identical(without_timing(on$value), without_timing(off$value))
    # the labels are the fit's, not the toucher's zeros
    expect_false(any(on$value$cluster == 0L))
    expect_identical(sort(unique(on$value$cluster)), 1:7)
    cpu <- early_fit(x, centers, cs$single, w, engine = "cpu")
    expect_identical(on$value$totss, cpu$totss)
    r_totss <- if (is.null(w)) sum(scale(x, scale = FALSE)^2)
               else sum(w * sweep(x, 2, colSums(w * x) / sum(w))^2)
    expect_equal(on$value$totss, r_totss, tolerance = 1e-12)
  })
}

test_that("a staged upload starts no early totss, and gives its bits", {
  skip_if_no_gpu()
  set.seed(12)
  x <- matrix(rnorm(2e5 * 2), ncol = 2)
  centers <- x[1:5, ]
  staged <- with_stages(early_fit(x, centers, FALSE, tuning = c(0L, 0L, 0L, 1L, 2L)), "^totss_early")
  plain <- early_fit(x, centers, FALSE)
  expect_identical(staged$stages, character(0))
  expect_identical(staged$value$totss, plain$totss)
  expect_identical(staged$value$cluster, plain$cluster)
})

test_that("a value that is not finite still stops the fit by name while totss runs beside the upload", {
  skip_if_no_gpu()
  set.seed(13)
  x <- matrix(rnorm(3e5 * 2), ncol = 2)
  x[123456, 2] <- NaN
  centers <- x[1:4, ]
  for (early in c(TRUE, FALSE)) {
    e <- tryCatch(early_fit(x, centers, FALSE, early = early, finite = FALSE), error = identity)
    expect_s3_class(e, "gpukmeans_nonfinite")
    expect_identical(e$index, 3e5 + 123456)
  }
})

test_that("the early work serves fits through gpu_kmeans() one after another", {
  skip_if_no_gpu()
  set.seed(14)
  x <- matrix(rnorm(4e5 * 2), ncol = 2)
  set.seed(1)
  a <- suppressWarnings(gpu_kmeans(x, 6, iter.max = 30, backend = "cuda"))
  set.seed(1)
  b <- suppressWarnings(gpu_kmeans(x, 6, iter.max = 30, backend = "cuda"))
  set.seed(1)
  s <- suppressWarnings(stats::kmeans(x, 6, iter.max = 30, algorithm = "Lloyd"))
  expect_identical(a$cluster, b$cluster)
  expect_identical(a$cluster, s$cluster)
  expect_equal(a$totss, s$totss, tolerance = 1e-12)
  expect_identical(a$totss, b$totss)
})
