# A large matrix source in gpu_kmeans() (R/matrix_sources.R, source_view()):
# its random starts read their rows from the source, and a fit on one CUDA
# device reads it block by block to the device (src/fit_glue.cpp, RReader;
# src/cuda_engine.cpp, take_rows) instead of through a dense copy.  Whatever
# way it goes, the fit is the dense matrix's, bit for bit, with the same
# warnings, errors and generator.  options(gpukmeans.source_memory = 0)
# makes every source large; options(gpukmeans.source_block_rows) sets the
# rows of a block (internal), so that small data crosses many blocks and
# totss' chunks of 65536 rows.
local_edition(3)

reader_data <- function(n = 2003, d = 4, zeros = 0.3) {
  set.seed(21)
  x <- make_blobs(n, d, 5, sd = 2, spread = 10)
  x[sample(length(x), floor(zeros * length(x)))] <- 0
  dimnames(x) <- list(paste0("r", seq_len(n)), paste0("v", seq_len(d)))
  x
}

# The fit of `src` and of the dense x from one seed: both results, warnings
# and the generators they leave.
fit_both <- function(src, x, ...) {
  set.seed(5)
  a <- with_warnings(gpu_kmeans(src, ...))
  a_seed <- get_seed()
  set.seed(5)
  b <- with_warnings(gpu_kmeans(x, ...))
  list(a = a$value, b = b$value, a_warn = a$warnings, b_warn = b$warnings, a_seed = a_seed, b_seed = get_seed())
}

expect_same_source_fit <- function(f) {
  expect_identical(strip_gk(f$a), strip_gk(f$b))
  expect_identical(f$a_warn, f$b_warn)
  expect_identical(f$a_seed, f$b_seed)
}

read_by_blocks <- function(fit) grepl("read block by block from its source", attr(fit, "device"), fixed = TRUE)
streamed_from_slots <- function(fit) grepl("x streamed from its source in [0-9]+ chunk", attr(fit, "device"))

# A source read through R, block by block (a sparse Matrix in triplet form):
# the engines read a dgCMatrix's slots in C++, and a dgeMatrix's values in
# place, as a matrix's (in_place()).
through_r <- function(x) methods::as(Matrix::Matrix(x, sparse = TRUE), "TsparseMatrix")
in_place <- function(m) methods::is(m, "dgeMatrix")

# gpu_kmeans() on the sparse Matrix of y (not finite somewhere) fails as on
# y itself, from one seed, with `message`.
expect_dense_error <- function(y, message, ...) {
  set.seed(2)
  a <- tryCatch(gpu_kmeans(Matrix::Matrix(y, sparse = TRUE), 3, ...), error = conditionMessage)
  expect_match(a, message, fixed = TRUE)
  set.seed(2)
  expect_identical(a, tryCatch(gpu_kmeans(y, 3, ...), error = conditionMessage))
}

# A sweep's results, without what says how and how fast it ran.
sweep_value <- function(sw) {
  sw$fits <- lapply(sw$fits, strip_gk)
  sw[setdiff(names(sw), c("timing", "seconds", "call", "device", "table"))]
}

