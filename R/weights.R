# Observation weights of gpu_kmeans() (argument `weights`): the checks, the
# random starts of a weighted fit, and the engine that runs it.  What the
# weights mean on every engine: src/weights.h; the CPU engine's sums:
# src/cpu_weights.h.

#' @name gpu_kmeans
#' @rdname gpu_kmeans
#' @section Observation weights:
#' `weights` gives each row of `x` a weight (non-negative and finite, one
#' per row, not all zero); the fit then minimises
#' `sum(weights * rowSums((x - fitted(fit))^2))`.  A center is the weighted
#' mean of its rows; `withinss`, `tot.withinss`, `totss` (about the weighted
#' mean of all rows) and `betweenss` are weighted sums; `size` stays the
#' number of rows in each cluster.  Each row still goes to its nearest center
#' (weights do not change the assignment, so [predict()] and [fitted()] are
#' unchanged), and the fit stops when no row changes cluster, rows of
#' weight 0 included.  A row of weight 0 adds nothing (as if it were
#' dropped) but is given a cluster; a cluster whose rows all have weight 0
#' is empty: its center is `NaN` and it draws the warning of an empty
#' cluster, as in stats.  `nstart > 1` keeps the start with the smallest
#' weighted `tot.withinss`.  `weights = rep(1, nrow(x))` is the fit without
#' weights (identical).
#'
#' \strong{Whole weights are repeated rows.}  With weights 0, 1, 2, ... the
#' fit equals the fit of the rows repeated, `x[rep(seq_len(nrow(x)),
#' weights), ]`, except `size`: in double precision the CPU engine gives,
#' from the same initial centers, the bits of
#' `stats::kmeans(algorithm = "Lloyd")` on the repeated rows (centers,
#' `withinss`, `tot.withinss`, labels, `iter`, warnings) and of its own
#' one-thread fit of them (`totss` and `betweenss` too; stats' `totss`
#' equals it to rounding).  Rows of weight 0 can take one iteration more
#' (they settle their own labels).  It adds each cluster's rows in row
#' order, as stats does, and a row of weight w as w additions in a row
#' (computed exactly in a few steps, not w), whatever the number of threads,
#' so a weighted fit does not depend on the threads either.  Like stats' on
#' the repeated rows, those sums stall once a cluster's sum is so large that
#' adding a row no longer changes it (whole weights of about 2^40 and more):
#' scale such weights down (the fit they define is the same; the CUDA
#' engine's exact sums do not stall, see Engines).
#' Other weights multiply each row's terms (`w * x` rounded, added in the
#' same order); weights whose largest is beyond 2^64 or below 2^-64 are
#' first scaled by a power of two (exact), so that nothing overflows or
#' underflows on the way, and `withinss` and `totss` are reported in the
#' units of the weights given.  In single precision a weighted fit equals
#' the one in double precision to single-precision rounding.
#'
#' \strong{Starts.}  `init = "random"` draws rows of positive weight only:
#' exactly the starts that `stats::kmeans(x[weights > 0, ], centers,
#' nstart)` draws with the same seed (rows with weight 0 never become
#' centers; with all weights positive, the draws of an unweighted fit).  The
#' weights do not change these draws, as stats with `nstart >= 2` draws among
#' the distinct rows of repeated data; so with `nstart >= 2` whole weights
#' give exactly stats' fit of the repeated rows, starts included.
#' `"kmeans++"` draws its first center with probability proportional to the
#' weight and each candidate with probability proportional to `w D^2`
#' (weighted D^2 sampling), with the same uniforms as without weights; with
#' whole weights the first center is the row that the repeated data would
#' give, and later centers are the same rows whenever the sums of `w D^2` are
#' exact (e.g. small whole-number data), otherwise rows drawn with the same
#' probabilities.  `"kmeans||"` samples each row in a round with probability
#' `min(1, 2k w D^2 / sum(w D^2))` and weighs each candidate by the total
#' weight of the rows nearest to it; on repeated rows each copy would be
#' sampled on its own, so it draws other rows than there (with the same
#' expected counts).  Rows of weight 0 are never drawn; fewer than k distinct
#' rows of positive weight is an error.
#'
#' \strong{Engines.}  Both engines fit weights.  The CUDA engine keeps its
#' sums exact 128-bit fixed-point integers: a row of whole weight w adds w
#' times its rounded value (an exact integer product), so that in double
#' precision whole weights give the bits of the CUDA engine's own fit of the
#' repeated rows from the same centers (centers, labels, `withinss`, `iter`),
#' while the total weight is below 2^66; other weights add `w * x` rounded
#' once, at scales set by the largest weight (about 2^-112 of it), so the
#' centers equal the CPU engine's to rounding.  On the CUDA engine `totss`
#' and the rounds of `"kmeans||"` are computed on the host by the CPU
#' engine's code (the same values and rows as `backend = "cpu"`),
#' `"kmeans++"` on the device.  Weights are an error of class
#' `gpukmeans_unsupported` with `comm` (MPI ranks) and with
#' `distance = "cosine"`, not supported yet.  `algorithm = "Hartigan-Wong"`
#' and `"MacQueen"` (stats' own code) take no weights.
#'
#' @param weights `NULL` (every row weighs 1), or the observation weights: a
#'   numeric vector of non-negative, finite numbers, one per row of `x`, not
#'   all zero.  See Observation weights.
#' @examples
#'
#' # observation weights: whole weights are repeated rows
#' w <- rep(1:3, length.out = nrow(faithful))
#' set.seed(3); a <- gpu_kmeans(faithful, 2, nstart = 2, weights = w)
#' set.seed(3); b <- kmeans(faithful[rep(seq_len(nrow(faithful)), w), ], 2,
#'                          nstart = 2, iter.max = 100, algorithm = "Lloyd")
#' identical(unname(a$centers), unname(b$centers))
#' c(a$tot.withinss, b$tot.withinss)
NULL

