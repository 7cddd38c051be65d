# Matrices that are not base R matrices (R/matrix_sources.R): package Matrix's
# dense and sparse classes, bigmemory's big.matrix (in memory and
# file-backed), DelayedArray/HDF5Array matrices.  stats::kmeans() takes them
# through as.matrix(): so must gpu_kmeans(), with the same fit.
local_edition(3)

sources_data <- function() {
  set.seed(11)
  x <- make_blobs(503, 4, 5, sd = 2, spread = 10)
  x[sample(length(x), 300)] <- 0  # zeros, as sparse data has
  dimnames(x) <- list(paste0("r", seq_len(nrow(x))), paste0("v", 1:4))
  x
}

test_that("a matrix source is read in blocks into the dense matrix as.matrix() gives", {
  skip_if_not_installed("Matrix")
  x <- sources_data()
  for (m in list(Matrix::Matrix(x, sparse = TRUE), Matrix::Matrix(x, sparse = FALSE))) {
    expect_true(gpukmeans:::is_matrix_source(m))
    for (rows in list(NULL, 1, 7, 502, 503, 1e4)) {
      expect_identical(gpukmeans:::read_matrix_source(m, block_rows = rows), as.matrix(m))
    }
  }
  expect_false(gpukmeans:::is_matrix_source(x))
  expect_false(gpukmeans:::is_matrix_source(as.data.frame(x)))
  # a dgCMatrix is filled from its nonzero values in one pass: one whose
  # structure was broken by slot assignment is an error, not a stray write
  # (a column a thread: one thread or several fill the same values; a bad
  # row index in a late column is found whatever thread has it)
  sp <- Matrix::Matrix(x, sparse = TRUE)
  for (threads in c(1L, 2L, 7L)) {
    out <- matrix(0, nrow(x), ncol(x))
    gpukmeans:::gk_fill_csc(out, sp@p, sp@i, sp@x, threads)
    expect_identical(out, unname(as.matrix(sp)))
    late <- sp
    late@i[length(late@i) - 1L] <- nrow(x)
    expect_error(gpukmeans:::gk_fill_csc(matrix(0, nrow(x), ncol(x)), late@p, late@i, late@x, threads),
                 "malformed column-compressed matrix")
  }
  bad <- Matrix::Matrix(x, sparse = TRUE)
  expect_s4_class(bad, "dgCMatrix")
  bad@i[3] <- 10000L
  expect_error(gpukmeans:::read_matrix_source(bad), "malformed column-compressed matrix")
  bad@i[3] <- -1L
  expect_error(gpukmeans:::read_matrix_source(bad), "malformed column-compressed matrix")
  bad <- Matrix::Matrix(x, sparse = TRUE)
  bad@p[2] <- bad@p[3] + 1L
  expect_error(gpukmeans:::read_matrix_source(bad), "malformed column-compressed matrix")
  # without dimnames, and with column names only
  m <- Matrix::Matrix(unname(x), sparse = TRUE)
  expect_identical(gpukmeans:::read_matrix_source(m, 10), as.matrix(m))
  colnames(m) <- colnames(x)
  expect_identical(gpukmeans:::read_matrix_source(m, 10), as.matrix(m))
})

test_backends("Matrix sparse and dense matrices give stats' fit (and gpu_kmeans' on the dense matrix)", function(backend) {
  skip_if_not_installed("Matrix")
  x <- sources_data()
  for (m in list(Matrix::Matrix(x, sparse = TRUE), Matrix::Matrix(x, sparse = FALSE))) {
    p <- expect_kmeans_parity(m, 5, iter.max = 50, seed = 3, tolerance = 1e-12)
    set.seed(3); g <- gpu_kmeans(x, 5, iter.max = 50)
    expect_identical(p$g$cluster, g$cluster)
    expect_identical(p$g$centers, g$centers)
    expect_identical(names(p$g$cluster), rownames(x))
    expect_identical(colnames(p$g$centers), colnames(x))
    expect_identical(predict(p$g, m[1:20, ]), predict(g, x[1:20, ]))
  }
})

test_that("a matrix source with NA or non-numeric values is a clear error", {
  skip_if_not_installed("Matrix")
  x <- sources_data()
  x[7, 3] <- NA
  expect_error(gpu_kmeans(Matrix::Matrix(x, sparse = TRUE), 3), "row 7, column 3")
  # logical values (a sparse pattern of TRUE/FALSE) are 0 and 1, as for a logical matrix
  expect_s3_class(gpu_kmeans(Matrix::Matrix(sources_data() > 1, sparse = TRUE), 2), "kmeans")
})

