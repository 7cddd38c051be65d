# init = "random" / "kmeans++" / "kmeans||": reproducibility, edge cases,
# quality, and CPU == CUDA for the seeded methods.

if (!exists("skip_if_no_gpu", mode = "function")) {
  skip_if_no_gpu <- function() {
    testthat::skip_if_not(isTRUE(nrow(gpukmeans::gpukmeans_info()$devices) > 0), "no CUDA device")
  }
}

# 10 well-separated blobs on a 5 x 2 grid in 2-D (spacing 3, sd 0.05).
init_blobs <- function(per = 40, sd = 0.05) {
  ctr <- cbind(rep(0:4, 2) * 3, rep(0:1, each = 5) * 3)
  lab <- rep(seq_len(10), each = per)
  x <- ctr[lab, ] + matrix(stats::rnorm(length(lab) * 2, sd = sd), ncol = 2)
  list(x = x, lab = lab)
}

# Every true blob holds exactly one center's points, and vice versa.
recovers_all <- function(fit, lab) {
  tab <- table(factor(fit$cluster, seq_len(nrow(fit$centers))), lab)
  all(rowSums(tab > 0) == 1L) && all(colSums(tab > 0) == 1L)
}

quiet_fit <- function(...) suppressWarnings(gpu_kmeans(...))

test_that("init: argument and default", {
  x <- as.matrix(iris[, 1:4])
  expect_error(gpu_kmeans(x, 3, init = "kmeans+++"), "should be one of")
  # a matrix of centers wins over init
  ctr <- x[c(1, 51, 101), ]
  a <- gpu_kmeans(x, ctr, init = "kmeans++")
  b <- gpu_kmeans(x, ctr)
  expect_identical(strip_gk(a), strip_gk(b))
})

test_that("init = 'random' is unchanged: still equals stats::kmeans with the same seed", {
  x <- as.matrix(iris[, 1:4])
  for (ns in c(1L, 3L)) {
    set.seed(7); s <- stats::kmeans(x, 3, nstart = ns, algorithm = "Lloyd")
    s_seed <- .Random.seed
    set.seed(7); g <- gpu_kmeans(x, 3, nstart = ns, init = "random")
    expect_same_fit(g, s)
    expect_identical(.Random.seed, s_seed)
  }
})

test_that("kmeans++ and kmeans|| are reproducible under set.seed and use R's RNG", {
  b <- init_blobs()
  for (init in c("kmeans++", "kmeans||")) {
    set.seed(11); f1 <- quiet_fit(b$x, 10, init = init, nstart = 3)
    s1 <- .Random.seed
    set.seed(11); f2 <- quiet_fit(b$x, 10, init = init, nstart = 3)
    expect_identical(strip_gk(f1), strip_gk(f2))
    expect_identical(attr(f1, "start_tot_withinss"), attr(f2, "start_tot_withinss"))
    expect_length(attr(f1, "start_tot_withinss"), 3L)
    expect_identical(.Random.seed, s1)
    # another seed, another start
    set.seed(12); r1 <- gpukmeans:::gk_init_rows(b$x, 10, init)
    set.seed(11); r2 <- gpukmeans:::gk_init_rows(b$x, 10, init)
    expect_false(identical(r1, r2))
    tm <- attr(f1, "timing")
    expect_true("init" %in% names(tm))
    expect_true(tm[["init"]] >= 0)
  }
  # the draws themselves: kmeans++ takes 1 + (k - 1) * (2 + floor(log(k)))
  # uniforms, kmeans|| two
  set.seed(5); invisible(gpukmeans:::gk_init_rows(b$x, 10, "kmeans++"))
  after_pp <- .Random.seed
  set.seed(5); invisible(runif(1 + 9 * (2 + floor(log(10)))))
  expect_identical(after_pp, .Random.seed)
  set.seed(5); invisible(gpukmeans:::gk_init_rows(b$x, 10, "kmeans||"))
  after_par <- .Random.seed
  set.seed(5); invisible(runif(2))
  expect_identical(after_par, .Random.seed)
})

test_that("the chosen rows do not depend on the number of CPU threads", {
  set.seed(3)
  x <- matrix(rnorm(3000 * 3), ncol = 3)
  for (init in c("kmeans++", "kmeans||")) {
    rows <- lapply(c(1L, 2L), function(th) {
      withr::with_options(list(gpukmeans.threads = th, gpukmeans.work_per_thread = 0), {
        set.seed(21); gpukmeans:::gk_init_rows(x, 12, init, nstart = 2)
      })
    })
    expect_identical(rows[[1]], rows[[2]])
    expect_true(all(lengths(rows[[1]]) == 12L))
    expect_false(anyDuplicated(rows[[1]][[1]]) > 0L)
  }
})

