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
#include "update_tail.cuh"

#ifndef GK_ACC_POINTS
#define GK_ACC_POINTS 8  // (k_accumulate's U; a macro for tools/cuda-dev/ab_run.sh's V3_FLAGS)
#endif

namespace gk {
namespace {

// The points whose label differs from prev (the labels the carried sums
// hold, Plan::delta) appended to list (st->moves of them, in no set order).
// A block takes kMovesStep points a step, 8 a thread (two 16-byte loads of
// each array where both are aligned), counts its movers by a scan and
// reserves their places with one atomicAdd: an atomic a warp on the one
// counter queued at the L2 (the harness's D, 1e7 points with movers in
// most warps: 250 us a list at base clocks, for 80 MB read).
constexpr int kMovesPer = 8, kMovesStep = 256 * kMovesPer;
__global__ void __launch_bounds__(256)
k_moves_list(const int *__restrict__ labels, const int *__restrict__ prev, long long n, int *__restrict__ list,
             State *st, int max_iter) {
  if (fit_finished(st, max_iter)) return;
  __shared__ unsigned int wbase[8];
  __shared__ u64 bbase;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const bool vec = (((uintptr_t)labels | (uintptr_t)prev) & 15) == 0;
  for (long long b0 = (long long)blockIdx.x * kMovesStep; b0 < n; b0 += (long long)gridDim.x * kMovesStep) {
    const long long i0 = b0 + (long long)tid * kMovesPer;
    unsigned int mask = 0;  // bit u: point i0 + u moved
    if (vec && i0 + kMovesPer <= n) {
      const int4 *l4 = reinterpret_cast<const int4 *>(labels + i0), *p4 = reinterpret_cast<const int4 *>(prev + i0);
      const int4 a = l4[0], b = l4[1], pa = p4[0], pb = p4[1];
      mask = (a.x != pa.x) | (a.y != pa.y) << 1 | (a.z != pa.z) << 2 | (a.w != pa.w) << 3 | (b.x != pb.x) << 4 |
             (b.y != pb.y) << 5 | (b.z != pb.z) << 6 | (b.w != pb.w) << 7;
    } else {
#pragma unroll
      for (int u = 0; u < kMovesPer; ++u)
        if (i0 + u < n && labels[i0 + u] != prev[i0 + u]) mask |= 1u << u;
    }
    const unsigned int c = __popc(mask);
    const unsigned int incl = warp_inclusive_sum(c, lane);
    if (lane == 31) wbase[warp] = incl;
    __syncthreads();
    if (tid == 0) {
      unsigned int tot = 0;
#pragma unroll
      for (int w = 0; w < 8; ++w) {
        const unsigned int t = wbase[w];
        wbase[w] = tot;
        tot += t;
      }
      bbase = tot ? atomicAdd(&st->moves, (u64)tot) : 0;
    }
    __syncthreads();
    u64 at = bbase + wbase[warp] + (incl - c);
    for (; mask; mask &= mask - 1) list[at++] = (int)(i0 + __ffs(mask) - 1);
    __syncthreads();  // (wbase and bbase are rewritten by the next step)
  }
}

// Between the list and the sums: where more than esz / 32 of the points
// moved (1/8 in single precision, 1/4 in double; every point in a fit's
// first iteration), a fresh pass costs less: it reads x's columns
// coalesced, while a mover's value costs a 32-byte sector of its column
// (and the list and prev cost 8 bytes a point).  Then st->fresh, and the
// sums and counts zeroed for it.  Counts the carried iterations and the
// points they added.
__global__ void __launch_bounds__(256)
k_moves_plan(State *st, int max_iter, long long n, int esz, u64 *__restrict__ acc, unsigned int *__restrict__ counts,
             size_t kd, int k) {
  if (fit_finished(st, max_iter)) return;
  const u64 moves = st->moves;
  const bool fresh = moves * 32 > (u64)n * (u64)esz;
  if (fresh) {
    const size_t step = (size_t)gridDim.x * blockDim.x;
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < 2 * kd; e += step) acc[e] = 0;
    for (size_t c = (size_t)blockIdx.x * blockDim.x + threadIdx.x; c < (size_t)k; c += step) counts[c] = 0;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    st->fresh = fresh ? 1 : 0;
    st->sums_iters += 1;
    st->sums_added += fresh ? (u64)n : moves;
  }
}

// After the sums: prev brought up to date for the listed points (or, after
// a fresh pass, all of them).
__global__ void __launch_bounds__(256)
k_moves_commit(const int *__restrict__ labels, int *__restrict__ prev, const int *__restrict__ list, long long n,
               State *st, int max_iter) {
  if (fit_finished(st, max_iter)) return;
  const bool fresh = st->fresh != 0;
  const long long m = fresh ? n : (long long)st->moves;
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < m; e += (long long)gridDim.x * blockDim.x) {
    const long long i = fresh ? e : list[e];
    prev[i] = labels[i];
  }
}

