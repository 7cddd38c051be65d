# CUDA engine. Every test skips cleanly without a CUDA device.
# Reference: stats::kmeans for small shapes, the CPU engine for big ones.
# (The parity tests of test-parity.R, test-edge.R, test-rng.R and
# test-large.R run on the CUDA engine too, through test_backends().)
local_edition(3)

gk_cuda <- function(...) gpu_kmeans(..., backend = "cuda")

# CPU engine as reference with more threads (only runs on the GPU machine).
gk_cpu_ref <- function(...) {
  withr::with_options(
    list(gpukmeans.threads = max(2L, min(8L, parallel::detectCores(), na.rm = TRUE))),
    gpu_kmeans(..., backend = "cpu"))
}

# cuda fit a equals cpu fit b (both gpu_kmeans)
expect_same_gk <- function(a, b, tolerance = 1e-10) {
  a0 <- strip_gk(a)
  b0 <- strip_gk(b)
  expect_lte(abs(a0$betweenss - b0$betweenss), tolerance * abs(b0$totss))
  a0$betweenss <- b0$betweenss <- NULL
  expect_equal(a0, b0, tolerance = tolerance)
  expect_identical(a$cluster, b$cluster)
  expect_identical(a$iter, b$iter)
  expect_identical(a$size, b$size)
  expect_identical(a$ifault, b$ifault)
}

# cuda vs CPU engine (fit, warnings) for shapes too big for stats
cuda_vs_cpu <- function(x, centers, ..., seed = NULL) {
  if (!is.null(seed)) set.seed(seed)
  a <- with_warnings(gk_cuda(x, centers, ...))
  if (!is.null(seed)) set.seed(seed)
  b <- with_warnings(gk_cpu_ref(x, centers, ...))
  expect_identical(attr(a$value, "backend"), "cuda")
  expect_same_gk(a$value, b$value)
  expect_identical(a$warnings, b$warnings)
  invisible(a$value)
}

test_backends("k in {1, 2, 31, 32, 33} x d in {1, 2, 3, 17, 128} equals stats", function(backend) {
  n <- 4099L
  for (d in c(1L, 2L, 3L, 17L, 128L)) {
    set.seed(d)
    x <- make_blobs(n, d, 40, sd = 2, spread = 10)
    for (k in c(1L, 2L, 31L, 32L, 33L)) {
      expect_kmeans_parity(x, k, iter.max = 8, seed = k)
    }
  }
})

test_backends("d = 1000 equals stats", function(backend) {
  set.seed(1000)
  x <- make_blobs(2003, 1000, 20, sd = 1, spread = 2)
  expect_kmeans_parity(x, 33, iter.max = 5, seed = 1)
  expect_kmeans_parity(x, 2, iter.max = 5, seed = 2)
})

test_that("cuda: n = 100003 (not a multiple of any block size)", {
  skip_if_no_gpu()
  set.seed(7)
  x <- make_blobs(100003, 3, 32, sd = 2, spread = 20)
  cuda_vs_cpu(x, 32, iter.max = 20, seed = 1)
  cuda_vs_cpu(x, 33, iter.max = 10, nstart = 2, seed = 2)
  cuda_vs_cpu(x[, 1, drop = FALSE], 31, iter.max = 10, seed = 3)
})

test_that("cuda: k = 1000, 5000 and 20000 against the CPU engine", {
  skip_if_no_gpu()
  set.seed(8)
  x <- matrix(runif(20011 * 17), ncol = 17)
  cuda_vs_cpu(x, 1000, iter.max = 4, seed = 1)
  set.seed(9)
  x <- matrix(runif(30011 * 3), ncol = 3)
  cuda_vs_cpu(x, 5000, iter.max = 3, seed = 2)
  set.seed(10)
  x <- matrix(runif(40009 * 2), ncol = 2)
  cuda_vs_cpu(x, 20000, iter.max = 2, seed = 3)
})

test_that("cuda: 20 repeated fits are identical (determinism)", {
  skip_if_no_gpu()
  set.seed(11)
  x <- make_blobs(50003, 17, 64, sd = 3, spread = 10)
  ctr <- x[1:64, ]
  ref <- strip_gk(suppressWarnings(gk_cuda(x, ctr, iter.max = 10)))
  same <- vapply(1:20, function(i) {
    identical(strip_gk(suppressWarnings(gk_cuda(x, ctr, iter.max = 10))), ref)
  }, logical(1))
  expect_true(all(same))
  refs <- strip_gk(suppressWarnings(gk_cuda(x, ctr, iter.max = 10, precision = "single")))
  same <- vapply(1:5, function(i) {
    identical(strip_gk(suppressWarnings(
      gk_cuda(x, ctr, iter.max = 10, precision = "single"))), refs)
  }, logical(1))
  expect_true(all(same))
})

test_that("cuda: single precision vs double", {
  skip_if_no_gpu()
  set.seed(20)
  x <- make_blobs(100003, 6, 10, sd = 1, spread = 100, with_labels = TRUE)
  ctr <- x[match(1:10, attr(x, "label")), ]
  attr(x, "label") <- NULL
  gd <- gk_cuda(x, ctr, iter.max = 50, precision = "double")
  gs <- gk_cuda(x, ctr, iter.max = 50, precision = "single")
  expect_identical(attr(gs, "backend"), "cuda")
  expect_type(gs$centers, "double")
  expect_gte(mean(gs$cluster == gd$cluster), 0.999)
  expect_lt(abs(gs$tot.withinss - gd$tot.withinss) / gd$tot.withinss, 1e-5)
  cs <- gpu_kmeans(x, ctr, iter.max = 50, precision = "single", backend = "cpu")
  expect_gte(mean(gs$cluster == cs$cluster), 0.999)
})

