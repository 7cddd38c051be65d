#' Simulate Gaussian blobs for clustering
#'
#' Draws `n` points in `d` dimensions from `k` spherical Gaussian clusters
#' ("blobs") of standard deviation `sd` around centers drawn uniformly in the
#' cube `[-spread, spread]^d`.  The clusters have equal sizes (give or take
#' one point) and the points come in random order.  The work is vectorised
#' column by column, so `simulate_blobs(1e7, 16, 256)` takes seconds (and its
#' 1.3 GB).
#'
#' Only R's random number generator is used, so the result is reproducible
#' under [set.seed()].  With `seed` given, the generator is seeded with it
#' for this call only: the state of the generator in the session is restored
#' afterwards.
#'
#' The draws are, in order: the `k * d` centers (`runif()`, column by column),
#' the labels (a random permutation of `rep_len(1:k, n)` by [sample()]) and
#' the `n * d` noise values (`rnorm()`, column by column).
#'
#' @param n number of points (rows), a positive whole number.
#' @param d number of dimensions (columns), a positive whole number.
#' @param k number of clusters, a positive whole number not larger than `n`.
#' @param sd standard deviation of each cluster in every dimension,
#'   non-negative.
#' @param spread half the side of the cube in which the centers are drawn,
#'   non-negative; the default `10 * sd` keeps small numbers of clusters well
#'   apart.
#' @param seed `NULL` (use the session's generator) or a single number passed
#'   to [set.seed()] for this call only (a whole number of at most
#'   `.Machine$integer.max` in absolute value, as set.seed() takes).
#' @return A numeric `n` x `d` matrix with columns named `x1`, `x2`, ..., and
#'   attributes `centers` (the `k` x `d` matrix of true centers) and `labels`
#'   (an integer vector of length `n`: the true cluster of each row).
#' @seealso [boxes], [gpu_kmeans()].
#' @examples
#' x <- simulate_blobs(2000, 2, 4, seed = 1)
#' dim(x)
#' attr(x, "centers")
#' table(attr(x, "labels"))
#' fit <- gpu_kmeans(x, attr(x, "centers"))
#' table(found = fit$cluster, true = attr(x, "labels"))
#' @export
simulate_blobs <- function(n, d, k, sd = 1, spread = 10 * sd, seed = NULL) {
  n <- blob_count(n, "n")
  d <- blob_count(d, "d")
  k <- blob_count(k, "k")
  if (k > n) stop(sprintf("'k' (%d) must not be larger than 'n' (%d)", k, n), call. = FALSE)
  if (as.numeric(n) * d > .Machine$integer.max)
    stop(sprintf("'n' * 'd' = %.0f is too large for an R matrix (at most %d values)",
                 as.numeric(n) * d, .Machine$integer.max), call. = FALSE)
  blob_nonneg(sd, "sd")
  blob_nonneg(spread, "spread")
  if (!is.null(seed)) {
    if (!is.numeric(seed) || length(seed) != 1L || !is.finite(seed) ||
        abs(seed) > .Machine$integer.max)
      stop(sprintf("'seed' must be NULL or a single number between -%d and %d (as set.seed() takes it), not %s",
                   .Machine$integer.max, .Machine$integer.max, describe_value(seed)), call. = FALSE)
    old <- rng_state()
    on.exit(rng_restore(old), add = TRUE)
    set.seed(seed)
  }
  centers <- matrix(stats::runif(k * d, -spread, spread), k, d,
                    dimnames = list(NULL, paste0("x", seq_len(d))))
  labels <- sample(rep_len(seq_len(k), n))
  x <- vapply(seq_len(d), function(j) centers[labels, j] + stats::rnorm(n, 0, sd),
              numeric(n))
  dim(x) <- c(n, d)
  dimnames(x) <- list(NULL, colnames(centers))
  attr(x, "centers") <- centers
  attr(x, "labels") <- labels
  x
}

blob_count <- function(value, arg) {
  if (!is.numeric(value) || length(value) != 1L || !is.finite(value) ||
      value < 1 || value != round(value))
    stop(sprintf("'%s' must be a single positive whole number, not %s", arg, describe_value(value)),
         call. = FALSE)
  if (value > .Machine$integer.max)
    stop(sprintf("'%s' must be at most %d", arg, .Machine$integer.max), call. = FALSE)
  as.integer(value)
}

blob_nonneg <- function(value, arg) {
  if (!is.numeric(value) || length(value) != 1L || !is.finite(value) || value < 0)
    stop(sprintf("'%s' must be a single non-negative finite number, not %s", arg, describe_value(value)),
         call. = FALSE)
  invisible(value)
}
