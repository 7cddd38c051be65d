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
  c(out, sub("\n$", "", msgs))
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

test_that("the delay is the user's cli.progress_show_after unless gpukmeans.progress_after is set", {
  d <- progress_data()
  withr::local_options(gpukmeans.progress = NA, gpukmeans.progress_after = NULL,
                       cli.progress_show_after = 0)
  expect_identical(gpukmeans:::progress_after(), 0)
  msgs <- progress_output(gpu_kmeans(d$x, d$c0, iter.max = 20, backend = "cpu"))
  expect_true(any(grepl("gpu_kmeans .*iter 1/20, 20,000 changed", msgs)))
  withr::local_options(cli.progress_show_after = 3600)
  expect_identical(gpukmeans:::progress_after(), 3600)
  expect_length(progress_output(gpu_kmeans(d$x, d$c0, iter.max = 20, backend = "cpu")), 0L)
  # the option is the user's: gpu_kmeans does not change it
  expect_identical(getOption("cli.progress_show_after"), 3600)
  withr::local_options(gpukmeans.progress_after = 0)
  expect_identical(gpukmeans:::progress_after(), 0)
  for (bad in list(-1, NA, "2", c(1, 2))) {
    withr::local_options(gpukmeans.progress_after = bad)
    expect_error(gpu_kmeans(d$x, d$c0, iter.max = 20), "options\\(gpukmeans.progress_after =\\) must be a number of seconds >= 0")
  }
  withr::local_options(gpukmeans.progress_after = NULL, cli.progress_show_after = "soon")
  expect_error(gpu_kmeans(d$x, d$c0, iter.max = 20), "options\\(cli.progress_show_after =\\) must be a number of seconds")
  for (bad in list("yes", 1, c(TRUE, FALSE))) {
    withr::local_options(gpukmeans.progress = bad)
    expect_error(gpu_kmeans(d$x, d$c0, iter.max = 20), "options\\(gpukmeans.progress =\\) must be NA, TRUE or FALSE")
  }
})

test_that("the bar's text shows what is known and no placeholders", {
  withr::local_options(gpukmeans.progress = TRUE)
  p <- gpukmeans:::new_progress(20L, 3L, dynamic = FALSE, log_every = 0)
  out <- progress_output({
    p$update(NA_integer_, -1, 1L)   # before the first iteration
    p$update(1L, 5000, 1L)
    p$update(NA_integer_, -1, 1L)   # between iterations
    p$update(NA_integer_, -1, 2L)   # a new start
    p$update(3L, 0, 2L)
    p$done()
  })
  expect_length(out, 5L)
  expect_false(any(grepl("?", out, fixed = TRUE)))
  expect_match(out[1], "^gpu_kmeans start 1/3, starting \\| [0-9]+s$")
  expect_match(out[2], "^gpu_kmeans start 1/3, iter 1/20, 5,000 changed \\| [0-9]+s$")
  expect_match(out[3], "^gpu_kmeans start 1/3, iter 1/20, 5,000 changed \\| [0-9]+s$")
  expect_match(out[4], "^gpu_kmeans start 2/3, starting \\| [0-9]+s$")
  expect_match(out[5], "^gpu_kmeans start 2/3, iter 3/20, 0 changed \\| [0-9]+s$")
  p <- gpukmeans:::new_progress(20L, 1L, choosing = TRUE, dynamic = FALSE, log_every = 0)
  out <- progress_output({p$update(NA_integer_, -1, 1L); p$done()})
  expect_match(out, "^gpu_kmeans choosing initial centers \\| [0-9]+s$")
})

test_that("without a console that redraws (a log), at most one line every 5 seconds", {
  withr::local_options(gpukmeans.progress = TRUE)
  now <- 1000
  p <- gpukmeans:::new_progress(1000L, 1L, t_begin = .POSIXct(1000), clock = function() now,
                                dynamic = FALSE)
  # 100 calls, 0.2 s apart (as often as the engines call): 20 seconds
  out <- progress_output({
    for (i in 1:100) {
      now <- 1000 + i * 0.2
      p$update(i, 10, 1L)
    }
    p$done()
  })
  expect_identical(out, c("gpu_kmeans iter 1/1000, 10 changed | 0s",
                          "gpu_kmeans iter 26/1000, 10 changed | 5s",
                          "gpu_kmeans iter 51/1000, 10 changed | 10s",
                          "gpu_kmeans iter 76/1000, 10 changed | 15s"))
  expect_identical(gpukmeans:::format_elapsed(65), "1m 05s")
  expect_identical(gpukmeans:::format_elapsed(7322), "2h 02m")
})

