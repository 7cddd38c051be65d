#' Choose k: k-means fits over a range of k with quality indices
#'
#' `gpu_kmeans_sweep()` fits k-means for every k in `k` (with `nstart` starts
#' each) in one call, with the data taken once (uploaded once to the GPU),
#' and scores each fit with the indices used to choose k: the elbow
#' (`tot.withinss`), the share of the variance explained, the average
#' silhouette width, the Calinski-Harabasz index and the Davies-Bouldin
#' index.  `plot()` draws the elbow and silhouette panels; the fits are kept,
#' so the chosen one is at hand (`sweep$fits[["4"]]`).
#'
#' @section The fits and random numbers:
#' The k are taken in increasing order.  For each k, the starts are drawn from
#' R's random number generator exactly as [gpu_kmeans()] draws them, so
#' `set.seed(s); sw <- gpu_kmeans_sweep(x, k = 2:5, ...)` gives in `sw$fits`
#' the fits that `set.seed(s)` followed by `gpu_kmeans(x, 2, ...)`,
#' `gpu_kmeans(x, 3, ...)`, ... `gpu_kmeans(x, 5, ...)` give (same `nstart`,
#' `iter.max`, `init`, `precision`; only the timing attributes differ).  The
#' sampled silhouette then draws its rows, once, after all the starts: the
#' same rows for every k.  Warnings of the fits (no convergence, an empty
#' cluster) are those of [gpu_kmeans()], prefixed with the k, once per k.
#'
#' The default `init = "kmeans++"` and `iter.max = 100` differ from
#' [gpu_kmeans()]'s (`"random"`, 10): to compare values of k, each fit
#' should be a good, converged one.
#'
#' @section The indices:
#' With n rows, k' non-empty clusters (an empty cluster counts for nothing),
#' W = `tot.withinss`, B = `betweenss`:
#' \describe{
#'   \item{`tot.withinss`}{the elbow: look for the k after which it stops
#'     falling fast.}
#'   \item{`betweenss_totss`}{B / `totss`, the share of the variance
#'     explained.}
#'   \item{`silhouette`}{the average silhouette width (see
#'     [gpu_silhouette()]; larger is better; `silhouette_method` says which
#'     one was computed).}
#'   \item{`calinski_harabasz`}{(B / (k' - 1)) / (W / (n - k')), as
#'     `fpc::calinhara()` (larger is better).}
#'   \item{`davies_bouldin`}{the mean over clusters i of
#'     max over j != i of (S_i + S_j) / M_ij, S_i the mean Euclidean distance
#'     of cluster i's rows to its center and M_ij the distance between the
#'     centers (Davies and Bouldin 1979; `clusterSim::index.DB(x, cl,
#'     centrotypes = "centroids", p = 2, q = 1)`, scikit-learn's
#'     `davies_bouldin_score`; smaller is better).}
#' }
#' All three need 2 <= k' < n (as [cluster::silhouette()]) and are `NA`
#' otherwise (k = 1, or every row a cluster of its own).  They are computed by the engine that made
#' the fits, in double precision, from the data as the engine holds it (in
#' single precision: the float copy).  In double precision the CPU and CUDA
#' engines give the same bits.
#'
#' @section Which silhouette:
#' `silhouette = "auto"` takes the exact one when it costs at most about a
#' second per k, counting n^2 (d + 8) operations (a pair of rows costs its d
#' coordinates and a square root): at most 3e12 on a GPU, 2e10 on the CPU
#' engine, about n = 350,000 or n = 29,000 rows of 16 columns; else the
#' sampled one when `silhouette_sample` rows cost that much
#' (`silhouette_sample * n * (d + 8)` within the same budget), else the
#' simplified one.  See [gpu_silhouette()]
#' for the three methods; `"none"` computes no silhouette.
#'
#' @inheritParams gpu_kmeans
#' @param device the CUDA device to use (one ordinal as listed by
#'   [gpukmeans_info()]; the sweep runs on one device); default
#'   `getOption("gpukmeans.device", 0)` (of several, or `"all"`, the first).
#' @param k the numbers of clusters to fit: distinct whole numbers between 1
#'   and the number of rows (fitted in increasing order).
#' @param nstart starts per k; the best (least `tot.withinss`) is kept.
#' @param iter.max the maximum number of iterations of each fit.
#' @param init how the starts are chosen: `"kmeans++"` (default),
#'   `"random"` (as stats) or `"kmeans||"`; see [gpu_kmeans()].
#' @param silhouette `"auto"`, `"exact"`, `"sampled"`, `"simplified"` or
#'   `"none"`; see Which silhouette.
#' @param silhouette_sample rows whose exact widths are averaged with the
#'   sampled silhouette.
#' @param ... reserved; unknown arguments are an error.
#' @return An object of class `gpu_kmeans_sweep`: a list with
#'   \describe{
#'     \item{`table`}{a data frame with one row per k and columns `k`,
#'       `tot.withinss`, `betweenss_totss`, `silhouette`,
#'       `calinski_harabasz`, `davies_bouldin` and `silhouette_method`
#'       (`as.data.frame()` returns it).}
#'     \item{`fits`}{the [gpu_kmeans()] fits, named by k.}
#'     \item{`silhouette_rows`}{the sampled rows (sampled silhouette), else
#'       `NULL`.}
#'     \item{`timing`}{a data frame of seconds per k: `fit` (the fits of
#'       the k's starts) and `quality` (the indices).}
#'   }
#'   and `backend`, `device`, `n`, `d`, `nstart`, `init`, `call`.
#' @references
#' Calinski, T. and Harabasz, J. (1974) A dendrite method for cluster
#' analysis.  \emph{Communications in Statistics} \bold{3}(1), 1--27.
#'
#' Davies, D. L. and Bouldin, D. W. (1979) A cluster separation measure.
#' \emph{IEEE Transactions on Pattern Analysis and Machine Intelligence}
#' \bold{1}(2), 224--227.
#' @seealso [plot.gpu_kmeans_sweep()], [gpu_silhouette()], [gpu_kmeans()].
#' @examples
#' x <- scale(USArrests)
#' set.seed(1)
#' sw <- gpu_kmeans_sweep(x, k = 2:8, nstart = 5)
#' sw
#' plot(sw)
#' best <- sw$fits[[as.character(sw$table$k[which.max(sw$table$silhouette)])]]
#' table(best$cluster)
#'
#' # each fit is the one gpu_kmeans() gives from the same random numbers
#' set.seed(1)
#' f2 <- gpu_kmeans(x, 2, nstart = 5, iter.max = 100, init = "kmeans++")
#' identical(f2$cluster, sw$fits[["2"]]$cluster)
#' @export
gpu_kmeans_sweep <- function(x, k = 2:10, nstart = 1L, iter.max = 100L,
                             init = c("kmeans++", "random", "kmeans||"),
                             silhouette = c("auto", "exact", "sampled", "simplified", "none"),
                             silhouette_sample = 10000L,
                             precision = c("double", "single"),
                             backend = getOption("gpukmeans.backend", "auto"),
                             device = getOption("gpukmeans.device", 0L), ...) {
  cll <- match.call()
  t_begin <- Sys.time()
  extra <- names(substitute(list(...)))[-1L]
  if (length(extra)) {
    shown <- ifelse(is.null(extra) | extra == "", "(unnamed)", extra)
    stop(sprintf("unknown argument%s: %s", if (length(shown) > 1L) "s" else "",
                 paste(shown, collapse = ", ")), call. = FALSE)
  }
  init <- match.arg(init)
  silhouette <- match.arg(silhouette)
  precision <- match.arg(precision)
  # (a large matrix source stays where it is, as in gpu_kmeans(): its view,
  # R/matrix_sources.R; its values are checked by the engine)
  view <- source_view(x)
  if (is.null(view)) x <- as_data_matrix(x)
  else if (!is.null(problem <- source_problem(view))) stop(problem, call. = FALSE)
  else x <- view
  n <- nrow(x)
  d <- ncol(x)
  k <- check_sweep_k(k, n)
  nstart <- check_count(nstart, "nstart")
  if (!is.numeric(iter.max) || length(iter.max) != 1L || is.na(iter.max) || iter.max < 1)
    stop("'iter.max' must be positive", call. = FALSE)
  iter.max <- as.integer(iter.max)
  silhouette_sample <- check_count(silhouette_sample, "silhouette_sample")
  device <- one_device(device, missing(device))
  engine <- resolve_backend(backend, device)
  method <- sweep_silhouette_method(silhouette, n, d, silhouette_sample, engine)

  # The starts, k by k, as gpu_kmeans() draws them; then the sampled rows.
  seed <- rng_state()
  starts <- lapply(k, function(kk) start_list(initial_centers(x, kk, nstart, init)$starts))
  rows <- if (method == "sampled") sort(sample.int(n, silhouette_sample)) else integer(0)
  sil_code <- switch(method, exact = 1L, sampled = 1L, simplified = 2L, none = 0L)
  # stats runs k = 1 as one assignment and one update (see gpu_kmeans()).
  iters <- ifelse(k == 1L, 2L, iter.max)

  progress <- new_sweep_progress(iter.max, rep(k, each = nstart))
  on.exit(progress$done(), add = TRUE)
  # one engine for every k (and the silhouettes): all the threads allowed;
  # a source's view block by block to a CUDA device where its rows fit
  # there, else from memory.  A value of it that is not finite: the error
  # of a matrix, the generator wound back to where it was.
  sweep_on <- function(data) tryCatch(
    gk_sweep_cpp(data, starts, iters, precision == "single", engine, cpu_threads(Inf), device,
                 progress$update, progress$after, sil_code, rows, TRUE, cuda_options(), finite = is.null(view)),
    gpukmeans_nonfinite = function(e) {
      rng_restore(seed)
      stop(nonfinite_problem(x, e$index), call. = FALSE)
    })
  z <- sweep_on(engine_data(x, engine, device))
  if (!is.null(z$not_resident)) z <- sweep_on(source_dense(x))

  fits <- vector("list", length(k))
  rows_tab <- vector("list", length(k))
  timing <- data.frame(k = k, fit = 0, quality = 0)
  for (i in seq_along(k)) {
    zi <- z$fits[[i]]
    if (k[i] == 1L) zi$iter <- zi$start_iter[] <- 1L
    ifault <- sweep_warnings(zi, k[i], iter.max)
    fit <- new_gpu_kmeans(x, zi, k[i], ifault, engine, nstart, Sys.time())
    tm <- attr(fit, "timing")
    tm[["total"]] <- sum(tm[names(tm) != "total"])
    attr(fit, "timing") <- tm
    fits[[i]] <- fit
    q <- z$quality[[i]]
    rows_tab[[i]] <- quality_row(fit, q, n, method)
    timing$fit[i] <- sum(zi$timing[c("compute", "init")])
    timing$quality[i] <- q$seconds
  }
  names(fits) <- as.character(k)
  table <- do.call(rbind, rows_tab)
  rownames(table) <- NULL
  structure(list(table = table, fits = fits,
                 silhouette_rows = if (length(rows)) rows else NULL,
                 timing = timing, backend = engine, device = z$device, n = n, d = d,
                 nstart = nstart, init = init, precision = precision, call = cll,
                 seconds = seconds_since(t_begin)),
            class = "gpu_kmeans_sweep")
}

