# gpu_kmeans_sweep(): the fits are gpu_kmeans()'s, the indices equal their
# references (cluster::silhouette, fpc::calinhara, Davies-Bouldin in plain
# R), the methods, the errors.

drop_timing <- function(fit) {
  attr(fit, "timing") <- NULL
  fit
}

# Davies-Bouldin (q = 1, p = 2) in plain R.
ref_davies_bouldin <- function(x, cl, centers) {
  ks <- sort(unique(cl))
  s <- vapply(ks, function(c) mean(sqrt(colSums((t(x[cl == c, , drop = FALSE]) - centers[c, ])^2))), 0)
  m <- as.matrix(dist(centers[ks, , drop = FALSE]))
  r <- outer(s, s, "+") / m
  diag(r) <- -Inf
  mean(apply(r, 1, max))
}

# Calinski-Harabasz in plain R from the scatter matrices (as fpc::calinhara).
ref_calinski_harabasz <- function(x, cl) {
  n <- nrow(x)
  k <- length(unique(cl))
  W <- sum(vapply(unique(cl), function(c) {
    xc <- x[cl == c, , drop = FALSE]
    sum(sweep(xc, 2, colMeans(xc))^2)
  }, 0))
  Tss <- sum(sweep(x, 2, colMeans(x))^2)
  ((Tss - W) / (k - 1)) / (W / (n - k))
}

test_backends("the sweep's fits are gpu_kmeans()'s from the same random numbers", function(backend) {
  # (on the CPU engine, with the same threads: a sweep uses all it may)
  withr::local_options(gpukmeans.work_per_thread = 0)
  set.seed(21)
  x <- make_blobs(400, 3, 5)
  for (init in c("kmeans++", "random", "kmeans||")) {
    set.seed(99)
    sw <- gpukmeans::gpu_kmeans_sweep(x, k = c(4, 1, 2, 6), nstart = 2, iter.max = 30, init = init,
                                      silhouette = "exact")
    after_sweep <- .Random.seed
    set.seed(99)
    fits <- lapply(c(1, 2, 4, 6), function(k)
      gpukmeans::gpu_kmeans(x, k, nstart = 2, iter.max = 30, init = init))
    expect_identical(.Random.seed, after_sweep)
    expect_identical(names(sw$fits), c("1", "2", "4", "6"))
    for (i in 1:4) expect_identical(drop_timing(sw$fits[[i]]), drop_timing(fits[[i]]))
    expect_identical(sw$table$k, c(1L, 2L, 4L, 6L))
    expect_equal(sw$table$tot.withinss, vapply(fits, function(f) f$tot.withinss, 0))
  }
})

test_backends("indices equal cluster::silhouette, fpc::calinhara and Davies-Bouldin in plain R",
              function(backend) {
  x <- scale(USArrests)
  set.seed(22)
  sw <- gpukmeans::gpu_kmeans_sweep(x, k = 1:7, nstart = 4)
  tab <- as.data.frame(sw)
  expect_s3_class(tab, "data.frame")
  expect_identical(names(tab), c("k", "tot.withinss", "betweenss_totss", "silhouette", "calinski_harabasz",
                                 "davies_bouldin", "silhouette_method"))
  expect_identical(tab$silhouette_method, rep("exact", 7))
  expect_true(is.na(tab$silhouette[1]) && is.na(tab$calinski_harabasz[1]) && is.na(tab$davies_bouldin[1]))
  for (k in 2:7) {
    f <- sw$fits[[as.character(k)]]
    row <- tab[tab$k == k, ]
    sil <- mean(sil_ref(f$cluster, x)[, "sil_width"])
    expect_equal(row$silhouette, sil, tolerance = 1e-12)
    expect_equal(row$calinski_harabasz, ref_calinski_harabasz(x, f$cluster), tolerance = 1e-10)
    if (requireNamespace("fpc", quietly = TRUE))
      expect_equal(row$calinski_harabasz, fpc::calinhara(x, f$cluster), tolerance = 1e-10)
    expect_equal(row$davies_bouldin, ref_davies_bouldin(x, f$cluster, f$centers), tolerance = 1e-12)
    expect_equal(row$betweenss_totss, f$betweenss / f$totss)
  }
})

