// detail/df_candidates.cuh: the double filter's candidate pass (issue 15).
//
// The points that neither the filter (k_assign_tc_filter) nor k_df_pair
// (where it runs) settles used to get every center's exact distance
// (k_df_exact).  On E of
// bench.R (1e6 x 128, k = 4096: blobs, some holding three or more of the
// starting centers) that exact pass was a third of the double iteration,
// 4096 exact distances a point for the three or four centers of its blob.
// Now, for the first ccap of those points (`rest`, by position e):
//   k_df_pair         (dfilter.cuh) hi = df_upper(w1), an upper bound of
//                     s^2 D_c1 for the filter's lowest center c1, and from it
//                     wex (df_cand_threshold): a float with df_lower(wex) > hi;
//   k_df_pack_rest    the points' float image into packed tiles (tc_tiles.cuh);
//   k_assign_tc_cand  the filter's tensor-core products again, on those tiles:
//                     every center with w_j < wex joins the point's candidates
//                     (at most kDfCand are kept);
//   k_df_cand_exact   the exact distances to the candidates, least (distance,
//                     index); the points with more candidates, or with no
//                     threshold, join `full` for k_df_exact.
//
// Why the result is the exact rule's: df_lower evaluates, with margins for
// its own rounding, a real function L(w) that is nondecreasing in w and
// bounds s^2 D_j from below for a center of value w_j (the bound of
// dfilter.cuh; the second pass computes w_j exactly as the filter does, so
// the bound holds for its values too).  A center with w_j >= wex has
// s^2 D_j >= L(w_j) >= L(wex) >= df_lower(wex) > hi >= s^2 D_c1: it is
// farther than c1, so it is not the exact rule's choice j*.  j* is therefore
// a candidate, and the least (distance, index) over a set that holds j*
// is j*.  NaN centers (empty clusters) have NaN w and are never candidates,
// as the exact rule never takes them; no w is infinite while every center's
// image is in the box (dfilter.cuh), and when one is not, no threshold is set.
#ifndef GPUKMEANS_DETAIL_DF_CANDIDATES_CUH
#define GPUKMEANS_DETAIL_DF_CANDIDATES_CUH

#include "assign_kernels.cuh"
#include "dfilter.cuh"
#include "tc_tiles.cuh"

namespace gk {
namespace {

// The candidate pass's points: rest positions below ccap and the count of
// rest; m = their number this iteration.
__device__ __forceinline__ long long df_cand_points(const DFArgs &a) {
  const long long r = a.cnt[3];
  return r < a.ccap ? r : a.ccap;
}

// The most candidates a point keeps: their exact distances run on kDfCand
// lanes (k_df_cand_exact).
constexpr int kDfCand = 16;
// By shape, the pass runs from k d = this on: on D of bench.R (1e7 x 16,
// k = 256: k d = 4096) the exact pass over every center cost less than the
// candidate pass (4.6 against 4.9 ms an iteration), from 1e6 x 64, k = 1024
// on the candidate pass wins (4.9 -> 3.9; E 28.9 -> 20.3; H100, 2026-11-26).
constexpr double kDfCandMinKD = 16384;

// k_assign_tc_cand's epilogue: per row (rest position e) its threshold wex;
// every value below it appends its center to the row's list.  SplitB: the
// filter's packed centers come split (as the filter without the pair reads
// them) or whole.
template <bool SplitB, bool Wg = false>
struct TcCandEpi : TcEpiBase {
  static constexpr bool kZeroFirst = true, kSplitB = SplitB, kNorms = false, kUnrolledCopies = true, kWgmma = Wg;
  static_assert(!Wg || SplitB, "wgmma: split centers");
  static constexpr int R = tc_rows(Wg);
  const float *thr_g;
  int *count, *cand;
  long long m, cur;  // (cur: the point tile being computed)
  float thr[R];
  // The rows of point tile bt (NaN past m: no candidates).
  __device__ __forceinline__ void begin(long long bt) {
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const long long e = bt * kTcBM + row_of<Wg>(r);
      thr[r] = e < m ? thr_g[e] : quiet_nan<float>();
    }
  }
  __device__ __forceinline__ void tile(const float (&acc)[4][8][4], int c0, const float *norms) {
    each_row_values<Wg>(acc, norms, [&](int r, int grp, const float (&w)[16], float mn) {
      if (mn < thr[r]) {  // (rare: a few centers a row in all)
        const long long e = cur * kTcBM + row_of<Wg>(r);
#pragma unroll
        for (int v = 0; v < 16; ++v)
          if (w[v] < thr[r]) {
            const int p = atomicAdd(&count[e], 1);
            if (p < kDfCand) cand[e * kDfCand + p] = center<Wg>(c0, v, grp);
          }
      }
    });
  }
  __device__ __forceinline__ void finish(long long bt, const int *, const float *) {
    cur = bt + gridDim.x;
    begin(cur);
  }
};

// The tensor-core pass over the packed rest points (rp; m of them, at most
// ccap): their candidate lists (DFArgs cand, ccount).  Wg: through wgmma
// (the filter's centers packed TcPack::split_wg; sm_90a only, as
// k_assign_tc_filter's).
template <bool SplitB, bool Wg = false>
__global__ void __launch_bounds__(kTcThreads, 2)
k_assign_tc_cand(const float *__restrict__ rp, int d, const float *__restrict__ cp, int k, const State *st,
                 int max_iter, DFArgs fa) {
  if constexpr (Wg && !GK_WGMMA_BODY) {
    return;
  } else {
    if (fit_finished(st, max_iter) || fa.cnt[1]) return;
    extern __shared__ __align__(16) unsigned char smem[];
    TcCandEpi<SplitB, Wg> epi;
    epi.place(0, nullptr, nullptr, nullptr);
    epi.thr_g = fa.thr;
    epi.count = fa.ccount;
    epi.cand = fa.cand;
    epi.m = df_cand_points(fa);
    epi.cur = blockIdx.x;
    epi.begin(epi.cur);
    tc_main_loop(rp, cp, d, tc_kp(k) / kTcBN, (epi.m + kTcBM - 1) / kTcBM, TcRows{nullptr, nullptr, epi.m},
                 reinterpret_cast<float *>(smem), epi);
  }
}

// The candidate pass's points (rest positions below m) as packed tiles of
// their float image: gathered from the filter's packed tiles of x (xp; a
// point's 16 values of a chunk lie in 4 runs of 8 bytes there, against 16
// sectors of column-major x).
struct TcRestPackedSource {
  const float *xp;
  int K16;
  const int *rest;
  __device__ float operator()(long long e, int j) const {
    const long long i = rest[e];
    const int r = (int)(i % kTcBM), m16 = r >> 4, g = r & 7, s0 = (r >> 3) & 1;
    const int k16 = j >> 4, kk8 = (j >> 3) & 1, t = j & 3, s1 = (j >> 2) & 1;
    return xp[((size_t)(i / kTcBM) * K16 + k16) * kTcChunk + (size_t)((m16 * 2 + kk8) * 32 + 4 * g + t) * 4 + s0 +
              2 * s1];
  }
};
static __global__ void k_df_pack_rest(const float *__restrict__ xp, int d, const State *st, int max_iter, DFArgs fa) {
  if (fit_finished(st, max_iter) || fa.cnt[1]) return;
  const long long m = df_cand_points(fa);
  const long long groups = (long long)(tc_points_floats(m, d) / 4);
  const TcRestPackedSource src{xp, tc_k16(d), fa.rest};
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < groups;
       e += (long long)gridDim.x * blockDim.x)
    tc_pack_group(src, m, d, fa.rp, e);
}

