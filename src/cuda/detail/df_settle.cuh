// detail/df_settle.cuh: the double filter's settle pass (issue 15).
//
// Where the filter runs without the pair and without the candidate pass
// (D of bench.R: 1e7 x 16, k = 256), the points it does not certify used to
// get every center's exact no-FMA double distance (k_df_exact,
// dfilter.cuh): 4.5% of D's points, two close starting centers in one blob
// leaving their points inside the tensor-core bound's slack, which grows
// with |a|^2 + |b|^2 (the spread of the data), not with the distances
// compared.  Two facts settle most such points with a few distances:
//   - the triangle inequality: a center j with ||c_j - c_1|| > 2 ||x - c_1||
//     is farther from x than c_1, the filter's lowest center;
//   - float distances in the difference form, F_j = sum_c fl(a_c - b_jc)^2
//     (fmaf, coordinate order) on the float images a, b_j of dfilter.cuh,
//     whose error is relative to the distance itself.
// Per iteration k_df_center_lists sorts, for every center, all centers by
// F between the two centers' images (k x k; NaN centers last).  Per listed
// point k_df_settle (one thread a point) computes F_1 to c_1, walks c_1's
// list while the neighbour may be nearer (below `stop`), takes F of each,
// then exact distances to those F does not rule out (at most thr), least
// (distance, index); where F leaves one, that one, with no exact distance
// (its F from the filter's packed image: x's row is then never read).  A
// point without c_1 (listed past lcap; a center's
// image out of the box, cnt[1]) or with more than kDfSettleMax neighbours
// goes to `rest` for k_df_exact.
//
// The bound.  With G = ||a - b||^2 (real), u = 2^-24 and rho = 1.01 (d + 2)
// u: F is a sum of d nonnegative terms, each rounded once by the
// subtraction, and the sum by at most d fmas, so |F - G| <= rho G + kAbs
// (kAbs covers underflow); the same holds between two centers' images.
// dfilter.cuh bounds the rest: |s sqrt(R_j) - sqrt(G_j)| <= eps (the
// images' rounding, df_eps), each center's image within eps_c = df_eps(0)
// of its real value, and |D_j - R_j| <= gamma R_j + absd / s^2 (the exact
// distance's rounding), where R_j is the real squared distance and D_j the
// exact rule's.  For a center b of F_b:
//   s sqrt(R_b) <= up = sqrt((F_b + kAbs) / (1 - rho)) + eps,
//   s^2 D_b <= hi = up^2 (1 + gamma) + absd,
// and with r = sqrt((hi + absd) / (1 - gamma)) any center j with s
// sqrt(R_j) > r has s^2 D_j > hi >= s^2 D_b: it is farther than b.
//   - thr (df_settle_threshold, b the center of least F): F_j > thr = (r +
//     eps)^2 (1 + rho) + kAbs gives sqrt(G_j) > r + eps, s sqrt(R_j) > r;
//   - stop (df_settle_stop, b = c_1): a neighbour's F between the centers'
//     images above (up + r + 2 eps_c)^2 (1 + rho) + kAbs puts the real
//     centers more than up + r apart, and x within up of c_1: s sqrt(R_j) >
//     r by the triangle inequality.
// So the exact rule's choice j* is never cut off by stop (the walk stops at
// the first such neighbour: the lists rise) and has F at most thr; the
// least (distance, index) over a set that holds j* is j*.  hi, r, thr and
// stop are evaluated in double, each step's relative error far below the
// factors (1 + 2^-30) that widen them.  NaN centers (empty clusters) sort
// last and have NaN F: never candidates, as the exact rule never takes
// them.
#ifndef GPUKMEANS_DETAIL_DF_SETTLE_CUH
#define GPUKMEANS_DETAIL_DF_SETTLE_CUH

#include "dfilter.cuh"
#include "tc_tiles.cuh"

