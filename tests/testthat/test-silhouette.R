# gpu_silhouette(): exact widths equal to cluster::silhouette(cl, dist(x))
# (sil_ref, helper-quality.R), the sampled and simplified variants, and the
# errors.

# Simplified silhouette in plain R: distances to the centers (k x d, rows for
# the codes 1..k of cl).
ref_simplified <- function(x, cl, centers) {
  k <- nrow(centers)
  D <- sapply(seq_len(k), function(c) sqrt(colSums((t(x) - centers[c, ])^2)))
  size <- tabulate(cl, k)
  a <- D[cbind(seq_len(nrow(x)), cl)]
  Dm <- D
  Dm[cbind(seq_len(nrow(x)), cl)] <- Inf
  Dm[, size == 0] <- Inf
  nb <- apply(Dm, 1L, which.min)
  b <- Dm[cbind(seq_len(nrow(x)), nb)]
  s <- ifelse(size[cl] == 1L | a == b, 0, (b - a) / pmax(a, b))
  list(width = s, neighbor = nb)
}

expect_same_silhouette <- function(sil, ref, tolerance = 1e-12) {
  expect_s3_class(sil, "silhouette")
  expect_identical(colnames(sil), c("cluster", "neighbor", "sil_width"))
  expect_equal(unname(sil[, "cluster"]), unname(ref[, "cluster"]))
  expect_equal(unname(sil[, "neighbor"]), unname(ref[, "neighbor"]))
  expect_equal(unname(sil[, "sil_width"]), unname(ref[, "sil_width"]), tolerance = tolerance)
}

test_that("the plain-R reference of the tests is cluster::silhouette", {
  skip_if_not_installed("cluster")
  set.seed(9)
  x <- make_blobs(90, 3, 4, sd = 4, spread = 5)
  cl <- c(rep(c(4L, 8L, 1L), 29), 2L, 2L, 7L)
  a <- sil_ref(cl, x)
  b <- sil_ref(cl, x, use_cluster = FALSE)
  expect_identical(unname(a[, 1:2]), unname(b[, 1:2]))
  expect_equal(unname(a[, 3]), unname(b[, 3]), tolerance = 1e-13)
})

test_backends("exact silhouette equals cluster::silhouette (USArrests, iris, blobs of many widths)",
              function(backend) {
  x <- scale(USArrests)
  set.seed(1)
  fit <- gpukmeans::gpu_kmeans(x, 4, nstart = 5)
  sil <- gpukmeans::gpu_silhouette(fit, x)
  expect_same_silhouette(sil, sil_ref(fit$cluster, x))
  expect_identical(rownames(sil), rownames(USArrests))
  expect_identical(attr(sil, "method"), "exact")
  expect_identical(attr(sil, "backend"), backend)
  if (requireNamespace("cluster", quietly = TRUE)) {
    # cluster's methods take it
    sm <- summary(sil)
    expect_equal(sm$avg.width, mean(sil_ref(fit$cluster, x)[, "sil_width"]), tolerance = 1e-12)
    expect_length(sm$clus.avg.widths, 4L)
  }

  ir <- as.matrix(iris[, 1:4])
  fit <- gpukmeans::gpu_kmeans(ir, 3, nstart = 3)
  expect_same_silhouette(gpukmeans::gpu_silhouette(fit, ir), sil_ref(fit$cluster, ir))

  # widths 1 to 40 cover every kernel (registers: 2..32 padded; wide: > 32)
  for (d in c(1, 2, 3, 7, 13, 17, 24, 31, 33, 40)) {
    set.seed(d)
    x <- make_blobs(157, d, 5, sd = 3, spread = 5)
    cl <- sample(rep_len(1:5, 157))
    sil <- gpukmeans::gpu_silhouette(cl, x)
    expect_same_silhouette(sil, sil_ref(cl, x))
  }
})