test_that("big.matrix sources, in memory and file-backed, give the fit of the base matrix", {
  skip_if_not_installed("bigmemory")
  x <- sources_data()
  set.seed(3); ref <- gpu_kmeans(x, 5, iter.max = 50, backend = "cpu")
  dir <- withr::local_tempdir()
  bm <- list(bigmemory::as.big.matrix(x),
             bigmemory::as.big.matrix(x, backingfile = "x.bin", descriptorfile = "x.desc", backingpath = dir))
  for (b in bm) {
    expect_true(gpukmeans:::is_matrix_source(b))
    set.seed(3); f <- gpu_kmeans(b, 5, iter.max = 50, backend = "cpu")
    expect_identical(f$cluster, ref$cluster)
    expect_identical(f$centers, ref$centers)
    expect_identical(f$totss, ref$totss)
  }
  # an integer big.matrix: its values as doubles
  xi <- round(x * 10)
  storage.mode(xi) <- "integer"
  set.seed(3); a <- gpu_kmeans(bigmemory::as.big.matrix(xi, type = "integer"), 5, iter.max = 50, backend = "cpu")
  set.seed(3); b <- gpu_kmeans(xi, 5, iter.max = 50, backend = "cpu")
  expect_identical(unname(a$centers), unname(b$centers))
  expect_identical(unname(a$cluster), unname(b$cluster))
})

test_that("a double big.matrix in a file or in shared memory is mapped, not read: no copy, the same values", {
  skip_if_not_installed("bigmemory")
  skip_on_os("windows")
  x <- sources_data()
  colnames(x) <- paste0("v", seq_len(ncol(x)))
  dir <- withr::local_tempdir()
  file_backed <- bigmemory::as.big.matrix(x, backingfile = "x.bin", descriptorfile = "x.desc", backingpath = dir)
  shared <- bigmemory::as.big.matrix(x)
  for (b in list(file_backed, shared)) {
    m <- gpukmeans:::read_matrix_source(b)
    expect_true(gpukmeans:::gk_is_mapped(m))
    expect_identical(m, x)                     # values, dim and dimnames
    expect_identical(m[17, ], x[17, ])
    set.seed(4); f <- gpu_kmeans(b, 4, nstart = 2, backend = "cpu")
    set.seed(4); g <- gpu_kmeans(x, 4, nstart = 2, backend = "cpu")
    expect_identical(f$cluster, g$cluster)
    expect_identical(f$centers, g$centers)
    # a write by R never reaches the big.matrix (the mapping is private)
    m[1, 1] <- 1e6
    expect_identical(b[1, 1], unname(x[1, 1]))
    expect_identical(readRDS({s <- withr::local_tempfile(); saveRDS(m, s); s})[1, 1], 1e6)
  }
  # read (not mapped): a big.matrix in R's own memory, a sub.big.matrix, integers
  local <- bigmemory::big.matrix(nrow(x), ncol(x), type = "double", shared = FALSE)
  local[, ] <- x
  expect_false(gpukmeans:::gk_is_mapped(gpukmeans:::read_matrix_source(local)))
  # where the bytes are, told without mapping them; a large source that maps
  # is no view (mapped), one in R's memory is (read block by block)
  expect_identical(normalizePath(gpukmeans:::big_matrix_file(file_backed)$path), normalizePath(file.path(dir, "x.bin")))
  expect_identical(gpukmeans:::big_matrix_file(shared)[c("n", "d")], list(n = nrow(x), d = ncol(x)))
  expect_null(gpukmeans:::big_matrix_file(local))
  withr::with_options(list(gpukmeans.source_memory = 0), {
    expect_null(gpukmeans:::source_view(file_backed))
    expect_null(gpukmeans:::source_view(shared))
    expect_s3_class(gpukmeans:::source_view(local), "gk_source")
  })
  sub <- bigmemory::sub.big.matrix(file_backed, firstRow = 2, lastRow = 9)
  expect_false(gpukmeans:::gk_is_mapped(gpukmeans:::read_matrix_source(sub)))
  expect_identical(unname(gpukmeans:::read_matrix_source(sub)), unname(x[2:9, ]))
  xi <- round(x)
  storage.mode(xi) <- "integer"
  expect_false(gpukmeans:::gk_is_mapped(gpukmeans:::read_matrix_source(bigmemory::as.big.matrix(xi, type = "integer"))))
  # a file shorter than the matrix, or none, is not mapped
  short <- withr::local_tempfile()
  writeBin(c(1, 2, 3), short)
  expect_null(gpukmeans:::gk_map_doubles(short, 2, 2, 0))
  expect_null(gpukmeans:::gk_map_doubles(file.path(dir, "none.bin"), 2, 2, 0))
  expect_identical(gpukmeans:::gk_map_doubles(short, 3, 1, 0)[, 1], c(1, 2, 3))
})