test_that("a large source's view answers dim, dimnames and rows as the dense matrix does", {
  skip_if_not_installed("Matrix")
  x <- reader_data(50)
  m <- Matrix::Matrix(x, sparse = TRUE)
  withr::local_options(gpukmeans.source_memory = length(x) * 8)
  expect_null(gpukmeans:::source_view(m))  # small: read into memory
  expect_null(gpukmeans:::source_view(x))  # not a source
  withr::local_options(gpukmeans.source_memory = 0)
  v <- gpukmeans:::source_view(m)
  expect_s3_class(v, "gk_source")
  expect_identical(dim(v), dim(x))
  expect_identical(nrow(v), 50L)
  expect_identical(dimnames(v), dimnames(x))
  expect_identical(rownames(v), rownames(x))
  expect_identical(v[c(7, 2, 7), , drop = FALSE], x[c(7, 2, 7), , drop = FALSE])
  expect_identical(v[9, 3], x[9, 3])
  expect_identical(v[4, ], x[4, ])
  # without dimnames, and logical values as doubles
  u <- gpukmeans:::source_view(Matrix::Matrix(unname(x) > 1, sparse = TRUE))
  expect_null(dimnames(u))
  expect_identical(u[1:3, , drop = FALSE], unname(x[1:3, , drop = FALSE] > 1) + 0)
  # a pattern matrix's values are 0 and 1; values that are not numeric are
  # named (a Matrix says its type by its class, another source by a row)
  pm <- as(Matrix::Matrix(unname(x) > 1, sparse = TRUE), "nMatrix")
  expect_null(gpukmeans:::source_problem(gpukmeans:::source_view(pm)))
  expect_identical(gpukmeans:::source_view(pm)[1:3, , drop = FALSE], unname(x[1:3, , drop = FALSE] > 1) + 0)
  if (requireNamespace("DelayedArray", quietly = TRUE)) {
    ch <- DelayedArray::DelayedArray(matrix(letters[1:4], 2))
    expect_identical(gpukmeans:::source_problem(gpukmeans:::source_view(ch)),
                     "'x' must be a numeric matrix, not a DelayedMatrix of character values")
    expect_error(gpu_kmeans(ch, 1), "'x' must be a numeric matrix, not a DelayedMatrix of character values", fixed = TRUE)
    expect_null(gpukmeans:::source_problem(gpukmeans:::source_view(DelayedArray::DelayedArray(x))))
  }
  # the reader's blocks and rows: values only
  r <- gpukmeans:::source_reader(v)
  expect_s3_class(r, "gk_reader")
  expect_identical(r$csc$x, m@x)
  expect_identical(r$block(3, 4), unname(x[3:6, ]))
  expect_identical(r$rows(c(50, 1)), unname(x[c(50, 1), ]))
  # ... as the engines read them: through R, or a dgCMatrix's slots in C++
  s <- gpukmeans:::source_reader(gpukmeans:::source_view(Matrix::Matrix(x, sparse = FALSE)))
  expect_null(s$csc)
  for (rd in list(r, s)) {
    for (b in list(c(1, 50), c(1, 1), c(7, 13), c(50, 1), c(20, 0)))
      expect_identical(gpukmeans:::gk_reader_rows(rd, b[1], b[2]), unname(x[seq.int(b[1], length.out = b[2]), , drop = FALSE]))
    expect_identical(gpukmeans:::gk_reader_rows(rd, 0, 0, c(50, 3, 3, 1)), unname(x[c(50, 3, 3, 1), ]))
    expect_error(gpukmeans:::gk_reader_rows(rd, 45, 7), "rows out of x")
  }
  bad <- Matrix::Matrix(x, sparse = TRUE)
  bad@i[c(1, 2)] <- bad@i[c(2, 1)]  # rows out of order in a column
  expect_error(gpukmeans:::gk_reader_rows(gpukmeans:::source_reader(gpukmeans:::source_view(bad)), 1, 2),
               "malformed column-compressed matrix")
  bad <- Matrix::Matrix(x, sparse = TRUE)
  bad@i[5] <- 50L
  expect_error(gpukmeans:::gk_reader_rows(gpukmeans:::source_reader(gpukmeans:::source_view(bad)), 1, 2),
               "malformed column-compressed matrix")
  withr::local_options(gpukmeans.source_block_rows = 7)
  expect_identical(gpukmeans:::source_reader(v)$block_rows, 7)
  # the distinct rows, block by block, are unique(x)'s (0 and -0 alike; rows
  # that share a hash compared; an all-zero row repeated across blocks)
  y <- rbind(x, x[c(3, 9, 3), ], -x[c(5, 5), ], 0 * x[1:4, ], x[44, ] + c(0, 0, 0, 1e-300))
  y[17, ] <- 0
  for (src in list(Matrix::Matrix(y, sparse = TRUE), Matrix::Matrix(y, sparse = FALSE))) {
    vy <- gpukmeans:::source_view(src)
    for (rows in list(NULL, 1, 7, 1000))
      withr::with_options(list(gpukmeans.source_block_rows = rows), {
        expect_identical(gpukmeans:::source_unique_rows(vy), gpukmeans:::gk_unique_rows(y))
        expect_identical(gpukmeans:::source_unique_rows(vy), unname(which(!duplicated(y))))
      })
    # hashes cut to a few bits (internal): distinct rows share them, and the
    # rows compared decide
    for (bits in c(1, 3))
      withr::with_envvar(c(GPUKMEANS_DISTINCT_HASH_BITS = bits), withr::with_options(
        list(gpukmeans.source_block_rows = 5),
        expect_identical(gpukmeans:::source_unique_rows(vy), unname(which(!duplicated(y))))))
  }
  for (bad in list(0, -1, 2.5, "a", NA))
    withr::with_options(list(gpukmeans.source_block_rows = bad),
                        expect_error(gpukmeans:::source_reader(v), "gpukmeans.source_block_rows"))
})

