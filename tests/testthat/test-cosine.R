# Spherical k-means: gpu_kmeans(distance = "cosine") against a plain R
# reference of its definition (skmeans', Dhillon and Modha 2001), on each
# engine (the CUDA runs are skipped without a device).

# ---- the reference ------------------------------------------------------------

# rows scaled to unit length, as R users write it
unit_rows <- function(x) {
  x <- as.matrix(x)
  storage.mode(x) <- "double"
  x / sqrt(rowSums(x^2))
}

# each unit row to the center of largest cosine (the first of equals; NaN
# centers never)
assign_cos <- function(xn, C) {
  s <- xn %*% t(C)
  vapply(seq_len(nrow(s)), function(i) which.max(s[i, ]), integer(1))
}

# normalised means of the clusters (0/0 = NaN for an empty one or one whose
# rows add up to zero)
unit_means <- function(xn, cl, k) {
  matrix(vapply(seq_len(k), function(j) {
    m <- colSums(xn[cl == j, , drop = FALSE])
    m / sqrt(sum(m^2))
  }, numeric(ncol(xn))), k, ncol(xn), byrow = TRUE)
}

# Spherical k-means from unit centers C: assign by cosine, stop when no label
# changes (iter = the assignments made), else the normalised means; with the
# fit's withinss (sums of 1 - cos), totss and sizes.
ref_skmeans <- function(xn, C, iter.max = 1000L) {
  k <- nrow(C)
  cl <- rep(0L, nrow(xn))
  iter <- iter.max + 1L
  for (it in seq_len(iter.max)) {
    new <- assign_cos(xn, C)
    if (identical(new, cl)) {
      iter <- it
      break
    }
    cl <- new
    C <- unit_means(xn, cl, k)
  }
  m <- colSums(xn)
  m <- m / sqrt(sum(m^2))
  withinss <- vapply(seq_len(k), function(j) sum(1 - xn[cl == j, , drop = FALSE] %*% C[j, ]), numeric(1))
  list(cluster = cl, centers = C, iter = iter, withinss = withinss, size = tabulate(cl, k),
       totss = sum(1 - xn %*% m))
}

# The fit equals the reference: labels, iter and sizes exactly, the rest to
# rounding.
expect_reference <- function(fit, ref, tolerance = 1e-10) {
  expect_identical(unname(fit$cluster), ref$cluster)
  expect_identical(fit$iter, ref$iter)
  expect_identical(fit$size, ref$size)
  expect_equal(unname(fit$centers), unname(ref$centers), tolerance = tolerance)
  expect_equal(fit$withinss, ref$withinss, tolerance = tolerance)
  expect_equal(fit$tot.withinss, sum(ref$withinss), tolerance = tolerance)
  expect_equal(fit$totss, ref$totss, tolerance = tolerance)
  expect_equal(fit$betweenss, fit$totss - fit$tot.withinss)
}

# rows around k random directions in d dimensions, of random lengths
directions <- function(n, d, k, sd = 0.3) {
  dirs <- matrix(rnorm(k * d), k)
  x <- dirs[sample.int(k, n, replace = TRUE), , drop = FALSE] + matrix(rnorm(n * d, sd = sd), n)
  x * runif(n, 0.2, 5)
}

fit_cos <- function(...) gpu_kmeans(..., distance = "cosine")

# ---- the fit -----------------------------------------------------------------

test_backends("from given centers: the reference's labels, iter, sizes, centers, withinss and totss",
              function(backend) {
  set.seed(1)
  for (shape in list(c(200, 5, 4), c(300, 2, 3), c(150, 17, 6), c(80, 1, 2), c(500, 40, 9))) {
    x <- directions(shape[1], shape[2], shape[3])
    c0 <- x[seq_len(shape[3]) * 7, , drop = FALSE]
    if (shape[2] == 1) c0 <- rbind(-1, 1)  # the two directions of a line
    fit <- fit_cos(x, c0)
    expect_reference(fit, ref_skmeans(unit_rows(x), unit_rows(c0)))
  }
  # data with mixed signs and no cluster structure: many iterations
  x <- matrix(rnorm(400 * 3), 400)
  fit <- fit_cos(x, x[1:8, ])
  ref <- ref_skmeans(unit_rows(x), unit_rows(x[1:8, ]))
  expect_gt(ref$iter, 5L)
  expect_reference(fit, ref)
})