test_backends("exact silhouette: singletons, ties, duplicate rows, labels that are not 1..k",
              function(backend) {
  set.seed(3)
  x <- make_blobs(60, 3, 4)
  # singletons (width 0 as in cluster), labels with gaps and negative codes
  cl <- c(rep(c(-2L, 5L, 9L), 19), 11L, 11L, 40L)
  sil <- gpukmeans::gpu_silhouette(cl, x)
  ref <- sil_ref(cl, x)
  expect_same_silhouette(sil, ref)
  expect_identical(unname(sil[60, "sil_width"]), 0)
  # ties: a point at the same mean distance from two clusters (first wins)
  x <- matrix(c(0, -1, -1.2, 1, 1.2), ncol = 1)
  cl <- c(1L, 2L, 2L, 3L, 3L)
  expect_same_silhouette(gpukmeans::gpu_silhouette(cl, x), sil_ref(cl, x))
  # duplicate rows: a == b == 0 gives 0
  x <- matrix(c(1, 1, 1, 1, 5, 6), ncol = 1)
  cl <- c(1L, 1L, 2L, 2L, 3L, 3L)
  expect_same_silhouette(gpukmeans::gpu_silhouette(cl, x), sil_ref(cl, x))
})

test_backends("a fit with an empty cluster: the empty cluster is never a neighbor", function(backend) {
  set.seed(4)
  x <- make_blobs(40, 2, 3)
  km <- stats::kmeans(x, 3, nstart = 3)
  fake <- km
  fake$cluster <- c(1L, 3L, 4L)[km$cluster]  # cluster 2 empty
  fake$centers <- rbind(km$centers[1, ], NaN, km$centers[2:3, ])
  sil <- gpukmeans::gpu_silhouette(fake, x)
  expect_same_silhouette(sil, sil_ref(fake$cluster, x))
  expect_false(any(sil[, "neighbor"] == 2))
  s <- gpukmeans::gpu_silhouette(fake, x, method = "simplified")
  ref <- ref_simplified(x, km$cluster, km$centers)
  expect_equal(unname(s[, "sil_width"]), ref$width, tolerance = 1e-12)
  expect_equal(unname(s[, "neighbor"]), c(1, 3, 4)[ref$neighbor])
})

test_backends("sampled silhouette: exact widths of the drawn rows, drawn with R's RNG", function(backend) {
  set.seed(5)
  x <- make_blobs(300, 4, 6)
  fit <- gpukmeans::gpu_kmeans(x, 6, init = "kmeans++", iter.max = 50)
  ref <- sil_ref(fit$cluster, x)
  set.seed(11)
  s <- gpukmeans::gpu_silhouette(fit, x, method = "sampled", sample_size = 40)
  set.seed(11)
  rows <- sort(sample.int(300, 40))
  expect_identical(attr(s, "rows"), rows)
  expect_identical(attr(s, "method"), "sampled")
  expect_equal(nrow(s), 40L)
  expect_equal(unname(s[, "sil_width"]), unname(ref[rows, "sil_width"]), tolerance = 1e-12)
  expect_equal(unname(s[, "neighbor"]), unname(ref[rows, "neighbor"]))
  # a sample as large as the data is the exact silhouette, and draws nothing
  set.seed(12)
  before <- .Random.seed
  s <- gpukmeans::gpu_silhouette(fit, x, method = "sampled", sample_size = 1000)
  expect_identical(.Random.seed, before)
  expect_identical(attr(s, "method"), "exact")
  expect_equal(unname(s[, "sil_width"]), unname(ref[, "sil_width"]), tolerance = 1e-12)
})

