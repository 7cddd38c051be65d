// nonfinite.h: where x holds NA, NaN or an infinite value.  The check of
// the data R does before a fit (gk_first_nonfinite, R/input.R) and the one
// engines do when R leaves it to them (HostData::finite) find the same
// place: the first such value in column-major order.
#ifndef GPUKMEANS_NONFINITE_H
#define GPUKMEANS_NONFINITE_H

#include <cstdint>

namespace gk {

// x - x is 0 for finite x and NaN for NA, NaN and +-Inf.
inline bool is_nonfinite(double v) { return v - v != 0.0; }

// The first t in [a, b) with x[t] not finite, or b.
inline std::int64_t first_nonfinite_in(const double* x, std::int64_t a, std::int64_t b) {
  for (std::int64_t t = a; t < b; ++t)
    if (is_nonfinite(x[t])) return t;
  return b;
}

// The first t in [0, len) with x[t] not finite, or len; by up to `threads`
// OpenMP threads (src/nonfinite.cpp).
std::int64_t first_nonfinite(const double* x, std::int64_t len, int threads);

// Throws NonFiniteData (engine.h) for the first value of the n x d matrix x
// that is not finite, by up to `threads` threads; engines call it for data
// whose HostData::finite is false.
void check_finite(const double* x, std::int64_t n, int d, int threads);

}  // namespace gk

#endif