test_backends("k = 1 and k = n: the indices are NA", function(backend) {
  x <- matrix(c(1, 2, 4, 8, 16), ncol = 1)
  tab <- gpukmeans::gpu_kmeans_sweep(x, k = c(1, 2, 5))$table
  expect_true(all(is.na(unlist(tab[tab$k != 2, c("silhouette", "calinski_harabasz", "davies_bouldin")]))))
  expect_false(anyNA(unlist(tab[tab$k == 2, c("silhouette", "calinski_harabasz", "davies_bouldin")])))
})

test_backends("the silhouette methods: sampled, simplified, none, auto", function(backend) {
  set.seed(23)
  x <- make_blobs(500, 4, 4)
  set.seed(1)
  sw <- gpukmeans::gpu_kmeans_sweep(x, k = 2:5, silhouette = "sampled", silhouette_sample = 60)
  rows <- sw$silhouette_rows
  expect_length(rows, 60)
  expect_identical(sw$table$silhouette_method, rep("sampled", 4))
  # the rows are drawn after all the starts
  set.seed(1)
  for (k in 2:5) gpukmeans::gpu_kmeans(x, k, iter.max = 100, init = "kmeans++")
  expect_identical(rows, sort(sample.int(500, 60)))
  for (k in 2:5) {
    f <- sw$fits[[as.character(k)]]
    ref <- sil_ref(f$cluster, x)[rows, "sil_width"]
    expect_equal(sw$table$silhouette[sw$table$k == k], mean(ref), tolerance = 1e-12)
  }
  set.seed(1)
  simp <- gpukmeans::gpu_kmeans_sweep(x, k = 2:5, silhouette = "simplified")
  for (k in 2:5) {
    f <- simp$fits[[as.character(k)]]
    s <- gpukmeans::gpu_silhouette(f, x, method = "simplified")
    expect_equal(simp$table$silhouette[simp$table$k == k], mean(s[, "sil_width"]), tolerance = 1e-12)
  }
  none <- gpukmeans::gpu_kmeans_sweep(x, k = 2:3, silhouette = "none")
  expect_true(all(is.na(none$table$silhouette)))
  expect_false(anyNA(none$table$davies_bouldin))
  expect_identical(gpukmeans::gpu_kmeans_sweep(x, k = 2:3)$table$silhouette_method, c("exact", "exact"))
})

test_that("auto chooses exact, then sampled, then simplified by cost", {
  m <- getFromNamespace("sweep_silhouette_method", "gpukmeans")
  expect_identical(m("auto", 20000, 16, 10000, "cpu"), "exact")
  expect_identical(m("auto", 60000, 16, 10000, "cpu"), "sampled")
  expect_identical(m("auto", 1e6, 16, 10000, "cpu"), "simplified")
  expect_identical(m("auto", 3e5, 16, 10000, "cuda"), "exact")
  expect_identical(m("auto", 1e7, 16, 10000, "cuda"), "sampled")
  expect_identical(m("auto", 1e8, 16, 10000, "cuda"), "simplified")
  expect_identical(m("simplified", 10, 2, 10000, "cuda"), "simplified")
  # a pair costs more than its coordinates: at d = 1, 60,000 rows are too many
  expect_identical(m("auto", 40000, 1, 10000, "cpu"), "exact")
  expect_identical(m("auto", 60000, 1, 10000, "cpu"), "sampled")
})

test_backends("single precision: indices close to double precision", function(backend) {
  set.seed(24)
  x <- make_blobs(300, 6, 4, spread = 20)
  set.seed(2)
  a <- gpukmeans::gpu_kmeans_sweep(x, k = 2:5)
  set.seed(2)
  b <- gpukmeans::gpu_kmeans_sweep(x, k = 2:5, precision = "single")
  expect_equal(b$table$silhouette, a$table$silhouette, tolerance = 1e-5)
  expect_equal(b$table$davies_bouldin, a$table$davies_bouldin, tolerance = 1e-5)
})

test_backends("warnings of the fits, once per k, with the k", function(backend) {
  set.seed(25)
  x <- make_blobs(2000, 2, 30, sd = 5, spread = 20)
  set.seed(3)
  w <- with_warnings(gpukmeans::gpu_kmeans_sweep(x, k = c(2, 25), nstart = 3, iter.max = 1,
                                                 silhouette = "none"))
  expect_true(any(grepl("^k = 25: did not converge in 1 iteration$", w$warnings)))
  expect_identical(anyDuplicated(w$warnings), 0L)
  expect_identical(w$value$fits[["25"]]$ifault, 2L)
})

