// bproto.cu: a probe of problem B's step (issue 15; dev tool, not the engine).
//   bproto [n] [k]        (blobs as bench.R's B: d = 2, centers U(0, 100),
//                          noise N(0, 1); single precision; CUDA events,
//                          median of 15)
// What the small-d step's parts cost, from the engine's own kernels and
// pieces (small_pass, the limbs, the grid's build):
//   - the engine's scan and grid steps (launch_assign), fused sums and not;
//   - small_pass with a near() that costs nothing (a label from x's integer
//     part): the x loads, labels and sums alone;
//   - a grid whose lists carry the centers' values (float4: -2c0, -2c1,
//     |c|^2, index) instead of their indices, so that a candidate costs one
//     16-byte load and no index arithmetic; its cell in float;
//   - the scan's body at other occupancies and points a thread;
//   - rows ordered along a Z curve, where each warp lists the centers its
//     box can need (k_wbox, k_wbox_d), in both precisions, and ten
//     iterations of each way in a CUDA graph with the engine's update;
//     what the ordering costs (keys, cub's radix sort, the gather).
// Each variant's labels are checked against the scan's.  The warp boxes'
// limits are warp_box.cuh's (checked by grid_emu; tools/cuda-dev/LOG.md,
// twentieth session).
#include <algorithm>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <vector>
#include <random>
#include <numeric>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "b_blobs.h"
#include "detail/engine.hpp"
#include "detail/assign_kernels.cuh"
#include "detail/cell_grid.cuh"
#include "detail/warp_box.cuh"

#define OK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

