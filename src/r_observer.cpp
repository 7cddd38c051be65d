#include "r_observer.h"
#include "wall_clock.h"

#include <csetjmp>
#include <cmath>
#include <iomanip>
#include <R_ext/Utils.h>

namespace gk {

namespace {

void check_interrupt_fn(void*) { R_CheckUserInterrupt(); }

SEXP eval_in_global(void* call) { return Rf_eval(static_cast<SEXP>(call), R_GlobalEnv); }

// R_UnwindProtect's cleanup: a jump out of the R code comes back to
// call_r()'s setjmp instead of unwinding through the engine's frames.
void back_to_observer(void* jb, Rboolean jump) {
  if (jump) std::longjmp(*static_cast<std::jmp_buf*>(jb), 1);
}

constexpr double kPollEvery = 0.05;  // seconds between interrupt checks
constexpr double kDrawEvery = 0.2;   // seconds between progress redraws

}  // namespace

RObserver::RObserver(bool trace, SEXP progress, double progress_after)
    : trace_(trace), progress_(progress), progress_after_(progress_after) {
  if (progress_ != R_NilValue) {  // kept alive by the namespace
    Rcpp::Environment ns = Rcpp::Environment::namespace_env("gpukmeans");
    progress_step_ = ns["progress_step"];
  }
  t0_ = wall_seconds();
  last_poll_ = t0_;
  last_draw_ = -1.0;
}

bool RObserver::wants_iterations() const {
  return trace_ || (progress_ != R_NilValue && progress_after_ <= 0.0);
}

bool RObserver::poll_interrupt(double now) {
  if (interrupted_) return false;
  if (now - last_poll_ < kPollEvery) return true;
  last_poll_ = now;
  // FALSE when R_CheckUserInterrupt() jumped: the user pressed Ctrl-C.
  if (!R_ToplevelExec(check_interrupt_fn, nullptr)) interrupted_ = true;
  return !interrupted_;
}

void RObserver::draw_progress(double now, int iter, std::int64_t changed) {
  if (progress_ == R_NilValue || !(now - t0_ >= progress_after_)) return;
  if (last_draw_ >= 0.0 && now - last_draw_ < kDrawEvery) return;
  last_draw_ = now;
  // progress_step(update, iter, changed, start) (R/progress_step.R) draws the
  // bar and returns TRUE when a Ctrl-C arrived while R code ran (drawing must
  // not swallow the interrupt); it swallows the bar's own errors.
  SEXP a1 = PROTECT(Rf_ScalarInteger(iter));
  SEXP a2 = PROTECT(Rf_ScalarReal(static_cast<double>(changed)));
  SEXP a3 = PROTECT(Rf_ScalarInteger(start_));
  SEXP call = PROTECT(Rf_lang5(progress_step_, progress_, a1, a2, a3));
  SEXP res = R_NilValue;
  const bool returned = call_r(call, &res);
  const int status = returned ? Rf_asLogical(res) : TRUE;
  UNPROTECT(4);
  if (status == TRUE) interrupted_ = true;
  if (status == NA_LOGICAL) progress_ = R_NilValue;  // the display failed: drop it
}

// Evaluates call in R's current context, so that the calling handlers around
// the fit (progressr's with_progress(), a future's relay) see what it
// signals.  A jump out of it (an exiting handler, an error the R code did not
// catch) is held, the fit stops, and resume_pending_jump() continues it once
// the engine has cleaned up.  False when that happened.
bool RObserver::call_r(SEXP call, SEXP* result) {
  SEXP token = PROTECT(R_MakeUnwindCont());
  std::jmp_buf jb;
  if (setjmp(jb)) {
    R_PreserveObject(token);
    pending_jump_ = token;
    UNPROTECT(1);
    return false;
  }
  *result = R_UnwindProtect(eval_in_global, call, back_to_observer, &jb, token);
  UNPROTECT(1);
  return true;
}

void RObserver::resume_pending_jump() {
  if (pending_jump_ == R_NilValue) return;
  SEXP token = pending_jump_;
  pending_jump_ = R_NilValue;
  R_ReleaseObject(token);  // no R allocation happens before the jump resumes
  throw Rcpp::LongjumpException(token);
}

bool RObserver::iteration(int iter, std::int64_t changed, double tot_withinss) {
  if (trace_) {
    Rcpp::Rcout << "iter " << std::setw(3) << iter;
    if (nstart_ > 1) Rcpp::Rcout << " (start " << start_ << ")";
    Rcpp::Rcout << ": " << changed << " points changed cluster, tot.withinss = "
                << std::setprecision(10) << tot_withinss << std::endl;
  }
  const double now = wall_seconds();
  draw_progress(now, iter, changed);
  return poll_interrupt(now);
}

bool RObserver::keep_going() {
  const double now = wall_seconds();
  draw_progress(now, NA_INTEGER, -1);
  return poll_interrupt(now);
}

}  // namespace gk
