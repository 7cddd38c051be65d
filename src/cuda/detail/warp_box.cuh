// detail/warp_box.cuh: the candidate list of a warp's box of points, for
// the small-d assignment on rows ordered in space (ordered.cu,
// detail/wbox_kernels.cuh): each warp lists the centers its box can need.
// Plain C++ above the kernels' use: tools/cuda-dev/grid_emu checks it on
// the CPU.
//
// A warp holds the points of a box [lo, hi] (floats: in single precision
// the stored values themselves; in double, the points' box rounded outward).
// It lists, in index order, every center c whose least squared distance
// LB(c) to the box, computed in float (wb_least), passes the limit below;
// its points then take their nearest among the listed centers only, with
// the scan's own arithmetic and strict '<' in index order.
//
// Why the list holds the scan's choice c_s of every point x of the box.
// The bound B is either U, the least over the centers of the largest
// squared distance from the box to a center (wb_largest, computed in
// float), or R, the largest over the box's points of the float distance to
// a center each point names (its previous label).  Either way, for every x
// of the box some center c' has |x - c'|^2 <= B (1 + 4.01 u), u = 2^-24:
// the float results of the subtraction, the square and the fused
// multiply-add are each within u relative, and their terms are not
// negative.
//   single: the scan's distance, the dot form |c|^2 - 2 x.c by FMAs, is
//           within E = (2d + 1) 1.01 u 3 M2 (+ (2d + 1) 2^-149 of
//           underflow) of |x - c|^2 - |x|^2, where M2 = sum_j M_j^2 and
//           M_j bounds |x_j| and |c_j| (cell_grid.cuh: the same argument).
//           c_s has the least scan distance, so |x - c_s|^2 <= |x - c'|^2
//           + 2E <= B (1 + 4.01 u) + 2E, and LB(c_s), computed, is at most
//           (1 + 4.01 u) times that: wb_limit_single.
//   double: the exact rule's distance is within eta = (d + 3) 2^-53 of
//           |x - c|^2, relative (and s = d 2^-1074 absolute).  The box and
//           the centers are rounded to float: the outward box holds the
//           points; a center moves by at most eps = sqrt(d) (2^-24 Mc +
//           2^-149) (Mc the largest |c_j|).  Then |x - c'| <= sqrt(U (1 +
//           4.01 u)) + eps, |x - c_s|^2 <= (|x - c'|^2 (1 + eta) + 2 s) /
//           (1 - eta), and sqrt(LB(c_s)) over the float center is at most
//           |x - c_s| + eps: wb_limit_double (in double, with room for its
//           own rounding).  (The box's float values, rounded outward,
//           decide wb_usable, with Mc.)  With R, computed from the
//           points' and the centers' float images (each rounded to
//           nearest), |x - c'| <= sqrt(R (1 + 4.01 u)) + eps + eps_x,
//           eps_x = sqrt(d) (2^-24 Mb + 2^-149) for Mb the box's largest
//           |value|: wb_limit_double with eps + eps_x in place of eps
//           (the larger eps only widens its last step).
// Underflow in the float box distances (at most 2^-149 an operation) is in
// the limits' added 2^-140.  Infinite or NaN values: a NaN center is listed
// (never taken); an infinite limit lists every center.  In double the box
// distances need the points and centers within float's range: wb_usable.
#ifndef GPUKMEANS_DETAIL_WARP_BOX_CUH
#define GPUKMEANS_DETAIL_WARP_BOX_CUH

#include <math.h>

#if defined(__CUDACC__)
#define WB_HD __host__ __device__ __forceinline__
#else
#define WB_HD inline
#endif

namespace gk {

// Largest and least squared distance from the box to center c (d <= 3),
// in float, as the kernels compute them.
WB_HD float wb_largest(const float *lo, const float *hi, const float *c, int d) {
  float s = 0;
  for (int j = 0; j < d; ++j) {
    const float f = fmaxf(c[j] - lo[j], hi[j] - c[j]);
    s = j == 0 ? f * f : fmaf(f, f, s);
  }
  return s;
}
WB_HD float wb_least(const float *lo, const float *hi, const float *c, int d) {
  float s = 0;
  for (int j = 0; j < d; ++j) {
    const float a = fmaxf(fmaxf(lo[j] - c[j], c[j] - hi[j]), 0.f);
    s = j == 0 ? a * a : fmaf(a, a, s);
  }
  return c[0] == c[0] ? s : 0.f;  // (a NaN center: listed)
}

// The scan's error E in single precision, M2 = sum_j M_j^2.
WB_HD float wb_error_single(float M2, int d) {
  return (2 * d + 1) * (1.01f * 1.001f * 3.0f * 0x1p-24f) * M2 + (2 * d + 1) * 0x1p-149f;
}
// The single-precision list's limit for bound B: LB(c) <= limit lists c.
// (Each of the three float operations rounds by at most u; the factors
// 1 + 2^-20 leave more than that.)
WB_HD float wb_limit_single(float B, float E) {
  const float f = 1.0f + 0x1p-20f;
  return fmaf(2.0f, E, B * f) * f + 0x1p-140f;
}

// Double precision: eps for centers of largest |c_j| Mc, then the limit
// (compared in double with the float LB).
WB_HD double wb_center_eps(double Mc, int d) { return sqrt((double)d) * (0x1p-24 * Mc + 0x1p-149) * (1 + 0x1p-20); }
// No square root or division (a warp computes it for every box): with
// (a + b)^2 <= (1 + t) a^2 + (1 + 1/t) b^2, t = 2^-20, and 1 / (1 - eta) <=
// 1 + 2 eta; the dozen double roundings are inside the last factor.
WB_HD double wb_limit_double(float U, double eps, int d) {
  const double u4 = 1 + 4.01 * 0x1p-24, eta = (d + 3) * 0x1p-53 * (1 + 0x1p-40), s = d * 0x1p-1074;
  const double t = 1 + 0x1p-20, e2 = (1 + 0x1p20) * eps * eps;
  const double r2 = t * u4 * (double)U + e2;               // >= (sqrt(U u4) + eps)^2
  const double b = (r2 * (1 + eta) + 2 * s) * (1 + 2 * eta);  // >= |x - c_s|^2
  return (t * b + e2) * u4 * (1 + 0x1p-40) + 0x1p-140;     // >= (sqrt(b) + eps)^2 u4
}
// Whether a double box and centers of largest magnitude M stay within
// float's normal range with room (else: every center listed).
WB_HD bool wb_usable(double M) { return M <= 0x1p100; }

}  // namespace gk

#endif  // GPUKMEANS_DETAIL_WARP_BOX_CUH
