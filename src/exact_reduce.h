// exact_reduce.h: 128-bit fixed-point sums (src/fixed_point.h) sent through
// a reduction that adds doubles (MPI_Allreduce with MPI_SUM on MPI_DOUBLE,
// R/mpi.R) and still added exactly.
//
// A value travels as four unsigned 32-bit limbs of its two's complement, each
// a double: limb i is bits [32 i, 32 i + 32).  A sum of P limbs is an integer
// below P 2^32, exact in a double while P <= 2^20 (the sum stays below 2^52),
// in any order of addition.  After the reduction the limb sums are carried
// into one 128-bit value: sum_i L_i 2^(32 i) modulo 2^128, which is the sum of
// the values (two's complement) when it fits, as every sum of
// fixed_point.h's scales does.  Counts (below 2^53) travel as doubles as
// they are.  Plain C++, no R.
#ifndef GPUKMEANS_EXACT_REDUCE_H
#define GPUKMEANS_EXACT_REDUCE_H

#include <cmath>
#include <cstdint>

#include "engine.h"
#include "fixed_point.h"

namespace gk {

constexpr int kLimbs = 4;
// The most processes whose limbs may be added: 2^20.
constexpr double kMaxLimbSum = 4503599627370496.0;  // 2^52

inline void fixed_to_limbs(const Fixed128& v, double* out) {
  out[0] = static_cast<double>(v.lo & 0xffffffffULL);
  out[1] = static_cast<double>(v.lo >> 32);
  out[2] = static_cast<double>(v.hi & 0xffffffffULL);
  out[3] = static_cast<double>(v.hi >> 32);
}

// A sum of limbs as the integer it must be.
inline u64 limb_sum(double v) {
  if (!(v >= 0.0 && v <= kMaxLimbSum && v == std::floor(v)))
    throw EngineError(EngineError::Kind::kInvalid,
                      "exact reduction: a limb sum is not an integer in [0, 2^52] (more than 2^20 processes, or "
                      "a corrupted reduction)");
  return static_cast<u64>(v);
}

inline Fixed128 limbs_to_fixed(const double* in) {
  const u64 l0 = limb_sum(in[0]), l1 = limb_sum(in[1]), l2 = limb_sum(in[2]), l3 = limb_sum(in[3]);
  Fixed128 r{l0, 0};
  add_fixed(r, Fixed128{l1 << 32, l1 >> 32});  // l1 2^32
  add_fixed(r, Fixed128{0, l2});               // l2 2^64
  add_fixed(r, Fixed128{0, l3 << 32});         // l3 2^96 (mod 2^128)
  return r;
}

// A count (or any integer below 2^53) after the reduction.
inline std::int64_t count_sum(double v) {
  if (!(v >= 0.0 && v <= 9007199254740992.0 && v == std::floor(v)))
    throw EngineError(EngineError::Kind::kInvalid, "exact reduction: a count is not a whole number below 2^53");
  return static_cast<std::int64_t>(v);
}

}  // namespace gk

#endif