test_that("k = 1 and k = n work", {
  set.seed(4)
  x <- matrix(rnorm(30 * 2), ncol = 2)
  for (init in c("kmeans++", "kmeans||")) {
    f1 <- gpu_kmeans(x, 1, init = init)
    expect_identical(f1$size, 30L)
    expect_identical(f1$iter, 1L)
    expect_equal(unname(f1$centers[1, ]), colMeans(x))
    fn <- gpu_kmeans(x, 30, init = init)
    expect_identical(sort(unname(fn$cluster)), 1:30)
    expect_equal(fn$tot.withinss, 0)
    expect_identical(anyDuplicated(fn$centers), 0L)
    rows <- gpukmeans:::gk_init_rows(x, 30, init)[[1]]
    expect_identical(sort(rows), 1:30)
    # one row
    expect_identical(gpu_kmeans(x[1, , drop = FALSE], 1, init = init)$size, 1L)
  }
})

test_that("duplicate points never give duplicate centers while distinct ones remain", {
  set.seed(8)
  base <- matrix(rnorm(6 * 2), ncol = 2)
  xd <- base[rep(1:6, times = c(40, 1, 1, 1, 1, 1)), ]  # one row repeated 40 times
  for (init in c("kmeans++", "kmeans||")) {
    for (s in 1:15) {
      set.seed(s)
      rows <- gpukmeans:::gk_init_rows(xd, 6, init)[[1]]
      expect_identical(anyDuplicated(xd[rows, , drop = FALSE]), 0L)
      set.seed(s)
      f <- gpu_kmeans(xd, 6, init = init)
      expect_equal(f$tot.withinss, 0)
    }
    # fewer distinct points than k: an error, as stats gives one
    expect_error(gpu_kmeans(xd, 7, init = init), "more cluster centers than distinct data points")
    expect_error(gpu_kmeans(xd[rep(1, 5), ], 2, init = init),
                 "more cluster centers than distinct data points")
  }
})

test_that("kmeans++ and kmeans|| recover well-separated blobs far more often than random", {
  set.seed(2024)
  b <- init_blobs()
  hits <- vapply(c("random", "kmeans++", "kmeans||"), function(init) {
    sum(vapply(1:20, function(s) {
      set.seed(s)
      recovers_all(quiet_fit(b$x, 10, iter.max = 10, init = init), b$lab)
    }, logical(1)))
  }, numeric(1))
  expect_gte(hits[["kmeans++"]], 18)
  expect_gte(hits[["kmeans||"]], 18)
  expect_gte(hits[["kmeans++"]] - hits[["random"]], 8)
  expect_gte(hits[["kmeans||"]] - hits[["random"]], 8)
})

test_that("kmeans++ lowers tot.withinss on average on a harder problem", {
  set.seed(99)
  x <- rbind(matrix(rnorm(600, sd = 0.3), ncol = 2),
             matrix(rnorm(600, sd = 0.3), ncol = 2) + 4,
             matrix(rnorm(600, sd = 0.3), ncol = 2) + cbind(rep(8, 300), rep(0, 300)))
  w <- vapply(c("random", "kmeans++"), function(init) {
    mean(vapply(1:10, function(s) {
      set.seed(s); quiet_fit(x, 12, iter.max = 3, init = init)$tot.withinss
    }, numeric(1)))
  }, numeric(1))
  expect_lt(w[["kmeans++"]], w[["random"]])
})

test_that("single precision runs the seeded inits (CPU engine: same rows as double)", {
  b <- init_blobs(per = 10)
  for (init in c("kmeans++", "kmeans||")) {
    set.seed(1); r1 <- gpukmeans:::gk_init_rows(b$x, 10, init)
    set.seed(1); r2 <- gpukmeans:::gk_init_rows(b$x, 10, init, precision = "single")
    expect_identical(r1, r2)
    set.seed(1); f <- quiet_fit(b$x, 10, init = init, precision = "single")
    expect_s3_class(f, "gpu_kmeans")
  }
})

# ---- CUDA -------------------------------------------------------------------

