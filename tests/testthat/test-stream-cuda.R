# CUDA engine: x streamed from host memory (src/cuda/streamed.cu).  Data that
# does not fit on the device (or options(gpukmeans.stream = TRUE)) stays on
# the host and every pass over the rows brings it to the device in chunks;
# the sums are exact, so the fit is that of resident data, bit for bit.
# gpukmeans.stream_rows makes the chunks small here (many chunks, a last
# partial one, chunks inside the small-d kernel's blocks);
# gpukmeans.stream_copy chooses how they are copied: "registered" (x
# page-locked in place; single precision converted on the device),
# "staged" (through pinned buffers filled on the host) and "auto" (single
# precision: a pinned float image of x).
local_edition(3)

# A fit's components and warnings without the attributes that say how it
# ran (timing, device).
stream_value <- function(f) {
  attr(f, "timing") <- attr(f, "device") <- NULL
  unclass(f)
}

# gpu_kmeans on the GPU with x resident and streamed in chunks of `rows`,
# from the same seed: both fits and their warnings.  In single precision the
# resident fit runs without distance bounds, whose float distances may
# differ from the plain kernels' in the last bit (in double they never
# change a fit).
stream_pair <- function(x, centers, ..., rows, seed = 1, precision = "double", copy = "auto") {
  resident_opts <- list(gpukmeans.stream = FALSE)
  if (precision == "single") resident_opts$gpukmeans.cuda_tuning <- c(0L, 0L, 0L, 1L)
  run <- function(opts) withr::with_options(opts, {
    set.seed(seed)
    w <- with_warnings(gpu_kmeans(x, centers, ..., precision = precision, backend = "cuda"))
    w$seed <- get_seed()
    w
  })
  list(resident = run(resident_opts),
       streamed = run(list(gpukmeans.stream = TRUE, gpukmeans.stream_rows = rows, gpukmeans.stream_copy = copy)))
}

expect_stream_identical <- function(p, label) {
  expect_match(attr(p$streamed$value, "device"), "x streamed from host memory in [0-9]+ chunk", label = label)
  expect_no_match(attr(p$resident$value, "device"), "streamed", label = label)
  expect_identical(stream_value(p$streamed$value), stream_value(p$resident$value), label = label)
  expect_identical(p$streamed$warnings, p$resident$warnings, label = label)
  expect_identical(p$streamed$seed, p$resident$seed, label = label)
}

test_that("options(gpukmeans.stream), gpukmeans.stream_rows and gpukmeans.stream_copy are checked", {
  withr::local_options(gpukmeans.stream = NULL, gpukmeans.stream_rows = NULL, gpukmeans.stream_copy = NULL)
  expect_identical(gpukmeans:::cuda_options()$stream, 0L)
  expect_identical(gpukmeans:::cuda_options()$stream_rows, 0)
  expect_identical(gpukmeans:::cuda_options()$stream_copy, 0L)
  withr::local_options(gpukmeans.stream_copy = "staged")
  expect_identical(gpukmeans:::cuda_options()$stream_copy, 1L)
  withr::local_options(gpukmeans.stream_copy = "registered")
  expect_identical(gpukmeans:::cuda_options()$stream_copy, 2L)
  withr::local_options(gpukmeans.stream_copy = TRUE)
  expect_error(gpukmeans:::cuda_options(), "gpukmeans.stream_copy =) must be \"auto\", \"staged\" or \"registered\"")
  withr::local_options(gpukmeans.stream_copy = "auto")
  withr::local_options(gpukmeans.stream = TRUE, gpukmeans.stream_rows = 1000)
  expect_identical(gpukmeans:::cuda_options()$stream, 2L)
  expect_identical(gpukmeans:::cuda_options()$stream_rows, 1000)
  withr::local_options(gpukmeans.stream = FALSE)
  expect_identical(gpukmeans:::cuda_options()$stream, 1L)
  withr::local_options(gpukmeans.stream = "yes")
  expect_error(gpukmeans:::cuda_options(), "gpukmeans.stream =) must be NA")
  withr::local_options(gpukmeans.stream = c(TRUE, FALSE))
  expect_error(gpukmeans:::cuda_options(), "gpukmeans.stream =) must be NA")
  withr::local_options(gpukmeans.stream = NA, gpukmeans.stream_rows = 2.5)
  expect_error(gpukmeans:::cuda_options(), "gpukmeans.stream_rows =) must be a whole number")
  withr::local_options(gpukmeans.stream_rows = -1)
  expect_error(gpukmeans:::cuda_options(), "gpukmeans.stream_rows =) must be a whole number")
})

