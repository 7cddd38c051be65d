// r_observer.h: trace lines, the progress bar and Ctrl-C for a running fit.
//
// Engines call it between iterations.  Everything that touches R runs under
// R_ToplevelExec / R_tryEvalSilent, so an interrupt or an error in R code can
// never unwind through engine (or CUDA) frames; it is reported back as
// "stop", the engine throws gk::Interrupted once it has cleaned up, and
// guarded() (r_boundary.h) raises the interrupt in R.
#ifndef GPUKMEANS_R_OBSERVER_H
#define GPUKMEANS_R_OBSERVER_H

#include <Rcpp.h>
#include "observer.h"

namespace gk {

class RObserver : public IterationObserver {
 public:
  // progress: NULL or an R function(iter, changed) drawing the progress bar;
  // progress_after: seconds before the bar is first drawn (Inf: never).
  RObserver(bool trace, SEXP progress, double progress_after);
  bool wants_iterations() const override;
  bool iteration(int iter, std::int64_t changed, double tot_withinss) override;
  bool keep_going() override;
  void set_start(int start, int nstart) override {
    start_ = start;
    nstart_ = nstart;
  }

 private:
  bool poll_interrupt(double now);
  void draw_progress(double now, int iter, std::int64_t changed);

  bool trace_;
  SEXP progress_;
  SEXP progress_step_ = R_NilValue;  // R/progress_step.R
  double progress_after_;
  int start_ = 1, nstart_ = 1;
  double t0_, last_poll_, last_draw_;
  bool interrupted_ = false;
};

}  // namespace gk

#endif