test_that("with progressr listening (with_progress), progress goes there, not to the console", {
  skip_if_not_installed("progressr")
  withr::local_options(gpukmeans.progress = TRUE, progressr.enable = TRUE)
  got <- list()
  keep <- function(cond) got[[length(got) + 1L]] <<- list(type = cond$type, message = cond$message,
                                                          amount = cond$amount)
  run <- function() {
    p <- gpukmeans:::new_progress(20L, 2L)
    expect_identical(p$via, "progressr")
    withCallingHandlers({
      # as the engine calls it, with R's handlers in place
      withCallingHandlers({
        p$update(1L, 10, 1L)
        p$update(4L, 2, 2L)
      }, gpukmeans_probe = p$probe)
      p$done()
    }, progression = keep)
  }
  progressr::with_progress(run(), handlers = progressr::handler_void())
  types <- vapply(got, `[[`, "", "type")
  msgs <- vapply(got, function(g) paste(g$message, collapse = ""), "")
  expect_identical(types, c("initiate", "update", "update", "update"))
  expect_identical(msgs[2:4], c("gpu_kmeans: start 1/2, iter 1/20, 10 changed",
                                "gpu_kmeans: start 2/2, iter 4/20, 2 changed",
                                "gpu_kmeans: done"))
  expect_identical(vapply(got[2:4], `[[`, 0, "amount"), c(0, 1, 1))
  # a whole fit inside with_progress draws no cli bar
  d <- progress_data()
  out <- progress_output(progressr::with_progress(
    fit <- gpu_kmeans(d$x, d$c0, iter.max = 20, backend = "cpu"),
    handlers = progressr::handler_void()))
  expect_length(out, 0L)
  expect_s3_class(fit, "gpu_kmeans")
  # outside, the cli bar again
  expect_identical(gpukmeans:::new_progress(20L, 1L)$via, "cli")
})

test_that("progressr's global handlers get the engine's progress live (fresh R session)", {
  skip_if_not_installed("progressr")
  rscript <- file.path(R.home("bin"), "Rscript")
  code <- paste(
    "options(progressr.enable = TRUE, gpukmeans.progress = TRUE, gpukmeans.backend = 'cpu')",
    "progressr::handlers(global = TRUE)",
    "progressr::handlers(progressr::handler_debug(interval = 0))",
    "x <- gpukmeans::simulate_blobs(20000, 2, 5, seed = 1)",
    "f <- gpukmeans::gpu_kmeans(x, x[1:5, ], iter.max = 20)",
    sep = "; ")
  out <- suppressWarnings(system2(rscript, c("-e", shQuote(code)), stdout = TRUE, stderr = TRUE,
                                  env = paste0("R_LIBS=", paste(.libPaths(), collapse = ":"))))
  expect_true(any(grepl("initiate: 0/1", out)))
  # an update sent by the engine during the fit (only the engine knows the iteration)
  expect_true(any(grepl("update: 0/1 .*'gpu_kmeans: iter 1/20, 20,000 changed'", out)))
  expect_true(any(grepl("update: 1/1 .*'gpu_kmeans: done'", out)))
})

test_that("with_progress() sees a long fit, to its end", {
  skip_if_not_installed("progressr")
  withr::local_options(gpukmeans.progress = TRUE, progressr.enable = TRUE)
  got <- character()
  d <- progress_data()
  progressr::with_progress(
    withCallingHandlers(fit <- gpu_kmeans(d$x, d$c0, iter.max = 20, backend = "cpu"),
                        progression = function(cond) got <<- c(got, cond$type)),
    handlers = progressr::handler_void())
  # initiate, the engine's updates, the last step (nothing lost on the way)
  expect_identical(got[1], "initiate")
  expect_true(length(got) >= 2L)
  expect_s3_class(fit, "gpu_kmeans")
})
