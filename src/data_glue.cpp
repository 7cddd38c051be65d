// data_glue.cpp: small data helpers for R/ (checks, distinct rows), the
// CUDA device query and the parity constants R needs.
#include <Rcpp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "distinct_rows.h"
#include "reader_blocks.h"
#include "engine.h"
#include "nonfinite.h"
#include "r_boundary.h"
#include "row_keys.h"
#include "source_glue.h"
#include "parity.h"
#include "threads.h"

// 1-based index of the first NA, NaN or infinite value (column-major), or 0
// (src/nonfinite.h).
// [[Rcpp::export(rng = false)]]
double gk_first_nonfinite(Rcpp::NumericMatrix x, int threads) {
  const R_xlen_t len = x.size();
  const std::int64_t first = gk::first_nonfinite(x.begin(), len, threads);
  return first < len ? static_cast<double>(first + 1) : 0.0;
}

// 1-based indices of the distinct rows of x in order of first occurrence:
// the rows unique(x) keeps, found with hash tables instead of by pasting
// (src/distinct_rows.h), by up to `threads` threads.
// [[Rcpp::export(rng = false)]]
Rcpp::IntegerVector gk_unique_rows(Rcpp::NumericMatrix x, int threads = 1) {
  const std::vector<std::int32_t> keep = gk::distinct_matrix_rows(x.begin(), x.nrow(), x.ncol(), threads);
  Rcpp::IntegerVector out(keep.size());
  for (std::size_t q = 0; q < keep.size(); ++q) out[q] = keep[q] + 1;
  return out;
}

// The same for a matrix source read block by block (a gk_reader,
// src/source_glue.h; R/matrix_sources.R), by up to `threads` threads.
// [[Rcpp::export(rng = false)]]
Rcpp::IntegerVector gk_source_unique_rows(Rcpp::List reader, int threads) {
  return gk::guarded([&] {
    gk::SourceReader s(reader, threads);
    const std::vector<std::int64_t> keep = gk::distinct_rows(*s.reader, s.n, s.d, threads);
    Rcpp::IntegerVector out(keep.size());
    for (std::size_t q = 0; q < keep.size(); ++q) out[q] = static_cast<int>(keep[q] + 1);
    return out;
  });
}

// What the CUDA side says about itself and its devices.
// [[Rcpp::export(rng = false)]]
Rcpp::List gk_cuda_info_cpp() {
  const gk::CudaInfo info = gk::cuda_info();
  const int nd = static_cast<int>(info.devices.size());
  Rcpp::IntegerVector id(nd), mps(nd);
  Rcpp::LogicalVector usable(nd);
  Rcpp::CharacterVector name(nd), cc(nd), why(nd);
  Rcpp::NumericVector total(nd), free_mem(nd);
  for (int i = 0; i < nd; ++i) {
    const gk::CudaDevice& dev = info.devices[i];
    id[i] = i;
    name[i] = dev.ok ? Rcpp::String(dev.name) : Rcpp::String(NA_STRING);
    cc[i] = dev.ok ? Rcpp::String(std::to_string(dev.major) + "." + std::to_string(dev.minor))
                   : Rcpp::String(NA_STRING);
    total[i] = dev.ok ? dev.total_memory : NA_REAL;
    free_mem[i] = dev.ok ? dev.free_memory : NA_REAL;
    mps[i] = dev.ok ? dev.multiprocessors : NA_INTEGER;
    usable[i] = dev.usable;
    why[i] = dev.why;
  }
  Rcpp::DataFrame devices = Rcpp::DataFrame::create(
      Rcpp::_["id"] = id, Rcpp::_["name"] = name, Rcpp::_["compute_capability"] = cc,
      Rcpp::_["memory_total"] = total, Rcpp::_["memory_free"] = free_mem,
      Rcpp::_["multiprocessors"] = mps, Rcpp::_["usable"] = usable, Rcpp::_["why"] = why,
      Rcpp::_["stringsAsFactors"] = false);
  return Rcpp::List::create(Rcpp::_["built"] = info.built, Rcpp::_["runtime_version"] = info.runtime_version,
                            Rcpp::_["driver_version"] = info.driver_version,
                            Rcpp::_["device_count"] = info.device_count, Rcpp::_["message"] = info.message,
                            Rcpp::_["devices"] = devices);
}

// Threads the CPU engine uses when told "all".
// [[Rcpp::export(rng = false)]]
int gk_cpu_threads_cpp() { return gk::resolve_threads(0); }

// Candidates per greedy k-means++ step for k clusters (src/parity.h): R draws
// that many uniforms per step (R/starts.R).
// [[Rcpp::export(rng = false)]]
int gk_greedy_candidates(int k) { return gk::greedy_candidates(k); }

// Frees the pinned buffers kept between CUDA fits (R/backend.R: an exit
// finalizer).
// [[Rcpp::export(rng = false)]]
void gk_cuda_release_kept_cpp() { gk::cuda_release_kept(); }

// Internal (tests): a kernel that traps must come back as an R error.
// [[Rcpp::export(rng = false)]]
void gk_cuda_fault_test_cpp(int device) {
  gk::guarded([&] { gk::cuda_fault_test(device); });
}

// The 1-based (column-major) place of the first NA, NaN or infinite value of
// a matrix source read block by block (a gk_reader), or 0: what
// gk_first_nonfinite() gives for its dense matrix.
// [[Rcpp::export(rng = false)]]
double gk_source_first_nonfinite(Rcpp::List reader, int threads) {
  return gk::guarded([&] {
    gk::SourceReader s(reader, threads);
    return static_cast<double>(gk::reader_first_nonfinite(*s.reader, s.n, s.d, 0, s.n, threads) + 1);
  });
}