# Distinct whole numbers in 1..n, sorted.
check_sweep_k <- function(k, n) {
  if (!is.numeric(k) || length(k) < 1L || anyNA(k) || any(!is.finite(k)) || any(k != round(k)))
    stop("'k' must be a vector of whole numbers (the numbers of clusters to fit)", call. = FALSE)
  if (any(k < 1)) stop("'k' must be at least 1", call. = FALSE)
  if (any(k > n))
    stop(sprintf("'k' must be at most the number of rows (%d): %s", n,
                 paste(k[k > n], collapse = ", ")), call. = FALSE)
  if (anyDuplicated(k)) stop("'k' must not repeat a value", call. = FALSE)
  sort(as.integer(k))
}

# The cost of the exact silhouette of m rows against n: m n (d + 8) (a pair
# costs its d coordinates and a square root and an addition worth about 8),
# and the budgets of "auto": about a second per k on each engine (CPU: 2e10
# a second on two cores, inst/bench/results/sweep-cpu-*.txt).
silhouette_cost <- function(m, n, d) as.numeric(m) * as.numeric(n) * (d + 8)
silhouette_budget <- function(engine) if (engine == "cuda") 3e12 else 2e10

sweep_silhouette_method <- function(silhouette, n, d, m, engine) {
  if (silhouette != "auto") return(silhouette)
  budget <- silhouette_budget(engine)
  if (silhouette_cost(n, n, d) <= budget) return("exact")
  if (m < n && silhouette_cost(m, n, d) <= budget) return("sampled")
  "simplified"
}

