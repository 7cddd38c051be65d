// detail/init_kernels.cuh: kernels of k-means++ and k-means|| (init.cu).
//
// Every floating-point operation that decides a choice follows
// src/init_order.h exactly as src/cpu_init.cpp does it:
//   distance  s = 0; s = s + (x_c - c_c)^2 in coordinate order, in double,
//             with __dsub_rn/__dmul_rn/__dadd_rn (never an FMA);
//   sums      the arity-32 tree: level 1 is summed sequentially over the 32
//             lanes of a warp (= 32 consecutive points; lanes past n add
//             +0.0, which leaves a non-negative sum unchanged), each further
//             level by one thread per element, sequentially;
//   sampling  the descent of init_order.h point 3, one thread per draw.
// Included by init.cu only.
#ifndef GPUKMEANS_DETAIL_INIT_KERNELS_CUH
#define GPUKMEANS_DETAIL_INIT_KERNELS_CUH

#include "common.cuh"
#include "../../init_order.h"

namespace gk {
namespace init {

constexpr int kThreads = 128;   // threads per block of the point kernels
constexpr int kTile = 32;       // centers per register tile
constexpr int kCoordTile = 32;  // coordinates per shared-memory tile
constexpr int kMaxLevels = 24;

// The levels of one or more sum trees (batch b of level t at p[t] + b * len[t]).
struct Levels {
  const double *p[kMaxLevels];
  long long len[kMaxLevels];
  int T;  // top level (len[T] == 1); 0 when n == 1
};

enum { MODE_MIN = 0, MODE_ARGMIN = 1, MODE_PP = 2 };

__device__ __forceinline__ double dmin(double d2, double dist) { return dist < d2 ? dist : d2; }

// One point per thread against m centers (cen: m x d, row-major, double).
//  MODE_MIN:    d2[i] = min(d2[i], min_j dist_ij); lv1 (if not NULL) gets the
//               level-1 sums of the new d2.
//  MODE_ARGMIN: counts[nearest center] += 1 (ties: lowest j).
//  MODE_PP:     m <= 32: lv1[j * nch + chunk] = level-1 sums of min(d2, dist_ij)
//               (d2 not changed).
template <typename T, int MODE>
__global__ void __launch_bounds__(kThreads)
k_multi(const T *__restrict__ x, long long n, int d, const double *__restrict__ cen, int m,
        double *__restrict__ d2, double *__restrict__ lv1, long long nch,
        unsigned int *__restrict__ counts) {
  __shared__ double s_cen[kTile][kCoordTile];
  __shared__ double s_red[kThreads / 32][32][kTile + 1];
  const long long i = (long long)blockIdx.x * kThreads + threadIdx.x;
  const bool live = i < n;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  double my = (live && MODE != MODE_ARGMIN) ? d2[i] : 0.0;
  double best = pos_inf<double>();
  int lab = 0;
  double acc[kTile];

  for (int j0 = 0; j0 < m; j0 += kTile) {
    const int mt = min(kTile, m - j0);
#pragma unroll
    for (int j = 0; j < kTile; ++j) acc[j] = 0.0;
    for (int c0 = 0; c0 < d; c0 += kCoordTile) {
      const int cb = min(kCoordTile, d - c0);
      __syncthreads();
      for (int t = threadIdx.x; t < mt * cb; t += kThreads) {
        const int j = t / cb, c = t - j * cb;
        s_cen[j][c] = cen[(size_t)(j0 + j) * d + c0 + c];
      }
      __syncthreads();
      if (live) {
        for (int c = 0; c < cb; ++c) {
          const double xv = (double)x[i + n * (long long)(c0 + c)];
#pragma unroll
          for (int j = 0; j < kTile; ++j) {
            if (j < mt) {
              const double t = __dsub_rn(xv, s_cen[j][c]);
              acc[j] = __dadd_rn(acc[j], __dmul_rn(t, t));
            }
          }
        }
      }
    }
    if (MODE == MODE_MIN) {
#pragma unroll
      for (int j = 0; j < kTile; ++j)
        if (j < mt) my = dmin(my, acc[j]);
    } else if (MODE == MODE_ARGMIN) {
#pragma unroll
      for (int j = 0; j < kTile; ++j)
        if (j < mt && acc[j] < best) {
          best = acc[j];
          lab = j0 + j;
        }
    } else {  // MODE_PP: a single tile
#pragma unroll
      for (int j = 0; j < kTile; ++j)
        if (j < mt) s_red[warp][lane][j] = live ? dmin(my, acc[j]) : 0.0;
    }
  }

  const long long chunk = i >> 5;  // == (first point of the warp) / 32
  if (MODE == MODE_MIN) {
    if (live) d2[i] = my;
    if (lv1) {
      s_red[warp][lane][0] = live ? my : 0.0;
      __syncwarp();
      if (lane == 0 && chunk < nch) {
        double s = 0.0;
        for (int p = 0; p < 32; ++p) s = __dadd_rn(s, s_red[warp][p][0]);
        lv1[chunk] = s;
      }
    }
  } else if (MODE == MODE_ARGMIN) {
    if (live) atomicAdd(&counts[lab], 1u);
  } else {
    __syncwarp();
    if (lane < m && chunk < nch) {
      double s = 0.0;
      for (int p = 0; p < 32; ++p) s = __dadd_rn(s, s_red[warp][p][lane]);
      lv1[(long long)lane * nch + chunk] = s;
    }
  }
}

// One level of the tree for `batches` trees: out[b*lo + j] = sequential sum
// of in[b*li + 32j ...] (at most 32 terms, stopping at li).
__global__ void k_tree_level(const double *__restrict__ in, long long li, double *__restrict__ out,
                             long long lo, int batches) {
  const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= lo * batches) return;
  const long long b = t / lo, j = t - b * lo;
  const double *a = in + b * li;
  const long long s0 = j * GK_SUM_ARITY, s1 = min(li, s0 + GK_SUM_ARITY);
  double s = 0.0;
  for (long long q = s0; q < s1; ++q) s = __dadd_rn(s, a[q]);
  out[b * lo + j] = s;
}

// The descent of init_order.h point 3 in tree `lv` (batch 0); -1 if the
// total is not > 0.
static __device__ long long tree_sample(const Levels &lv, double u) {
  const double total = lv.p[lv.T][0];
  if (!(total > 0)) return -1;
  const double target = __dmul_rn(u, total);
  long long node = 0;
  double off = 0.0;
  for (int t = lv.T; t >= 1; --t) {
    const double *a = lv.p[t - 1];
    const long long m = lv.len[t - 1];
    const long long lo = node * GK_SUM_ARITY, hi = min(m, lo + GK_SUM_ARITY);
    double q = 0.0, chosen_before = 0.0, last_before = 0.0;
    long long chosen = -1, last = -1;
    for (long long j = lo; j < hi; ++j) {
      const double before = q;
      const double v = a[j];
      q = __dadd_rn(q, v);
      if (v > 0) {
        last = j;
        last_before = before;
        if (__dadd_rn(off, q) > target) {
          chosen = j;
          chosen_before = before;
          break;
        }
      }
    }
    if (chosen < 0) {
      chosen = last;
      chosen_before = last_before;
    }
    off = __dadd_rn(off, chosen_before);
    node = chosen;
  }
  return node;
}

// k-means++ step: L draws (thread j uses unif[j]); the degenerate rule when
// the total is 0.  Writes cand[j] and the candidates' rows (cc: L x d).
template <typename T>
__global__ void k_pp_sample(Levels lv, const double *__restrict__ unif, int L,
                            const unsigned char *__restrict__ chosen, long long *free_from,
                            const T *__restrict__ x, long long n, int d, long long *cand,
                            double *cc) {
  __shared__ long long s_free;
  if (threadIdx.x == 0) {
    s_free = -1;
    if (!(lv.p[lv.T][0] > 0)) {
      long long f = *free_from;
      while (f < n && chosen[f]) ++f;
      *free_from = f;
      s_free = f < n ? f : n - 1;
    }
  }
  __syncthreads();
  const int j = threadIdx.x;
  if (j >= L) return;
  long long c = s_free >= 0 ? s_free : tree_sample(lv, unif[j]);
  if (c < 0) c = 0;  // cannot happen: total > 0 here
  cand[j] = c;
  for (int a = 0; a < d; ++a) cc[(size_t)j * d + a] = (double)x[c + n * (long long)a];
}

// k-means++ step: keep the candidate of smallest potential (first of equals).
// tops[j * top_stride] is candidate j's potential.
__global__ void k_pp_choose(const double *__restrict__ tops, long long top_stride, int L,
                            const long long *__restrict__ cand, const double *__restrict__ cc, int d,
                            long long *out_idx, int s, unsigned char *chosen, double *newc) {
  __shared__ int s_best;
  if (threadIdx.x == 0) {
    int best = 0;
    double bp = tops[0];
    for (int j = 1; j < L; ++j) {
      const double p = tops[(long long)j * top_stride];
      if (p < bp) {
        bp = p;
        best = j;
      }
    }
    s_best = best;
    out_idx[s] = cand[best];
    chosen[cand[best]] = 1;
  }
  __syncthreads();
  for (int a = threadIdx.x; a < d; a += blockDim.x) newc[a] = cc[(size_t)s_best * d + a];
}

// Rows idx[0..m) of x into out (m x d, row-major, double).
template <typename T>
__global__ void k_gather(const T *__restrict__ x, long long n, int d, const long long *__restrict__ idx,
                         long long m, double *__restrict__ out) {
  const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= m * d) return;
  const long long j = t / d;
  const int a = (int)(t - j * d);
  out[t] = (double)x[idx[j] + n * (long long)a];
}

__global__ void k_fill(double *p, long long m, double v) {
  const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t < m) p[t] = v;
}

// k-means|| round r: point i joins when u(seed, r, i) < (l * d2_i) / phi.
__global__ void k_par_select(const double *__restrict__ d2, long long n, double l, double phi,
                             unsigned long long seed, unsigned long long r,
                             unsigned long long *count, long long *sel, long long cap) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const double v = d2[i];
  if (!(v > 0)) return;
  const double p = __ddiv_rn(__dmul_rn(l, v), phi);
  if (counter_uniform(seed, r, (unsigned long long)i) < p) {
    const unsigned long long pos = atomicAdd(count, 1ull);
    if ((long long)pos < cap) sel[pos] = i;
  }
}

}  // namespace init
}  // namespace gk

#endif
