// detail/bounds_kernels.cuh: exact accelerated Lloyd iterations (Hamerly's
// bounds) on the device.  Included by bounds.cu only.
//
// Each point keeps u >= its (true, Euclidean) distance to its center and
// l <= its distance to every other (non-NaN) center.  After the centers move
// by delta_j, u grows by delta_a and l shrinks by the largest movement of
// another center (triangle inequality).  The exact rule compares computed
// squared distances D (coordinate order, each operation rounded): with S the
// exact squared distance, gamma = (d + 4) 2^-53 1.1 (the relative error of d
// rounded terms) and eta an absolute term for underflow,
//   S (1 - gamma) - eta <= D <= S (1 + gamma) + eta.
// So when u^2 (1 + gamma) + 2 eta < l^2 (1 - gamma) (proven()), D_a < D_j
// for every other center j: the exact rule picks a, whatever the ties and the
// rounding.  Conversely a computed D gives the bounds
// (D - eta) / (1 + gamma) <= S <= (D + eta) / (1 - gamma).
// A point that fails the test first tightens u to its
// exact distance; if that does not prove it, all its distances are computed
// with the exact rule (the same numbers plain Lloyd computes), which gives
// the label, a fresh u and l (from the second smallest distance).
//
// All arithmetic on bounds is rounded outward (__dadd_ru, __dsqrt_rd, ...),
// and bounds are stored as float rounded outward.  Distances are computed in
// double, in both precisions (single precision stores x and the centers as
// floats; their distances are then exact to rounding).  Centers with NaN
// coordinates (empty clusters) are never chosen and never become finite
// again, so they take no part in any bound (their movement counts as 0).
#ifndef GPUKMEANS_DETAIL_BOUNDS_KERNELS_CUH
#define GPUKMEANS_DETAIL_BOUNDS_KERNELS_CUH

#include "common.cuh"

