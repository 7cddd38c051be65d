// cpu_block.h: the CPU engine's blocked distances, shared by plain Lloyd
// (cpu_lloyd.cpp) and the bounded iterations (cpu_bounds.cpp), so that both
// compute the same bits by construction.
//
// Points are taken B at a time (B = block_size<T>(d) <= kMaxBlock), their
// coordinates read column by column (x[c * n + i0 + p], x column-major);
// the squared distance of each point of a block to one center is summed over
// the coordinates in order, each term rounded: stats' arithmetic.  Include
// it after the translation unit's fp-contract(off) pragma (as both files
// do): the terms must never be fused.
#ifndef GPUKMEANS_CPU_BLOCK_H
#define GPUKMEANS_CPU_BLOCK_H

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace gk {

constexpr int kMaxBlock = 256;

// Points per block: keep a block's coordinates (B x d) within ~32 KiB; a
// multiple of 16, the screen's tile (cpu_screen.h).
template <typename T>
int block_size(int d) {
  int b = static_cast<int>(32768 / (sizeof(T) * static_cast<std::size_t>(d)));
  b = std::max(16, std::min(kMaxBlock, b));
  return b - b % 16;
}

// dd[p] = the squared distance of point i0 + p to the center cj (d values),
// p < B.
template <typename T>
inline __attribute__((always_inline)) void block_sq_distances(const T* __restrict x, std::int64_t n, int d,
                                                              const T* __restrict cj, std::int64_t i0, int B,
                                                              T* __restrict dd) {
  {
    const T c0 = cj[0];
    const T* xc = x + i0;
#pragma omp simd
    for (int p = 0; p < B; ++p) {
      T t = xc[p] - c0;
      dd[p] = t * t;  // stats: 0.0 + t*t, which is t*t exactly
    }
  }
  for (int c = 1; c < d; ++c) {
    const T cc = cj[c];
    const T* xc = x + static_cast<std::int64_t>(c) * n + i0;
#pragma omp simd
    for (int p = 0; p < B; ++p) {
      T t = xc[p] - cc;
      dd[p] += t * t;
    }
  }
}

// dd[p] = the squared distance of point i0 + p to its own center
// cen + own[p] * d (cen: k x d row-major), p < B: the same operations as
// block_sq_distances() for that center.
template <typename T>
inline __attribute__((always_inline)) void block_sq_distances_own(const T* __restrict x, std::int64_t n, int d,
                                                                  const T* __restrict cen,
                                                                  const int* __restrict own, std::int64_t i0,
                                                                  int B, T* __restrict dd) {
  {
    const T* xc = x + i0;
#pragma omp simd
    for (int p = 0; p < B; ++p) {
      T t = xc[p] - cen[static_cast<std::int64_t>(own[p]) * d];
      dd[p] = t * t;
    }
  }
  for (int c = 1; c < d; ++c) {
    const T* xc = x + static_cast<std::int64_t>(c) * n + i0;
#pragma omp simd
    for (int p = 0; p < B; ++p) {
      T t = xc[p] - cen[static_cast<std::int64_t>(own[p]) * d + c];
      dd[p] += t * t;
    }
  }
}

}  // namespace gk

#endif