test_backends("a large source gives the dense matrix's fit, warnings and generator, for every kind of start", function(backend) {
  skip_if_not_installed("Matrix")
  x <- reader_data()
  withr::local_options(gpukmeans.source_memory = 0, gpukmeans.source_block_rows = 300)
  for (m in list(Matrix::Matrix(x, sparse = TRUE), through_r(x), Matrix::Matrix(x, sparse = FALSE))) {
    for (precision in c("double", "single")) {
      for (args in list(list(centers = 5), list(centers = 5, init = "kmeans++"), list(centers = 5, init = "kmeans||"),
                        list(centers = x[c(1, 500, 1000, 1500, 2000), ]), list(centers = 5, nstart = 3),
                        list(centers = 4, iter.max = 2))) {
        f <- do.call(fit_both, c(list(m, x), args, precision = precision))
        expect_same_source_fit(f)
        # on one device, straight from the source (nstart > 1: its distinct rows too);
        # the CPU engine reads a dgCMatrix's slots at every pass, another
        # source from memory; a dgeMatrix's values are read in place
        expect_identical(read_by_blocks(f$a), backend == "cuda" && !in_place(m))
        expect_identical(streamed_from_slots(f$a), backend == "cpu" && is(m, "dgCMatrix"))
        expect_false(read_by_blocks(f$b))
      }
    }
  }
  # more centers than distinct rows: stats' error, after its draws
  few <- x
  few[] <- rep(1:3, length.out = nrow(x))
  f <- tryCatch(fit_both(Matrix::Matrix(few), few, centers = 4), error = conditionMessage)
  expect_identical(f, "more cluster centers than distinct data points.")
})

test_backends("a large dgeMatrix's values are read in place by every engine: the dense matrix's fit and sweep, no scratch file", function(backend) {
  skip_if_not_installed("Matrix")
  x <- reader_data(1200, 3)
  m <- Matrix::Matrix(x, sparse = FALSE)
  expect_s4_class(m, "dgeMatrix")
  withr::local_options(gpukmeans.source_memory = 0, gpukmeans.scratch_dir = "/no/such/dir")
  r <- gpukmeans:::source_reader(gpukmeans:::source_view(m))
  expect_identical(r$dense, m@x)
  expect_null(r$csc)
  for (b in list(c(1, 1200), c(7, 13), c(1200, 1)))  # (the reader of its distinct rows, its bad values)
    expect_identical(gpukmeans:::gk_reader_rows(r, b[1], b[2]), unname(x[seq.int(b[1], length.out = b[2]), , drop = FALSE]))
  expect_error(gpukmeans:::gk_reader_rows(r, 1190, 20), "rows out of x")
  r$dense <- r$dense[-1]
  expect_error(gpukmeans:::gk_reader_rows(r, 1, 2), "not n x d doubles")
  for (args in list(list(centers = 4), list(centers = 4, precision = "single", init = "kmeans||"),
                    list(centers = x[c(1, 300, 600, 900), ], iter.max = 3))) {
    f <- do.call(fit_both, c(list(m, x), args, backend = backend))
    expect_same_source_fit(f)
    expect_identical(attr(f$a, "device"), attr(f$b, "device"))  # (x in memory: nothing read or streamed)
  }
  set.seed(4)
  a <- gpu_kmeans_sweep(m, 2:3, backend = backend)
  set.seed(4)
  expect_identical(sweep_value(a), sweep_value(gpu_kmeans_sweep(x, 2:3, backend = backend)))
})

test_backends("big.matrix and DelayedArray sources read through their view give the dense matrix's fit", function(backend) {
  x <- reader_data(1500, 3)
  withr::local_options(gpukmeans.source_memory = 0, gpukmeans.source_block_rows = 400)
  sources <- list()
  if (requireNamespace("bigmemory", quietly = TRUE)) {
    xi <- round(x * 10)
    storage.mode(xi) <- "integer"
    sources$integer_big_matrix <- list(bigmemory::as.big.matrix(xi, type = "integer"), xi)
    local <- bigmemory::big.matrix(nrow(x), ncol(x), type = "double", shared = FALSE)
    local[, ] <- x
    sources$local_big_matrix <- list(local, unname(x))
  }
  if (requireNamespace("DelayedArray", quietly = TRUE))
    sources$delayed <- list(DelayedArray::DelayedArray(x), x)
  if (!length(sources)) skip("neither bigmemory nor DelayedArray is installed")
  for (s in sources) {
    expect_s3_class(gpukmeans:::source_view(s[[1]]), "gk_source")
    for (args in list(list(centers = 4), list(centers = 4, nstart = 2), list(centers = 4, init = "kmeans++"))) {
      f <- do.call(fit_both, c(list(s[[1]], s[[2]]), args))
      expect_identical(unname(f$a$cluster), unname(f$b$cluster))
      expect_identical(unname(f$a$centers), unname(f$b$centers))
      expect_identical(f$a$totss, f$b$totss)
      expect_identical(f$a_seed, f$b_seed)
      expect_identical(read_by_blocks(f$a), backend == "cuda")
    }
  }
})