test_backends("iter.max reached: the reference's centers of the last labels, a warning, ifault 2", function(backend) {
  set.seed(2)
  x <- matrix(rnorm(400 * 3), 400)
  ref <- ref_skmeans(unit_rows(x), unit_rows(x[1:8, ]), iter.max = 3L)
  expect_identical(ref$iter, 4L)
  expect_warning(fit <- fit_cos(x, x[1:8, ], iter.max = 3), "did not converge in 3 iterations")
  expect_reference(fit, ref)
  expect_identical(fit$ifault, 2L)
})

test_backends("random starts draw what stats draws from the unit rows (same generator use)", function(backend) {
  set.seed(3)
  x <- directions(120, 4, 3)
  xn <- unit_rows(x)
  for (seed in 1:4) {
    set.seed(seed)
    fit <- fit_cos(x, 3)
    after <- .Random.seed
    set.seed(seed)
    ref <- ref_skmeans(xn, xn[sample.int(nrow(xn), 3), , drop = FALSE])
    expect_reference(fit, ref)
    # the generator ends where stats::kmeans() on the unit rows leaves it
    set.seed(seed)
    suppressWarnings(stats::kmeans(xn, 3, iter.max = 1, algorithm = "Lloyd"))
    expect_identical(after, .Random.seed)
  }
  set.seed(9)
  fit <- fit_cos(x, 3, nstart = 4)
  after <- .Random.seed
  set.seed(9)
  suppressWarnings(stats::kmeans(xn, 3, nstart = 4, iter.max = 1, algorithm = "Lloyd"))
  expect_identical(after, .Random.seed)
})

test_backends("nstart > 1 keeps the first start of smallest tot.withinss", function(backend) {
  set.seed(4)
  x <- matrix(rnorm(300 * 3), 300)  # no structure: the starts end in different fits
  xn <- unit_rows(x)
  set.seed(5)
  fit <- fit_cos(x, 6, nstart = 8)
  set.seed(5)
  u <- unique(xn)
  refs <- lapply(1:8, function(s) ref_skmeans(xn, u[sample.int(nrow(u), 6), , drop = FALSE]))
  wss <- vapply(refs, function(r) sum(r$withinss), numeric(1))
  expect_gt(length(unique(round(wss, 8))), 1L)
  expect_equal(attr(fit, "start_tot_withinss"), wss, tolerance = 1e-10)
  best <- which.min(wss)
  expect_reference(fit, refs[[best]])
  expect_equal(fit$tot.withinss, min(wss), tolerance = 1e-10)
})

test_backends("the rows' lengths do not matter (exactly for powers of two)", function(backend) {
  set.seed(6)
  x <- directions(250, 6, 5)
  c0 <- x[c(3, 50, 100, 150, 200), ]
  fit <- fit_cos(x, c0)
  g <- fit_cos(x * runif(250, 0.01, 100), c0 * c(2, 0.5, 7, 1e-3, 1e3))
  expect_identical(g$cluster, fit$cluster)
  expect_identical(g$iter, fit$iter)
  expect_equal(g$centers, fit$centers, tolerance = 1e-12)
  expect_equal(g$withinss, fit$withinss, tolerance = 1e-10)
  expect_equal(g$totss, fit$totss, tolerance = 1e-10)
  # powers of two, also far beyond where squares overflow or underflow
  p <- 2^sample(c(-900:-800, -10:10, 800:900), 250, replace = TRUE)
  h <- fit_cos(x * p, c0)
  expect_identical(unclass(h)[1:9], unclass(fit)[1:9])
  for (s in c(1e-200, 1e200)) expect_identical(fit_cos(x * s, c0)$cluster, fit$cluster)
})

