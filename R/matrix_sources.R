# Matrices that are not base R matrices: the dense and sparse classes of
# package Matrix, bigmemory's big.matrix (in memory or file-backed) and
# DelayedArray matrices (HDF5Array and others).  stats::kmeans() takes them
# through as.matrix(); here they are read in blocks of rows into one double
# matrix, so that the peak is that matrix and one block rather than two
# dense copies (and a file-backed source is read once, in order).  The
# engines then read that matrix as any other.
#
# Where that matrix would take more than options(gpukmeans.source_memory)
# bytes (default 1 GiB), its values live in a scratch file instead
# (src/mapped_matrix.cpp, in options(gpukmeans.scratch_dir), default
# tempdir(), or /var/tmp where tempdir() is a tmpfs): a shared mapping of
# an unlinked file, which the kernel may write out and drop, so that the
# resident memory of reading a large source is about one block (the page
# cache holds what the engines read again).
# A double big.matrix that lives in a file or in shared memory is not read
# at all: its file is mapped into memory as a double matrix, so that the
# engines read its values in place, with no copy.

matrix_source_classes <- c("Matrix", "big.matrix", "DelayedArray")

# Whether x is one of them (S4 objects of those classes or their subclasses).
is_matrix_source <- function(x) {
  isS4(x) && any(vapply(matrix_source_classes, function(cl) methods::is(x, cl), logical(1)))
}

# x (a matrix source) as a double matrix with as.matrix(x)'s dimnames, read
# `block_rows` rows at a time (default: about 32 MiB of doubles a block; a
# dgCMatrix, with block_rows NULL, in one pass over its nonzero values).
# NULL when a block is not numeric (the caller says so).
read_matrix_source <- function(x, block_rows = NULL) {
  if (is.null(block_rows) && methods::is(x, "big.matrix")) {
    mapped <- map_big_matrix(x)
    if (!is.null(mapped)) return(mapped)
  }
  dims <- dim(x)
  if (length(dims) != 2L) return(NULL)
  n <- dims[1L]
  d <- dims[2L]
  if (n > .Machine$integer.max)
    stop(sprintf("'x' has %s rows: at most %s (R's limit for the rows of a matrix)",
                 format(n, big.mark = ","), format(.Machine$integer.max, big.mark = ",")), call. = FALSE)
  dn <- dimnames(x)
  if (!is.null(dn) && is.null(dn[[1L]]) && is.null(dn[[2L]])) dn <- NULL
  # (filled in place, src/dense_fill.cpp: a scratch mapping or a fresh matrix)
  out <- if (n > 0 && d > 0) scratch_matrix(n, d, dn)
  if (is.null(out)) out <- matrix(0, n, d, dimnames = dn)
  if (n > 0 && d > 0 && is.null(block_rows) && methods::is(x, "dgCMatrix")) {
    gk_fill_csc(out, x@p, x@i, x@x, cpu_threads())  # one pass over the nonzero values, a column a thread
  } else if (n > 0 && d > 0) {
    rows <- block_rows %||% max(1, floor(2^22 / d))
    for (lo in seq(1, n, by = rows)) {
      hi <- min(n, lo + rows - 1)
      b <- as.matrix(x[lo:hi, , drop = FALSE])
      if (!is.numeric(b) && !is.logical(b)) return(NULL)
      gk_write_rows(out, lo, b)
    }
  }
  out
}

# An n x d double matrix of zeros (with those dimnames) in a scratch file,
# where n x d doubles exceed options(gpukmeans.source_memory) bytes; NULL
# where they do not (or where there is no mmap): the caller then uses a
# matrix in memory.
scratch_matrix <- function(n, d, dimnames = NULL) {
  bytes <- as.numeric(n) * d * 8
  if (bytes <= source_memory_limit()) return(NULL)
  dir <- getOption("gpukmeans.scratch_dir") %||% scratch_default_dir()
  if (!is.character(dir) || length(dir) != 1L || is.na(dir) || !dir.exists(dir))
    stop(sprintf("options(gpukmeans.scratch_dir) must name an existing directory, not %s",
                 paste(deparse(dir), collapse = " ")), call. = FALSE)
  tryCatch(gk_scratch_doubles(path.expand(dir), n, d, dimnames), error = function(e) stop(sprintf(
    "'x' (%s x %s, %s of doubles) is larger than options(gpukmeans.source_memory) and goes to a scratch file, but %s; set options(gpukmeans.scratch_dir) to a directory with room, or options(gpukmeans.source_memory = Inf) to read it into memory",
    format(n, big.mark = ","), format(d, big.mark = ","), sprintf("%.3g GiB", bytes / 2^30),
    conditionMessage(e)), call. = FALSE))
}