test_backends("predict() on a large source gives the dense matrix's labels and errors", function(backend) {
  skip_if_not_installed("Matrix")
  x <- reader_data(3000)
  fit <- gpu_kmeans(x, 5, backend = backend)
  # (a small source, read into memory, has its columns matched by name too)
  expect_identical(predict(fit, Matrix::Matrix(x)[, 4:1], backend = backend), predict(fit, x, backend = backend))
  withr::local_options(gpukmeans.source_memory = 0, gpukmeans.source_block_rows = 700)
  for (m in list(Matrix::Matrix(x, sparse = TRUE), Matrix::Matrix(x, sparse = FALSE))) {
    expect_identical(predict(fit, m, backend = backend), predict(fit, x, backend = backend))
    expect_identical(names(predict(fit, m, backend = backend)), rownames(x))
    # columns matched by name
    expect_identical(predict(fit, m[, 4:1], backend = backend), predict(fit, x, backend = backend))
  }
  y <- x
  y[2900, 2] <- NaN
  y[100, 4] <- Inf
  expect_identical(tryCatch(predict(fit, Matrix::Matrix(y), backend = backend), error = conditionMessage),
                   tryCatch(predict(fit, y, backend = backend), error = conditionMessage))
  expect_error(predict(fit, Matrix::Matrix(y), backend = backend), "found NaN in newdata|found NaN in row 2900, column 2")
})

test_backends("a large source's totss has the dense matrix's bits, its blocks cutting totss' chunks", function(backend) {
  skip_if_not_installed("Matrix")
  x <- reader_data(140001, 3, zeros = 0.1) * 1e3 + 7e5  # far from the origin: a shift in single precision
  withr::local_options(gpukmeans.source_memory = 0)
  for (m in list(through_r(x), Matrix::Matrix(x, sparse = TRUE))) {
    for (rows in list(NULL, 50000, 65536)) {
      withr::local_options(gpukmeans.source_block_rows = rows)
      for (precision in c("double", "single")) {
        f <- fit_both(m, x, centers = 6, iter.max = 3, init = "kmeans++", precision = precision)
        expect_same_source_fit(f)
        expect_identical(read_by_blocks(f$a), backend == "cuda")
        expect_identical(streamed_from_slots(f$a), backend == "cpu" && is(m, "dgCMatrix"))
      }
    }
  }
})

test_that("cuda: a large source's blocks checked and added up as they are copied, through many staging buffers: the dense fit", {
  skip_if_no_gpu()
  skip_if_not_installed("Matrix")
  # (staging 2: buffers of 64 KiB, 2730 rows of 3 doubles, so a block goes
  # in many pieces and totss' chunks of 65536 rows cross pieces and blocks;
  # the copies check each piece and add its columns up, src/cuda/staged_copy.cu)
  x <- reader_data(140001, 3, zeros = 0.1) * 1e3 + 7e5
  m <- Matrix::Matrix(x, sparse = TRUE)
  withr::local_options(gpukmeans.backend = "cuda", gpukmeans.source_memory = 0,
                       gpukmeans.cuda_tuning = c(0, 0, 0, 0, 2))
  # the host's passes instead of the copies' (GPUKMEANS_PUT_FUSED=0), and
  # the means from a pass of their own (GPUKMEANS_STAGE_SUMS=0): one fit
  ways <- list(character(), c(GPUKMEANS_PUT_FUSED = "0", GPUKMEANS_STAGE_SUMS = "0"),
               c(GPUKMEANS_STAGE_SUMS = "0"), c(GPUKMEANS_PUT_FUSED = "0"))
  for (rows in list(NULL, 50000, 99991)) {
    withr::local_options(gpukmeans.source_block_rows = rows)
    for (precision in c("double", "single")) {
      fits <- lapply(ways, function(env) withr::with_envvar(env, fit_both(m, x, centers = 6, iter.max = 3,
                                                                          init = "kmeans++", precision = precision)))
      for (f in fits) {
        expect_same_source_fit(f)
        expect_true(read_by_blocks(f$a))
        expect_identical(f$a$totss, fits[[1]]$b$totss)
      }
    }
  }
  # a value that is not finite in a later piece of a block, and an earlier
  # one (in x's order) in a later block: the dense matrix's error
  y <- x
  y[120000, 1] <- NaN
  y[70000, 3] <- -Inf
  y[3000, 3] <- NA
  withr::local_options(gpukmeans.source_block_rows = 100000)
  for (env in ways[1:2]) withr::with_envvar(env, {
    for (precision in c("double", "single"))
      expect_dense_error(y, "found NaN in row 120000, column 1", precision = precision)
  })
})

