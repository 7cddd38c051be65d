// nonfinite.cpp: see nonfinite.h.
#include "nonfinite.h"

#include <algorithm>

#include "engine.h"
#include "threads.h"

namespace gk {

std::int64_t first_nonfinite(const double* x, std::int64_t len, int threads) {
  const int nt = static_cast<int>(std::min<std::int64_t>(resolve_threads(threads), len / 65536 + 1));
  std::int64_t first = len;
  // Parallel chunks; the smallest bad index wins.
#pragma omp parallel for num_threads(nt) schedule(static) reduction(min : first)
  for (int t = 0; t < nt; ++t) {
    const std::int64_t lo = len * t / nt, hi = len * (t + 1) / nt;
    const std::int64_t i = first_nonfinite_in(x, lo, hi);
    if (i < hi) first = std::min(first, i);
  }
  return first;
}

void check_finite(const double* x, std::int64_t n, int d, int threads) {
  const std::int64_t len = n * d;
  const std::int64_t bad = first_nonfinite(x, len, threads);
  if (bad < len) throw NonFiniteData(bad);
}

}  // namespace gk