test_that("cuda: streamed x gives the resident fit bit for bit (shapes, chunk sizes, precisions)", {
  skip_if_no_gpu()
  set.seed(11)
  cases <- list(
    small_d = list(x = make_blobs(30011, 2, 9), k = 9),           # fused small-d kernel
    d5 = list(x = make_blobs(20000, 5, 40, sd = 3), k = 40),
    tiled = list(x = make_blobs(12001, 24, 64, sd = 4), k = 64), # tiled path (tensor cores in single)
    far = list(x = make_blobs(9000, 12, 8) + 1e6, k = 8),        # single: the shift
    one_col = list(x = matrix(rnorm(5000), ncol = 1), k = 3))
  for (nm in names(cases)) {
    cs <- cases[[nm]]
    c0 <- cs$x[seq(1, nrow(cs$x), length.out = cs$k), , drop = FALSE]
    for (precision in c("double", "single")) {
      for (rows in c(997, 4096, 1e6)) {  # many chunks; a few; one chunk larger than x
        for (copy in c("auto", "staged", "registered")) {
          p <- stream_pair(cs$x, c0, rows = rows, precision = precision, copy = copy)
          expect_stream_identical(p, sprintf("%s, %s, chunks of %g rows, copy %s", nm, precision, rows, copy))
        }
      }
    }
  }
})

test_that("cuda: streamed fits keep stats' results: random starts, nstart, k-means++, k-means||, warnings", {
  skip_if_no_gpu()
  x <- simulate_blobs(25000, 6, 10, seed = 5)
  for (args in list(list(centers = 10, nstart = 3),
                    list(centers = 10, init = "kmeans++"),
                    list(centers = 10, init = "kmeans||"),
                    list(centers = 10, iter.max = 2),          # not converged: the warning
                    list(centers = 4, nstart = 2, iter.max = 1))) {
    p <- do.call(stream_pair, c(list(x), args, rows = 3001))
    expect_stream_identical(p, paste(names(args), args, collapse = ", "))
  }
  # against stats itself, random starts in stats' order
  withr::local_options(gpukmeans.stream = TRUE, gpukmeans.stream_rows = 3001)
  set.seed(2); g <- gpu_kmeans(x, 10, nstart = 2, iter.max = 50, backend = "cuda")
  set.seed(2); s <- stats::kmeans(x, 10, nstart = 2, iter.max = 50, algorithm = "Lloyd")
  expect_identical(unname(g$cluster), unname(s$cluster))
  expect_identical(g$iter, s$iter)
  expect_equal(g$centers, s$centers, tolerance = 1e-12)
})

test_that("cuda: k-means++ on streamed x (on the device, a pass over the chunks a step) picks the resident rows, every copy mode", {
  skip_if_no_gpu()
  # which path chose them (src/stage_log.h)
  staged_pp <- function(expr) with_stages(expr, "^init_pp_")
  # chunks of 997 and 45 rows split the trees' 32-row nodes (45: more than
  # one split node per chunk's neighbour, 2 rows past a node); 4096 do not
  x <- simulate_blobs(20011, 9, 12, seed = 6)
  for (precision in c("double", "single")) for (copy in c("auto", "staged", "registered")) for (rows in c(45, 997, 4096)) {
    if (rows == 45 && copy != "auto") next
    got <- staged_pp(stream_pair(x, 12, init = "kmeans++", iter.max = 30, rows = rows, precision = precision,
                                 copy = copy, seed = 3))
    expect_stream_identical(got$value, paste(precision, copy, rows))
    expect_identical(got$stages, "init_pp_streamed", info = paste(precision, copy, rows))
  }
  # many candidates a step (k = 300: L = 7) and a fit that does not converge
  p <- stream_pair(x, 300, init = "kmeans++", iter.max = 2, rows = 3001, seed = 4)
  expect_stream_identical(p, "k = 300")
  # fewer distinct rows than centers: the degenerate rule, then stats' error
  dup <- matrix(rep(c(1, 2, 3), length.out = 3000 * 2), ncol = 2)
  withr::with_options(list(gpukmeans.stream = TRUE, gpukmeans.stream_rows = 997), {
    expect_error(gpu_kmeans(dup, 5, init = "kmeans++", backend = "cuda"), "more cluster centers than distinct data points")
  })
})