namespace gk {
namespace {

constexpr int kDfSettleMaxK = 1024;  // the lists: one block sorts a center's k entries in shared memory
constexpr int kDfSettleMax = 16;     // neighbours a point keeps (more: to k_df_exact)

// The header's constants: kAbs, the widening factor 1 + 2^-30, and rho for
// d coordinates.
constexpr double kDfSettleAbs = 7.8886090522101181e-31, kDfSettleWiden = 1.0 + 9.3132257461547852e-10;
__device__ __forceinline__ double df_settle_rho(int d) { return 1.01 * (d + 2.0) * 5.9604644775390625e-08; }

// up and r of the header for a center of F = f from a point of image
// norm^2 na (eps: df_eps); false where f proves nothing (NaN, inf).
__device__ __forceinline__ bool df_settle_radii(float f, int d, double eps, const DFBound &bd, double &up,
                                                double &r) {
  if (!(f < 3e38f)) return false;
  up = sqrt(((double)f + kDfSettleAbs) / (1.0 - df_settle_rho(d)) * kDfSettleWiden) + eps;
  const double hi = up * up * (1.0 + bd.gamma) * kDfSettleWiden + bd.absd;
  r = sqrt((hi + bd.absd) / (1.0 - bd.gamma) * kDfSettleWiden);
  return true;
}

// A float v with every F above it proving what the header says: (t^2 (1 +
// rho) + kAbs), widened and rounded up.
__device__ __forceinline__ float df_settle_above(double t, int d) {
  return __double2float_ru((t * t * (1.0 + df_settle_rho(d)) + kDfSettleAbs) * kDfSettleWiden);
}

// thr of the header for a point of image norm^2 na whose least F is fmin:
// the centers with F_j > thr are farther than the one of least F.  +inf
// where nothing is proven (fmin NaN: no center has a finite F).
__device__ __forceinline__ float df_settle_threshold(float fmin, float na, int d, const DFBound &bd) {
  const double eps = df_eps(na, d, bd);
  double up, r;
  if (!df_settle_radii(fmin, d, eps, bd, up, r)) return pos_inf<float>();
  return df_settle_above(r + eps, d);
}

// stop of the header for a point of image norm^2 na and F = f1 to its
// center c_1: c_1's neighbours with F between the centers above it are
// farther than c_1.  +inf where nothing is proven.
__device__ __forceinline__ float df_settle_stop(float f1, float na, int d, const DFBound &bd) {
  const double eps = df_eps(na, d, bd), eps_c = df_eps(0.f, d, bd);
  double up, r;
  if (!df_settle_radii(f1, d, eps, bd, up, r)) return pos_inf<float>();
  return df_settle_above(up + r + 2.0 * eps_c, d);
}

// A listed point's coordinates: its float image read once from the
// filter's packed image xi (tc_tiles.cuh: four 32-byte sectors a chunk of
// 16 coordinates, where x's column-major row is 16 sectors), with DMAX > 0
// (d <= DMAX) into registers; DMAX = 0: read from xi each time.  (Its
// exact distances read x: exact_dist, common.cuh.)
template <int DMAX>
struct DfPoint {
  float a[DMAX > 0 ? DMAX : 1];
  const float *xi;
  long long row;
  int d;
  // body(c) for c = 0 .. d - 1, in order: unrolled over DMAX (the arrays'
  // indices then known at compile time: registers), else a loop.
  template <class Body>
  __device__ __forceinline__ void each(Body &&body) const {
    if (DMAX > 0) {
#pragma unroll
      for (int c = 0; c < (DMAX > 0 ? DMAX : 1); ++c)
        if (c < d) body(c);
    } else {
      for (int c = 0; c < d; ++c) body(c);
    }
  }
  __device__ __forceinline__ void load(const float *__restrict__ xi_, int d_, long long row_) {
    xi = xi_;
    row = row_;
    d = d_;
    if (DMAX > 0) each([&](int c) { a[c] = xi[tc_packed_at(row, c, d)]; });
  }
  __device__ __forceinline__ float image(int c) const { return DMAX > 0 ? a[c] : xi[tc_packed_at(row, c, d)]; }
};

// F between the point's image and center j's (ci: kp x d column-major):
// fl(a - b)^2 summed by fmaf in coordinate order.
template <int DMAX>
__device__ __forceinline__ float df_settle_f(const DfPoint<DMAX> &pt, const float *__restrict__ ci, int kp, int j) {
  float f = 0.f;
  pt.each([&](int c) {
    const float t = __fsub_rn(pt.image(c), ci[j + (size_t)kp * c]);
    f = __fmaf_rn(t, t, f);
  });
  return f;
}

// The lists (one block a center c, blockDim a power of two >= k, at most
// kDfSettleMaxK): every center j by F between the images of c and j
// (kp x d column-major, ci), ascending, NaN centers last; nbr[c k + t] the
// t-th center, nbf its F (+inf for NaN centers).
static __global__ void k_df_center_lists(const float *__restrict__ ci, int k, int kp, int d, int *__restrict__ nbr,
                                         float *__restrict__ nbf, const State *st, int max_iter) {
  if (fit_finished(st, max_iter)) return;
  __shared__ float s_f[kDfSettleMaxK];
  __shared__ int s_j[kDfSettleMaxK];
  const int c = blockIdx.x, tid = threadIdx.x, len = blockDim.x;
  float f = pos_inf<float>();
  if (tid < k) {
    f = 0.f;
    for (int t = 0; t < d; ++t) {
      const float v = __fsub_rn(ci[c + (size_t)kp * t], ci[tid + (size_t)kp * t]);
      f = __fmaf_rn(v, v, f);
    }
    if (!(f <= pos_inf<float>())) f = pos_inf<float>();  // NaN (c or j empty): last
  }
  s_f[tid] = f;
  s_j[tid] = tid;
  __syncthreads();
  // bitonic sort by (F, index)
  for (int size = 2; size <= len; size <<= 1)
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      const int o = tid ^ stride;
      if (o > tid) {
        const bool up = (tid & size) == 0;
        const float fa = s_f[tid], fb = s_f[o];
        const int ja = s_j[tid], jb = s_j[o];
        const bool gt = fa > fb || (fa == fb && ja > jb);
        if (gt == up) {
          s_f[tid] = fb; s_f[o] = fa;
          s_j[tid] = jb; s_j[o] = ja;
        }
      }
      __syncthreads();
    }
  if (tid < k) {
    nbr[(size_t)c * k + tid] = s_j[tid];
    nbf[(size_t)c * k + tid] = s_f[tid];
  }
}

// The listed points (list, count cnt[0]), one thread a point: see the
// header; DMAX: DfPoint, xi: the filter's packed image of x.  Counts the
// listed points for the fit's exact share (as k_df_pair does where it
// runs); the points it leaves join rest (cnt[3]).
template <int DMAX>
__global__ void __launch_bounds__(256)
k_df_settle(const double *__restrict__ x, const float *__restrict__ xi, long long n, int d,
            const double *__restrict__ cen, int k, const float *__restrict__ ci, int kp, const int *__restrict__ nbr,
            const float *__restrict__ nbf, int *__restrict__ labels, State *st, int max_iter, DFArgs fa) {
  if (fit_finished(st, max_iter)) return;
  const long long m = df_count_listed(fa);
  const DFBound bd = df_bound(fa);
  const bool all = fa.cnt[1] != 0u;  // a center's image out of the box: F proves nothing
  unsigned int ch = 0;
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < m; e += (long long)gridDim.x * blockDim.x) {
    const long long row = fa.list[e];
    const int c1 = !all && e < fa.lcap ? fa.c1[e] : -1;
    bool done = false;
    if (c1 >= 0 && c1 < k) {
      DfPoint<DMAX> pt;
      pt.load(xi, d, row);
      const float na = fa.na[row];
      const float f1 = df_settle_f(pt, ci, kp, c1);
      const float stop = df_settle_stop(f1, na, d, bd);
      const int *lj = nbr + (size_t)c1 * k;
      const float *lf = nbf + (size_t)c1 * k;
      int nj[kDfSettleMax];
      float nf[kDfSettleMax];
      int cnt = 0;
      float fmin = f1;
      bool full = false;
      for (int t = 0; t < k; ++t) {  // (c_1 itself among the first: F 0 between its images)
        if (!(lf[t] <= stop)) break;
        if (cnt == kDfSettleMax) { full = true; break; }
        const int j = lj[t];
        nj[cnt] = j;
        nf[cnt] = j == c1 ? f1 : df_settle_f(pt, ci, kp, j);
        fmin = fminf(fmin, nf[cnt]);
        ++cnt;
      }
      if (!full && stop < pos_inf<float>()) {
        const float thr = df_settle_threshold(fmin, na, d, bd);
        int bi = 0x7fffffff, left = 0;
        for (int q = 0; q < cnt; ++q)
          if (nf[q] <= thr) { bi = nj[q]; ++left; }
        // One center left is the exact rule's choice without its distance:
        // the choice is among those left, and with every center's image in
        // the box (!all) and x within dfilter_range every distance to a
        // center that is not NaN is finite (below 2^900), so the rule does
        // not pass over it.  This spares most points the 16 sectors of
        // their row of x.
        if (left > 1) {
          double best = pos_inf<double>();
          bi = 0x7fffffff;
          for (int q = 0; q < cnt; ++q)
            if (nf[q] <= thr) {
              const double dist = exact_dist(x, n, d, row, cen, k, nj[q]);
              if (dist < pos_inf<double>()) df_take(dist, nj[q], best, bi);  // (as k_df_exact: below +inf)
            }
        }
        const int old = labels[row];
        label_commit(&labels[row], old, bi == 0x7fffffff ? label_kept(old) : bi, ch);
        done = true;
      }
    }
    if (!done) fa.rest[atomicAdd(&fa.cnt[3], 1u)] = (int)row;
  }
  if (ch && st) atomicAdd(&st->changed, (u64)ch);
}

}  // namespace
}  // namespace gk

#endif