test_that("cuda: predict equals CPU predict", {
  skip_if_no_gpu()
  set.seed(12)
  x <- make_blobs(20011, 5, 37, sd = 2, spread = 10)
  set.seed(1)
  g <- suppressWarnings(gk_cuda(x, 37, iter.max = 50))
  set.seed(1)
  cp <- suppressWarnings(gpu_kmeans(x, 37, iter.max = 50, backend = "cpu"))
  nd <- matrix(runif(5001 * 5, -12, 12), ncol = 5)
  pg <- predict(g, nd)
  expect_type(pg, "integer")
  expect_identical(pg, predict(cp, nd))
  expect_identical(unname(pg), nearest_center(nd, g$centers))
  if (is.null(g$ifault)) expect_identical(unname(predict(g, x)), unname(g$cluster))
})

test_that("cuda: timing and device attributes", {
  skip_if_no_gpu()
  g <- gk_cuda(iris[, 1:4], iris[c(1, 51, 101), 1:4])
  tm <- attr(g, "timing")
  expect_true(all(c("transfer_to_device", "compute", "transfer_to_host", "total")
                  %in% names(tm)))
  expect_false(anyNA(tm))
  expect_true(all(tm >= 0))
  dev <- attr(g, "device")
  expect_type(dev, "character")
  expect_length(dev, 1L)
  expect_true(nzchar(dev))
  expect_output(print(g), "Backend:")
  expect_identical(attr(gpu_kmeans(faithful, 2, backend = "cuda"), "backend"), "cuda")
})

test_that("cuda: n >= 262144 with d <= 8 (the graph-batch path) equals the CPU engine", {
  skip_if_no_gpu()
  set.seed(14)
  x <- make_blobs(300007, 2, 100, sd = 2, spread = 50)
  for (prec in c("double", "single")) {
    a <- suppressWarnings(gk_cuda(x, x[1:100, ], iter.max = 70, precision = prec))
    expect_identical(attr(a, "backend"), "cuda")
    b <- suppressWarnings(gpu_kmeans(x, x[1:100, ], iter.max = 70, precision = prec, backend = "cpu"))
    if (prec == "double") {
      expect_same_gk(a, b)
    } else {
      expect_gte(mean(a$cluster == b$cluster), 0.999)
    }
  }
  # more iterations than one batch, and a repeat that reuses the captured graphs
  x8 <- make_blobs(400009, 8, 50, sd = 3, spread = 10)
  a1 <- suppressWarnings(gk_cuda(x8, x8[1:50, ], iter.max = 200))
  a2 <- suppressWarnings(gk_cuda(x8, x8[1:50, ], iter.max = 200))
  expect_identical(strip_gk(a1), strip_gk(a2))
  expect_same_gk(a1, suppressWarnings(gk_cpu_ref(x8, x8[1:50, ], iter.max = 200)))
})

test_that("cuda: trace = TRUE reports every iteration and changes nothing", {
  skip_if_no_gpu()
  set.seed(15)
  x <- make_blobs(50000, 3, 8, sd = 2, spread = 20)
  quiet <- gk_cuda(x, x[1:8, ], iter.max = 1000)
  out <- capture.output(traced <- gk_cuda(x, x[1:8, ], iter.max = 1000, trace = TRUE))
  expect_identical(strip_gk(traced), strip_gk(quiet))
  expect_null(traced$ifault)  # converged: the last line reports no change
  expect_length(out, traced$iter)
  expect_match(out[1], "^iter +1: 50000 points changed cluster, tot.withinss = ")
  expect_match(out[length(out)], "0 points changed cluster")
  # the within-SS the trace reports for the last iteration is the fit's
  last <- as.numeric(sub(".*tot.withinss = ", "", out[length(out)]))
  expect_equal(last, traced$tot.withinss, tolerance = 1e-8)
})

test_backends("Lloyd over parts of the rows (step by step, exact sums) does not depend on the split",
              function(backend) {
  set.seed(16)
  x <- make_blobs(20011, 5, 12, sd = 2, spread = 10)
  c0 <- x[1:12, ]
  fit <- function(parts, threads = 2L) {
    gpukmeans:::gk_fit_parts_cpp(x, c0, 60L, as.integer(parts), FALSE, backend, threads, 0L)
  }
  one <- fit(1)
  expect_identical(fit(3), one)
  expect_identical(fit(7, threads = 1L), one)
  # single precision: every part stores x less the same shift (that of all
  # the rows), so the split changes nothing there either
  single <- function(parts) gpukmeans:::gk_fit_parts_cpp(x + 1e4, c0 + 1e4, 60L, as.integer(parts), TRUE, backend, 2L, 0L)
  expect_identical(single(3), single(1))
  expect_identical(single(7), single(1))
  # a part may be empty
  expect_identical(gpukmeans:::gk_fit_parts_cpp(x[1:5, ], c0[1:2, ], 10L, 9L, FALSE, backend, 2L, 0L),
                   gpukmeans:::gk_fit_parts_cpp(x[1:5, ], c0[1:2, ], 10L, 1L, FALSE, backend, 2L, 0L))
  # the same labels, iterations and sizes as the fit of one engine, and as stats
  g <- suppressWarnings(gpu_kmeans(x, c0, iter.max = 60))
  expect_identical(one$cluster, unname(g$cluster))
  expect_identical(one$iter, g$iter)
  expect_identical(one$size, g$size)
  expect_equal(one$centers, unname(g$centers), tolerance = 1e-12)
  expect_equal(one$withinss, g$withinss, tolerance = 1e-10)
  if (backend == "cuda") {
    # on the CUDA engine the step-by-step fit is the engine's own, bit for bit
    expect_identical(one$centers, unname(g$centers))
    expect_identical(one$withinss, g$withinss)
  }
})