test_backends("a value of a large source that is not finite is the dense matrix's error, wherever its block", function(backend) {
  skip_if_not_installed("Matrix")
  x <- reader_data(1000)
  x[950, 1] <- NA    # the first in column-major order, in the last block
  x[12, 3] <- Inf    # in the first block, a later column
  x[600, 2] <- NaN
  m <- Matrix::Matrix(x, sparse = FALSE)
  withr::local_options(gpukmeans.source_memory = 0, gpukmeans.source_block_rows = 100)
  # the place R names (where another error came first): the dense matrix's, for any blocks
  for (rows in c(1, 7, 100, 1000)) withr::with_options(list(gpukmeans.source_block_rows = rows), {
    for (src in list(m, Matrix::Matrix(x, sparse = TRUE)))
      expect_identical(gpukmeans:::source_first_nonfinite(gpukmeans:::source_view(src)), 950)
    expect_identical(gpukmeans:::source_first_nonfinite(gpukmeans:::source_view(Matrix::Matrix(x[, 2:4]))), 600)
    expect_identical(gpukmeans:::source_first_nonfinite(gpukmeans:::source_view(Matrix::Matrix(x[, 3:4]))), 12)
    expect_identical(gpukmeans:::source_first_nonfinite(gpukmeans:::source_view(Matrix::Matrix(x[-950, c(1, 4)]))), 0)
  })
  for (src in list(m, through_r(x))) for (precision in c("double", "single")) {
    for (init in c("random", "kmeans++")) {
      set.seed(2); a <- tryCatch(gpu_kmeans(src, 3, init = init, precision = precision), error = conditionMessage)
      a_seed <- get_seed()
      set.seed(2); b <- tryCatch(gpu_kmeans(x, 3, init = init, precision = precision), error = conditionMessage)
      expect_match(a, "found NA in row 950, column 1", fixed = TRUE)
      expect_identical(a, b)
      expect_identical(a_seed, get_seed())
    }
  }
})

test_backends("a large source whose reading fails is an R error, and the next fit runs", function(backend) {
  skip_if_not_installed("Matrix")
  x <- reader_data(1000)
  withr::local_options(gpukmeans.source_memory = 0, gpukmeans.source_block_rows = 100)
  v <- gpukmeans:::source_view(through_r(x))  # (read through R)
  r <- gpukmeans:::source_reader(v)
  reads <- 0
  r$block <- function(first, rows) {
    reads <<- reads + 1
    if (reads == 4) stop("the source went away")
    x[seq.int(first, length.out = rows), , drop = FALSE]
  }
  fit <- function(r) gpukmeans:::gk_fit_cpp(r, list(unname(x[1:3, ])), 10L, FALSE, backend, 1L, 0L, FALSE, NULL, Inf,
                                            gpukmeans:::cuda_options())
  if (backend == "cpu") {  # the CPU engine reads a source through R once, into memory: not from here
    expect_match(fit(r)$not_resident, "read through R, once, into host memory", fixed = TRUE)
    expect_identical(reads, 0)
  } else {
    expect_error(fit(r), "the source went away")
    expect_identical(reads, 4)
    # a block of another shape or type is refused
    r$block <- function(first, rows) x[seq.int(first, length.out = rows), 1:2]
    expect_error(fit(r), "not the double matrix asked for")
    r$block <- function(first, rows) x[seq.int(first, length.out = rows), , drop = FALSE] > 0
    expect_error(fit(r), "not the double matrix asked for")
  }
  expect_identical(gpu_kmeans(Matrix::Matrix(x), x[1:3, ])$cluster, gpu_kmeans(x, x[1:3, ])$cluster)
})

test_that("a large dgCMatrix that does not fit on the device is streamed from its slots at every pass: the dense fit", {
  skip_if_no_gpu()
  skip_if_not_installed("Matrix")
  x <- reader_data(200000, 8)  # 12.8 MB in double
  m <- Matrix::Matrix(x, sparse = TRUE)
  withr::local_options(gpukmeans.source_memory = 0, gpukmeans.backend = "cuda")
  streamed_from_source <- function(fit) grepl("x streamed from its source in [0-9]+ chunk", attr(fit, "device"))
  for (opt in list(list(gpukmeans.stream = TRUE), list(gpukmeans.device_memory = 8e6),
                   list(gpukmeans.stream = TRUE, gpukmeans.stream_rows = 3001))) {
    withr::local_options(opt)
    for (precision in c("double", "single")) {
      for (init in c("kmeans++", "kmeans||", "random")) {
        f <- fit_both(m, x, centers = 5, init = init, nstart = if (init == "random") 3 else 1, precision = precision)
        expect_same_source_fit(f)
        expect_true(streamed_from_source(f$a))
      }
      # given centers, and predict() on a large newdata streamed the same way
      f <- fit_both(m, x, centers = x[c(5, 50, 500, 5000), ], iter.max = 4, precision = precision)
      expect_same_source_fit(f)
      expect_true(streamed_from_source(f$a))
      expect_identical(predict(f$b, m), predict(f$b, x))
    }
  }
  # a value that is not finite: the dense matrix's error, nothing streamed
  y <- x
  y[150000, 2] <- NaN
  y[7, 3] <- Inf
  withr::local_options(gpukmeans.stream = TRUE)
  for (precision in c("double", "single"))
    expect_dense_error(y, "found NaN in row 150000, column 2", precision = precision)
  # options(gpukmeans.stream = FALSE): never streamed, an out-of-memory error
  withr::local_options(gpukmeans.stream = FALSE, gpukmeans.device_memory = 8e6)
  expect_error(gpu_kmeans(m, 5), class = "gpukmeans_out_of_memory")
})

