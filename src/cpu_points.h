// cpu_points.h: the rows that the CPU engine's initialisation passes read
// (src/cpu_init.cpp): x in host memory, read in place as one block, or the
// blocks of a RowReader (engine.h), read again at every pass (the streamed
// CPU engine, src/cpu_stream_engine.cpp).  The passes go block by block in
// row order; every block starts at a multiple of GK_SUM_ARITY rows, so the
// level-1 nodes of the sum trees of src/parity.h never straddle two blocks
// and the sums have the same bits however the rows come.  Plain C++, no R.
#ifndef GPUKMEANS_CPU_POINTS_H
#define GPUKMEANS_CPU_POINTS_H

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <vector>

#include "engine.h"
#include "parity.h"

namespace gk {

class CpuPoints {
 public:
  // fn(first, rows, xb, ld): rows [first, first + rows), row first + i,
  // column c at xb[i + c ld].
  using BlockFn = std::function<void(std::int64_t first, std::int64_t rows, const double* xb, std::int64_t ld)>;
  virtual ~CpuPoints() = default;
  virtual std::int64_t n() const = 0;
  virtual int d() const = 0;
  // fn for each block, in row order.
  virtual void for_each_block(const BlockFn& fn) const = 0;
  // Rows idx[0 .. m) (0-based) into out, row-major (m x d).
  virtual void rows_row_major(const std::int64_t* idx, std::int64_t m, double* out) const = 0;
};

// x (n x d, column-major) in host memory: one block.
class HostPoints final : public CpuPoints {
 public:
  HostPoints(const double* x, std::int64_t n, int d) : x_(x), n_(n), d_(d) {}
  std::int64_t n() const override { return n_; }
  int d() const override { return d_; }
  void for_each_block(const BlockFn& fn) const override {
    if (n_ > 0) fn(0, n_, x_, n_);
  }
  void rows_row_major(const std::int64_t* idx, std::int64_t m, double* out) const override {
    for (std::int64_t q = 0; q < m; ++q)
      for (int c = 0; c < d_; ++c) out[q * d_ + c] = x_[idx[q] + static_cast<std::int64_t>(c) * n_];
  }

 private:
  const double* x_;
  std::int64_t n_;
  int d_;
};

// The rows of a reader, in blocks of its block_rows() (at most max_rows)
// rounded down to a multiple of GK_SUM_ARITY (at least one node), into a
// buffer of its own.
class ReaderPoints final : public CpuPoints {
 public:
  ReaderPoints(RowReader& reader, std::int64_t n, int d, std::int64_t max_rows = INT64_MAX)
      : reader_(reader), n_(n), d_(d) {
    const std::int64_t want = std::max<std::int64_t>(std::min(reader.block_rows(), max_rows), GK_SUM_ARITY);
    rows_ = std::min<std::int64_t>(n, want / GK_SUM_ARITY * GK_SUM_ARITY);
    if (rows_ < 1) rows_ = 1;
  }
  std::int64_t n() const override { return n_; }
  int d() const override { return d_; }
  std::int64_t block_rows() const { return rows_; }
  std::int64_t blocks() const { return n_ == 0 ? 0 : (n_ + rows_ - 1) / rows_; }
  void for_each_block(const BlockFn& fn) const override {
    buffer_.resize(static_cast<std::size_t>(rows_) * d_);
    for (std::int64_t first = 0; first < n_; first += rows_) {
      const std::int64_t rows = std::min(rows_, n_ - first);
      reader_.block(first, rows, buffer_.data());
      fn(first, rows, buffer_.data(), rows);
    }
  }
  void rows_row_major(const std::int64_t* idx, std::int64_t m, double* out) const override {
    std::vector<double> col(static_cast<std::size_t>(m) * d_);  // the reader's m x d, column-major
    if (m > 0) reader_.rows(idx, m, col.data());
    for (std::int64_t q = 0; q < m; ++q)
      for (int c = 0; c < d_; ++c) out[q * d_ + c] = col[q + static_cast<std::size_t>(c) * m];
  }

 private:
  RowReader& reader_;
  std::int64_t n_;
  int d_;
  std::int64_t rows_;
  mutable std::vector<double> buffer_;
};

}  // namespace gk

#endif
