// detail/init_par_tc_kernels.cuh: the filter of the k-means|| rounds with
// the dot products on the tensor cores (TF32 mma.sync), used for d <=
// kParTcMaxDim; k_par_filter (init_par_kernels.cuh) is the SIMT version.
//
// The bound of init_bound.cuh holds for any float image of the data whose
// rounding is covered by uprime and whose dot products' error is covered by
// kappa.  Here the images are rounded to TF32 (uprime covers the extra 2^-11
// relative error per coordinate), so that the tensor cores multiply them
// exactly, and kappa covers their float accumulation with a factor of 4 over
// round-to-nearest (the units truncate when they align and add).  As in
// k_par_filter, a pair is skipped only when its exact distance cannot lower
// D2, so the result is k_par_exact's bit for bit.
#ifndef GPUKMEANS_DETAIL_INIT_PAR_TC_KERNELS_CUH
#define GPUKMEANS_DETAIL_INIT_PAR_TC_KERNELS_CUH

#include "init_bound.cuh"
#include "init_par_kernels.cuh"
#include "tf32.cuh"

namespace gk {
namespace init {

constexpr int kTcWarps = 4;             // warps per block, each owns 32 consecutive points
constexpr int kTcGroup = 32;            // candidates tested together (4 mma n-tiles)
// The list of a warp's pairs that passed holds < 32 before a group adds its
// (at most 32 x kTcGroup) pairs.
constexpr int kTcList = 31 + 32 * kTcGroup;
constexpr int kTcMaxCands = 1 << 27;    // a list entry holds the candidate in 27 bits
constexpr int kParTcMaxDim = 256;       // the block's images must fit shared memory

// Coordinates padded to whole k-steps of 8, and the shared row stride (an odd
// multiple of 4 words: the fragment loads of a warp hit 32 distinct banks).
__host__ __device__ inline int tc_dim(int d) { return (d + 7) / 8 * 8; }
__host__ __device__ inline int tc_stride(int d) { return tc_dim(d) + 4; }
// Candidates padded to whole groups.
__host__ __device__ inline int tc_cands(int m) { return (m + kTcGroup - 1) / kTcGroup * kTcGroup; }
inline size_t tc_smem_bytes(int d) { return (size_t)kTcWarps * 32 * tc_stride(d) * sizeof(float); }

// The candidates' TF32 images in B-fragment order, bf[((nt * ks + s) * 32 +
// lane) * 2 + h] = image of candidate 8 nt + lane / 4, coordinate 8 s +
// lane % 4 + 4 h (zero beyond d and for the padding candidates), and their
// filter_q (+inf for the padding: never passes).  One thread per candidate.
static __global__ void k_par_image_tc(const double *__restrict__ cen, int m, int mp, int d, FloatImage im,
                                      unsigned int *__restrict__ bf, float *__restrict__ cq) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= mp) return;
  const int ks = tc_dim(d) / 8, nt = j >> 3, g = j & 7;
  float nb = 0.f;
  for (int c = 0; c < ks * 8; ++c) {
    float b = 0.f;
    if (j < m && c < d) {
      double v = cen[(size_t)j * d + c];
      if (im.shift) v = __dsub_rn(v, im.shift[c]);
      b = __uint_as_float(tf32_rna(__double2float_rn(v * im.scale)));
    }
    nb = fmaf(b, b, nb);
    const int s = c >> 3, r = c & 7;
    bf[(((size_t)nt * ks + s) * 32 + g * 4 + (r & 3)) * 2 + (r >> 2)] = __float_as_uint(b);
  }
  cq[j] = j < m ? filter_q(nb, im) : __int_as_float(0x7f800000);
}

