// detail/init_pp_kernels.cuh: the kernels of greedy k-means++ (init_pp.cu),
// plain or weighted (the reduction of k-means||).
//
// One step reads x once.  The pass of step s takes the center chosen at step
// s-1 as "pending": it folds it into D2 (D2 = min(D2, dist)), writes D2 back
// and scores the L candidates of step s against the new D2.  The sampling of
// step s needs the tree of w * D2 after that pending center, which is the
// potential tree of the candidate chosen at step s-1 (same values, same
// order); only its leaves are recomputed, for the 32 points of the last
// descent.  Arithmetic as in init_tree.cuh; the CPU engine does the same
// sums in the same order, so both choose the same rows in double.
#ifndef GPUKMEANS_DETAIL_INIT_PP_KERNELS_CUH
#define GPUKMEANS_DETAIL_INIT_PP_KERNELS_CUH

#include "init_tree.cuh"

namespace gk {
namespace init {

constexpr int kPassThreads = 128;  // threads (= points) per block of the pass
constexpr int kCoordTile = 32;     // coordinates per shared-memory tile
constexpr int kMaxCandidates = 32;

// The pass of one step.  Slot 0 of the accumulators is the pending center
// (pend, may be NULL), slots 1..L the candidates cc (L x d, row-major).
// NB >= L + 1.  Writes d2 (when pend) and lv1[j * nch + chunk], the level-1
// sums of w_i * min(D2_i, dist(i, cand_j)).
template <typename T, int NB>
__global__ void __launch_bounds__(kPassThreads)
k_pp_pass(const T *__restrict__ x, long long n, int d, const double *__restrict__ w,
          double *__restrict__ d2, const double *__restrict__ pend, const double *__restrict__ cc, int L,
          double *__restrict__ lv1, long long nch) {
  __shared__ __align__(16) double s_c[kCoordTile][NB];  // [coordinate][slot]: wide loads
  __shared__ double s_red[kPassThreads / 32][32][NB];
  const long long i = (long long)blockIdx.x * kPassThreads + threadIdx.x;
  const bool live = i < n;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int s0 = pend ? 0 : 1;  // first slot in use
  double acc[NB];
#pragma unroll
  for (int s = 0; s < NB; ++s) acc[s] = 0.0;

  for (int c0 = 0; c0 < d; c0 += kCoordTile) {
    const int cb = min(kCoordTile, d - c0);
    __syncthreads();
    for (int t = threadIdx.x; t < (L + 1) * cb; t += kPassThreads) {
      const int s = t / cb, c = t - s * cb;
      if (s == 0) s_c[c][0] = pend ? pend[c0 + c] : 0.0;
      else s_c[c][s] = cc[(size_t)(s - 1) * d + c0 + c];
    }
    __syncthreads();
    if (live) {
      // all loads of the tile first: many requests in flight per thread
      T xr[kCoordTile];
#pragma unroll
      for (int c = 0; c < kCoordTile; ++c)
        if (c < cb) xr[c] = x[i + n * (long long)(c0 + c)];
#pragma unroll
      for (int c = 0; c < kCoordTile; ++c) {
        if (c < cb) {
          const double xv = (double)xr[c];
#pragma unroll
          for (int s = 0; s < NB; ++s) {
            if (s >= s0 && s <= L) {
              const double t = __dsub_rn(xv, s_c[c][s]);
              acc[s] = __dadd_rn(acc[s], __dmul_rn(t, t));
            }
          }
        }
      }
    }
  }

  double v = live ? d2[i] : 0.0;
  if (pend && live) {
    v = dmin(v, acc[0]);
    d2[i] = v;
  }
  const double wi = (w && live) ? w[i] : 1.0;
#pragma unroll
  for (int s = 1; s < NB; ++s) {
    if (s <= L) {
      const double m = dmin(v, acc[s]);
      s_red[warp][lane][s - 1] = live ? (w ? __dmul_rn(wi, m) : m) : 0.0;
    }
  }
  __syncwarp();
  const long long chunk = i >> 5;
  if (lane < L && chunk < nch) {
    double s = 0.0;
    for (int p = 0; p < 32; ++p) s = __dadd_rn(s, s_red[warp][p][lane]);
    lv1[(long long)lane * nch + chunk] = s;
  }
}

// Sampling of one step: warp j draws candidate j with unif[j] from tree
// *best of lv, whose leaves are w_i * min(D2_i, dist(i, pend)).  When the
// total is not > 0, every candidate is the lowest point not chosen yet (the
// degenerate rule).  Writes cand[j] and the candidate's row into cc.
template <typename T>
__global__ void k_pp_sample(Levels lv, const int *__restrict__ best, const T *__restrict__ x, long long n,
                            int d, const double *__restrict__ w, const double *__restrict__ d2,
                            const double *__restrict__ pend, const double *__restrict__ unif, int L,
                            const unsigned char *__restrict__ chosen, long long *free_from,
                            long long *__restrict__ cand, double *__restrict__ cc) {
  __shared__ double s_a[kMaxCandidates][32];
  __shared__ long long s_free;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int b = *best;
  auto leaf = [&](long long i) -> double {
    double v = d2[i];
    if (pend) v = dmin(v, exact_dist(x, n, d, i, pend));
    return w ? __dmul_rn(w[i], v) : v;
  };
  if (threadIdx.x == 0) {
    s_free = -1;
    const double total = lv.T == 0 ? leaf(0) : lv.p[lv.T][b];
    if (!(total > 0)) {
      long long f = *free_from;
      while (f < n && chosen[f]) ++f;
      *free_from = f;
      s_free = f < n ? f : n - 1;
    }
  }
  __syncthreads();
  if (warp >= L) return;
  long long c = s_free;
  if (c < 0) c = warp_tree_sample(lv, b, n, unif[warp], leaf, s_a[warp]);
  if (c < 0) c = 0;  // cannot happen: the total is > 0 here
  if (lane == 0) cand[warp] = c;
  for (int a = lane; a < d; a += 32) cc[(size_t)warp * d + a] = (double)x[c + n * (long long)a];
}

// Keeps the candidate of smallest potential (the first of equals):
// tops[j] is candidate j's potential.  Records it as step s's center, as
// the pending center of the next pass and as the tree the next step samples.
static __global__ void k_pp_choose(const double *__restrict__ tops, int L, const long long *__restrict__ cand,
                            const double *__restrict__ cc, int d, long long *out_idx, int s,
                            unsigned char *chosen, double *pend, int *best) {
  __shared__ int s_best;
  if (threadIdx.x == 0) {
    int bj = 0;
    double bp = tops[0];
    for (int j = 1; j < L; ++j) {
      const double p = tops[j];
      if (p < bp) {
        bp = p;
        bj = j;
      }
    }
    s_best = bj;
    *best = bj;
    out_idx[s] = cand[bj];
    chosen[cand[bj]] = 1;
  }
  __syncthreads();
  for (int a = threadIdx.x; a < d; a += blockDim.x) pend[a] = cc[(size_t)s_best * d + a];
}

// Rows idx[0..m) of x into out (m x d, row-major, double).
template <typename T>
__global__ void k_gather_rows(const T *__restrict__ x, long long n, int d, const long long *__restrict__ idx,
                              long long m, double *__restrict__ out) {
  const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= m * d) return;
  const long long j = t / d;
  const int a = (int)(t - j * d);
  out[t] = (double)x[idx[j] + n * (long long)a];
}

// Rows idx[0..m) of x as a column-major m x d matrix of the same type.
template <typename T>
__global__ void k_gather_cols(const T *__restrict__ x, long long n, int d, const long long *__restrict__ idx,
                              long long m, T *__restrict__ out) {
  const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= m * d) return;
  const long long a = t / m, j = t - a * m;
  out[t] = x[idx[j] + n * a];
}

static __global__ void k_fill(double *p, long long m, double v) {
  const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t < m) p[t] = v;
}

}  // namespace init
}  // namespace gk

#endif
