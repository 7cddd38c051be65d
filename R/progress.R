# The progress bar of long fits.  The engines call `update` (through the C++
# observer) only once the fit has run for `after` seconds, and at most a few
# times a second, so short fits never touch it.
new_progress <- function(iter.max, nstart) {
  mode <- getOption("gpukmeans.progress", NA)
  after <- if (isTRUE(mode)) 0 else if (isFALSE(mode)) Inf else
    getOption("gpukmeans.progress_after", 2)
  if (!is.numeric(after) || length(after) != 1L || is.na(after)) after <- 2
  state <- new.env(parent = baseenv())
  if (!is.finite(after)) return(list(update = NULL, after = Inf, done = function() invisible()))
  update <- function(iter, changed, start) {
    if (is.null(state$bar)) {
      old <- options(cli.progress_show_after = 0)
      on.exit(options(old))
      state$bar <- cli::cli_progress_bar(
        total = iter.max, clear = TRUE, .envir = state,
        # Short enough for an 80-column console.
        format = paste0("gpu_kmeans {cli::pb_bar} iter {cli::pb_current}/{cli::pb_total}",
                        "{if (nstart > 1) paste0(' start ', start, '/', nstart) else ''}",
                        ", {changed} changed | {cli::pb_elapsed}"))
    }
    state$changed <- if (is.na(changed) || changed < 0) "?" else formatC(changed, format = "d", big.mark = ",")
    state$start <- start
    state$nstart <- nstart
    if (!is.na(iter)) cli::cli_progress_update(id = state$bar, set = iter, force = TRUE, .envir = state)
    else cli::cli_progress_update(id = state$bar, force = TRUE, .envir = state)
    invisible()
  }
  done <- function() {
    if (!is.null(state$bar)) cli::cli_progress_done(id = state$bar, .envir = state)
    invisible()
  }
  list(update = update, after = after, done = done)
}
