// bounds_emu_shim.cuh: what src/cuda/detail/bounds_kernels.cuh takes from
// common.cuh, on the host (tools/cuda-dev/bounds_emu.cpp): the quality
// shim's built-ins (threads, blocks, __syncthreads), plus directed rounding
// (_ru/_rd through fesetround, the FP environment being per thread),
// __ballot_sync through a per-warp barrier, atomics through std::atomic_ref,
// and the device state and fixed-point helpers.
#pragma once
#include "quality_emu_shim.cuh"

#include <algorithm>
#include <atomic>
#include <cfenv>
#include <math.h>
#include <vector>

#include "fixed_point.h"

// ---- directed rounding (the compiler must not fold: -frounding-math) -------
template <int Mode, typename F>
inline auto rounded(F f) {
  const int old = std::fegetround();
  std::fesetround(Mode);
  volatile auto r = f();
  std::fesetround(old);
  return r;
}
inline double __dadd_ru(double a, double b) { return rounded<FE_UPWARD>([&] { return a + b; }); }
inline double __dadd_rd(double a, double b) { return rounded<FE_DOWNWARD>([&] { return a + b; }); }
inline double __dsub_ru(double a, double b) { return rounded<FE_UPWARD>([&] { return a - b; }); }
inline double __dsub_rd(double a, double b) { return rounded<FE_DOWNWARD>([&] { return a - b; }); }
inline double __dmul_ru(double a, double b) { return rounded<FE_UPWARD>([&] { return a * b; }); }
inline double __dmul_rd(double a, double b) { return rounded<FE_DOWNWARD>([&] { return a * b; }); }
inline double __dsqrt_ru(double a) { return rounded<FE_UPWARD>([&] { return std::sqrt(a); }); }
inline double __dsqrt_rd(double a) { return rounded<FE_DOWNWARD>([&] { return std::sqrt(a); }); }
inline float __double2float_ru(double a) { return rounded<FE_UPWARD>([&] { return (float)a; }); }
inline float __double2float_rd(double a) { return rounded<FE_DOWNWARD>([&] { return (float)a; }); }

// ---- warps: a barrier per warp of the running block ------------------------
struct EmuWarp {
  std::atomic<unsigned> mask{0};
  std::barrier<> bar{32};
  unsigned long long slot[32] = {};  // each lane's value in the exchanges below
};
inline std::vector<EmuWarp>* g_warps = nullptr;
inline unsigned __ballot_sync(unsigned, bool p) {
  EmuWarp& w = (*g_warps)[threadIdx.x / 32];
  if (p) w.mask.fetch_or(1u << (threadIdx.x % 32));
  w.bar.arrive_and_wait();
  const unsigned m = w.mask.load();
  w.bar.arrive_and_wait();
  if (threadIdx.x % 32 == 0) w.mask.store(0);
  w.bar.arrive_and_wait();
  return m;
}
inline int __popc(unsigned v) { return __builtin_popcount(v); }
inline bool __all_sync(unsigned, bool p) { return __ballot_sync(0xffffffffu, p) == 0xffffffffu; }
// Every lane's value v, then f(the 32 values) for every lane (whole warps).
template <typename T, typename F>
inline T emu_exchange(T v, F f) {
  EmuWarp& w = (*g_warps)[threadIdx.x / 32];
  w.slot[threadIdx.x % 32] = (unsigned long long)v;
  w.bar.arrive_and_wait();
  const T r = f(w.slot);
  w.bar.arrive_and_wait();
  return r;
}
inline int __shfl_sync(unsigned, int v, int src) {
  return emu_exchange(v, [src](const unsigned long long* s) { return (int)s[src]; });
}
inline unsigned __reduce_add_sync(unsigned, unsigned v) {
  return emu_exchange(v, [](const unsigned long long* s) {
    unsigned t = 0;
    for (int l = 0; l < 32; ++l) t += (unsigned)s[l];
    return t;
  });
}
inline unsigned __reduce_max_sync(unsigned, unsigned v) {
  return emu_exchange(v, [](const unsigned long long* s) {
    unsigned t = 0;
    for (int l = 0; l < 32; ++l) t = std::max(t, (unsigned)s[l]);
    return t;
  });
}

// ---- atomics -----------------------------------------------------------------
template <typename T>
inline T atomicAdd(T* p, T v) { return std::atomic_ref<T>(*p).fetch_add(v); }
template <typename T>
inline T atomicSub(T* p, T v) { return std::atomic_ref<T>(*p).fetch_sub(v); }
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }

namespace gk {

struct State {  // as in common.cuh
  u64 changed, last_changed;
  int flag, iter_done, conv_iter;
  unsigned int ticket;
  u64 chg[2], active, active_sum;
};

inline void atomic_add128(u64* p, u64 lo, u64 hi) {
  u64 old = atomicAdd(p, lo);
  u64 carry = (old + lo < old) ? 1ULL : 0ULL;
  u64 h = hi + carry;
  if (h) atomicAdd(p + 1, h);
}
inline void atomic_add_fixed(u64* p, long long q) { atomic_add128(p, (u64)q, q < 0 ? ~0ULL : 0ULL); }
inline bool fit_finished(const State* st, int max_iter) { return st && (st->flag || st->iter_done >= max_iter); }
inline bool last_block_to_finish(State* st) {  // as in common.cuh
  __shared__ int last;
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    last = atomicAdd(&st->ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  return last;
}

}  // namespace gk

// the exact distance and the labels' rule, as the kernels have them
#include "cuda/detail/point_rules.cuh"