test_backends("centers are unit vectors; an emptied cluster keeps a NaN center and warns", function(backend) {
  set.seed(7)
  x <- directions(300, 8, 4)
  fit <- fit_cos(x, 4, nstart = 3)
  expect_equal(rowSums(fit$centers^2), setNames(rep(1, 4), 1:4), tolerance = 1e-14)
  # a center that no row is closest to
  x <- rbind(matrix(runif(40, 1, 2), 20), -matrix(runif(40, 1, 2), 20))
  c0 <- rbind(c(1, 1), c(-1, -1), c(1, -1.01))
  w <- with_warnings(fit_cos(x, c0))
  fit <- w$value
  expect_identical(w$warnings, rep("empty cluster: try a better set of initial centers", 2))  # as stats, twice
  expect_identical(fit$size, c(20L, 20L, 0L))
  expect_true(all(is.nan(fit$centers[3, ])))
  expect_identical(fit$withinss[3], 0)
  expect_reference(fit, suppressWarnings(ref_skmeans(unit_rows(x), unit_rows(c0))))
})

test_backends("a cluster whose rows add up to zero has no direction: NaN center, its rows move, it ends empty",
              function(backend) {
  x <- rbind(c(1, 0), c(-1, 0), c(0, -1))
  c0 <- rbind(c(0, 1), c(0, -1))
  # step 1: rows 1 and 2 tie (cosine 0 with both) and take center 1, whose
  # mean is then (0, 0); step 2: they move to center 2
  w <- with_warnings(fit_cos(x, c0))
  fit <- w$value
  expect_identical(w$warnings, rep("empty cluster: try a better set of initial centers", 2))
  expect_identical(fit$cluster, c(2L, 2L, 2L))
  expect_identical(fit$iter, 3L)
  expect_identical(fit$size, c(0L, 3L))
  expect_true(all(is.nan(fit$centers[1, ])))
  expect_identical(unname(fit$centers[2, ]), c(0, -1))
  expect_identical(fit$withinss, c(0, 2))  # cosines 0, 0 and 1 with (0, -1)
  expect_identical(fit$totss, 2)           # the rows add up to (0, -1): n - |sum| = 2
  expect_reference(fit, suppressWarnings(ref_skmeans(x, c0)))
  # rows that add up to zero: every direction gives n
  x <- rbind(c(1, 2), c(-1, -2), c(3, 0), c(-3, 0))
  expect_identical(fit_cos(x, x[c(1, 3), ])$totss, 4)
})

test_backends("k = 1: the normalised mean, iter 1 (as the Euclidean fit), tot.withinss = totss", function(backend) {
  set.seed(8)
  x <- directions(100, 5, 2)
  xn <- unit_rows(x)
  fit <- fit_cos(x, 1)
  m <- colSums(xn)
  expect_equal(unname(fit$centers[1, ]), m / sqrt(sum(m^2)), tolerance = 1e-12)
  expect_identical(fit$iter, 1L)
  expect_identical(fit$cluster, rep(1L, 100))
  expect_equal(fit$tot.withinss, fit$totss, tolerance = 1e-12)
  expect_equal(fit$totss, sum(1 - xn %*% (m / sqrt(sum(m^2)))), tolerance = 1e-12)
})

test_backends("k-means++ and k-means|| choose rows of the unit rows by D^2 = 2 - 2 cos", function(backend) {
  set.seed(10)
  x <- directions(400, 6, 5)
  xn <- gpukmeans:::cosine_rows(x)  # the package's unit rows, to the last bit
  expect_equal(xn, unit_rows(x), tolerance = 1e-15)
  for (init in c("kmeans++", "kmeans||")) {
    set.seed(11)
    fit <- fit_cos(x, 5, init = init)
    set.seed(11)
    rows <- gpukmeans:::gk_init_rows(xn, 5, init, backend = backend)[[1]]
    expect_reference(fit, ref_skmeans(xn, xn[rows, , drop = FALSE]))
  }
})

