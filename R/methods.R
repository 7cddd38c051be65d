#' Print a gpu_kmeans fit
#'
#' Prints what [print()] prints for a [stats::kmeans()] fit, then one line
#' saying which engine and device ran it, the iterations and the time.
#' @param x a `gpu_kmeans` object.
#' @param ... passed to the `kmeans` print method.
#' @return `x`, invisibly.
#' @export
print.gpu_kmeans <- function(x, ...) {
  NextMethod()
  cosine_print(x)
  timing <- attr(x, "timing")
  extra <- ""
  if (!is.null(timing) && all(c("transfer_to_device", "transfer_to_host") %in% names(timing)))
    extra <- sprintf(" (to device %s, compute %s, to host %s)",
                     format_seconds(timing[["transfer_to_device"]]),
                     format_seconds(timing[["compute"]]),
                     format_seconds(timing[["transfer_to_host"]]))
  cat(sprintf("Backend: %s [%s], %d iteration%s, %s%s\n",
              attr(x, "backend") %||% "?", attr(x, "device") %||% "?",
              x$iter, if (identical(x$iter, 1L)) "" else "s",
              if (is.null(timing)) "?" else format_seconds(timing[["total"]]), extra))
  invisible(x)
}

format_seconds <- function(s) {
  if (s < 1e-3) sprintf("%.0f us", s * 1e6)
  else if (s < 1) sprintf("%.1f ms", s * 1e3)
  else sprintf("%.2f s", s)
}

#' Assign new data to the clusters of a fit
#'
#' Each row of `newdata` goes to the nearest center of `object` (squared
#' Euclidean distance, ties to the lowest index, empty clusters never), with
#' the engine that made the fit: on the GPU for a CUDA fit when a device is
#' still available (and the work is not too small to gain from it), else on
#' the CPU.  The GPU is `getOption("gpukmeans.device", 0)`: one device,
#' or several (or `"all"`), which split the rows of `newdata` as
#' [gpu_kmeans()] splits `x` (the labels do not depend on the devices).
#' For a spherical fit (`distance = "cosine"`, [spherical_kmeans])
#' the rows of `newdata` are scaled to unit length first (a row of zeros is
#' an error), so each goes to the center of largest cosine.
#'
#' Columns are matched by name, as predict methods do, when both `newdata`
#' and the fit's centers have column names: `newdata` may have its columns
#' in any order, and columns the fit does not use are ignored (so
#' `predict(fit, iris)` works for a fit on `iris[, 1:4]`); a column of the
#' fit that `newdata` lacks is an error.  When either has no column names,
#' columns are taken in order and their number must match.
#'
#' @param object a `gpu_kmeans` fit.
#' @param newdata data with the columns of the fit's centers (matrix, data
#'   frame or, for 1-D fits, a vector).
#' @param backend `"auto"` (the fit's engine), `"cuda"` or `"cpu"`.
#' @param ... not used.
#' @return An integer vector of cluster indices, named by the row names of
#'   `newdata` if it has any.
#' @examples
#' fit <- gpu_kmeans(faithful, 2)
#' predict(fit, data.frame(eruptions = c(2, 4.5), waiting = c(55, 80)))
#' # the same, columns matched by name
#' predict(fit, data.frame(waiting = c(55, 80), eruptions = c(2, 4.5)))
#' @export
predict.gpu_kmeans <- function(object, newdata, backend = "auto", ...) {
  if (missing(newdata)) stop("'newdata' is required", call. = FALSE)
  if (...length()) stop(sprintf("unused argument%s in predict(): %s",
                                if (...length() > 1L) "s" else "",
                                paste(deparse_dots(...), collapse = ", ")), call. = FALSE)
  centers <- object$centers
  if (!is.matrix(centers) || !is.numeric(centers))
    stop("'object' must be a k-means fit with a matrix of centers", call. = FALSE)
  newdata <- match_columns(newdata, colnames(centers))
  # The engine checks that newdata is finite as it takes it (a large
  # newdata is then read once on the host: R/gpu_kmeans.R says how), but for
  # cosine fits, whose unit rows R computes first.
  engine_checks <- !is_cosine(object)
  nonfinite <- function(index) stop(nonfinite_problem(newdata, index, "newdata"), call. = FALSE)
  # (no rows: an MPI rank without rows of its own predicts nothing)
  if (NROW(newdata) == 0L) {
    newdata <- block_matrix(newdata)
  } else {
    # (a large matrix source stays where it is: its view, R/matrix_sources.R)
    data <- data_matrix(newdata, "newdata", check_finite = !engine_checks, view = engine_checks)
    if (!is.null(data$problem)) stop(data$problem, call. = FALSE)
    newdata <- data$x
  }
  if (ncol(newdata) != ncol(centers)) {
    if (engine_checks && nrow(newdata) > 0L) {  # (a bad value is named first, as before)
      bad <- first_nonfinite(newdata)
      if (bad > 0) nonfinite(bad)
    }
    stop(sprintf("'newdata' has %d columns but the centers have %d",
                 ncol(newdata), ncol(centers)), call. = FALSE)
  }
  if (nrow(newdata) == 0L) return(integer(0))
  if (is_cosine(object)) newdata <- cosine_rows(newdata, "newdata")  # unit rows (R/cosine.R)
  storage.mode(centers) <- "double"
  # the devices of getOption("gpukmeans.device"): one, several (the rows
  # split across them) or "all"; the labels do not depend on them
  devices <- check_devices(getOption("gpukmeans.device", 0L))
  work <- as.numeric(nrow(newdata)) * nrow(centers) * ncol(centers)
  check_backend(backend)
  engine <- if (identical(backend, "auto")) {
    if (identical(attr(object, "backend"), "cuda") && work >= gpu_min_work() &&
        all(vapply(unique(devices), function(d) is.null(cuda_unavailable_reason(d)), NA))) "cuda" else "cpu"
  } else if (identical(backend, "cpu")) "cpu" else resolve_backend_devices(backend, devices, work)
  predict_on <- function(data) tryCatch(
    gk_predict_cpp(data, unname(centers), engine, cpu_threads(work), engine_devices(engine, devices),
                   cuda_options(), finite = !engine_checks),
    gpukmeans_nonfinite = function(e) nonfinite(e$index))
  # (a source's view: block by block to the CUDA devices where its rows fit
  # there, else from memory)
  cl <- predict_on(engine_data(newdata, engine, engine_devices(engine, devices)))
  if (is.null(cl)) cl <- predict_on(source_dense(newdata))
  if (!is.null(rn <- rownames(newdata))) names(cl) <- rn
  cl
}

