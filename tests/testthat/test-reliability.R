# No hang, no crash: fork safety, clamped threads, precision limits, kernel
# faults and interrupts.
local_edition(3)

# Runs R code in a fresh Rscript (the installed package, this library path)
# with a time limit; returns list(status, output).
run_child <- function(code, seconds = 120) {
  skip_on_os("windows")
  skip_if(!nzchar(Sys.which("timeout")), "no timeout command")
  rscript <- file.path(R.home("bin"), "Rscript")
  script <- tempfile(fileext = ".R")
  writeLines(code, script)
  on.exit(unlink(script))
  out <- suppressWarnings(system2("timeout", c(seconds, shQuote(rscript), "--vanilla", shQuote(script)),
                                  stdout = TRUE, stderr = TRUE,
                                  env = paste0("R_LIBS=", paste(.libPaths(), collapse = ":"))))
  list(status = attr(out, "status") %||% 0L, output = out)
}
`%||%` <- function(a, b) if (is.null(a)) b else a

test_that("forked children (mclapply) after a multi-threaded fit in the parent do not hang", {
  skip_if_not(.Platform$OS.type == "unix")
  r <- run_child(c(
    "library(gpukmeans); options(gpukmeans.backend = 'cpu', gpukmeans.threads = 2)",
    "x <- simulate_blobs(20000, 3, 5, seed = 1)",
    "fit <- gpu_kmeans(x, 5, iter.max = 50)",  # starts OpenMP's thread pool in the parent
    "res <- parallel::mclapply(1:4, function(i) { set.seed(i); gpu_kmeans(x, 5, iter.max = 50)$size },",
    "                          mc.cores = 2)",
    "stopifnot(all(vapply(res, function(s) sum(s) == 20000, logical(1))))",
    "cat('children ok\\n')",
    "cat(parallel::mclapply(1:2, function(i) attr(gpu_kmeans(x, 5), 'device'), mc.cores = 2)[[1]], '\\n')"))
  expect_identical(r$status, 0L)
  expect_true(any(r$output == "children ok"))
  # a forked child runs the CPU engine on one thread
  expect_true(any(grepl("^CPU, 1 thread", r$output)))
})

test_that("a forked child of a process that touched CUDA is told it cannot use it", {
  skip_if_not(.Platform$OS.type == "unix")
  skip_if_not(isTRUE(gpukmeans_info()$cuda_built), "built without CUDA")
  r <- run_child(c(
    "library(gpukmeans)",
    "invisible(gpukmeans_info())",  # the parent initialises the CUDA runtime
    "in_child <- function(f) parallel::mclapply(1:2, function(i) f(), mc.cores = 2)[[1]]",
    "msg <- in_child(function() gpukmeans_info()$message)",
    "cat('child:', msg, '\\n')",
    "e <- in_child(function() tryCatch(gpu_kmeans(faithful, 2, backend = 'cuda'), error = conditionMessage))",
    "cat('cuda:', e, '\\n')",
    "b <- in_child(function() suppressMessages(attr(gpu_kmeans(faithful, 2), 'backend')))",
    "cat('auto:', b, '\\n')"))
  expect_identical(r$status, 0L)
  expect_true(any(grepl("^child: .*cannot be used after fork", r$output)))
  expect_true(any(grepl("^cuda: .*not available.*fork", r$output)))
  expect_true(any(r$output == "auto: cpu "))
})

test_that("a huge thread count is clamped, not a crash", {
  x <- as.matrix(faithful)
  z <- gpukmeans:::gk_fit_cpp(x, list(x[1:2, ]), 10L, FALSE, "cpu", 1000000L, 0L, FALSE, NULL, Inf, list())
  n <- as.integer(sub("CPU, ([0-9]+) threads?", "\\1", z$device))
  expect_true(n >= 1L && n <= 4L * parallel::detectCores())
  s <- stats::kmeans(x, x[1:2, ], algorithm = "Lloyd")
  expect_identical(z$cluster, unname(s$cluster))
})

