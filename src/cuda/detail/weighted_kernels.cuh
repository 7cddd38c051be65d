// detail/weighted_kernels.cuh: Lloyd's sums, update and within-SS with
// observation weights (weight_fixed.cuh: the terms; src/weights.h: what they
// mean).  Separate kernels, so that the unweighted ones (update_kernels.cuh)
// stay as they are; the structure (shared limbs flushed into global 128-bit
// accumulators, finalize's last-block state update) is theirs.
//
// Included by weights.cu only (and by tools/cuda-dev/weights_emu.cpp).
#ifndef GPUKMEANS_DETAIL_WEIGHTED_KERNELS_CUH
#define GPUKMEANS_DETAIL_WEIGHTED_KERNELS_CUH

#include "common.cuh"
#include "weight_fixed.cuh"

namespace gk {
namespace {

// Adds the block's limbs (m entries; entry e into *addr(e), skipped when
// addr returns NULL) into the global accumulators, then zeroes the limbs and
// the additions per cluster (scnt; entry e belongs to cluster ofc(e)).
// Called by the whole block; ends with a barrier.
template <typename Addr, typename Of>
__device__ inline void wlimb_flush(unsigned int *slimb, unsigned int *scnt, int k, size_t m, Addr addr, Of ofc) {
  __syncthreads();
  for (size_t e = threadIdx.x; e < m; e += blockDim.x) {
    const unsigned int cn = scnt[ofc(e)];
    u64 *g = addr(e);
    if (cn && g) {
      const Fixed128 t = wlimb_value(slimb, e, m, cn);
      if (t.lo | t.hi) atomic_add128(g, t.lo, t.hi);
    }
  }
  __syncthreads();
  for (size_t e = threadIdx.x; e < kWLimbs * m; e += blockDim.x) slimb[e] = 0;
  for (int c = threadIdx.x; c < k; c += blockDim.x) scnt[c] = 0;
  __syncthreads();
}

// max |x_ij| per column over the rows of positive weight (the scales of the
// sums: rows of weight 0 are as if dropped).
template <typename T>
__global__ void __launch_bounds__(256)
k_col_maxabs_w(const T *__restrict__ x, long long n, const double *__restrict__ w, u64 *__restrict__ out) {
  const int j = blockIdx.y;
  double m = 0;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    if (w[i] > 0) m = fmax(m, fabs((double)x[i + n * j]));
  if (m > 0) atomicMax(&out[j], (u64)__double_as_longlong(m));
}

// Weighted sums of x per (cluster, coordinate) for coordinates [j0, j0 + jb)
// and (blockIdx.y == 0) the weighted counts wc (2k words).  Shared entries:
// k*jn sums, then k counts, eight limbs each.
template <typename T>
__global__ void __launch_bounds__(256)
k_accumulate_w(const T *__restrict__ x, long long n, int d, const int *__restrict__ labels, int k, int jb,
               int use_shared, State *st, int max_iter, u64 *__restrict__ acc, u64 *__restrict__ wc,
               const int *__restrict__ scale, WeightSpec ws) {
  if (fit_finished(st, max_iter)) return;
  extern __shared__ __align__(16) unsigned char smem[];
  const int tid = threadIdx.x;
  const int j0 = blockIdx.y * jb;
  const int jn = min(jb, d - j0);
  const bool do_count = blockIdx.y == 0;
  const size_t ms = (size_t)k * jn, m = ms + k;
  unsigned int *slimb = reinterpret_cast<unsigned int *>(smem);
  unsigned int *scnt = slimb + kWLimbs * m;
  if (use_shared) {
    for (size_t e = tid; e < kWLimbs * m; e += blockDim.x) slimb[e] = 0;
    for (int c = tid; c < k; c += blockDim.x) scnt[c] = 0;
    __syncthreads();
  }
  auto addr = [&](size_t e) -> u64 * {
    if (e < ms) return &acc[2 * (e % k + (size_t)k * (j0 + e / k))];
    return do_count ? &wc[2 * (e - ms)] : nullptr;
  };
  auto ofc = [&](size_t e) -> int { return (int)(e < ms ? e % k : e - ms); };
  long long per = (n + gridDim.x - 1) / gridDim.x;
  per = (per + 255) / 256 * 256;
  const long long beg = (long long)blockIdx.x * per;
  const long long end = min(n, beg + per);
  int since = 0;
  for (long long b0 = beg; b0 < end; b0 += blockDim.x) {  // uniform trip count
    const long long i = b0 + tid;
    const double wi = i < end ? ws.w[i] : 0.0;
    const bool on = wi > 0;  // rows of weight 0 add nothing
    const int c = on ? labels[i] : 0;
    // (a warp of one cluster adds as one: every lane is on, and here)
    const bool whole = use_shared && warp_same(on, c);
    if (on) {
      for (int jj = 0; jj < jn; ++jj) {
        const int j = j0 + jj;
        const Fixed128 t = weighted_term((double)x[i + n * j], wi, pow2(scale[j]), ws);
        if (use_shared) wlimb_add_any(slimb, (size_t)c + (size_t)k * jj, m, t, on, whole);
        else atomic_add128(&acc[2 * ((size_t)c + (size_t)k * j)], t.lo, t.hi);
      }
      if (do_count) {
        const Fixed128 t = weight_term(wi, ws);
        if (use_shared) wlimb_add_any(slimb, ms + c, m, t, on, whole);
        else atomic_add128(&wc[2 * c], t.lo, t.hi);
      }
      if (use_shared) count_any<false>(&scnt[c], on, whole);
    }
    if (use_shared && ++since == kLimbFlush / 256) {
      since = 0;
      wlimb_flush(slimb, scnt, k, m, addr, ofc);
    }
  }
  if (use_shared) wlimb_flush(slimb, scnt, k, m, addr, ofc);
}

// New centers = weighted sums / weighted counts (0/0 = NaN: a cluster of
// weight 0 is empty), unless nothing changed; zeroes sums and counts.  The
// state update is k_finalize's (update_kernels.cuh).
__global__ void __launch_bounds__(256)
k_finalize_w(State *st, int max_iter, u64 *__restrict__ acc, u64 *__restrict__ wc, double *__restrict__ cen_d,
             float *__restrict__ cen_f, int k, int d, const int *__restrict__ scale, int cscale) {
  if (fit_finished(st, max_iter)) return;
  const int it = st->iter_done;
  const u64 changed = st->changed;
  const bool conv = changed == 0;
  const size_t kd = (size_t)k * d;
  for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < kd; e += (size_t)gridDim.x * blockDim.x) {
    if (!conv) {
      const int j = (int)(e / k);
      const int c = (int)(e - (size_t)j * k);
      const double s = from_fixed(acc[2 * e], acc[2 * e + 1], scale[j]);
      const double v = s / from_fixed(wc[2 * c], wc[2 * c + 1], cscale);
      cen_d[e] = v;
      if (cen_f) cen_f[e] = (float)v;
    }
    acc[2 * e] = 0;
    acc[2 * e + 1] = 0;
  }
  if (last_block_to_finish(st)) {
    for (int c = threadIdx.x; c < 2 * k; c += blockDim.x) wc[c] = 0;
    if (threadIdx.x == 0) {
      st->ticket = 0;
      st->last_changed = changed;
      st->changed = 0;
      if (conv) {
        st->flag = 1;
        st->conv_iter = it + 1;
      }
      st->iter_done = it + 1;
      __threadfence();
    }
  }
}

// The value whose largest per cluster sets the cluster's within-SS scale:
// whole weights, the row's squared distance (as the replicated rows); other
// weights, w' times it.  Rows of weight 0: 0.
__device__ __forceinline__ double wss_key(double s, double wi, const WeightSpec &ws) {
  if (!(wi > 0)) return 0.0;
  return ws.whole ? s : (wi * ws.wscale) * s;
}

// Weighted within-cluster sums of squares w.r.t. cen and the sizes (rows,
// weight 0 included), in k_withinss's two passes: PASS 0 the upper 32 bits
// of each cluster's largest key (gmax), PASS 1 the terms at scale
// wss_scale(gmax[c]) - ws.wshift (a row of weight 0 adds the term 0).
template <typename T, int PASS>
__global__ void __launch_bounds__(256)
k_withinss_w(const T *__restrict__ x, long long n, int d, const int *__restrict__ labels,
             const double *__restrict__ cen, int k, int use_shared, unsigned int *__restrict__ gmax,
             u64 *__restrict__ wacc, unsigned int *__restrict__ wcnt, WeightSpec ws) {
  extern __shared__ __align__(16) unsigned char smem[];
  unsigned int *slimb = reinterpret_cast<unsigned int *>(smem);          // PASS 1: 8k limbs
  unsigned int *scnt = slimb + kWLimbs * (size_t)k;                      // PASS 1: k counts
  double *spw = reinterpret_cast<double *>(scnt + k + (k & 1));          // PASS 1: k scales
  unsigned int *smax = reinterpret_cast<unsigned int *>(smem);           // PASS 0: k maxima
  const int tid = threadIdx.x;
  if (use_shared) {
    if (PASS == 0) {
      for (int c = tid; c < k; c += blockDim.x) smax[c] = 0;
    } else {
      for (size_t e = tid; e < kWLimbs * (size_t)k; e += blockDim.x) slimb[e] = 0;
      for (int c = tid; c < k; c += blockDim.x) {
        scnt[c] = 0;
        spw[c] = pow2(wss_scale(gmax[c]) - ws.wshift);
      }
    }
    __syncthreads();
  }
  auto addr = [&](size_t e) -> u64 * { return &wacc[2 * e]; };
  auto ofc = [](size_t e) -> int { return (int)e; };
  int since = 0;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long b0 = (long long)blockIdx.x * blockDim.x; b0 < n; b0 += stride) {
    const long long i = b0 + tid;
    const bool on = i < n;
    const int c = on ? labels[i] : 0;
    // (a warp of one cluster: one atomic for its 32 rows; the whole warp is here)
    const bool whole = use_shared && warp_same(on, c);
    if (on) {
      const double wi = ws.w[i];
      const double s = exact_dist(x, n, d, i, cen, k, c);  // (the unweighted term: whole weights give the replicated rows')
      const double key = wss_key(s, wi, ws);
      if (PASS == 0) {
        const unsigned int top = key > 0 ? (unsigned int)((u64)__double_as_longlong(key) >> 32) : 0u;
        max_any(use_shared ? &smax[c] : &gmax[c], top, on, whole);
      } else {
        const double p = use_shared ? spw[c] : pow2(wss_scale(gmax[c]) - ws.wshift);
        Fixed128 t{0, 0};
        if (wi > 0) t = ws.whole ? mul_fixed(round_fixed(s, p), (u64)wi) : rint_fixed(key * p);
        if (use_shared) {
          wlimb_add_any(slimb, c, k, t, on, whole);
          count_any<false>(&scnt[c], on, whole);
        } else {
          if (t.lo | t.hi) atomic_add128(&wacc[2 * c], t.lo, t.hi);
          atomicAdd(&wcnt[c], 1u);
        }
      }
    }
    if (PASS == 1 && use_shared && ++since == kLimbFlush / 256) {
      since = 0;
      __syncthreads();
      for (int c = tid; c < k; c += blockDim.x)
        if (scnt[c]) atomicAdd(&wcnt[c], scnt[c]);
      wlimb_flush(slimb, scnt, k, (size_t)k, addr, ofc);
    }
  }
  if (use_shared) {
    __syncthreads();
    if (PASS == 0) {
      for (int c = tid; c < k; c += blockDim.x)
        if (smax[c]) atomicMax(&gmax[c], smax[c]);
    } else {
      for (int c = tid; c < k; c += blockDim.x)
        if (scnt[c]) atomicAdd(&wcnt[c], scnt[c]);
      wlimb_flush(slimb, scnt, k, (size_t)k, addr, ofc);
    }
  }
}

}  // namespace
}  // namespace gk

#endif