test_backends("predict(): newdata's rows scaled to unit length, each to the center of largest cosine",
              function(backend) {
  set.seed(12)
  x <- directions(300, 5, 4)
  colnames(x) <- letters[1:5]
  fit <- fit_cos(x, 4, nstart = 2)
  expect_identical(predict(fit, x), fit$cluster)
  new <- matrix(rnorm(50 * 5), 50, dimnames = list(NULL, letters[1:5])) * 10^runif(50, -3, 3)
  expect_identical(predict(fit, new), assign_cos(unit_rows(new), fit$centers))
  # a data frame, columns matched by name; row names kept
  df <- as.data.frame(new[, 5:1])
  rownames(df) <- paste0("r", 1:50)
  expect_identical(predict(fit, df), setNames(assign_cos(unit_rows(new), fit$centers), rownames(df)))
  expect_error(predict(fit, rbind(new[1:3, ], 0)), "row 4 of 'newdata' is all zeros")
  expect_error(predict(fit, new[, 1:4]), "has no column")
  # an empty cluster's NaN center is never chosen
  x2 <- rbind(matrix(runif(40, 1, 2), 20), -matrix(runif(40, 1, 2), 20))
  e <- suppressWarnings(fit_cos(x2, rbind(c(1, 1), c(-1, -1), c(1, -1.01))))
  new <- rbind(c(1, -0.9), c(-1, 0.9), c(1, -1.1), c(1, -1.01))
  expect_identical(predict(e, new), c(1L, 2L, 2L, 2L))
  expect_identical(predict(e, new), assign_cos(unit_rows(new), e$centers))
})

test_backends("a data frame, row and column names: as the matrix, with the names of the Euclidean fit",
              function(backend) {
  set.seed(13)
  x <- directions(90, 3, 3)
  dimnames(x) <- list(paste0("p", 1:90), c("u", "v", "w"))
  df <- as.data.frame(x)
  set.seed(1)
  a <- fit_cos(df, 3)
  set.seed(1)
  b <- fit_cos(x, 3)
  expect_true(isTRUE(all.equal(a, b)))
  expect_identical(a$cluster, b$cluster)
  expect_identical(names(a$cluster), rownames(x))
  expect_identical(dimnames(a$centers), list(as.character(1:3), c("u", "v", "w")))
  set.seed(1)
  e <- gpu_kmeans(x, 3)
  expect_identical(names(a), names(e))
  expect_identical(lapply(unclass(a), class), lapply(unclass(e), class))
  expect_identical(class(a), c("gpu_kmeans", "kmeans"))
})

test_backends("single precision: the labels of double precision on separated data, unit centers", function(backend) {
  set.seed(14)
  x <- directions(2000, 16, 6, sd = 0.1)
  c0 <- x[1:6, ]
  d <- fit_cos(x, c0)
  s <- fit_cos(x, c0, precision = "single")
  expect_identical(s$cluster, d$cluster)
  expect_identical(s$iter, d$iter)
  expect_equal(s$centers, d$centers, tolerance = 1e-6)
  expect_equal(rowSums(s$centers^2), rowSums(d$centers^2), tolerance = 1e-7)
  expect_equal(s$withinss, d$withinss, tolerance = 1e-4)
  expect_equal(s$totss, d$totss, tolerance = 1e-6)
})

test_backends("the device-agnostic path over step() (the CUDA engine's) equals the engine's own fit, for any split",
              function(backend) {
  set.seed(15)
  x <- directions(5003, 7, 8)
  xn <- gpukmeans:::cosine_rows(x)
  c0 <- xn[1:8, ]
  parts <- function(p, threads = 2L) {
    gpukmeans:::gk_spherical_parts_cpp(xn, c0, 100L, as.integer(p), FALSE, backend, threads, 0L)
  }
  one <- parts(1)
  expect_identical(parts(3), one)
  expect_identical(parts(7, threads = 1L), one)
  fit <- fit_cos(x, c0)
  expect_identical(one$cluster, fit$cluster)
  expect_identical(one$iter, fit$iter)
  expect_identical(one$size, fit$size)
  expect_equal(one$centers, unname(fit$centers), tolerance = 1e-13)
  expect_equal(one$withinss, fit$withinss, tolerance = 1e-10)
  expect_reference(fit, ref_skmeans(xn, c0))
  # single precision (the parts share one shift): the labels of the engine's own path, any split
  s <- gpukmeans:::gk_spherical_parts_cpp(xn, c0, 100L, 1L, TRUE, backend, 2L, 0L)
  expect_identical(s$cluster, fit$cluster)
  expect_identical(gpukmeans:::gk_spherical_parts_cpp(xn, c0, 100L, 3L, TRUE, backend, 2L, 0L), s)
  # the zero-sum cluster, over parts
  z <- gpukmeans:::gk_spherical_parts_cpp(rbind(c(1, 0), c(-1, 0), c(0, -1)), rbind(c(0, 1), c(0, -1)), 10L, 2L,
                                          FALSE, backend, 1L, 0L)
  expect_identical(z$cluster, c(2L, 2L, 2L))
  expect_identical(z$iter, 3L)
  expect_true(all(is.nan(z$centers[1, ])))
})

