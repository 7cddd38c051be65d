// detail/init_pp_kernels.cuh: the kernels of greedy k-means++ (init_pp.cu),
// plain or weighted (the reduction of k-means||).
//
// One step reads x once.  The pass of step s takes the center chosen at step
// s-1 as "pending": it folds it into D2 (D2 = min(D2, dist)), writes D2 back
// and scores the L candidates of step s against the new D2.  The sampling of
// step s needs the tree of w * D2 after that pending center, which is the
// potential tree of the candidate chosen at step s-1 (same values, same
// order); only its leaves are recomputed, for the 32 points of the last
// descent.  Arithmetic as in init_tree.cuh; the CPU engine does the same
// sums in the same order, so both choose the same rows in double.
#ifndef GPUKMEANS_DETAIL_INIT_PP_KERNELS_CUH
#define GPUKMEANS_DETAIL_INIT_PP_KERNELS_CUH

#include "init_tree.cuh"

namespace gk {
namespace init {

constexpr int kPassThreads = 128;  // threads per block of the pass
constexpr int kPassPoints = 2;     // points per thread: i and i + kPassThreads
constexpr int kCoordTile = 32;     // coordinates per shared-memory tile
constexpr int kCoordGroup = 4;     // coordinates loaded together (a tile is whole groups)
constexpr int kMaxCandidates = 32;
constexpr int kMaxRowBlocks = 16;  // blocks of rows a greedy k-means++ reads (gk_cuda_greedy_devices)

// The rows of a greedy k-means++ as its sampling reads them, one at a time:
// one block (one device's x; B = 1, no lookup), or the contiguous blocks of
// several parts in row order (B = kMaxRowBlocks), each with its D2 and
// chosen flags on its own device, read from the device that samples (the
// same device, or a peer with access).
template <typename T, int B>
struct RowBlocks {
  const T *x[B];             // block p: rows [lo[p], lo[p + 1]), column-major
  double *d2[B];
  unsigned char *chosen[B];
  long long lo[B + 1];       // first row of each block, then n
  int blocks;                // <= B
  __device__ __forceinline__ long long n() const { return lo[blocks]; }
  __device__ __forceinline__ int block_of(long long i) const {
    if (B == 1) return 0;
    int p = 0;
    while (p + 1 < blocks && i >= lo[p + 1]) ++p;
    return p;
  }
  __device__ __forceinline__ double value(long long i, int a) const {
    const int p = block_of(i);
    return (double)x[p][(i - lo[p]) + (lo[p + 1] - lo[p]) * (long long)a];
  }
  __device__ __forceinline__ double dist(long long i, int d, const double *c) const {
    const int p = block_of(i);
    return exact_dist(x[p], lo[p + 1] - lo[p], d, i - lo[p], c);
  }
  __device__ __forceinline__ double D2(long long i) const {
    const int p = block_of(i);
    return d2[p][i - lo[p]];
  }
  __device__ __forceinline__ bool is_chosen(long long i) const {
    const int p = block_of(i);
    return chosen[p][i - lo[p]] != 0;
  }
  __device__ __forceinline__ void choose(long long i) const {
    const int p = block_of(i);
    chosen[p][i - lo[p]] = 1;
  }
};

// Coordinates [c, c + kCoordGroup) of point i into r; those at or past d (and
// all of a point past n) read as 0.
template <typename T>
__device__ __forceinline__ void load_group(const T *__restrict__ x, long long n, int d, long long i, bool live,
                                           int c, T (&r)[kCoordGroup]) {
  const T *p = x + i + n * (long long)c;
#pragma unroll
  for (int u = 0; u < kCoordGroup; ++u) r[u] = (live && c + u < d) ? p[n * (long long)u] : T(0);
}

// The pass of one step.  Slot 0 of the accumulators is the pending center
// (pend, may be NULL), slots 1..L the candidates cc (L x d, row-major).
// NB >= L + 1.  Writes d2 (where pend lowers it) and lv1[j * stride + chunk]
// (chunk < nch), the level-1 sums of w_i * min(D2_i, dist(i, cand_j)): lv1
// may point into a tree over more rows (a block of them whose first row is
// a multiple of 32, on this device or a peer).  head > 0: x is a chunk of
// streamed rows whose first row is 32 m + head (lv1 points at node m): the
// chunk's rows sit at lanes head.. of its first node, whose sum goes on
// from the value the previous chunk left there (its kernel ran before on
// the same stream; it added +0.0 for the lanes past its rows, which leaves
// the sum's bits), so any split into chunks gives the sums of one pass.
// A block covers
// kPassThreads * kPassPoints consecutive points.
//
// Speed: every slot and every coordinate of a group is computed without a
// test.  Unused slots and the padding past d hold 0 on both sides, and
// acc + (0 - 0)^2 is acc exactly (acc >= +0), so the sums keep the bits of
// parity.h point 1.  Each center value read from shared memory serves
// kPassPoints points (shared-memory bandwidth limits one point per thread);
// the next group's loads are issued before the current group is used.
template <typename T, int NB>
__global__ void __launch_bounds__(kPassThreads)
k_pp_pass(const T *__restrict__ x, long long n, int d, const double *__restrict__ w,
          double *__restrict__ d2, const double *__restrict__ pend, const double *__restrict__ cc, int L,
          double *__restrict__ lv1, long long stride, long long nch, int head) {
  constexpr int P = kPassPoints;
  // s_c[c][slot] (a tile of the centers) during the pass, then
  // s_red[warp][lane][slot] for the level-1 sums.
  static_assert(kCoordTile <= kPassThreads, "s_c must fit in s_buf");
  __shared__ __align__(16) double s_buf[kPassThreads * NB];
  double(*s_c)[NB] = reinterpret_cast<double(*)[NB]>(s_buf);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  long long ip[P];
  bool live[P];
  double acc[P][NB];
#pragma unroll
  for (int p = 0; p < P; ++p) {
    ip[p] = (long long)blockIdx.x * (kPassThreads * P) + (long long)p * kPassThreads + threadIdx.x - head;
    live[p] = ip[p] >= 0 && ip[p] < n;
#pragma unroll
    for (int s = 0; s < NB; ++s) acc[p][s] = 0.0;
  }

  for (int c0 = 0; c0 < d; c0 += kCoordTile) {
    const int cb = min(kCoordTile, d - c0);
    const int groups = (cb + kCoordGroup - 1) / kCoordGroup;
    __syncthreads();
    for (int t = threadIdx.x; t < groups * kCoordGroup * NB; t += kPassThreads) {
      const int c = t / NB, s = t - c * NB;
      double v = 0.0;
      if (c < cb) {
        if (s == 0) v = pend ? pend[c0 + c] : 0.0;
        else if (s <= L) v = cc[(size_t)(s - 1) * d + c0 + c];
      }
      s_c[c][s] = v;
    }
    __syncthreads();
    T xr[P][kCoordGroup], xn[P][kCoordGroup];
#pragma unroll
    for (int p = 0; p < P; ++p) load_group(x, n, d, ip[p], live[p], c0, xr[p]);
    for (int g = 0; g < groups; ++g) {
      if (g + 1 < groups) {
#pragma unroll
        for (int p = 0; p < P; ++p) load_group(x, n, d, ip[p], live[p], c0 + (g + 1) * kCoordGroup, xn[p]);
      }
#pragma unroll
      for (int u = 0; u < kCoordGroup; ++u) {
        const double *cu = s_c[g * kCoordGroup + u];
#pragma unroll
        for (int s = 0; s < NB; ++s) {
          const double cv = cu[s];
#pragma unroll
          for (int p = 0; p < P; ++p) {
            const double t = __dsub_rn((double)xr[p][u], cv);
            acc[p][s] = __dadd_rn(acc[p][s], __dmul_rn(t, t));
          }
        }
      }
#pragma unroll
      for (int p = 0; p < P; ++p)
#pragma unroll
        for (int u = 0; u < kCoordGroup; ++u) xr[p][u] = xn[p][u];
    }
  }

  double(*s_red)[32][NB] = reinterpret_cast<double(*)[32][NB]>(s_buf);
#pragma unroll
  for (int p = 0; p < P; ++p) {
    double v = live[p] ? d2[ip[p]] : 0.0;
    if (pend && live[p] && acc[p][0] < v) {  // v = dmin(v, acc[p][0]), written when it changes
      v = acc[p][0];
      d2[ip[p]] = v;
    }
    const double wi = (w && live[p]) ? w[ip[p]] : 1.0;
    // s_red overlays s_c (p == 0) and the previous point's sums (p > 0)
    if (p == 0) __syncthreads();
    else __syncwarp();
#pragma unroll
    for (int s = 1; s < NB; ++s) {
      const double m = dmin(v, acc[p][s]);
      s_red[warp][lane][s - 1] = live[p] ? (w ? __dmul_rn(wi, m) : m) : 0.0;
    }
    __syncwarp();
    const long long chunk = (ip[p] + head) >> 5;
    if (lane < L && chunk < nch) {
      double sum = head > 0 && chunk == 0 ? lv1[(long long)lane * stride] : 0.0;
#pragma unroll 8
      for (int q = 0; q < 32; ++q) sum = __dadd_rn(sum, s_red[warp][q][lane]);
      lv1[(long long)lane * stride + chunk] = sum;
    }
  }
}

// Sampling of one step, by a whole block (warps 0..L-1 draw): warp j draws
// candidate j with unif[j] from tree b of lv, whose leaves are
// w_i * min(D2_i, dist(i, pend)).  When the total is not > 0, every
// candidate is the lowest point not chosen yet (the degenerate rule).
// Writes cand[j] and the candidate's row into cc.
template <typename T, int B>
__device__ void sample_candidates(const Levels &lv, int b, const RowBlocks<T, B> &R, int d,
                                  const double *__restrict__ w, const double *pend,
                                  const double *__restrict__ unif, int L, long long *free_from, long long *cand,
                                  double *cc) {
  __shared__ double s_a[kMaxCandidates][32];
  __shared__ long long s_free;
  const long long n = R.n();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  auto leaf = [&](long long i) -> double {
    double v = R.D2(i);
    if (pend) v = dmin(v, R.dist(i, d, pend));
    return w ? __dmul_rn(w[i], v) : v;
  };
  if (threadIdx.x == 0)
    s_free = free_row(lv.T == 0 ? leaf(0) : lv.p[lv.T][b], n, free_from, [&](long long i) { return R.is_chosen(i); });
  __syncthreads();
  if (warp >= L) return;
  long long c = s_free;
  if (c < 0) c = warp_tree_sample(lv, b, n, unif[warp], leaf, s_a[warp]);
  if (c < 0) c = 0;  // cannot happen: the total is > 0 here
  if (lane == 0) cand[warp] = c;
  for (int a = lane; a < d; a += 32) cc[(size_t)warp * d + a] = R.value(c, a);
}

// The first pick: row `first` is chosen and becomes the single candidate
// in cc (one block).
template <typename T, int B>
__global__ void k_pp_start(RowBlocks<T, B> R, int d, long long *idx, long long first, double *cc) {
  if (threadIdx.x == 0) {
    idx[0] = first;
    R.choose(first);
  }
  for (int a = threadIdx.x; a < d; a += blockDim.x) cc[a] = R.value(first, a);
}

// The sampling of step 1 (tree *best, built from the first center).
template <typename T, int B>
__global__ void k_pp_sample(Levels lv, const int *__restrict__ best, RowBlocks<T, B> R, int d,
                            const double *__restrict__ w, const double *__restrict__ pend,
                            const double *__restrict__ unif, int L, long long *free_from,
                            long long *__restrict__ cand, double *__restrict__ cc) {
  sample_candidates(lv, *best, R, d, w, pend, unif, L, free_from, cand, cc);
}

// Steps 1 and 2 of a step's end (k_pp_tail, k_pps_tail), by the whole
// block: levels t0..T of the L candidates' trees; the candidate of smallest
// potential (the first of equals) becomes step s's center (out_idx[s],
// choose(row) marks it chosen), the pending center of the next pass (pend)
// and the tree the next step samples (*best).  Returns it, in every thread,
// once pend is complete.
template <typename Choose>
__device__ int tail_best(const Levels &lv, int t0, int L, const long long *cand, const double *cc, int d,
                         long long *out_idx, int s, double *pend, int *best, Choose choose) {
  __shared__ int s_best;
  for (int t = t0; t <= lv.T; ++t) {
    const long long li = lv.len[t - 1], lo = lv.len[t];
    for (long long e = threadIdx.x; e < lo * L; e += blockDim.x) {
      const long long b = e / lo, j = e - b * lo;
      lv.p[t][b * lo + j] = tree_node_sum(lv.p[t - 1] + b * li, li, j);
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    const double *tops = lv.p[lv.T];
    int bj = 0;
    double bp = tops[0];
    for (int j = 1; j < L; ++j) {
      const double p = tops[j];
      if (p < bp) {
        bp = p;
        bj = j;
      }
    }
    s_best = bj;
    *best = bj;
    out_idx[s] = cand[bj];
    choose(cand[bj]);
  }
  __syncthreads();
  const int bj = s_best;
  for (int a = threadIdx.x; a < d; a += blockDim.x) pend[a] = cc[(size_t)bj * d + a];
  __syncthreads();  // pend and chosen are complete; cc may be overwritten
  return bj;
}

// The end of step s, in one block (one launch instead of four, for the
// latency-bound k sequential steps):
//  1. levels t0..T of the L candidates' trees (the small ones; the larger
//     levels were built by k_tree_level);
//  2. keeps the candidate of smallest potential (the first of equals) as
//     step s's center, as the pending center of the next pass and as the
//     tree the next step samples (*best);
//  3. unless unif is NULL (the last step), samples step s + 1's candidates.
template <typename T, int B>
__global__ void k_pp_tail(Levels lv, int t0, int L, long long *cand, double *cc, int d, long long *out_idx, int s,
                          double *pend, int *best, RowBlocks<T, B> R, const double *__restrict__ w,
                          const double *__restrict__ unif, long long *free_from) {
  const int bj = tail_best(lv, t0, L, cand, cc, d, out_idx, s, pend, best, [&](long long r) { R.choose(r); });
  if (unif) sample_candidates(lv, bj, R, d, w, pend, unif, L, free_from, cand, cc);
}

// ---- streamed x (init_pp.cu, pp_streamed): the rows are on the host --------
// A step's draws stop at level 1 of the tree (the host then brings the 32
// rows of each drawn node) and end on the device with those rows.

// What a draw leaves for its last level: the level-1 node and the descent's
// target and offset, or (node < 0) the row -1 - node of the degenerate rule.
struct NodeDraw {
  long long node;
  double target, off;
};

// Warp j draws candidate j with unif[j] in tree b of lv (T >= 1) down to
// level 1, as warp_tree_sample does above it (parity.h point 3).
static __device__ void draw_nodes(const Levels &lv, int b, long long n, const double *__restrict__ unif, int L,
                                  const unsigned char *chosen, long long *free_from, NodeDraw *draws) {
  __shared__ double s_a[kMaxCandidates][32];
  __shared__ long long s_free;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const double total = lv.p[lv.T][b];
  if (threadIdx.x == 0) s_free = free_row(total, n, free_from, [&](long long i) { return chosen[i] != 0; });
  __syncthreads();
  if (warp >= L) return;
  if (s_free >= 0) {
    if (lane == 0) draws[warp] = NodeDraw{-1 - s_free, 0.0, 0.0};
    return;
  }
  const double target = __dmul_rn(unif[warp], total);
  double off = 0.0;
  const long long node = warp_descend(lv, b, n, lv.T, 1, 0, target, &off, [](long long) { return 0.0; }, s_a[warp]);
  if (lane == 0) draws[warp] = NodeDraw{node, target, off};
}

// The end of step s on streamed x: k_pp_tail's levels and choice of the
// best candidate, then (unless unif is NULL) the draws of step s + 1 down
// to level 1.
static __global__ void k_pps_tail(Levels lv, int t0, int L, const long long *cand, const double *cc, int d,
                                  long long *out_idx, int s, unsigned char *chosen, double *pend, int *best,
                                  long long n, const double *__restrict__ unif, long long *free_from,
                                  NodeDraw *draws) {
  const int bj = tail_best(lv, t0, L, cand, cc, d, out_idx, s, pend, best, [&](long long r) { chosen[r] = 1; });
  if (unif) draw_nodes(lv, bj, n, unif, L, chosen, free_from, draws);
}

// The draws of step 1 (tree *best, built from the first center).
static __global__ void k_pps_draw(Levels lv, const int *__restrict__ best, long long n,
                                  const double *__restrict__ unif, int L, const unsigned char *chosen,
                                  long long *free_from, NodeDraw *draws) {
  draw_nodes(lv, *best, n, unif, L, chosen, free_from, draws);
}

// The last level of the draws: warp j has rows[j] (32 rows of d values,
// row-major: the rows of node draws[j].node as the device stores them, or
// the degenerate rule's row first), computes their leaves
// min(D2_i, dist(i, pend)) and picks among them (parity.h point 3), writing
// cand[j] and the candidate's row into cc.
static __global__ void k_pps_finish(long long n, int d, const double *__restrict__ d2,
                                    const double *__restrict__ pend, const double *__restrict__ rows,
                                    const NodeDraw *__restrict__ draws, int L, long long *cand, double *cc) {
  __shared__ double s_a[kMaxCandidates][32];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  if (warp >= L) return;
  const NodeDraw dr = draws[warp];
  const double *r = rows + (size_t)warp * 32 * d;
  int c = 0;  // the row's place in r
  long long row;
  if (dr.node < 0) {
    row = -1 - dr.node;
  } else {
    const long long lo = dr.node * GK_SUM_ARITY;
    // leaf i: row i - lo of r (a row-major row is a column-major matrix of one row)
    auto leaf = [&](long long i) { return dmin(d2[i], exact_dist(r + (size_t)(i - lo) * d, 1, d, 0, pend)); };
    double off = dr.off;
    row = warp_descend(Levels{}, 0, n, 1, 0, dr.node, dr.target, &off, leaf, s_a[warp]);
    if (row < lo) row = lo;  // cannot happen: the node's total is > 0
    c = (int)(row - lo);
  }
  if (lane == 0) cand[warp] = row;
  for (int a = lane; a < d; a += 32) cc[(size_t)warp * d + a] = r[(size_t)c * d + a];
}

// Rows idx[0..m) of x into out (m x d, row-major, double).
template <typename T>
__global__ void k_gather_rows(const T *__restrict__ x, long long n, int d, const long long *__restrict__ idx,
                              long long m, double *__restrict__ out) {
  const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= m * d) return;
  const long long j = t / d;
  const int a = (int)(t - j * d);
  out[t] = (double)x[idx[j] + n * (long long)a];
}

// Rows idx[0..m) of x as a column-major m x d matrix of the same type.
template <typename T>
__global__ void k_gather_cols(const T *__restrict__ x, long long n, int d, const long long *__restrict__ idx,
                              long long m, T *__restrict__ out) {
  const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= m * d) return;
  const long long a = t / m, j = t - a * m;
  out[t] = x[idx[j] + n * a];
}

static __global__ void k_fill(double *p, long long m, double v) {
  const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t < m) p[t] = v;
}

}  // namespace init
}  // namespace gk

#endif
