// reader_blocks.h: what the users of a RowReader (engine.h) share: its rows
// block by block in row order, the first value that is not finite, totss'
// two passes, the single-precision shift from the rows it reads, and a
// reader of a range of another's rows (a part of several devices,
// src/multi_engine.cpp).  Plain C++, no R, no CUDA.
#ifndef GPUKMEANS_READER_BLOCKS_H
#define GPUKMEANS_READER_BLOCKS_H

#include <algorithm>
#include <cstdint>
#include <vector>

#include "column_sum.h"
#include "engine.h"
#include "nonfinite.h"
#include "single_shift.h"

namespace gk {

// The rows of a block of `reader`: its block_rows(), within [1, n].
inline std::int64_t reader_block_rows(const RowReader& reader, std::int64_t n) {
  return std::max<std::int64_t>(1, std::min(n, reader.block_rows()));
}

// fn(first, rows, block) for the blocks of rows [0, n) of `reader` (d
// columns), in row order; block: rows x d doubles, column-major, one buffer
// reused.
template <typename Fn>
void for_each_block(RowReader& reader, std::int64_t n, int d, Fn fn) {
  const std::int64_t B = reader_block_rows(reader, n);
  std::vector<double> block(static_cast<std::size_t>(B) * d);
  for (std::int64_t first = 0; first < n; first += B) {
    const std::int64_t rows = std::min(B, n - first);
    reader.block(first, rows, block.data());
    fn(first, rows, block.data());
  }
}

// The place in x (n x d, column-major) of element e of the block of `rows`
// rows that starts at row `first`.
inline std::int64_t block_index_in_x(std::int64_t e, std::int64_t first, std::int64_t rows, std::int64_t n) {
  return first + e % rows + n * (e / rows);
}

// The earlier of two places in x, where -1 stands for none.
inline std::int64_t earlier_place(std::int64_t a, std::int64_t b) {
  if (a < 0) return b;
  return b < 0 ? a : std::min(a, b);
}

// The place in x (n_x rows, column-major) of the first value that is not
// finite in a block of `rows` rows (d columns, column-major) that holds x's
// rows [first, first + rows); -1 where all are finite.  By up to `threads`
// threads.
inline std::int64_t block_first_nonfinite(const double* block, std::int64_t first, std::int64_t rows, int d,
                                          std::int64_t n_x, int threads) {
  const std::int64_t len = rows * d, e = first_nonfinite(block, len, threads);
  return e < len ? block_index_in_x(e, first, rows, n_x) : -1;
}

// The place in x (n_x rows, column-major) of the first value that is not
// finite among rows [offset, offset + n) of x, which are the reader's rows
// [0, n) (d columns): the least over its blocks (the first in x's order may
// be in any block); -1 where all are finite.  By up to `threads` threads.
inline std::int64_t reader_first_nonfinite(RowReader& reader, std::int64_t n, int d, std::int64_t offset,
                                           std::int64_t n_x, int threads) {
  std::int64_t bad = -1;
  for_each_block(reader, n, d, [&](std::int64_t first, std::int64_t rows, const double* block) {
    bad = earlier_place(bad, block_first_nonfinite(block, offset + first, rows, d, n_x, threads));
  });
  return bad;
}

// totss' first pass over the reader's n rows (d columns): the column means
// as cpu_totss takes them (ColumnChunks, column_sum.h).  first_bad not
// NULL: the same pass also looks for the first value that is not finite
// (as reader_first_nonfinite, *first_bad its place in x, -1 for none);
// where there is one, no means (empty).
inline std::vector<double> reader_column_means(RowReader& reader, std::int64_t n, int d, int threads,
                                               std::int64_t* first_bad = nullptr) {
  ColumnChunks sums(n, d);
  std::int64_t bad = -1;
  for_each_block(reader, n, d, [&](std::int64_t first, std::int64_t rows, const double* block) {
    if (first_bad) bad = earlier_place(bad, block_first_nonfinite(block, first, rows, d, n, threads));
    if (bad < 0) sums.add_values(block, rows, threads);  // (after a bad value: only looking for an earlier one)
  });
  if (first_bad) *first_bad = bad;
  return bad < 0 ? sums.means() : std::vector<double>();
}

// totss' second pass: the squared deviations of the reader's n rows from
// `means` (d values), added up as cpu_totss adds them: its bits.
inline double reader_deviations_total(RowReader& reader, std::int64_t n, int d, const double* means, int threads) {
  ColumnChunks dev(n, d);
  for_each_block(reader, n, d, [&](std::int64_t, std::int64_t rows, const double* block) {
    dev.add_deviations(block, rows, means, threads);
  });
  return dev.total();
}

// The single-precision shift of the reader's n rows (single_shift.h), from
// the rows it is the mean of.
inline void reader_single_shift(RowReader& reader, std::int64_t n, int d, double* out) {
  const std::int64_t m = single_shift_count(n);
  std::vector<std::int64_t> idx(static_cast<std::size_t>(m));
  for (std::int64_t r = 0; r < m; ++r) idx[r] = single_shift_row(r, n);
  std::vector<double> v(static_cast<std::size_t>(m) * d);
  reader.rows(idx.data(), m, v.data());
  single_shift_mean(v.data(), m, m, d, out);
}

// Rows [first, first + n) of `all` as rows [0, n).
class RowRange : public RowReader {
 public:
  RowRange(RowReader& all, std::int64_t first, std::int64_t n) : all_(all), first_(first), n_(n) {}
  std::int64_t block_rows() const override { return all_.block_rows(); }
  void block(std::int64_t first, std::int64_t rows, double* out) override { all_.block(first_ + first, rows, out); }
  void rows(const std::int64_t* idx, std::int64_t m, double* out) override {
    std::vector<std::int64_t> at(idx, idx + m);
    for (std::int64_t& i : at) i += first_;
    all_.rows(at.data(), m, out);
  }
  bool reads_again_cheaply() const override { return all_.reads_again_cheaply(); }
  bool concurrent() const override { return all_.concurrent(); }
  std::int64_t first() const { return first_; }
  std::int64_t n() const { return n_; }

 private:
  RowReader& all_;
  std::int64_t first_, n_;
};

}  // namespace gk

#endif
