# Turning user input into what the engines take, with clear errors.
#
# Every argument is checked here, at the R boundary: a value the engines
# cannot take (a count of 2^31 or more, NA, a string) is refused with an
# error naming the argument and the value, or clamped where a user means
# "as many as possible" (iter.max = Inf), so that nothing reaches C++ that
# could make it fail.

# The most starts a fit takes.  Each start is a whole fit, so more than a
# million is surely a mistake (nstart = 1e9 would run for days), and the
# starts are drawn before the first one runs.
nstart_max <- 1e6

# The data as a double matrix, exactly as stats::kmeans sees it
# (as.matrix(x) then storage.mode "double"), after checking that it is numeric
# and finite.  A double matrix is returned as is (no copy); a Matrix,
# big.matrix or DelayedArray matrix is read in blocks (R/matrix_sources.R).
as_data_matrix <- function(x, arg = "x") {
  d <- data_matrix(x, arg)
  if (!is.null(d$problem)) stop(d$problem, call. = FALSE)
  d$x
}

# As as_data_matrix() but returning the problem (a message) instead of
# stopping, so that gpu_kmeans() can raise it where stats::kmeans() would
# (after drawing the first random start).  list(x = double matrix or NULL,
# problem = NULL or a message); x is NULL only when it is not numeric.
# check_finite = FALSE: the values are not looked at (an engine checks them).
# view = TRUE (with check_finite = FALSE: gpu_kmeans()): a large matrix
# source is not read here; x is then its view (source_view(), R/matrix_sources.R).
data_matrix <- function(x, arg = "x", check_finite = TRUE, view = FALSE) {
  if (view && !check_finite && !is.null(v <- source_view(x))) {
    problem <- source_problem(v, arg)
    return(list(x = if (is.null(problem)) v, problem = problem))
  }
  if (is_matrix_source(x)) {  # Matrix, big.matrix, DelayedArray (R/matrix_sources.R)
    dense <- read_matrix_source(x)
    if (is.null(dense))
      return(list(x = NULL, problem = source_type_problem(x, as.matrix(x[1L, , drop = FALSE]), arg)))
    x <- dense
  }
  if (is.data.frame(x)) {
    ok <- vapply(x, function(col) (is.numeric(col) || is.logical(col)) && !is.factor(col),
                 logical(1))
    if (!all(ok)) {
      bad <- names(x)[!ok]
      kinds <- vapply(x[!ok], describe_type, character(1))
      return(list(x = NULL, problem = sprintf(
        "'%s' must be numeric: column%s %s %s not numeric (%s)",
        arg, if (length(bad) > 1L) "s" else "",
        paste(sQuote(bad, FALSE), collapse = ", "),
        if (length(bad) > 1L) "are" else "is", paste(unique(kinds), collapse = ", "))))
    }
  } else if (!(is.numeric(x) || is.logical(x)) || is.factor(x)) {
    return(list(x = NULL, problem = sprintf(
      "'%s' must be numeric (a numeric matrix, data frame or vector), not %s",
      arg, describe_type(x))))
  }
  x <- as.matrix(x)
  if (!is.numeric(x) && !is.logical(x))
    return(list(x = NULL, problem = sprintf("'%s' must be numeric, not %s", arg, describe_type(x))))
  if (storage.mode(x) != "double") storage.mode(x) <- "double"
  if (nrow(x) == 0L) stop(sprintf("'%s' has no rows", arg), call. = FALSE)
  if (ncol(x) == 0L) stop(sprintf("'%s' has no columns", arg), call. = FALSE)
  if (!check_finite) return(list(x = x, problem = NULL))
  bad <- first_nonfinite(x)
  list(x = x, problem = if (bad > 0) nonfinite_problem(x, bad, arg))
}

# The 1-based (column-major) place of the first NA, NaN or infinite value
# of the double matrix x, or 0; by as many threads as its size deserves.
first_nonfinite <- function(x) {
  if (inherits(x, "gk_source")) return(source_first_nonfinite(x))
  gk_first_nonfinite(x, cpu_threads(as.numeric(nrow(x)) * ncol(x)))
}

# The message for the value of x at (1-based, column-major) place `bad`,
# which is NA, NaN or infinite.
nonfinite_problem <- function(x, bad, arg = "x") {
  row <- as.integer((bad - 1) %% nrow(x) + 1)
  col <- as.integer((bad - 1) %/% nrow(x) + 1)
  sprintf("'%s' must not contain NA, NaN or infinite values (found %s in row %d, column %d)",
          arg, describe_value(x[row, col]), row, col)
}

# The state of R's random number generator (NULL: not seeded yet), and its
# restoration.
rng_state <- function() {
  genv <- globalenv()
  if (exists(".Random.seed", envir = genv, inherits = FALSE)) get(".Random.seed", envir = genv, inherits = FALSE)
}
rng_restore <- function(seed) {
  genv <- globalenv()
  if (!is.null(seed)) assign(".Random.seed", seed, envir = genv)
  else if (exists(".Random.seed", envir = genv, inherits = FALSE)) rm(".Random.seed", envir = genv)
}

