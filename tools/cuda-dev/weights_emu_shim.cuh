// weights_emu_shim.cuh: what src/cuda/detail/weighted_kernels.cuh takes from
// common.cuh, on the host (tools/cuda-dev/weights_emu.cpp): the bounds
// shim (threads, blocks, barriers, atomics, State, atomic_add128), plus
// atomicMax, __double_as_longlong, the dynamic shared memory of the block
// (g_smem; the Makefile rewrites the extern __shared__ declaration) and a
// small kLimbFlush, so that the limbs are flushed every few rows.
#pragma once
#include "bounds_emu_shim.cuh"

#include <cstring>

inline unsigned char* g_smem = nullptr;
inline long long __double_as_longlong(double v) {
  long long b;
  std::memcpy(&b, &v, 8);
  return b;
}
template <typename T>
inline T atomicMax(T* p, T v) {
  std::atomic_ref<T> a(*p);
  T old = a.load();
  while (old < v && !a.compare_exchange_weak(old, v)) {
  }
  return old;
}
namespace gk {
const int kLimbFlush = 1024;  // 32768 on the device: flushes every 4 rows a thread here
}
// the whole-warp atomics (warp_sums.cuh) on the stand-ins above
#include "cuda/detail/warp_sums.cuh"