// Every rest point: kDfCand lanes a point, one candidate a lane, the least
// (exact distance, index) over them (distances below +inf; none: the label
// stays); the points past ccap, without a threshold or with more than
// kDfCand candidates join `full` (count cnt[4]) for k_df_exact.
static __global__ void k_df_cand_exact(const double *__restrict__ x, long long n, int d, const double *__restrict__ cen,
                                       int k, int *__restrict__ labels, State *st, int max_iter, DFArgs fa) {
  if (fit_finished(st, max_iter)) return;
  const long long r = fa.cnt[3];
  const int lane = threadIdx.x & (kDfCand - 1);
  unsigned int ch = 0;
  const long long step = (long long)gridDim.x * blockDim.x / kDfCand;
  // (every lane of a group runs the same iterations: the shuffles below
  // take whole groups)
  const long long groups_end = (r + step - 1) / step * step;
  for (long long e = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / kDfCand; e < groups_end; e += step) {
    const bool have = e < r;
    const long long row = have ? fa.rest[e] : 0;
    int cnt = -1;  // -1: to the full pass
    if (have && e < fa.ccap && !fa.cnt[1] && fa.thr[e] == fa.thr[e]) {
      const int c = fa.ccount[e];
      if (c >= 1 && c <= kDfCand) cnt = c;
    }
    double bd = pos_inf<double>();
    int bi = 0x7fffffff;
    if (cnt > 0 && lane < cnt) {
      const int c = fa.cand[e * kDfCand + lane];
      df_take(exact_dist(x, n, d, row, cen, k, c), c, bd, bi);
    }
#pragma unroll
    for (int off = kDfCand / 2; off; off >>= 1)
      df_take(__shfl_xor_sync(0xffffffffu, bd, off), __shfl_xor_sync(0xffffffffu, bi, off), bd, bi);
    if (have && lane == 0) {
      if (cnt < 0) {
        fa.list[atomicAdd(&fa.cnt[4], 1u)] = (int)row;
      } else {
        const int old = labels[row];
        label_commit(&labels[row], old, bi == 0x7fffffff ? label_kept(old) : bi, ch);
      }
    }
  }
  if (ch && st) atomicAdd(&st->changed, (u64)ch);
}

}  // namespace
}  // namespace gk

#endif
