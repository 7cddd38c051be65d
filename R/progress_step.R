# One redraw of the progress bar, called from C++ (src/r_observer.cpp) while a
# fit runs.  Returns TRUE when the user pressed Ctrl-C while the bar was being
# drawn: R turns that into an "interrupt" condition, which would otherwise be
# lost in the drawing code; the fit then stops at once.
progress_step <- function(update, iter, changed, start) {
  tryCatch({
    update(iter, changed, start)
    FALSE
  }, interrupt = function(cnd) TRUE)
}
