# How many threads the CPU engine uses, and which engine backend = "auto"
# takes for small problems.
local_edition(3)

omp <- gpukmeans:::gk_openmp_limits_cpp()
hard_max <- as.integer(min(omp[["thread_limit"]], omp[["num_procs"]]))

test_that("OpenMP's limits are reported as three positive counts", {
  expect_type(omp, "integer")
  expect_named(omp, c("thread_limit", "max_threads", "num_procs"))
  expect_true(all(omp >= 1L))
})

test_that("gpukmeans.threads must be a whole number >= 1", {
  for (bad in list(0, -1, 1.5, NA, NA_real_, NaN, -Inf, "2", TRUE, c(1, 2), list(2))) {
    withr::local_options(gpukmeans.threads = bad)
    expect_error(gpu_kmeans(faithful, 2), "options\\(gpukmeans.threads =\\) must be a whole number of threads >= 1",
                 label = deparse(bad))
    expect_error(gpukmeans_info(), "gpukmeans.threads")
  }
})

test_that("a huge gpukmeans.threads is clamped to what OpenMP allows, without a crash", {
  ctr <- as.matrix(faithful[1:2, ])
  s <- stats::kmeans(faithful, ctr, algorithm = "Lloyd")
  for (big in c(1e6, 3e9, 1e18, Inf)) {
    withr::local_options(gpukmeans.threads = big, gpukmeans.work_per_thread = 0)
    expect_identical(gpukmeans_info()$cpu_threads, hard_max)
    g <- gpu_kmeans(faithful, ctr, iter.max = 10)
    expect_identical(attr(g, "device"),
                     sprintf("CPU, %d thread%s", hard_max, if (hard_max == 1L) "" else "s"))
    expect_same_fit(g, s)
    expect_identical(predict(g, faithful), g$cluster)
  }
})

test_that("the default follows the cores R may use: mc.cores (as future workers set it)", {
  withr::local_options(gpukmeans.threads = NULL, gpukmeans.work_per_thread = 0, mc.cores = 1L)
  expect_identical(gpukmeans_info()$cpu_threads, 1L)
  g <- gpu_kmeans(faithful, as.matrix(faithful[1:2, ]))
  expect_identical(attr(g, "device"), "CPU, 1 thread")
  withr::local_options(mc.cores = NULL)
  cores <- if (requireNamespace("parallelly", quietly = TRUE)) parallelly::availableCores() else
    min(parallel::detectCores(), if (nzchar(Sys.getenv("_R_CHECK_LIMIT_CORES_"))) 2L else Inf)
  expect_identical(gpukmeans_info()$cpu_threads,
                   as.integer(min(cores, omp[["max_threads"]], hard_max)))
})

test_that("without parallelly, detectCores(), mc.cores and R CMD check's limit give the default", {
  f <- gpukmeans:::cores_without_parallelly
  n <- parallel::detectCores()
  expect_identical(f(NULL, ""), as.numeric(n))
  expect_identical(f(1L, ""), 1)
  expect_identical(f(1e6, ""), as.numeric(n))
  expect_identical(f(NULL, "TRUE"), as.numeric(min(n, 2)))
  expect_identical(f(NULL, "false"), as.numeric(n))
  expect_identical(f("a", ""), as.numeric(n))
})

test_that("the cores found are kept for the session, and asked again when mc.cores changes", {
  st <- gpukmeans:::.gk_state
  withr::defer({st$cores <- NULL; st$cores_key <- NULL})
  withr::local_options(mc.cores = 1L)
  st$cores <- NULL
  expect_identical(gpukmeans:::available_cores(), 1L)
  st$cores <- 7L
  expect_identical(gpukmeans:::available_cores(), 7L)
  withr::local_options(mc.cores = 2L)
  expect_false(identical(gpukmeans:::available_cores(), 7L))
})

test_that("OMP_THREAD_LIMIT caps the threads, the option's too (fresh R session)", {
  rscript <- file.path(R.home("bin"), "Rscript")
  code <- "options(gpukmeans.threads = 64); cat('threads:', gpukmeans::gpukmeans_info()$cpu_threads)"
  out <- suppressWarnings(system2(rscript, c("-e", shQuote(code)), stdout = TRUE, stderr = TRUE,
                                  env = c("OMP_THREAD_LIMIT=1",
                                          paste0("R_LIBS=", paste(.libPaths(), collapse = ":")))))
  expect_identical(grep("^threads:", out, value = TRUE), "threads: 1")
})

