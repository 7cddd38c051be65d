// detail/init_tree.cuh: the fixed-order sum trees of the initialisation and
// the exact point-to-center distance, on the device.
//
// Every floating-point operation that decides a choice follows
// src/parity.h exactly as src/cpu_init.cpp does it:
//   distance  s = 0; s = s + (x_c - c_c)^2 in coordinate order, in double,
//             with __dsub_rn/__dmul_rn/__dadd_rn (never an FMA);
//   sums      the arity-32 tree: level 1 is summed sequentially over the 32
//             lanes of a warp (= 32 consecutive points; lanes past n add
//             +0.0, which leaves a non-negative sum unchanged), each further
//             level by one thread per element, sequentially;
//   sampling  the descent of parity.h point 3.
// Included by the initialisation's .cu files only.
#ifndef GPUKMEANS_DETAIL_INIT_TREE_CUH
#define GPUKMEANS_DETAIL_INIT_TREE_CUH

#include "common.cuh"
#include "../../parity.h"

namespace gk {
namespace init {

constexpr int kMaxLevels = 24;

// Levels 1..T of `batches` sum trees over the same number of leaves (level 0
// is not stored here: the kernels compute it).  Tree b of level t is at
// p[t] + b * len[t]; len[T] == 1.
struct Levels {
  double *p[kMaxLevels];
  long long len[kMaxLevels];
  int T;  // top level; 0 when there is a single leaf
};

__device__ __forceinline__ double dmin(double d2, double dist) { return dist < d2 ? dist : d2; }

// Exact squared distance of point i of x (n x d, column-major) to c (d
// doubles), in coordinate order (parity.h point 1).
template <typename T>
__device__ __forceinline__ double exact_dist(const T *__restrict__ x, long long n, int d, long long i,
                                             const double *__restrict__ c) {
  double s = 0.0;
  for (int a = 0; a < d; ++a) {
    const double t = __dsub_rn((double)x[i + n * (long long)a], c[a]);
    s = __dadd_rn(s, __dmul_rn(t, t));
  }
  return s;
}

// Element j of the level above a (li values): the sequential sum of
// a[32j ...] (at most 32 terms, stopping at li).
__device__ __forceinline__ double tree_node_sum(const double *a, long long li, long long j) {
  const long long s0 = j * GK_SUM_ARITY, s1 = min(li, s0 + GK_SUM_ARITY);
  double s = 0.0;
  for (long long q = s0; q < s1; ++q) s = __dadd_rn(s, a[q]);
  return s;
}

// One level of the trees: out[b*lo + j] = tree_node_sum of tree b of in.
static __global__ void k_tree_level(const double *__restrict__ in, long long li, double *__restrict__ out,
                             long long lo, int batches) {
  const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= lo * batches) return;
  const long long b = t / lo, j = t - b * lo;
  out[b * lo + j] = tree_node_sum(in + b * li, li, j);
}

// D^2 sampling by one warp in tree b of lv with uniform u; leaf(i) gives the
// value of leaf i (computed by the caller, one lane per leaf).  s_a: 32
// doubles of shared memory for this warp.  Returns the leaf (all lanes), or
// -1 if the total is not > 0.
template <typename Leaf>
__device__ long long warp_descend(const Levels &lv, int b, long long n_leaves, int from, int to, long long node,
                                  double target, double *off, Leaf leaf, double *s_a);

template <typename Leaf>
__device__ long long warp_tree_sample(const Levels &lv, int b, long long n_leaves, double u, Leaf leaf,
                                      double *s_a) {
  const double total = lv.T == 0 ? leaf(0) : lv.p[lv.T][b];
  if (!(total > 0)) return -1;
  double off = 0.0;
  return warp_descend(lv, b, n_leaves, lv.T, 0, 0, __dmul_rn(u, total), &off, leaf, s_a);
}

// The descent of parity.h point 3 by one warp in tree b of lv, from `node`
// of level `from` down to a node of level `to` (0: a leaf, whose value
// leaf(i) gives), with the target and the offset reached so far (*off is
// updated, so a descent may stop at a level and go on from it later).
// Returns the node (all lanes).
template <typename Leaf>
__device__ long long warp_descend(const Levels &lv, int b, long long n_leaves, int from, int to, long long node,
                                  double target, double *off, Leaf leaf, double *s_a) {
  const int lane = threadIdx.x & 31;
  for (int t = from; t > to; --t) {
    const long long m = t == 1 ? n_leaves : lv.len[t - 1];
    const long long lo = node * GK_SUM_ARITY;
    const int cnt = (int)min((long long)GK_SUM_ARITY, m - lo);
    double v = 0.0;
    if (lane < cnt) v = t == 1 ? leaf(lo + lane) : lv.p[t - 1][b * lv.len[t - 1] + lo + lane];
    s_a[lane] = v;
    __syncwarp();
    int c = 0;
    if (lane == 0) c = descend_children(s_a, cnt, target, off);  // parity.h
    __syncwarp();
    c = __shfl_sync(0xffffffffu, c, 0);
    node = lo + c;
  }
  return node;
}

// The degenerate rule (parity.h point 4), by one thread: when total is not
// > 0, the lowest row from *free_from on that is not chosen
// (is_chosen(row)), or n - 1 if there is none (*free_from advanced to it);
// else -1.
template <typename Chosen>
__device__ long long free_row(double total, long long n, long long *free_from, Chosen is_chosen) {
  if (total > 0) return -1;
  long long f = *free_from;
  while (f < n && is_chosen(f)) ++f;
  *free_from = f;
  return f < n ? f : n - 1;
}

}  // namespace init
}  // namespace gk

#endif
