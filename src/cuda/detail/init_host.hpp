// detail/init_host.hpp: host-side pieces shared by init_pp.cu and init_par.cu:
// a stream freed on every path, launch sizes, and the storage of
// the sum trees' upper levels.
#ifndef GPUKMEANS_DETAIL_INIT_HOST_HPP
#define GPUKMEANS_DETAIL_INIT_HOST_HPP

#include <algorithm>
#include <vector>

#include "init_tree.cuh"

namespace gk {
namespace init {

struct Stream {
  cudaStream_t s = nullptr;
  ~Stream() {
    if (s) cudaStreamDestroy(s);
  }
};

inline unsigned int blocks_for(long long m, int threads) {
  return (unsigned int)std::max<long long>(1, (m + threads - 1) / threads);
}

// Levels 1..T of `batches` sum trees over n leaves each.
struct TreeBufs {
  std::vector<long long> len;  // len[t], t = 0..T
  DevBuf<double> lv[kMaxLevels];
  int batches = 1;
  int T = 0;
  cudaError_t alloc(long long n, int b) {
    batches = b;
    len.assign(1, n);
    while (len.back() > 1) len.push_back(level_up(len.back()));
    T = (int)len.size() - 1;
    if (T >= kMaxLevels) return cudaErrorInvalidValue;
    for (int t = 1; t <= T; ++t) {
      cudaError_t e = lv[t].alloc((size_t)len[t] * b);
      if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
  }
  // Levels 2..t_end-1 (default: 2..T) of the first nb trees from their
  // level 1 (already written).
  cudaError_t build(cudaStream_t s, int nb, int t_end = -1) {
    if (t_end < 0) t_end = T + 1;
    for (int t = 2; t < t_end; ++t)
      k_tree_level<<<blocks_for(len[t] * nb, 256), 256, 0, s>>>(lv[t - 1].p, len[t - 1], lv[t].p, len[t], nb);
    return cudaGetLastError();
  }
  Levels levels() const {
    Levels L;
    for (int t = 0; t < kMaxLevels; ++t) {
      L.p[t] = nullptr;
      L.len[t] = 0;
    }
    for (int t = 0; t <= T; ++t) L.len[t] = len[t];
    for (int t = 1; t <= T; ++t) L.p[t] = lv[t].p;
    L.T = T;
    return L;
  }
  // Level 1 (written by the kernels) and the tops (tree b at top() + b).
  double *level1() const { return T >= 1 ? lv[1].p : nullptr; }
  double *top() const { return T >= 1 ? lv[T].p : nullptr; }
};

}  // namespace init
}  // namespace gk

#endif
