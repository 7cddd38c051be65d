// detail/update_tail.cuh: the update step's pieces shared by the update
// kernel (k_finalize, update_kernels.cuh) and the kernels that fold the
// update into their own last block (the warp boxes' kernel on ordered rows,
// wbox_kernels.cuh): one center coordinate from the exact sums, the state
// advanced, and the whole update run by the last block of a grid.
#ifndef GPUKMEANS_DETAIL_UPDATE_TAIL_CUH
#define GPUKMEANS_DETAIL_UPDATE_TAIL_CUH

#include "common.cuh"

namespace gk {
namespace {

// Element e (= c + k j) of the new centers: cluster c's sum over its count
// (0/0 = NaN for an empty cluster, as in R).  Loads through L2 (ld.cg):
// the sums were added by other blocks of the same kernel where the last
// block runs the update.
__device__ __forceinline__ double center_from_sums(const u64 *acc, const unsigned int *counts, size_t e, int k,
                                                   const int *__restrict__ scale) {
  const int j = (int)(e / k);
  const int c = (int)(e - (size_t)j * k);
  const double s = from_fixed(__ldcg(&acc[2 * e]), __ldcg(&acc[2 * e + 1]), scale[j]);
  return s / (double)__ldcg(&counts[c]);
}

// Elements first, first + step, ... of the new centers into cen_d (and
// cen_f where not null), unless nothing changed; the sums zeroed unless
// keep.
__device__ __forceinline__ void update_elements(u64 *acc, const unsigned int *counts, double *cen_d, float *cen_f,
                                                int k, int d, const int *__restrict__ scale, bool keep, u64 changed,
                                                size_t first, size_t step) {
  const size_t kd = (size_t)k * d;
  for (size_t e = first; e < kd; e += step) {
    // (the sums loaded whether or not they are used: their loads need not
    // wait on changed's, loaded just before by update_by_last_block)
    const double v = center_from_sums(acc, counts, e, k, scale);
    if (changed != 0) {
      cen_d[e] = v;
      if (cen_f) cen_f[e] = (float)v;
    }
    if (!keep) {
      acc[2 * e] = 0;
      acc[2 * e + 1] = 0;
    }
  }
}

// The state after an iteration that changed `changed` labels (one thread).
__device__ __forceinline__ void advance_state(State *st, int it, u64 changed) {
  st->ticket = 0;
  st->last_changed = changed;
  st->changed = 0;
  st->moves = 0;
  if (changed == 0) {
    st->flag = 1;
    st->conv_iter = it + 1;
  }
  st->iter_done = it + 1;
  __threadfence();
}

// Called by every block of an assignment kernel once its sums, counts and
// changed count are in acc, counts and st->changed: the last block to get
// here (ticket) runs the update alone, as k_finalize would after the kernel
// (the new centers into cen_d and cen_f where not null, unless nothing
// changed; the sums and counts zeroed unless keep; the state advanced).
// The centers it writes are the ones the kernel read: every other block
// has finished with them when the last ticket is drawn.  Saves the update's
// own launch every iteration.  (inline: a plain __device__ function leaves
// a host stub that calls exit in the object, which R CMD check flags.)
__device__ inline void update_by_last_block(State *st, u64 *acc, unsigned int *counts, double *cen_d, float *cen_f, int k,
                                     int d, const int *__restrict__ scale, bool keep) {
  if (!last_block_to_finish(st)) return;  // (the block's flushes and its changed count are done)
  __threadfence();
  const int it = __ldcg(&st->iter_done);
  const u64 changed = __ldcg(&st->changed);
  update_elements(acc, counts, cen_d, cen_f, k, d, scale, keep, changed, threadIdx.x, blockDim.x);
  __syncthreads();  // (every count read before it is zeroed)
  if (!keep)
    for (int c = threadIdx.x; c < k; c += blockDim.x) counts[c] = 0;
  if (threadIdx.x == 0) advance_state(st, it, changed);
}

}  // namespace
}  // namespace gk

#endif  // GPUKMEANS_DETAIL_UPDATE_TAIL_CUH
