// dense_reader.h: the rows of a dense column-major double matrix in host
// memory that R does not hold as a matrix (package Matrix's dgeMatrix: its
// x slot) as a RowReader (engine.h), read in place.  The glue hands the
// engines the values themselves (HostData::x, src/fit_glue.cpp); the reader
// serves what reads a source by its reader (its distinct rows, its first
// value that is not finite, src/data_glue.cpp).  Plain C++, no R.
#ifndef GPUKMEANS_DENSE_READER_H
#define GPUKMEANS_DENSE_READER_H

#include <algorithm>
#include <cstdint>

#include "engine.h"
#include "threads.h"

namespace gk {

class DenseReader : public RowReader {
 public:
  // x: n x d doubles, column-major; must outlive the reader.
  DenseReader(const double* x, std::int64_t n, int d, std::int64_t block_rows, int threads)
      : x_(x), n_(n), d_(d), block_rows_(block_rows), threads_(threads) {}
  std::int64_t block_rows() const override { return block_rows_; }
  bool reads_again_cheaply() const override { return true; }
  bool concurrent() const override { return true; }
  void block(std::int64_t first, std::int64_t rows, double* out) override {
    if (first < 0 || rows < 0 || first + rows > n_) throw EngineError(EngineError::Kind::kInvalid, "rows out of x");
#pragma omp parallel for num_threads(threads_for(threads_, d_)) schedule(dynamic, 1)
    for (int j = 0; j < d_; ++j) {
      const double* col = x_ + n_ * j + first;
      std::copy(col, col + rows, out + rows * j);
    }
  }
  void rows(const std::int64_t* idx, std::int64_t m, double* out) override {
    for (std::int64_t r = 0; r < m; ++r)
      if (idx[r] < 0 || idx[r] >= n_) throw EngineError(EngineError::Kind::kInvalid, "rows out of x");
#pragma omp parallel for num_threads(threads_for(threads_, d_)) schedule(dynamic, 1)
    for (int j = 0; j < d_; ++j)
      for (std::int64_t r = 0; r < m; ++r) out[r + m * j] = x_[idx[r] + n_ * j];
  }

 private:
  const double* x_;
  std::int64_t n_;
  int d_;
  std::int64_t block_rows_;
  int threads_;  // OpenMP threads (0: all), a column each
};

}  // namespace gk

#endif