# The scratch directory when options(gpukmeans.scratch_dir) is unset:
# tempdir(), unless that lives in memory (a tmpfs /tmp, as on Debian 13 or
# Fedora) and `fallback` (/var/tmp, meant for large temporary files) is a
# writable directory on disk.
scratch_default_dir <- function(temp = tempdir(), fallback = "/var/tmp") {
  if (gk_in_memory_fs(temp) && dir.exists(fallback) && file.access(fallback, 2L) == 0L &&
      !gk_in_memory_fs(fallback)) fallback else temp
}

# options(gpukmeans.source_memory): bytes (default 1 GiB; Inf: always in memory).
source_memory_limit <- function() {
  v <- getOption("gpukmeans.source_memory", 2^30)
  if (!is.numeric(v) || length(v) != 1L || is.na(v) || v < 0)
    stop(sprintf("options(gpukmeans.source_memory) must be a number of bytes (>= 0, or Inf), not %s",
                 paste(deparse(v), collapse = " ")), call. = FALSE)
  v
}

# A double big.matrix that is file-backed or in shared memory, whole (not a
# sub.big.matrix) and not separated, as a double matrix mapping its bytes
# (bigmemory stores them as one column-major block: the backing file, or
# the POSIX shared-memory object /dev/shm/<sharedName>); NULL otherwise.
map_big_matrix <- function(x) {
  f <- big_matrix_file(x)
  if (is.null(f)) return(NULL)
  out <- gk_map_doubles(path.expand(f$path), f$n, f$d, 0)
  if (is.null(out)) return(NULL)
  dn <- dimnames(x)
  if (!is.null(dn) && !(is.null(dn[[1L]]) && is.null(dn[[2L]]))) dimnames(out) <- dn
  out
}

# Where such a big.matrix keeps its bytes: list(path, n, d), or NULL (what
# map_big_matrix() maps, told without mapping it: source_view() asks).
big_matrix_file <- function(x) {
  desc <- tryCatch(bigmemory::describe(x)@description, error = function(e) NULL)
  if (is.null(desc) || !identical(desc$type, "double") || !isFALSE(desc$separated)) return(NULL)
  n <- desc$totalRows
  d <- desc$totalCols
  if (!isTRUE(all(desc$rowOffset == c(0, n))) || !isTRUE(all(desc$colOffset == c(0, d)))) return(NULL)
  path <- switch(desc$sharedType %||% "",
                 FileBacked = file.path(desc$dirname, desc$filename),
                 SharedMemory = file.path("/dev/shm", desc$sharedName),
                 NULL)
  if (is.null(path) || !file.exists(path)) return(NULL)
  list(path = path, n = n, d = d)
}

# ---- a large source read block by block by the fit itself ----------------
# A source that read_matrix_source() would put in a scratch file (more than
# options(gpukmeans.source_memory) bytes of doubles; not a big.matrix it can
# map) is instead given to gpu_kmeans() as a view: an environment that
# answers dim(), dimnames() and x[i, ] (rows read from the source), so that
# the random starts take their rows straight from it (and their distinct
# rows, source_unique_rows(), block by block).  A fit on CUDA devices
# then reads the source block by block to the devices (a reader,
# source_reader(); src/source_glue.h; several devices each read their
# rows): no dense copy in host memory or on disk.  The CPU engine reads a
# dgCMatrix's slots again at every pass (src/cpu_stream_engine.cpp), and
# every engine reads a dgeMatrix's values in place (dense_values()).  A fit
# that needs all of another source on the host (the CPU engine, x too large
# for the devices, weights, a sweep's quality passes) reads it once into
# the matrix read_matrix_source() gives (source_dense(), kept in the view).