test_that("cpu: a large dgCMatrix is read from its slots at every pass: the in-memory engine's fit, bit for bit, for any threads", {
  skip_if_not_installed("Matrix")
  x <- unname(reader_data(3001, 5))
  m <- Matrix::Matrix(x, sparse = TRUE)
  withr::local_options(gpukmeans.source_memory = 0, gpukmeans.source_block_rows = 250)
  r <- gpukmeans:::source_reader(gpukmeans:::source_view(m))
  fit <- function(data, centers, iter_max, single, threads)
    gpukmeans:::gk_fit_cpp(data, list(centers), iter_max, single, "cpu", threads, 0L, FALSE, NULL, Inf,
                           gpukmeans:::cuda_options(), finite = FALSE)
  same <- c("cluster", "centers", "totss", "withinss", "size", "iter", "start_tot_withinss")
  # 1 to 7 threads: the in-memory engine's ranges of rows (one per thread,
  # each adding its points in order) cross the blocks of 224 rows anywhere;
  # its distance bounds (GPUKMEANS_CPU_BOUNDS, internal: every kind of
  # iteration, each bounds' pass on a block's rows) change no bit
  for (bounds in c("auto", "off", "hamerly", "yinyang:2", "hamerly:cycle", "yinyang:cycle")) {
    withr::local_envvar(GPUKMEANS_CPU_BOUNDS = bounds)
    for (threads in c(1L, 2L, 3L, 7L)) {
      for (single in c(FALSE, TRUE)) {
        for (iter_max in c(2L, 50L)) {  # stopped early (iter 3), and converged
          a <- fit(r, x[c(1, 700, 1400, 2100, 2800), ], iter_max, single, threads)
          b <- fit(x, x[c(1, 700, 1400, 2100, 2800), ], iter_max, single, threads)
          expect_identical(a$device, sprintf("CPU, %d thread%s, x streamed from its source in 14 chunks",
                                             threads, if (threads == 1L) "" else "s"))
          expect_identical(a[same], b[same])
        }
      }
    }
    expect_lt(b$iter, 50L)  # (converged)
    if (bounds == "hamerly") expect_lt(min(a$exact_fraction), 0.5)  # (the bounds spared distances)
  }
  # a center no point is nearest to: NaN, as in the in-memory fit
  far <- rbind(x[c(1, 700, 1400), ], c(1e6, 1e6, 1e6, 1e6, 1e6))
  expect_identical(fit(r, far, 20L, FALSE, 3L)[same], fit(x, far, 20L, FALSE, 3L)[same])
  expect_true(all(is.nan(fit(r, far, 20L, FALSE, 3L)$centers[4, ])))
  # the trace: the in-memory fit's tot.withinss at every iteration
  tr <- function(src) capture.output(invisible(gpu_kmeans(src, x[1:4, ], trace = 1, backend = "cpu")))
  expect_identical(tr(m), tr(x))
  withr::with_envvar(c(GPUKMEANS_CPU_BOUNDS = "hamerly:cycle"), expect_identical(tr(m), tr(x)))
  expect_match(tr(m)[2], "^iter   2: [0-9]+ points changed cluster, tot.withinss = ")
  # a value that is not finite: the in-memory error, nothing fitted
  y <- x
  y[2990, 3] <- NaN
  expect_dense_error(y, "found NaN in row 2990, column 3", backend = "cpu")
  # options(gpukmeans.stream = FALSE): into memory (a scratch file); weights
  # and the sweep's quality passes need x in memory too: the same results
  set.seed(3)
  a <- gpu_kmeans(m, 4, backend = "cpu")
  expect_match(attr(a, "device"), "streamed from its source", fixed = TRUE)
  withr::with_options(list(gpukmeans.stream = FALSE), {
    set.seed(3)
    b <- gpu_kmeans(m, 4, backend = "cpu")
  })
  expect_false(grepl("streamed", attr(b, "device"), fixed = TRUE))
  expect_identical(strip_gk(a), strip_gk(b))
  w <- rep(c(1, 2), length.out = nrow(x))
  set.seed(3)
  a <- gpu_kmeans(m, 4, weights = w, backend = "cpu")
  set.seed(3)
  expect_identical(strip_gk(a), strip_gk(gpu_kmeans(x, 4, weights = w, backend = "cpu")))
  expect_false(grepl("streamed", attr(a, "device"), fixed = TRUE))
})