namespace gk {
namespace {

// small_pass with a label from x alone (no distances).
template <bool UPDATE>
__global__ void __launch_bounds__(256)
k_trivial(const float *__restrict__ x, long long n, int d, int k, int *__restrict__ labels, u64 *acc,
          unsigned int *counts, const int *__restrict__ scale) {
  constexpr int P = 4;
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ unsigned int sh_changed;
  unsigned int *slimb = reinterpret_cast<unsigned int *>(smem);
  unsigned int *scnt = slimb + (UPDATE ? 4 * (size_t)k * d : 0);
  if (threadIdx.x == 0) sh_changed = 0;
  double pw[2];
  small_sums_begin<2, UPDATE>(slimb, scnt, k, d, scale, pw);
  __syncthreads();
  small_pass<float, 2, UPDATE, P>(x, n, d, k, labels, slimb, scnt, pw, acc, counts, &sh_changed,
                                  [&](const float (&xr)[P][2], unsigned int valid, int (&bi)[P]) {
#pragma unroll
                                    for (int r = 0; r < P; ++r)
                                      bi[r] = (int)(fabsf(xr[r][0]) * 1.7f + fabsf(xr[r][1]) * 2.3f) % k;
                                  });
}

// The float4 lists: cell c's entries at flist[c * cap ...], fcount[c] of
// them (-1: scan).  Made from the engine's build (index lists).
__global__ void k_expand(const float *__restrict__ cen, int k, GridBufs g, int cells, int cap, float4 *flist,
                         int *fcount, float4 *fbox) {
  const int cell = blockIdx.x * blockDim.x + threadIdx.x;
  if (cell == 0) {
    const GridBox &b = *g.box;
    *fbox = make_float4(b.usable ? (float)b.lo[0] : 0.f, (float)b.lo[1], (float)b.inv[0], (float)b.inv[1]);
    fbox[1] = make_float4(__int_as_float(b.usable ? b.g[0] : 0), __int_as_float(b.g[1]), 0.f, 0.f);
  }
  if (cell >= cells) return;
  int c = g.counts[cell];
  if (c > cap) c = -1;
  fcount[cell] = c;
  for (int t = 0; t < (c < 0 ? 0 : c); ++t) {
    const int i = g.lists[(size_t)cell * kGridCap + t];
    const float v0 = cen[i], v1 = cen[i + k];
    float cc = fmaf(v0, v0, 0.f);
    cc = fmaf(v1, v1, cc);
    flist[(size_t)cell * cap + t] = make_float4(-2.0f * v0, -2.0f * v1, cc, __int_as_float(i));
  }
}

// The step through the float4 lists (cells the engine's, so the lists are
// complete for a point of the cell: the cell from x in float lies within
// 1/16 of a cell of the true one, inside the build's widened box).
template <bool UPDATE>
__global__ void __launch_bounds__(256)
k_fgrid(const float *__restrict__ x, long long n, int d, const float *__restrict__ cen, int k,
        int *__restrict__ labels, u64 *acc, unsigned int *counts, const int *__restrict__ scale,
        const float4 *__restrict__ flist, const int *__restrict__ fcount, const float4 *__restrict__ fbox, int cap) {
  constexpr int P = 4;
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ unsigned int sh_changed;
  unsigned int *slimb = reinterpret_cast<unsigned int *>(smem);
  float *sc = reinterpret_cast<float *>(slimb + (UPDATE ? 4 * (size_t)k * d : 0));
  unsigned int *scnt = reinterpret_cast<unsigned int *>(sc + Small<float, 2>::values(k));
  if (threadIdx.x == 0) sh_changed = 0;
  Small<float, 2>::load(sc, cen, k, d, false);
  double pw[2];
  small_sums_begin<2, UPDATE>(slimb, scnt, k, d, scale, pw);
  const float4 b0 = fbox[0], b1 = fbox[1];
  const int g0 = __float_as_int(b1.x), g1 = __float_as_int(b1.y);
  __syncthreads();
  small_pass<float, 2, UPDATE, P>(
      x, n, d, k, labels, slimb, scnt, pw, acc, counts, &sh_changed,
      [&](const float (&xr)[P][2], unsigned int valid, int (&bi)[P]) {
        int cell[P], cnt[P], cmax = 0;
        float best[P];
#pragma unroll
        for (int r = 0; r < P; ++r) {
          bi[r] = -1;
          best[r] = pos_inf<float>();
          const float t0 = (xr[r][0] - b0.x) * b0.z, t1 = (xr[r][1] - b0.y) * b0.w;
          const bool in = ((valid >> r) & 1u) && g0 > 0 && t0 >= 0 && t1 >= 0 && t0 < g0 && t1 < g1;
          cell[r] = in ? min((int)t0, g0 - 1) + g0 * min((int)t1, g1 - 1) : 0;
          cnt[r] = in ? __ldg(&fcount[cell[r]]) : -1;
          cmax = max(cmax, cnt[r]);
        }
        for (int u = 0; u < cmax; ++u) {
#pragma unroll
          for (int r = 0; r < P; ++r) {
            if (u >= cnt[r]) continue;
            const float4 e = __ldg(&flist[(size_t)cell[r] * cap + u]);
            const float dd = fmaf(xr[r][1], e.y, fmaf(xr[r][0], e.x, e.z));
            if (dd < best[r]) { best[r] = dd; bi[r] = __float_as_int(e.w); }
          }
        }
#pragma unroll
        for (int r = 0; r < P; ++r) {
          if (!((valid >> r) & 1u) || cnt[r] >= 0) continue;
          for (int c = 0; c < k; ++c) {
            const float dd = grid_dist<float, 2>(xr[r], sc, c);
            if (dd < best[r]) { best[r] = dd; bi[r] = c; }
          }
        }
      });
}

// k_assign_small's body with a chosen occupancy (MINB blocks of 256 an SM)
// and P points a thread.
template <bool UPDATE, int MINB, int P>
__global__ void __launch_bounds__(256, MINB)
k_scan_occ(const float *__restrict__ x, long long n, int d, const float *__restrict__ cen, int k,
           int *__restrict__ labels, u64 *__restrict__ acc, unsigned int *__restrict__ counts,
           const int *__restrict__ scale) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ unsigned int sh_changed;
  unsigned int *slimb = reinterpret_cast<unsigned int *>(smem);
  float *sc = reinterpret_cast<float *>(slimb + (UPDATE ? 4 * (size_t)k * d : 0));
  unsigned int *scnt = reinterpret_cast<unsigned int *>(sc + Small<float, 2>::values(k));
  if (threadIdx.x == 0) sh_changed = 0;
  Small<float, 2>::load(sc, cen, k, d, false);
  double pw[2];
  small_sums_begin<2, UPDATE>(slimb, scnt, k, d, scale, pw);
  __syncthreads();
  small_pass<float, 2, UPDATE, P>(x, n, d, k, sc, labels, slimb, scnt, pw, acc, counts, &sh_changed);
}

// Rows ordered in space (a Z curve over the data's box, or buckets of a
// coarse grid): a warp's P x 32 rows lie in a small box, so the warp lists
// the centers that can be nearest to some point of its box itself (box
// distances in float with a slack; every lane a few centers, one ballot a
// round: the list in index order), and every lane computes its points'
// distances to that list only (the scan's arithmetic, strict '<' in index
// order: the scan's labels).  No grid, no build.  The list's bound: U, the
// least largest distance from the box to a center (one more pass over the
// centers), or (RB) R, the largest distance of the warp's points to their
// previous centers (where every point has one); its limit warp_box.cuh's
// (grid_emu checks it on the CPU).
template <bool UPDATE, int P, bool RB>
__global__ void __launch_bounds__(256)
k_wbox(const float *__restrict__ x, long long n, int d, const float *__restrict__ cen, int k,
       int *__restrict__ labels, State *st, int max_iter, u64 *acc, unsigned int *counts,
       const int *__restrict__ scale, unsigned long long *pairs) {
  if (fit_finished(st, max_iter)) return;
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ unsigned int sh_changed;
  unsigned int *slimb = reinterpret_cast<unsigned int *>(smem);
  float *sc = reinterpret_cast<float *>(slimb + (UPDATE ? 4 * (size_t)k * d : 0));
  unsigned int *scnt = reinterpret_cast<unsigned int *>(sc + Small<float, 2>::values(k));
  if (threadIdx.x == 0) sh_changed = 0;
  __shared__ unsigned int smc[2];  // the largest |c_j| of the finite centers (float bits)
  if (threadIdx.x < 2) smc[threadIdx.x] = 0;
  Small<float, 2>::load(sc, cen, k, d, false);
  double pw[2];
  small_sums_begin<2, UPDATE>(slimb, scnt, k, d, scale, pw);
  __syncthreads();
  for (int c = threadIdx.x; c < k; c += blockDim.x)
    for (int j = 0; j < 2; ++j) {
      const float v = fabsf(cen[c + (size_t)k * j]);
      if (v <= 3.0e38f) atomicMax(&smc[j], __float_as_uint(v));
    }
  __syncthreads();
  const float Mc0 = __uint_as_float(smc[0]), Mc1 = __uint_as_float(smc[1]);
  const int lane = threadIdx.x & 31;
  unsigned long long mypairs = 0;
  small_pass<float, 2, UPDATE, P>(
      x, n, d, k, labels, slimb, scnt, pw, acc, counts, &sh_changed,
      [&](const float (&xr)[P][2], unsigned int valid, int (&bi)[P], const int (&olds)[P]) {
        float lo0 = pos_inf<float>(), lo1 = pos_inf<float>(), hi0 = -pos_inf<float>(), hi1 = -pos_inf<float>();
#pragma unroll
        for (int r = 0; r < P; ++r)
          if ((valid >> r) & 1u) {
            lo0 = fminf(lo0, xr[r][0]); hi0 = fmaxf(hi0, xr[r][0]);
            lo1 = fminf(lo1, xr[r][1]); hi1 = fmaxf(hi1, xr[r][1]);
          }
#pragma unroll
        for (int o = 16; o; o >>= 1) {
          lo0 = fminf(lo0, __shfl_xor_sync(0xffffffffu, lo0, o));
          hi0 = fmaxf(hi0, __shfl_xor_sync(0xffffffffu, hi0, o));
          lo1 = fminf(lo1, __shfl_xor_sync(0xffffffffu, lo1, o));
          hi1 = fmaxf(hi1, __shfl_xor_sync(0xffffffffu, hi1, o));
        }
        float best[P];
#pragma unroll
        for (int r = 0; r < P; ++r) { best[r] = pos_inf<float>(); bi[r] = -1; }
        if (!(lo0 <= hi0)) return;  // (no valid point in the warp)
        const int kp = Small<float, 2>::padded(k);
        float U = pos_inf<float>();
        bool have = false;
        if (RB) {  // the previous centers' distances, where every point of the warp has one
          float R = 0;
          bool all = true;
#pragma unroll
          for (int r = 0; r < P; ++r) {
            if (!((valid >> r) & 1u)) continue;
            const int old = olds[r];  // (small_pass's: the labels as they are)
            if (old < 0) { all = false; continue; }
            const float *p = sc + Small<float, 2>::row_at(old);
            const float t0 = xr[r][0] + 0.5f * p[0], t1 = xr[r][1] + 0.5f * p[1];
            const float rr = fmaf(t1, t1, t0 * t0);
            if (rr == rr) R = fmaxf(R, rr);
            else all = false;  // (a NaN center named: U instead)
          }
#pragma unroll
          for (int o = 16; o; o >>= 1) R = fmaxf(R, __shfl_xor_sync(0xffffffffu, R, o));
          have = __all_sync(0xffffffffu, all) && R == R;
          U = R;
        }
        if (!have) {  // U: the least largest distance from the box to a center
          U = pos_inf<float>();
          for (int c = lane; c < kp; c += 32) {
            const float *p = sc + Small<float, 2>::row_at(c);
            const float c0 = -0.5f * p[0], c1 = -0.5f * p[1];
            const float f0 = fmaxf(c0 - lo0, hi0 - c0), f1 = fmaxf(c1 - lo1, hi1 - c1);
            if (c < k) U = fminf(U, fmaf(f1, f1, f0 * f0));
          }
#pragma unroll
          for (int o = 16; o; o >>= 1) U = fminf(U, __shfl_xor_sync(0xffffffffu, U, o));
        }
        const float M0 = fmaxf(Mc0, fmaxf(fabsf(lo0), fabsf(hi0))), M1 = fmaxf(Mc1, fmaxf(fabsf(lo1), fabsf(hi1)));
        const float limit = wb_limit_single(U, wb_error_single(fmaf(M1, M1, M0 * M0), 2));
        for (int c0b = 0; c0b < kp; c0b += 32) {
          const int c = c0b + lane;
          bool cand = false;
          if (c < k) {
            const float *p = sc + Small<float, 2>::row_at(c);
            const float c0 = -0.5f * p[0], c1 = -0.5f * p[1];
            const float a0 = fmaxf(fmaxf(lo0 - c0, c0 - hi0), 0.f), a1 = fmaxf(fmaxf(lo1 - c1, c1 - hi1), 0.f);
            cand = !(fmaf(a1, a1, a0 * a0) > limit);  // (NaN centers: listed, never taken)
          }
          unsigned int m = __ballot_sync(0xffffffffu, cand);
          while (m) {
            const int cc = c0b + __ffs(m) - 1;
            m &= m - 1;
            float cv[4];
            load_row(cv, sc + Small<float, 2>::row_at(cc));
            ++mypairs;
#pragma unroll
            for (int r = 0; r < P; ++r) {
              const float dd = Small<float, 2>::dist(xr[r], cv);
              if (dd < best[r]) { best[r] = dd; bi[r] = cc; }
            }
          }
        }
      });
  if (lane == 0 && pairs) atomicAdd(pairs, mypairs);
  if (threadIdx.x == 0 && st && sh_changed) atomicAdd(&st->changed, (u64)sh_changed);
}

// The same in double precision: the warp's box and the centers rounded to
// float (the box outward), the list from float box distances and
// warp_box.cuh's limit, the exact rule's distances (Small<double>) to the
// list in index order: stats' labels.
template <bool UPDATE, int P>
__global__ void __launch_bounds__(256)
k_wbox_d(const double *__restrict__ x, long long n, int d, const double *__restrict__ cen, int k,
         int *__restrict__ labels, State *st, int max_iter, u64 *acc, unsigned int *counts,
         const int *__restrict__ scale, unsigned long long *pairs) {
  if (fit_finished(st, max_iter)) return;
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ unsigned int sh_changed;
  unsigned int *slimb = reinterpret_cast<unsigned int *>(smem);
  double *sc = reinterpret_cast<double *>(slimb + (UPDATE ? 4 * (size_t)k * d : 0));
  unsigned int *scnt = reinterpret_cast<unsigned int *>(sc + Small<double, 2>::values(k));
  if (threadIdx.x == 0) sh_changed = 0;
  __shared__ unsigned long long smc;  // the largest |c_j| of the finite centers (double bits)
  if (threadIdx.x == 0) smc = 0;
  Small<double, 2>::load(sc, cen, k, d, false);
  double pw[2];
  small_sums_begin<2, UPDATE>(slimb, scnt, k, d, scale, pw);
  __syncthreads();
  for (int e = threadIdx.x; e < 2 * k; e += blockDim.x) {
    const double v = fabs(cen[e]);
    if (v <= 1.7e308) atomicMax(&smc, (unsigned long long)__double_as_longlong(v));
  }
  __syncthreads();
  const double Mcd = __longlong_as_double((long long)smc);
  const double eps = wb_center_eps(Mcd, 2);
  const int lane = threadIdx.x & 31;
  unsigned long long mypairs = 0;
  small_pass<double, 2, UPDATE, P>(
      x, n, d, k, labels, slimb, scnt, pw, acc, counts, &sh_changed,
      [&](const double (&xr)[P][2], unsigned int valid, int (&bi)[P]) {
        double dl0 = pos_inf<double>(), dl1 = pos_inf<double>(), dh0 = -pos_inf<double>(), dh1 = -pos_inf<double>();
#pragma unroll
        for (int r = 0; r < P; ++r)
          if ((valid >> r) & 1u) {
            dl0 = fmin(dl0, xr[r][0]); dh0 = fmax(dh0, xr[r][0]);
            dl1 = fmin(dl1, xr[r][1]); dh1 = fmax(dh1, xr[r][1]);
          }
        float lo0 = __double2float_rd(dl0), lo1 = __double2float_rd(dl1);
        float hi0 = __double2float_ru(dh0), hi1 = __double2float_ru(dh1);
#pragma unroll
        for (int o = 16; o; o >>= 1) {
          lo0 = fminf(lo0, __shfl_xor_sync(0xffffffffu, lo0, o));
          hi0 = fmaxf(hi0, __shfl_xor_sync(0xffffffffu, hi0, o));
          lo1 = fminf(lo1, __shfl_xor_sync(0xffffffffu, lo1, o));
          hi1 = fmaxf(hi1, __shfl_xor_sync(0xffffffffu, hi1, o));
        }
        double best[P];
#pragma unroll
        for (int r = 0; r < P; ++r) { best[r] = pos_inf<double>(); bi[r] = -1; }
        if (!(lo0 <= hi0)) return;
        float U = pos_inf<float>();
        for (int c = lane; c < k; c += 32) {
          const float c0 = (float)sc[2 * c], c1 = (float)sc[2 * c + 1];
          const float f0 = fmaxf(c0 - lo0, hi0 - c0), f1 = fmaxf(c1 - lo1, hi1 - c1);
          U = fminf(U, fmaf(f1, f1, f0 * f0));
        }
#pragma unroll
        for (int o = 16; o; o >>= 1) U = fminf(U, __shfl_xor_sync(0xffffffffu, U, o));
        const double Mw = fmax(Mcd, (double)fmaxf(fmaxf(fabsf(lo0), fabsf(hi0)), fmaxf(fabsf(lo1), fabsf(hi1))));
        const double limit = wb_usable(Mw) ? wb_limit_double(U, eps, 2) : pos_inf<double>();
        for (int c0b = 0; c0b < k; c0b += 32) {
          const int c = c0b + lane;
          bool cand = false;
          if (c < k) {
            const float c0 = (float)sc[2 * c], c1 = (float)sc[2 * c + 1];
            const float a0 = fmaxf(fmaxf(lo0 - c0, c0 - hi0), 0.f), a1 = fmaxf(fmaxf(lo1 - c1, c1 - hi1), 0.f);
            cand = !((double)fmaf(a1, a1, a0 * a0) > limit);
          }
          unsigned int m = __ballot_sync(0xffffffffu, cand);
          while (m) {
            const int cc = c0b + __ffs(m) - 1;
            m &= m - 1;
            double cv[2];
            load_row(cv, sc + Small<double, 2>::row_at(cc));
            ++mypairs;
#pragma unroll
            for (int r = 0; r < P; ++r) {
              const double dd = Small<double, 2>::dist(xr[r], cv);
              if (dd < best[r]) { best[r] = dd; bi[r] = cc; }
            }
          }
        }
      });
  if (lane == 0 && pairs) atomicAdd(pairs, mypairs);
  if (threadIdx.x == 0 && st && sh_changed) atomicAdd(&st->changed, (u64)sh_changed);
}

// Rows into buckets of a coarse grid over x's box (a counting sort: the
// order inside a bucket is the atomics', which changes no result: the sums
// are exact, a point's label its own).
__global__ void k_bucket_count(const float *__restrict__ x, long long n, float lo0, float lo1, float inv0, float inv1,
                               int g, unsigned int *cnt, int *bkt) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int a = (int)fminf((float)(g - 1), fmaxf(0.f, (x[i] - lo0) * inv0));
  const int b = (int)fminf((float)(g - 1), fmaxf(0.f, (x[i + n] - lo1) * inv1));
  // cells in a snake order of rows (neighbouring buckets stay close)
  const int cell = b * g + ((b & 1) ? g - 1 - a : a);
  bkt[i] = cell;
  atomicAdd(&cnt[cell], 1u);
}
__global__ void k_bucket_scatter(const float *__restrict__ x, long long n, const int *__restrict__ bkt,
                                 unsigned int *next, float *xs, int *perm) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const unsigned int at = atomicAdd(&next[bkt[i]], 1u);
  xs[at] = x[i];
  xs[at + n] = x[i + n];
  perm[at] = (int)i;
}

