// detail/persistent_kernel.cuh: the whole Lloyd iteration in one cooperative
// kernel for small d (d <= 8), for a batch of iterations per launch.
//
// Per iteration: every block loads the centers into shared memory, assigns its
// points (grid-stride, same mapping every iteration), adds x into per-block
// fixed-point sums (shared memory), flushes them into the global sums; grid
// sync; the grid computes the new centers (or detects convergence), zeroes the
// sums, block 0 advances the state; grid sync.  Two grid barriers replace two
// kernel launches, which matters when an iteration is a few microseconds.
// Data written inside the kernel by other blocks is read with ld.global.cg
// (L2, not a possibly stale L1 line).  Counts and changed counters are double
// buffered by iteration parity so that zeroing never races with reading.
//
// Included by persistent.cu only.
#ifndef GPUKMEANS_DETAIL_PERSISTENT_KERNEL_CUH
#define GPUKMEANS_DETAIL_PERSISTENT_KERNEL_CUH

#include <cooperative_groups.h>

#include "assign_kernels.cuh"

namespace gk {
namespace {

template <typename T, int DM>
__global__ void __launch_bounds__(256)
k_lloyd_persistent(const T *__restrict__ x, long long n, int d, T *cen, double *cen_d, int k,
                   int *__restrict__ labels, State *st, int max_iter, int batch, u64 *acc,
                   unsigned int *counts, const int *__restrict__ scale) {
  namespace cg = cooperative_groups;
  cg::grid_group grid = cg::this_grid();
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ unsigned int sh_changed;
  u64 *sacc = reinterpret_cast<u64 *>(smem);
  T *sc = reinterpret_cast<T *>(sacc + 2 * (size_t)k * d);
  T *scc = sc + (size_t)k * DM;
  unsigned int *scnt = reinterpret_cast<unsigned int *>(scc + k);
  const int tid = threadIdx.x;
  const size_t kd = (size_t)k * d;
  int sj[DM];
#pragma unroll
  for (int j = 0; j < DM; ++j) sj[j] = (j < d) ? scale[j] : 0;

  for (int b = 0; b < batch; ++b) {
    const int flag = __ldcg(&st->flag);
    const int it = __ldcg(&st->iter_done);
    if (flag || it >= max_iter) break;  // same values in every block
    const int par = it & 1;
    unsigned int *cnt_cur = counts + (size_t)par * k;
    unsigned int *cnt_next = counts + (size_t)(par ^ 1) * k;

    // ---- assignment + per-block sums
    if (tid == 0) sh_changed = 0;
    for (int e = tid; e < k * DM; e += blockDim.x) {
      int c = e / DM, j = e - c * DM;
      sc[e] = (j < d) ? __ldcg(&cen[c + (size_t)k * j]) : T(0);
    }
    for (size_t e = tid; e < 2 * kd; e += blockDim.x) sacc[e] = 0;
    for (int c = tid; c < k; c += blockDim.x) scnt[c] = 0;
    __syncthreads();
    if (sizeof(T) == 4) {
      for (int c = tid; c < k; c += blockDim.x) {
        T s = 0;
        for (int j = 0; j < DM; ++j) s = fmaf(sc[c * DM + j], sc[c * DM + j], s);
        scc[c] = s;
      }
      __syncthreads();
    }
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long base = (long long)blockIdx.x * blockDim.x; base < n; base += stride) {
      const long long i = base + tid;
      const bool valid = i < n;
      T xr[DM];
#pragma unroll
      for (int j = 0; j < DM; ++j) xr[j] = (valid && j < d) ? x[i + n * j] : T(0);
      T best = pos_inf<T>();
      int bi = -1;
#pragma unroll 4
      for (int c = 0; c < k; ++c) {
        const T *cp = sc + c * DM;
        T dd = Dist<T>::first(xr[0], cp[0]);
#pragma unroll
        for (int j = 1; j < DM; ++j) dd = Dist<T>::step(dd, xr[j], cp[j]);
        dd = Dist<T>::finish(dd, sizeof(T) == 4 ? scc[c] : T(0));
        if (dd < best) { best = dd; bi = c; }
      }
      unsigned int ch = 0;
      if (valid) {
        int old = labels[i];
        if (bi < 0) bi = old >= 0 ? old : 0;
        if (old != bi) { ch = 1; labels[i] = bi; }
#pragma unroll
        for (int j = 0; j < DM; ++j) {
          if (j < d) {
            u64 lo, hi;
            to_fixed((double)xr[j], sj[j], lo, hi);
            atomic_add128(&sacc[2 * ((size_t)bi + (size_t)k * j)], lo, hi);
          }
        }
        atomicAdd(&scnt[bi], 1u);
      }
      unsigned int w = __popc(__ballot_sync(0xffffffffu, ch != 0));
      if ((tid & 31) == 0 && w) atomicAdd(&sh_changed, w);
    }
    __syncthreads();
    if (tid == 0 && sh_changed) atomicAdd(&st->chg[par], (u64)sh_changed);
    for (size_t e = tid; e < kd; e += blockDim.x) {
      u64 lo = sacc[2 * e], hi = sacc[2 * e + 1];
      if (lo | hi) atomic_add128(&acc[2 * e], lo, hi);
    }
    for (int c = tid; c < k; c += blockDim.x)
      if (scnt[c]) atomicAdd(&cnt_cur[c], scnt[c]);
    grid.sync();

    // ---- update (or convergence)
    const u64 changed = __ldcg(&st->chg[par]);
    const bool conv = changed == 0;
    const size_t gtid = (size_t)blockIdx.x * blockDim.x + tid;
    const size_t gstride = (size_t)gridDim.x * blockDim.x;
    for (size_t e = gtid; e < kd; e += gstride) {
      if (!conv) {
        const int j = (int)(e / k);
        const int c = (int)(e - (size_t)j * k);
        double s = from_fixed(__ldcg(&acc[2 * e]), __ldcg(&acc[2 * e + 1]), scale[j]);
        double v = s / (double)__ldcg(&cnt_cur[c]);
        cen_d[e] = v;
        cen[e] = (T)v;
      }
      acc[2 * e] = 0;
      acc[2 * e + 1] = 0;
    }
    for (size_t c = gtid; c < (size_t)k; c += gstride) cnt_next[c] = 0;
    if (gtid == 0) {
      st->chg[par ^ 1] = 0;
      st->last_changed = changed;
      if (conv) {
        st->flag = 1;
        st->conv_iter = it + 1;
      }
      st->iter_done = it + 1;
    }
    grid.sync();
  }
}

}  // namespace
}  // namespace gk

#endif
