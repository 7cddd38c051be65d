#' K-means clustering on the GPU, a drop-in for stats::kmeans
#'
#' `gpu_kmeans()` runs Lloyd's algorithm on an NVIDIA GPU through CUDA, or on
#' a multi-threaded CPU engine where there is no GPU, and returns an object of
#' class `c("gpu_kmeans", "kmeans")` that every tool made for
#' [stats::kmeans()] fits accepts (`print`, `fitted`, broom's `tidy`/`glance`/
#' `augment`, factoextra, clue).
#'
#' @section Compatibility with stats::kmeans:
#' In double precision the result is that of
#' `stats::kmeans(x, centers, iter.max, nstart, algorithm = "Lloyd")`: the same
#' cluster labels, the same `iter`, `size` and `ifault`, the same warnings
#' ("did not converge in N iterations", "empty cluster: try a better set of
#' initial centers") and centers equal up to rounding (the CPU engine with one
#' thread is bitwise identical).  The rules are those of stats' C code: each
#' point goes to the nearest center (squared Euclidean distance, ties to the
#' lowest index), the loop stops when no point changes cluster, and an empty
#' cluster keeps a `NaN` center.  As in stats, `k = 1` reports `iter = 1`.
#'
#' Random starts use R's random number generator exactly as stats does
#' (`sample.int()` on the rows, on the distinct rows when `nstart >= 2` or
#' when the drawn centers are not distinct), so `set.seed(s)` before
#' `gpu_kmeans(x, k)` and before `kmeans(x, k, algorithm = "Lloyd")` gives the
#' same fit and leaves the generator in the same state.
#'
#' @section Initialisation:
#' When `centers` is a number, `init` chooses how each start's initial centers
#' are found (a matrix of centers is always used as given).
#'
#' `"random"` (the default): k rows at random, drawn exactly as
#'   [stats::kmeans()] draws them.  Prefer it for parity with stats: same
#'   seed, same fit.
#'
#' `"kmeans++"`: greedy k-means++ (Arthur and Vassilvitskii 2007): the first
#'   center is a random row, each further one the best, by the resulting
#'   potential, of `2 + floor(log(k))` rows drawn with probability
#'   proportional to their squared distance to the nearest chosen center
#'   (D^2 sampling).  Costs about `k * (2 + log(k))` passes over the data and
#'   usually gives a much better fit than random starts, with fewer
#'   iterations and less need for `nstart > 1`.  Prefer it for quality.
#'
#' `"kmeans||"`: scalable k-means++ (Bahmani et al. 2012): 5 rounds (more
#'   if needed to have k distinct candidates) in which every row is sampled
#'   independently with probability `min(1, 2k D^2 / potential)`, then the
#'   candidates, weighted by the rows nearest to them, are reduced to k
#'   centers by weighted greedy k-means++.  About as good as k-means++ with a
#'   handful of passes over the data instead of k: prefer it for large n and
#'   large k.
#'
#' Both draw their random numbers from R's generator (k-means++: the
#' uniforms themselves; k-means||: a 64-bit seed from two [runif()] draws
#' for a counter-based generator), start by start, so `set.seed()` makes the
#' fit reproducible, and in double precision the CPU and CUDA engines choose
#' the same rows (sums are taken in a fixed order on both).  Neither
#' consumes the random numbers that stats would, so they do not reproduce
#' [stats::kmeans()] fits.  A row that coincides with a chosen center has
#' probability 0, so duplicate rows never give duplicate centers; with fewer
#' than k distinct rows the fit stops with an error, as in stats.
#' `attr(fit, "timing")[["init"]]` is the time spent choosing centers.
#'
#' @section Backends:
#' `backend = "auto"` (the default, or `options(gpukmeans.backend =)`) uses
#' the CUDA engine when the package was built with CUDA and a usable device is
#' present, and otherwise the CPU engine, saying so once per session with a
#' message of class `gpukmeans_fallback` (silence it with
#' [suppressMessages()] or by choosing `backend = "cpu"`).  `backend = "cuda"`
#' is an error when no GPU can be used, with the reason.  [gpukmeans_info()]
#' shows what was built and which devices are visible.
#'
#' The CPU engine uses all cores unless `options(gpukmeans.threads = n)` says
#' otherwise (at most 2 under `R CMD check`).  With more than one thread the
#' partial sums are combined in a fixed order, so results are reproducible for
#' a given number of threads and differ from stats only by rounding.
#'
#' @section Precision:
#' `precision = "double"` (default) is exact as described above.
#' `precision = "single"` stores the data in single precision and computes
#' distances in single precision (sums are still accumulated in double): about
#' twice as fast on the GPU and half the memory, with labels that can differ
#' from double precision for points almost equidistant from two centers.
#'
#' @section Determinism:
#' Both engines give bitwise-identical results when a fit is repeated on the
#' same machine (the CPU engine for a given number of threads).  The CUDA
#' engine adds cluster sums as fixed-point integers (2^-60 of each column's
#' range), so the order in which the GPU adds them cannot change the result;
#' this costs nothing measurable, so there is no faster non-deterministic mode.
#'
#' @section Timing:
#' `attr(fit, "timing")` is a named vector of seconds: `compute` (all
#' iterations; on the GPU measured with CUDA events), `total` (the whole call,
#' from R) and, for the CUDA engine, `transfer_to_device` and
#' `transfer_to_host`, and `init` (the time spent finding initial centers
#' with `init = "kmeans++"` or `"kmeans||"`, summed over starts; 0 otherwise).  `attr(fit, "backend")` is `"cpu"` or `"cuda"` and
#' `attr(fit, "device")` names the card (or the CPU threads).
#'
#' @section Progress and interrupts:
#' `trace = TRUE` prints one line per iteration: the iteration, the number of
#' points that changed cluster and tot.withinss.  A fit that runs for more
#' than two seconds shows a progress bar (`options(gpukmeans.progress =
#' FALSE)` never shows one, `TRUE` always; `options(gpukmeans.progress_after =
#' s)` changes the delay).  Ctrl-C stops a fit between iterations; device
#' memory is released.
#'
#' @param x numeric matrix of data, or an object that can be coerced to one
#'   (a data frame of numeric columns, a numeric vector for 1-D data, an
#'   integer matrix).  No `NA`, `NaN` or infinite values.
#' @param centers either the number of clusters k, or a matrix (or data frame)
#'   of k distinct initial centers with as many columns as `x`.  As in stats, a
#'   single number is always k.
#' @param iter.max the maximum number of iterations.
#' @param nstart if `centers` is a number, how many random sets of centers to
#'   try; the fit with the smallest `tot.withinss` is returned.
#' @param algorithm `"Lloyd"` or its synonym `"Forgy"`.
#' @param precision `"double"` (exact) or `"single"` (faster, see Precision).
#' @param backend `"auto"`, `"cuda"` or `"cpu"`; see Backends.
#' @param trace logical: print one line per iteration.
#' @param device the CUDA device to use (an ordinal as listed by
#'   [gpukmeans_info()]); default `getOption("gpukmeans.device", 0)`.
#' @param init how to choose the initial centers when `centers` is a number:
#'   `"random"` (as stats), `"kmeans++"` or `"kmeans||"`; see Initialisation.
#' @param ... reserved; unknown arguments are an error.
#'
#' @references
#' Arthur, D. and Vassilvitskii, S. (2007) k-means++: the advantages of
#' careful seeding.  \emph{Proceedings of the 18th ACM-SIAM Symposium on
#' Discrete Algorithms}, 1027--1035.
#'
#' Bahmani, B., Moseley, B., Vattani, A., Kumar, R. and Vassilvitskii, S.
#' (2012) Scalable k-means++.  \emph{Proceedings of the VLDB Endowment}
#' \bold{5}(7), 622--633.
#'
#' @return An object of class `c("gpu_kmeans", "kmeans")`: a list with
#'   components `cluster`, `centers`, `totss`, `withinss`, `tot.withinss`,
#'   `betweenss`, `size`, `iter` and `ifault` as documented in
#'   [stats::kmeans()], and attributes `backend`, `device`, `timing` and, when
#'   `nstart > 1`, `start_tot_withinss` (the tot.withinss of every start).
#'
#' @seealso [stats::kmeans()], [predict.gpu_kmeans()], [gpukmeans_info()].
#' @examples
#' fit <- gpu_kmeans(faithful, centers = 2)
#' fit
#' attr(fit, "timing")
#'
#' # identical to stats::kmeans with the same seed
#' set.seed(1); a <- gpu_kmeans(iris[, 1:4], 3, nstart = 5)
#' set.seed(1); b <- kmeans(iris[, 1:4], 3, nstart = 5, algorithm = "Lloyd")
#' all.equal(a$centers, b$centers)
#' identical(a$cluster, b$cluster)
#'
#' # k-means++ / k-means|| starts: reproducible with set.seed()
#' set.seed(2); pp <- gpu_kmeans(iris[, 1:4], 3, init = "kmeans++")
#' set.seed(2); par <- gpu_kmeans(iris[, 1:4], 3, init = "kmeans||")
#' c(pp$tot.withinss, par$tot.withinss)
#' @export
gpu_kmeans <- function(x, centers, iter.max = 10L, nstart = 1L,
                       algorithm = c("Lloyd", "Forgy"),
                       precision = c("double", "single"),
                       backend = getOption("gpukmeans.backend", "auto"),
                       trace = FALSE,
                       device = getOption("gpukmeans.device", 0L),
                       init = c("random", "kmeans++", "kmeans||"), ...) {
  t_begin <- Sys.time()
  extra <- names(substitute(list(...)))[-1L]
  if (length(extra)) {
    shown <- ifelse(is.null(extra) | extra == "", "(unnamed)", extra)
    stop(sprintf("unknown argument%s: %s", if (length(shown) > 1L) "s" else "",
                 paste(shown, collapse = ", ")), call. = FALSE)
  }
  if (missing(centers)) stop("'centers' must be a number or a matrix", call. = FALSE)
  algorithm <- match.arg(algorithm)
  init <- match.arg(init)
  precision <- match.arg(precision)
  x <- as_data_matrix(x)
  nstart <- check_count(nstart, "nstart")
  if (!is.numeric(iter.max) || length(iter.max) != 1L || is.na(iter.max) || iter.max < 1)
    stop("'iter.max' must be positive", call. = FALSE)
  iter.max <- as.integer(iter.max)
  trace <- isTRUE(trace) || (is.numeric(trace) && length(trace) == 1L && isTRUE(trace > 0))
  device <- check_device(device)
  engine <- resolve_backend(backend, device)

  init <- initial_centers(x, centers, nstart, init)
  k <- init$k
  # stats runs MacQueen's algorithm for k = 1: one assignment and one update,
  # reported as iteration 1 and never "not converged".
  engine_iter <- if (k == 1L) 2L else iter.max

  progress <- new_progress(iter.max, length(init$starts))
  on.exit(progress$done(), add = TRUE)
  z <- gk_fit_cpp(x, init$starts, engine_iter, precision == "single", engine,
                  cpu_threads(), device, trace, progress$update, progress$after, cuda_tuning())
  if (k == 1L) z$iter <- z$start_iter[] <- 1L

  # The warnings of stats' do_one(), start by start.
  ifault <- NULL
  for (s in seq_along(init$starts)) {
    if (z$start_empty[s]) warning("empty cluster: try a better set of initial centers", call. = FALSE)
    if (z$start_iter[s] > iter.max) {
      warning(sprintf(ngettext(iter.max, "did not converge in %d iteration",
                               "did not converge in %d iterations"), iter.max),
              call. = FALSE, domain = NA)
      if (s == z$best_start) ifault <- 2L
    }
    if (z$start_empty[s]) warning("empty cluster: try a better set of initial centers", call. = FALSE)
  }
  new_gpu_kmeans(x, z, k, ifault, engine, nstart, t_begin)
}
