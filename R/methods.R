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
#' still available, else on the CPU.
#'
#' @param object a `gpu_kmeans` fit.
#' @param newdata data with the same columns as the fit's centers (matrix,
#'   data frame or, for 1-D fits, a vector).
#' @param backend `"auto"` (the fit's engine), `"cuda"` or `"cpu"`.
#' @param ... not used.
#' @return An integer vector of cluster indices, named by the row names of
#'   `newdata` if it has any.
#' @examples
#' fit <- gpu_kmeans(faithful, 2)
#' predict(fit, data.frame(eruptions = c(2, 4.5), waiting = c(55, 80)))
#' @export
predict.gpu_kmeans <- function(object, newdata, backend = "auto", ...) {
  if (missing(newdata)) stop("'newdata' is required", call. = FALSE)
  newdata <- as_data_matrix(newdata, "newdata")
  centers <- object$centers
  if (ncol(newdata) != ncol(centers))
    stop(sprintf("'newdata' has %d columns but the centers have %d",
                 ncol(newdata), ncol(centers)), call. = FALSE)
  storage.mode(centers) <- "double"
  device <- check_device(getOption("gpukmeans.device", 0L))
  engine <- if (identical(backend, "auto")) {
    if (identical(attr(object, "backend"), "cuda") && is.null(cuda_unavailable_reason(device)))
      "cuda" else "cpu"
  } else resolve_backend(backend, device)
  cl <- gk_predict_cpp(newdata, unname(centers), engine, cpu_threads(), device)
  if (!is.null(rn <- rownames(newdata))) names(cl) <- rn
  cl
}