// x's columns gathered in the order perm (the permutation's cost).
__global__ void k_gather(const float *__restrict__ x, long long n, int d, const int *__restrict__ perm, float *xs) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const long long s = perm[i];
  for (int j = 0; j < d; ++j) xs[i + n * j] = x[s + n * j];
}
// Z-curve keys of x over a 1024 x 1024 grid of its box.
__global__ void k_zkeys(const float *__restrict__ x, long long n, float lo0, float lo1, float inv0, float inv1,
                        unsigned int *key, int *idx) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned int a = (unsigned int)min(1023.f, fmaxf(0.f, (x[i] - lo0) * inv0));
  unsigned int b = (unsigned int)min(1023.f, fmaxf(0.f, (x[i + n] - lo1) * inv1));
  unsigned int z = 0;
  for (int t = 0; t < 10; ++t) z |= (((a >> t) & 1u) << (2 * t)) | (((b >> t) & 1u) << (2 * t + 1));
  key[i] = z;
  idx[i] = (int)i;
}

template <typename Kernel>
int blocks_for(Kernel kern, size_t smem, long long n, int sms, int ppt = 4) {
  OK(cudaFuncSetAttribute((const void *)kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  int per_sm = 0;
  OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, 256, smem));
  return (int)std::min<long long>((n + 256LL * ppt - 1) / (256LL * ppt), (long long)std::max(per_sm, 1) * sms);
}

}  // namespace
}  // namespace gk