# The view of x, or NULL where x is no such source.
source_view <- function(x) {
  if (!is_matrix_source(x) || methods::is(x, "big.matrix") && !is.null(big_matrix_file(x))) return(NULL)
  dims <- dim(x)
  if (length(dims) != 2L || as.numeric(dims[1L]) * dims[2L] * 8 <= source_memory_limit()) return(NULL)
  if (dims[1L] > .Machine$integer.max) return(NULL)  # (read_matrix_source() says why)
  dn <- dimnames(x)
  if (!is.null(dn) && is.null(dn[[1L]]) && is.null(dn[[2L]])) dn <- NULL
  view <- new.env(parent = emptyenv())
  view$source <- x
  view$dim <- as.integer(dims)
  view$dimnames <- dn
  view$dense <- NULL
  class(view) <- "gk_source"
  view
}

#' @exportS3Method
dim.gk_source <- function(x) x$dim

#' @exportS3Method
dimnames.gk_source <- function(x) x$dimnames

# Rows i of the source as a double matrix (with their dimnames), then
# columns j, as x[i, j, drop] would give them from the dense matrix.
#' @method [ gk_source
#' @export
`[.gk_source` <- function(x, i, j, ..., drop = TRUE) {
  m <- if (!is.null(x$dense)) x$dense[i, , drop = FALSE] else source_rows(x, i)
  if (missing(j)) m[, , drop = drop] else m[, j, drop = drop]
}

# Rows i (1-based) of the view's source, as a double matrix with their
# dimnames (source_values(): without).
source_rows <- function(view, i) {
  b <- source_values(view, i)
  dn <- view$dimnames
  if (!is.null(dn)) dimnames(b) <- list(dn[[1L]][i], dn[[2L]])
  b
}
source_values <- function(view, i) {
  # (a dgCMatrix's rows from its slots, in C++, src/csc_reader.h: Matrix's
  # row subsetting passes over all its row indices, 0.6 s for a few rows of
  # a 1e7 x 50 dgCMatrix, 10% nonzero; a dgeMatrix's from its values)
  if (read_in_cpp(view$source) && is.numeric(i) && length(i) && !anyNA(i) &&
      all(i >= 1 & i <= view$dim[1L] & i == trunc(i)))
    return(gk_reader_rows(source_reader(view), 0, 0, as.numeric(i)))
  b <- as.matrix(view$source[i, , drop = FALSE])
  problem <- source_type_problem(view$source, b)
  if (!is.null(problem)) stop(problem, call. = FALSE)
  storage.mode(b) <- "double"
  dimnames(b) <- NULL
  b
}

# The problem with a source's values (a message), or NULL: they must be
# numeric (or logical), as its rows `b` (as.matrix()) tell, one row for
# these classes (source_problem(): the view's first).
source_type_problem <- function(src, b, arg = "x") {
  if (is.numeric(b) || is.logical(b)) return(NULL)
  sprintf("'%s' must be a numeric matrix, not a %s of %s values", arg, class(src)[1L], typeof(b))
}
source_problem <- function(view, arg = "x") {
  src <- view$source
  # (a Matrix of doubles, logicals or patterns says so by its class; its
  # first row, read to see, would cost a pass over all of a sparse matrix's
  # row indices: 0.7 s for a 1e7 x 50 dgCMatrix, 10% nonzero)
  if (methods::is(src, "dMatrix") || methods::is(src, "lMatrix") || methods::is(src, "nMatrix")) return(NULL)
  source_type_problem(src, as.matrix(src[1L, , drop = FALSE]), arg)
}

