# Initial centers, drawn from R's RNG exactly as stats::kmeans draws them, so
# that set.seed(s) gives the same fit with gpu_kmeans() and stats::kmeans().
#
# stats draws start i + 1 only after fitting start i, but fitting uses no
# random numbers, so drawing all starts up front consumes the same stream.

# Returns list(k = , starts = list of k x d matrices, given = TRUE/FALSE).
# With init = "kmeans++" or "kmeans||" (and centers a number) the starts are
# init specs instead, which the engine turns into centers (see
# init_specs()); a matrix of centers always wins.
initial_centers <- function(x, centers, nstart, init = "random") {
  m <- nrow(x)
  if (length(centers) == 1L) {
    k <- centers
    if (!is.numeric(k) && !is.logical(k))
      stop("'centers' must be a number or a numeric matrix of initial centers", call. = FALSE)
    if (is.na(k) || !is.finite(k) || k != round(k))
      stop("'centers' must be a whole number (the number of clusters) or a matrix of initial centers",
           call. = FALSE)
    if (k < 1) stop("'centers' must be at least 1", call. = FALSE)
    k <- as.integer(k)
    if (k > m) stop(sprintf("more cluster centers than data points (%d > %d)", k, m),
                    call. = FALSE)
    if (init != "random")
      return(list(k = k, starts = init_specs(init, k, nstart), given = FALSE))
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
  # As in stats, a numeric vector of length > 1 is a one-column matrix.
  if (!(is.data.frame(centers) || (is.atomic(centers) && (is.numeric(centers) || is.logical(centers)))))
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

# The random numbers of k-means++ / k-means|| starts, drawn from R's RNG start
# by start in order (so set.seed() makes a fit reproducible, on either
# engine):
# - "kmeans++": 1 + (k - 1) * L uniforms, L = 2 + floor(log(k)) candidates
#   per greedy step: the first picks the first center, then L per step.
# - "kmeans||": two uniforms, each turned into 32 bits, seeding the
#   counter-based generator of src/parity.h (one Bernoulli draw per point
#   and round is too many to draw in R).
init_specs <- function(init, k, nstart) {
  lapply(seq_len(nstart), function(i) {
    if (init == "kmeans++") {
      L <- gk_greedy_candidates(k)  # 2 + floor(log(k)), defined in src/parity.h
      list(method = "kmeans++", k = k, unif = stats::runif(1L + (k - 1L) * L), L = L)
    } else {
      list(method = "kmeans||", k = k, seed = floor(stats::runif(2L) * 4294967296))
    }
  })
}

# The rows of x that init chooses for each of nstart starts (a list of
# integer vectors), without Lloyd iterations to speak of.  Internal: used by
# the tests to compare the engines' initialisations exactly.
#   tuning: the CUDA engine's kernel choices, c(assign_kernel, init_filter,
#   sample_room, bounds) as src/engine.h's CudaTuning (integer(0): the defaults).
gk_init_rows <- function(x, k, init = c("kmeans++", "kmeans||"), nstart = 1L,
                         backend = "cpu", precision = c("double", "single"),
                         device = getOption("gpukmeans.device", 0L), tuning = integer(0)) {
  init <- match.arg(init)
  precision <- match.arg(precision)
  x <- as_data_matrix(x)
  engine <- resolve_backend(backend, check_device(device))
  starts <- initial_centers(x, k, nstart, init)$starts
  z <- gk_fit_cpp(x, starts, 1L, precision == "single", engine, cpu_threads(), device,
                  FALSE, NULL, Inf, as.integer(tuning))
  z$start_init_rows
}