test_that("cuda: k-means|| rounds on streamed x (on the device, chunk by chunk) pick the resident rows, every copy mode", {
  skip_if_no_gpu()
  # chunks of 997 rows split the tree's 32-row nodes; 4096 rows do not
  x <- simulate_blobs(20011, 9, 12, seed = 6)
  for (precision in c("double", "single")) for (copy in c("auto", "staged", "registered")) for (rows in c(997, 4096)) {
    p <- stream_pair(x, 12, init = "kmeans||", iter.max = 30, rows = rows, precision = precision, copy = copy, seed = 3)
    expect_stream_identical(p, paste(precision, copy, rows))
  }
  # the rounds' distances: exact (1), the SIMT filter (2); 0 above: the
  # tensor-core filter (d = 9)
  for (filter in 1:2) {
    withr::local_options(gpukmeans.cuda_tuning = c(0L, filter, 0L, 0L))
    p <- stream_pair(x, 12, init = "kmeans||", iter.max = 30, rows = 997, seed = 3, copy = "staged")
    expect_stream_identical(p, paste("filter", filter))
  }
  withr::local_options(gpukmeans.cuda_tuning = NULL)
  # a fit that does not converge and many candidates (k = 60: l = 120 a round)
  p <- stream_pair(x, 60, init = "kmeans||", iter.max = 3, rows = 2500, seed = 4)
  expect_stream_identical(p, "k = 60")
  expect_true(any(grepl("did not converge", p$streamed$warnings)))
})

test_that("cuda: streamed x with empty clusters and duplicate rows", {
  skip_if_no_gpu()
  set.seed(3)
  x <- rbind(make_blobs(6000, 3, 4), matrix(1, 500, 3))
  c0 <- rbind(x[c(1, 2000, 4000), ], c(1e4, 1e4, 1e4))  # the last center never wins: empty
  for (precision in c("double", "single")) {
    p <- stream_pair(x, c0, rows = 1111, precision = precision, iter.max = 30, copy = if (precision == "single") "staged" else "auto")
    expect_stream_identical(p, precision)
    expect_true(any(p$streamed$value$size == 0L) || anyNA(p$streamed$value$centers))
  }
})

test_that("cuda: x beyond options(gpukmeans.device_memory) is streamed, or an error with stream = FALSE", {
  skip_if_no_gpu()
  x <- simulate_blobs(200000, 8, 16, seed = 9)  # 12.8 MB in double
  set.seed(1); ref <- gpu_kmeans(x, 16, backend = "cuda")
  withr::local_options(gpukmeans.device_memory = 8e6)
  set.seed(1); f <- gpu_kmeans(x, 16, backend = "cuda")
  expect_match(attr(f, "device"), "x streamed from host memory in [0-9]+ chunks")
  expect_identical(stream_value(f), stream_value(ref))
  withr::local_options(gpukmeans.stream = FALSE)
  expect_error(gpu_kmeans(x, 16, backend = "cuda"), class = "gpukmeans_out_of_memory")
  expect_error(gpu_kmeans(x, 16, backend = "cuda"), "options\\(gpukmeans.device_memory\\) allows")
  # a cap too small even for the labels and the chunk buffers
  withr::local_options(gpukmeans.stream = NA, gpukmeans.device_memory = 1e5)
  expect_error(gpu_kmeans(x, 16, backend = "cuda"), class = "gpukmeans_out_of_memory")
})