test_backends("simplified silhouette: distances to the centers (fit's or the means)", function(backend) {
  set.seed(6)
  x <- make_blobs(250, 5, 4)
  fit <- gpukmeans::gpu_kmeans(x, 4, nstart = 3, iter.max = 50)
  s <- gpukmeans::gpu_silhouette(fit, x, method = "simplified")
  ref <- ref_simplified(x, fit$cluster, fit$centers)
  expect_identical(attr(s, "method"), "simplified")
  expect_equal(unname(s[, "sil_width"]), ref$width, tolerance = 1e-12)
  expect_equal(unname(s[, "neighbor"]), ref$neighbor)
  # labels only: the centers are the cluster means
  cl <- sample(c(2L, 7L, 9L), 250, replace = TRUE)
  cen <- rowsum(x, cl) / as.vector(table(cl))
  s <- gpukmeans::gpu_silhouette(cl, x, method = "simplified")
  ref <- ref_simplified(x, match(cl, c(2L, 7L, 9L)), cen)
  expect_equal(unname(s[, "sil_width"]), ref$width, tolerance = 1e-12)
  expect_equal(unname(s[, "neighbor"]), c(2, 7, 9)[ref$neighbor])
  expect_true(all(s[, "sil_width"] >= -1 & s[, "sil_width"] <= 1))
})

test_that("gpu_silhouette: clear errors", {
  x <- matrix(c(1, 2, 3, 10, 11, 12), ncol = 1)
  expect_error(gpukmeans::gpu_silhouette(x = x), "'fit' is required")
  expect_error(gpukmeans::gpu_silhouette(c(1, 1, 2, 2, 3, 3)), "'x' is required")
  expect_error(gpukmeans::gpu_silhouette(rep(1, 6), x), "at least 2 clusters")
  expect_error(gpukmeans::gpu_silhouette(1:6, x), "fewer clusters than rows")
  expect_error(gpukmeans::gpu_silhouette(c(1, 1, 2, 2), x), "4 labels but 'x' has 6 rows")
  expect_error(gpukmeans::gpu_silhouette(c(1, 1, 2, NA, 2, 2), x), "whole numbers, without NA")
  expect_error(gpukmeans::gpu_silhouette(c(1, 1, 2, 2.5, 2, 2), x), "whole numbers")
  expect_error(gpukmeans::gpu_silhouette(letters[1:6], x), "numeric vector")
  expect_error(gpukmeans::gpu_silhouette(factor(c(1, 1, 2, 2, 3, 3)), x), "numeric vector")
  expect_error(gpukmeans::gpu_silhouette(list(a = 1), x), "k-means fit")
  expect_error(gpukmeans::gpu_silhouette(c(1, 1, 2, 2, 3, 3), x, method = "fast"), "should be one of")
  expect_error(gpukmeans::gpu_silhouette(c(1, 1, 2, 2, 3, 3), x, method = "sampled", sample_size = 0),
               "'sample_size' must be a positive whole number")
  expect_error(gpukmeans::gpu_silhouette(c(1, 1, 2, 2, 3, 3), cbind(x, NA)), "NA, NaN or infinite")
  fit <- gpukmeans::gpu_kmeans(x, 2)
  expect_error(gpukmeans::gpu_silhouette(fit, cbind(x, x), method = "simplified"), "centers have 1 columns")
  expect_error(gpukmeans::gpu_silhouette(c(1, 1, 2, 2, 3, 3), x, backend = "gpu"), "'backend' must be one of")
})

test_that("CPU and CUDA engines give the same bits", {
  skip_if_no_gpu()
  set.seed(7)
  for (d in c(2, 16, 20, 48)) {
    x <- make_blobs(3001, d, 7)
    fit <- gpukmeans::gpu_kmeans(x, 7, init = "kmeans++", iter.max = 50, backend = "cpu")
    for (method in c("exact", "simplified")) {
      a <- gpukmeans::gpu_silhouette(fit, x, method = method, backend = "cpu")
      b <- gpukmeans::gpu_silhouette(fit, x, method = method, backend = "cuda")
      expect_identical(unclass(a)[, 1:3], unclass(b)[, 1:3])
    }
    set.seed(8)
    a <- gpukmeans::gpu_silhouette(fit, x, method = "sampled", sample_size = 500, backend = "cpu")
    set.seed(8)
    b <- gpukmeans::gpu_silhouette(fit, x, method = "sampled", sample_size = 500, backend = "cuda")
    expect_identical(unclass(a)[, 1:3], unclass(b)[, 1:3])
  }
})