# What an engine takes for x: x itself, or for a source's view, its reader
# (CUDA devices, one or several each taking its rows, read it block by
# block; the CPU engine reads a dgCMatrix's slots again at every pass,
# src/cpu_stream_engine.cpp, unless options(gpukmeans.stream = FALSE)),
# else the dense matrix (source_dense()).  (devices: as engine_devices()
# gives them; the composite of several CPU engines, the tests', also takes
# a reader, each engine copying its rows from it.)  Given a reader,
# gk_fit_cpp() and gk_predict_cpp() answer that the rows would not fit on
# the device, or that the CPU engine cannot stream them, having drawn
# nothing: the caller then gives them the dense matrix.
engine_data <- function(x, engine, devices) {
  if (!inherits(x, "gk_source")) return(x)
  if (!is.null(x$dense)) return(x$dense)
  if (dense_values(x$source)) return(source_reader(x))  # (its values read in place by every engine)
  cpu_streams <- !isFALSE(getOption("gpukmeans.stream", NA))
  if (engine == "cuda" || length(devices) > 1L || cpu_streams) source_reader(x) else source_dense(x)
}

# The view's source read into the matrix read_matrix_source() gives (once:
# kept in the view).
source_dense <- function(view) {
  if (is.null(view$dense)) view$dense <- read_matrix_source(view$source)
  view$dense
}

# The reader of the view's rows that gk_fit_cpp() takes (src/source_glue.h,
# SourceReader): blocks of about 32 MiB of doubles, in row order, read by
# R; a dgCMatrix by C++ from its slots (src/csc_reader.h: row blocks through
# R search every column again for each block, 20 times slower on an H100
# host, 1e7 x 16: tools/cuda-dev/LOG.md); a dgeMatrix's values read in
# place (dense_values()).
source_reader <- function(view) {
  src <- view$source
  r <- list(n = view$dim[1L], d = view$dim[2L], block_rows = source_block_rows(view$dim[2L]),
            block = function(first, rows) source_values(view, seq.int(first, length.out = rows)),
            rows = function(idx) source_values(view, idx))
  if (methods::is(src, "dgCMatrix")) r$csc <- list(p = src@p, i = src@i, x = src@x)
  if (dense_values(src)) r$dense <- src@x
  structure(r, class = "gk_reader")
}

# Whether src is a dgeMatrix: its x slot holds its values as a double
# matrix does (n x d, column-major), which the engines read in place
# (src/source_glue.h): the source itself is the only copy.
dense_values <- function(src) {
  methods::is(src, "dgeMatrix") && is.double(src@x) && length(src@x) == prod(as.numeric(dim(src)))
}

# Whether the reader of src reads it in C++ (a dgCMatrix's slots, a
# dgeMatrix's values), not through R.
read_in_cpp <- function(src) methods::is(src, "dgCMatrix") || dense_values(src)

# The distinct rows of the view (1-based, in order of first occurrence), as
# gk_unique_rows() gives those of the dense matrix: block by block
# (src/distinct_rows.h), or from the dense matrix where it was read.
source_unique_rows <- function(view) {
  threads <- cpu_threads(as.numeric(view$dim[1L]) * view$dim[2L])
  if (!is.null(view$dense)) return(gk_unique_rows(view$dense, threads))
  gk_source_unique_rows(source_reader(view), threads)
}

# The 1-based (column-major) place of the view's first NA, NaN or infinite
# value, or 0: block by block (src/reader_blocks.h; the first in x's order
# may be in any block).
source_first_nonfinite <- function(view) {
  if (!is.null(view$dense)) return(first_nonfinite(view$dense))
  gk_source_first_nonfinite(source_reader(view), cpu_threads(as.numeric(view$dim[1L]) * view$dim[2L]))
}

# The rows of a block of d columns: about 32 MiB of doubles, or
# options(gpukmeans.source_block_rows) (internal: the tests' small blocks).
source_block_rows <- function(d) {
  rows <- getOption("gpukmeans.source_block_rows")
  if (is.null(rows)) return(max(1, floor(2^22 / d)))
  if (!is.numeric(rows) || length(rows) != 1L || is.na(rows) || rows < 1 || rows != round(rows))
    stop("options(gpukmeans.source_block_rows =) must be a whole number of rows >= 1 (or NULL), not ",
         describe_value(rows), call. = FALSE)
  as.numeric(rows)
}