test_that("DelayedArray and HDF5Array matrices give the fit of the base matrix", {
  skip_if_not_installed("HDF5Array")
  x <- sources_data()
  set.seed(3); ref <- gpu_kmeans(x, 5, iter.max = 50, backend = "cpu")
  file <- withr::local_tempfile(fileext = ".h5")
  h <- suppressMessages(HDF5Array::writeHDF5Array(x, filepath = file, name = "x", with.dimnames = TRUE))
  for (m in list(h, DelayedArray::DelayedArray(x) * 1)) {
    expect_true(gpukmeans:::is_matrix_source(m))
    set.seed(3); f <- gpu_kmeans(m, 5, iter.max = 50, backend = "cpu")
    expect_identical(f$cluster, ref$cluster)
    expect_identical(f$centers, ref$centers)
  }
})

# Sources larger than options(gpukmeans.source_memory) go to a scratch file
# (src/mapped_matrix.cpp, gk_scratch_doubles): the same values, dimnames and
# fits as in memory, read through a mapping that the engines use in place.
scratch_sources <- function(x) {
  out <- list()
  if (requireNamespace("Matrix", quietly = TRUE))
    out <- c(out, list(sparse = Matrix::Matrix(x, sparse = TRUE), dense = Matrix::Matrix(x, sparse = FALSE)))
  if (requireNamespace("bigmemory", quietly = TRUE)) {
    local <- bigmemory::big.matrix(nrow(x), ncol(x), type = "double", shared = FALSE,
                                   dimnames = dimnames(x))
    local[, ] <- x
    out$big_local <- local
  }
  if (requireNamespace("DelayedArray", quietly = TRUE)) out$delayed <- DelayedArray::DelayedArray(x) * 1
  out
}

test_backends("a source larger than options(gpukmeans.source_memory) is read into a scratch file: same values and fit", function(backend) {
  skip_on_os("windows")
  x <- sources_data()
  srcs <- scratch_sources(x)
  if (length(srcs) == 0L) skip("none of Matrix, bigmemory, DelayedArray is installed")
  set.seed(3); ref <- gpu_kmeans(x, 5, iter.max = 50, nstart = 2)
  for (name in names(srcs)) {
    m <- srcs[[name]]
    withr::local_options(gpukmeans.source_memory = 0)
    for (rows in list(NULL, 1, 100, 503)) {
      y <- gpukmeans:::read_matrix_source(m, block_rows = rows)
      expect_true(gpukmeans:::gk_is_mapped(y), label = name)
      expect_identical(y, x, label = name)
    }
    expect_true(gpukmeans:::gk_is_mapped(gpukmeans:::data_matrix(m)$x), label = name)
    set.seed(3); f <- gpu_kmeans(m, 5, iter.max = 50, nstart = 2)
    expect_identical(f$cluster, ref$cluster, label = name)
    expect_identical(f$centers, ref$centers, label = name)
    expect_identical(f$totss, ref$totss, label = name)
    expect_identical(predict(f, m), predict(ref, x), label = name)
    # and against stats itself, random numbers and warnings included (stats
    # cannot take a big.matrix: as.matrix() has no method for it)
    if (!methods::is(m, "big.matrix")) expect_kmeans_parity(m, 5, iter.max = 50, seed = 8, tolerance = 1e-12)
  }
})

test_that("options(gpukmeans.source_memory) is the most bytes a source takes in memory", {
  skip_if_not_installed("Matrix")
  skip_on_os("windows")
  x <- sources_data()
  m <- Matrix::Matrix(x, sparse = TRUE)
  bytes <- length(x) * 8
  withr::local_options(gpukmeans.source_memory = bytes)
  expect_false(gpukmeans:::gk_is_mapped(gpukmeans:::read_matrix_source(m)))
  withr::local_options(gpukmeans.source_memory = bytes - 1)
  expect_true(gpukmeans:::gk_is_mapped(gpukmeans:::read_matrix_source(m)))
  withr::local_options(gpukmeans.source_memory = Inf)
  expect_false(gpukmeans:::gk_is_mapped(gpukmeans:::read_matrix_source(m)))
  withr::local_options(gpukmeans.source_memory = NULL)  # default: 1 GiB
  expect_false(gpukmeans:::gk_is_mapped(gpukmeans:::read_matrix_source(m)))
  # a base matrix is never copied, whatever the option
  withr::local_options(gpukmeans.source_memory = 0)
  expect_false(gpukmeans:::gk_is_mapped(gpukmeans:::data_matrix(x)$x))
  for (bad in list("a", -1, NA_real_, c(1, 2)))
    withr::with_options(list(gpukmeans.source_memory = bad),
                        expect_error(gpu_kmeans(m, 3), "options\\(gpukmeans.source_memory\\) must be a number of bytes"))
})

