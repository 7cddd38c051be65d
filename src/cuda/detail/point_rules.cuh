// detail/point_rules.cuh: a point's exact squared distance and the labels'
// rule, shared by every kernel that assigns or scores points.  Intrinsics
// only: tools/cuda-dev's emulators include it beside their stand-ins for them.
#ifndef GPUKMEANS_DETAIL_POINT_RULES_CUH
#define GPUKMEANS_DETAIL_POINT_RULES_CUH

namespace gk {

// Exact-rule squared distance of point i to center c (centers k x d,
// column-major, in the storage precision, or the fit's double centers):
// no FMA, coordinate order (parity.h point 1).  The bounds' and the double
// filter's exact passes, and each point's within-cluster term.
template <typename T, typename C>
__device__ __forceinline__ double exact_dist(const T *__restrict__ x, long long n, int d, long long i,
                                             const C *__restrict__ cen, int k, int c) {
  double t = __dsub_rn((double)x[i], (double)cen[c]);
  double s = __dmul_rn(t, t);
  for (int j = 1; j < d; ++j) {
    t = __dsub_rn((double)x[i + n * (long long)j], (double)cen[c + (size_t)k * j]);
    s = __dadd_rn(s, __dmul_rn(t, t));
  }
  return s;
}

// The labels' rule, shared by every assignment kernel: a point none of
// whose distances is finite (overflow) keeps its old label, or takes 0 if
// it never had one (-1); a new label is written only where it changed,
// and the change counted.
__device__ __forceinline__ int label_kept(int old) { return old >= 0 ? old : 0; }
__device__ __forceinline__ void label_commit(int *p, int old, int nl, unsigned int &ch) {
  if (old != nl) {
    ++ch;
    *p = nl;
  }
}

}  // namespace gk

#endif