test_backends("more threads: the same labels, centers to rounding", function(backend) {
  set.seed(16)
  x <- directions(20000, 10, 12)
  c0 <- x[1:12, ]
  withr::local_options(gpukmeans.threads = 1L)
  one <- fit_cos(x, c0)
  withr::local_options(gpukmeans.threads = 2L, gpukmeans.work_per_thread = 0)
  two <- fit_cos(x, c0)
  expect_identical(two$cluster, one$cluster)
  expect_equal(two$centers, one$centers, tolerance = 1e-13)
})

# ---- the unit rows -------------------------------------------------------------

test_that("rows are scaled as x / sqrt(sum of squares in column order), exactly; any finite row", {
  set.seed(17)
  x <- matrix(rnorm(300 * 7), 300) * 10^runif(300, -5, 5)
  s <- Reduce(`+`, lapply(seq_len(ncol(x)), function(j) x[, j]^2))  # double, column order
  xn <- gpukmeans:::cosine_rows(x)
  expect_identical(xn, x / sqrt(s))
  # power-of-two scalings change nothing, also where the squares overflow or underflow
  p <- 2^c(-900, -600, -10, 0, 10, 600, 900)  # rows stay normal numbers; their squares do not
  y <- x[1:7, ] * p
  expect_identical(gpukmeans:::cosine_rows(y), xn[1:7, ])
  expect_identical(gpukmeans:::cosine_rows(rbind(c(5e-324, 0), c(-1e308, 1e308))),
                   rbind(c(1, 0), c(-1, 1) / sqrt(2)))
  # dimnames kept, 1 x d and n x 1
  z <- matrix(c(3, 4), 1, dimnames = list("a", c("u", "v")))
  expect_identical(gpukmeans:::cosine_rows(z), z / 5)
  expect_identical(gpukmeans:::cosine_rows(matrix(c(-2, 3, -0.5))), matrix(c(-1, 1, -1)))
})

# ---- the object, print, fitted ------------------------------------------------

test_that("the fit says it is spherical: attribute, print, all.equal; fitted() gives the unit centers", {
  set.seed(18)
  x <- directions(60, 3, 3)
  fit <- fit_cos(x, 3)
  expect_identical(attr(fit, "distance"), "cosine")
  expect_null(attr(gpu_kmeans(x, 3), "distance"))
  out <- capture.output(print(fit))
  expect_true(any(grepl("^Distance: cosine \\(spherical k-means", out)))
  expect_false(any(grepl("^Distance", capture.output(print(gpu_kmeans(x, 3))))))
  expect_identical(fitted(fit), fit$centers[fit$cluster, ])
  expect_identical(fitted(fit, "classes"), fit$cluster)
  set.seed(2)
  e <- gpu_kmeans(x, 3)
  set.seed(2)
  a <- fit_cos(x, 3)
  set.seed(2)
  expect_true(isTRUE(all.equal(a, fit_cos(x, 3))))
  expect_false(isTRUE(all.equal(e, fit)))
})

test_that("trace reports tot.withinss as the sum of 1 - cos", {
  set.seed(19)
  x <- directions(500, 4, 4)
  out <- capture.output(fit <- fit_cos(x, x[1:4, ], trace = TRUE))
  last <- as.numeric(sub(".*tot.withinss = ", "", out[length(out)]))
  expect_equal(last, fit$tot.withinss, tolerance = 1e-8)
})

