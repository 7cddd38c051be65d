// r_observer.h: trace lines, the progress bar and Ctrl-C for a running fit.
//
// Engines call it between iterations.  R code runs under R_ToplevelExec (the
// interrupt poll) or R_UnwindProtect (the progress bar, in the current
// context so that handlers around the fit see its conditions), so an
// interrupt or a jump out of R code can never unwind through engine (or
// CUDA) frames: it is reported back as "stop", the engine throws
// gk::Interrupted once it has cleaned up, and the glue resumes the held jump
// (resume_pending_jump) or guarded() (r_boundary.h) raises the interrupt.
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
  // After the engine has stopped: continues an R jump (error, exiting
  // handler) that left the progress code while the fit ran (see call_r).
  void resume_pending_jump();

 private:
  bool poll_interrupt(double now);
  void draw_progress(double now, int iter, std::int64_t changed);
  bool call_r(SEXP call, SEXP* result);

  bool trace_;
  SEXP progress_;
  SEXP progress_step_ = R_NilValue;  // R/progress_step.R
  SEXP pending_jump_ = R_NilValue;   // a held R jump (call_r)
  double progress_after_;
  int start_ = 1, nstart_ = 1;
  double t0_, last_poll_, last_draw_;
  bool interrupted_ = false;
};

}  // namespace gk

#endif