namespace gk {
namespace {

constexpr int kBoundsThreads = 256;
constexpr int kBoundsTile = 32;    // centers per register tile
constexpr int kBoundsChunk = 8;    // coordinates per register chunk
constexpr int kBoundsSmemCenters = 32 * 64;  // doubles of centers in shared memory per tile pass

// The margins (see the top of the file), each rounded outward.
struct BoundsMargin {
  double g_up, g_dn;      // 1 + gamma, 1 - gamma
  double inv_dn, inv_up;  // 1 / (1 - gamma), 1 / (1 + gamma)
  double eta, eta2;       // eta, 2 eta
};

// The label is proven when u^2 (1 + gamma) + 2 eta < l^2 (1 - gamma) with
// l > 0 (a lower bound that went negative proves nothing; squaring it would).
__device__ __forceinline__ bool proven(double u, double l, const BoundsMargin &m) {
  return l > 0.0 && __dadd_ru(__dmul_ru(__dmul_ru(u, u), m.g_up), m.eta2) < __dmul_rd(__dmul_rd(l, l), m.g_dn);
}

// Bounds from a computed squared distance: sqrt(S) <= upper_of(D), and
// lower_of(D) <= sqrt(S); as floats, rounded outward.
__device__ __forceinline__ float upper_of(double D, const BoundsMargin &m) {
  return __double2float_ru(__dsqrt_ru(__dmul_ru(__dadd_ru(D, m.eta), m.inv_dn)));
}
__device__ __forceinline__ float lower_of(double D, const BoundsMargin &m) {
  const double v = __dmul_rd(__dsub_rd(D, m.eta), m.inv_up);
  return v > 0.0 ? __double2float_rd(__dsqrt_rd(v)) : 0.0f;
}

// Full exact assignment of one point against all centers (tiles of centers in
// shared memory, kBoundsTile distances per thread in registers, coordinates in
// chunks): the label (the exact rule: first minimum, NaN never) and the two
// smallest distances.  Every thread of the block must call it (barriers);
// live says whether the thread has a point.
template <typename T>
__device__ __forceinline__ void full_assign(const T *__restrict__ x, long long n, int d, long long i, bool live,
                                            const T *__restrict__ cen, int k, double *s_cen, int &best_i,
                                            double &best, double &second) {
  best = pos_inf<double>();
  second = pos_inf<double>();
  best_i = -1;
  const int tile_coords = kBoundsSmemCenters / kBoundsTile;  // coordinates of a tile held at once
  for (int c0 = 0; c0 < k; c0 += kBoundsTile) {
    const int ct = min(kBoundsTile, k - c0);
    double acc[kBoundsTile];
#pragma unroll
    for (int t = 0; t < kBoundsTile; ++t) acc[t] = 0.0;
    for (int j0 = 0; j0 < d; j0 += tile_coords) {
      const int jt = min(tile_coords, d - j0);
      __syncthreads();
      for (int e = threadIdx.x; e < kBoundsTile * jt; e += blockDim.x) {
        const int c = e / jt, j = e - c * jt;
        s_cen[j * kBoundsTile + c] = c < ct ? (double)cen[(c0 + c) + (size_t)k * (j0 + j)] : 0.0;
      }
      __syncthreads();
      if (live) {
        for (int jc = 0; jc < jt; jc += kBoundsChunk) {
          double xr[kBoundsChunk];
#pragma unroll
          for (int q = 0; q < kBoundsChunk; ++q)
            xr[q] = (jc + q < jt) ? (double)x[i + n * (long long)(j0 + jc + q)] : 0.0;
#pragma unroll
          for (int q = 0; q < kBoundsChunk; ++q) {
            if (jc + q < jt) {
              const double *row = s_cen + (jc + q) * kBoundsTile;
              const bool first = j0 + jc + q == 0;
#pragma unroll
              for (int t = 0; t < kBoundsTile; ++t) {
                const double u = __dsub_rn(xr[q], row[t]);
                const double sq = __dmul_rn(u, u);
                acc[t] = first ? sq : __dadd_rn(acc[t], sq);
              }
            }
          }
        }
      }
    }
    if (live) {
#pragma unroll
      for (int t = 0; t < kBoundsTile; ++t) {
        if (t < ct) {
          const double dd = acc[t];
          if (dd < best) {
            second = best;
            best = dd;
            best_i = c0 + t;
          } else if (dd < second) {
            second = dd;
          }
        }
      }
    }
  }
}

// Adds (or with sign -1 removes) point i's coordinates to cluster c's
// fixed-point sums (the rounding of every other path: round_fixed).
template <typename T>
__device__ __forceinline__ void move_sums(const T *__restrict__ x, long long n, int d, long long i, int c, int k,
                                          long long sign, u64 *acc, const int *__restrict__ scale) {
  for (int j = 0; j < d; ++j) {
    const long long q = round_fixed((double)x[i + n * (long long)j], pow2(scale[j]));
    atomic_add_fixed(&acc[2 * ((size_t)c + (size_t)k * j)], sign * q);
  }
}

// The first bounded iteration: a full exact assignment of every point that
// also sets its bounds; counts the points whose label changed.  The sums are
// then accumulated from scratch (launch_accumulate).
template <typename T>
__global__ void __launch_bounds__(kBoundsThreads)
k_bounds_init(const T *__restrict__ x, long long n, int d, const T *__restrict__ cen, int k, int *labels,
              float *u, float *l, BoundsMargin m, State *st, int max_iter) {
  if (fit_finished(st, max_iter)) return;
  __shared__ double s_cen[kBoundsSmemCenters];
  __shared__ unsigned int sh_changed;
  if (threadIdx.x == 0) sh_changed = 0;
  for (long long base = (long long)blockIdx.x * blockDim.x; base < n; base += (long long)gridDim.x * blockDim.x) {
    const long long i = base + threadIdx.x;
    const bool live = i < n;
    int b;
    double best, second;
    full_assign(x, n, d, i, live, cen, k, s_cen, b, best, second);
    unsigned int ch = 0;
    if (live) {
      const int old = labels[i];
      if (b < 0) b = label_kept(old);
      label_commit(&labels[i], old, b, ch);
      u[i] = upper_of(best, m);
      l[i] = lower_of(second, m);
    }
    unsigned int w = __popc(__ballot_sync(0xffffffffu, ch != 0));
    if ((threadIdx.x & 31) == 0 && w) atomicAdd(&sh_changed, w);
  }
  __syncthreads();
  if (threadIdx.x == 0 && sh_changed) atomicAdd(&st->changed, (u64)sh_changed);
}

// The movements of the last update: move[c] >= |c' - c| for each center (0
// when either is NaN), top[0] the largest, top[1] its index, top[2] the
// largest of the others.  One block.
template <typename T>
__global__ void __launch_bounds__(1024)
k_bounds_moves(const T *__restrict__ prev, const T *__restrict__ cen, int k, int d, double *move, double *top,
               State *st, int max_iter) {
  if (fit_finished(st, max_iter)) return;
  __shared__ double s_v1[1024], s_v2[1024];
  __shared__ int s_i1[1024];
  double v1 = 0.0, v2 = 0.0;
  int i1 = -1;
  for (int c = threadIdx.x; c < k; c += blockDim.x) {
    double s = 0.0;
    bool nan = false;
    for (int j = 0; j < d; ++j) {
      const double a = (double)prev[c + (size_t)k * j], b = (double)cen[c + (size_t)k * j];
      nan |= isnan(a) || isnan(b);
      const double t = __dmul_ru(fabs(__dsub_rn(a, b)), 1.0 + 0x1p-51);  // >= |a - b|
      s = __dadd_ru(s, __dmul_ru(t, t));
    }
    const double mv = nan ? 0.0 : __dsqrt_ru(s);
    move[c] = mv;
    if (mv > v1) {
      v2 = v1;
      v1 = mv;
      i1 = c;
    } else if (mv > v2) {
      v2 = mv;
    }
  }
  s_v1[threadIdx.x] = v1;
  s_v2[threadIdx.x] = v2;
  s_i1[threadIdx.x] = i1;
  __syncthreads();
  for (int h = blockDim.x / 2; h > 0; h >>= 1) {
    if (threadIdx.x < h) {
      const double a1 = s_v1[threadIdx.x], a2 = s_v2[threadIdx.x];
      const double b1 = s_v1[threadIdx.x + h], b2 = s_v2[threadIdx.x + h];
      const int ai = s_i1[threadIdx.x], bi = s_i1[threadIdx.x + h];
      if (b1 > a1) {
        s_v1[threadIdx.x] = b1;
        s_i1[threadIdx.x] = bi;
        s_v2[threadIdx.x] = fmax(a1, b2);
      } else {
        s_v2[threadIdx.x] = fmax(a2, b1);
        s_i1[threadIdx.x] = ai;
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    top[0] = s_v1[0];
    top[1] = (double)s_i1[0];
    top[2] = s_v2[0];
  }
}

// A bounded iteration's filter: the bounds follow the centers' movements; a
// point whose label they do not prove tightens u to its exact distance, and
// if that does not prove it either it goes to the active list.
template <typename T>
__global__ void __launch_bounds__(kBoundsThreads)
k_bounds_filter(const T *__restrict__ x, long long n, int d, const T *__restrict__ cen, int k,
                const int *__restrict__ labels, float *u, float *l, const double *__restrict__ move,
                const double *__restrict__ top, BoundsMargin m, unsigned int *active, State *st, int max_iter) {
  if (fit_finished(st, max_iter)) return;
  const double top1 = top[0], top2 = top[2];
  const int top_i = (int)top[1];
  __shared__ unsigned int s_n, s_base;
  for (long long base = (long long)blockIdx.x * blockDim.x; base < n; base += (long long)gridDim.x * blockDim.x) {
    if (threadIdx.x == 0) s_n = 0;
    __syncthreads();
    const long long i = base + threadIdx.x;
    bool act = false;
    if (i < n) {
      const int a = labels[i];
      double ub = __dadd_ru((double)u[i], move[a]);
      const double lb = __dsub_rd((double)l[i], a == top_i ? top2 : top1);
      if (!proven(ub, lb, m)) {
        ub = (double)upper_of(exact_dist(x, n, d, i, cen, k, a), m);
        act = !proven(ub, lb, m);
      }
      u[i] = __double2float_ru(ub);
      l[i] = lb > 0.0 ? __double2float_rd(lb) : 0.0f;
    }
    unsigned int slot = 0;
    if (act) slot = atomicAdd(&s_n, 1u);
    __syncthreads();
    if (threadIdx.x == 0 && s_n) {
      s_base = (unsigned int)atomicAdd(&st->active, (u64)s_n);
    }
    __syncthreads();
    if (act) active[s_base + slot] = (unsigned int)i;
    __syncthreads();
  }
}

// A bounded iteration's exact assignment of the active points; moves the
// points that change cluster between the fixed-point sums and counts.
template <typename T>
__global__ void __launch_bounds__(kBoundsThreads)
k_bounds_assign(const T *__restrict__ x, long long n, int d, const T *__restrict__ cen, int k, int *labels,
                float *u, float *l, BoundsMargin m, const unsigned int *__restrict__ active, u64 *acc,
                unsigned int *counts, const int *__restrict__ scale, State *st, int max_iter) {
  if (fit_finished(st, max_iter)) return;
  __shared__ double s_cen[kBoundsSmemCenters];
  __shared__ unsigned int sh_changed;
  if (threadIdx.x == 0) sh_changed = 0;
  const long long na = (long long)st->active;
  for (long long base = (long long)blockIdx.x * blockDim.x; base < na; base += (long long)gridDim.x * blockDim.x) {
    const long long t = base + threadIdx.x;
    const bool live = t < na;
    const long long i = live ? (long long)active[t] : 0;
    int b;
    double best, second;
    full_assign(x, n, d, i, live, cen, k, s_cen, b, best, second);
    unsigned int ch = 0;
    if (live) {
      const int old = labels[i];
      if (b < 0) b = old;
      if (b != old) {
        labels[i] = b;
        move_sums(x, n, d, i, old, k, -1, acc, scale);
        move_sums(x, n, d, i, b, k, 1, acc, scale);
        atomicSub(&counts[old], 1u);
        atomicAdd(&counts[b], 1u);
        ch = 1;
      }
      u[i] = upper_of(best, m);
      l[i] = lower_of(second, m);
    }
    unsigned int w = __popc(__ballot_sync(0xffffffffu, ch != 0));
    if ((threadIdx.x & 31) == 0 && w) atomicAdd(&sh_changed, w);
  }
  __syncthreads();
  if (threadIdx.x == 0 && sh_changed) atomicAdd(&st->changed, (u64)sh_changed);
}

// The update of a bounded iteration: new centers from the kept (never
// zeroed) sums and counts, unless nothing changed (converged); saves the
// previous centers for the movements.  The last block advances the state,
// moves the active count into active_sum and records it in hist.
template <typename T>
__global__ void __launch_bounds__(256)
k_bounds_finalize(State *st, int max_iter, const u64 *__restrict__ acc, const unsigned int *__restrict__ counts,
                  double *__restrict__ cen_d, float *__restrict__ cen_f, T *__restrict__ prev, int k, int d,
                  const int *__restrict__ scale, u64 *hist, int hist_len) {
  if (fit_finished(st, max_iter)) return;
  const int it = st->iter_done;
  const u64 changed = st->changed;
  const bool conv = changed == 0;
  const size_t kd = (size_t)k * d;
  for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < kd; e += (size_t)gridDim.x * blockDim.x) {
    const T old = cen_f ? (T)cen_f[e] : (T)cen_d[e];
    prev[e] = old;
    if (!conv) {
      const int j = (int)(e / k);
      const int c = (int)(e - (size_t)j * k);
      const double v = from_fixed(acc[2 * e], acc[2 * e + 1], scale[j]) / (double)counts[c];
      cen_d[e] = v;
      if (cen_f) cen_f[e] = (float)v;
    }
  }
  if (last_block_to_finish(st) && threadIdx.x == 0) {
    st->ticket = 0;
    st->last_changed = changed;
    st->changed = 0;
    st->active_sum += st->active;
    if (it < hist_len) hist[it] = st->active;  // points computed exactly in iteration it + 1
    st->active = 0;
    if (conv) {
      st->flag = 1;
      st->conv_iter = it + 1;
    }
    st->iter_done = it + 1;
    __threadfence();
  }
}

}  // namespace
}  // namespace gk

#endif
