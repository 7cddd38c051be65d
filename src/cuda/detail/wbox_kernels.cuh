// detail/wbox_kernels.cuh: the small-d assignment on rows ordered in space
// (ordered.cu keeps the ordered copy of x).  Neighbouring rows lie close
// together, so the 32 x P consecutive rows of a warp of small_pass
// (WARP_ROWS) lie in a small box; the warp lists the centers that box can
// need (detail/warp_box.cuh: the limit, and why the scan's choice is
// always listed), and every lane
// computes its points' distances to the listed centers only, in index
// order, with the scan's own arithmetic (Small<T, DM>::dist) and strict
// '<': the labels of the full scan (in double precision, stats'), and the
// fused sums of small_pass, carried from one iteration to the next (CARRY,
// Plan::ord_carry: only the points that moved are added and taken away).
// With upd_cen_d, the grid's last block then runs the iteration's update
// (update_by_last_block; Plan::ord_fused): one launch an iteration.
//
// The list's bound: R, the largest distance of the warp's points to their
// previous centers (in double precision, of their float images), where
// every point has one (a center that is not NaN); else U, the least largest
// distance from the box to a center (one more pass over the centers).
// Measured on B (1e6 x 2, k = 100, one H200, tools/cuda-dev/bproto): ten
// iterations 20.6 us an iteration in single precision (the scan: 36.3) and
// 27.6 us in double with U (the grid of cells: 41.0).  The engine's fit,
// tools/cuda-dev/ordfit (one H200, 2026-11-28), its 10 iterations'
// assignments in double: U 253 us, R 233.
//
// Included by assign.cu only.
#ifndef GPUKMEANS_DETAIL_WBOX_KERNELS_CUH
#define GPUKMEANS_DETAIL_WBOX_KERNELS_CUH

#include "assign_kernels.cuh"
#include "update_tail.cuh"
#include "warp_box.cuh"

