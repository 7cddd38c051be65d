# One redraw of the progress display, called from C++ (src/r_observer.cpp)
# while a fit runs, in R's current context (handlers around the fit, such as
# progressr's, see what it signals).  Returns
#   FALSE  drawn;
#   TRUE   the user pressed Ctrl-C while it ran: R turns that into an
#          "interrupt" condition, which would otherwise be lost in the
#          drawing code; the fit then stops at once;
#   NA     the display failed: it is dropped and the fit goes on.
progress_step <- function(update, iter, changed, start) {
  tryCatch({
    update(iter, changed, start)
    FALSE
  }, interrupt = function(cnd) TRUE, error = function(cnd) NA)
}
