# Matrices that are not base R matrices: the dense and sparse classes of
# package Matrix, bigmemory's big.matrix (in memory or file-backed) and
# DelayedArray matrices (HDF5Array and others).  stats::kmeans() takes them
# through as.matrix(); here they are read in blocks of rows into one double
# matrix, so that the peak is that matrix and one block rather than two
# dense copies (and a file-backed source is read once, in order).  The
# engines then read that matrix as any other.  A double big.matrix that
# lives in a file or in shared memory is not read at all: its file is
# mapped into memory as a double matrix (src/mapped_matrix.cpp), so that
# the engines read its values in place, with no copy.

matrix_source_classes <- c("Matrix", "big.matrix", "DelayedArray")

# Whether x is one of them (S4 objects of those classes or their subclasses).
is_matrix_source <- function(x) {
  isS4(x) && any(vapply(matrix_source_classes, function(cl) methods::is(x, cl), logical(1)))
}

# x (a matrix source) as a double matrix with as.matrix(x)'s dimnames, read
# `block_rows` rows at a time (default: about 32 MiB of doubles a block).
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
  out <- matrix(0, n, d)
  if (n > 0 && d > 0) {
    rows <- block_rows %||% max(1, floor(2^22 / d))
    for (lo in seq(1, n, by = rows)) {
      hi <- min(n, lo + rows - 1)
      b <- as.matrix(x[lo:hi, , drop = FALSE])
      if (!is.numeric(b) && !is.logical(b)) return(NULL)
      out[lo:hi, ] <- b
    }
  }
  dn <- dimnames(x)
  if (!is.null(dn) && !(is.null(dn[[1L]]) && is.null(dn[[2L]]))) dimnames(out) <- dn
  out
}

# A double big.matrix that is file-backed or in shared memory, whole (not a
# sub.big.matrix) and not separated, as a double matrix mapping its bytes
# (bigmemory stores them as one column-major block: the backing file, or
# the POSIX shared-memory object /dev/shm/<sharedName>); NULL otherwise.
map_big_matrix <- function(x) {
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
  out <- gk_map_doubles(path.expand(path), n, d, 0)
  if (is.null(out)) return(NULL)
  dn <- dimnames(x)
  if (!is.null(dn) && !(is.null(dn[[1L]]) && is.null(dn[[2L]]))) dimnames(out) <- dn
  out
}