using namespace gk;

int main(int argc, char **argv) {
  const long long n = argc > 1 ? atoll(argv[1]) : 1000000;
  const int d = 2, k = argc > 2 ? atoi(argv[2]) : 100;
  std::mt19937_64 rng(1);
  const std::vector<double> x = b_blobs(n, d, k, rng);
  gk_cuda_options o = {0, 1, 0, 0, 0, 0.0, 0};
  gk_cuda_data *D;
  char err[256];
  setenv("GPUKMEANS_GRID", "1", 1);
  if (gk_cuda_upload(x.data(), n, d, &o, nullptr, &D, nullptr, nullptr, err, sizeof err)) { printf("%s\n", err); return 1; }
  int sms = 0;
  OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop;
  OK(cudaGetDeviceProperties(&prop, 0));
  const size_t kd = (size_t)k * d;
  std::vector<double> c(kd);
  for (int cc = 0; cc < k; ++cc) {
    const long long i = (long long)(rng() % n);
    for (int j = 0; j < d; ++j) c[cc + (size_t)k * j] = x[i + n * j] - D->shift[j];
  }
  double *cen_d; float *cen_f; int *labels, *ref; u64 *acc; unsigned *counts; State *st;
  OK(cudaMalloc(&cen_d, kd * 8)); OK(cudaMalloc(&cen_f, kd * 4)); OK(cudaMalloc(&labels, n * 4)); OK(cudaMalloc(&ref, n * 4));
  OK(cudaMalloc(&acc, kd * 16)); OK(cudaMalloc(&counts, (k + 1) * 8));
  OK(cudaMalloc(&st, sizeof(State)));
  OK(cudaMemcpy(cen_d, c.data(), kd * 8, cudaMemcpyHostToDevice));
  OK(launch_to_float(cen_d, cen_f, kd, 0));
  OK(cudaMemset(acc, 0, kd * 16)); OK(cudaMemset(counts, 0, (k + 1) * 8));
  OK(cudaMemset(st, 0, sizeof(State)));
  OK(prepare_assign(D, k, 0));
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  auto tm = [&](const char *name, auto fn) {
    std::vector<float> v;
    for (int rep = 0; rep < 16; ++rep) {
      cudaEventRecord(a); fn(); cudaEventRecord(b); OK(cudaEventSynchronize(b));
      float ms; cudaEventElapsedTime(&ms, a, b); if (rep) v.push_back(ms);
    }
    OK(cudaGetLastError());
    std::sort(v.begin(), v.end());
    printf("  %-40s %8.2f us\n", name, 1000 * v[v.size() / 2]);
  };
  auto same = [&](const char *name) {
    std::vector<int> h1(n), h2(n);
    OK(cudaMemcpy(h1.data(), labels, n * 4, cudaMemcpyDeviceToHost));
    OK(cudaMemcpy(h2.data(), ref, n * 4, cudaMemcpyDeviceToHost));
    long long diff = 0;
    for (long long i = 0; i < n; ++i) diff += h1[i] != h2[i];
    printf("  %-40s %lld labels differ from the scan's\n", name, diff);
  };
  printf("bproto | %s | n=%lld d=2 k=%d single | %d SMs\n", prop.name, n, k, sms);
  Plan scan, scanu, grid, gridu, fin;
  setenv("GPUKMEANS_GRID", "0", 1);
  OK(plan_assign(D, k, false, scan)); OK(plan_assign(D, k, true, scanu)); OK(plan_update(D, k, scanu));
  setenv("GPUKMEANS_GRID", "1", 1);
  OK(plan_assign(D, k, false, grid)); OK(plan_assign(D, k, true, gridu)); OK(plan_update(D, k, gridu));
  fin = scanu;
  printf("  plans: scan grid=%d blocks; grid %s, %d cells, %d blocks\n", scanu.grid, gridu.gbuf ? "on" : "OFF",
         gridu.gcells, gridu.grid);
  OK(cudaMemset(ref, 0xff, n * 4));
  OK(launch_assign(D, scan, cen_f, k, ref, nullptr, 1000, false, nullptr, nullptr, nullptr, 0));
  tm("engine scan, labels only", [&] { OK(launch_assign(D, scan, cen_f, k, labels, nullptr, 1000, false, nullptr, nullptr, nullptr, 0)); });
  same("engine scan");
  tm("engine scan + sums (B's step)", [&] { OK(launch_assign(D, scanu, cen_f, k, labels, nullptr, 1000, true, acc, counts, D->d_scale, 0)); });
  tm("engine grid build + step, labels only", [&] { OK(launch_assign(D, grid, cen_f, k, labels, nullptr, 1000, false, nullptr, nullptr, nullptr, 0)); });
  same("engine grid");
  tm("engine grid build + step + sums", [&] { OK(launch_assign(D, gridu, cen_f, k, labels, nullptr, 1000, true, acc, counts, D->d_scale, 0)); });
  const GridBufs g = grid_bufs(gridu.gbuf, gridu.gcells);
  tm("engine grid build alone", [&] {
    k_grid_build<float><<<gridu.gblocks, 256, (size_t)d * k * sizeof(float)>>>(cen_f, k, d, g, true, nullptr, 1000);
  });
  tm("state reset (memset)", [&] { OK(cudaMemsetAsync(st, 0, sizeof(State), 0)); });
  tm("state reset + finalize (engine)", [&] {
    OK(cudaMemsetAsync(st, 0, sizeof(State), 0));
    OK(launch_finalize(D, fin, k, st, 1000, acc, counts, cen_d, cen_f, D->d_scale, 0));
  });
  OK(launch_to_float(cen_d, cen_f, kd, 0));  // (finalize made centers from repeated sums: restore)
  OK(cudaMemcpy(cen_d, c.data(), kd * 8, cudaMemcpyHostToDevice));
  OK(launch_to_float(cen_d, cen_f, kd, 0));
  {
    const size_t sm1 = small_smem_bytes<float, 2>(k, d, true), sm0 = small_smem_bytes<float, 2>(k, d, false);
    auto occ = [&](const char *name, auto k0, auto k1, int ppt) {
      int r0 = 0, r1 = 0;
      cudaFuncAttributes fa;
      OK(cudaFuncGetAttributes(&fa, (const void *)k0)); r0 = fa.numRegs;
      OK(cudaFuncGetAttributes(&fa, (const void *)k1)); r1 = fa.numRegs;
      const int b0 = blocks_for(k0, sm0, n, sms, ppt), b1 = blocks_for(k1, sm1, n, sms, ppt);
      char lab[128];
      snprintf(lab, sizeof lab, "%s labels (%d regs, %d blocks)", name, r0, b0);
      tm(lab, [&] { k0<<<b0, 256, sm0>>>((const float *)D->x, n, d, cen_f, k, labels, acc, counts, D->d_scale); });
      same(name);
      snprintf(lab, sizeof lab, "%s + sums (%d regs, %d blocks)", name, r1, b1);
      tm(lab, [&] { k1<<<b1, 256, sm1>>>((const float *)D->x, n, d, cen_f, k, labels, acc, counts, D->d_scale); });
    };
    occ("scan P4 min1", k_scan_occ<false, 1, 4>, k_scan_occ<true, 1, 4>, 4);
    occ("scan P4 min5", k_scan_occ<false, 5, 4>, k_scan_occ<true, 5, 4>, 4);
    occ("scan P4 min6", k_scan_occ<false, 6, 4>, k_scan_occ<true, 6, 4>, 4);
    occ("scan P4 min8", k_scan_occ<false, 8, 4>, k_scan_occ<true, 8, 4>, 4);
    occ("scan P2 min1", k_scan_occ<false, 1, 2>, k_scan_occ<true, 1, 2>, 2);
    occ("scan P2 min6", k_scan_occ<false, 6, 2>, k_scan_occ<true, 6, 2>, 2);
    occ("scan P2 min8", k_scan_occ<false, 8, 2>, k_scan_occ<true, 8, 2>, 2);
    occ("scan P3 min6", k_scan_occ<false, 6, 3>, k_scan_occ<true, 6, 3>, 3);
  }
  {
    const size_t sm1 = 16 * kd + 4 * (size_t)k + 64, sm0 = 64;
    const int b1 = blocks_for(k_trivial<true>, sm1, n, sms), b0 = blocks_for(k_trivial<false>, sm0, n, sms);
    tm("small_pass, no distances, labels only", [&] { k_trivial<false><<<b0, 256, sm0>>>((const float *)D->x, n, d, k, labels, acc, counts, D->d_scale); });
    tm("small_pass, no distances, + sums", [&] { k_trivial<true><<<b1, 256, sm1>>>((const float *)D->x, n, d, k, labels, acc, counts, D->d_scale); });
  }
  for (int cap : {8, 12, 16}) {
    float4 *flist, *fbox; int *fcount;
    OK(cudaMalloc(&flist, (size_t)gridu.gcells * cap * 16)); OK(cudaMalloc(&fcount, gridu.gcells * 4)); OK(cudaMalloc(&fbox, 32));
    k_grid_build<float><<<gridu.gblocks, 256, (size_t)d * k * sizeof(float)>>>(cen_f, k, d, g, true, nullptr, 1000);
    k_expand<<<(gridu.gcells + 127) / 128, 128>>>(cen_f, k, g, gridu.gcells, cap, flist, fcount, fbox);
    OK(cudaDeviceSynchronize());
    std::vector<int> hc(gridu.gcells);
    OK(cudaMemcpy(hc.data(), fcount, hc.size() * 4, cudaMemcpyDeviceToHost));
    int over = 0, mx = 0; double mean = 0;
    for (int v : hc) { if (v < 0) ++over; else { mx = std::max(mx, v); mean += v; } }
    printf("  cap %d: cells %d, over cap %d, longest %d, mean %.2f\n", cap, (int)hc.size(), over, mx, mean / std::max<int>(1, hc.size() - over));
    const size_t sm1 = small_smem_bytes<float, 2>(k, d, true), sm0 = small_smem_bytes<float, 2>(k, d, false);
    const int b1 = blocks_for(k_fgrid<true>, sm1, n, sms), b0 = blocks_for(k_fgrid<false>, sm0, n, sms);
    tm("float4 lists: expand", [&] { k_expand<<<(gridu.gcells + 127) / 128, 128>>>(cen_f, k, g, gridu.gcells, cap, flist, fcount, fbox); });
    tm("float4 lists: step, labels only", [&] {
      k_fgrid<false><<<b0, 256, sm0>>>((const float *)D->x, n, d, cen_f, k, labels, acc, counts, D->d_scale, flist, fcount, fbox, cap);
    });
    same("float4 lists");
    tm("float4 lists: step + sums", [&] {
      k_fgrid<true><<<b1, 256, sm1>>>((const float *)D->x, n, d, cen_f, k, labels, acc, counts, D->d_scale, flist, fcount, fbox, cap);
    });
    cudaFree(flist); cudaFree(fcount); cudaFree(fbox);
  }

  // ---- rows ordered along a Z curve (once a fit), a warp's box, no grid ----
  {
    double lo[2] = {1e300, 1e300}, hi[2] = {-1e300, -1e300};
    for (long long i = 0; i < n; ++i)
      for (int j = 0; j < 2; ++j) { lo[j] = std::min(lo[j], x[i + n * j]); hi[j] = std::max(hi[j], x[i + n * j]); }
    std::vector<unsigned int> key(n);
    for (long long i = 0; i < n; ++i) {
      unsigned a = (unsigned)std::min(1023.0, (x[i] - lo[0]) / (hi[0] - lo[0]) * 1024);
      unsigned bb = (unsigned)std::min(1023.0, (x[i + n] - lo[1]) / (hi[1] - lo[1]) * 1024);
      unsigned z = 0;
      for (int t = 0; t < 10; ++t) z |= (((a >> t) & 1u) << (2 * t)) | (((bb >> t) & 1u) << (2 * t + 1));
      key[i] = z;
    }
    std::vector<long long> ord(n);
    std::iota(ord.begin(), ord.end(), 0LL);
    std::stable_sort(ord.begin(), ord.end(), [&](long long u, long long v) { return key[u] < key[v]; });
    std::vector<double> xs((size_t)n * d);
    for (long long i = 0; i < n; ++i)
      for (int j = 0; j < d; ++j) xs[i + n * j] = x[ord[i] + n * j];
    gk_cuda_data *Z;
    setenv("GPUKMEANS_GRID", "0", 1);
    if (gk_cuda_upload(xs.data(), n, d, &o, nullptr, &Z, nullptr, nullptr, err, sizeof err)) { printf("%s\n", err); return 1; }
    std::vector<double> cz(kd);
    for (int cc = 0; cc < k; ++cc)
      for (int j = 0; j < d; ++j) cz[cc + (size_t)k * j] = c[cc + (size_t)k * j] + D->shift[j] - Z->shift[j];
    OK(cudaMemcpy(cen_d, cz.data(), kd * 8, cudaMemcpyHostToDevice));
    OK(launch_to_float(cen_d, cen_f, kd, 0));
    OK(prepare_assign(Z, k, 0));
    Plan zs, zsu;
    OK(plan_assign(Z, k, false, zs)); OK(plan_assign(Z, k, true, zsu)); OK(plan_update(Z, k, zsu));
    printf("rows ordered along a Z curve (the same points and centers)\n");
    OK(cudaMemset(ref, 0xff, n * 4));
    OK(launch_assign(Z, zs, cen_f, k, ref, nullptr, 1000, false, nullptr, nullptr, nullptr, 0));
    tm("ordered: engine scan, labels only", [&] { OK(launch_assign(Z, zs, cen_f, k, labels, nullptr, 1000, false, nullptr, nullptr, nullptr, 0)); });
    tm("ordered: engine scan + sums", [&] { OK(launch_assign(Z, zsu, cen_f, k, labels, nullptr, 1000, true, acc, counts, Z->d_scale, 0)); });
    unsigned long long *pairs;
    OK(cudaMalloc(&pairs, 8));
    const size_t sm1 = small_smem_bytes<float, 2>(k, d, true), sm0 = small_smem_bytes<float, 2>(k, d, false);
    auto wb = [&](const char *name, auto k0, auto k1, int ppt) {
      const int b1 = blocks_for(k1, sm1, n, sms, ppt), b0 = blocks_for(k0, sm0, n, sms, ppt);
      cudaFuncAttributes fa;
      OK(cudaFuncGetAttributes(&fa, (const void *)k1));
      char lab[160];
      // labels as the scan's (RB: previous centers = these, so R is each point's own)
      OK(cudaMemcpy(labels, ref, n * 4, cudaMemcpyDeviceToDevice));
      snprintf(lab, sizeof lab, "%s, labels only (%d regs)", name, fa.numRegs);
      tm(lab, [&] { k0<<<b0, 256, sm0>>>((const float *)Z->x, n, d, cen_f, k, labels, nullptr, 1000, acc, counts, Z->d_scale, nullptr); });
      same(name);
      snprintf(lab, sizeof lab, "%s + sums", name);
      tm(lab, [&] { k1<<<b1, 256, sm1>>>((const float *)Z->x, n, d, cen_f, k, labels, nullptr, 1000, acc, counts, Z->d_scale, nullptr); });
      OK(cudaMemset(pairs, 0, 8));
      k0<<<b0, 256, sm0>>>((const float *)Z->x, n, d, cen_f, k, labels, nullptr, 1000, acc, counts, Z->d_scale, pairs);
      unsigned long long hp = 0;
      OK(cudaMemcpy(&hp, pairs, 8, cudaMemcpyDeviceToHost));
      printf("  %-40s %.2f centers a warp's list\n", name, hp / (double)((n + 32LL * ppt - 1) / (32LL * ppt)));
      // from labels of nobody (the first iteration's U)
      OK(cudaMemset(labels, 0xff, n * 4));
      snprintf(lab, sizeof lab, "%s, first iteration + sums", name);
      tm(lab, [&] { OK(cudaMemsetAsync(labels, 0xff, n * 4, 0));
                    k1<<<b1, 256, sm1>>>((const float *)Z->x, n, d, cen_f, k, labels, nullptr, 1000, acc, counts, Z->d_scale, nullptr); });
    };
    wb("warp boxes P4 U", k_wbox<false, 4, false>, k_wbox<true, 4, false>, 4);
    wb("warp boxes P4 R", k_wbox<false, 4, true>, k_wbox<true, 4, true>, 4);
    wb("warp boxes P8 U", k_wbox<false, 8, false>, k_wbox<true, 8, false>, 8);
    wb("warp boxes P8 R", k_wbox<false, 8, true>, k_wbox<true, 8, true>, 8);
    tm("(memset of the labels alone)", [&] { OK(cudaMemsetAsync(labels, 0xff, n * 4, 0)); });
    // ten Lloyd iterations in a CUDA graph: step + the engine's update,
    // the engine's scan on the rows as drawn against warp boxes on ordered rows
    auto loop10 = [&](const char *name, auto step, gk_cuda_data *V, Plan &pu) {
      cudaStream_t cs;
      OK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
      cudaGraph_t gr;
      cudaGraphExec_t gx;
      OK(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal));
      for (int it = 0; it < 10; ++it) {
        step(cs);
        OK(launch_finalize(V, pu, k, st, 1000, acc, counts, cen_d, cen_f, V->d_scale, cs));
      }
      OK(cudaStreamEndCapture(cs, &gr));
      OK(cudaGraphInstantiate(&gx, gr, 0));
      std::vector<double> cstart(kd);
      for (int cc = 0; cc < k; ++cc)
        for (int j = 0; j < d; ++j) cstart[cc + (size_t)k * j] = c[cc + (size_t)k * j] + D->shift[j] - V->shift[j];
      std::vector<float> v;
      State hs;
      for (int rep = 0; rep < 8; ++rep) {
        OK(cudaMemcpy(cen_d, cstart.data(), kd * 8, cudaMemcpyHostToDevice));
        OK(launch_to_float(cen_d, cen_f, kd, 0));
        OK(cudaMemset(labels, 0xff, n * 4)); OK(cudaMemset(acc, 0, kd * 16)); OK(cudaMemset(counts, 0, (k + 1) * 8));
        OK(cudaMemset(st, 0, sizeof(State)));
        OK(cudaDeviceSynchronize());
        cudaEventRecord(a, cs); OK(cudaGraphLaunch(gx, cs)); cudaEventRecord(b, cs); OK(cudaEventSynchronize(b));
        float ms; cudaEventElapsedTime(&ms, a, b); if (rep) v.push_back(ms);
        OK(cudaMemcpy(&hs, st, sizeof hs, cudaMemcpyDeviceToHost));
      }
      std::sort(v.begin(), v.end());
      std::vector<double> hc(kd);
      OK(cudaMemcpy(hc.data(), cen_d, kd * 8, cudaMemcpyDeviceToHost));
      double cs_ = 0;
      for (int cc = 0; cc < k; ++cc) for (int j = 0; j < d; ++j) cs_ += hc[cc + (size_t)k * j] + V->shift[j];
      printf("  %-40s %8.2f us an iteration (%d iterations; centers' sum %.10g)\n", name, 1000 * v[v.size() / 2] / 10,
             hs.iter_done, cs_);
      cudaGraphExecDestroy(gx); cudaGraphDestroy(gr); cudaStreamDestroy(cs);
    };
    {
      Plan pu = scanu;
      loop10("loop: engine scan, rows as drawn", [&](cudaStream_t cs) {
        OK(launch_assign(D, scanu, cen_f, k, labels, st, 1000, true, acc, counts, D->d_scale, cs)); }, D, pu);
      Plan zu = zsu;
      loop10("loop: engine scan, ordered rows", [&](cudaStream_t cs) {
        OK(launch_assign(Z, zsu, cen_f, k, labels, st, 1000, true, acc, counts, Z->d_scale, cs)); }, Z, zu);
      const int b1 = blocks_for(k_wbox<true, 4, true>, sm1, n, sms, 4);
      loop10("loop: warp boxes P4 R, ordered rows", [&](cudaStream_t cs) {
        k_wbox<true, 4, true><<<b1, 256, sm1, cs>>>((const float *)Z->x, n, d, cen_f, k, labels, st, 1000, acc, counts,
                                                    Z->d_scale, nullptr); }, Z, zu);
      const int b2 = blocks_for(k_wbox<true, 4, false>, sm1, n, sms, 4);
      loop10("loop: warp boxes P4 U, ordered rows", [&](cudaStream_t cs) {
        k_wbox<true, 4, false><<<b2, 256, sm1, cs>>>((const float *)Z->x, n, d, cen_f, k, labels, st, 1000, acc, counts,
                                                     Z->d_scale, nullptr); }, Z, zu);
    }
    // what ordering costs once a fit: keys, a radix sort of (key, row), x gathered
    unsigned int *k_in, *k_out; int *v_in, *v_out; float *xg; void *tmp = nullptr; size_t tmpb = 0;
    OK(cudaMalloc(&k_in, n * 4)); OK(cudaMalloc(&k_out, n * 4)); OK(cudaMalloc(&v_in, n * 4)); OK(cudaMalloc(&v_out, n * 4));
    OK(cudaMalloc(&xg, n * 8));
    OK(cub::DeviceRadixSort::SortPairs(tmp, tmpb, k_in, k_out, v_in, v_out, (int)n, 0, 20));
    OK(cudaMalloc(&tmp, tmpb));
    const float l0 = (float)(lo[0] - D->shift[0]), l1 = (float)(lo[1] - D->shift[1]);
    const float i0 = (float)(1024 / (hi[0] - lo[0])), i1 = (float)(1024 / (hi[1] - lo[1]));
    const int nb = (int)((n + 255) / 256);
    tm("order: Z keys", [&] { k_zkeys<<<nb, 256>>>((const float *)D->x, n, l0, l1, i0, i1, k_in, v_in); });
    tm("order: radix sort of 1e6 (key, row), 20 bits", [&] {
      OK(cub::DeviceRadixSort::SortPairs(tmp, tmpb, k_in, k_out, v_in, v_out, (int)n, 0, 20));
    });
    tm("order: x gathered", [&] { k_gather<<<nb, 256>>>((const float *)D->x, n, d, v_out, xg); });
    {
      const int g = 64;  // 4096 buckets
      unsigned int *cnt, *next; int *bkt;
      OK(cudaMalloc(&cnt, g * g * 4)); OK(cudaMalloc(&next, g * g * 4)); OK(cudaMalloc(&bkt, n * 4));
      void *t2 = nullptr; size_t t2b = 0;
      OK(cub::DeviceScan::ExclusiveSum(t2, t2b, cnt, next, g * g));
      OK(cudaMalloc(&t2, t2b));
      const float j0 = (float)(g / (hi[0] - lo[0])), j1 = (float)(g / (hi[1] - lo[1]));
      tm("order: 4096 buckets (count, scan, scatter)", [&] {
        OK(cudaMemsetAsync(cnt, 0, g * g * 4, 0));
        k_bucket_count<<<nb, 256>>>((const float *)D->x, n, l0, l1, j0, j1, g, cnt, bkt);
        OK(cub::DeviceScan::ExclusiveSum(t2, t2b, cnt, next, g * g));
        k_bucket_scatter<<<nb, 256>>>((const float *)D->x, n, bkt, next, xg, v_out);
      });
      cudaFree(cnt); cudaFree(next); cudaFree(bkt); cudaFree(t2);
    }
    cudaFree(k_in); cudaFree(k_out); cudaFree(v_in); cudaFree(v_out); cudaFree(xg); cudaFree(tmp); cudaFree(pairs);
    gk_cuda_free(Z);
    setenv("GPUKMEANS_GRID", "1", 1);
  }

  // ---- double precision: the engine's plan (rows as drawn, and ordered) against warp boxes ----
  {
    gk_cuda_options od = o;
    od.single = 0;
    setenv("GPUKMEANS_GRID", "1", 1);  // (unset: by shape; B in double takes the grid)
    unsetenv("GPUKMEANS_GRID");
    double lo[2] = {1e300, 1e300}, hi[2] = {-1e300, -1e300};
    for (long long i = 0; i < n; ++i)
      for (int j = 0; j < 2; ++j) { lo[j] = std::min(lo[j], x[i + n * j]); hi[j] = std::max(hi[j], x[i + n * j]); }
    std::vector<unsigned int> key(n);
    for (long long i = 0; i < n; ++i) {
      unsigned a = (unsigned)std::min(1023.0, (x[i] - lo[0]) / (hi[0] - lo[0]) * 1024);
      unsigned bb = (unsigned)std::min(1023.0, (x[i + n] - lo[1]) / (hi[1] - lo[1]) * 1024);
      unsigned z = 0;
      for (int t = 0; t < 10; ++t) z |= (((a >> t) & 1u) << (2 * t)) | (((bb >> t) & 1u) << (2 * t + 1));
      key[i] = z;
    }
    std::vector<long long> ord(n);
    std::iota(ord.begin(), ord.end(), 0LL);
    std::stable_sort(ord.begin(), ord.end(), [&](long long u, long long v) { return key[u] < key[v]; });
    std::vector<double> xs((size_t)n * d);
    for (long long i = 0; i < n; ++i)
      for (int j = 0; j < d; ++j) xs[i + n * j] = x[ord[i] + n * j];
    gk_cuda_data *DD, *ZD;
    if (gk_cuda_upload(x.data(), n, d, &od, nullptr, &DD, nullptr, nullptr, err, sizeof err)) { printf("%s\n", err); return 1; }
    if (gk_cuda_upload(xs.data(), n, d, &od, nullptr, &ZD, nullptr, nullptr, err, sizeof err)) { printf("%s\n", err); return 1; }
    OK(prepare_assign(DD, k, 0)); OK(prepare_assign(ZD, k, 0));
    Plan pd, pdu, pz, pzu;
    OK(plan_assign(DD, k, false, pd)); OK(plan_assign(DD, k, true, pdu)); OK(plan_update(DD, k, pdu));
    OK(plan_assign(ZD, k, false, pz)); OK(plan_assign(ZD, k, true, pzu)); OK(plan_update(ZD, k, pzu));
    printf("double precision (engine plan: grid %s, small-d filter %s)\n", pdu.gbuf ? "on" : "off", pdu.sdf ? "on" : "off");
    std::vector<double> cz(kd);
    for (int cc = 0; cc < k; ++cc) for (int j = 0; j < d; ++j) cz[cc + (size_t)k * j] = c[cc + (size_t)k * j] + D->shift[j] - ZD->shift[j];
    OK(cudaMemcpy(cen_d, cz.data(), kd * 8, cudaMemcpyHostToDevice));
    OK(cudaMemset(ref, 0xff, n * 4));
    OK(launch_assign(ZD, pz, cen_d, k, ref, nullptr, 1000, false, nullptr, nullptr, nullptr, 0));
    tm("double ordered: engine step + sums", [&] { OK(launch_assign(ZD, pzu, cen_d, k, labels, nullptr, 1000, true, acc, counts, ZD->d_scale, 0)); });
    const size_t sm1 = small_smem_bytes<double, 2>(k, d, true), sm0 = small_smem_bytes<double, 2>(k, d, false);
    for (int variant = 0; variant < 2; ++variant) {
      auto k0 = variant ? k_wbox_d<false, 4> : k_wbox_d<false, 2>;
      auto k1 = variant ? k_wbox_d<true, 4> : k_wbox_d<true, 2>;
      const int ppt = variant ? 4 : 2;
      const int b0 = blocks_for(k0, sm0, n, sms, ppt), b1 = blocks_for(k1, sm1, n, sms, ppt);
      char lab[96];
      snprintf(lab, sizeof lab, "double warp boxes P%d, labels only", ppt);
      tm(lab, [&] { k0<<<b0, 256, sm0>>>((const double *)ZD->x, n, d, cen_d, k, labels, nullptr, 1000, acc, counts, ZD->d_scale, nullptr); });
      same(lab);
      snprintf(lab, sizeof lab, "double warp boxes P%d + sums", ppt);
      tm(lab, [&] { k1<<<b1, 256, sm1>>>((const double *)ZD->x, n, d, cen_d, k, labels, nullptr, 1000, acc, counts, ZD->d_scale, nullptr); });
    }
    auto loopd = [&](const char *name, auto step, gk_cuda_data *V, Plan &pu) {
      cudaStream_t cs;
      OK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
      cudaGraph_t gr; cudaGraphExec_t gx;
      OK(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal));
      for (int it = 0; it < 10; ++it) {
        step(cs);
        OK(launch_finalize(V, pu, k, st, 1000, acc, counts, cen_d, cen_f, V->d_scale, cs));
      }
      OK(cudaStreamEndCapture(cs, &gr));
      OK(cudaGraphInstantiate(&gx, gr, 0));
      std::vector<double> cstart(kd);
      for (int cc = 0; cc < k; ++cc) for (int j = 0; j < d; ++j) cstart[cc + (size_t)k * j] = c[cc + (size_t)k * j] + D->shift[j] - V->shift[j];
      std::vector<float> v;
      State hs;
      for (int rep = 0; rep < 8; ++rep) {
        OK(cudaMemcpy(cen_d, cstart.data(), kd * 8, cudaMemcpyHostToDevice));
        OK(cudaMemset(labels, 0xff, n * 4)); OK(cudaMemset(acc, 0, kd * 16)); OK(cudaMemset(counts, 0, (k + 1) * 8));
        OK(cudaMemset(st, 0, sizeof(State)));
        OK(cudaDeviceSynchronize());
        cudaEventRecord(a, cs); OK(cudaGraphLaunch(gx, cs)); cudaEventRecord(b, cs); OK(cudaEventSynchronize(b));
        float ms; cudaEventElapsedTime(&ms, a, b); if (rep) v.push_back(ms);
        OK(cudaMemcpy(&hs, st, sizeof hs, cudaMemcpyDeviceToHost));
      }
      std::sort(v.begin(), v.end());
      std::vector<double> hc(kd);
      OK(cudaMemcpy(hc.data(), cen_d, kd * 8, cudaMemcpyDeviceToHost));
      double cs_ = 0;
      for (int cc = 0; cc < k; ++cc) for (int j = 0; j < d; ++j) cs_ += hc[cc + (size_t)k * j] + V->shift[j];
      printf("  %-40s %8.2f us an iteration (%d iterations; centers' sum %.12g)\n", name, 1000 * v[v.size() / 2] / 10,
             hs.iter_done, cs_);
      cudaGraphExecDestroy(gx); cudaGraphDestroy(gr); cudaStreamDestroy(cs);
    };
    loopd("double loop: engine, rows as drawn", [&](cudaStream_t cs) {
      OK(launch_assign(DD, pdu, cen_d, k, labels, st, 1000, true, acc, counts, DD->d_scale, cs)); }, DD, pdu);
    loopd("double loop: engine, ordered rows", [&](cudaStream_t cs) {
      OK(launch_assign(ZD, pzu, cen_d, k, labels, st, 1000, true, acc, counts, ZD->d_scale, cs)); }, ZD, pzu);
    const int b1 = blocks_for(k_wbox_d<true, 4>, sm1, n, sms, 4);
    loopd("double loop: warp boxes P4, ordered rows", [&](cudaStream_t cs) {
      k_wbox_d<true, 4><<<b1, 256, sm1, cs>>>((const double *)ZD->x, n, d, cen_d, k, labels, st, 1000, acc, counts,
                                              ZD->d_scale, nullptr); }, ZD, pzu);
    const int b2 = blocks_for(k_wbox_d<true, 2>, sm1, n, sms, 2);
    loopd("double loop: warp boxes P2, ordered rows", [&](cudaStream_t cs) {
      k_wbox_d<true, 2><<<b2, 256, sm1, cs>>>((const double *)ZD->x, n, d, cen_d, k, labels, st, 1000, acc, counts,
                                              ZD->d_scale, nullptr); }, ZD, pzu);
    gk_cuda_free(DD); gk_cuda_free(ZD);
  }

  // ---- the engine's own fits (gk_cuda_lloyd): rows as given against rows
  // ordered in space (GPUKMEANS_ORDER), both precisions, bounds off (as
  // bench.R) and by default; 10 iterations from the same start, then to
  // convergence: the same fit, bit for bit ----
  for (int single = 1; single >= 0; --single)
    for (int bounds = 1; bounds >= (getenv("BPROTO_BOUNDS_AUTO") ? 0 : 1); --bounds)
      for (int iters : {10, 500}) {
        gk_cuda_options oo = o;
        oo.single = single;
        oo.bounds = bounds;
        std::vector<double> cen0(kd);
        for (size_t e = 0; e < kd; ++e) cen0[e] = c[e] + D->shift[e / k];  // (original coordinates)
        double ms[2] = {0, 0};
        std::vector<double> cres[2];
        std::vector<int> cl[2];
        int it[2] = {0, 0};
        double share[2] = {0, 0};
        for (int ord = 0; ord < 2; ++ord) {
          setenv("GPUKMEANS_ORDER", ord ? "1" : "0", 1);
          gk_cuda_data *E;
          if (gk_cuda_upload(x.data(), n, d, &oo, nullptr, &E, nullptr, nullptr, err, sizeof err)) { printf("%s\n", err); return 1; }
          std::vector<float> v;
          for (int rep = 0; rep < 6; ++rep) {
            cres[ord] = cen0;
            cl[ord].assign(n, 0);
            std::vector<int> size(k);
            std::vector<double> wss(k);
            gk_cuda_fit_info info;
            if (gk_cuda_lloyd(E, k, iters, cres[ord].data(), nullptr, cl[ord].data(), size.data(), wss.data(), &info, err,
                              sizeof err)) { printf("%s\n", err); return 1; }
            if (rep) v.push_back((float)info.ms_compute);
            it[ord] = info.iter;
          }
          std::sort(v.begin(), v.end());
          ms[ord] = v[v.size() / 2];
          int64_t seen = 0, served = 0;
          gk_cuda_grid_stats(E, &seen, &served);
          share[ord] = seen ? (double)served / seen : -1;
          gk_cuda_free(E);
        }
        unsetenv("GPUKMEANS_ORDER");
        // (bits: an empty cluster's NaN center equals itself)
        const bool same_fit = cl[0] == cl[1] && it[0] == it[1] && !memcmp(cres[0].data(), cres[1].data(), kd * sizeof(double));
        if (!same_fit && iters <= 2) {  // which labels differ, and the exact distances to both centers
          long long nd = 0;
          for (long long i = 0; i < n; ++i)
            if (cl[0][i] != cl[1][i]) {
              if (nd < 4) {
                const int a = cl[0][i] - 1, bb = cl[1][i] - 1;  // (1-based)
                double da = 0, db = 0;
                for (int j = 0; j < d; ++j) {
                  const double ta = x[i + n * j] - cen0[a + (size_t)k * j], tb = x[i + n * j] - cen0[bb + (size_t)k * j];
                  da += ta * ta;
                  db += tb * tb;
                }
                printf("    row %lld: as given %d (%.17g), ordered %d (%.17g)\n", i, a, da, bb, db);
              }
              ++nd;
            }
          printf("    %lld labels differ; centers differ at %d entries\n", nd,
                 (int)std::inner_product(cres[0].begin(), cres[0].end(), cres[1].begin(), 0, std::plus<int>(),
                                         [](double u, double w) { return (int)!(u == w || (u != u && w != w)); }));
        }
        printf("engine fit %s, bounds %s, iter.max %3d: %3d iterations, as given %8.4f ms (%.4f an iteration), ordered %8.4f ms "
               "(%.4f; lists' share %.2f): same fit %s\n", single ? "single" : "double", bounds ? "off" : "auto", iters, it[0],
               ms[0], ms[0] / std::min(it[0], iters), ms[1], ms[1] / std::min(it[1], iters), share[1], same_fit ? "yes" : "NO");
      }
  gk_cuda_free(D);
  return 0;
}
