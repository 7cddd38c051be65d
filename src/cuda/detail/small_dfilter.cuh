// detail/small_dfilter.cuh: the certified filter of the small-d assignment
// in double precision (d <= 8): the exact rule's labels, bit for bit, from
// float distances wherever the bound of dfilter.cuh proves them.
//
// Per block, the centers' float image b_j (FloatImage, the tiled filter's)
// goes into shared memory as [-2 b_j0 .. -2 b_j(DM-1), q_j, |b_j|^2, 0 ...]
// with q_j = |b_j|^2 (1 - kappa) rounded down.  Per point and center
//     w_j = q_j + sum_c a_c (-2 b_jc)        (FMAs rounded down, c in order)
// and, as in Small<float>, each group of G centers' minimum by fminf; the
// point keeps the lowest group minimum (and its first group) and the second
// lowest.  A rescan of the best group gives the lowest w (center i) and the
// lowest of the group's others: with the second lowest group minimum, the
// lowest w of every center but i.  df_certified then decides.
//
// Why the bound of dfilter.cuh holds for this w (its kappa = 2 (2d + 8) u,
// u = 2^-24, d <= 8; R_j = |a - b_j|^2 of the images, real):
//   - rounded down, each step's result is at most its exact value, so by
//     induction w_j <= q_j - 2 a.b_j <= |b_j|^2 - 2 a.b_j (q_j <= the real
//     |b_j|^2: kappa exceeds the norm's d u), so |a|^2 (1 - kappa) + w_j -
//     kAbs <= R_j: df_lower's lower bound of the others;
//   - each step loses less than 2u of its result, whose size is at most
//     |q_j| + 2 sum |a_c b_jc| <= |a|^2 + 2 |b_j|^2, so R_j <= w_j + 2 d u
//     |a|^2 + (kappa + (5d + 2) u) |b_j|^2 with q_j's own rounding (+
//     underflow, under kAbs): within df_upper's kappa |a|^2 + (2 kappa +
//     2^-21) |b_j|^2, as (5d + 2) u <= kappa + 2^-21 for d <= 21.
// The images' rounding (eps), the exact distance's (gamma) and the data's
// range (2^-400 .. 2^400, checked on the host) are the tiled filter's.  NaN
// centers (empty clusters) have NaN w: never taken, as in the exact rule.  A
// block whose centers leave the image's box (kBoxMax), and every point the
// bound leaves open (ties, near ties), takes exact distances to every
// center, least (distance, index), the warp's lanes sharing the centers.
//
// Included by assign_kernels.cuh.
#ifndef GPUKMEANS_DETAIL_SMALL_DFILTER_CUH
#define GPUKMEANS_DETAIL_SMALL_DFILTER_CUH

#include "dfilter.cuh"

