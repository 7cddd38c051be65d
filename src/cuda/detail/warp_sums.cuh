// detail/warp_sums.cuh: atomics on the shared counters of the cluster sums,
// for one lane, or for a whole warp at once where its 32 rows belong to one
// cluster.  Intrinsics only: tools/cuda-dev's emulators include it beside
// their stand-ins for them.
#ifndef GPUKMEANS_DETAIL_WARP_SUMS_CUH
#define GPUKMEANS_DETAIL_WARP_SUMS_CUH

namespace gk {

// SUB: a value taken out again (the caller takes 1 from the entry's count):
// a point that moved leaves its old cluster's sums this way (Plan::delta,
// k_accumulate).
template <bool SUB>
__device__ __forceinline__ void limb_atomic(unsigned int *p, unsigned int v) {
  if (SUB) atomicSub(p, v);
  else atomicAdd(p, v);
}

// Whether the warp's 32 lanes are all `on` and name the same entry c: rows
// in the order of their clusters (data bound group after group, or ordered
// in space) give whole warps of one cluster, whose atomics on one shared
// address would otherwise run one after another (B with its rows ordered by
// cluster: 0.047 -> 0.070 ms an iteration, H100).  The whole warp calls it.
__device__ __forceinline__ bool warp_same(bool on, int c) {
  const int c0 = __shfl_sync(0xffffffffu, c, 0);
  return __all_sync(0xffffffffu, on && c == c0);
}

// Whether the lanes that are `on` (mask: their ballot, not 0) all name the
// same entry c: the points of a warp of ordered rows that moved mostly
// cross one boundary, to one cluster and from one.  The whole warp calls it.
__device__ __forceinline__ bool group_same(bool on, int c, unsigned int mask) {
  const int c0 = __shfl_sync(0xffffffffu, c, __ffs(mask) - 1);
  return __all_sync(0xffffffffu, !on || c == c0);
}

// A count of one a point into *p, for the whole warp at once
// where `whole` (warp_same), else lane by lane where `on`.
template <bool SUB>
__device__ __forceinline__ void count_any(unsigned int *p, bool on, bool whole) {
  if (whole) {
    if ((threadIdx.x & 31) == 0) limb_atomic<SUB>(p, 32u);
  } else if (on) {
    limb_atomic<SUB>(p, 1u);
  }
}

// atomicMax(p, v) for the lanes that are `on` and v > 0 (the maxima start
// at 0), for the whole warp at once where `whole` (its largest v, REDUX).
__device__ __forceinline__ void max_any(unsigned int *p, unsigned int v, bool on, bool whole) {
  if (whole) {
    const unsigned int m = __reduce_max_sync(0xffffffffu, v);
    if (m && (threadIdx.x & 31) == 0) atomicMax(p, m);
  } else if (on && v) {
    atomicMax(p, v);
  }
}

}  // namespace gk

#endif
