// column_chunks.cpp: ColumnChunks (column_sum.h), totss' two passes over
// blocks of rows that come one after the other.
#include <algorithm>
#include <stdexcept>

#include "column_sum.h"
#include "threads.h"

namespace gk {

ColumnChunks::ColumnChunks(std::int64_t n, int d)
    : n_(n), chunks_(totss_chunks(n)), d_(d), sum_(static_cast<std::size_t>(chunks_) * d, 0.0L) {}

template <typename TermOf>
void ColumnChunks::add(const double* block, std::int64_t rows, TermOf term_of, int threads) {
  if (rows < 0 || next_ + rows > n_) throw std::logic_error("ColumnChunks: more rows than the data set has");
  const std::int64_t r0 = next_;
#pragma omp parallel for num_threads(threads_for(threads, d_)) schedule(dynamic, 1)
  for (int c = 0; c < d_; ++c) {
    const double* col = block + static_cast<std::int64_t>(c) * rows;
    long double* out = sum_.data() + static_cast<std::size_t>(c) * chunks_;
    const auto term = term_of(c);
    for (std::int64_t r = r0; r < r0 + rows;) {
      const std::int64_t q = r / kTotssChunkRows;
      const std::int64_t end = std::min(r0 + rows, (q + 1) * kTotssChunkRows);
      long double s = out[q];  // (0 for a chunk's first row: chunk_terms' chain from its start)
      for (std::int64_t i = r; i < end; ++i) s += term(col[i - r0]);
      out[q] = s;
      r = end;
    }
  }
  next_ = r0 + rows;
}

void ColumnChunks::add_values(const double* block, std::int64_t rows, int threads) {
  add(block, rows, [](int) { return ColumnValue(); }, threads);
}

void ColumnChunks::add_deviations(const double* block, std::int64_t rows, const double* means, int threads) {
  add(block, rows, [means](int c) { return SquaredDeviation{means[c]}; }, threads);
}

std::vector<double> ColumnChunks::means() const {
  std::vector<double> m(d_);
  for (int c = 0; c < d_; ++c) m[c] = chunked_mean(sum_.data() + static_cast<std::size_t>(c) * chunks_, chunks_, n_);
  return m;
}

double ColumnChunks::total() const {
  long double total = 0.0L;
  for (int c = 0; c < d_; ++c) {
    long double col = 0.0L;
    for (std::int64_t q = 0; q < chunks_; ++q) col += sum_[static_cast<std::size_t>(c) * chunks_ + q];
    total += col;
  }
  return static_cast<double>(total);
}

}  // namespace gk
