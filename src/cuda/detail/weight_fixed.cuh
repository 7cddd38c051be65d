// detail/weight_fixed.cuh: the fixed-point terms of weighted rows (src/weights.h
// says what weights mean) and the per-block "limbs" that add them exactly.
//
// Unweighted sums add q = round_fixed(v, 2^S), |q| <= 2^59 (common.cuh).  A
// weighted row adds a 128-bit term instead:
//  * whole weights (every w_i in 0, 1, 2, ... <= 2^53): t = w_i * q, the exact
//    integer product, i.e. w_i additions of q: the bits of the fit of the
//    rows replicated w_i times (same scale S);  |t| <= 2^112;
//  * other weights: t = rint(w'_i * v * 2^S) with w' = w * 2^-a (a power of
//    two bringing the largest weight into [0.5, 1)): w v rounded once, then
//    to fixed point;  |t| <= 2^113 at the scales weights.cu chooses.
// A term is split into eight 15-bit limbs of u = t + 2^119 (u < 2^120) added
// into 32-bit shared counters (native atomics, as the unweighted limbs); a
// counter takes at most kLimbFlush additions of < 2^15 between flushes.
//
// Plain C++ with GK_FX (host and device): tools/cuda-dev/weights_emu.cpp runs it.
#ifndef GPUKMEANS_DETAIL_WEIGHT_FIXED_CUH
#define GPUKMEANS_DETAIL_WEIGHT_FIXED_CUH

#include "../../fixed_point.h"

