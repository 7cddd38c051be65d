# Every numeric argument of every exported function, and every option, at
# the R boundary (issue 18): NA, 0, negative, fractional and huge values each
# work or give a clear R error that names the argument -- never a crash, a
# hang, or one of R's internal messages.
local_edition(3)

sweep_values <- list(NA, NA_real_, NaN, 0, -1, 0.5, 2.5, 1e9, 3e9, 1e18, Inf, -Inf)

# Messages that say nothing about the real problem.
unclear <- c("missing value where TRUE/FALSE needed", "argument is of length zero",
             "invalid 'size' argument", "NAs introduced by coercion", "subscript out of bounds",
             "non-numeric argument", "cannot allocate", "std::", "Rcpp", "'arg' must be",
             "NA/NaN/Inf in foreign function call", "vector size", "long vector",
             "not a valid integer", "cannot take a sample")

# f() must return, or fail with an error naming `what`; no warning may be
# one of R's unclear ones.  Returns "ok" or "error".
works_or_clear_error <- function(f, what, label) {
  w <- character()
  res <- tryCatch(
    withCallingHandlers(utils::capture.output(utils::capture.output(value <- f(), type = "message")),
                        warning = function(c) {
                          w <<- c(w, conditionMessage(c))
                          invokeRestart("muffleWarning")
                        }, message = function(c) invokeRestart("muffleMessage")),
    error = function(e) e)
  msgs <- c(w, if (inherits(res, "error")) conditionMessage(res))
  hits <- unclear[vapply(unclear, function(u) any(grepl(u, msgs, fixed = TRUE)), logical(1))]
  expect(length(hits) == 0L, sprintf("%s gives '%s'", label, paste(hits, collapse = "', '")))
  if (inherits(res, "error")) {
    expect_match(conditionMessage(res), what, fixed = TRUE, label = label)
    "error"
  } else "ok"
}

sweep <- function(make_call, what, name) {
  vapply(sweep_values, function(v) works_or_clear_error(function() make_call(v), what,
                                                        sprintf("%s = %s", name, format(v))),
         character(1))
}

x <- as.matrix(iris[, 1:4])
ctr <- x[c(1, 51, 101), ]

test_that("gpu_kmeans(): centers, iter.max, nstart, trace, device", {
  # which values work is part of the contract
  expect_identical(sweep(function(v) gpu_kmeans(x, v), "centers", "centers"),
                   c(rep("error", 6), "ok", rep("error", 5)))
  expect_identical(sweep(function(v) gpu_kmeans(x, ctr, iter.max = v), "iter.max", "iter.max"),
                   c(rep("error", 6), rep("ok", 5), "error"))
  expect_identical(sweep(function(v) gpu_kmeans(x, 3, nstart = v), "nstart", "nstart"),
                   c(rep("error", 6), "ok", rep("error", 5)))
  expect_identical(sweep(function(v) gpu_kmeans(x, ctr, trace = v), "trace", "trace"),
                   c("error", "error", "error", "ok", "error", "ok", "ok", "ok", rep("error", 4)))
  expect_identical(sweep(function(v) gpu_kmeans(x, ctr, device = v, backend = "cpu"), "device", "device"),
                   c("error", "error", "error", "ok", "error", "error", "error", "ok", rep("error", 4)))
  # the same checks before stats' algorithms
  expect_identical(sweep(function(v) gpu_kmeans(x, ctr, iter.max = v, algorithm = "Hartigan-Wong"),
                         "iter.max", "iter.max (Hartigan-Wong)"),
                   c(rep("error", 6), rep("ok", 5), "error"))
  expect_identical(sweep(function(v) gpu_kmeans(x, 3, nstart = v, algorithm = "MacQueen"),
                         "nstart", "nstart (MacQueen)"),
                   c(rep("error", 6), "ok", rep("error", 5)))
})

test_that("gpu_kmeans(): the data, the centers matrix and the string arguments", {
  sweep(function(v) gpu_kmeans(cbind(x[, 1:3], v), 3), "'x'", "a data column")
  sweep(function(v) gpu_kmeans(x, rbind(ctr[1:2, ], v)), "centers", "a center")
  for (arg in c("algorithm", "precision", "init", "backend")) {
    for (v in list(1, NA, TRUE, c("a", "b"), "", NULL, list("a"))) {
      args <- list(x, ctr)
      args[arg] <- list(v)
      works_or_clear_error(function() do.call(gpu_kmeans, args), arg, paste(arg, "=", deparse(v)))
    }
  }
  expect_error(gpu_kmeans(x, 3, precision = 1), "'precision' should be one of \"double\", \"single\", not 1")
  # partial matching, as match.arg() (and so stats) does
  set.seed(1); g <- suppressMessages(gpu_kmeans(x, 3, iter.max = 10, algorithm = "Hart"))
  set.seed(1); s <- stats::kmeans(x, 3, algorithm = "Hart")
  expect_identical(strip_gk(g), unclass(s))
})

