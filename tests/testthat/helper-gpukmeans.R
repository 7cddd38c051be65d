# Shared helpers for the gpukmeans test suite.
# Keep R CMD check friendly: at most 2 OpenMP threads, and the CPU engine
# unless a test asks for another backend explicitly.
# Small fits take one thread, as they do by default (more would only make
# them slower, much slower on a busy machine); the tests of the threads
# themselves set gpukmeans.work_per_thread = 0 to use both on small data.
options(gpukmeans.threads = 2L, gpukmeans.backend = "cpu")

# Attributes that a gpu_kmeans fit may carry on top of a stats "kmeans" fit.
gk_extra_attrs <- c("backend", "timing", "device", "threads", "start_tot_withinss")

# The bare list of the 9 kmeans components (with names), comparable to
# unclass(stats_fit). Any attribute other than the documented extras is kept,
# so an unexpected attribute makes the comparison fail.
strip_gk <- function(fit) {
  x <- unclass(fit)
  for (a in gk_extra_attrs) attr(x, a) <- NULL
  x
}

# Evaluate expr, collecting all warning messages (in order) and muffling them.
with_warnings <- function(expr) {
  w <- character()
  value <- withCallingHandlers(expr, warning = function(cnd) {
    w <<- c(w, conditionMessage(cnd))
    invokeRestart("muffleWarning")
  })
  list(value = value, warnings = w)
}

get_seed <- function() {
  if (exists(".Random.seed", envir = globalenv(), inherits = FALSE))
    get(".Random.seed", envir = globalenv(), inherits = FALSE)
  else NULL
}

# Run stats::kmeans(algorithm = "Lloyd") and gpu_kmeans on the same input
# from the same RNG state (if seed is given); record fits, warnings and the
# RNG state each call leaves behind.
# backend (if given) is passed to gpu_kmeans only.
# gpu_kmeans' default iter.max (1000) is not stats' (10): unless the test
# gives iter.max, both get stats' default explicitly, which is what parity
# is promised for.
run_pair <- function(x, centers, ..., seed = NULL, backend = NULL) {
  args <- list(...)
  if (is.null(args$iter.max)) args$iter.max <- 10L
  if (!is.null(seed)) set.seed(seed)
  s <- with_warnings(do.call(stats::kmeans, c(list(x, centers), args, algorithm = "Lloyd")))
  s_seed <- get_seed()
  if (!is.null(seed)) set.seed(seed)
  if (!is.null(backend)) args$backend <- backend
  g <- with_warnings(do.call(gpukmeans::gpu_kmeans, c(list(x, centers), args)))
  g_seed <- get_seed()
  list(s = s$value, g = g$value, s_warn = s$warnings, g_warn = g$warnings,
       s_seed = s_seed, g_seed = g_seed)
}

# A gpu_kmeans fit g equals the stats fit s.
# betweenss = totss - tot.withinss cancels to rounding noise when the fit
# explains nothing (k = 1), so it is compared on the scale of totss.
expect_same_fit <- function(g, s, tolerance = 1e-10) {
  expect_s3_class(g, c("gpu_kmeans", "kmeans"), exact = TRUE)
  expect_identical(names(g), names(s))
  g0 <- strip_gk(g)
  s0 <- unclass(s)
  expect_lte(abs(g0$betweenss - s0$betweenss), tolerance * abs(s0$totss))
  g0$betweenss <- s0$betweenss <- NULL
  expect_equal(g0, s0, tolerance = tolerance)
  expect_identical(g$cluster, s$cluster)
  expect_identical(g$iter, s$iter)
  expect_identical(g$size, s$size)
  expect_identical(g$ifault, s$ifault)
  expect_identical(dimnames(g$centers), dimnames(s$centers))
  expect_type(g$centers, "double")
  expect_type(g$withinss, "double")
}

# Full parity check (fit, warnings, RNG state afterwards). Returns the pair.
expect_kmeans_parity <- function(x, centers, ..., seed = NULL, backend = NULL,
                                 tolerance = 1e-10) {
  p <- run_pair(x, centers, ..., seed = seed, backend = backend)
  expect_same_fit(p$g, p$s, tolerance = tolerance)
  expect_identical(p$g_warn, p$s_warn)
  expect_identical(p$g_seed, p$s_seed)
  invisible(p)
}

# Reference nearest-center assignment (first minimum wins, like stats' C code).
nearest_center <- function(x, centers) {
  x <- as.matrix(x)
  storage.mode(x) <- "double"
  centers <- as.matrix(centers)
  vapply(seq_len(nrow(x)), function(i) {
    d <- colSums((t(centers) - x[i, ])^2)
    which.min(d)
  }, integer(1))
}

# Gaussian blobs: n points, d dims, k blobs; attr(x, "label") is the blob
# when with_labels = TRUE.
make_blobs <- function(n, d, k, sd = 1, spread = 50, with_labels = FALSE) {
  ctr <- matrix(stats::runif(k * d, -spread, spread), k, d)
  lab <- sample.int(k, n, replace = TRUE)
  x <- ctr[lab, , drop = FALSE] + matrix(stats::rnorm(n * d, sd = sd), n, d)
  if (with_labels) attr(x, "label") <- lab
  x
}

# (base R has it from 4.4 on; the package has its own, not exported)
`%||%` <- function(a, b) if (is.null(a)) b else a
