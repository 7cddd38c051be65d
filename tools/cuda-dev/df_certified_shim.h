// df_certified_shim.h: the bound of src/cuda/detail/dfilter.cuh (DFBound ..
// df_certified, df_cand_threshold included, and df_settle_threshold and
// df_settle_stop of df_settle.cuh, extracted by the Makefile into build/df_certified.inc) on
// the CPU, for dfilter_emu and small_dfilter_emu: the CUDA qualifiers and
// intrinsics it uses, and the structs it reads.  Compile with
// -ffp-contract=off -frounding-math.
#ifndef GPUKMEANS_DF_CERTIFIED_SHIM_H
#define GPUKMEANS_DF_CERTIFIED_SHIM_H

#include <cfenv>
#include <cmath>
#include <cstring>

#define __device__
#define __forceinline__ inline
#define __host__
#define __global__
static inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }
static inline unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }
// fmaf rounded down (the device's __fmaf_rd)
static inline float __fmaf_rd(float a, float b, float c) {
  fesetround(FE_DOWNWARD);
  volatile float r = fmaf(a, b, c);
  fesetround(FE_TONEAREST);
  return r;
}
// float of a double / float sum rounded up (the device's __double2float_ru, __fadd_ru)
static inline float __double2float_ru(double v) {
  fesetround(FE_UPWARD);
  volatile float r = (float)v;
  fesetround(FE_TONEAREST);
  return r;
}
static inline float __fadd_ru(float a, float b) {
  fesetround(FE_UPWARD);
  volatile float r = a + b;
  fesetround(FE_TONEAREST);
  return r;
}
using std::fabs;
using std::fmax;
using std::sqrt;

namespace gk {
namespace init {
struct FloatImage { const double *shift; double scale; float uprime, bmax, kappa; double gamma; };
}
template <typename T> inline T quiet_nan();
template <> inline float quiet_nan<float>() { return NAN; }
template <typename T> inline T pos_inf();
template <> inline float pos_inf<float>() { return INFINITY; }
struct DFArgs { init::FloatImage im; double absd; unsigned *cnt; };  // (what df_bound reads)
#include "df_certified.inc"
}  // namespace gk

#endif