namespace gk {
namespace {

// The centers as the box tests take them (float: the stored values;
// double: rounded to float), DM floats a center, in shared memory after
// small_pass's layout: read there, the list's and the bound's passes over
// the centers wait on shared loads, not on global ones (with the labels
// read once, small_pass's old: B's 10 iterations' assignments 238 -> 221
// us in single precision, 289 -> 264 in double, one H200).
template <typename T, int DM>
__host__ __device__ constexpr size_t wbox_images_at(int k, int d) {
  return (small_smem_bytes<T, DM>(k, d, true) + 15) / 16 * 16;
}
template <typename T, int DM>
__host__ __device__ constexpr size_t wbox_smem_bytes(int k, int d) {
  return wbox_images_at<T, DM>(k, d) + (size_t)k * DM * sizeof(float);
}
template <int DM>
__device__ __forceinline__ void wbox_center(const float *sbox, int c, float (&cv)[DM]) {
  if constexpr (DM == 2) {
    const float2 v = reinterpret_cast<const float2 *>(sbox)[c];
    cv[0] = v.x;
    cv[1] = v.y;
  } else {
#pragma unroll
    for (int j = 0; j < DM; ++j) cv[j] = sbox[(size_t)c * DM + j];
  }
}

// The warp's least and largest float by one REDUX (redux.sync, sm_80+) on
// their ordered bits instead of five shuffles and five fminf / fmaxf.
__device__ __forceinline__ float wb_warp_min(float v) {
  return order_bits_float(__reduce_min_sync(0xffffffffu, float_order_bits(v)));
}
__device__ __forceinline__ float wb_warp_max(float v) {
  return order_bits_float(__reduce_max_sync(0xffffffffu, float_order_bits(v)));
}

// FIRST: the fit's first iteration (its labels unset, not read); with
// perm, x is the rows as given and xout the ordered copy, made on the way
// (small_pass).
template <typename T, int DM, bool UPDATE, bool CARRY, bool FIRST>
__global__ void __launch_bounds__(256)
k_assign_wbox(const T *__restrict__ x, long long n, int d, const T *__restrict__ cen, int k,
              int *__restrict__ labels, State *st, int max_iter, u64 *__restrict__ acc,
              unsigned int *__restrict__ counts, const int *__restrict__ scale, double *upd_cen_d, float *upd_cen_f,
              bool keep, const int *__restrict__ perm, T *__restrict__ xout) {
  constexpr int P = Small<T, DM>::PPT;
  constexpr bool kSingle = std::is_same<T, float>::value;
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ unsigned int sh_changed;
  __shared__ float smc[DM];  // the largest |c_j| of the finite centers, as the box test sees them
  unsigned int *slimb = reinterpret_cast<unsigned int *>(smem);
  T *sc = reinterpret_cast<T *>(slimb + (UPDATE ? 4 * (size_t)k * d : 0));
  unsigned int *scnt = reinterpret_cast<unsigned int *>(sc + Small<T, DM>::values(k));
  float *sbox = reinterpret_cast<float *>(smem + wbox_images_at<T, DM>(k, d));
  const int tid = threadIdx.x, lane = tid & 31;
  if (tid == 0) sh_changed = 0;
  if (tid < DM) smc[tid] = 0;
  double pw[DM];
  small_sums_begin<DM, UPDATE>(slimb, scnt, k, d, scale, pw);
  // Launched as a programmatic dependent of the last iteration's kernel
  // (gk_cuda_data::pdl), the block got here while that kernel's last block
  // ran the update: what follows reads its state, centers and labels.
  grid_dependency_wait();
  // The state and the centers read together (one wait on L2, not two; a
  // finished fit's block leaves after reading centers it does not use),
  // the centers' float images for the box tests from the same loads, with
  // each column's largest finite |value| (as bits: non-negative floats
  // order as their bits).
  const bool finished = fit_finished(st, max_iter);
  unsigned int mine[DM];
#pragma unroll
  for (int j = 0; j < DM; ++j) mine[j] = 0;
  Small<T, DM>::load(sc, cen, k, d, false, [&](int c, int j, T tv) {
    const float v = (float)tv;
    sbox[(size_t)c * DM + j] = v;
    if (fabsf(v) <= 3.4e38f)  // (NaN and inf left out; j a constant index, mine kept in registers)
#pragma unroll
      for (int q = 0; q < DM; ++q)
        if (q == j) mine[q] = max(mine[q], __float_as_uint(fabsf(v)));
  });
  if (finished) {  // (the same in every thread of the grid)
    if (FIRST && perm)  // (never on a fit's first launch; the copy made all the same)
      for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        for (int j = 0; j < d; ++j) xout[i + n * j] = x[(long long)perm[i] + n * j];
    return;
  }
  __syncthreads();
#pragma unroll
  for (int j = 0; j < DM; ++j) {
    const unsigned int m = __reduce_max_sync(0xffffffffu, mine[j]);
    if (lane == 0 && m) atomicMax(reinterpret_cast<unsigned int *>(&smc[j]), m);
  }
  __syncthreads();
  float Mc[DM];
  double Mcd = 0;
#pragma unroll
  for (int j = 0; j < DM; ++j) { Mc[j] = smc[j]; Mcd = fmax(Mcd, (double)Mc[j]); }
  // (double: the centers' float images move them by at most eps; Mc is of
  // those images, within a float ulp of the values: the factor in
  // wb_center_eps covers it)
  const double eps = kSingle ? 0.0 : wb_center_eps(Mcd * (1 + 0x1p-23), DM);
  small_pass<T, DM, UPDATE, P, CARRY, true, FIRST>(
      x, n, d, k, labels, slimb, scnt, pw, acc, counts, &sh_changed,
      [&](const T (&xr)[P][DM], unsigned int valid, int (&bi)[P], const int (&olds)[P]) {
        // the warp's box, in float (double: rounded outward)
        float lo[DM], hi[DM];
#pragma unroll
        for (int j = 0; j < DM; ++j) { lo[j] = pos_inf<float>(); hi[j] = -pos_inf<float>(); }
#pragma unroll
        for (int r = 0; r < P; ++r)
          if ((valid >> r) & 1u)
#pragma unroll
            for (int j = 0; j < DM; ++j) {
              const float a = kSingle ? (float)xr[r][j] : __double2float_rd((double)xr[r][j]);
              const float b = kSingle ? (float)xr[r][j] : __double2float_ru((double)xr[r][j]);
              lo[j] = fminf(lo[j], a);
              hi[j] = fmaxf(hi[j], b);
            }
#pragma unroll
        for (int j = 0; j < DM; ++j) {
          lo[j] = wb_warp_min(lo[j]);
          hi[j] = wb_warp_max(hi[j]);
        }
        T best[P];
#pragma unroll
        for (int r = 0; r < P; ++r) { best[r] = pos_inf<T>(); bi[r] = -1; }
        if (!(lo[0] <= hi[0])) return;  // (no point in the warp)
        // the bound
        float B = pos_inf<float>();
        bool have = false;
        {  // R: the previous centers, where every point has one (float images in double)
          float R = 0;
          bool all = true;
#pragma unroll
          for (int r = 0; r < P; ++r) {
            if (!((valid >> r) & 1u)) continue;
            const int old = olds[r];
            if (old < 0 || old >= k) { all = false; continue; }
            float cv[DM];
            wbox_center(sbox, old, cv);
            float rr = 0;
#pragma unroll
            for (int j = 0; j < DM; ++j) {
              const float t = (float)xr[r][j] - cv[j];
              rr = j == 0 ? t * t : fmaf(t, t, rr);
            }
            if (rr == rr) R = fmaxf(R, rr);
            else all = false;  // (a NaN center: no bound from it)
          }
          R = wb_warp_max(R);  // (R >= 0, not NaN)
          have = __all_sync(0xffffffffu, all);
          B = R;
        }
        if (!have) {  // U
          float U = pos_inf<float>();
          for (int c = lane; c < k; c += 32) {
            float cv[DM];
            wbox_center(sbox, c, cv);
            U = fminf(U, wb_largest(lo, hi, cv, DM));
          }
          U = wb_warp_min(U);  // (U >= 0 or +inf: fminf left NaN centers out)
          B = U;
        }
        double limit;
        if (kSingle) {
          float M2 = 0;
#pragma unroll
          for (int j = 0; j < DM; ++j) {
            const float m = fmaxf(Mc[j], fmaxf(fabsf(lo[j]), fabsf(hi[j])));
            M2 = fmaf(m, m, M2);
          }
          limit = wb_limit_single(B, wb_error_single(M2, DM));
        } else {
          float Mb = 0;
#pragma unroll
          for (int j = 0; j < DM; ++j) Mb = fmaxf(Mb, fmaxf(fabsf(lo[j]), fabsf(hi[j])));
          // (R is of the points' float images too: their rounding, at most
          // wb_center_eps of the box's magnitude, joins the centers')
          const double e = have ? eps + wb_center_eps((double)Mb, DM) : eps;
          limit = wb_usable(fmax(Mcd, (double)Mb)) ? wb_limit_double(B, e, DM) : pos_inf<double>();
        }
        // the list, 32 centers a round in index order; every lane's points
        // against each listed center
        auto listed = [&](int c) {
          bool cand = false;
          if (c < k) {
            float cv[DM];
            wbox_center(sbox, c, cv);
            // (single: limit holds a float, so the float comparison is the
            // same; a NaN center: listed, never taken)
            if (kSingle) cand = !(wb_least(lo, hi, cv, DM) > (float)limit);
            else cand = !((double)wb_least(lo, hi, cv, DM) > limit);
          }
          return __ballot_sync(0xffffffffu, cand);
        };
        auto take = [&](int c0, unsigned int m) {
          while (m) {
            const int cc = c0 + __ffs(m) - 1;
            m &= m - 1;
            T cv[Small<T, DM>::SD];
            load_row(cv, sc + Small<T, DM>::row_at(cc));
#pragma unroll
            for (int r = 0; r < P; ++r) {
              const T dd = Small<T, DM>::dist(xr[r], cv);
              if (dd < best[r]) { best[r] = dd; bi[r] = cc; }
            }
          }
        };
        // (four rounds' lists first, then their centers: the rounds' box
        // tests overlap; C, k = 1000: 595 -> 575 us over 10 iterations)
        for (int c0 = 0; c0 < k; c0 += 128) {
          unsigned int m[4];
#pragma unroll
          for (int q = 0; q < 4; ++q) m[q] = c0 + 32 * q < k ? listed(c0 + 32 * q + lane) : 0u;  // (uniform)
#pragma unroll
          for (int q = 0; q < 4; ++q) take(c0 + 32 * q, m[q]);
        }
      },
      perm, xout);
  // (small_pass ends with a barrier: sh_changed is complete)
  if (tid == 0 && st && sh_changed) atomicAdd(&st->changed, (u64)sh_changed);
  // (the block's part is done: the next iteration's kernel may start its
  // blocks where this grid's have left)
  grid_dependents_launch();
  // the update by the last block (Plan::ord_fused), not a kernel of its own
  if (upd_cen_d) update_by_last_block(st, acc, counts, upd_cen_d, upd_cen_f, k, d, scale, keep);
}

}  // namespace
}  // namespace gk

#endif  // GPUKMEANS_DETAIL_WBOX_KERNELS_CUH