# NULL (no weights, or every weight 1: the unweighted fit), or the weights
# as a double vector, checked: numeric, one per row, finite, >= 0, not all 0.
# Weights whose largest is beyond 2^64 or below 2^-64 are scaled by a power
# of two (exact) into [0.5, 1), so that w x, w D^2 and their sums neither
# overflow nor lose bits as subnormal numbers; attr(w, "scale") is the
# factor that brings withinss and totss back (weighted_sums_unscaled()).
# Whole weights up to 2^53 are never scaled (they are repeated rows).
check_weights <- function(weights, n) {
  if (is.null(weights)) return(NULL)
  if (!is.numeric(weights) || is.factor(weights) ||
      (!is.null(dim(weights)) && !(length(dim(weights)) == 2L && ncol(weights) == 1L)))
    stop("'weights' must be a numeric vector (one weight per row of 'x'), not ",
         describe_type(weights), call. = FALSE)
  if (length(weights) != n)
    stop(sprintf("'weights' must have one value per row of 'x' (%d), not %d", n, length(weights)),
         call. = FALSE)
  w <- as.double(weights)
  at <- function(bad) {
    i <- which(bad)[1L]
    sprintf("%s at position %d%s", describe_value(w[i]), i,
            if (sum(bad) > 1L) sprintf(", and %d more", sum(bad) - 1L) else "")
  }
  if (anyNA(w)) stop("'weights' must not contain NA or NaN (found ", at(is.na(w)), ")", call. = FALSE)
  if (any(is.infinite(w))) stop("'weights' must be finite (found ", at(is.infinite(w)), ")", call. = FALSE)
  if (any(w < 0)) stop("'weights' must be non-negative (found ", at(w < 0), ")", call. = FALSE)
  if (!any(w > 0)) stop("'weights' must not all be zero: at least one row needs a positive weight", call. = FALSE)
  if (all(w == 1)) return(NULL)
  top <- max(w)
  if (top > 2^64 || top < 2^-64) {
    e <- ceiling(log2(top))  # |e| <= 1075: two factors, each a normal power of two
    h <- e %/% 2
    w <- w * 2^-h * 2^-(e - h)
    attr(w, "scale") <- 2^e  # (a weight below 2^-1074 times the largest becomes 0)
  }
  w
}

# The fit's sums of squares in the units of the weights as given (a fit of
# scaled weights has them scaled; a power of two: exact, or Inf where the
# true value is beyond double precision).
weighted_sums_unscaled <- function(z, w) {
  s <- attr(w, "scale")
  if (is.null(s)) return(z)
  z$withinss <- z$withinss * s
  z$totss <- z$totss * s
  z$start_tot_withinss <- z$start_tot_withinss * s
  z
}