test_that("a scratch directory that cannot take the file is a clear error, and no file is left behind", {
  skip_if_not_installed("Matrix")
  skip_on_os("windows")
  # (a sparse Matrix in triplet form is read through R, once, into the
  # scratch file; the CPU engine reads a dgCMatrix's slots at every pass,
  # and a dgeMatrix's values in place, with no scratch file)
  m <- methods::as(Matrix::Matrix(sources_data(), sparse = TRUE), "TsparseMatrix")
  withr::local_options(gpukmeans.source_memory = 0)
  withr::with_options(list(gpukmeans.scratch_dir = "/no/such/dir"), {
    x <- sources_data()
    set.seed(1)
    b <- gpu_kmeans(x, 3, backend = "cpu")
    for (src in list(Matrix::Matrix(x, sparse = TRUE), Matrix::Matrix(x, sparse = FALSE))) {
      set.seed(1)
      expect_identical(strip_gk(gpu_kmeans(src, 3, backend = "cpu")), strip_gk(b))
    }
  })
  file <- withr::local_tempfile()
  writeLines("not a directory", file)
  for (bad in list(file, "/no/such/dir", 3, NA_character_))
    withr::with_options(list(gpukmeans.scratch_dir = bad),
                        expect_error(gpu_kmeans(m, 3), "options\\(gpukmeans.scratch_dir\\) must name an existing directory"))
  if (dir.exists("/proc/self"))  # Linux: no file can be created in /proc
    withr::with_options(list(gpukmeans.scratch_dir = "/proc"),
                        expect_error(gpu_kmeans(m, 3), "cannot create a scratch file in '/proc'.*gpukmeans.source_memory = Inf"))
  # the file is unlinked as soon as it is mapped: the directory stays empty
  dir <- withr::local_tempdir()
  withr::local_options(gpukmeans.scratch_dir = dir)
  y <- gpukmeans:::read_matrix_source(m)
  expect_true(gpukmeans:::gk_is_mapped(y))
  expect_length(list.files(dir, all.files = TRUE, no.. = TRUE), 0L)
  expect_identical(y[5, ], as.matrix(m)[5, ])
})

test_that("the default scratch directory is on disk: tempdir(), or /var/tmp where tempdir() is a tmpfs", {
  skip_on_os(c("windows", "mac", "solaris"))
  fstype <- function(dir) suppressWarnings(system2("stat", c("-f", "-c", "%T", dir), stdout = TRUE, stderr = FALSE))
  if (!identical(fstype("/dev/shm"), "tmpfs")) skip("no tmpfs at /dev/shm")
  expect_true(gpukmeans:::gk_in_memory_fs("/dev/shm"))
  disk <- withr::local_tempdir()
  on_disk <- !identical(fstype(disk), "tmpfs") && !identical(fstype(disk), "ramfs")
  expect_identical(gpukmeans:::gk_in_memory_fs(disk), !on_disk)
  expect_false(gpukmeans:::gk_in_memory_fs("/no/such/dir"))
  if (on_disk) {
    # tempdir() on disk: kept; in memory: the fallback on disk
    expect_identical(gpukmeans:::scratch_default_dir(disk, "/dev/shm"), disk)
    expect_identical(gpukmeans:::scratch_default_dir("/dev/shm", disk), disk)
    # a fallback that is missing, or itself in memory, is not taken
    expect_identical(gpukmeans:::scratch_default_dir("/dev/shm", file.path(disk, "none")), "/dev/shm")
    expect_identical(gpukmeans:::scratch_default_dir("/dev/shm", "/dev/shm"), "/dev/shm")
  }
  # the default goes where scratch_default_dir() says: its file is never left there
  withr::local_options(gpukmeans.source_memory = 0, gpukmeans.scratch_dir = NULL)
  skip_if_not_installed("Matrix")
  y <- gpukmeans:::read_matrix_source(Matrix::Matrix(sources_data(), sparse = TRUE))
  expect_true(gpukmeans:::gk_is_mapped(y))
})
