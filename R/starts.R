# Initial centers, drawn from R's RNG exactly as stats::kmeans draws them, so
# that set.seed(s) gives the same fit with gpu_kmeans() and stats::kmeans().
#
# stats draws start i + 1 only after fitting start i, but fitting uses no
# random numbers, so drawing all starts up front consumes the same stream.

# Returns list(k = , starts = list of k x d matrices, given = TRUE/FALSE).
initial_centers <- function(x, centers, nstart) {
  m <- nrow(x)
  if (length(centers) == 1L) {
    k <- centers
    if (!is.numeric(k) || is.na(k) || !is.finite(k) || k != round(k))
      stop("'centers' must be a whole number (the number of clusters) or a matrix of initial centers",
           call. = FALSE)
    if (k < 1) stop("'centers' must be at least 1", call. = FALSE)
    k <- as.integer(k)
    if (k > m) stop(sprintf("more cluster centers than data points (%d > %d)", k, m),
                    call. = FALSE)
    first <- NULL
    if (nstart == 1L) {
      first <- x[sample.int(m, k), , drop = FALSE]
    }
    if (nstart >= 2L || anyDuplicated(first) > 0L) {
      # Distinct rows in order of first occurrence, as unique(x) gives them.
      keep <- gk_unique_rows(x)
      mm <- length(keep)
      if (mm < k) stop("more cluster centers than distinct data points.", call. = FALSE)
      draw <- function() x[keep[sample.int(mm, k)], , drop = FALSE]
      starts <- lapply(seq_len(nstart), function(i) draw())
    } else {
      starts <- list(first)
    }
    return(list(k = k, starts = starts, given = FALSE))
  }
  if (!(is.matrix(centers) || is.data.frame(centers)) ||
      is.matrix(centers) && !(is.numeric(centers) || is.logical(centers)))
    stop("'centers' must be a number or a numeric matrix of initial centers", call. = FALSE)
  if (is.data.frame(centers)) {
    ok <- vapply(centers, is.numeric, logical(1))
    if (!all(ok)) stop("'centers' must be a number or a numeric matrix of initial centers",
                       call. = FALSE)
  }
  centers <- as.matrix(centers)
  storage.mode(centers) <- "double"
  if (anyDuplicated(centers) > 0L) stop("initial centers are not distinct", call. = FALSE)
  k <- nrow(centers)
  if (k == 0L) stop("'centers' must be at least 1", call. = FALSE)
  if (m < k) stop("more cluster centers than data points", call. = FALSE)
  if (ncol(x) != ncol(centers))
    stop("must have same number of columns in 'x' and 'centers'", call. = FALSE)
  if (any(!is.finite(centers)))
    stop("'centers' must not contain NA, NaN or infinite values", call. = FALSE)
  list(k = k, starts = list(unname(centers)), given = TRUE)
}