test_that("predict(): newdata values and backend", {
  fit1 <- gpu_kmeans(precip, matrix(c(10, 40, 60)))
  expect_identical(sweep(function(v) predict(fit1, v), "newdata", "newdata"),
                   c(rep("error", 3), rep("ok", 7), "error", "error"))
  fit <- gpu_kmeans(x, ctr)
  sweep(function(v) predict(fit, cbind(x[1:5, 1:3], Petal.Width = v)), "newdata", "a newdata column")
  sweep(function(v) predict(fit, x, backend = v), "backend", "backend")
})

test_that("simulate_blobs(): n, d, k, sd, spread, seed", {
  expect_identical(sweep(function(v) simulate_blobs(v, 3, 2), "'n'", "n"),
                   rep("error", 12))
  expect_identical(sweep(function(v) simulate_blobs(3, v, 2), "'d'", "d"),
                   rep("error", 12))
  expect_identical(sweep(function(v) simulate_blobs(10, 2, v), "'k'", "k"),
                   rep("error", 12))
  expect_identical(sweep(function(v) simulate_blobs(10, 2, 2, sd = v), "'sd'", "sd"),
                   c("error", "error", "error", "ok", "error", rep("ok", 5), "error", "error"))
  expect_identical(sweep(function(v) simulate_blobs(10, 2, 2, spread = v), "'spread'", "spread"),
                   c("error", "error", "error", "ok", "error", rep("ok", 5), "error", "error"))
  expect_identical(sweep(function(v) simulate_blobs(10, 2, 2, seed = v), "'seed'", "seed"),
                   c("error", "error", "error", "ok", "ok", "ok", "ok", "ok", rep("error", 4)))
  expect_identical(dim(simulate_blobs(4, 2, 2)), c(4L, 2L))
})

test_that("plot(): which, max_points, pch, cex", {
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  fit <- gpu_kmeans(x, ctr)
  sweep(function(v) plot(fit, x, which = v), "which", "which")
  expect_identical(sweep(function(v) plot(fit, x, which = c(1, v)), "which", "which[2]"),
                   rep("error", 12))
  expect_identical(sweep(function(v) plot(fit, x, max_points = v), "max_points", "max_points"),
                   c(rep("error", 6), rep("ok", 5), "error"))
  sweep(function(v) plot(fit, x, pch = v), "pch", "pch")
  sweep(function(v) plot(fit, x, cex = v), "cex", "cex")
})

test_that("options: threads, device, progress, work thresholds, backend", {
  d <- simulate_blobs(2000, 2, 3, seed = 1)
  fit_with <- function(opt) function(v) {
    o <- list(v)
    names(o) <- opt
    withr::with_options(o, gpu_kmeans(d, d[1:3, ], iter.max = 20, backend = "auto"))
  }
  expect_identical(sweep(fit_with("gpukmeans.threads"), "gpukmeans.threads", "gpukmeans.threads"),
                   c(rep("error", 6), "error", rep("ok", 4), "error"))
  expect_identical(sweep(fit_with("gpukmeans.device"), "device", "gpukmeans.device"),
                   c("error", "error", "error", "ok", "error", "error", "error", "ok", rep("error", 4)))
  expect_identical(sweep(fit_with("gpukmeans.progress_after"), "gpukmeans.progress_after",
                         "gpukmeans.progress_after"),
                   c(rep("error", 3), "ok", "error", rep("ok", 6), "error"))
  expect_identical(sweep(fit_with("cli.progress_show_after"), "cli.progress_show_after",
                         "cli.progress_show_after"),
                   c(rep("error", 3), "ok", "error", rep("ok", 6), "error"))
  expect_identical(sweep(fit_with("gpukmeans.work_per_thread"), "gpukmeans.work_per_thread",
                         "gpukmeans.work_per_thread"),
                   c(rep("error", 3), "ok", "error", rep("ok", 6), "error"))
  expect_identical(sweep(fit_with("gpukmeans.gpu_min_work"), "gpukmeans.gpu_min_work",
                         "gpukmeans.gpu_min_work"),
                   c(rep("error", 3), "ok", "error", rep("ok", 6), "error"))
  expect_identical(sweep(fit_with("gpukmeans.progress"), "gpukmeans.progress", "gpukmeans.progress"),
                   c("ok", rep("error", 11)))
  sweep(fit_with("gpukmeans.backend"), "backend", "gpukmeans.backend")
  withr::local_options(gpukmeans.threads = 3e9)
  expect_true(gpukmeans_info()$cpu_threads >= 1L)
})
