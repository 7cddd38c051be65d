# The progress bar of gpu_kmeans() is drawn by cli, which in a non-interactive
# session (as under R CMD check) writes one line per redraw to stderr as a
# message.  The redraws during the fit are made from the engine's callback,
# evaluated at R's top level, where calling handlers (withCallingHandlers,
# expect_message, suppressMessages) do not see them; only the final line is
# signalled where they do.  So the bar is captured from the stderr stream.
progress_lines <- function(expr) {
  withr::local_options(cli.dynamic = FALSE, cli.progress_show_after = 0)
  out <- utils::capture.output({ force(expr); invisible() }, type = "message")
  out[nzchar(trimws(out))]
}

test_that("options(gpukmeans.progress = TRUE) shows a progress bar", {
  skip_if_not_installed("withr")
  withr::local_options(gpukmeans.progress = TRUE)
  x <- simulate_blobs(2000, 2, 3, seed = 1)
  lines <- progress_lines(gpu_kmeans(x, attr(x, "centers")))
  expect_true(any(grepl("gpu_kmeans", lines)))
  expect_true(any(grepl("iteration 1/10", lines)))
  # the final line is a message condition
  # (the sink keeps the redraws made during the fit out of the test log)
  utils::capture.output(
    expect_message(gpu_kmeans(x, attr(x, "centers")), "gpu_kmeans"),
    type = "message")
})

test_that("options(gpukmeans.progress = FALSE) and the default show none for short fits", {
  skip_if_not_installed("withr")
  x <- simulate_blobs(2000, 2, 3, seed = 1)
  withr::local_options(gpukmeans.progress = FALSE)
  expect_length(progress_lines(gpu_kmeans(x, 3, nstart = 3, iter.max = 50)), 0L)
  withr::local_options(gpukmeans.progress = NULL)
  expect_length(progress_lines(gpu_kmeans(x, 3, nstart = 3, iter.max = 50)), 0L)
  expect_silent(gpu_kmeans(x, attr(x, "centers")))
})