// The exact distances of a warp's listed pairs (entry = point row | candidate
// j << 5), 32 at a time, one pair per lane, folded into the owners' D2 and
// labels: per row the least (distance, j) of each batch of 32 (two shared
// atomicMin: distances >= 0 order like their bits, then j among the equal),
// taken by the owner when it is below (D2, label) in that order.  Labels of
// earlier candidates are lower, so this is the exact rule's result (the
// first of the equal minima), whatever the order of the list.
template <typename T>
__device__ __forceinline__ void fold_listed(const T *__restrict__ x, long long n, int d, long long wbase,
                                            const double *__restrict__ cen, int base, const unsigned int *list,
                                            int count, unsigned long long *best_d, int *best_j, double &my,
                                            int &lb) {
  const int lane = threadIdx.x & 31;
  for (int e0 = 0; e0 < count; e0 += 32) {
    const int e = e0 + lane;
    unsigned long long key = ~0ull;
    int row = 0, j = 0;
    if (e < count) {
      const unsigned int ent = list[e];
      row = (int)(ent & 31u);
      j = (int)(ent >> 5);
      key = (unsigned long long)__double_as_longlong(exact_dist(x, n, d, wbase + row, cen + (size_t)j * d));
      atomicMin(&best_d[row], key);
    }
    __syncwarp();
    if (e < count && key == best_d[row]) atomicMin(&best_j[row], j);
    __syncwarp();
    const unsigned long long bd = best_d[lane];
    if (bd != ~0ull) {
      const double dist = __longlong_as_double((long long)bd);
      const int lj = base + best_j[lane];
      if (dist < my || (dist == my && lj < lb)) {
        my = dist;
        lb = lj;
      }
      best_d[lane] = ~0ull;
      best_j[lane] = 0x7fffffff;
    }
    __syncwarp();
  }
}

// The A fragments of one k-step for m-tiles 0 and 1 (r = row g, coordinate t
// of the step in the warp's images).
__device__ __forceinline__ void load_a(const float *r, int stride, unsigned int (&a0)[4], unsigned int (&a1)[4]) {
  a0[0] = __float_as_uint(r[0]);
  a0[1] = __float_as_uint(r[8 * stride]);
  a0[2] = __float_as_uint(r[4]);
  a0[3] = __float_as_uint(r[8 * stride + 4]);
  a1[0] = __float_as_uint(r[16 * stride]);
  a1[1] = __float_as_uint(r[24 * stride]);
  a1[2] = __float_as_uint(r[16 * stride + 4]);
  a1[3] = __float_as_uint(r[24 * stride + 4]);
}

// Calls f(v, h, col) for each of a lane's 32 accumulators v = acc[mt][q][e]
// of a group: row h = 2 mt + e / 2 (point g + 8h), column col = 8q + 2t + e % 2.
template <typename F>
__device__ __forceinline__ void for_each_pair(const float (&acc)[2][4][4], int t, F f) {
#pragma unroll
  for (int q = 0; q < 4; ++q)
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
      for (int e = 0; e < 4; ++e) f(acc[mt][q][e], 2 * mt + (e >> 1), 8 * q + 2 * t + (e & 1));
}

// Marks the pairs of a group whose left side (low) is below their row's
// limit: bits[h] for point g + 8h, bit = column; returns how many.
__device__ __forceinline__ int tc_marks(const float (&low)[2][4][4], const float (&rl)[4], int t,
                                        unsigned int (&bits)[4]) {
#pragma unroll
  for (int h = 0; h < 4; ++h) bits[h] = 0u;
  for_each_pair(low, t, [&](float v, int h, int col) { bits[h] |= v < rl[h] ? 1u << col : 0u; });
  return __popc(bits[0]) + __popc(bits[1]) + __popc(bits[2]) + __popc(bits[3]);
}

