// detail/init_bound.cuh: the float lower bound that lets the oversampling
// rounds of k-means|| (init_par_kernels.cuh) skip exact distances that
// cannot matter.
//
// A pair (point a, center b) is ruled out only when its exact double
// distance, computed as parity.h point 1 says, is certainly >= the
// point's current D2: then min(D2, dist) is D2 and "dist < D2" is false, so
// skipping the exact distance changes no bit of any result.
#ifndef GPUKMEANS_DETAIL_INIT_BOUND_CUH
#define GPUKMEANS_DETAIL_INIT_BOUND_CUH

#include <algorithm>
#include <cmath>

#include "common.cuh"

namespace gk {
namespace init {

// The float image of the data used by the bound: a = fl32((x - shift) * scale)
// with scale a power of two such that |x - shift| * scale <= 1.
struct FloatImage {
  const double *shift;  // d column shifts (double data), or NULL (single: x is stored shifted)
  double scale;
  float uprime;         // relative error of a against the exact (x - shift) * scale: 0 in single
  float bmax;           // upper bound of ||b|| for every candidate b
  float kappa;          // |A - R_f| <= kappa * (|a|^2 + |b|^2) + kAbs, with margin (A below)
  double gamma;         // relative error bound of the exact double distance
};

constexpr float kAbs = 7.8886091e-31f;  // 2^-100: covers underflow in the float image

// The float image of data whose largest |stored x| is M (d columns; shift:
// the column means on the device, double data).  tc: images rounded to TF32
// and dot products on the tensor cores (init_par_tc_kernels.cuh).  Shared by
// the k-means|| filter (init_par.cu) and Lloyd's certified assignment in
// double precision (assign.cu, dfilter.cuh), which adjusts kappa.
inline FloatImage float_image(double M, bool single, const double *shift, int d, bool tc) {
  FloatImage im;
  // double: x - column mean, |x - mean| <= 2 max|x|; single: x is stored shifted
  if (!single) M *= 2.0;
  int e = 0;
  if (M > 0 && std::isfinite(M)) (void)std::frexp(M, &e);  // M < 2^e
  im.shift = single ? nullptr : shift;
  im.scale = std::ldexp(1.0, -e);
  const double u = std::ldexp(1.0, -24);
  const double conv = single ? 0.0 : u + std::ldexp(1.0, -52);  // double -> float
  im.uprime = (float)(1.01 * (conv + (tc ? std::ldexp(1.0, -11) : 0.0)));
  im.bmax = (float)(std::sqrt((double)d) * 1.001);
  im.kappa = (float)((tc ? 4.0 : 1.0) * 2.0 * (2.0 * d + 8.0) * u);
  im.gamma = 1.01 * (d + 3.0) * std::ldexp(1.0, -53);
  return im;
}

// The image of value v of column c: fl32((v - shift_c) * scale).
__device__ __forceinline__ float image_value(double v, int c, const FloatImage &im) {
  if (im.shift) v = __dsub_rn(v, im.shift[c]);
  return __double2float_rn(v * im.scale);
}

template <typename T>
__device__ __forceinline__ float image_coord(const T *__restrict__ x, long long n, long long i, int c,
                                             const FloatImage &im) {
  return image_value((double)x[i + n * (long long)c], c, im);
}

// Threshold in the float image: a candidate whose exact (double) distance
// could be < D2 has an image distance R_f < thr, and so A - E < thr, where
// A = |a|^2 + |b|^2 - 2 a.b is computed in float from the image and
// E = kappa (|a|^2 + |b|^2) + kAbs bounds its error.  With R the real squared distance, a
// candidate can beat D2 only if R < D2 (1 + 2 gamma); the image's distance
// R_f then satisfies sqrt(R_f) < sqrt(R) + eps (eps bounds the image's
// rounding of both points); and A - E <= R_f.  Rounded up, with margin.
__device__ __forceinline__ float filter_threshold(double d2v, double eps, const FloatImage &im) {
  if (!(d2v < 1e300)) return __int_as_float(0x7f800000);
  const double t = sqrt(d2v * im.scale * im.scale * (1.0 + 2.0 * im.gamma)) + eps;
  return __double2float_ru(t * t * (1.0 + 9.5367431640625e-07) + 7.8886090522101181e-31);
}

// eps of filter_threshold for a point whose image has |a|^2 = na.
__device__ __forceinline__ double filter_eps(float na, int d, const FloatImage &im) {
  return (double)im.uprime * (sqrt((double)na) * (1.0 + d * 5.9604644775390625e-08) + im.bmax) +
         7.8886090522101181e-31;
}

// The test of a pair, rearranged so that it costs one FMA and one compare:
//     fl(-2 a.b + q_b) < thr - nak_a
// with q_b = |b|^2 (1 - kappa) rounded down (per candidate, filter_q),
// nak_a = |a|^2 (1 - kappa) - kAbs rounded down and the subtraction rounded
// up (per point, filter_limit).  It keeps every candidate with R_f < thr: kappa = 2 (2d + 8) u covers the errors of the
// dot product and of both norms (2d u (|a|^2 + |b|^2)) plus the FMA's
// rounding (2u (|a|^2 + |b|^2)) with room to spare, and the directed
// roundings only move the test towards keeping a candidate.
__device__ __forceinline__ float filter_q(float nb, const FloatImage &im) {
  return __fmaf_rd(-im.kappa, nb, nb);
}
__device__ __forceinline__ float filter_limit(float thr, float na, const FloatImage &im) {
  const float nak = __fsub_rd(__fmaf_rd(-im.kappa, na, na), kAbs);
  return __fsub_ru(thr, nak);
}

// The images of centers: b = image of row (d doubles), cf[c] = b_c and the
// result filter_q(|b|^2) (|b|^2 summed in coordinate order).
__device__ __forceinline__ float center_image(const double *row, int d, const FloatImage &im, float *cf) {
  float nb = 0.f;
  for (int c = 0; c < d; ++c) {
    const float b = image_value(row[c], c, im);
    cf[c] = b;
    nb = fmaf(b, b, nb);
  }
  return filter_q(nb, im);
}

}  // namespace init
}  // namespace gk

#endif
