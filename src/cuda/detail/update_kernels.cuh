// detail/update_kernels.cuh: centroid sums, the finalize step, within-SS.
//
// Sums are exact 128-bit fixed-point integers (common.cuh): per-block
// accumulators in shared memory (integer atomics), flushed once per block into
// global accumulators.  No floating-point atomics: the result bits do not
// depend on the order in which blocks or threads add.
//
// Included by update.cu only.
#ifndef GPUKMEANS_DETAIL_UPDATE_KERNELS_CUH
#define GPUKMEANS_DETAIL_UPDATE_KERNELS_CUH

#include "common.cuh"

namespace gk {
namespace {

// Sums of x per (cluster, coordinate) for coordinates [j0, j0 + jb) of a chunk
// of points; blockIdx.y picks the coordinate group, blockIdx.x the chunk.
template <typename T>
__global__ void __launch_bounds__(256)
k_accumulate(const T *__restrict__ x, long long n, int d, const int *__restrict__ labels, int k,
             int jb, int use_shared, State *st, int max_iter, u64 *__restrict__ acc,
             unsigned int *__restrict__ counts, const int *__restrict__ scale) {
  if (fit_finished(st, max_iter)) return;
  extern __shared__ __align__(16) unsigned char smem[];
  const int tid = threadIdx.x;
  const int j0 = blockIdx.y * jb;
  const int jn = min(jb, d - j0);
  const bool do_count = blockIdx.y == 0;
  u64 *sacc = reinterpret_cast<u64 *>(smem);
  unsigned int *scnt = reinterpret_cast<unsigned int *>(sacc + 2 * (size_t)k * jb);
  if (use_shared) {
    for (size_t e = tid; e < 2 * (size_t)k * jn; e += blockDim.x) sacc[e] = 0;
    if (do_count)
      for (int c = tid; c < k; c += blockDim.x) scnt[c] = 0;
    __syncthreads();
  }
  long long per = (n + gridDim.x - 1) / gridDim.x;
  per = (per + 255) / 256 * 256;
  const long long beg = (long long)blockIdx.x * per;
  const long long end = min(n, beg + per);
  for (long long i = beg + tid; i < end; i += blockDim.x) {
    const int c = labels[i];
    for (int jj = 0; jj < jn; ++jj) {
      const int j = j0 + jj;
      u64 lo, hi;
      to_fixed((double)x[i + n * j], scale[j], lo, hi);
      u64 *dst = use_shared ? &sacc[2 * ((size_t)c + (size_t)k * jj)]
                            : &acc[2 * ((size_t)c + (size_t)k * j)];
      atomic_add128(dst, lo, hi);
    }
    if (do_count) atomicAdd(use_shared ? &scnt[c] : &counts[c], 1u);
  }
  if (use_shared) {
    __syncthreads();
    for (size_t e = tid; e < (size_t)k * jn; e += blockDim.x) {
      u64 lo = sacc[2 * e], hi = sacc[2 * e + 1];
      if (lo | hi) {
        size_t c = e % k, jj = e / k;
        atomic_add128(&acc[2 * (c + (size_t)k * (j0 + jj))], lo, hi);
      }
    }
    if (do_count)
      for (int c = tid; c < k; c += blockDim.x)
        if (scnt[c]) atomicAdd(&counts[c], scnt[c]);
  }
}

// New centers = sums / counts (0/0 = NaN for an empty cluster, as in R),
// unless the assignment changed nothing: then the fit has converged and the
// centers stay.  Zeroes the accumulators for the next iteration.  The last
// block to finish (ticket) advances the state; every block reads the state
// before taking its ticket, so nobody sees it half-updated.
__global__ void __launch_bounds__(256)
k_finalize(State *st, int max_iter, u64 *__restrict__ acc, unsigned int *__restrict__ counts,
           double *__restrict__ cen_d, float *__restrict__ cen_f, int k, int d,
           const int *__restrict__ scale) {
  if (fit_finished(st, max_iter)) return;
  __shared__ int last;
  const int it = st->iter_done;
  const u64 changed = st->changed;
  const bool conv = changed == 0;
  const size_t kd = (size_t)k * d;
  for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < kd;
       e += (size_t)gridDim.x * blockDim.x) {
    if (!conv) {
      const int j = (int)(e / k);
      const int c = (int)(e - (size_t)j * k);
      double s = from_fixed(acc[2 * e], acc[2 * e + 1], scale[j]);
      double v = s / (double)counts[c];
      cen_d[e] = v;
      if (cen_f) cen_f[e] = (float)v;
    }
    acc[2 * e] = 0;
    acc[2 * e + 1] = 0;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    unsigned int t = atomicAdd(&st->ticket, 1u);
    last = (t == gridDim.x - 1);
  }
  __syncthreads();
  if (last) {
    for (int c = threadIdx.x; c < k; c += blockDim.x) counts[c] = 0;
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

// Within-cluster sums of squares w.r.t. cen_d (double, exact rounding rules)
// and cluster sizes.
template <typename T>
__global__ void __launch_bounds__(256)
k_withinss(const T *__restrict__ x, long long n, int d, const int *__restrict__ labels,
           const double *__restrict__ cen, int k, int wscale, int use_shared,
           u64 *__restrict__ wacc, unsigned int *__restrict__ wcnt) {
  extern __shared__ __align__(16) unsigned char smem[];
  u64 *sw = reinterpret_cast<u64 *>(smem);
  unsigned int *scnt = reinterpret_cast<unsigned int *>(sw + 2 * (size_t)k);
  const int tid = threadIdx.x;
  if (use_shared) {
    for (int e = tid; e < 2 * k; e += blockDim.x) sw[e] = 0;
    for (int c = tid; c < k; c += blockDim.x) scnt[c] = 0;
    __syncthreads();
  }
  for (long long i = (long long)blockIdx.x * blockDim.x + tid; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    const int c = labels[i];
    double t = __dsub_rn((double)x[i], cen[c]);
    double w = __dmul_rn(t, t);
    for (int j = 1; j < d; ++j) {
      t = __dsub_rn((double)x[i + n * j], cen[c + (size_t)k * j]);
      w = __dadd_rn(w, __dmul_rn(t, t));
    }
    u64 lo, hi;
    to_fixed(w, wscale, lo, hi);
    atomic_add128(use_shared ? &sw[2 * c] : &wacc[2 * c], lo, hi);
    atomicAdd(use_shared ? &scnt[c] : &wcnt[c], 1u);
  }
  if (use_shared) {
    __syncthreads();
    for (int c = tid; c < k; c += blockDim.x) {
      if (sw[2 * c] | sw[2 * c + 1]) atomic_add128(&wacc[2 * c], sw[2 * c], sw[2 * c + 1]);
      if (scnt[c]) atomicAdd(&wcnt[c], scnt[c]);
    }
  }
}

__global__ void k_to_float(const double *__restrict__ src, float *__restrict__ dst, long long m) {
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < m;
       e += (long long)gridDim.x * blockDim.x)
    dst[e] = (float)src[e];
}

}  // namespace
}  // namespace gk

#endif
