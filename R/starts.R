# Initial centers, drawn from R's RNG exactly as stats::kmeans draws them, so
# that set.seed(s) gives the same fit with gpu_kmeans() and stats::kmeans().
#
# stats draws start i + 1 only after fitting start i; so do the engines,
# through a start source (start_source()): the first start is drawn at once,
# each later one when the engine asks for it (memory for one start, not
# nstart).
# The checks come in stats' order relative to the draws: those stats makes
# before drawing (k, more centers than points) before, those it makes after
# (more centers than distinct points) after, so that an error leaves the
# generator where stats leaves it.

# Returns list(k = , starts = list of k x d matrices, given = TRUE/FALSE).
# With init = "kmeans++" or "kmeans||" (and centers a number) the starts are
# init specs instead, which the engine turns into centers (see
# init_spec()); a matrix of centers always wins.  n_draw (default nstart)
# is how many starts to draw: 1 where gpu_kmeans() only replays the draws
# stats makes before an error it raises after its first start.
initial_centers <- function(x, centers, nstart, init = "random", n_draw = nstart) {
  m <- nrow(x)
  centers <- as_centers(centers)
  if (length(centers) == 1L) {
    # As in stats, sample.int() gets centers itself (2.5 draws 2 rows, and
    # picks its algorithm from the value as given), k is as.integer(centers).
    size <- as.vector(centers)
    k <- check_k(size, m)
    if (init != "random")
      return(list(k = k, starts = start_source(n_draw, function() init_spec(init, k)), given = FALSE))
    first <- NULL
    if (nstart == 1L) {
      first <- x[sample.int(m, size), , drop = FALSE]
    }
    if (nstart >= 2L || any_duplicated_rows(first)) {
      # Distinct rows in order of first occurrence, as unique(x) gives them
      # (of a large source: block by block, R/matrix_sources.R).
      keep <- if (inherits(x, "gk_source")) source_unique_rows(x)
              else gk_unique_rows(x, cpu_threads(as.numeric(nrow(x)) * ncol(x)))
      mm <- length(keep)
      if (mm < size) stop("more cluster centers than distinct data points.", call. = FALSE)
      draw <- function() x[keep[sample.int(mm, size)], , drop = FALSE]
      starts <- start_source(n_draw, draw)
    } else {
      starts <- list(first)
    }
    return(list(k = k, starts = starts, given = FALSE))
  }
  centers <- check_centers_matrix(centers, m)
  k <- nrow(centers)
  if (ncol(x) != ncol(centers))
    stop("must have same number of columns in 'x' and 'centers'", call. = FALSE)
  list(k = k, starts = list(unname(centers)), given = TRUE)
}

# nstart starts: the first drawn now, the others by draw() when the engine
# asks for them, in order (src/fit_glue.cpp, RStarts).
start_source <- function(nstart, draw) {
  structure(list(count = as.integer(nstart), first = draw(), draw = draw), class = "gk_start_source")
}

# Every start of a start source drawn now, as a list (a sweep over k draws
# each k's starts before the next k's, as consecutive gpu_kmeans() calls do).
start_list <- function(starts) {
  if (!inherits(starts, "gk_start_source")) return(starts)
  c(list(starts$first), lapply(seq_len(starts$count - 1L), function(i) starts$draw()))
}

# How many starts a list of starts or a start source holds.
start_count <- function(starts) {
  if (inherits(starts, "gk_start_source")) starts$count else length(starts)
}

# centers as given, or a data frame of numeric columns as a matrix; anything
# that is neither a number nor a numeric matrix is an error.  As in stats, a
# numeric vector of length > 1 is a one-column matrix of centers, and a
# single number (or 1 x 1 matrix) is the number of clusters.
as_centers <- function(centers) {
  if (is.data.frame(centers)) {
    ok <- vapply(centers, function(col) (is.numeric(col) || is.logical(col)) && !is.factor(col),
                 logical(1))
    if (!all(ok) || !length(ok))
      stop("'centers' must be a number or a numeric matrix of initial centers, not ",
           "a data frame with non-numeric columns", call. = FALSE)
    return(as.matrix(centers))
  }
  if (length(centers) == 1L) {
    if (!is.numeric(centers) || is.factor(centers))
      stop("'centers' must be a number (of clusters) or a numeric matrix of initial centers, not ",
           describe_value(centers), call. = FALSE)
    return(centers)
  }
  if (!is.atomic(centers) || !(is.numeric(centers) || is.logical(centers)) || is.factor(centers))
    stop("'centers' must be a number or a numeric matrix of initial centers, not ",
         describe_type(centers), call. = FALSE)
  if (length(centers) == 0L) stop("'centers' must be at least 1", call. = FALSE)
  centers
}