namespace gk {

// How a fit's rows are weighted (weights.cu fills it; passed by value).
struct WeightSpec {
  const double *w = nullptr;  // n weights on the device
  int whole = 1;              // 1: every weight whole (integer products)
  double wscale = 1.0;        // other weights: w' = w * wscale (a power of two)
  int cscale = 0;             // scale of the weighted counts (whole: 0, the integer sum)
  int wshift = 0;             // within-SS scale = wss_scale(max) - wshift (overflow guard)
};

// Fills ws.whole, wscale, cscale, wshift from the weights' summary (every
// weight whole, the largest, the sum; weights.cu says why these) and returns
// the bits added to the unweighted scales limb_scale(column maxima).
inline int weight_scales(bool whole, double wmax, double W, WeightSpec &ws) {
  int e = 0;
  ws.whole = whole ? 1 : 0;
  if (whole) {
    frexp(W, &e);  // W < 2^e
    const int extra = e > 66 ? e - 66 : 0;
    ws.wscale = 1.0;
    ws.cscale = 0;
    ws.wshift = extra;
    return -extra;
  }
  frexp(wmax, &e);
  ws.wscale = ldexp(1.0, -e);
  frexp(W * ws.wscale, &e);
  const int extra = e > 13 ? e - 13 : 0;
  ws.cscale = 112 - extra;
  ws.wshift = 0;
  return 53 - extra;
}

// Cluster c's within-SS from its fixed-point sum and the upper bits of its
// largest key, in the units of the weights given.
GK_FX double wss_value(const WeightSpec &ws, u64 lo, u64 hi, unsigned int maxterm) {
  const double v = from_fixed(lo, hi, wss_scale(maxterm) - ws.wshift);
  return ws.whole ? v : v / ws.wscale;
}

// 128-bit two's complement helpers (host and device, no __int128).
GK_FX void mul_u64(u64 a, u64 b, u64 &lo, u64 &hi) {
  const u64 a0 = a & 0xffffffffULL, a1 = a >> 32, b0 = b & 0xffffffffULL, b1 = b >> 32;
  const u64 p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const u64 mid = (p00 >> 32) + (p01 & 0xffffffffULL) + (p10 & 0xffffffffULL);
  lo = (p00 & 0xffffffffULL) | (mid << 32);
  hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}
GK_FX void neg128(u64 &lo, u64 &hi) {
  lo = ~lo + 1;
  hi = ~hi + (lo == 0 ? 1ULL : 0ULL);
}

// q * w exactly (w a whole weight, < 2^63).
GK_FX Fixed128 mul_fixed(long long q, u64 w) {
  Fixed128 t;
  mul_u64((u64)(q < 0 ? -q : q), w, t.lo, t.hi);
  if (q < 0) neg128(t.lo, t.hi);
  return t;
}

// rint(y) of a double |y| < 2^126 as a 128-bit integer (ties to even).
GK_FX Fixed128 rint_fixed(double y) {
  Fixed128 t;
  if (fabs(y) < 4611686018427387904.0) {  // 2^62
    const long long q = round_fixed(y, 1.0);
    t.lo = (u64)q;
    t.hi = q < 0 ? ~0ULL : 0ULL;
  } else {
    to_fixed(y, 0, t.lo, t.hi);  // already an integer: exact
  }
  return t;
}

// The term of value v of a row of weight wi at scale 2^S = pow2s.
GK_FX Fixed128 weighted_term(double v, double wi, double pow2s, const WeightSpec &ws) {
  if (ws.whole) return mul_fixed(round_fixed(v, pow2s), (u64)wi);
  return rint_fixed((wi * ws.wscale) * v * pow2s);
}

// The weighted count term of a row (the denominator of its cluster's mean).
GK_FX Fixed128 weight_term(double wi, const WeightSpec &ws) {
  if (ws.whole) return Fixed128{(u64)wi, 0};
  return rint_fixed(wi * ws.wscale * pow2(ws.cscale));
}

// ---- eight limbs per entry ---------------------------------------------------
const int kWLimbs = 8;

// The eight 15-bit limbs of t + 2^119 (the layout wlimb_value reads back),
// each passed to add(l, limb), every one of them (zeros too).
template <typename Add>
__device__ __forceinline__ void wlimb_each(Fixed128 t, Add add) {
  u64 lo = t.lo, hi = t.hi + (1ULL << 55);  // u = t + 2^119
  for (int l = 0; l < kWLimbs; ++l) {
    add(l, (unsigned int)(lo & 0x7fff));
    lo = (lo >> 15) | (hi << 49);
    hi >>= 15;
  }
}

// Limb l of entry e at s[e + l*m] (shared-memory atomics).
__device__ __forceinline__ void wlimb_add(unsigned int *s, size_t e, size_t m, Fixed128 t) {
  wlimb_each(t, [&](int l, unsigned int v) {
    if (v) atomicAdd(s + e + l * m, v);
  });
}

// wlimb_add for the whole warp at once where `whole` (warp_same, warp_sums.cuh:
// every lane adds to entry e, and every lane calls this), each limb summed
// across the warp (< 2^20) and added by lane 0; else lane by lane where on.
__device__ __forceinline__ void wlimb_add_any(unsigned int *s, size_t e, size_t m, Fixed128 t, bool on, bool whole) {
  if (!whole) {
    if (on) wlimb_add(s, e, m, t);
    return;
  }
  wlimb_each(t, [&](int l, unsigned int v) {
    v = __reduce_add_sync(0xffffffffu, v);
    if (v && (threadIdx.x & 31) == 0) atomicAdd(s + e + l * m, v);
  });
}

// The 128-bit sum of the terms held by the limbs of entry e (cnt additions).
GK_FX Fixed128 wlimb_value(const unsigned int *s, size_t e, size_t m, unsigned int cnt) {
  Fixed128 a{0, 0};
  for (int l = 0; l < kWLimbs; ++l) {
    const u64 v = s[e + l * m];  // < 2^31, shifted by 15 l <= 105
    const int sh = 15 * l;
    Fixed128 b;
    b.lo = sh >= 64 ? 0 : v << sh;
    b.hi = sh >= 64 ? v << (sh - 64) : (sh == 0 ? 0 : v >> (64 - sh));
    add_fixed(a, b);
  }
  Fixed128 c{0, ~((u64)cnt << 55) + 1};  // -cnt * 2^119 (mod 2^128)
  add_fixed(a, c);
  return a;
}

}  // namespace gk

#endif
