# The progress display of long fits.
#
# The engines call `update(iter, changed, start)` (through the C++ observer)
# only once the fit has run for `after` seconds, and then at most every
# 0.2 s, so short fits never touch it.  `after` is
# options(gpukmeans.progress_after =) when set, else the user's
# options(cli.progress_show_after =) (cli's own default, 2 s).
#
# Where progress goes:
# - to progressr, when it is installed and the user listens to it: global
#   handlers (progressr::handlers(global = TRUE)), a with_progress() call
#   around the fit, or a future evaluating it (progressr is how progress
#   reaches the user from future workers);
# - otherwise to a cli progress bar on the console.  In a console that
#   cannot redraw a line (Rscript writing to a log file) it writes at most
#   one line every `log_every` seconds.
new_progress <- function(iter.max, nstart, t_begin = Sys.time(), choosing = FALSE,
                         clock = function() as.numeric(Sys.time()), dynamic = NULL,
                         log_every = 5) {
  mode <- getOption("gpukmeans.progress", NA)
  if (!is.logical(mode) || length(mode) != 1L)
    stop("options(gpukmeans.progress =) must be NA, TRUE or FALSE, not ", describe_value(mode),
         call. = FALSE)
  after <- if (isTRUE(mode)) 0 else if (isFALSE(mode)) Inf else progress_after()
  if (!is.finite(after)) return(no_progress())
  t0 <- as.numeric(t_begin)
  state <- new.env(parent = baseenv())  # cli evaluates the format in it
  state$start <- NA_integer_
  state$iter <- NA_integer_
  state$changed <- NA_real_

  # "start 2/5, iter 12/1000, 1,234 changed": only what is known, never a
  # placeholder.  Calls with iter = NA come between iterations (while
  # centers are chosen, or while the GPU works): they repeat the start's
  # last iteration, if any.
  status <- function(iter, changed, start) {
    if (is.na(start) || !identical(start, state$start)) {
      state$iter <- NA_integer_
      state$changed <- NA_real_
    }
    state$start <- start
    if (!is.na(iter)) {
      state$iter <- iter
      state$changed <- if (!is.na(changed) && changed >= 0) changed else NA_real_
    }
    parts <- character()
    if (nstart > 1L && !is.na(start)) parts <- sprintf("start %d/%d", start, nstart)
    if (!is.na(state$iter)) {
      parts <- c(parts, sprintf("iter %d/%d", state$iter, iter.max))
      if (!is.na(state$changed))
        parts <- c(parts, paste(format_count(state$changed), "changed"))
    } else {
      parts <- c(parts, if (choosing) "choosing initial centers" else "starting")
    }
    paste(parts, collapse = ", ")
  }

  if (progressr_listening()) {
    # One step per start; the message says where the fit is.
    handlers <- globalCallingHandlers()
    reach <- "all"
    signal <- function(expr) {
      if (reach == "global") do.call(withCallingHandlers, c(list(quote(expr)), handlers))
      else if (reach == "all") expr
    }
    update <- function(iter, changed, start) {
      # The engine may call back outside R's handler stack (R_tryEvalSilent()
      # starts a new top level): then the handlers of a with_progress() or a
      # future around the fit cannot be reached, and only the global ones
      # (progressr::handlers(global = TRUE)) can, given back here.  The
      # probe, caught by a handler that gpu_kmeans() sets around the engine,
      # says which.
      state$probe_seen <- FALSE
      signalCondition(probe_condition)
      reach <<- if (state$probe_seen) "all" else if (length(handlers)) "global" else "none"
      msg <- paste("gpu_kmeans:", status(iter, changed, start))
      if (is.null(state$p)) {
        if (reach == "none") {
          state$untold <- TRUE  # told at the end, by done()
          return(invisible())
        }
        state$done_steps <- 0L
        signal(state$p <- progressr::progressor(steps = nstart, on_exit = FALSE,
                                                envir = state))
      }
      done_steps <- if (is.na(start)) state$done_steps else start - 1L
      signal(state$p(message = msg, amount = max(0L, done_steps - state$done_steps)))
      state$done_steps <- max(state$done_steps, done_steps)
      invisible()
    }
    done <- function() {
      # Back in R's stack: every handler that saw the start sees the end (the
      # last step finishes the progressor); those the engine could not reach
      # see the whole long fit at once.
      if (is.null(state$p) && isTRUE(state$untold)) {
        state$done_steps <- 0L
        state$p <- progressr::progressor(steps = nstart, on_exit = FALSE, envir = state)
      }
      if (!is.null(state$p))
        state$p(message = "gpu_kmeans: done", amount = max(0L, nstart - state$done_steps))
      state$p <- NULL
      invisible()
    }
    probe <- function(cond) state$probe_seen <- TRUE
    return(list(update = update, after = after, done = done, probe = probe, via = "progressr"))
  }

  update <- function(iter, changed, start) {
    now <- clock()
    text <- status(iter, changed, start)
    if (is.null(dynamic)) dynamic <<- cli::is_dynamic_tty()
    if (!dynamic && !is.null(state$last) && now - state$last < log_every) return(invisible())
    state$last <- now
    state$status <- text
    state$elapsed <- format_elapsed(now - t0)
    if (is.null(state$bar)) {
      state$bar <- cli::cli_progress_bar(
        total = if (nstart > 1L) nstart else NA, clear = TRUE, .envir = state,
        # A bar over the starts, a spinner for one start, plain text in a log.
        format = paste0("gpu_kmeans ", if (!dynamic) "" else if (nstart > 1L)
          "{cli::pb_bar} " else "{cli::pb_spin} ", "{status} | {elapsed}"))
    }
    cli::cli_progress_update(id = state$bar, set = if (nstart > 1L && !is.na(start)) start - 1L else 0L,
                             force = TRUE, .envir = state)
    invisible()
  }
  done <- function() {
    if (!is.null(state$bar)) cli::cli_progress_done(id = state$bar, .envir = state)
    state$bar <- NULL
    invisible()
  }
  list(update = update, after = after, done = done, probe = ignore_probe, via = "cli")
}