// Sums of x per (cluster, coordinate) for coordinates [j0, j0 + jb) of a chunk
// of points; blockIdx.y picks the coordinate group, blockIdx.x the chunk.
// LIST (Plan::delta; list and prev unused without): the sums are carried, and only the st->moves
// listed points (k_moves_list) are added, to their new cluster, and taken
// from their old one prev[i] (-1: none); or every point, into the zeroed
// sums, where k_moves_plan said st->fresh.
template <typename T, bool LIST>
__global__ void __launch_bounds__(256)
k_accumulate(const T *__restrict__ x, long long n, int d, const int *__restrict__ labels, int k,
             int jb, int use_shared, State *st, int max_iter, u64 *__restrict__ acc,
             unsigned int *__restrict__ counts, const int *__restrict__ scale,
             const int *__restrict__ list, const int *__restrict__ prev) {
  if (fit_finished(st, max_iter)) return;
  extern __shared__ __align__(16) unsigned char smem[];
  const int tid = threadIdx.x;
  const int j0 = blockIdx.y * jb;
  const int jn = min(jb, d - j0);
  const bool do_count = blockIdx.y == 0;
  unsigned int *slimb = reinterpret_cast<unsigned int *>(smem);
  unsigned int *scnt = slimb + 4 * (size_t)k * jb;
  if (use_shared) {
    for (size_t e = tid; e < 4 * (size_t)k * jn; e += blockDim.x) slimb[e] = 0;
    for (int c = tid; c < k; c += blockDim.x) scnt[c] = 0;
    __syncthreads();
  }
  const bool listed = LIST && !st->fresh;
  const long long m = listed ? (long long)st->moves : n;  // entries: points, or listed points
  long long per = (m + gridDim.x - 1) / gridDim.x;
  per = (per + 255) / 256 * 256;
  const long long beg = (long long)blockIdx.x * per;
  const long long end = min(m, beg + per);
  // U points a thread a step, their loads issued before their atomics: with
  // one point a step, E's sums (1e6 x 128, k = 4096: two blocks an SM for
  // the shared counters) waited on each load in turn (H100: 2.18 ms; 4
  // points 1.02, 8 points (and the grid rounded down) 0.74).
  constexpr int U = GK_ACC_POINTS;
  const long long step = (long long)U * blockDim.x;
  int since = 0;
  for (long long b0 = beg; b0 < end; b0 += step) {  // uniform trip count
    long long pt[U];
    int c[U], o[U];
    bool in[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const long long e = b0 + tid + (long long)u * blockDim.x;
      in[u] = e < end;
      pt[u] = listed ? (in[u] ? (long long)list[e] : 0) : e;
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      c[u] = in[u] ? labels[pt[u]] : 0;
      o[u] = listed && in[u] ? prev[pt[u]] : -1;
    }
    // whole warps of one cluster (rows in cluster order) add as one
    // (warp_same); the trip counts are the block's, so the whole warp is here
    bool wc[U], wo[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      wc[u] = warp_same(in[u], c[u]);
      wo[u] = LIST && warp_same(in[u] && o[u] >= 0, o[u]);
    }
    for (int jj = 0; jj < jn; ++jj) {
      const int j = j0 + jj;
      T v[U];
#pragma unroll
      for (int u = 0; u < U; ++u) v[u] = in[u] ? x[pt[u] + n * j] : T(0);
      const double p2 = pow2(scale[j]);
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (use_shared) {
          limb_apply_any<false>(slimb, (size_t)c[u] + (size_t)k * jj, (size_t)k * jn, (double)v[u], p2, in[u], wc[u]);
          if (LIST)
            limb_apply_any<true>(slimb, (size_t)(o[u] < 0 ? 0 : o[u]) + (size_t)k * jj, (size_t)k * jn, (double)v[u],
                                 p2, in[u] && o[u] >= 0, wo[u]);
        } else if (in[u]) {  // the same rounding as the limbs: any path gives the same sums
          const long long q = round_fixed((double)v[u], p2);
          atomic_add_fixed(&acc[2 * ((size_t)c[u] + (size_t)k * j)], q);
          if (LIST && o[u] >= 0) atomic_add_fixed(&acc[2 * ((size_t)o[u] + (size_t)k * j)], -q);
        }
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (use_shared) {
        count_any<false>(&scnt[c[u]], in[u], wc[u]);
        if (LIST) count_any<true>(&scnt[o[u] < 0 ? 0 : o[u]], in[u] && o[u] >= 0, wo[u]);
      } else if (in[u] && do_count) {
        atomicAdd(&counts[c[u]], 1u);
        if (LIST && o[u] >= 0) atomicSub(&counts[o[u]], 1u);
      }
    }
    if (use_shared && ++since == kLimbFlush / (U * 256)) {  // (blockDim.x = 256)
      since = 0;
      limb_flush(slimb, scnt, k, jn, j0, acc, do_count ? counts : nullptr);
    }
  }
  if (use_shared) limb_flush(slimb, scnt, k, jn, j0, acc, do_count ? counts : nullptr);
}