test_backends("single precision keeps data far from the origin exact enough (shifted, as on the GPU)",
              function(backend) {
  x <- as.matrix(iris[, 1:4]) + 1e8
  set.seed(1); gs <- gpu_kmeans(x, 3, precision = "single")
  set.seed(1); gd <- gpu_kmeans(x, 3)
  expect_identical(gs$cluster, gd$cluster)
  expect_equal(gs$tot.withinss, gd$tot.withinss, tolerance = 1e-5)
  expect_equal(gs$centers, gd$centers, tolerance = 1e-12)  # relative to 1e8
  expect_false(any(gs$size == 0L))
})

test_backends("values beyond the working precision are a clear error, not a meaningless fit",
              function(backend) {
  x <- as.matrix(iris[, 1:4])
  e <- tryCatch(gpu_kmeans(x * 1e39, 3, precision = "single"), error = identity)
  expect_s3_class(e, "gpukmeans_data_error")
  expect_match(conditionMessage(e), "precision = \"single\".*use precision = \"double\"")
  e <- tryCatch(gpu_kmeans(x * 1e20, 3, precision = "single"), error = identity)
  expect_s3_class(e, "gpukmeans_data_error")
  e <- tryCatch(gpu_kmeans(x * 1e-30, 3, precision = "single"), error = identity)
  expect_s3_class(e, "gpukmeans_data_error")
  expect_match(conditionMessage(e), "too little for precision = \"single\"")
  e <- tryCatch(gpu_kmeans(x * 1e200, 3), error = identity)
  expect_s3_class(e, "gpukmeans_data_error")
  expect_match(conditionMessage(e), "squared distances would overflow double precision")
  # large but safe values still work, as in stats
  set.seed(2); g <- gpu_kmeans(x * 1e150, 3)
  set.seed(2); s <- stats::kmeans(x * 1e150, 3, algorithm = "Lloyd")
  expect_identical(g$cluster, s$cluster)
})

test_that("a Ctrl-C while the progress bar draws stops the fit (it is not swallowed)", {
  x <- simulate_blobs(20000, 2, 5, seed = 3)
  seen <- 0L
  # a bar whose drawing is interrupted, as when the user presses Ctrl-C then
  interrupted_bar <- function(iter, changed, start) {
    seen <<- seen + 1L
    signalCondition(structure(class = c("interrupt", "condition"), list()))
  }
  res <- tryCatch(
    gpukmeans:::gk_fit_cpp(x, list(x[1:5, ]), 1000L, FALSE, "cpu", 1L, 0L, FALSE, interrupted_bar, 0, list()),
    interrupt = function(cnd) "interrupted")
  expect_identical(res, "interrupted")
  expect_identical(seen, 1L)  # stopped at the first draw
  # the bar's R function reports the interrupt it caught
  expect_true(gpukmeans:::progress_step(interrupted_bar, 1L, 0, 1L))
  expect_false(gpukmeans:::progress_step(function(...) invisible(), 1L, 0, 1L))
})

test_that("a long CPU iteration can be interrupted before it ends", {
  # one plain iteration computes n k = 1e8 distances in 40 dimensions
  # (seconds): the engine polls R from inside it, so the first poll comes
  # with no iteration number (NA), and a Ctrl-C there stops the fit
  x <- simulate_blobs(100000, 40, 5, seed = 4)
  first <- NULL
  bar <- function(iter, changed, start) {
    if (is.null(first)) first <<- iter
    signalCondition(structure(class = c("interrupt", "condition"), list()))
  }
  for (threads in c(1L, 2L)) {
    first <- NULL
    res <- tryCatch(
      gpukmeans:::gk_fit_cpp(x, list(x[1:1000, ]), 1L, FALSE, "cpu", threads, 0L, FALSE, bar, 0, list()),
      interrupt = function(cnd) "interrupted")
    expect_identical(res, "interrupted")
    expect_identical(first, NA_integer_)
  }
  # the engine is usable afterwards and gives stats' answer
  set.seed(1); g <- gpu_kmeans(x[1:5000, ], 4, backend = "cpu")
  set.seed(1); s <- stats::kmeans(x[1:5000, ], 4, algorithm = "Lloyd", iter.max = 1000)
  expect_identical(g$cluster, s$cluster)
})

