# Progress bar: only when asked for, or when the fit runs past the threshold.
# cli writes the bar to the console (stderr) or signals it as a message,
# depending on its handlers: collect both.
progress_output <- function(code) {
  msgs <- character()
  out <- utils::capture.output(
    withCallingHandlers(invisible(code), message = function(m) {
      msgs <<- c(msgs, conditionMessage(m))
      invokeRestart("muffleMessage")
    }),
    type = "message")
  c(out, msgs)
}

progress_data <- function() {
  x <- simulate_blobs(20000, 2, 5, seed = 1)
  list(x = x, c0 = x[1:5, ])
}

test_that("options(gpukmeans.progress = TRUE) shows a progress bar", {
  d <- progress_data()
  withr::local_options(gpukmeans.progress = TRUE)
  msgs <- progress_output(fit <- gpu_kmeans(d$x, d$c0, iter.max = 20, backend = "cpu"))
  expect_true(any(grepl("gpu_kmeans .*iter [0-9]+/20, [0-9,]+ changed", msgs)))
  expect_s3_class(fit, "kmeans")
})

test_that("a threshold of 0 seconds shows the bar, as a long fit would", {
  d <- progress_data()
  withr::local_options(gpukmeans.progress = NA, gpukmeans.progress_after = 0)
  msgs <- progress_output(gpu_kmeans(d$x, d$c0, iter.max = 20, backend = "cpu"))
  expect_true(any(grepl("gpu_kmeans .*iter 1/20, 20,000 changed", msgs)))
})

test_that("no bar for a short fit by default, nor when switched off", {
  d <- progress_data()
  withr::local_options(gpukmeans.progress = NA, gpukmeans.progress_after = 2)
  expect_length(progress_output(gpu_kmeans(d$x, d$c0, iter.max = 20, backend = "cpu")), 0L)
  withr::local_options(gpukmeans.progress = FALSE, gpukmeans.progress_after = 0)
  expect_length(progress_output(gpu_kmeans(d$x, d$c0, iter.max = 20, backend = "cpu")), 0L)
})

test_that("the progress bar does not change the fit", {
  d <- progress_data()
  quiet <- withr::with_options(list(gpukmeans.progress = FALSE),
                               gpu_kmeans(d$x, d$c0, iter.max = 20, backend = "cpu"))
  withr::local_options(gpukmeans.progress = TRUE)
  bar <- progress_output(shown <- gpu_kmeans(d$x, d$c0, iter.max = 20, backend = "cpu"))
  expect_true(length(bar) > 0L)
  expect_identical(shown$cluster, quiet$cluster)
  expect_identical(shown$centers, quiet$centers)
  expect_identical(shown$iter, quiet$iter)
})
