# Turning user input into what the engines take, with clear errors.

# The data as a double matrix, exactly as stats::kmeans sees it
# (as.matrix(x) then storage.mode "double"), after checking that it is numeric
# and finite.  A double matrix is returned as is (no copy).
as_data_matrix <- function(x, arg = "x") {
  if (is.data.frame(x)) {
    ok <- vapply(x, function(col) is.numeric(col) || is.logical(col), logical(1))
    if (!all(ok)) {
      stop(sprintf("'%s' must be numeric: column%s %s %s not numeric",
                   arg, if (sum(!ok) > 1L) "s" else "",
                   paste(sQuote(names(x)[!ok], FALSE), collapse = ", "),
                   if (sum(!ok) > 1L) "are" else "is"), call. = FALSE)
    }
  } else if (!(is.numeric(x) || is.logical(x))) {
    stop(sprintf("'%s' must be numeric (a numeric matrix, data frame or vector), not %s",
                 arg, class(x)[1L]), call. = FALSE)
  }
  x <- as.matrix(x)
  if (!is.numeric(x) && !is.logical(x))
    stop(sprintf("'%s' must be numeric", arg), call. = FALSE)
  if (storage.mode(x) != "double") storage.mode(x) <- "double"
  if (nrow(x) == 0L) stop(sprintf("'%s' has no rows", arg), call. = FALSE)
  if (ncol(x) == 0L) stop(sprintf("'%s' has no columns", arg), call. = FALSE)
  bad <- gk_first_nonfinite(x, cpu_threads())
  if (bad > 0L) {
    col <- (bad - 1L) %/% nrow(x) + 1L
    stop(sprintf("'%s' must not contain NA, NaN or infinite values (found one in row %d, column %d)",
                 arg, (bad - 1L) %% nrow(x) + 1L, col), call. = FALSE)
  }
  x
}

# A single whole number >= lower, or an error naming the argument.
check_count <- function(value, arg, lower = 1L, message = NULL) {
  ok <- is.numeric(value) && length(value) == 1L && !is.na(value) &&
    is.finite(value) && value == round(value) && value >= lower
  if (!ok) stop(message %||% sprintf("'%s' must be a positive whole number", arg),
                call. = FALSE)
  as.integer(value)
}

`%||%` <- function(a, b) if (is.null(a)) b else a