# The warnings gpu_kmeans() gives for a fit, prefixed with k and given once
# each; returns ifault.
sweep_warnings <- function(z, k, iter.max) {
  msgs <- character(0)
  ifault <- NULL
  for (s in seq_along(z$start_iter)) {
    if (z$start_empty[s]) msgs <- c(msgs, "empty cluster: try a better set of initial centers")
    if (z$start_iter[s] > iter.max) {
      msgs <- c(msgs, sprintf(ngettext(iter.max, "did not converge in %d iteration",
                                       "did not converge in %d iterations"), iter.max))
      if (s == z$best_start) ifault <- 2L
    }
  }
  for (m in unique(msgs)) warning(sprintf("k = %d: %s", k, m), call. = FALSE)
  ifault
}

# One row of the sweep's table from a fit and its quality sums.
quality_row <- function(fit, q, n, method) {
  size <- fit$size
  ne <- size > 0
  kk <- sum(ne)
  W <- fit$tot.withinss
  B <- fit$betweenss
  sil <- if (isTRUE(q$silhouette)) sum(q$width) / sum(q$width_count) else NA_real_
  ch <- if (kk >= 2L && kk < n) (B / (kk - 1)) / (W / (n - kk)) else NA_real_
  db <- NA_real_
  if (kk >= 2L && kk < n && length(q$center_dist) == length(size)) {
    s <- q$center_dist[ne] / size[ne]
    m <- as.matrix(stats::dist(fit$centers[ne, , drop = FALSE]))
    r <- outer(s, s, "+") / m
    diag(r) <- -Inf
    db <- mean(apply(r, 1L, max))
  }
  data.frame(k = nrow(fit$centers), tot.withinss = W,
             betweenss_totss = if (fit$totss > 0) B / fit$totss else NA_real_,
             silhouette = sil, calinski_harabasz = ch, davies_bouldin = db,
             silhouette_method = method, stringsAsFactors = FALSE)
}

