/* fixed_point.h: exact, order-independent sums as 128-bit fixed-point
 * integers, shared by the CUDA engine (src/cuda), the CPU engine's step mode
 * and the drivers that combine partial sums of several engines
 * (src/fit_driver.cpp).  Plain C++ (host and device), no R, no CUDA headers.
 *
 * A double v is mapped to an integer q ~ v * 2^S held in two's complement over
 * 128 bits (lo, hi).  Integer addition is associative, so any order of
 * additions -- threads, blocks, devices, MPI ranks -- gives the same bits.
 * S is chosen per quantity from a bound B on |value| (and the number of
 * terms) so that the sum cannot overflow; rounding v to a multiple of 2^-S
 * costs at most 2^-60 B per term, far below the rounding of a double mean.
 *
 * Two roundings exist, and a given sum always uses the same one:
 *   to_fixed     truncates (the global 128-bit atomics of the CUDA engine);
 *   round_fixed  rounds to nearest even (the per-block 32-bit limbs of the
 *                CUDA engine and the CPU engine's step mode), |q| <= 2^59.
 */
#ifndef GPUKMEANS_FIXED_POINT_H
#define GPUKMEANS_FIXED_POINT_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define GK_FX __host__ __device__ __forceinline__
#else
#define GK_FX inline
#endif

namespace gk {

typedef unsigned long long u64;

/* One 128-bit two's-complement fixed-point value. */
struct Fixed128 {
  u64 lo, hi;
};

/* Scale S for a sum of `terms` values with |value| <= bound:
   |sum| * 2^S < 2^125. */
inline int fixed_scale(double bound, long long terms) {
  int e = 0;
  if (bound > 0 && isfinite(bound)) frexp(bound, &e);  // bound < 2^e
  int L = 1;
  while (L < 62 && (1LL << L) <= terms) ++L;  // terms < 2^L
  return 125 - e - L;
}

/* Scale of the rounded ("limb") sums: |v| <= bound < 2^e gives |q| <= 2^59. */
inline int limb_scale(double bound) {
  int e = 0;
  if (bound > 0 && isfinite(bound)) frexp(bound, &e);
  return 59 - e;
}

/* 2^s as a double (s clamped to the normal range). */
GK_FX double pow2(int s) {
  s = s < -1022 ? -1022 : (s > 1023 ? 1023 : s);
  long long b = (long long)(s + 1023) << 52;
  double r;
  memcpy(&r, &b, 8);
  return r;
}

/* Scale of a cluster's within-SS sum from the upper 32 bits of its largest
   per-point term (non-negative doubles order like their bits): w < 2^e. */
GK_FX int wss_scale(unsigned int hi) {
  if (hi == 0) return 1000;
  u64 b = ((u64)hi << 32) | 0xffffffffULL;
  double ub;
  memcpy(&ub, &b, 8);
  int e = 0;
  frexp(ub, &e);
  int s = 59 - e;
  return s > 1000 ? 1000 : (s < -1000 ? -1000 : s);
}

/* trunc(v * 2^S) in 128-bit two's complement. */
GK_FX void to_fixed(double v, int S, u64 &lo, u64 &hi) {
  u64 b;
  memcpy(&b, &v, 8);
  int bexp = (int)((b >> 52) & 0x7ff);
  u64 mant = b & ((1ULL << 52) - 1);
  bool neg = (b >> 63) != 0;
  if (bexp == 0) {
    if (mant == 0) { lo = hi = 0; return; }
    bexp = 1;
  } else {
    mant |= (1ULL << 52);
  }
  int shift = bexp - 1075 + S;  // |v| * 2^S = mant * 2^shift
  u64 l, h;
  if (shift >= 0) {
    if (shift > 74) shift = 74;  // cannot happen within the bound; saturate
    if (shift >= 64) { l = 0; h = mant << (shift - 64); }
    else if (shift == 0) { l = mant; h = 0; }
    else { l = mant << shift; h = mant >> (64 - shift); }
  } else {
    int r = -shift;
    l = (r >= 64) ? 0 : (mant >> r);
    h = 0;
  }
  if (neg) {
    l = ~l + 1;
    h = ~h + (l == 0 ? 1 : 0);
  }
  lo = l;
  hi = h;
}

/* The double nearest the fixed-point value (lo, hi) * 2^-S. */
GK_FX double from_fixed(u64 lo, u64 hi, int S) {
  bool neg = (long long)hi < 0;
  if (neg) {
    lo = ~lo + 1;
    hi = ~hi + (lo == 0 ? 1 : 0);
  }
  double r = (double)hi * 18446744073709551616.0 + (double)lo;
  r = ldexp(r, -S);
  return neg ? -r : r;
}

/* rint(v * pow2s), ties to even: the rounded ("limb") conversion; pow2s = 2^S. */
GK_FX long long round_fixed(double v, double pow2s) {
#if defined(__CUDA_ARCH__)
  return __double2ll_rn(v * pow2s);
#else
  return llrint(v * pow2s);
#endif
}

/* a += b, modulo 2^128. */
GK_FX void add_fixed(Fixed128 &a, const Fixed128 &b) {
  u64 lo = a.lo + b.lo;
  a.hi = a.hi + b.hi + (lo < a.lo ? 1ULL : 0ULL);
  a.lo = lo;
}

/* a += q for a signed 64-bit q. */
GK_FX void add_fixed(Fixed128 &a, long long q) {
  Fixed128 b;
  b.lo = (u64)q;
  b.hi = q < 0 ? ~0ULL : 0ULL;
  add_fixed(a, b);
}

}  // namespace gk

#endif