# ---- errors -------------------------------------------------------------------

test_that("bad inputs are clear errors", {
  x <- matrix(c(1, 2, 0, 4, 5, 0, 7, 8, 0), 3)
  expect_error(fit_cos(x, 2), "row 3 of 'x' is all zeros")
  rownames(x) <- c("a", "b", "c")
  expect_error(fit_cos(x, 2), "row 3 \\(\"c\"\\) of 'x' is all zeros")
  expect_error(fit_cos(rbind(c(1, 2), c(NA, 1), c(3, 1)), 2), "found NA in row 2, column 1")
  expect_error(fit_cos(rbind(c(1, 2), c(1, 1), c(3, Inf)), 2), "found Inf in row 3, column 2")
  y <- matrix(rnorm(20), 10)
  expect_error(gpu_kmeans(y, 2, distance = "foo"), "'distance' should be one of \"euclidean\", \"cosine\"")
  expect_error(gpu_kmeans(y, 2, distance = NA), "'distance' should be one of")
  expect_error(gpu_kmeans(y, 2, distance = c("cosine", "euclidean")), "'distance' should be one of")
  expect_error(fit_cos(y, 2, algorithm = "Hartigan-Wong"), "runs algorithm = \"Lloyd\" only, not \"Hartigan-Wong\"")
  expect_error(fit_cos(y, 2, algorithm = "MacQueen"), "not \"MacQueen\"")
  expect_identical(fit_cos(y, y[1:2, ], algorithm = "Forgy")$cluster, fit_cos(y, y[1:2, ])$cluster)
  expect_error(fit_cos(y, rbind(c(1, 1), c(0, 0))), "row 2 of 'centers' is all zeros")
  expect_error(fit_cos(y, rbind(c(1, 2), c(0, 1), c(3, 6))),
               "initial centers are not distinct: rows 1 and 3 of 'centers' have the same direction")
  # k distinct directions are needed
  expect_error(fit_cos(rbind(c(1, 0), c(2, 0), c(0, 1), c(0, 3)), 3, nstart = 2),
               "more cluster centers than distinct data points")
  expect_error(fit_cos(y, 2, comm = 0), "does not run over MPI yet")
  expect_error(fit_cos(y, 2, foo = 1), "unused argument")
})

test_that("gpu_silhouette() of a spherical fit: distances between the unit rows", {
  set.seed(20)
  x <- directions(200, 4, 3)
  fit <- fit_cos(x, 3, nstart = 2)
  xn <- unit_rows(x)
  s <- gpu_silhouette(fit, x)
  expect_equal(unname(s[, "sil_width"]), unname(gpu_silhouette(fit$cluster, xn)[, "sil_width"]), tolerance = 1e-12)
  if (requireNamespace("cluster", quietly = TRUE)) {
    ref <- cluster::silhouette(fit$cluster, dist(xn))
    expect_equal(unname(s[, "sil_width"]), unname(ref[, "sil_width"]), tolerance = 1e-12)
  }
})

test_that("the CPU engine's distance bounds (every variant) give the labels of the step() path", {
  set.seed(21)
  x <- rbind(matrix(rnorm(3000 * 5), 3000), directions(1000, 5, 4))  # no structure, and some
  xn <- gpukmeans:::cosine_rows(x)
  for (k in c(7L, 40L)) {
    c0 <- xn[seq_len(k) * 11, ]
    ref <- gpukmeans:::gk_spherical_parts_cpp(xn, c0, 300L, 1L, FALSE, "cpu", 1L, 0L)
    expect_gt(ref$iter, 10L)
    for (v in c("off", "hamerly", "yinyang:3", "hamerly:cycle", "yinyang:5:cycle")) {
      withr::local_envvar(GPUKMEANS_CPU_BOUNDS = v)
      fit <- fit_cos(x, c0, iter.max = 300)
      expect_identical(fit$cluster, ref$cluster, label = v)
      expect_identical(fit$iter, ref$iter, label = v)
      expect_equal(unname(fit$centers), ref$centers, tolerance = 1e-12, label = v)
    }
  }
})
