// engine_glue.h: what every R entry point that runs an engine needs: the
// data as the engines take it, the engine R chose (R/backend.R) with its
// options, and the observer's held R jumps.  Included by the *_glue.cpp
// files only.
#ifndef GPUKMEANS_ENGINE_GLUE_H
#define GPUKMEANS_ENGINE_GLUE_H

#include <Rcpp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "engine.h"
#include "multi_engine.h"
#include "r_observer.h"
#include "single_shift.h"

namespace gk {

// cuda: the CUDA engine's options from R (R/backend.R, cuda_options()):
//   list(tuning = c(assign_kernel, init_filter, sample_room, bounds[, staging]) or
//        integer(0) for the defaults (gk::CudaTuning; tests and benchmarks),
//        device_memory = the bytes it may use (Inf: all that is free),
//        stream = 0 stream x from host memory when it does not fit, 1 never, 2 always,
//        stream_rows = rows of a streamed chunk (0: by size),
//        stream_copy = how streamed x is copied: 0 by what the host allows, 1 staged through pinned
//        buffers, 2 x page-locked in place (no float image))
// An empty list means the defaults.  shift: the single-precision shift (d
// values), or nullptr for the engine's own (src/single_shift.h).
// The CUDA engine's tuning from R's `cuda` list (above), with `host_threads`
// host threads for its staged uploads.
inline gk::CudaTuning cuda_tuning(Rcpp::List cuda, int host_threads) {
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
  t.host_threads = host_threads;
  if (cuda.containsElementNamed("device_memory")) t.memory_cap = Rcpp::as<double>(cuda["device_memory"]);
  if (cuda.containsElementNamed("stream")) t.stream = Rcpp::as<int>(cuda["stream"]);
  if (cuda.containsElementNamed("stream_copy")) t.stream_copy = Rcpp::as<int>(cuda["stream_copy"]);
  if (cuda.containsElementNamed("stream_rows"))
    t.stream_rows = static_cast<std::int64_t>(Rcpp::as<double>(cuda["stream_rows"]));
  return t;
}

inline std::unique_ptr<gk::Engine> make_engine(const gk::HostData& data, const std::string& backend, bool single,
                                        int threads, int device, Rcpp::List cuda = Rcpp::List(),
                                        const double* shift = nullptr) {
  const gk::Precision p = single ? gk::Precision::kSingle : gk::Precision::kDouble;
  if (backend != "cuda") return gk::make_cpu_engine(data, p, threads, shift);
  return gk::make_cuda_engine(data, p, device, shift, cuda_tuning(cuda, threads));
}

// The engine of a fit on `devices` (R/backend.R, check_device()): one device,
// make_engine(); several, the composite over row blocks (src/multi_engine.h),
// one CUDA engine per device in order (a device may repeat: two engines on
// one GPU).  With backend "cpu" and several devices (internal: the tests of
// the composite, options(gpukmeans.cpu_parts)), one CPU engine per entry
// (threads / parts threads each).
inline std::unique_ptr<gk::Engine> make_fit_engine(const gk::HostData& data, const std::string& backend, bool single,
                                                   int threads, const std::vector<int>& devices,
                                                   Rcpp::List cuda = Rcpp::List()) {
  if (devices.empty()) throw gk::EngineError(gk::EngineError::Kind::kInvalid, "no device");
  if (devices.size() == 1) return make_engine(data, backend, single, threads, devices[0], cuda);
  const int P = static_cast<int>(devices.size());
  const gk::Precision p = single ? gk::Precision::kSingle : gk::Precision::kDouble;
  gk::MultiOptions opt;
  opt.parts = P;
  opt.host_threads = threads;
  gk::PartFactory make;
  if (backend == "cuda") {
    // The devices' names first (an unusable device fails before any upload).
    std::vector<int> distinct;
    std::string list;
    for (int i = 0; i < P; ++i) {
      list += (i ? ", " : "") + std::to_string(devices[i]) + " " + gk::cuda_device_name(devices[i]);
      if (std::find(distinct.begin(), distinct.end(), devices[i]) == distinct.end()) distinct.push_back(devices[i]);
    }
    const int g = static_cast<int>(distinct.size());
    opt.device = g == P ? std::to_string(P) + " GPUs: " + list
                        : std::to_string(P) + " engines on " + std::to_string(g) + (g == 1 ? " GPU: " : " GPUs: ") + list;
    opt.keep_blocks = false;  // each CUDA engine copies its block to its device
    opt.in_place = true;      // ... from x itself (no host copy of the block first)
    opt.align = 32;           // whole level-1 nodes of the sum trees per part (initialisations together)
    opt.reads_rows = true;    // (x from a reader: each engine reads its rows to its device)
    if (cuda.containsElementNamed("together")) opt.together = Rcpp::as<bool>(cuda["together"]);
    // (R objects are read here, on the calling thread; the factory runs in
    // threads of its own and must not touch R.  Parts that read x from a
    // reader that calls R are made one after another: each has all the threads.)
    const bool one_by_one = data.reader && !data.reader->concurrent();
    const gk::CudaTuning t = cuda_tuning(cuda, one_by_one ? threads : std::max(1, threads / P));
    make = [p, t, devices](const gk::HostData& block, int part, const double* shift) {
      return gk::make_cuda_engine(block, p, devices[part], shift, t);
    };
    // k-means++ and k-means|| on the first device, over all the rows, where
    // they fit beside its block (never streamed: else on the host)
    gk::CudaTuning whole = cuda_tuning(cuda, threads);
    whole.stream = 1;
    const int first = devices[0];
    opt.whole = [p, whole, first](const gk::HostData& all, const double* shift) {
      return gk::make_cuda_engine(all, p, first, shift, whole);
    };
  } else {
    const int each = std::max(1, threads / P);
    make = [p, each](const gk::HostData& block, int, const double* shift) {
      return gk::make_cpu_engine(block, p, each, shift);
    };
  }
  return gk::make_multi_engine(data, p, make, opt);
}

// The rows of x split into `parts` contiguous blocks, each copied and held
// by an engine of its own (the internal entry points that test
// gk::lloyd_parts); in single precision every part stores its rows less the
// shift of all the rows.  Empty parts get no engine.
struct PartEngines {
  std::vector<std::vector<double>> blocks;  // what the engines read: declared first, freed last
  std::vector<std::unique_ptr<gk::Engine>> owned;
  std::vector<gk::Engine*> engines;
};

inline PartEngines part_engines(const Rcpp::NumericMatrix& x, int parts, const std::string& engine, bool single,
                                int threads, int device) {
  const std::int64_t n = x.nrow();
  const int d = x.ncol();
  PartEngines pe;
  pe.blocks.resize(parts);
  std::vector<double> shift(d, 0.0);
  if (single) gk::single_shift(x.begin(), n, d, shift.data());
  for (int p = 0; p < parts; ++p) {
    const std::int64_t lo = n * p / parts, hi = n * (p + 1) / parts;
    if (hi == lo) continue;
    pe.blocks[p].resize(static_cast<std::size_t>(hi - lo) * d);
    for (int j = 0; j < d; ++j)
      std::copy(x.begin() + n * j + lo, x.begin() + n * j + hi, pe.blocks[p].begin() + (hi - lo) * j);
    gk::HostData data;
    data.x = pe.blocks[p].data();
    data.n = hi - lo;
    data.d = d;
    pe.owned.push_back(make_engine(data, engine, single, threads, device, Rcpp::List(), single ? shift.data() : nullptr));
    pe.engines.push_back(pe.owned.back().get());
  }
  return pe;
}

// An R integer vector of n labels, not initialised (an engine writes them
// all), advised to use huge pages where large (labels.h).
inline Rcpp::IntegerVector label_vector(R_xlen_t n) {
  Rcpp::IntegerVector out(Rcpp::no_init(n));
  if (n) advise_huge_pages(out.begin(), static_cast<std::size_t>(n) * sizeof(int));
  return out;
}

// The labels as an R integer vector, copied by `threads` threads
// (copy_labels).
inline Rcpp::IntegerVector int_vector(const Labels& v, int threads = 1) {
  Rcpp::IntegerVector out = label_vector(static_cast<R_xlen_t>(v.size()));
  copy_labels(out.begin(), v.data(), v.size(), threads);
  return out;
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
