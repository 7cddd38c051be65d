// column_sum.h: a column's mean as every engine's total sum of squares
// takes it (cpu_totss, the first of its two passes): the column cut into
// chunks of kTotssChunkRows rows, each chunk's values added in row order to
// a long double from 0, the chunks' sums added in order and divided by n.
// Any split of a column at chunk boundaries gives the same bits, so the pass
// runs on any number of threads, and the CUDA engine's staged upload adds
// the values up as it copies them (its totss then needs only the second
// pass).  R's colMeans() adds a column in one long double chain: the same
// mean to within long double rounding (about 2^-64 relative), but one chain
// of 1e8 values took 0.2 s, and 16 columns kept 16 of a 32-thread host's
// threads busy past a large fit's device work (tools/cuda-dev/LOG.md,
// thirteenth session).  Plain C++ (no R, no CUDA).
#ifndef GPUKMEANS_COLUMN_SUM_H
#define GPUKMEANS_COLUMN_SUM_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gk {

// The chunks' length (rows).  The second pass of totss adds the squared
// deviations in the same chunks; the weighted totss (cpu_weights.cpp)
// splits whole weights' runs at the same places of the replicated rows.
constexpr std::int64_t kTotssChunkRows = std::int64_t(1) << 16;

// Chunks of a column of n rows (the last may be shorter; one, empty, for n = 0).
inline std::int64_t totss_chunks(std::int64_t n) {
  return n > kTotssChunkRows ? (n + kTotssChunkRows - 1) / kTotssChunkRows : 1;
}

// The terms of totss' two passes, a double each, added in long double: a
// value (the column sum, for the mean) and its squared deviation from the
// mean, (v - m)^2 rounded to double.  One definition for cpu_totss and the
// weighted totss (cpu_weights.cpp), whose whole weights give the bits of
// the replicated rows only while both add the same terms.
struct ColumnValue {
  double operator()(double v) const { return v; }
};
struct SquaredDeviation {
  double m;
  double operator()(double v) const {
    const double t = v - m;
    return t * t;
  }
};

// A column's mean from its chunks' sums (in chunk order).
inline double chunked_mean(const long double* sums, std::int64_t chunks, std::int64_t n) {
  long double total = 0.0L;
  for (std::int64_t q = 0; q < chunks; ++q) total += sums[q];
  return static_cast<double>(total / n);
}

// The chunks' sums of every column's terms over blocks of rows that come
// in row order, of any length (a data set read block by block: the CUDA
// engine's rows from a reader, src/cuda_engine.cpp take_rows; several devices').  A chunk cut by a block's
// end goes on in the next block from its open sum: the same additions in
// the same order as cpu_totss' passes over whole columns, so the same bits.
// (src/column_chunks.cpp; the columns by up to `threads` OpenMP threads)
class ColumnChunks {
 public:
  ColumnChunks(std::int64_t n, int d);
  // The values of rows [next, next + rows) (a rows x d column-major block;
  // next: where the last block ended), as values (the first pass) or as
  // squared deviations from means (the second).
  void add_values(const double* block, std::int64_t rows, int threads);
  void add_deviations(const double* block, std::int64_t rows, const double* means, int threads);
  // Once every row is in: the column means (chunked_mean), or the sum of
  // all the columns' chunks (cpu_totss' total).
  std::vector<double> means() const;
  double total() const;

 private:
  template <typename TermOf>
  void add(const double* block, std::int64_t rows, TermOf term_of, int threads);
  std::int64_t n_, chunks_, next_ = 0;
  int d_;
  std::vector<long double> sum_;  // d x chunks, column-major
};

}  // namespace gk

#endif