# "a character matrix", "a complex vector", "a factor", "a list", ...
describe_type <- function(x) {
  if (is.null(x)) return("NULL")
  if (is.factor(x)) return("a factor")
  if (is.data.frame(x)) return("a data frame")
  shape <- if (is.matrix(x)) "matrix" else if (is.array(x)) "array" else if (is.list(x)) "" else "vector"
  type <- typeof(x)
  if (type == "list") return("a list")
  if (type == "closure" || type == "builtin" || type == "special") return("a function")
  type <- switch(type, double = "numeric", integer = "integer", type)
  article <- if (grepl("^[aeiou]", type)) "an" else "a"
  sprintf("%s %s %s", article, type, shape)
}

# A short description of a value for an error message: 1.5, NA, Inf, 1e+06,
# "10" (a character string), a logical vector of length 3, ...
describe_value <- function(x) {
  if (is.null(x)) return("NULL")
  if (is.function(x)) return("a function")
  if (length(x) == 0L) return(sprintf("%s of length 0", describe_type(x)))
  if (length(x) > 1L) return(sprintf("%s of length %d", describe_type(x), length(x)))
  if (is.list(x)) return("a list")
  if (is.factor(x)) return("a factor")
  if (is.character(x)) return(if (is.na(x)) "NA (a character string)" else
                                sprintf("\"%s\" (a character string)", x))
  if (is.complex(x)) return(sprintf("%s (a complex number)", format(x)))
  if (is.logical(x)) return(as.character(x))
  if (is.numeric(x)) return(format(unclass(x), digits = 15))
  describe_type(x)
}

# A single whole number >= lower, or an error naming the argument.
check_count <- function(value, arg, lower = 1L, message = NULL) {
  ok <- is.numeric(value) && length(value) == 1L && !is.na(value) &&
    is.finite(value) && value == round(value) && value >= lower &&
    value <= .Machine$integer.max
  if (!ok) stop(message %||% sprintf("'%s' must be a positive whole number", arg),
                ", not ", describe_value(value), call. = FALSE)
  as.integer(value)
}

# nstart as stats::kmeans() reads it: 1, or a number >= 2 (rounded down, as
# stats' loop 2:nstart does).  stats fails for NA and for 1 < nstart < 2
# ("argument is of length zero"): those are errors here too, clearer ones.
check_nstart <- function(nstart) {
  if (!is.numeric(nstart) || length(nstart) != 1L || is.factor(nstart))
    stop("'nstart' must be a positive whole number, not ", describe_value(nstart), call. = FALSE)
  if (is.na(nstart))
    stop("'nstart' must be a positive whole number, not ", describe_value(nstart), call. = FALSE)
  if (nstart < 1)
    stop("'nstart' must be a positive whole number, not ", describe_value(nstart), call. = FALSE)
  if (nstart > 1 && nstart < 2)
    stop("'nstart' must be a positive whole number, not ", describe_value(nstart),
         " (as in stats::kmeans(), a fractional nstart of 2 or more is rounded down)", call. = FALSE)
  if (nstart > nstart_max)
    stop(sprintf("'nstart' must be at most %s (each start is a whole fit), not %s",
                 format(nstart_max, big.mark = ",", scientific = FALSE), describe_value(nstart)),
         call. = FALSE)
  as.integer(floor(nstart))
}

# iter.max as stats::kmeans() reads it (as.integer(), so 2.7 is 2), except
# that a value of 2^31 - 1 or more (Inf, 1e12) means "no limit" and is
# clamped to .Machine$integer.max - 1 (stats fails there: as.integer() gives
# NA).  Returns list(value =, problem =): a problem is raised by the caller
# where stats raises it, after the first random start is drawn.
check_iter_max <- function(iter.max) {
  problem <- NULL
  if (is.atomic(iter.max) && length(iter.max) == 1L && !is.character(iter.max) && is.na(iter.max)) {
    problem <- paste0("'iter.max' must be positive, not ", describe_value(iter.max))
  } else if (!is.numeric(iter.max) || length(iter.max) != 1L || is.factor(iter.max)) {
    problem <- paste0("'iter.max' must be a single number (of iterations), not ",
                      describe_value(iter.max))
  } else if (is.na(iter.max) || iter.max < 1) {
    problem <- paste0("'iter.max' must be positive, not ", describe_value(iter.max))
  }
  if (!is.null(problem)) return(list(value = NA_integer_, problem = problem))
  list(value = as.integer(min(floor(iter.max), .Machine$integer.max - 1)), problem = NULL)
}

# trace: FALSE/TRUE, or a number (stats passes it to Hartigan-Wong's
# Fortran code as an integer level).
check_trace <- function(trace) {
  ok <- (is.logical(trace) || is.numeric(trace)) && length(trace) == 1L && !is.na(trace) &&
    trace >= 0 && trace < .Machine$integer.max
  if (!ok) stop("'trace' must be TRUE, FALSE or a non-negative number, not ",
                describe_value(trace), call. = FALSE)
  trace
}

# match.arg() with the argument's name in the error, and a clear error for a
# value that is not a string: one of `choices`, partially matched as
# match.arg() does (algorithm = "Hart" is "Hartigan-Wong", as in stats); the
# whole vector of choices (the default) is the first.
choose_one <- function(arg, choices, name) {
  if (identical(arg, choices)) return(choices[1L])
  if (is.character(arg) && length(arg) == 1L && !is.na(arg) && nzchar(arg)) {
    i <- pmatch(arg, choices)
    if (!is.na(i)) return(choices[i])
  }
  stop(sprintf("'%s' should be one of %s, not %s", name,
               paste0("\"", choices, "\"", collapse = ", "), describe_value(arg)), call. = FALSE)
}

`%||%` <- function(a, b) if (is.null(a)) b else a