test_that("a large source that does not fit on the device is read into memory and streamed: the same fit", {
  skip_if_no_gpu()
  skip_if_not_installed("Matrix")
  x <- reader_data(200000, 8)  # 12.8 MB in double
  withr::local_options(gpukmeans.source_memory = 0, gpukmeans.backend = "cuda")
  for (opt in list(list(gpukmeans.stream = TRUE), list(gpukmeans.device_memory = 8e6))) {
    withr::with_options(opt, {
      f <- fit_both(Matrix::Matrix(x), x, centers = 5, init = "kmeans++")
      expect_same_source_fit(f)
      expect_false(read_by_blocks(f$a))
      expect_match(attr(f$a, "device"), "x streamed from host memory in [0-9]+ chunk")
    })
  }
  # the sweep too
  withr::with_options(list(gpukmeans.device_memory = 8e6), {
    set.seed(3)
    a <- gpu_kmeans_sweep(Matrix::Matrix(x), 2:3, silhouette = "simplified")
    a_seed <- get_seed()
    set.seed(3)
    b <- gpu_kmeans_sweep(x, 2:3, silhouette = "simplified")
    expect_identical(sweep_value(a), sweep_value(b))
    expect_identical(a_seed, get_seed())
    expect_false(read_by_blocks(a$fits[[1]]))
    expect_match(a$device, "x streamed from host memory in [0-9]+ chunk")
  })
  withr::local_options(gpukmeans.stream = FALSE, gpukmeans.device_memory = 8e6)
  expect_error(gpu_kmeans(Matrix::Matrix(x), 5), class = "gpukmeans_out_of_memory")
  expect_error(gpu_kmeans_sweep(Matrix::Matrix(x), 2:3), class = "gpukmeans_out_of_memory")
})

test_that("several devices whose parts of a large source do not fit stream them (a dgCMatrix from its slots, else from memory): the same fit", {
  skip_if_no_gpu()
  skip_if_not_installed("Matrix")
  x <- reader_data(200000, 8)  # 6.4 MB a part in double
  withr::local_options(gpukmeans.source_memory = 0, gpukmeans.backend = "cuda", gpukmeans.device_memory = 4e6)
  for (sparse in c(TRUE, FALSE)) {
    m <- Matrix::Matrix(x, sparse = sparse)
    for (init in c("kmeans++", "random")) {
      f <- fit_both(m, x, centers = 5, init = init, device = c(0L, 0L))
      expect_same_source_fit(f)
      expect_false(read_by_blocks(f$a))
      expect_match(attr(f$a, "device"), sprintf("^2 engines on 1 GPU: .*x streamed from %s in [0-9]+ chunk",
                                                if (sparse) "its source" else "host memory"))
    }
    expect_identical(withr::with_options(list(gpukmeans.device = c(0L, 0L)), predict(f$b, m)), predict(f$b, x))
  }
})

# Several devices (device = c(0, 0): two engines on one GPU; on the CPU the
# tests' composite over CPU engines, options(gpukmeans.cpu_parts)): each
# engine reads its rows of the source (src/multi_engine.cpp,
# made_from_reader), and the fit is the dense matrix's on the same split.
split_args <- function(backend, split) if (backend == "cuda") list(device = split) else list()
with_split <- function(backend, split, code) {
  withr::local_options(gpukmeans.cpu_parts = if (backend == "cpu") split)
  code
}
splits <- function(backend) {
  if (backend == "cpu") return(list(2L, 3L))
  s <- list(c(0L, 0L), c(0L, 0L, 0L))
  if (length(gpukmeans:::check_devices("all")) > 1L) s <- c(s, list(c(0L, 1L)))  # (two GPUs)
  s
}

test_backends("several devices read a large source block by block, each its rows: the dense matrix's fit", function(backend) {
  skip_if_not_installed("Matrix")
  x <- reader_data()
  withr::local_options(gpukmeans.source_memory = 0, gpukmeans.source_block_rows = 300)
  for (split in splits(backend)) {
    for (m in list(Matrix::Matrix(x, sparse = TRUE), through_r(x))) {
      for (precision in c("double", "single")) {
        for (args in list(list(centers = 5), list(centers = 5, init = "kmeans++"), list(centers = 5, init = "kmeans||"),
                          list(centers = x[c(1, 500, 1000, 1500, 2000), ]), list(centers = 5, nstart = 3),
                          list(centers = 4, iter.max = 2))) {
          f <- with_split(backend, split, do.call(fit_both, c(list(m, x), args, precision = precision,
                                                               split_args(backend, split))))
          expect_same_source_fit(f)
          expect_true(read_by_blocks(f$a))
          expect_false(read_by_blocks(f$b))
          expect_match(attr(f$a, "device"), if (backend == "cpu") sprintf("^%d parts: ", split)
                       else if (anyDuplicated(split)) sprintf("^%d engines on 1 GPU", length(split))
                       else sprintf("^%d GPUs", length(split)))
        }
      }
      # the initialisations on one engine over all the rows (CUDA: gathered
      # from the parts' copies), not the parts' together
      withr::with_options(list(gpukmeans.init_together = FALSE), for (init in c("kmeans++", "kmeans||")) {
        f <- with_split(backend, split, do.call(fit_both, c(list(m, x, centers = 6, init = init),
                                                             split_args(backend, split))))
        expect_same_source_fit(f)
        expect_true(read_by_blocks(f$a))
      })
    }
  }
})