test_that("cuda: kmeans++ and kmeans|| choose the same rows as the CPU engine (double)", {
  skip_if_no_gpu()
  set.seed(31)
  shapes <- list(c(n = 1000, d = 2, k = 10), c(n = 5000, d = 7, k = 40),
                 c(n = 70000, d = 3, k = 5), c(n = 3, d = 2, k = 3), c(n = 1, d = 4, k = 1))
  for (sh in shapes) {
    x <- matrix(rnorm(sh[["n"]] * sh[["d"]]), ncol = sh[["d"]])
    for (init in c("kmeans++", "kmeans||")) {
      set.seed(sh[["n"]]); cpu <- gpukmeans:::gk_init_rows(x, sh[["k"]], init, nstart = 2, backend = "cpu")
      set.seed(sh[["n"]]); gpu <- gpukmeans:::gk_init_rows(x, sh[["k"]], init, nstart = 2, backend = "cuda")
      expect_identical(gpu, cpu, label = paste(init, paste(sh, collapse = "x")))
    }
  }
  # shapes where k-means|| rounds add many candidates (several groups of the
  # tensor-core filter, its unrolled d <= 32 and general kernels, d past its
  # limit of 256 for the SIMT filter) and data far from the origin or at tiny
  # or huge scales, where the lower bound must still be safe
  blob <- function(n, d, k, off = 0, sc = 1) {
    ctr <- matrix(runif(k * d, 0, 100), k, d)
    (ctr[sample.int(k, n, replace = TRUE), , drop = FALSE] + rnorm(n * d)) * sc + off
  }
  cases <- list(list(blob(20000, 16, 40), 64), list(blob(4000, 40, 20), 30), list(blob(30000, 1, 50), 100),
                list(blob(6000, 24, 30), 60), list(blob(1500, 300, 10), 20),
                list(blob(20000, 6, 30, off = 1e6), 50), list(blob(20000, 6, 30, sc = 1e-20), 50),
                list(blob(20000, 6, 30, sc = 1e150), 40))
  for (cs in cases) {
    for (init in c("kmeans++", "kmeans||")) {
      set.seed(77); cpu <- gpukmeans:::gk_init_rows(cs[[1]], cs[[2]], init, backend = "cpu")
      set.seed(77); gpu <- gpukmeans:::gk_init_rows(cs[[1]], cs[[2]], init, backend = "cuda")
      expect_identical(gpu, cpu, label = paste(init, paste(dim(cs[[1]]), collapse = "x"), cs[[2]]))
    }
  }
  # duplicates and the degenerate rule
  xd <- matrix(rnorm(12), ncol = 2)[rep(1:6, times = c(50, 1, 1, 1, 1, 1)), ]
  for (init in c("kmeans++", "kmeans||")) {
    set.seed(3); cpu <- gpukmeans:::gk_init_rows(xd, 6, init, nstart = 3, backend = "cpu")
    set.seed(3); gpu <- gpukmeans:::gk_init_rows(xd, 6, init, nstart = 3, backend = "cuda")
    expect_identical(gpu, cpu)
  }
})

test_that("cuda: fits with kmeans++ / kmeans|| match the CPU engine", {
  skip_if_no_gpu()
  b <- init_blobs()
  for (init in c("kmeans++", "kmeans||")) {
    set.seed(9); cpu <- quiet_fit(b$x, 10, init = init, nstart = 3, backend = "cpu")
    set.seed(9); gpu <- quiet_fit(b$x, 10, init = init, nstart = 3, backend = "cuda")
    expect_identical(gpu$cluster, cpu$cluster)
    expect_equal(gpu$centers, cpu$centers, tolerance = 1e-12)
    expect_equal(attr(gpu, "start_tot_withinss"), attr(cpu, "start_tot_withinss"), tolerance = 1e-12)
    expect_true(attr(gpu, "timing")[["init"]] >= 0)
    # single precision runs on the device too
    set.seed(9); s <- quiet_fit(b$x, 10, init = init, backend = "cuda", precision = "single")
    expect_true(recovers_all(s, b$lab))
  }
})

test_that("cuda: every k-means|| filter and a sample that outgrows its buffer choose the CPU engine's rows", {
  skip_if_no_gpu()
  set.seed(41)
  x <- make_blobs(20000, 12, 40, sd = 1, spread = 30)
  set.seed(5); cpu <- gpukmeans:::gk_init_rows(x, 60, "kmeans||", nstart = 2, backend = "cpu")
  # c(assign_kernel, init_filter, sample_room): filter by shape (tensor cores),
  # exact distances for every pair, the SIMT filter, and room for one sampled
  # row (every round draws its sample again into a larger buffer)
  for (tuning in list(c(0L, 0L, 0L, 0L), c(0L, 1L, 0L, 0L), c(0L, 2L, 0L, 0L), c(0L, 0L, 1L, 0L))) {
    set.seed(5)
    gpu <- gpukmeans:::gk_init_rows(x, 60, "kmeans||", nstart = 2, backend = "cuda", tuning = tuning)
    expect_identical(gpu, cpu, label = paste("tuning", paste(tuning, collapse = ",")))
  }
})