test_that("small fits take one thread; gpukmeans.work_per_thread sets the grain", {
  skip_if(hard_max < 2L, "one processor")
  withr::local_options(gpukmeans.threads = 2L, gpukmeans.work_per_thread = NULL)
  grain <- 2^17
  expect_identical(gpukmeans:::cpu_threads(150 * 3 * 4), 1L)
  expect_identical(gpukmeans:::cpu_threads(2 * grain - 1), 1L)
  expect_identical(gpukmeans:::cpu_threads(2 * grain), 2L)
  expect_identical(gpukmeans:::cpu_threads(1e12), 2L)
  expect_identical(gpukmeans:::cpu_threads(), 2L)
  g <- gpu_kmeans(iris[, 1:4], 3)
  expect_identical(attr(g, "device"), "CPU, 1 thread")
  set.seed(1)
  xb <- make_blobs(30000, 3, 10)
  g <- suppressWarnings(gpu_kmeans(xb, xb[1:10, ], iter.max = 5))   # 900,000 per iteration
  expect_identical(attr(g, "device"), "CPU, 2 threads")
  withr::local_options(gpukmeans.work_per_thread = 0)
  expect_identical(attr(gpu_kmeans(iris[, 1:4], 3), "device"), "CPU, 2 threads")
  withr::local_options(gpukmeans.work_per_thread = 1e4)
  expect_identical(gpukmeans:::cpu_threads(15000), 1L)
  expect_identical(gpukmeans:::cpu_threads(20000), 2L)
  for (bad in list(-1, NA, "1e5", c(1, 2))) {
    withr::local_options(gpukmeans.work_per_thread = bad)
    expect_error(gpu_kmeans(iris[, 1:4], 3), "options\\(gpukmeans.work_per_thread =\\) must be a single number >= 0")
  }
})

test_that("backend = 'auto' runs small problems on the CPU, without probing CUDA", {
  st <- gpukmeans:::.gk_state
  old <- list(probe = st$probe, told = st$fallback_told, pid = st$probe_pid)
  withr::defer({st$probe <- old$probe; st$fallback_told <- old$told; st$probe_pid <- old$pid})
  # pretend a usable GPU (the probe is cached per process)
  st$probe_pid <- Sys.getpid()
  st$probe <- list(built = TRUE, device_count = 1L, message = "",
                   devices = data.frame(name = "pretend", usable = TRUE, why = "", stringsAsFactors = FALSE))
  expect_identical(gpukmeans:::resolve_backend("auto", 0L, work = 150 * 3 * 4), "cpu")
  expect_identical(gpukmeans:::resolve_backend("auto", 0L, work = 5e4 - 1), "cpu")
  expect_identical(gpukmeans:::resolve_backend("auto", 0L, work = 5e4), "cuda")
  expect_identical(gpukmeans:::resolve_backend("auto", 0L), "cuda")
  # an explicit choice is obeyed whatever the size
  expect_identical(gpukmeans:::resolve_backend("cuda", 0L, work = 10), "cuda")
  expect_identical(gpukmeans:::resolve_backend("cpu", 0L, work = 1e12), "cpu")
  withr::local_options(gpukmeans.gpu_min_work = 0)
  expect_identical(gpukmeans:::resolve_backend("auto", 0L, work = 10), "cuda")
  withr::local_options(gpukmeans.gpu_min_work = NULL)
  # a tiny fit with backend = "auto" runs on the CPU and says nothing about CUDA
  st$probe <- list(built = FALSE, device_count = 0L, message = "pretend")
  st$fallback_told <- NULL
  expect_silent(g <- gpu_kmeans(iris[, 1:4], 3, backend = "auto"))
  expect_identical(attr(g, "backend"), "cpu")
  # a fit made on the GPU predicts small data on the CPU
  st$probe <- list(built = TRUE, device_count = 1L, message = "")
  attr(g, "backend") <- "cuda"
  expect_identical(unname(predict(g, iris[1:10, 1:4])), g$cluster[1:10])
  for (bad in list(-1, NA, "big")) {
    withr::local_options(gpukmeans.gpu_min_work = bad)
    expect_error(gpukmeans:::resolve_backend("auto", 0L, 10), "gpukmeans.gpu_min_work")
  }
})

test_that("edge cases on two threads, however small the data, equal stats", {
  skip_if(hard_max < 2L, "one processor")
  withr::local_options(gpukmeans.threads = 2L, gpukmeans.work_per_thread = 0)
  expect_identical(attr(gpu_kmeans(x4 <- as.matrix(iris[, 1:4]), 3), "device"), "CPU, 2 threads")
  # empty cluster from the start, and one that empties on the way
  p <- expect_kmeans_parity(x4, rbind(x4[c(1, 51, 101), ], far = c(100, 100, 100, 100)))
  expect_identical(p$g$size[4], 0L)
  xe <- c(0.304, 0.475, 0.994, 0.521, 0.843, 0.723, 0.615, 0.739, 0.417, 0.373, 0.968, 0.607,
          0.474, 0.858, 0.435, 0.082, 0.421, 0.175, 0.618, 0.372, 0.222, 0.36, 0.533, 0.796,
          0.771, 0.923, 0.467, 0.996, 0.214, 0.215, 0.178, 0.258, 0.806, 0.165, 0.977, 0.036,
          0.826, 0.041, 0.053, 0.513)
  p <- expect_kmeans_parity(xe, matrix(c(0.012, 0.147, 0.189, 0.249, 0.283, 0.412, 0.434, 0.498)),
                            iter.max = 50)
  expect_identical(p$g$size[2], 0L)
  # k = 1, duplicated rows, ties, not converged, nstart > 1
  expect_kmeans_parity(x4, 1, seed = 1)
  expect_kmeans_parity(rbind(x4, x4), 3, nstart = 3, seed = 2)
  p <- expect_kmeans_parity(c(0, 1, 2), matrix(c(0, 2)))
  expect_identical(p$g$cluster[2], 1L)
  p <- expect_kmeans_parity(x4, x4[1:3, ], iter.max = 2)
  expect_identical(p$g$ifault, 2L)
  expect_kmeans_parity(faithful, 4, nstart = 4, seed = 3)
})