# The number of clusters from a single number, checked as stats' own
# sample.int(nrow(x), centers) would check it before drawing (but with
# clear messages): a finite number >= 1 and at most the number of rows.
# Fractional values are as.integer()'d, as stats does (2.5 is 2).
check_k <- function(size, m) {
  if (is.na(size))
    stop("'centers' must be a number of clusters or a matrix of initial centers, not ",
         describe_value(size), call. = FALSE)
  if (!is.finite(size))
    stop("'centers' (the number of clusters) must be finite, not ", describe_value(size),
         call. = FALSE)
  if (size < 1) stop("'centers' must be at least 1, not ", describe_value(size), call. = FALSE)
  if (size > m)
    stop(sprintf("more cluster centers than data points (%s > %d)",
                 format(floor(size), big.mark = ",", scientific = FALSE), m), call. = FALSE)
  as.integer(size)
}

# A matrix of initial centers: double, distinct, finite, no more rows than x.
# Whether the double matrix m has a row twice, as anyDuplicated(m) > 0 says.
# Finite rows by the hash table of gk_unique_rows(), which compares values
# by == as duplicated() does for them, instead of anyDuplicated()'s split of
# the matrix into a list of rows (96 -> 10 us at 12 x 2, 45 -> 20 ms at 4096
# x 128 on a 2-core machine); NA and NaN, which == does not compare as
# duplicated() does, take duplicated()'s own way.
any_duplicated_rows <- function(m, finite = all(is.finite(m))) {
  if (finite) length(gk_unique_rows(m)) < nrow(m) else anyDuplicated(m) > 0L
}

check_centers_matrix <- function(centers, m) {
  centers <- as.matrix(centers)
  storage.mode(centers) <- "double"
  finite <- all(is.finite(centers))
  if (any_duplicated_rows(centers, finite)) stop("initial centers are not distinct", call. = FALSE)
  k <- nrow(centers)
  if (k == 0L) stop("'centers' must be at least 1", call. = FALSE)
  if (m < k) stop("more cluster centers than data points", call. = FALSE)
  if (!finite)
    stop("'centers' must not contain NA, NaN or infinite values", call. = FALSE)
  centers
}

# For an error that stats::kmeans() raises only after drawing its first
# random start (data that are not numeric or not finite; an invalid
# iter.max), make the draws stats makes before it, with stats' own code, so
# that the generator is left where stats leaves it.  Returns stats' error
# when those draws fail as stats' do (more centers than distinct points),
# else NULL; any other failure means stats fails before drawing.
stats_draws_before_error <- function(x, centers, nstart) {
  tryCatch(suppressWarnings({
    x <- as.matrix(x)
    m <- as.integer(nrow(x))
    storage.mode(x) <- "double"
    k <- centers
    if (nstart == 1L) centers <- x[sample.int(m, k), , drop = FALSE]
    if (nstart >= 2L || any(duplicated(centers))) {
      cn <- unique(x)
      mm <- nrow(cn)
      if (mm < k) return("more cluster centers than distinct data points.")
      cn[sample.int(mm, k), , drop = FALSE]
    }
    NULL
  }), error = function(e) NULL)
}

# The random numbers of k-means++ / k-means|| starts, drawn from R's RNG start
# by start in order (so set.seed() makes a fit reproducible, on either
# engine):
# - "kmeans++": 1 + (k - 1) * L uniforms, L = 2 + floor(log(k)) candidates
#   per greedy step: the first picks the first center, then L per step.
# - "kmeans||": two uniforms, each turned into 32 bits, seeding the
#   counter-based generator of src/parity.h (one Bernoulli draw per point
#   and round is too many to draw in R).
init_spec <- function(init, k) {
  if (init == "kmeans++") {
    L <- gk_greedy_candidates(k)  # 2 + floor(log(k)), defined in src/parity.h
    list(method = "kmeans++", k = k, unif = stats::runif(1L + (k - 1L) * L), L = L)
  } else {
    list(method = "kmeans||", k = k, seed = floor(stats::runif(2L) * 4294967296))
  }
}

# The rows of x that init chooses for each of nstart starts (a list of
# integer vectors), without Lloyd iterations to speak of.  Internal: used by
# the tests to compare the engines' initialisations exactly.
#   tuning: the CUDA engine's kernel choices, c(assign_kernel, init_filter,
#   sample_room, bounds) as src/engine.h's CudaTuning (integer(0): the defaults).
gk_init_rows <- function(x, k, init = c("kmeans++", "kmeans||"), nstart = 1L,
                         backend = "cpu", precision = c("double", "single"),
                         device = getOption("gpukmeans.device", 0L), tuning = integer(0)) {
  init <- choose_one(init, c("kmeans++", "kmeans||"), "init")
  precision <- choose_one(precision, c("double", "single"), "precision")
  x <- as_data_matrix(x)
  engine <- resolve_backend(backend, check_device(device))
  starts <- initial_centers(x, k, nstart, init)$starts
  z <- gk_fit_cpp(x, starts, 1L, precision == "single", engine,
                  cpu_threads(as.numeric(nrow(x)) * k * ncol(x)), device,
                  FALSE, NULL, Inf, cuda_options(if (length(tuning)) tuning))
  z$start_init_rows
}