test_backends("several devices reading a large source: totss across parts and chunks, a bad value in any part, predict()", function(backend) {
  skip_if_not_installed("Matrix")
  x <- reader_data(140001, 3, zeros = 0.1) * 1e3 + 7e5
  m <- through_r(x)
  withr::local_options(gpukmeans.source_memory = 0, gpukmeans.source_block_rows = 50000)
  split <- splits(backend)[[2]]
  # (the column means as the parts read their rows, one after another; a
  # dgCMatrix's parts read at once, the means from a pass of their own)
  for (src in list(m, Matrix::Matrix(x, sparse = TRUE))) for (precision in c("double", "single")) {
    f <- with_split(backend, split, do.call(fit_both, c(list(src, x, centers = 6, iter.max = 3, init = "kmeans++",
                                                             precision = precision), split_args(backend, split))))
    expect_same_source_fit(f)
    expect_true(read_by_blocks(f$a))
  }
  # the first value that is not finite in x's order: in a later part (an
  # earlier column), or in the first
  y <- reader_data(1000)
  withr::local_options(gpukmeans.source_block_rows = 100)
  for (bad in list(list(c(950, 1), c(12, 3), c(600, 2)), list(c(3, 2), c(800, 2), c(999, 4)))) {
    z <- y
    for (b in bad) z[b[1], b[2]] <- NA
    # (read through R, part after part; a dgCMatrix, read in C++, all parts at once)
    for (zm in list(through_r(z), Matrix::Matrix(z, sparse = TRUE))) for (init in c("random", "kmeans++")) {
      set.seed(2)
      a <- with_split(backend, split, tryCatch(do.call(gpu_kmeans, c(list(zm, 3, init = init), split_args(backend, split))),
                                              error = conditionMessage))
      a_seed <- get_seed()
      set.seed(2)
      b <- tryCatch(gpu_kmeans(z, 3, init = init), error = conditionMessage)
      expect_match(a, sprintf("found NA in row %d, column %d", bad[[1]][1], bad[[1]][2]), fixed = TRUE)
      expect_identical(a, b)
      expect_identical(a_seed, get_seed())
    }
  }
  # predict() on the devices of getOption("gpukmeans.device")
  fit <- gpu_kmeans(y, 5)
  withr::local_options(gpukmeans.device = if (backend == "cuda") split else 0L)
  for (src in list(Matrix::Matrix(y, sparse = TRUE), Matrix::Matrix(y, sparse = FALSE)))
    expect_identical(with_split(backend, split, predict(fit, src)), predict(fit, y))
})

# gpu_kmeans_sweep() on a large source: its view for the starts, its reader
# for a CUDA device (R/sweep.R); the dense matrix's sweep.

test_backends("gpu_kmeans_sweep() on a large source gives the dense matrix's sweep, errors and generator", function(backend) {
  skip_if_not_installed("Matrix")
  x <- reader_data(1500, 3)
  withr::local_options(gpukmeans.source_memory = 0, gpukmeans.source_block_rows = 400)
  for (m in list(Matrix::Matrix(x, sparse = TRUE), through_r(x), Matrix::Matrix(x, sparse = FALSE))) {
    for (args in list(list(k = 2:4), list(k = c(1, 3), nstart = 2, init = "random", silhouette = "sampled",
                                          silhouette_sample = 200), list(k = 3, precision = "single"))) {
      set.seed(9)
      a <- do.call(gpu_kmeans_sweep, c(list(m), args))
      a_seed <- get_seed()
      set.seed(9)
      b <- do.call(gpu_kmeans_sweep, c(list(x), args))
      expect_identical(sweep_value(a), sweep_value(b))
      expect_identical(a$table[setdiff(names(a$table), "seconds")], b$table[setdiff(names(b$table), "seconds")])
      expect_identical(a_seed, get_seed())
      expect_identical(read_by_blocks(a$fits[[1]]), backend == "cuda" && !in_place(m))
    }
  }
  y <- x
  y[1400, 1] <- NaN
  y[3, 2] <- Inf
  set.seed(9)
  a <- tryCatch(gpu_kmeans_sweep(Matrix::Matrix(y), 2:3), error = conditionMessage)
  a_seed <- get_seed()
  set.seed(9)
  b <- tryCatch(gpu_kmeans_sweep(y, 2:3), error = conditionMessage)
  expect_match(a, "found NaN in row 1400, column 1", fixed = TRUE)
  expect_identical(a, b)
  expect_identical(a_seed, get_seed())
})
