# Threads, backends, precision and gpukmeans_info().
local_edition(3)

test_that("gpukmeans.threads = 1 and 2 give the same fit", {
  set.seed(10)
  x <- make_blobs(20000, 4, 12, sd = 4, spread = 20)
  ctr <- x[1:12, ]
  g1 <- withr::with_options(list(gpukmeans.threads = 1L), gpu_kmeans(x, ctr, iter.max = 50))
  g2 <- withr::with_options(list(gpukmeans.threads = 2L), gpu_kmeans(x, ctr, iter.max = 50))
  expect_identical(g1$cluster, g2$cluster)
  expect_identical(g1$iter, g2$iter)
  expect_identical(g1$size, g2$size)
  expect_equal(g1$centers, g2$centers, tolerance = 1e-10)
  expect_equal(g1$tot.withinss, g2$tot.withinss, tolerance = 1e-10)
  s <- stats::kmeans(x, ctr, iter.max = 50, algorithm = "Lloyd")
  expect_same_fit(g2, s)
  # with random starts, same seed
  set.seed(3); g1 <- withr::with_options(list(gpukmeans.threads = 1L), gpu_kmeans(x, 5, nstart = 2, iter.max = 50))
  set.seed(3); g2 <- withr::with_options(list(gpukmeans.threads = 2L), gpu_kmeans(x, 5, nstart = 2, iter.max = 50))
  expect_identical(g1$cluster, g2$cluster)
  expect_equal(g1$centers, g2$centers, tolerance = 1e-10)
})

test_that("backend = 'cpu' uses the CPU engine", {
  g <- gpu_kmeans(faithful, as.matrix(faithful[1:2, ]), backend = "cpu")
  expect_identical(attr(g, "backend"), "cpu")
  s <- stats::kmeans(faithful, as.matrix(faithful[1:2, ]), algorithm = "Lloyd")
  expect_same_fit(g, s)
})

test_that("the gpukmeans.backend option is the default backend", {
  withr::local_options(gpukmeans.backend = "cpu")
  g <- gpu_kmeans(faithful, as.matrix(faithful[1:2, ]))
  expect_identical(attr(g, "backend"), "cpu")
})

test_that("backend = 'auto' picks the CPU when there is no GPU", {
  # (the once-per-session "using the CPU engine" note is a message: muffled)
  g <- suppressMessages(gpu_kmeans(faithful, as.matrix(faithful[1:2, ]), backend = "auto"))
  expect_true(attr(g, "backend") %in% c("cpu", "cuda"))
  if (!has_gpu()) expect_identical(attr(g, "backend"), "cpu")
  s <- stats::kmeans(faithful, as.matrix(faithful[1:2, ]), algorithm = "Lloyd")
  expect_same_fit(g, s)
  withr::local_options(gpukmeans.backend = NULL)
  g <- suppressMessages(gpu_kmeans(faithful, as.matrix(faithful[1:2, ])))
  if (!has_gpu()) expect_identical(attr(g, "backend"), "cpu")
})

test_that("gpukmeans_info() describes the build and the devices", {
  info <- gpukmeans_info()
  expect_type(info, "list")
  expect_true(all(c("cuda_built", "devices") %in% names(info)))
  expect_type(info$cuda_built, "logical")
  expect_length(info$cuda_built, 1L)
  expect_false(is.na(info$cuda_built))
  expect_s3_class(info$devices, "data.frame")
  if (!isTRUE(info$cuda_built)) expect_identical(nrow(info$devices), 0L)
  if (!nzchar(Sys.which("nvidia-smi")) && !file.exists("/dev/nvidia0"))
    expect_identical(nrow(info$devices), 0L)
  out <- capture.output(res <- print(info))
  expect_true(length(out) > 0L)
  expect_identical(info$stream, "when x does not fit")
  withr::local_options(gpukmeans.stream = FALSE)
  expect_identical(gpukmeans_info()$stream, "never")
  withr::local_options(gpukmeans.stream = TRUE)
  expect_identical(gpukmeans_info()$stream, "always")
  if (isTRUE(info$cuda_built))
    expect_true(any(grepl("x streamed from host memory: always", capture.output(print(gpukmeans_info())))))
})

test_that("precision = 'single' matches double on well separated blobs", {
  set.seed(20)
  x <- make_blobs(30000, 6, 10, sd = 1, spread = 100, with_labels = TRUE)
  # start from one point of each blob so that both converge to the truth
  ctr <- x[match(1:10, attr(x, "label")), ]
  attr(x, "label") <- NULL
  gd <- gpu_kmeans(x, ctr, iter.max = 50, precision = "double")
  gs <- gpu_kmeans(x, ctr, iter.max = 50, precision = "single")
  expect_s3_class(gs, "gpu_kmeans")
  expect_type(gs$cluster, "integer")
  expect_type(gs$centers, "double")
  expect_identical(names(gs), names(gd))
  expect_identical(dimnames(gs$centers), dimnames(gd$centers))
  expect_gte(mean(gs$cluster == gd$cluster), 0.999)
  expect_lt(abs(gs$tot.withinss - gd$tot.withinss) / gd$tot.withinss, 1e-5)
  expect_equal(gs$centers, gd$centers, tolerance = 1e-4)
  expect_equal(gs$totss, gd$totss, tolerance = 1e-5)
  expect_identical(attr(gs, "backend"), "cpu")
  # single precision on the faithful data as well
  gs <- gpu_kmeans(faithful, as.matrix(faithful[c(1, 2), ]), precision = "single")
  gd <- gpu_kmeans(faithful, as.matrix(faithful[c(1, 2), ]))
  expect_gte(mean(gs$cluster == gd$cluster), 0.99)
  expect_lt(abs(gs$tot.withinss - gd$tot.withinss) / gd$tot.withinss, 1e-5)
})

test_that("precision = 'single' uses the same random draws as double", {
  set.seed(5); invisible(gpu_kmeans(faithful, 3, nstart = 2, precision = "single"))
  after_single <- get_seed()
  set.seed(5); invisible(gpu_kmeans(faithful, 3, nstart = 2))
  expect_identical(get_seed(), after_single)
})