test_that("cuda: predict, the silhouette and cosine fits on streamed x equal the resident ones", {
  skip_if_no_gpu()
  x <- simulate_blobs(15000, 5, 6, seed = 2)
  new <- simulate_blobs(9001, 5, 6, seed = 3)
  set.seed(1); fit <- gpu_kmeans(x, 6, backend = "cuda")
  resident <- predict(fit, new)
  withr::with_options(list(gpukmeans.stream = TRUE, gpukmeans.stream_rows = 1000), {
    expect_identical(predict(fit, new), resident)
    expect_identical(predict(fit, new[1:3, ]), resident[1:3])
  })
  sub <- x[1:3000, ]
  set.seed(1); f2 <- gpu_kmeans(sub, 4, backend = "cuda")
  s_res <- gpu_silhouette(f2, sub, backend = "cuda")
  s_str <- withr::with_options(list(gpukmeans.stream = TRUE, gpukmeans.stream_rows = 777),
                               gpu_silhouette(f2, sub, backend = "cuda"))
  expect_identical(unclass(s_str)[, 1:3], unclass(s_res)[, 1:3])
  p <- stream_pair(x, 6, rows = 2048, distance = "cosine")
  expect_stream_identical(p, "cosine")
})

test_that("cuda: several engines on one GPU, each streaming its rows, give the one-GPU fit", {
  skip_if_no_gpu()
  x <- simulate_blobs(40000, 4, 12, seed = 4)
  set.seed(7); one <- gpu_kmeans(x, 12, backend = "cuda", device = 0)
  withr::local_options(gpukmeans.stream = TRUE, gpukmeans.stream_rows = 5003)
  for (copy in c("auto", "staged", "registered")) {
    withr::local_options(gpukmeans.stream_copy = copy)
    set.seed(7); two <- gpu_kmeans(x, 12, backend = "cuda", device = c(0, 0))
    expect_match(attr(two, "device"), "^2 engines on 1 GPU: .*, x streamed from host memory in 8 chunks$")
    expect_identical(stream_value(two), stream_value(one))
  }
})

test_that("cuda: observation weights with streamed x are a clear error", {
  skip_if_no_gpu()
  x <- simulate_blobs(5000, 3, 4, seed = 1)
  withr::local_options(gpukmeans.stream = TRUE)
  expect_error(gpu_kmeans(x, 4, weights = rep(2, 5000), backend = "cuda"),
               class = "gpukmeans_unsupported")
  expect_error(gpu_kmeans(x, 4, weights = rep(2, 5000), backend = "cuda"), "streamed from host memory")
})

test_that("cuda: a file-backed big.matrix (mapped, not read) streams and fits as the base matrix, in both precisions", {
  skip_if_no_gpu()
  skip_if_not_installed("bigmemory")
  x <- simulate_blobs(30000, 6, 8, seed = 6)
  dir <- withr::local_tempdir()
  b <- bigmemory::as.big.matrix(x, backingfile = "x.bin", descriptorfile = "x.desc", backingpath = dir)
  set.seed(5); ref <- gpu_kmeans(x, 8, backend = "cuda")
  set.seed(5); ref1 <- withr::with_options(list(gpukmeans.cuda_tuning = c(0L, 0L, 0L, 1L)),
                                           gpu_kmeans(x, 8, backend = "cuda", precision = "single"))
  for (copy in c("auto", "staged", "registered")) {
    withr::local_options(gpukmeans.stream = TRUE, gpukmeans.stream_rows = 4000, gpukmeans.stream_copy = copy)
    set.seed(5); f <- gpu_kmeans(b, 8, backend = "cuda")
    expect_match(attr(f, "device"), "streamed")
    expect_identical(stream_value(f), stream_value(ref))
    set.seed(5); f1 <- gpu_kmeans(b, 8, backend = "cuda", precision = "single")
    expect_identical(stream_value(f1), stream_value(ref1))
  }
})
