// row_block.h: rows [a, a + nb) of a column-major matrix whose columns are
// `ld` rows apart (x itself: ld = n), copied into a contiguous nb x d block
// by up to `threads` host threads (0: as many as the machine has), each
// taking whole 4 MiB pieces of columns: the first touch of a fresh block of
// gigabytes costs more than the copy on one thread.  Used where an engine
// needs contiguous columns of a block of a larger matrix (several devices,
// src/multi_engine.cpp; the CUDA engine's upload and host passes); and
// the inverse, a block written into rows of a larger matrix (put_row_block:
// a source's blocks into its dense matrix, src/dense_fill.cpp, or into a
// part's copy of its rows).  Plain C++, header only (the CUDA host code
// includes it too).
#ifndef GPUKMEANS_ROW_BLOCK_H
#define GPUKMEANS_ROW_BLOCK_H

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace gk {

inline void copy_row_block(const double* x, std::int64_t ld, int d, std::int64_t a, std::int64_t nb, double* out,
                           int threads) {
  const std::int64_t piece = std::int64_t(1) << 19;  // doubles
  const std::int64_t per_col = (nb + piece - 1) / piece, tasks = per_col * d;
  if (tasks == 0) return;
  auto run = [&](std::int64_t t0, std::int64_t t1) {
    for (std::int64_t t = t0; t < t1; ++t) {
      const std::int64_t j = t / per_col, r0 = (t % per_col) * piece, len = std::min(piece, nb - r0);
      std::copy(x + ld * j + a + r0, x + ld * j + a + r0 + len, out + nb * j + r0);
    }
  };
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int nt = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(threads, tasks)));
  std::vector<std::thread> pool;
  for (int i = 1; i < nt; ++i) {
    try {
      pool.emplace_back(run, tasks * i / nt, tasks * (i + 1) / nt);
    } catch (...) {  // no thread: this one copies that share too
      run(tasks * i / nt, tasks * (i + 1) / nt);
    }
  }
  run(0, tasks / nt);
  for (std::thread& t : pool) t.join();
}

// The rows x d block `block` (column-major, contiguous) into rows [first,
// first + rows) of `out`, a column-major matrix whose columns are ld rows
// apart: one copy a column.
inline void put_row_block(const double* block, std::int64_t rows, int d, double* out, std::int64_t ld,
                          std::int64_t first) {
  for (int j = 0; j < d; ++j) std::copy(block + rows * j, block + rows * (j + 1), out + ld * j + first);
}

}  // namespace gk

#endif
