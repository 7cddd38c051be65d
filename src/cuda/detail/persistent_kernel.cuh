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

// One point per thread: used for small n only (persistent.cu), where more
// blocks spread the shared atomics of few clusters.
template <typename T, int DM>
__global__ void __launch_bounds__(256)
k_lloyd_persistent(const T *__restrict__ x, long long n, int d, T *cen, double *cen_d, int k,
                   int *__restrict__ labels, State *st, int max_iter, int batch, u64 *acc,
                   unsigned int *counts, const int *__restrict__ scale) {
  namespace cg = cooperative_groups;
  cg::grid_group grid = cg::this_grid();
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ unsigned int sh_changed;
  unsigned int *slimb = reinterpret_cast<unsigned int *>(smem);
  T *sc = reinterpret_cast<T *>(slimb + 4 * (size_t)k * d);
  unsigned int *scnt = reinterpret_cast<unsigned int *>(sc + Small<T, DM>::values(k));
  const int tid = threadIdx.x;
  const size_t kd = (size_t)k * d;
  double pw[DM];
#pragma unroll
  for (int j = 0; j < DM; ++j) pw[j] = (j < d) ? pow2(scale[j]) : 0.0;
  for (size_t e = tid; e < 4 * kd; e += blockDim.x) slimb[e] = 0;  // flushes re-zero
  for (int c = tid; c < k; c += blockDim.x) scnt[c] = 0;

  for (int b = 0; b < batch; ++b) {
    const int flag = __ldcg(&st->flag);
    const int it = __ldcg(&st->iter_done);
    if (flag || it >= max_iter) break;  // same values in every block
    const int par = it & 1;
    unsigned int *cnt_cur = counts + (size_t)par * k;
    unsigned int *cnt_next = counts + (size_t)(par ^ 1) * k;

    // ---- assignment + per-block sums (flushed into acc / cnt_cur)
    if (tid == 0) sh_changed = 0;
    Small<T, DM>::load(sc, cen, k, d, true);
    __syncthreads();
    small_pass<T, DM, true, 1>(x, n, d, k, sc, labels, slimb, scnt, pw, acc, cnt_cur, &sh_changed);
    if (tid == 0 && sh_changed) atomicAdd(&st->chg[par], (u64)sh_changed);
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