# newdata's columns in the order of the fit's (named) columns, when both
# have names; newdata as given otherwise.
match_columns <- function(newdata, wanted) {
  have <- if (is.data.frame(newdata) || is.matrix(newdata) || is_matrix_source(newdata)) colnames(newdata)
  if (is.null(wanted) || is.null(have) || all(!nzchar(wanted))) return(newdata)
  if (identical(have, wanted)) return(newdata)
  pos <- match(wanted, have)
  if (anyNA(pos))
    stop(sprintf("'newdata' has no column%s %s: the fit's columns are %s, those of 'newdata' %s",
                 if (sum(is.na(pos)) > 1L) "s" else "",
                 paste(sQuote(wanted[is.na(pos)], FALSE), collapse = ", "),
                 paste(sQuote(wanted, FALSE), collapse = ", "),
                 paste(sQuote(have, FALSE), collapse = ", ")), call. = FALSE)
  dup <- wanted[have[pos] %in% have[duplicated(have)]]
  if (length(dup))
    stop(sprintf("'newdata' has more than one column named %s", paste(sQuote(unique(dup), FALSE), collapse = ", ")),
         call. = FALSE)
  newdata[, pos, drop = FALSE]
}

deparse_dots <- function(...) {
  dots <- match.call(expand.dots = FALSE)$...
  nm <- names(dots) %||% rep("", length(dots))
  vapply(seq_along(dots), function(i) {
    v <- paste(deparse(dots[[i]], nlines = 1L), collapse = "")
    if (nzchar(nm[i])) paste(nm[i], "=", v) else v
  }, character(1))
}

#' Compare two k-means fits
#'
#' `all.equal()` for `gpu_kmeans` fits compares what a [stats::kmeans()]
#' fit has: the nine components and their attributes (names, dimnames).
#' What says how a fit was run, and differs between two runs of the same fit
#' (the attributes `timing`, `backend`, `device`, `start_tot_withinss` and
#' `mpi`, and the class `"gpu_kmeans"` itself), is ignored unless `check.run =
#' TRUE`, so two identical fits are equal, and a `gpu_kmeans` fit equals the
#' [stats::kmeans()] fit it reproduces (to `tolerance`).
#'
#' @param target,current fits (`gpu_kmeans` or `kmeans` objects).
#' @param ... passed to [all.equal()] (`tolerance`, `check.attributes`, ...).
#' @param check.run logical: compare the run's metadata too.
#' @return `TRUE`, or a character vector describing the differences, as
#'   [all.equal()].
#' @examples
#' set.seed(1); a <- gpu_kmeans(iris[, 1:4], 3)
#' set.seed(1); b <- gpu_kmeans(iris[, 1:4], 3)
#' all.equal(a, b)                    # TRUE: only the timings differ
#' isTRUE(all.equal(a, b, check.run = TRUE))
#' set.seed(1); s <- kmeans(iris[, 1:4], 3, algorithm = "Lloyd")
#' all.equal(a, s)
#' @method all.equal gpu_kmeans
#' @export
all.equal.gpu_kmeans <- function(target, current, ..., check.run = FALSE) {
  if (!is.logical(check.run) || length(check.run) != 1L || is.na(check.run))
    stop("'check.run' must be TRUE or FALSE", call. = FALSE)
  # all.equal.list() compares components and every attribute, class included.
  if (check.run) return(all.equal.list(target, current, ...))
  all.equal(strip_run_info(target), strip_run_info(current), ...)
}

run_attributes <- c("backend", "device", "timing", "start_tot_withinss", "mpi")

strip_run_info <- function(fit) {
  if (!inherits(fit, "gpu_kmeans")) return(fit)
  for (a in run_attributes) attr(fit, a) <- NULL
  class(fit) <- setdiff(class(fit), "gpu_kmeans")
  fit
}