namespace gk {
namespace {

// What the filter needs besides the assignment's arguments (host-made).
struct SmallDFArgs {
  init::FloatImage im;  // shift: the column means on the device; kappa: SIMT's
  double absd;          // (d + 1) 2^-1074 s^2: underflow of the exact distance, image units
};

template <int DM> struct SmallDF {
  enum { SD = (DM + 2 + 3) / 4 * 4, G = 8, PPT = DM <= 2 ? 4 : 2 };
  static __host__ __device__ constexpr int padded(int k) { return (k + G - 1) / G * G; }
  // Row c in shared memory, 4 floats after each group (Small<float>::row_at:
  // the rescan's rows in different banks)
  static __host__ __device__ constexpr size_t row_at(int c) { return (size_t)c * SD + (size_t)(c / G) * 4; }
  static __host__ __device__ constexpr size_t values(int k) { return row_at(padded(k)); }

  // The block's center image into sc (padded(k) rows of SD floats; padding
  // and NaN centers all NaN); *nbmax: the largest |b|^2 (bits of a
  // nonnegative float), *out: 1 when a center leaves the box.  Both shared,
  // zeroed by the caller.
  static __device__ void load(float *sc, const double *cen, int k, int d, const init::FloatImage &im,
                              unsigned int *nbmax, unsigned int *out) {
    const int kp = padded(k);
    for (int c = threadIdx.x; c < kp; c += blockDim.x) {
      float *p = sc + row_at(c);
      bool nan = c >= k, far = false;
      float nb = 0.f, b[DM];
#pragma unroll
      for (int j = 0; j < DM; ++j) {
        b[j] = 0.f;
        if (j < d && !nan) {
          const double v = cen[c + (size_t)k * j];
          if (v != v) {
            nan = true;
          } else {
            b[j] = __double2float_rn(__dsub_rn(v, im.shift[j]) * im.scale);  // (init::image_value; shift is set)
            far |= !(fabsf(b[j]) <= kBoxMax);
            nb = fmaf(b[j], b[j], nb);
          }
        }
      }
      const float qnan = quiet_nan<float>();
#pragma unroll
      for (int j = 0; j < DM; ++j) p[j] = nan ? qnan : -2.0f * b[j];
      p[DM] = nan ? qnan : __fmaf_rd(-im.kappa, nb, nb);
      p[DM + 1] = nan ? qnan : nb;
#pragma unroll
      for (int j = DM + 2; j < SD; ++j) p[j] = 0.f;
      if (!nan) {
        if (far) atomicOr(out, 1u);
        else atomicMax(nbmax, __float_as_uint(nb));
      }
    }
  }

  // A center's shared row (SD is a multiple of 4: 16-byte loads)
  static __device__ __forceinline__ void row(float (&cv)[SD], const float *p) {
#pragma unroll
    for (int q = 0; q < SD; q += 4) {
      const float4 v = *reinterpret_cast<const float4 *>(p + q);
      cv[q] = v.x; cv[q + 1] = v.y; cv[q + 2] = v.z; cv[q + 3] = v.w;
    }
  }

  // w of a point's image a for a center's shared row cv
  static __device__ __forceinline__ float w(const float (&a)[DM], const float (&cv)[SD]) {
    float t = cv[DM];
#pragma unroll
    for (int j = 0; j < DM; ++j) t = __fmaf_rd(a[j], cv[j], t);
    return t;
  }

  // The exact rule over every center for the points a warp's lanes left
  // open (bit r of open: lane's point r): the 32 lanes split the centers of
  // one point at a time (each in index order; then the lower distance, the
  // lower index), so an open point costs k / 32 distances a lane, not k in
  // one lane while the others wait.  Centers from global memory (L1/L2).
  template <int P>
  static __device__ void exact_open(const double (&xr)[P][DM], const bool (&open)[P], const double *__restrict__ cen,
                                    int k, int d, int (&bi)[P], unsigned int &exact) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int r = 0; r < P; ++r) {
      unsigned int todo = __ballot_sync(0xffffffffu, open[r]);
      while (todo) {
        const int src = __ffs(todo) - 1;
        todo &= todo - 1;
        double xs[DM];
#pragma unroll
        for (int j = 0; j < DM; ++j) xs[j] = __shfl_sync(0xffffffffu, xr[r][j], src);
        double bd = pos_inf<double>();
        int b = 0x7fffffff;
        for (int c = lane; c < k; c += 32) {
          // common.cuh's exact_dist, unrolled over DM: exact_dist's loop to
          // a run-time d over this register row put it on the stack and took
          // the kernel from 110 to 157 registers (C double 0.224 -> 0.283 ms
          // an iteration, H100, 2026-11-26)
          const double t0 = __dsub_rn(xs[0], __ldg(&cen[c]));
          double dd = __dmul_rn(t0, t0);
#pragma unroll
          for (int j = 1; j < DM; ++j)
            if (j < d) {
              const double t = __dsub_rn(xs[j], __ldg(&cen[c + (size_t)k * j]));
              dd = __dadd_rn(dd, __dmul_rn(t, t));
            }
          if (dd < bd) { bd = dd; b = c; }  // NaN never taken
        }
#pragma unroll
        for (int off = 16; off; off >>= 1) {
          const double od = __shfl_xor_sync(0xffffffffu, bd, off);
          const int oi = __shfl_xor_sync(0xffffffffu, b, off);
          if (od < bd || (od == bd && oi < b)) { bd = od; b = oi; }
        }
        if (lane == src) {
          bi[r] = b == 0x7fffffff ? -1 : b;
          ++exact;
        }
      }
    }
  }

