// engine_glue.h: what every R entry point that runs an engine needs: the
// data as the engines take it, the engine R chose (R/backend.R) with its
// options, and the observer's held R jumps.  Included by the *_glue.cpp
// files only.
#ifndef GPUKMEANS_ENGINE_GLUE_H
#define GPUKMEANS_ENGINE_GLUE_H

#include <Rcpp.h>

#include <memory>
#include <string>

#include "engine.h"
#include "r_observer.h"

namespace gk {

// cuda: the CUDA engine's options from R (R/backend.R, cuda_options()):
//   list(tuning = c(assign_kernel, init_filter, sample_room, bounds[, staging]) or
//        integer(0) for the defaults (gk::CudaTuning; tests and benchmarks),
//        device_memory = the bytes it may use (Inf: all that is free))
// An empty list means the defaults.  shift: the single-precision shift (d
// values), or nullptr for the engine's own (src/single_shift.h).
inline std::unique_ptr<gk::Engine> make_engine(const gk::HostData& data, const std::string& backend, bool single,
                                        int threads, int device, Rcpp::List cuda = Rcpp::List(),
                                        const double* shift = nullptr) {
  const gk::Precision p = single ? gk::Precision::kSingle : gk::Precision::kDouble;
  if (backend != "cuda") return gk::make_cpu_engine(data, p, threads, shift);
  gk::CudaTuning t;
  if (cuda.containsElementNamed("tuning")) {
    Rcpp::IntegerVector tuning = cuda["tuning"];
    if (tuning.size() >= 4) {
      t.assign_kernel = tuning[0];
      t.init_filter = tuning[1];
      t.sample_room = tuning[2];
      t.bounds = tuning[3];
    }
    if (tuning.size() >= 5) t.staging = tuning[4];
  }
  t.host_threads = threads;
  if (cuda.containsElementNamed("device_memory")) t.memory_cap = Rcpp::as<double>(cuda["device_memory"]);
  return gk::make_cuda_engine(data, p, device, shift, t);
}

inline gk::HostData host_data(const Rcpp::NumericMatrix& x) {
  gk::HostData data;
  data.x = x.begin();
  data.n = x.nrow();
  data.d = x.ncol();
  return data;
}

// The observation weights from R (NULL, or doubles checked in R/weights.R,
// one per row), read in place.
inline void set_weights(gk::HostData& data, SEXP weights) {
  if (Rf_isNull(weights)) return;
  if (TYPEOF(weights) != REALSXP || XLENGTH(weights) != data.n)
    throw gk::EngineError(gk::EngineError::Kind::kInvalid, "weights must be doubles, one per row of x");
  data.w = REAL(weights);
}


// fn() with the observer: when it stops because an R jump left the progress
// code, that jump continues once fn's engines have cleaned up.
template <typename F>
auto observed(RObserver& observer, F&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const Interrupted&) {
    observer.resume_pending_jump();
    throw;
  }
}

}  // namespace gk

#endif
