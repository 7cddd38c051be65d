# Random shapes and contents through every engine and precision: each fit
# equals the CPU engine's in double precision (labels identical; single
# precision within its rounding) or fails with a clear R error.  A fixed list
# of seeds here; tools/gpu/fuzz.R runs many more on the GPU machine.

# One random case: data, centers (a number or a matrix), iter.max.
fuzz_case <- function(seed) {
  set.seed(seed)
  n <- sample(c(1:5, 10, 50, 200, 1000), 1)
  d <- sample(c(1, 2, 3, 7, 16, 40), 1)
  kind <- sample(c("normal", "constant", "repeated", "integer", "tiny", "huge", "offset", "na", "blobs"), 1)
  x <- matrix(rnorm(n * d), n, d)
  if (kind == "constant") x[, sample.int(d, 1)] <- 3.25
  if (kind == "repeated") x <- x[sample.int(n, n, replace = TRUE), , drop = FALSE]
  if (kind == "integer") x <- matrix(sample.int(5L, n * d, replace = TRUE), n, d)
  if (kind == "tiny") x <- x * 1e-200
  if (kind == "huge") x <- x * 1e150
  if (kind == "offset") x <- x + 1e9
  if (kind == "na") x[sample.int(n * d, 1)] <- NA
  if (kind == "blobs") x <- make_blobs(n, d, max(1, n %/% 20), sd = 0.5, spread = 10)
  k <- sample(c(1, 2, 3, 8, n), 1)
  k <- max(1, min(k, n))
  centers <- if (runif(1) < 0.3 && k <= n) x[sample.int(n, k), , drop = FALSE] else k
  list(x = x, centers = centers, iter.max = sample(c(1L, 5L, 50L, 1000L), 1), kind = kind)
}

# The fit, or the error's class and message.
fuzz_fit <- function(cs, backend, precision, seed) {
  set.seed(seed)
  tryCatch(suppressWarnings(gpu_kmeans(cs$x, cs$centers, iter.max = cs$iter.max, precision = precision,
                                       backend = backend)),
           error = function(e) list(error = class(e)[1], message = conditionMessage(e)))
}

test_backends("fuzz: random shapes and contents equal the CPU engine in double or fail clearly",
              function(backend) {
  withr::local_options(gpukmeans.threads = 1L)
  for (seed in 1:120) {
    cs <- fuzz_case(seed)
    ref <- fuzz_fit(cs, "cpu", "double", seed)
    for (precision in c("double", "single")) {
      g <- fuzz_fit(cs, backend, precision, seed)
      label <- sprintf("seed %d (%s, %d x %d, %s, %s)", seed, cs$kind, nrow(cs$x), ncol(cs$x), backend, precision)
      if (!is.null(ref$error) || !is.null(g$error)) {
        # an error: clear (it names the problem), and the same on every engine
        # unless only single precision refuses the data
        msg <- g$message %||% ref$message
        expect_true(nzchar(msg) && !grepl("missing value where TRUE/FALSE", msg), label = label)
        if (precision == "double") expect_identical(g$message, ref$message, label = label)
        if (!is.null(g$error) && is.null(ref$error))
          expect_match(g$message, "precision = \"single\"", label = label)
        next
      }
      expect_s3_class(g, "gpu_kmeans")
      expect_identical(length(g$cluster), nrow(cs$x))
      expect_identical(sum(g$size), nrow(cs$x))
      if (precision == "double") {
        expect_identical(unname(g$cluster), unname(ref$cluster), label = label)
        expect_identical(g$iter, ref$iter, label = label)
        expect_equal(g$centers, ref$centers, tolerance = 1e-10, label = label)
      } else {
        expect_true(all(g$cluster >= 1L & g$cluster <= nrow(g$centers)), label = label)
        expect_lte(g$tot.withinss, ref$tot.withinss * 1.5 + 1e-6 * ref$totss + 1e-300, label = label)
      }
    }
  }
})
