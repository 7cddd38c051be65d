// column_sum.h: a column's mean as R's colMeans() computes it (the values
// added in row order to a long double, the sum divided by n), the first
// pass of every engine's total sum of squares (cpu_totss).  The CUDA
// engine's staged upload adds the values it copies, column by column in row
// order, so that its totss needs only the second pass: the same bits.
// Plain C++ (no R, no CUDA).
#ifndef GPUKMEANS_COLUMN_SUM_H
#define GPUKMEANS_COLUMN_SUM_H

#include <cstddef>
#include <cstdint>

namespace gk {

struct ColumnSum {
  long double s = 0.0L;
  void add(double v) { s += v; }
  void add(const double* p, std::size_t len) {
    for (std::size_t i = 0; i < len; ++i) s += p[i];
  }
  double mean(std::int64_t n) const { return static_cast<double>(s / n); }
};

// The second pass of totss adds the squared deviations of a column in
// chunks of this many rows (one long double sum a chunk, the chunks' sums
// then added in order): every thread has work whatever d is, with the same
// bits for any number of threads.  The weighted totss (cpu_weights.cpp)
// splits whole weights' runs at the same places of the replicated rows.
constexpr std::int64_t kTotssChunkRows = std::int64_t(1) << 16;

}  // namespace gk

#endif