# The progress bar of a long sweep (the engines call update() through the
# observer once the sweep has run for `after` seconds): which k, which
# iteration.  ks: the k of each start, in order.
new_sweep_progress <- function(iter.max, ks) {
  mode <- getOption("gpukmeans.progress", NA)
  after <- if (isTRUE(mode)) 0 else if (isFALSE(mode)) Inf else
    getOption("gpukmeans.progress_after", 2)
  if (!is.numeric(after) || length(after) != 1L || is.na(after)) after <- 2
  if (!is.finite(after)) return(list(update = NULL, after = Inf, done = function() invisible()))
  state <- new.env(parent = baseenv())
  update <- function(iter, changed, start) {
    if (is.null(state$bar)) {
      old <- options(cli.progress_show_after = 0)
      on.exit(options(old))
      state$bar <- cli::cli_progress_bar(
        total = length(ks), clear = TRUE, .envir = state,
        format = "gpu_kmeans_sweep {cli::pb_bar} k = {k} ({cli::pb_current}/{cli::pb_total}), iter {iter} | {cli::pb_elapsed}")
    }
    start <- min(max(1L, start), length(ks))
    state$k <- ks[start]
    state$iter <- if (is.na(iter)) "-" else iter
    cli::cli_progress_update(id = state$bar, set = start - 1L, force = TRUE, .envir = state)
    invisible()
  }
  done <- function() {
    if (!is.null(state$bar)) cli::cli_progress_done(id = state$bar, .envir = state)
    invisible()
  }
  list(update = update, after = after, done = done)
}

