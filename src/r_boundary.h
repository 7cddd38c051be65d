// r_boundary.h: the one place where engine failures become R conditions.
// Every R entry point that runs engine code wraps it in guarded():
//   gk::Interrupted   -> R's interrupt (as if Ctrl-C reached R directly);
//   gk::EngineError   -> an R error of class gpukmeans_<kind> (R/errors.R);
//   std::bad_alloc    -> an R error of class gpukmeans_out_of_memory.
// The engine has released everything by the time the exception gets here.
#ifndef GPUKMEANS_R_BOUNDARY_H
#define GPUKMEANS_R_BOUNDARY_H

#include <Rcpp.h>

#include <new>

#include "engine.h"

namespace gk {

// Signals the R condition of e (never returns: R's error unwinds through
// Rcpp's protection back to R).
[[noreturn]] void signal_engine_error(const EngineError& e);

template <typename F>
auto guarded(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Interrupted&) {
    throw Rcpp::internal::InterruptedException();
  } catch (const EngineError& e) {
    signal_engine_error(e);
  } catch (const std::bad_alloc&) {
    signal_engine_error(EngineError(EngineError::Kind::kOutOfMemory, "out of host memory"));
  }
}

}  // namespace gk

#endif