no_progress <- function()
  list(update = NULL, after = Inf, done = function() invisible(), probe = ignore_probe,
       via = "none")

probe_condition <- structure(class = c("gpukmeans_probe", "condition"),
                             list(message = "gpukmeans handler probe", call = NULL))
ignore_probe <- function(cond) invisible()

# Seconds a fit runs before it shows progress.
progress_after <- function() {
  after <- getOption("gpukmeans.progress_after")
  what <- "gpukmeans.progress_after"
  if (is.null(after)) {
    after <- getOption("cli.progress_show_after", 2)
    what <- "cli.progress_show_after"
  }
  if (!is.numeric(after) || length(after) != 1L || is.na(after) || after < 0)
    stop(sprintf("options(%s =) must be a number of seconds >= 0, not %s", what,
                 describe_value(after)), call. = FALSE)
  after
}

# Whether the user listens to progressr: global handlers, a with_progress()
# call or a future on the call stack.  (Where no one listens, cli shows the
# bar.)
progressr_listening <- function() {
  frames <- call_stack_functions()
  if (isNamespaceLoaded("future")) {
    future_ns <- asNamespace("future")
    in_future <- any(vapply(frames, function(f) {
      e <- environment(f)
      !is.null(e) && identical(topenv(e), future_ns)
    }, logical(1)))
    if (in_future) return(requireNamespace("progressr", quietly = TRUE))
  }
  # A user who set up handlers has loaded progressr.
  if (!isNamespaceLoaded("progressr")) return(FALSE)
  if (isTRUE(tryCatch(progressr::handlers(global = NA), error = function(e) FALSE))) return(TRUE)
  wp <- progressr::with_progress
  any(vapply(frames, function(f) identical(f, wp), logical(1)))
}

call_stack_functions <- function() {
  n <- sys.nframe() - 1L
  if (n < 1L) return(list())
  lapply(seq_len(n), function(i) sys.function(i))
}

format_count <- function(n) formatC(n, format = "d", big.mark = ",")

# 4s, 1m 05s, 2h 03m
format_elapsed <- function(s) {
  s <- max(0, floor(s))
  if (s < 60) sprintf("%ds", as.integer(s))
  else if (s < 3600) sprintf("%dm %02ds", as.integer(s %/% 60), as.integer(s %% 60))
  else sprintf("%dh %02dm", as.integer(s %/% 3600), as.integer((s %% 3600) %/% 60))
}