#' Print, convert and plot a k-means sweep
#'
#' `print()` shows the table of indices per k and, for each index, the k it
#' favours; `as.data.frame()` returns the table; `plot()` draws the elbow
#' (`tot.withinss` against k) and the average silhouette width against k,
#' the best k marked, side by side (base graphics).  For other plots, hand
#' the fits to cluster or factoextra (see the vignette "Choosing k").
#'
#' @param x a `gpu_kmeans_sweep` object.
#' @param which the panels: any of `"elbow"`, `"silhouette"`,
#'   `"calinski_harabasz"`, `"davies_bouldin"` and `"betweenss_totss"`.
#' @param col colour of the lines and points.
#' @param best_col colour of the mark of the best k.
#' @param ... further graphical parameters passed to [plot.default()].
#' @param row.names,optional as in [as.data.frame()] (ignored).
#' @return `print()` and `plot()`: `x`, invisibly; `as.data.frame()`: the
#'   table (a data frame).
#' @examples
#' set.seed(1)
#' sw <- gpu_kmeans_sweep(faithful, k = 1:6, nstart = 3)
#' print(sw)
#' as.data.frame(sw)
#' plot(sw)
#' plot(sw, which = c("calinski_harabasz", "davies_bouldin"))
#' @name plot.gpu_kmeans_sweep
#' @export
plot.gpu_kmeans_sweep <- function(x, which = c("elbow", "silhouette"), col = "#0072B2",
                                  best_col = "#D55E00", ...) {
  panels <- c("elbow", "silhouette", "calinski_harabasz", "davies_bouldin", "betweenss_totss")
  if (!is.character(which) || length(which) < 1L || anyNA(which) || !all(which %in% panels))
    stop(sprintf("'which' must name panels among %s", paste(sprintf("\"%s\"", panels), collapse = ", ")),
         call. = FALSE)
  tab <- x$table
  method <- tab$silhouette_method[1L]
  if (length(which) > 1L) {
    old <- graphics::par(mfrow = c(1L, length(which)))
    on.exit(graphics::par(old), add = TRUE)
  }
  for (w in which) {
    y <- switch(w, elbow = tab$tot.withinss, silhouette = tab$silhouette,
                calinski_harabasz = tab$calinski_harabasz, davies_bouldin = tab$davies_bouldin,
                betweenss_totss = tab$betweenss_totss)
    ylab <- switch(w, elbow = "total within-cluster sum of squares",
                   silhouette = sprintf("average silhouette width (%s)", method),
                   calinski_harabasz = "Calinski-Harabasz index",
                   davies_bouldin = "Davies-Bouldin index",
                   betweenss_totss = "betweenss / totss")
    main <- switch(w, elbow = "Elbow", silhouette = "Silhouette", calinski_harabasz = "Calinski-Harabasz",
                   davies_bouldin = "Davies-Bouldin", betweenss_totss = "Variance explained")
    ok <- is.finite(y)
    if (!any(ok)) {
      graphics::plot.new()
      graphics::title(main = main)
      graphics::mtext(if (w == "silhouette" && method == "none") "no silhouette computed" else "not defined for these k",
                      side = 3, line = -2)
      next
    }
    graphics::plot(tab$k[ok], y[ok], type = "b", pch = 19, col = col, xlab = "number of clusters k",
                   ylab = ylab, main = main, xaxt = "n", ...)
    graphics::axis(1, at = tab$k)
    best <- best_k(tab$k, y, w)
    if (!is.na(best)) {
      graphics::abline(v = best, lty = 2, col = best_col)
      graphics::points(best, y[tab$k == best], pch = 19, cex = 1.6, col = best_col)
    }
  }
  invisible(x)
}

# The k an index favours (NA for the elbow and the variance explained).
best_k <- function(k, y, index) {
  ok <- is.finite(y)
  if (!any(ok)) return(NA_integer_)
  switch(index,
         silhouette = , calinski_harabasz = k[ok][which.max(y[ok])],
         davies_bouldin = k[ok][which.min(y[ok])],
         NA_integer_)
}

#' @rdname plot.gpu_kmeans_sweep
#' @export
print.gpu_kmeans_sweep <- function(x, ...) {
  tab <- x$table
  cat(sprintf("k-means sweep over k = %s: %d rows, %d column%s, nstart = %d, init = \"%s\"\n",
              format_k(tab$k), x$n, x$d, if (x$d == 1L) "" else "s", x$nstart, x$init))
  shown <- tab
  shown$silhouette_method <- NULL
  print(shown, digits = 4, row.names = FALSE)
  method <- tab$silhouette_method[1L]
  cat(sprintf("Silhouette: %s%s\n", method,
              switch(method, sampled = sprintf(" (%d rows)", length(x$silhouette_rows)),
                     simplified = " (distances to the centers)", "")))
  idx <- c(silhouette = "silhouette", calinski_harabasz = "Calinski-Harabasz",
           davies_bouldin = "Davies-Bouldin")
  best <- vapply(names(idx), function(i) best_k(tab$k, tab[[i]], i), integer(1))
  if (any(!is.na(best)))
    cat("Best k by ", paste(sprintf("%s: %d", idx[!is.na(best)], best[!is.na(best)]), collapse = ", "),
        "\n", sep = "")
  cat(sprintf("Backend: %s [%s], %s (fits %s, indices %s)\n", x$backend, x$device,
              format_seconds(x$seconds), format_seconds(sum(x$timing$fit)),
              format_seconds(sum(x$timing$quality))))
  invisible(x)
}

format_k <- function(k) {
  if (length(k) > 2L && all(diff(k) == 1L)) sprintf("%d..%d", k[1L], k[length(k)])
  else paste(k, collapse = ", ")
}

#' @rdname plot.gpu_kmeans_sweep
#' @export
as.data.frame.gpu_kmeans_sweep <- function(x, row.names = NULL, optional = FALSE, ...) {
  x$table
}