// Block: kTcWarps independent warps (no block barrier).  A warp keeps the
// TF32 images of its 32 points in shared memory (rows g, g+8 of m-tile 0 and
// g+16, g+24 of m-tile 1 in the fragments), streams the candidates' fragments
// from global memory (L1/L2), and per group of 32 candidates runs 16 mma and
// the test of init_bound.cuh on each of the 1024 pairs.  The pairs that pass
// (after the probe below, where many do) are appended to a list; once it
// holds a warp's worth, fold_listed computes their exact distances, one pair
// per lane, and the limits are lowered to the new D2.  A pair left out has an exact distance >= the D2 of its test,
// which is >= the final one: the result is k_par_exact's.
// KS > 0: d <= 8 KS (KS k-steps, unrolled); KS = 0: any d <= kParTcMaxDim.
template <typename T, int KS>
__global__ void __launch_bounds__(kTcWarps * 32, KS == 1 || KS == 2 ? 6 : 5)  // no spills (80 / 102 registers)
k_par_filter_tc(const T *__restrict__ x, long long n, int d, FloatImage im, const uint2 *__restrict__ bf,
                const float *__restrict__ cq, const double *__restrict__ cen, int m, int base,
                double *__restrict__ d2, int *__restrict__ lab, double *__restrict__ lv1, long long nch) {
  extern __shared__ __align__(16) float s_dyn[];
  __shared__ unsigned int s_list[kTcWarps][kTcList];
  __shared__ unsigned long long s_bd[kTcWarps][32];
  __shared__ int s_bj[kTcWarps][32];
  __shared__ double s_red[kTcWarps][32];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int ks = KS > 0 ? KS : tc_dim(d) / 8, stride = KS > 0 ? 8 * KS + 4 : tc_stride(d);
  float *sa = s_dyn + (size_t)warp * 32 * stride;  // 32 x stride
  unsigned int *list = s_list[warp];
  const long long wbase = ((long long)blockIdx.x * kTcWarps + warp) * 32, i = wbase + lane;
  const bool live = i < n;
  double my = live ? d2[i] : 0.0;
  int lb = live ? lab[i] : 0;
  float na = 0.f;
  for (int c = 0; c < ks * 8; ++c) {
    const float a = (live && c < d) ? __uint_as_float(tf32_rna(image_coord(x, n, i, c, im))) : 0.f;
    sa[lane * stride + c] = a;
    na = fmaf(a, a, na);
  }
  s_bd[warp][lane] = ~0ull;
  s_bj[warp][lane] = 0x7fffffff;
  const double eps = filter_eps(na, d, im);
  float lim = live ? filter_limit(filter_threshold(my, eps, im), na, im) : -__int_as_float(0x7f800000);
  float rl[4];  // the limits of this lane's fragment rows g + 8h
#pragma unroll
  for (int h = 0; h < 4; ++h) rl[h] = __shfl_sync(0xffffffffu, lim, g + 8 * h);
  __syncwarp();
  const float *arow = sa + g * stride + t;
  int listed = 0;  // warp-uniform
  const uint2 *bg = bf + lane;  // the group's fragments
  const float *qg = cq + 2 * t;   // and filter_q
  for (int c0 = 0; c0 < m; c0 += kTcGroup, bg += 4 * ks * 32, qg += kTcGroup) {
    float acc[2][4][4];
    if (KS > 0) {  // d <= 8 KS: unrolled, fragment offsets known
#pragma unroll
      for (int s = 0; s < (KS > 0 ? KS : 1); ++s) {
        unsigned int a0[4], a1[4];
        load_a(arow + s * 8, stride, a0, a1);
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          const uint2 b = __ldg(bg + (q * KS + s) * 32);
          if (s == 0) {
            mma_tf32_first(acc[0][q], a0, b.x, b.y);
            mma_tf32_first(acc[1][q], a1, b.x, b.y);
          } else {
            mma_tf32(acc[0][q], a0, b.x, b.y);
            mma_tf32(acc[1][q], a1, b.x, b.y);
          }
        }
      }
    } else {
#pragma unroll
      for (int mt = 0; mt < 2; ++mt)
#pragma unroll
        for (int q = 0; q < 4; ++q)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[mt][q][e] = 0.f;
      for (int s = 0; s < ks; ++s) {
        unsigned int a0[4], a1[4];
        load_a(arow + s * 8, stride, a0, a1);
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          const uint2 b = __ldg(bg + ((size_t)q * ks + s) * 32);
          mma_tf32(acc[0][q], a0, b.x, b.y);
          mma_tf32(acc[1][q], a1, b.x, b.y);
        }
      }
    }
    // the tests' left sides (for_each_pair says which pair is where)
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const float2 qb = *reinterpret_cast<const float2 *>(qg + 8 * q);
#pragma unroll
      for (int mt = 0; mt < 2; ++mt)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[mt][q][e] = fmaf(-2.f, acc[mt][q][e], (e & 1) ? qb.y : qb.x);
    }
    unsigned int bits[4];
    int cnt = tc_marks(acc, rl, t, bits);
    // Far D2 (the first round): many pairs pass.  Each point first takes the
    // exact distance of its candidate of least left side in the group, which
    // lowers its limit to about its final one, then the group is tested again.
    if (__any_sync(0xffffffffu, cnt > 4)) {
      float best[4];
      int col[4];
#pragma unroll
      for (int h = 0; h < 4; ++h) {
        best[h] = __int_as_float(0x7f800000);
        col[h] = 0;
      }
      for_each_pair(acc, t, [&](float v, int h, int c) {
        if (v < best[h]) {
          best[h] = v;
          col[h] = c;
        }
      });
      float pb = 0.f;
      int pc = 0;
#pragma unroll
      for (int h = 0; h < 4; ++h) {
#pragma unroll
        for (int o = 1; o <= 2; o <<= 1) {
          const float ob = __shfl_xor_sync(0xffffffffu, best[h], o);
          const int oc = __shfl_xor_sync(0xffffffffu, col[h], o);
          if (ob < best[h]) {
            best[h] = ob;
            col[h] = oc;
          }
        }
        const float vb = __shfl_sync(0xffffffffu, best[h], 4 * (lane & 7));
        const int vc = __shfl_sync(0xffffffffu, col[h], 4 * (lane & 7));
        if ((lane >> 3) == h) {
          pb = vb;
          pc = vc;
        }
      }
      if (pb < lim) {
        const double dist = exact_dist(x, n, d, i, cen + (size_t)(c0 + pc) * d);
        const int lj = base + c0 + pc;
        if (dist < my || (dist == my && lj < lb)) {
          my = dist;
          lb = lj;
          // from a D2 raised by 2^-40: the group's candidates before pc at
          // exactly this distance still pass (the first of equals wins)
          lim = filter_limit(filter_threshold(my * (1.0 + 0x1p-40), eps, im), na, im);
        }
      }
#pragma unroll
      for (int h = 0; h < 4; ++h) rl[h] = __shfl_sync(0xffffffffu, lim, g + 8 * h);
      cnt = tc_marks(acc, rl, t, bits);
    }
    if (!__any_sync(0xffffffffu, cnt != 0)) continue;
    const int incl = warp_inclusive_sum(cnt, lane);
    int pos = listed + incl - cnt;
#pragma unroll
    for (int h = 0; h < 4; ++h) {
      unsigned int b = bits[h];
      while (b) {
        const int col = __ffs(b) - 1;
        b &= b - 1;
        list[pos++] = (unsigned int)(g + 8 * h) | (unsigned int)(c0 + col) << 5;
      }
    }
    listed += __shfl_sync(0xffffffffu, incl, 31);
    if (listed < 32) continue;
    __syncwarp();  // the list is written
    fold_listed(x, n, d, wbase, cen, base, list, listed, s_bd[warp], s_bj[warp], my, lb);
    listed = 0;
    if (live) lim = filter_limit(filter_threshold(my, eps, im), na, im);
#pragma unroll
    for (int h = 0; h < 4; ++h) rl[h] = __shfl_sync(0xffffffffu, lim, g + 8 * h);
  }
  if (listed) {
    __syncwarp();
    fold_listed(x, n, d, wbase, cen, base, list, listed, s_bd[warp], s_bj[warp], my, lb);
  }
  if (live) {
    d2[i] = my;
    lab[i] = lb;
  }
  warp_level1(live ? my : 0.0, i, nch, s_red, lv1);
}

}  // namespace init
}  // namespace gk

#endif