test_that("a smaller OpenMP team than asked changes nothing (OMP_DYNAMIC, nested regions)", {
  # inside an active OpenMP region with nesting off, every region of the
  # engine gets one thread instead of the slots it asked for; each thread
  # must then take several slots (a team that skipped slots would leave
  # points unassigned)
  x <- simulate_blobs(20000, 3, 8, seed = 2)
  c0 <- x[c(1, 5000, 9000, 13000, 17000, 19999, 7, 8), ]
  for (threads in c(1L, 2L, 3L)) {
    a <- gpukmeans:::gk_fit_small_team_cpp(x, c0, 100L, threads)
    b <- gpukmeans:::gk_fit_cpp(x, list(c0), 100L, FALSE, "cpu", threads, 0L, FALSE, NULL, Inf, list())
    expect_identical(sum(a$size), 20000L)
    expect_identical(a$cluster, b$cluster)
    expect_identical(a$centers, as.vector(b$centers))
    expect_identical(a$iter, b$iter)
  }
  s <- stats::kmeans(x, c0, algorithm = "Lloyd", iter.max = 100)
  a <- gpukmeans:::gk_fit_small_team_cpp(x, c0, 100L, 1L)
  expect_identical(a$cluster, s$cluster)
  expect_identical(a$centers, as.vector(s$centers))
})

test_that("a real SIGINT during a fit with a progress bar interrupts it at once", {
  skip_if_not(.Platform$OS.type == "unix")
  r <- run_child(c(
    "library(gpukmeans); options(gpukmeans.backend = 'cpu', gpukmeans.threads = 1)",
    "x <- simulate_blobs(200000, 2, 50, seed = 1)",
    "draws <- 0L",
    "bar <- function(iter, changed, start) {",
    "  draws <<- draws + 1L",
    "  if (draws == 1L) tools::pskill(Sys.getpid(), tools::SIGINT)",
    "  Sys.sleep(0.05)",
    "}",
    "res <- tryCatch(gpukmeans:::gk_fit_cpp(x, list(x[1:50, ]), 100000L, FALSE, 'cpu', 1L, 0L, FALSE, bar, 0,",
    "                                         list()), interrupt = function(e) 'interrupted')",
    "cat('result:', if (is.character(res)) res else 'finished', 'draws:', draws, '\\n')",
    "fit <- gpu_kmeans(x, 5, iter.max = 20)",  # the next fit works
    "cat('next fit:', sum(fit$size), '\\n')"))
  expect_identical(r$status, 0L)
  expect_true(any(grepl("^result: interrupted draws: 1 $", r$output)))
  expect_true(any(r$output == "next fit: 200000 "))
})

test_that("a CUDA kernel fault is an R error, not an abort", {
  skip_if_no_gpu()
  r <- run_child(c(
    "library(gpukmeans)",
    "e <- tryCatch(gpukmeans:::gk_cuda_fault_test_cpp(0L), error = identity)",
    "cat('class:', class(e)[1], '\\n')",
    "cat('message:', conditionMessage(e), '\\n')",
    "cat('alive\\n')"))
  expect_identical(r$status, 0L)
  expect_true(any(r$output == "class: gpukmeans_device_error "))
  expect_true(any(grepl("^message: CUDA engine: fault test failed", r$output)))
  expect_true(any(r$output == "alive"))
})