  // The nearest center of each valid point (bit r of valid), -1 where no
  // distance is finite; exact counts the points given exact distances.
  // all_exact: the block's centers left the box.  Called by whole warps.
  template <int P>
  static __device__ __forceinline__ void nearest(const double (&xr)[P][DM], unsigned int valid, const float *sc,
                                                 const double *__restrict__ cen, int k, int d,
                                                 const init::FloatImage &im, const DFBound &bd, bool all_exact,
                                                 int (&bi)[P], unsigned int &exact) {
    bool open[P];
#pragma unroll
    for (int r = 0; r < P; ++r) { bi[r] = -1; open[r] = (valid >> r) & 1u; }
    if (!all_exact) {
      float a[P][DM], na[P], b1[P], b2[P];
      int bg[P];
#pragma unroll
      for (int r = 0; r < P; ++r) {
        na[r] = 0.f;
#pragma unroll
        for (int j = 0; j < DM; ++j) {
          // init::image_value without its test of a null shift (the means are
          // always set here): that test cost this kernel 6 registers
          a[r][j] = j < d ? __double2float_rn(__dsub_rn(xr[r][j], im.shift[j]) * im.scale) : 0.f;
          na[r] = fmaf(a[r][j], a[r][j], na[r]);
        }
        b1[r] = b2[r] = pos_inf<float>();
        bg[r] = -1;
      }
      const int kp = padded(k);
      for (int c0 = 0; c0 < kp; c0 += G) {
        float m[P];
#pragma unroll
        for (int r = 0; r < P; ++r) m[r] = pos_inf<float>();
#pragma unroll
        for (int g = 0; g < G; ++g) {  // (a center row at a time: few registers)
          float cv[SD];
          row(cv, sc + row_at(c0 + g));
#pragma unroll
          for (int r = 0; r < P; ++r) m[r] = fminf(m[r], w(a[r], cv));
        }
#pragma unroll
        for (int r = 0; r < P; ++r) {
          // the two lowest group minima (equal ones: b2 = b1, never proven)
          b2[r] = fminf(b2[r], fmaxf(b1[r], m[r]));
          const bool better = m[r] < b1[r];
          b1[r] = better ? m[r] : b1[r];
          bg[r] = better ? c0 : bg[r];
        }
      }
#pragma unroll
      for (int r = 0; r < P; ++r) {
        if (!open[r] || bg[r] < 0) continue;
        // the best group again: its first center with the lowest w (the
        // same FMAs, the same values) and the lowest w of its others
        int first = -1;
        float others = pos_inf<float>(), nbi = 0.f;
#pragma unroll
        for (int g = 0; g < G; ++g) {
          float cv[SD];
          row(cv, sc + row_at(bg[r] + g));
          const float v = w(a[r], cv);
          if (first < 0 && v == b1[r]) {
            first = g;
            nbi = cv[DM + 1];
          } else {
            others = fminf(others, v);
          }
        }
        if (first >= 0 && df_certified(b1[r], fminf(b2[r], others), nbi, na[r], d, bd)) {
          bi[r] = bg[r] + first;
          open[r] = false;
        }
      }
    }
    exact_open(xr, open, cen, k, d, bi, exact);
  }
};

// Shared layout of the filtered kernel: [limbs 4*k*d u32 (UPDATE)][image
// values(k) floats][counts k u32 (UPDATE)]
template <int DM>
__host__ __device__ constexpr size_t small_df_smem_bytes(int k, int d, bool update) {
  return (update ? 16 * (size_t)k * d : 0) + SmallDF<DM>::values(k) * sizeof(float) +
         (update ? 4 * (size_t)k : 0) + 64;
}

}  // namespace
}  // namespace gk

#endif
