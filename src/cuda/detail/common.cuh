// detail/common.cuh: status handling, device state, exact fixed-point sums.
//
// Internal to the CUDA engine (src/cuda); nothing here is seen by R.
#ifndef GPUKMEANS_DETAIL_COMMON_CUH
#define GPUKMEANS_DETAIL_COMMON_CUH

#include <cuda_runtime.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../gk_cuda.h"
#include "../../fixed_point.h"
#include "point_rules.cuh"
#include "warp_sums.cuh"

namespace gk {

// ---- status ---------------------------------------------------------------

inline void set_msg(char *err, size_t errlen, const char *fmt, ...) {
  if (!err || errlen == 0) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  err[errlen - 1] = '\0';
}

// Errors that mean "no usable CUDA device here" rather than a bug.
inline bool is_no_device(cudaError_t e) {
  switch (e) {
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInitializationError:
    case cudaErrorStubLibrary:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
    case cudaErrorDevicesUnavailable:
    case cudaErrorInvalidDevice:
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorUnsupportedPtxVersion:
      return true;
    default:
      return false;
  }
}

// Maps a CUDA error to a status and writes "what: CUDA text" into err.
inline int fail(cudaError_t e, const char *what, char *err, size_t errlen) {
  int st = GK_CUDA_ERROR;
  if (is_no_device(e)) st = GK_CUDA_NO_DEVICE;
  else if (e == cudaErrorMemoryAllocation) st = GK_CUDA_OUT_OF_MEMORY;
  set_msg(err, errlen, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
  return st;
}

// Returns from the enclosing function (which returns int status) on error.
#define GK_CHECK(call, what)                                  \
  do {                                                        \
    cudaError_t gk_e_ = (call);                               \
    if (gk_e_ != cudaSuccess) return ::gk::fail(gk_e_, (what), err, errlen); \
  } while (0)

inline double gib(double bytes) { return bytes / (1024.0 * 1024.0 * 1024.0); }

// ---- device buffers (freed on every path) -----------------------------------

template <typename T>
struct DevBuf {
  T *p = nullptr;
  size_t count = 0;
  DevBuf() {}
  DevBuf(const DevBuf &) = delete;
  DevBuf &operator=(const DevBuf &) = delete;
  ~DevBuf() { release(); }
  cudaError_t alloc(size_t n) {
    release();
    count = n;
    return cudaMalloc((void **)&p, (n ? n : 1) * sizeof(T));
  }
  void release() {
    if (p) cudaFree(p);
    p = nullptr;
    count = 0;
  }
  size_t bytes() const { return count * sizeof(T); }
};

// ---- iteration state kept on the device ---------------------------------------

// Written only by the finalize kernel's last block (and by the host between fits).
struct State {
  u64 changed;        // points that changed cluster in the current assignment step
  u64 last_changed;   // changed count of the last finished iteration
  int flag;           // 1 once an assignment step changed nothing (converged)
  int iter_done;      // iterations whose finalize step ran
  int conv_iter;      // 1-based iteration in which nothing changed
  unsigned int ticket;  // last-block detection in finalize
  u64 chg[2];           // persistent kernel: changed counts by iteration parity
  u64 active;           // bounded iterations: points whose bounds failed (this iteration)
  u64 active_sum;       // ... summed since the host last cleared it
  u64 df_points;        // small-d filter (double): points it ran, over the fit
  u64 df_exact;         // ... and those it gave exact distances
  u64 grid_seen;        // small-d grid of cells (cell_grid.cuh): points it ran, over the fit
  u64 grid_served;      // ... and those its cells' lists served (the others scanned every center)
  u64 moves;            // points k_moves_list listed in this iteration (Plan::delta)
  u64 fresh;            // 1: this iteration's carried sums are made afresh (k_moves_plan)
  u64 sums_iters;       // iterations that carried their sums (Plan::delta)
  u64 sums_added;       // ... and the points they added (those that moved, or all in a fresh pass)
};

// v summed over lanes 0..lane of the (full) warp.
template <typename T>
__device__ __forceinline__ T warp_inclusive_sum(T v, int lane) {
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const T u = __shfl_up_sync(0xffffffffu, v, o);
    if (lane >= o) v += u;
  }
  return v;
}

// ---- exact, order-independent sums: 128-bit fixed point --------------------
// to_fixed, from_fixed, fixed_scale, limb_scale, wss_scale, pow2 and
// round_fixed are in src/fixed_point.h (shared with the host drivers).

// 128-bit atomic add out of two 64-bit ones: exact modulo 2^128 in any order.
__device__ __forceinline__ void atomic_add128(u64 *p, u64 lo, u64 hi) {
  u64 old = atomicAdd(p, lo);
  u64 carry = (old + lo < old) ? 1ULL : 0ULL;
  u64 h = hi + carry;
  if (h) atomicAdd(p + 1, h);
}

// The signed 64-bit q added to a 128-bit accumulator (sign-extended).
__device__ __forceinline__ void atomic_add_fixed(u64 *p, long long q) {
  atomic_add128(p, (u64)q, q < 0 ? ~0ULL : 0ULL);
}

// ---- per-block sums with native 32-bit shared atomics ("limbs") ---------------
//
// 64-bit shared atomics are CAS loops on sm_90, so the per-block partial sums
// use four 32-bit counters per quantity instead.  A value v with |v| <= B < 2^e
// is rounded to the integer q = rint(v * 2^S), S = limb_scale(B) = 59 - e, so
// |q| <= 2^59; u = q + 2^59 (>= 0, <= 2^60) is split into 15-bit limbs (the
// top one 16 bits) added with atomicAdd(unsigned) into four counters.  A
// counter takes at most kLimbFlush additions of < 2^16 between flushes, so it
// cannot overflow; the flush rebuilds sum(q) = sum_l limb_l 2^(15 l) - cnt 2^59
// exactly and adds it into the global 128-bit accumulator (same scale S).
// Rounding v to 2^-S is below 2^-60 B: far under double rounding of a mean.
const int kLimbFlush = 32768;  // values per counter between flushes

// Limb l of entry e lives at s[e + l*m] (limb-major: lanes adding to
// different clusters hit different banks).  SUB (limb_atomic, warp_sums.cuh):
// the same limbs taken out again.
// The four 15-bit limbs of v's fixed-point value (round_fixed) plus 2^59:
// the layout limb_value reads back.
__device__ __forceinline__ void limb_parts(double v, double pow2s, unsigned int (&l)[4]) {
  const long long q = round_fixed(v, pow2s);
  const u64 u = (u64)(q + (1LL << 59));
  l[0] = (unsigned int)(u & 0x7fff);
  l[1] = (unsigned int)((u >> 15) & 0x7fff);
  l[2] = (unsigned int)((u >> 30) & 0x7fff);
  l[3] = (unsigned int)(u >> 45);
}
template <bool SUB>
__device__ __forceinline__ void limb_apply(unsigned int *s, size_t e, size_t m, double v, double pow2s) {
  unsigned int l[4];
  limb_parts(v, pow2s, l);
#pragma unroll
  for (int t = 0; t < 4; ++t) limb_atomic<SUB>(s + e + t * m, l[t]);
}
__device__ __forceinline__ void limb_add(unsigned int *s, size_t e, size_t m, double v, double pow2s) {
  limb_apply<false>(s, e, m, v, pow2s);
}
__device__ __forceinline__ void limb_sub(unsigned int *s, size_t e, size_t m, double v, double pow2s) {
  limb_apply<true>(s, e, m, v, pow2s);
}

// limb_apply for a warp whose 32 lanes all add to (or take from) entry e
// (warp_same): each limb summed across the warp (REDUX, sm_80+), then one
// atomic a limb from lane 0.  Exact: a limb is < 2^15, so its warp sum is <
// 2^20, and it stands for 32 of the kLimbFlush additions a counter allows.
template <bool SUB>
__device__ __forceinline__ void limb_apply_warp(unsigned int *s, size_t e, size_t m, double v, double pow2s) {
  unsigned int l[4];
  limb_parts(v, pow2s, l);
#pragma unroll
  for (int t = 0; t < 4; ++t) l[t] = __reduce_add_sync(0xffffffffu, l[t]);
  if ((threadIdx.x & 31) == 0) {
#pragma unroll
    for (int t = 0; t < 4; ++t) limb_atomic<SUB>(s + e + t * m, l[t]);
  }
}
// limb_apply_warp for the lanes of mask (their ballot of `on`), all naming
// entry e (group_same): each limb summed over them (the other lanes' parts
// 0), then one atomic a limb from the first of them.  The whole warp calls
// it.  Exact as limb_apply_warp: at most 32 parts of < 2^15 a limb.
template <bool SUB>
__device__ __forceinline__ void limb_apply_group(unsigned int *s, size_t e, size_t m, double v, double pow2s,
                                                 bool on, unsigned int mask) {
  unsigned int l[4] = {0u, 0u, 0u, 0u};
  if (on) limb_parts(v, pow2s, l);
#pragma unroll
  for (int t = 0; t < 4; ++t) l[t] = __reduce_add_sync(0xffffffffu, l[t]);
  if ((int)(threadIdx.x & 31) == __ffs(mask) - 1) {
#pragma unroll
    for (int t = 0; t < 4; ++t) limb_atomic<SUB>(s + e + t * m, l[t]);
  }
}
// limb_add / limb_sub of this lane's value, for the whole warp at once
// where `whole` (warp_same's answer; every lane then calls it), else lane by
// lane where `on`.
template <bool SUB>
__device__ __forceinline__ void limb_apply_any(unsigned int *s, size_t e, size_t m, double v, double pow2s,
                                               bool on, bool whole) {
  if (whole) limb_apply_warp<SUB>(s, e, m, v, pow2s);
  else if (on) limb_apply<SUB>(s, e, m, v, pow2s);
}

// 128-bit value of the four limb counters of entry e holding cnt additions
// (less cnt subtractions).  A counter takes at most kLimbFlush additions or
// subtractions of < 2^16 between flushes, so it and cnt hold their net sums
// as signed 32-bit integers: sum = s0 + s1 2^15 + s2 2^30 + s3 2^45 - cnt 2^59.
__device__ __forceinline__ void limb_value(const unsigned int *s, size_t e, size_t m, unsigned int cnt,
                                           u64 &lo, u64 &hi) {
  const long long a = (long long)(int)s[e] + ((long long)(int)s[e + m] << 15) + ((long long)(int)s[e + 2 * m] << 30);
  const long long t3 = (int)s[e + 3 * m];
  const long long c = -(long long)(int)cnt;
  u64 l = (u64)a, h = a < 0 ? ~0ULL : 0ULL;  // |a| < 2^62
  const u64 tl = (u64)t3 << 45, th = (u64)(t3 >> 19);  // t3 2^45 in 128 bits
  l += tl;
  h += th + (l < tl ? 1ULL : 0ULL);
  const u64 cl = (u64)c << 59, ch = (u64)(c >> 5);  // -cnt 2^59 in 128 bits
  l += cl;
  h += ch + (l < cl ? 1ULL : 0ULL);
  lo = l;
  hi = h;
}

// Adds the block's limb counters (entries e = c + k*jj, jj < cols) into the
// global accumulators of columns j0 + jj, then zeroes counters and counts.
// counts_out (may be NULL) receives the block's cluster counts (net, modulo
// 2^32).  Must be called
// by the whole block; ends with a barrier.
__device__ inline void limb_flush(unsigned int *slimb, unsigned int *scnt, int k, int cols, int j0,
                                  u64 *gacc, unsigned int *counts_out) {
  __syncthreads();
  const size_t m = (size_t)k * cols;
  for (size_t e = threadIdx.x; e < m; e += blockDim.x) {
    const size_t c = e % k, jj = e / k;
    // (every entry: where points moved in and out, a net count of 0 may
    // leave a sum)
    u64 lo, hi;
    limb_value(slimb, e, m, scnt[c], lo, hi);
    if (lo | hi) atomic_add128(&gacc[2 * (c + (size_t)k * (j0 + jj))], lo, hi);
  }
  __syncthreads();
  for (size_t e = threadIdx.x; e < 4 * m; e += blockDim.x) slimb[e] = 0;
  for (int c = threadIdx.x; c < k; c += blockDim.x) {
    if (counts_out && scnt[c]) atomicAdd(&counts_out[c], scnt[c]);
    scnt[c] = 0;
  }
  __syncthreads();
}

template <typename T> __device__ __forceinline__ T pos_inf();
template <> __device__ __forceinline__ float pos_inf<float>() { return __int_as_float(0x7f800000); }
template <> __device__ __forceinline__ double pos_inf<double>() { return __longlong_as_double(0x7ff0000000000000LL); }
template <typename T> __device__ __forceinline__ T quiet_nan();
template <> __device__ __forceinline__ float quiet_nan<float>() { return __int_as_float(0x7fffffff); }
template <> __device__ __forceinline__ double quiet_nan<double>() { return __longlong_as_double(0x7fffffffffffffffLL); }

// Floats (not NaN) as unsigned integers in the same order, and back:
// min / max by integer atomics or REDUX (ordered.cu, wbox_kernels.cuh).
__device__ __forceinline__ unsigned int float_order_bits(float f) {
  const unsigned int b = __float_as_uint(f);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
__device__ __forceinline__ float order_bits_float(unsigned int u) {
  return __uint_as_float((u & 0x80000000u) ? (u & 0x7fffffffu) : ~u);
}

// A block's least and largest float (lo and hi of each of its threads, all
// of which call it) into *min_at and *max_at as float_order_bits: one
// atomic each a block (one a warp: 17 us at 1e6 rows, ncu on an H200,
// caches flushed; one a block: 7).  Ends on a barrier: a block may call it
// again at once (k_order_range, a column at a time).
__device__ __forceinline__ void block_range_atomics(float lo, float hi, unsigned int *min_at, unsigned int *max_at) {
  __shared__ float wlo[32], whi[32];
#pragma unroll
  for (int o = 16; o; o >>= 1) {
    lo = fminf(lo, __shfl_xor_sync(0xffffffffu, lo, o));
    hi = fmaxf(hi, __shfl_xor_sync(0xffffffffu, hi, o));
  }
  if ((threadIdx.x & 31) == 0) {
    wlo[threadIdx.x >> 5] = lo;
    whi[threadIdx.x >> 5] = hi;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < (int)(blockDim.x >> 5); ++w) {
      lo = fminf(lo, wlo[w]);
      hi = fmaxf(hi, whi[w]);
    }
    atomicMin(min_at, float_order_bits(lo));
    atomicMax(max_at, float_order_bits(hi));
  }
  __syncthreads();
}

// Programmatic dependent launch (sm_90+; no-ops before, and where the
// kernel was launched without it): wait for the grid this one depends on
// to finish, its writes visible; let the dependent grid start its blocks.
__device__ __forceinline__ void grid_dependency_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void grid_dependents_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Early exit for kernels inside a captured batch of iterations.
// (Both fields loaded at once: one wait on L2, not two.)
__device__ __forceinline__ bool fit_finished(const State *st, int max_iter) {
  if (!st) return false;
  const int flag = st->flag, done = st->iter_done;
  return flag || done >= max_iter;
}

// Called by every block of a grid once its writes are done: true in the
// last block to get here (a ticket from st->ticket), which then sees the
// other blocks' writes; that block sets st->ticket back to 0 before the
// grid's next use of it.
__device__ inline bool last_block_to_finish(State *st) {
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

#endif