test_that("the progress code runs in R's context: handlers around the fit see it, jumps are held safely", {
  x <- simulate_blobs(20000, 2, 5, seed = 3)
  fit_with <- function(bar) {
    gpukmeans:::gk_fit_cpp(x, list(x[1:5, ]), 200L, FALSE, "cpu", 1L, 0L, FALSE, bar, 0, list())
  }
  # a calling handler around the fit sees what the bar signals, while it runs
  seen <- 0L
  withCallingHandlers(fit_with(function(iter, changed, start) {
    signalCondition(structure(class = c("gk_test_tick", "condition"), list(message = "", call = NULL)))
  }), gk_test_tick = function(cnd) seen <<- seen + 1L)
  expect_gt(seen, 0L)
  # an exiting handler around the fit: the jump leaves the engine cleanly
  res <- tryCatch(fit_with(function(iter, changed, start) {
    signalCondition(structure(class = c("gk_test_exit", "condition"), list(message = "", call = NULL)))
  }), gk_test_exit = function(cnd) "left")
  expect_identical(res, "left")
  # a bar that fails is dropped; the fit goes on and equals the quiet fit
  calls <- 0L
  broken <- fit_with(function(iter, changed, start) {
    calls <<- calls + 1L
    stop("broken bar")
  })
  quiet <- fit_with(NULL)
  expect_identical(calls, 1L)
  expect_identical(broken$cluster, quiet$cluster)
  expect_identical(broken$centers, quiet$centers)
})

test_that("progressr's with_progress() gets live updates from a long fit", {
  skip_if_not_installed("progressr")
  x <- simulate_blobs(20000, 2, 5, seed = 3)
  withr::local_options(gpukmeans.progress = TRUE, gpukmeans.backend = "cpu", progressr.enable = TRUE)
  msgs <- character()
  progressr::with_progress(
    withCallingHandlers(gpu_kmeans(x, 5, nstart = 2, iter.max = 50),
                        progression = function(p) msgs <<- c(msgs, paste(p$message, collapse = ""))),
    handlers = progressr::handler_void())
  # messages of iterations come only from the updates while the fit runs
  expect_true(any(grepl("gpu_kmeans: start [12]/2, iter [0-9]+/50", msgs)))
})

test_that("starts are drawn as they are fitted: nstart = 1e5 holds one start, not 1e5", {
  x <- as.matrix(iris[, 1:4])
  set.seed(3)
  st <- gpukmeans:::initial_centers(x, 3, 100000L)$starts
  expect_s3_class(st, "gk_start_source")
  expect_identical(gpukmeans:::start_count(st), 100000L)
  expect_lt(as.numeric(object.size(st)), 1e5)
  # the draws are stats' draws, in stats' order
  # (stats warns once per start that did not converge: so must we)
  warned <- function(expr) {
    w <- character(0)
    value <- withCallingHandlers(expr, warning = function(c) { w <<- c(w, conditionMessage(c)); invokeRestart("muffleWarning") })
    list(value = value, warnings = w)
  }
  set.seed(3); g <- warned(gpu_kmeans(x, 3, nstart = 200, iter.max = 10))
  a <- .Random.seed
  set.seed(3); s <- warned(stats::kmeans(x, 3, nstart = 200, iter.max = 10, algorithm = "Lloyd"))
  expect_identical(.Random.seed, a)
  expect_true(isTRUE(all.equal(g$value, s$value)))
  expect_identical(g$warnings, s$warnings)
  # an error drawing a start (here from a seeded init) leaves no engine behind
  xd <- x[rep(1:3, 50), ]
  expect_error(gpu_kmeans(xd, 4, nstart = 5, init = "kmeans++"), "more cluster centers than distinct")
  expect_s3_class(gpu_kmeans(x, 3, nstart = 5), "gpu_kmeans")
})

test_that("options(gpukmeans.device_memory) is checked", {
  for (bad in list(-1, 0, NA, "1e9", c(1, 2))) {
    withr::local_options(gpukmeans.device_memory = bad)
    expect_error(gpu_kmeans(faithful, 2, iter.max = 10), "options\\(gpukmeans.device_memory =\\) must be")
    expect_error(gpukmeans:::cuda_options(), "gpukmeans.device_memory")
  }
  withr::local_options(gpukmeans.device_memory = 2^30)
  expect_identical(gpukmeans:::cuda_options()$device_memory, 2^30)
})