# The starts of a fit (as initial_centers()), with weights w (or NULL: the
# unweighted starts).  init = "random" draws what stats::kmeans(x[w > 0, ],
# centers, nstart) draws, without copying x for nstart = 1; seeded starts
# sample by weight in the engine (src/init_driver.cpp).
weighted_initial_centers <- function(x, centers, nstart, init, w) {
  if (is.null(w)) return(initial_centers(x, centers, nstart, init))
  centers <- as_centers(centers)
  pos <- which(w > 0)
  m <- length(pos)
  if (length(centers) == 1L && as.vector(centers) >= m + 1)
    stop(sprintf("more cluster centers than rows with positive weight (%s > %d)",
                 format(floor(as.vector(centers)), big.mark = ",", scientific = FALSE), m), call. = FALSE)
  if (length(centers) != 1L || init != "random" || m == nrow(x))
    return(initial_centers(x, centers, nstart, init))
  # initial_centers() on x[pos, ], with the rows of x.
  size <- as.vector(centers)
  k <- check_k(size, m)
  first <- NULL
  if (nstart == 1L) first <- x[pos[sample.int(m, size)], , drop = FALSE]
  if (nstart >= 2L || anyDuplicated(first) > 0L) {
    keep <- pos[gk_unique_rows(x[pos, , drop = FALSE])]
    mm <- length(keep)
    if (mm < size) stop("more cluster centers than distinct data points with positive weight.", call. = FALSE)
    draw <- function() x[keep[sample.int(mm, size)], , drop = FALSE]
    return(list(k = k, starts = start_source(nstart, draw), given = FALSE))
  }
  list(k = k, starts = list(first), given = FALSE)
}

# The engine of a fit (as resolve_backend()) with weights w (or NULL).  An
# engine without weights (none now: gk_cuda_supports_weights_cpp() is TRUE
# since the CUDA engine fits them) is never chosen: "auto" takes the CPU engine, telling once per session
# where a GPU would have run the fit; "cuda" is an error of class
# gpukmeans_unsupported.
# (supports and gpu_reason are for the tests.)
weighted_backend <- function(backend, device, work, w, supports = gk_cuda_supports_weights_cpp(),
                             gpu_reason = function() cuda_unavailable_reason(device)) {
  check_backend(backend)
  if (is.null(w) || backend == "cpu" || supports)
    return(resolve_backend(backend, device, work))
  if (backend == "cuda")
    engine_error("unsupported", paste0(
      "backend = \"cuda\" cannot fit observation weights: the CUDA engine does not support 'weights' yet; ",
      "use backend = \"cpu\" (or \"auto\", which runs weighted fits on the CPU engine)"))
  if (work >= gpu_min_work() && !isTRUE(.gk_state$weights_told) && is.null(gpu_reason())) {
    .gk_state$weights_told <- TRUE
    msg <- "gpukmeans: weighted fits run on the CPU engine (the CUDA engine does not support 'weights' yet).\n(This message is shown once per session; set backend = \"cpu\" to silence it.)"
    message(structure(class = c("gpukmeans_fallback", "message", "condition"),
                      list(message = paste0(msg, "\n"), call = NULL)))
  }
  "cpu"
}

# gpu_kmeans(comm =, weights =): the fit over MPI ranks has no weights yet
# (a classed error, never weights silently ignored).
weights_with_comm <- function() {
  engine_error("unsupported", "'weights' are not supported with 'comm' (MPI ranks) yet: fit without 'comm'")
}

# gpu_kmeans(distance = "cosine", weights =): spherical k-means has no
# weights yet (a classed error, never weights silently ignored).
weights_with_cosine <- function() {
  engine_error("unsupported", "'weights' are not supported with distance = \"cosine\" (spherical k-means) yet")
}

# As gk_init_rows() (R/starts.R), with observation weights: the rows that a
# weighted init chooses, per start.  Internal (tests).
gk_init_rows_weighted <- function(x, k, init = c("kmeans++", "kmeans||", "random"), weights = NULL,
                                  nstart = 1L) {
  init <- choose_one(init, c("kmeans++", "kmeans||", "random"), "init")
  x <- as_data_matrix(x)
  w <- check_weights(weights, nrow(x))
  starts <- weighted_initial_centers(x, k, nstart, init, w)$starts
  z <- gk_fit_cpp(x, starts, 1L, FALSE, "cpu", cpu_threads(as.numeric(nrow(x)) * k * ncol(x)), 0L,
                  FALSE, NULL, Inf, cuda_options(), weights = w)
  z$start_init_rows
}