// New centers = sums / counts (0/0 = NaN for an empty cluster, as in R),
// unless the assignment changed nothing: then the fit has converged and the
// centers stay.  Zeroes the accumulators for the next iteration, unless
// keep (Plan::delta: the next one adds the moves to them).  The last
// block to finish (ticket) advances the state; every block reads the state
// before taking its ticket, so nobody sees it half-updated.
__global__ void __launch_bounds__(256)
k_finalize(State *st, int max_iter, u64 *__restrict__ acc, unsigned int *__restrict__ counts,
           double *__restrict__ cen_d, float *__restrict__ cen_f, int k, int d,
           const int *__restrict__ scale, bool keep) {
  if (fit_finished(st, max_iter)) return;
  const int it = st->iter_done;
  const u64 changed = st->changed;
  update_elements(acc, counts, cen_d, cen_f, k, d, scale, keep, changed,
                  (size_t)blockIdx.x * blockDim.x + threadIdx.x, (size_t)gridDim.x * blockDim.x);
  if (last_block_to_finish(st)) {
    if (!keep)
      for (int c = threadIdx.x; c < k; c += blockDim.x) counts[c] = 0;
    if (threadIdx.x == 0) advance_state(st, it, changed);
  }
}

// Within-cluster sums of squares w.r.t. cen (double, R's rounding rules) and
// cluster sizes, in two passes: PASS 0 finds each cluster's largest per-point
// term (upper 32 bits, integer max: deterministic), which sets the cluster's
// fixed-point scale (relative accuracy for small and large clusters alike);
// PASS 1 sums with that scale.  With terms (n doubles), PASS 0 keeps each
// point's term there and PASS 1 reads 8 bytes a point instead of its d
// coordinates (D: 64 bytes in single precision, 128 in double).  (TERMS: a
// template switch; a run-time test of terms slowed E's pass without them,
// 1.10 -> 1.28 ms.)  A point's term is exact_dist to its center
// (common.cuh).  A thread takes P points a step (wss_points), their terms'
// chains of d dependent operations interleaved coordinate by coordinate
// (each point's operations in exact_dist's order: the same bits).  back
// (PASS 1, rows ordered in space): each label also put back in row order,
// back[perm[i]], which spares a pass of its own.
template <typename T, int PASS, bool TERMS, int P>
__global__ void __launch_bounds__(256)
k_withinss(const T *__restrict__ x, long long n, int d, const int *__restrict__ labels,
           const double *__restrict__ cen, int k, int use_shared, unsigned int *__restrict__ gmax,
           u64 *__restrict__ wacc, unsigned int *__restrict__ wcnt, double *__restrict__ terms,
           const int *__restrict__ perm, int *__restrict__ back) {
  extern __shared__ __align__(16) unsigned char smem[];
  unsigned int *slimb = reinterpret_cast<unsigned int *>(smem);  // PASS 1: 4k limbs
  unsigned int *scnt = slimb + 4 * (size_t)k;                      // PASS 1: k counts
  double *spw = reinterpret_cast<double *>(scnt + k + (k & 1));    // PASS 1: k scales
  unsigned int *smax = reinterpret_cast<unsigned int *>(smem);   // PASS 0: k maxima
  const int tid = threadIdx.x;
  // (launched as a programmatic dependent: its dependent may start its
  // blocks at once, which wait for this grid's end in their turn)
  grid_dependents_launch();
  if (use_shared) {
    if (PASS == 0) {
      for (int c = tid; c < k; c += blockDim.x) smax[c] = 0;
    } else {
      for (int e = tid; e < 4 * k; e += blockDim.x) slimb[e] = 0;
      for (int c = tid; c < k; c += blockDim.x) scnt[c] = 0;
    }
  }
  grid_dependency_wait();  // (the labels, centers and maxima of the kernels before)
  if (use_shared) {
    if (PASS == 1)
      for (int c = tid; c < k; c += blockDim.x) spw[c] = pow2(wss_scale(gmax[c]));
    __syncthreads();
  }
  int since = 0;
  const long long stride = (long long)gridDim.x * blockDim.x * P;
  for (long long b0 = (long long)blockIdx.x * blockDim.x * P; b0 < n; b0 += stride) {
    long long i[P];
    int c[P];
    double w[P];
#pragma unroll
    for (int r = 0; r < P; ++r) {
      i[r] = b0 + (long long)r * blockDim.x + tid;
      c[r] = i[r] < n ? labels[i[r]] : 0;
      w[r] = 0.0;
      if (PASS == 1 && back && i[r] < n) back[perm[i[r]]] = c[r];  // (ordered rows: the label in row order)
    }
    if (PASS == 1 && TERMS) {
#pragma unroll
      for (int r = 0; r < P; ++r)
        if (i[r] < n) w[r] = terms[i[r]];
    } else {  // exact_dist of each (0 + t^2 is t^2 exactly)
      for (int j = 0; j < d; ++j) {
#pragma unroll
        for (int r = 0; r < P; ++r)
          if (i[r] < n) {
            const double t = __dsub_rn((double)x[i[r] + n * j], cen[c[r] + (size_t)k * j]);
            w[r] = __dadd_rn(w[r], __dmul_rn(t, t));
          }
      }
    }
#pragma unroll
    for (int r = 0; r < P; ++r) {
      const bool on = i[r] < n;
      const bool whole = warp_same(on, c[r]);  // (rows in cluster order: one atomic a warp)
      const u64 wb = (u64)__double_as_longlong(w[r]);
      if (PASS == 0 && TERMS && on) terms[i[r]] = w[r];
      if (PASS == 0) {
        max_any(use_shared ? &smax[c[r]] : &gmax[c[r]], (unsigned int)(wb >> 32), on, whole);
      } else if (use_shared) {
        limb_apply_any<false>(slimb, c[r], k, w[r], spw[c[r]], on, whole);
        count_any<false>(&scnt[c[r]], on, whole);
      } else if (on) {  // the limbs' rounding
        atomic_add_fixed(&wacc[2 * c[r]], round_fixed(w[r], pow2(wss_scale(gmax[c[r]]))));
        atomicAdd(&wcnt[c[r]], 1u);
      }
    }
    if (PASS == 1 && use_shared && ++since == kLimbFlush / (256 * P)) {
      since = 0;
      limb_flush(slimb, scnt, k, 1, 0, wacc, wcnt);
    }
  }
  if (use_shared) {
    if (PASS == 0) {
      __syncthreads();
      for (int c = tid; c < k; c += blockDim.x)
        if (smax[c]) atomicMax(&gmax[c], smax[c]);
    } else {
      limb_flush(slimb, scnt, k, 1, 0, wacc, wcnt);
    }
  }
}

__global__ void k_plus_one(int *__restrict__ labels, long long n) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    labels[i] += 1;
}

__global__ void k_to_float(const double *__restrict__ src, float *__restrict__ dst, long long m) {
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < m;
       e += (long long)gridDim.x * blockDim.x)
    dst[e] = (float)src[e];
}

}  // namespace
}  // namespace gk

#endif