test_that("cuda: data beyond the device memory allowed is a clear error without streaming, and the next fit works", {
  skip_if_no_gpu()
  x <- simulate_blobs(200000, 8, 10, seed = 5)  # 12.8 MB in double
  # (by default such data is streamed from host memory: test-stream-cuda.R)
  withr::with_options(list(gpukmeans.device_memory = 4e6, gpukmeans.stream = FALSE), {
    e <- tryCatch(gpu_kmeans(x, 10, backend = "cuda"), error = identity)
  })
  expect_s3_class(e, "gpukmeans_out_of_memory")
  expect_match(conditionMessage(e), "x needs 0\\.0[0-9] GiB in double .* options\\(gpukmeans.device_memory\\) allows")
  set.seed(1); g <- gpu_kmeans(x, 10, backend = "cuda", iter.max = 50)
  set.seed(1); s <- gpu_kmeans(x, 10, backend = "cpu", iter.max = 50)
  expect_identical(g$cluster, s$cluster)
})

test_that("cuda: two R processes fitting on one GPU at the same time both get correct results", {
  skip_if_no_gpu()
  skip_if(!nzchar(Sys.which("timeout")), "no timeout command")
  rscript <- file.path(R.home("bin"), "Rscript")
  code <- c("library(gpukmeans)",
            "x <- simulate_blobs(2e6, 8, 50, seed = 9)",
            "set.seed(1); g <- gpu_kmeans(x, 50, iter.max = 100, backend = 'cuda')",
            "set.seed(1); s <- gpu_kmeans(x, 50, iter.max = 100, backend = 'cpu')",
            "cat('same:', identical(g$cluster, s$cluster), attr(g, 'backend'), '\\n')")
  script <- tempfile(fileext = ".R")
  writeLines(code, script)
  outs <- c(tempfile(), tempfile())
  env <- paste0("R_LIBS=", paste(.libPaths(), collapse = ":"))
  for (o in outs) system2("timeout", c(300, shQuote(rscript), shQuote(script)), stdout = o, stderr = o,
                          wait = FALSE, env = env)
  # (a process may not have opened its output file yet)
  lines_of <- function(o) if (file.exists(o)) readLines(o, warn = FALSE) else character()
  for (i in 1:300) if (all(vapply(outs, function(o) any(grepl("^same:", lines_of(o))), TRUE))) break else Sys.sleep(1)
  for (o in outs) expect_true(any(lines_of(o) == "same: TRUE cuda "))
})

test_that("a process that sees no GPU (CUDA_VISIBLE_DEVICES='') falls back to the CPU or says why", {
  skip_on_os("windows")
  skip_if(!nzchar(Sys.which("timeout")), "no timeout command")
  rscript <- file.path(R.home("bin"), "Rscript")
  out <- suppressWarnings(system2("timeout", c(120, shQuote(rscript), "-e", shQuote(paste(
    "library(gpukmeans);",
    "cat('devices:', nrow(gpukmeans_info()$devices), '\\n');",
    "cat('auto:', suppressMessages(attr(gpu_kmeans(simulate_blobs(1e5, 4, 5, seed = 1), 5, iter.max = 20), 'backend')), '\\n');",
    "e <- tryCatch(gpu_kmeans(faithful, 2, backend = 'cuda'), error = conditionMessage);",
    "cat('cuda:', e, '\\n')"))), stdout = TRUE, stderr = TRUE,
    env = c("CUDA_VISIBLE_DEVICES=", paste0("R_LIBS=", paste(.libPaths(), collapse = ":")))))
  expect_true(any(out == "devices: 0 "))
  expect_true(any(out == "auto: cpu "))
  expect_true(any(grepl("^cuda: backend = \"cuda\" is not available: ", out)))
})
