// r_observer.h: trace lines, the progress bar and Ctrl-C for a running fit.
//
// Engines call it between iterations.  Everything that touches R runs under
// R_ToplevelExec / R_tryEvalSilent, so an interrupt or an error in R code can
// never unwind through engine (or CUDA) frames; it is reported back as
// "stop" and the glue raises the interrupt once the engine has cleaned up.
#ifndef GPUKMEANS_R_OBSERVER_H
#define GPUKMEANS_R_OBSERVER_H

#include <Rcpp.h>
#include "observer.h"

namespace gk {

class RObserver : public IterationObserver {
 public:
  // progress: NULL or an R function(iter, changed) drawing the progress bar;
  // progress_after: seconds before the bar is first drawn (Inf: never).
  RObserver(bool trace, SEXP progress, double progress_after, int start, int nstart);
  bool wants_iterations() const override;
  bool iteration(int iter, std::int64_t changed, double tot_withinss) override;
  bool keep_going() override;
  bool interrupted() const { return interrupted_; }
  void set_start(int start) { start_ = start; }

 private:
  bool poll_interrupt(double now);
  void draw_progress(double now, int iter, std::int64_t changed);

  bool trace_;
  SEXP progress_;
  double progress_after_;
  int start_, nstart_;
  double t0_, last_poll_, last_draw_;
  bool interrupted_ = false;
};

}  // namespace gk

#endif