test_backends("print, plot and as.data.frame", function(backend) {
  set.seed(26)
  sw <- gpukmeans::gpu_kmeans_sweep(faithful, k = 1:5, nstart = 2)
  out <- capture.output(print(sw))
  expect_match(out[1], "k-means sweep over k = 1..5: 272 rows, 2 columns")
  expect_true(any(grepl("^Best k by silhouette: ", out)))
  expect_true(any(grepl(sprintf("^Backend: %s", backend), out)))
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_identical(plot(sw), sw)
  expect_identical(plot(sw, which = c("calinski_harabasz", "davies_bouldin", "betweenss_totss")), sw)
  expect_error(plot(sw, which = "gap"), "'which' must name panels")
  none <- gpukmeans::gpu_kmeans_sweep(faithful, k = 2:3, silhouette = "none")
  expect_identical(plot(none), none)
  expect_identical(as.data.frame(sw), sw$table)
})

test_that("gpu_kmeans_sweep: clear errors", {
  x <- as.matrix(faithful)
  sweep <- gpukmeans::gpu_kmeans_sweep
  expect_error(sweep(x, k = 0:3), "'k' must be at least 1")
  expect_error(sweep(x, k = c(2, 300)), "at most the number of rows \\(272\\): 300")
  expect_error(sweep(x, k = c(2, 2, 3)), "must not repeat")
  expect_error(sweep(x, k = c(2, NA)), "whole numbers")
  expect_error(sweep(x, k = 2.5), "whole numbers")
  expect_error(sweep(x, k = "3"), "whole numbers")
  expect_error(sweep(x, k = integer(0)), "whole numbers")
  expect_error(sweep(x, k = 2:3, nstart = 0), "'nstart' must be a positive whole number")
  expect_error(sweep(x, k = 2:3, iter.max = 0), "'iter.max' must be positive")
  expect_error(sweep(x, k = 2:3, silhouette = "fast"), "should be one of")
  expect_error(sweep(x, k = 2:3, silhouette_sample = -1), "'silhouette_sample' must be a positive whole number")
  expect_error(sweep(x, k = 2:3, init = "pp"), "should be one of")
  expect_error(sweep(x, k = 2:3, centers = 3), "unknown argument: centers")
  expect_error(sweep(x, k = 2:3, backend = "gpu"), "'backend' must be one of")
  expect_error(sweep(iris, k = 2:3), "column 'Species' is not numeric")
  # fewer distinct rows than k: the engine's error
  expect_error(sweep(matrix(rep(1:3, 4), ncol = 1), k = 2:4, init = "kmeans++"),
               "more cluster centers than distinct data points")
})

test_that("bluster: gpu_kmeans as the first step of a two-step clustering (the vignette's code)", {
  skip_if_not_installed("bluster")
  set.seed(27)
  x <- make_blobs(3000, 5, 6)
  set.seed(5)
  fit <- gpukmeans::gpu_kmeans(x, 50, iter.max = 100)
  centroid_clusters <- bluster::clusterRows(fit$centers, bluster::NNGraphParam(k = 5))
  two_step <- centroid_clusters[fit$cluster]
  expect_length(two_step, 3000)
  # the same as bluster's TwoStepParam with stats::kmeans (Lloyd) as the first step
  set.seed(5)
  ref <- bluster::clusterRows(x, bluster::TwoStepParam(
    first = bluster::KmeansParam(centers = 50, iter.max = 100, algorithm = "Lloyd"),
    second = bluster::NNGraphParam(k = 5)))
  tab <- table(two_step, ref)
  expect_true(all(rowSums(tab > 0) == 1) && all(colSums(tab > 0) == 1))
  # and its silhouette, next to bluster's approximate one
  sil <- gpukmeans::gpu_silhouette(as.integer(two_step), x)
  approx <- bluster::approxSilhouette(x, two_step)
  expect_equal(nrow(sil), nrow(approx))
  expect_gt(cor(sil[, "sil_width"], approx$width), 0.5)
})
