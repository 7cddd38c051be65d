// detail/assign_kernels.cuh: the assignment kernels (nearest center).
//
// Distance rules (stats::kmeans, Lloyd):
//   double: dd = sum_j (x_j - c_j)^2 in coordinate order, each step rounded
//           separately (__dsub_rn/__dmul_rn/__dadd_rn: no FMA contraction), so
//           dd is bitwise what R's C code computes;
//   float:  |c|^2 - 2 x.c with FMAs (x is stored shifted near its mean, see
//           device_data.cu), the fast path;
//   argmin with strict '<' scanning centers in index order (ties: lowest
//   index); NaN distances (empty clusters' NaN centers) are never chosen.
// Padding coordinates with x = c = 0 leaves dd bitwise unchanged (dd + 0 = dd).
//
// Included by assign.cu only (kernels are launched from the TU defining them).
#ifndef GPUKMEANS_DETAIL_ASSIGN_KERNELS_CUH
#define GPUKMEANS_DETAIL_ASSIGN_KERNELS_CUH

#include <type_traits>

#include "common.cuh"
#include "dfilter.cuh"
#include "small_dfilter.cuh"
#include "tc_tiles.cuh"
#include "tf32.cuh"

namespace gk {
namespace {

// Squared distance term: exact double or float dot product.
template <typename T> struct Dist;
template <> struct Dist<double> {
  static __device__ __forceinline__ double first(double x, double c) {
    double t = __dsub_rn(x, c);
    return __dmul_rn(t, t);  // 0.0 + t*t == t*t exactly
  }
  static __device__ __forceinline__ double step(double acc, double x, double c) {
    double t = __dsub_rn(x, c);
    return __dadd_rn(acc, __dmul_rn(t, t));
  }
  static __device__ __forceinline__ double finish(double acc, double) { return acc; }
};
// float difference form, (x - c)^2 accumulated with FMA
template <typename T> struct DistDiff : Dist<T> {};
template <> struct DistDiff<float> {
  static __device__ __forceinline__ float first(float x, float c) { float t = x - c; return t * t; }
  static __device__ __forceinline__ float step(float acc, float x, float c) {
    float t = x - c;
    return fmaf(t, t, acc);
  }
  static __device__ __forceinline__ float finish(float acc, float) { return acc; }
};
template <> struct Dist<float> {
  static __device__ __forceinline__ float first(float x, float c) { return x * c; }
  static __device__ __forceinline__ float step(float acc, float x, float c) {
    return fmaf(x, c, acc);
  }
  // |c|^2 - 2 x.c  (|x|^2 is the same for every center)
  static __device__ __forceinline__ float finish(float dot, float cc) {
    return fmaf(-2.0f, dot, cc);
  }
};

template <typename T, int N>
__device__ __forceinline__ void load_row(T (&r)[N], const T *p);

// TN centers of thread tx from one shared row of BN: two halves of TN/2,
// at tx*TN/2 and BN/2 + tx*TN/2, so 16-byte loads of a warp do not conflict.
template <typename T, int TN, int BN>
__device__ __forceinline__ void load_cols_impl(T (&r)[TN], const T *row, int tx) {
  T a[TN / 2], b[TN / 2];
  load_row(a, row + tx * (TN / 2));
  load_row(b, row + BN / 2 + tx * (TN / 2));
#pragma unroll
  for (int q = 0; q < TN / 2; ++q) { r[q] = a[q]; r[TN / 2 + q] = b[q]; }
}

template <typename T, int N>
__device__ __forceinline__ void load_row(T (&r)[N], const T *p) {
  if (sizeof(T) == 4 && N % 4 == 0) {
#pragma unroll
    for (int q = 0; q < N; q += 4) {
      float4 v = *reinterpret_cast<const float4 *>(p + q);
      r[q] = v.x; r[q + 1] = v.y; r[q + 2] = v.z; r[q + 3] = v.w;
    }
  } else if (sizeof(T) == 8 && N % 2 == 0) {
#pragma unroll
    for (int q = 0; q < N; q += 2) {
      double2 v = *reinterpret_cast<const double2 *>(p + q);
      r[q] = v.x; r[q + 1] = v.y;
    }
  } else {
#pragma unroll
    for (int q = 0; q < N; ++q) r[q] = p[q];
  }
}

// Merging two candidates of the argmin: the lower distance, then the lower
// index (the sequential scan's first of equal minima; NaN never taken).
__device__ __forceinline__ void take_min(float &bd, int &bi, float od, int oi) {
  if (od < bd || (od == bd && oi < bi)) { bd = od; bi = oi; }
}
// The same for (lowest w, its center, second lowest w) of the certified filter.
__device__ __forceinline__ void take_min2(float &bw, int &bi, float &bs, float ow, int oi, float os) {
  if (ow < bw || (ow == bw && oi < bi)) {
    bs = fminf(bw, os);
    bw = ow;
    bi = oi;
  } else {
    bs = fminf(bs, ow);
  }
}
// The double filter's minimum for its exact pass (dfilter.cuh, k_df_pair):
// the lowest w1 (center i1), the second lowest w2 (center i2) and w3, at
// most every other value.  (w, i) in: the lower w, then the lower index,
// for w1 (the order of take_min2); NaN never taken.
__device__ __forceinline__ void take_min3(float &w1, int &i1, float &w2, int &i2, float &w3, float w, int i) {
  if (w < w1 || (w == w1 && i < i1)) {
    w3 = fminf(w3, w2);
    w2 = w1;
    i2 = i1;
    w1 = w;
    i1 = i;
  } else if (w < w2) {
    w3 = fminf(w3, w2);
    w2 = w;
    i2 = i;
  } else {
    w3 = fminf(w3, w);
  }
}
// Another disjoint set's (ow1, oi1, ow2, oi2, ow3) into (w1 ... w3).
__device__ __forceinline__ void merge_min3(float &w1, int &i1, float &w2, int &i2, float &w3, float ow1, int oi1,
                                           float ow2, int oi2, float ow3) {
  w3 = fminf(w3, ow3);
  take_min3(w1, i1, w2, i2, w3, ow1, oi1);
  take_min3(w1, i1, w2, i2, w3, ow2, oi2);
}
// Over the 4 lanes of a quad (they hold the same points, other centers).
__device__ __forceinline__ void quad_min(float &bd, int &bi) {
#pragma unroll
  for (int off = 1; off <= 2; off <<= 1)
    take_min(bd, bi, __shfl_xor_sync(0xffffffffu, bd, off), __shfl_xor_sync(0xffffffffu, bi, off));
}
__device__ __forceinline__ void quad_min3(float &w1, int &i1, float &w2, int &i2, float &w3) {
#pragma unroll
  for (int off = 1; off <= 2; off <<= 1) {
    const float ow1 = __shfl_xor_sync(0xffffffffu, w1, off), ow2 = __shfl_xor_sync(0xffffffffu, w2, off);
    const float ow3 = __shfl_xor_sync(0xffffffffu, w3, off);
    const int oi1 = __shfl_xor_sync(0xffffffffu, i1, off), oi2 = __shfl_xor_sync(0xffffffffu, i2, off);
    merge_min3(w1, i1, w2, i2, w3, ow1, oi1, ow2, oi2, ow3);
  }
}
__device__ __forceinline__ void quad_min2(float &bw, int &bi, float &bs) {
#pragma unroll
  for (int off = 1; off <= 2; off <<= 1) {
    const float ow = __shfl_xor_sync(0xffffffffu, bw, off), os = __shfl_xor_sync(0xffffffffu, bs, off);
    const int oi = __shfl_xor_sync(0xffffffffu, bi, off);
    take_min2(bw, bi, bs, ow, oi, os);
  }
}

// DOT (float only): |c|^2 - 2 x.c (one FMA per coordinate); otherwise the
// difference form (x - c)^2 (exact rules in double; sub + FMA in float, more
// accurate when centers are close together relative to their norm).
// Block-wide sum of one counter, then one global atomic per block.
__device__ __forceinline__ void add_changed(unsigned int mine, unsigned int *sh, State *st) {
  unsigned int w = __popc(__ballot_sync(0xffffffffu, mine != 0));
  if ((threadIdx.x & 31) == 0 && w) atomicAdd(sh, w);
}

// ---------------------------------------------------------------------------
// Small d (d <= DM <= 8): PPT points per thread with their coordinates in
// registers; all k centers in shared memory, SD values per center:
//   float:  [-2 c_0 .. -2 c_{DM-1}, |c|^2, 0...]: dd = |c|^2 + sum_j x_j (-2 c_j),
//           DM FMAs per point and center;
//   double: [c_0 .. c_{DM-1}]: the exact rules.
// Small<T, DM>::load's default: nothing more done with the values it reads.
struct NoAlso {
  template <typename V>
  __device__ __forceinline__ void operator()(int, int, V) const {}
};
template <typename T, int DM> struct Small;
template <int DM> struct Small<float, DM> {
  // G: centers per group.  The argmin takes each group's minimum with fminf
  // (one instruction per pair instead of compare + two selects) and keeps
  // the best value and the first group reaching it (strict '<'); at the end
  // the first center of that group with that value: the same result as the
  // sequential scan.  Centers are padded to a multiple of G with NaN (never
  // chosen; a group of NaN only leaves m at +inf).
  enum { SD = DM == 1 ? 2 : ((DM + 4) / 4) * 4, PPT = 4, G = 8 };
  static __host__ __device__ constexpr int padded(int k) { return (k + G - 1) / G * G; }
  // Row c in shared memory: each group of G rows is followed by 4 floats,
  // so that the rows a warp's lanes rescan at the end (row g of each
  // lane's own group) fall in different banks.  Without the padding a group
  // is a multiple of 128 bytes and those rows share 4 banks: a 6.6-way
  // conflict on average on B (ncu, H100, 2026-11-26).
  static __host__ __device__ constexpr size_t row_at(int c) { return (size_t)c * SD + (size_t)(c / G) * 4; }
  static __host__ __device__ constexpr size_t values(int k) { return row_at(padded(k)); }
  // (also(c, j, v) for each center's value as read, 0 where j >= d: the
  // warp boxes' float images from the same loads)
  template <typename Also = NoAlso>
  static __device__ __forceinline__ void load(float *sc, const float *cen, int k, int d, bool cg, Also also = {}) {
    const int kp = padded(k);
    for (int c = threadIdx.x; c < kp; c += blockDim.x) {
      float cc = 0;
      float *p = sc + row_at(c);
#pragma unroll
      for (int j = 0; j < DM; ++j) {
        float v = 0;
        if (c >= k) v = quiet_nan<float>();
        else if (j < d) v = cg ? __ldcg(&cen[c + (size_t)k * j]) : cen[c + (size_t)k * j];
        if (c < k) also(c, j, v);
        cc = fmaf(v, v, cc);
        p[j] = -2.0f * v;
      }
      p[DM] = cc;
#pragma unroll
      for (int j = DM + 1; j < SD; ++j) p[j] = 0;
    }
  }
  template <int P>
  static __device__ __forceinline__ void nearest(const float (&xr)[P][DM], const float *sc, int k,
                                                 int (&bi)[P]) {
    float best[P];
    int bg[P];  // the first group holding the best value
#pragma unroll
    for (int r = 0; r < P; ++r) { best[r] = pos_inf<float>(); bg[r] = -1; }
    const int kp = padded(k);
    for (int c0 = 0; c0 < kp; c0 += G) {
      float cv[G][SD];
#pragma unroll
      for (int g = 0; g < G; ++g) load_row(cv[g], sc + row_at(c0 + g));
#pragma unroll
      for (int r = 0; r < P; ++r) {
        float m = pos_inf<float>();
#pragma unroll
        for (int g = 0; g < G; ++g) m = fminf(m, dist(xr[r], cv[g]));
        // (no branch: a rescan here would run for the whole warp whenever one
        // of its 32 points improves, most groups)
        const bool better = m < best[r];
        best[r] = better ? m : best[r];
        bg[r] = better ? c0 : bg[r];
      }
    }
    // the first center of the best group with the best value: the
    // sequential scan's choice (the same FMAs give the same values)
#pragma unroll
    for (int r = 0; r < P; ++r) {
      bi[r] = -1;
      if (bg[r] >= 0) {
        int b = bg[r] + G - 1;
#pragma unroll
        for (int g = G - 2; g >= 0; --g) {
          float cv[SD];
          load_row(cv, sc + row_at(bg[r] + g));
          if (dist(xr[r], cv) == best[r]) b = bg[r] + g;
        }
        bi[r] = b;
      }
    }
  }
  // |c|^2 - 2 x.c from a center's shared values
  static __device__ __forceinline__ float dist(const float (&x)[DM], const float (&cv)[SD]) {
    float t = cv[DM];
#pragma unroll
    for (int j = 0; j < DM; ++j) t = fmaf(x[j], cv[j], t);
    return t;
  }
};
template <int DM> struct Small<double, DM> {
  enum { SD = DM, PPT = 2 };
  static __host__ __device__ constexpr int padded(int k) { return k; }
  static __host__ __device__ constexpr size_t row_at(int c) { return (size_t)c * SD; }
  static __host__ __device__ constexpr size_t values(int k) { return (size_t)k * SD; }  // (no groups, no padding)
  template <typename Also = NoAlso>
  static __device__ __forceinline__ void load(double *sc, const double *cen, int k, int d, bool cg, Also also = {}) {
    for (int e = threadIdx.x; e < k * DM; e += blockDim.x) {
      int c = e / DM, j = e - c * DM;
      double v = 0;
      if (j < d) v = cg ? __ldcg(&cen[c + (size_t)k * j]) : cen[c + (size_t)k * j];
      also(c, j, v);
      sc[e] = v;
    }
  }
  template <int P>
  static __device__ __forceinline__ void nearest(const double (&xr)[P][DM], const double *sc, int k,
                                                 int (&bi)[P]) {
    double best[P];
#pragma unroll
    for (int r = 0; r < P; ++r) { best[r] = pos_inf<double>(); bi[r] = -1; }
#pragma unroll 2
    for (int c = 0; c < k; ++c) {
      double cv[DM];
      load_row(cv, sc + row_at(c));
#pragma unroll
      for (int r = 0; r < P; ++r) {
        const double dd = dist(xr[r], cv);
        if (dd < best[r]) { best[r] = dd; bi[r] = c; }
      }
    }
  }
  // the exact rule from a center's shared row
  static __device__ __forceinline__ double dist(const double (&x)[DM], const double (&cv)[SD]) {
    double dd = Dist<double>::first(x[0], cv[0]);
#pragma unroll
    for (int j = 1; j < DM; ++j) dd = Dist<double>::step(dd, x[j], cv[j]);
    return dd;
  }
};

// One pass of the small-d assignment over this block's points (grid-stride,
// P points per thread), with optional per-block sums; flushes the sums into
// acc/counts at the end (and every kLimbFlush points).  Returns the block's
// changed count in *sh_changed (shared, zeroed by the caller).  near(xr,
// valid, bi[, old]): the nearest centers of P points (bit r of valid: point
// r, the row below, exists), -1 where none is finite; old, where near takes
// it: the points' labels as they are (-1 where no point).  CARRY (with UPDATE): the sums carried from the last
// iteration (acc and counts hold the sums of the labels as they were, -1:
// none): a point whose label changed leaves its old cluster's sums and joins
// its new one's, and a warp where none changed adds nothing.  Exact
// integers, so the same bits as sums made afresh; on rows ordered in space
// (wbox_kernels.cuh) the points that move lie in few warps.
// FIRST: the fit's first iteration, whose labels are all unset (-1, not
// read); with perm (and xout), x is the rows as given, read through the
// permutation, and each row is written to xout in its ordered place as it is
// read: the ordered copy made on the way (ordered.cu) instead of by a
// gather of its own.
// Lanes of a warp that moved to one cluster (or left one) from which their
// sums go in as one warp sum (group_same, limb_apply_group) rather than
// lane by lane.
#ifndef GK_GROUP_MOVES
#define GK_GROUP_MOVES 3
#endif
constexpr int kGroupMoves = GK_GROUP_MOVES;

template <typename T, int DM, bool UPDATE, int P, bool CARRY = false, bool WARP_ROWS = false, bool FIRST = false,
          typename Near>
__device__ __forceinline__ void small_pass(const T *__restrict__ x, long long n, int d, int k,
                                           int *__restrict__ labels, unsigned int *slimb,
                                           unsigned int *scnt, const double (&pw)[DM], u64 *acc,
                                           unsigned int *counts, unsigned int *sh_changed, Near near,
                                           const int *__restrict__ perm = nullptr, T *__restrict__ xout = nullptr) {
  const int tid = threadIdx.x;
  const long long stride = (long long)gridDim.x * blockDim.x * P;
  // Point r of this thread in a round from base: r blockDim.x + tid; with
  // WARP_ROWS, 32 P consecutive rows a warp (r 32 + lane after the warp's
  // start), so that rows ordered in space give each warp a box of its own
  // rows only (wbox_kernels.cuh), not a quarter of the block's (B's 10
  // iterations' assignments 221 -> 215 us single, 265 -> 253 double, H200).
  const long long first = WARP_ROWS ? (long long)(tid & ~31) * P + (tid & 31) : tid;
  const int step = WARP_ROWS ? 32 : blockDim.x;
  int since = 0;
  for (long long base = (long long)blockIdx.x * blockDim.x * P; base < n; base += stride) {
    T xr[P][DM];
    unsigned int valid = 0;
#pragma unroll
    for (int r = 0; r < P; ++r) {
      const long long i = base + (long long)r * step + first;
      if (i < n) valid |= 1u << r;
      const long long src = FIRST && perm ? (i < n ? (long long)perm[i] : 0) : i;
#pragma unroll
      for (int j = 0; j < DM; ++j) xr[r][j] = (i < n && j < d) ? x[src + n * j] : T(0);
    }
    if (FIRST && perm) {
#pragma unroll
      for (int r = 0; r < P; ++r) {
        const long long i = base + (long long)r * step + first;
#pragma unroll
        for (int j = 0; j < DM; ++j)
          if (i < n && j < d) xout[i + n * j] = xr[r][j];
      }
    }
    int bi[P];
    // A near that takes the points' labels as they are (the warp boxes'
    // bound) gets them read here, once, beside x.
    constexpr bool kOldFirst =
        std::is_invocable_v<Near &, const T (&)[P][DM], unsigned int, int (&)[P], const int (&)[P]>;
    int olds[P];
    if constexpr (kOldFirst) {
#pragma unroll
      for (int r = 0; r < P; ++r) {
        const long long i = base + (long long)r * step + first;
        olds[r] = i < n && !FIRST ? labels[i] : -1;
      }
      near(xr, valid, bi, olds);
    } else {
      near(xr, valid, bi);
    }
    unsigned int ch = 0;
#pragma unroll
    for (int r = 0; r < P; ++r) {
      const long long i = base + (long long)r * step + first;
      int b = -1, old = -1;
      if (i < n) {
        old = kOldFirst ? olds[r] : FIRST ? -1 : labels[i];
        b = bi[r];
        if (b < 0) b = label_kept(old);  // no finite distance (overflow)
        label_commit(&labels[i], old, b, ch);
      }
      if (UPDATE && CARRY) {  // (b >= 0 wherever i < n)
        const bool moved = i < n && b != old;
        const unsigned int mv = __ballot_sync(0xffffffffu, moved);
        if (mv) {
          const bool left = moved && old >= 0;
          const unsigned int lv = __ballot_sync(0xffffffffu, left);
          // (kGroupMoves or more lanes that moved to one cluster, or left
          // one: one warp sum a limb and count, as a whole warp's)
          const bool gn = __popc(mv) >= kGroupMoves && group_same(moved, b, mv);
          const bool go = __popc(lv) >= kGroupMoves && group_same(left, old, lv);
          const size_t to = moved ? (size_t)b : 0, from = left ? (size_t)old : 0;
#pragma unroll
          for (int j = 0; j < DM; ++j)
            if (j < d) {
              const size_t m = (size_t)k * d;
              const double v = (double)xr[r][j];
              if (gn) limb_apply_group<false>(slimb, to + (size_t)k * j, m, v, pw[j], moved, mv);
              else if (moved) limb_apply<false>(slimb, to + (size_t)k * j, m, v, pw[j]);
              if (go) limb_apply_group<true>(slimb, from + (size_t)k * j, m, v, pw[j], left, lv);
              else if (left) limb_apply<true>(slimb, from + (size_t)k * j, m, v, pw[j]);
            }
          const int lane = (int)(threadIdx.x & 31);
          if (gn ? lane == __ffs(mv) - 1 : moved) limb_atomic<false>(&scnt[to], gn ? (unsigned int)__popc(mv) : 1u);
          if (go ? lane == __ffs(lv) - 1 : left) limb_atomic<true>(&scnt[from], go ? (unsigned int)__popc(lv) : 1u);
        }
      } else if (UPDATE) {  // (the whole warp is here: the loop's bounds are the block's)
        const bool whole = warp_same(i < n, b);
#pragma unroll
        for (int j = 0; j < DM; ++j)
          if (j < d) limb_apply_any<false>(slimb, (size_t)b + (size_t)k * j, (size_t)k * d, (double)xr[r][j], pw[j],
                                           i < n, whole);
        count_any<false>(&scnt[b < 0 ? 0 : b], i < n, whole);
      }
    }
    // warp-aggregated changed count
    const unsigned int wsum = __reduce_add_sync(0xffffffffu, ch);
    if ((tid & 31) == 0 && wsum) atomicAdd(sh_changed, wsum);
    if (UPDATE && ++since == kLimbFlush / (256 * P)) {
      since = 0;
      limb_flush(slimb, scnt, k, d, 0, acc, counts);
    }
  }
  if (UPDATE && CARRY) {  // (a block none of whose points moved has added nothing: no flush)
    __syncthreads();
    if (*sh_changed) limb_flush(slimb, scnt, k, d, 0, acc, counts);
  } else if (UPDATE) {
    limb_flush(slimb, scnt, k, d, 0, acc, counts);
  } else {
    __syncthreads();
  }
}

// The exact kernel's pass: centers in shared memory (sc), Small<T, DM>.
template <typename T, int DM, bool UPDATE, int P = Small<T, DM>::PPT>
__device__ __forceinline__ void small_pass(const T *__restrict__ x, long long n, int d, int k,
                                           const T *sc, int *__restrict__ labels, unsigned int *slimb,
                                           unsigned int *scnt, const double (&pw)[DM], u64 *acc,
                                           unsigned int *counts, unsigned int *sh_changed) {
  small_pass<T, DM, UPDATE, P>(x, n, d, k, labels, slimb, scnt, pw, acc, counts, sh_changed,
                               [&](const T (&xr)[P][DM], unsigned int, int (&bi)[P]) {
                                 Small<T, DM>::nearest(xr, sc, k, bi);
                               });
}

// Shared layout: [limbs 4*k*d u32 (UPDATE)][centers values(k) T][counts k u32 (UPDATE)]
template <typename T, int DM>
__host__ __device__ constexpr size_t small_smem_bytes(int k, int d, bool update) {
  return (update ? 16 * (size_t)k * d : 0) + Small<T, DM>::values(k) * sizeof(T) +
         (update ? 4 * (size_t)k : 0) + 64;
}

// A fused step's start (UPDATE): the block's shared sums and counts zeroed
// and the columns' scales pw; the caller's barrier follows.
template <int DM, bool UPDATE>
__device__ __forceinline__ void small_sums_begin(unsigned int *slimb, unsigned int *scnt, int k, int d,
                                                 const int *__restrict__ scale, double (&pw)[DM]) {
  if (UPDATE) {
    for (size_t e = threadIdx.x; e < 4 * (size_t)k * d; e += blockDim.x) slimb[e] = 0;
    for (int c = threadIdx.x; c < k; c += blockDim.x) scnt[c] = 0;
  }
#pragma unroll
  for (int j = 0; j < DM; ++j) pw[j] = (UPDATE && j < d) ? pow2(scale[j]) : 0.0;
}

template <typename T, int DM, bool UPDATE>
__global__ void __launch_bounds__(256)
k_assign_small(const T *__restrict__ x, long long n, int d, const T *__restrict__ cen, int k,
               int *__restrict__ labels, State *st, int max_iter, u64 *__restrict__ acc,
               unsigned int *__restrict__ counts, const int *__restrict__ scale) {
  if (fit_finished(st, max_iter)) return;
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ unsigned int sh_changed;
  unsigned int *slimb = reinterpret_cast<unsigned int *>(smem);
  T *sc = reinterpret_cast<T *>(slimb + (UPDATE ? 4 * (size_t)k * d : 0));
  unsigned int *scnt = reinterpret_cast<unsigned int *>(sc + Small<T, DM>::values(k));
  const int tid = threadIdx.x;
  if (tid == 0) sh_changed = 0;
  Small<T, DM>::load(sc, cen, k, d, false);
  double pw[DM];
  small_sums_begin<DM, UPDATE>(slimb, scnt, k, d, scale, pw);
  __syncthreads();
  small_pass<T, DM, UPDATE>(x, n, d, k, sc, labels, slimb, scnt, pw, acc, counts, &sh_changed);
  if (tid == 0 && st && sh_changed) atomicAdd(&st->changed, (u64)sh_changed);
}

// The same step in double precision through the certified filter
// (small_dfilter.cuh): the same labels, sums and changed count.  Counts the
// points it ran (st->df_points) and those it gave exact distances
// (st->df_exact).
// (3 blocks an SM from d = 3 on: 80 registers; measured on an H100,
// 2026-11-26: 10% faster at d = 4 and 8; at d <= 2 the cap spills)
template <int DM, bool UPDATE>
__global__ void __launch_bounds__(256, DM >= 4 ? 3 : 1)
k_assign_small_df(const double *__restrict__ x, long long n, int d, const double *__restrict__ cen, int k,
                  int *__restrict__ labels, State *st, int max_iter, u64 *__restrict__ acc,
                  unsigned int *__restrict__ counts, const int *__restrict__ scale, SmallDFArgs fa) {
  if (fit_finished(st, max_iter)) return;
  using F = SmallDF<DM>;
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ unsigned int sh_changed, sh_exact, sh_nbmax, sh_out;
  unsigned int *slimb = reinterpret_cast<unsigned int *>(smem);
  float *sc = reinterpret_cast<float *>(slimb + (UPDATE ? 4 * (size_t)k * d : 0));
  unsigned int *scnt = reinterpret_cast<unsigned int *>(sc + F::values(k));
  const int tid = threadIdx.x;
  if (tid == 0) sh_changed = sh_exact = sh_nbmax = sh_out = 0;
  __syncthreads();
  F::load(sc, cen, k, d, fa.im, &sh_nbmax, &sh_out);
  double pw[DM];
  small_sums_begin<DM, UPDATE>(slimb, scnt, k, d, scale, pw);
  __syncthreads();
  const DFBound bd{fa.im.uprime, fa.im.kappa, fa.im.gamma, fa.absd, __uint_as_float(sh_nbmax)};
  const bool all_exact = sh_out != 0;
  unsigned int exact = 0;
  small_pass<double, DM, UPDATE, F::PPT>(
      x, n, d, k, labels, slimb, scnt, pw, acc, counts, &sh_changed,
      [&](const double (&xr)[F::PPT][DM], unsigned int valid, int (&bi)[F::PPT]) {
        F::nearest(xr, valid, sc, cen, k, d, fa.im, bd, all_exact, bi, exact);
      });
#pragma unroll
  for (int off = 16; off; off >>= 1) exact += __shfl_xor_sync(0xffffffffu, exact, off);
  if ((tid & 31) == 0 && exact) atomicAdd(&sh_exact, exact);
  __syncthreads();
  if (tid == 0 && st) {
    if (sh_changed) atomicAdd(&st->changed, (u64)sh_changed);
    if (sh_exact) atomicAdd(&st->df_exact, (u64)sh_exact);
    if (blockIdx.x == 0) atomicAdd(&st->df_points, (u64)n);
  }
}

// ---------------------------------------------------------------------------
// Any d, any k: register-blocked tiles (BM points x BN centers per block,
// TM x TN per thread, coordinates in chunks of BK through shared memory), the
// argmin fused in; the n x k distances never leave registers.
template <typename T> struct TileCfg;
template <> struct TileCfg<float> { enum { BM = 128, BN = 128, BK = 16, TM = 8, TN = 8 }; };
template <> struct TileCfg<double> { enum { BM = 128, BN = 64, BK = 16, TM = 8, TN = 4 }; };

template <typename T, bool DOT>
__global__ void __launch_bounds__(256, 2)
k_assign_tiled(const T *__restrict__ x, long long n, int d, const T *__restrict__ cen, int k,
               int *__restrict__ labels, State *st, int max_iter) {
  typedef TileCfg<T> C;
  enum { BM = C::BM, BN = C::BN, BK = C::BK, TM = C::TM, TN = C::TN };
  if (fit_finished(st, max_iter)) return;
  __shared__ __align__(16) T xs[BK][BM];
  __shared__ __align__(16) T cs[BK][BN];
  __shared__ T ccs[BN];
  __shared__ unsigned int sh_changed;
  const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
  const long long i0 = (long long)blockIdx.x * BM;
  const bool dot = DOT;
  typedef typename std::conditional<DOT, Dist<float>, DistDiff<T> >::type DT;
  auto load_cols = [](T (&r)[TN], const T *row, int t) { load_cols_impl<T, TN, BN>(r, row, t); };
  if (tid == 0) sh_changed = 0;

  T best[TM];
  int bidx[TM];
#pragma unroll
  for (int m = 0; m < TM; ++m) { best[m] = pos_inf<T>(); bidx[m] = -1; }

  for (int c0 = 0; c0 < k; c0 += BN) {
    T acc[TM][TN];
    T ccv = 0;
    for (int j0 = 0; j0 < d; j0 += BK) {
      for (int e = tid; e < BK * BM; e += 256) {
        int jj = e / BM, ii = e - jj * BM;
        long long i = i0 + ii;
        int j = j0 + jj;
        xs[jj][ii] = (i < n && j < d) ? x[i + n * j] : T(0);
      }
      for (int e = tid; e < BK * BN; e += 256) {
        int jj = e / BN, cc = e - jj * BN;
        int c = c0 + cc, j = j0 + jj;
        cs[jj][cc] = (c >= k) ? quiet_nan<T>() : (j < d ? cen[c + (size_t)k * j] : T(0));
      }
      __syncthreads();
      if (dot && tid < BN) {
#pragma unroll
        for (int jj = 0; jj < BK; ++jj) ccv = fmaf(cs[jj][tid], cs[jj][tid], ccv);
      }
      if (j0 == 0) {
        // first coordinate initialises (keeps the double sum bitwise R's)
        T xr[TM], cr[TN];
        load_row(xr, &xs[0][ty * TM]);
        load_cols(cr, cs[0], tx);
#pragma unroll
        for (int m = 0; m < TM; ++m)
#pragma unroll
          for (int q = 0; q < TN; ++q) acc[m][q] = DT::first(xr[m], cr[q]);
#pragma unroll
        for (int jj = 1; jj < BK; ++jj) {
          load_row(xr, &xs[jj][ty * TM]);
          load_cols(cr, cs[jj], tx);
#pragma unroll
          for (int m = 0; m < TM; ++m)
#pragma unroll
            for (int q = 0; q < TN; ++q) acc[m][q] = DT::step(acc[m][q], xr[m], cr[q]);
        }
      } else {
#pragma unroll
        for (int jj = 0; jj < BK; ++jj) {
          T xr[TM], cr[TN];
          load_row(xr, &xs[jj][ty * TM]);
          load_cols(cr, cs[jj], tx);
#pragma unroll
          for (int m = 0; m < TM; ++m)
#pragma unroll
            for (int q = 0; q < TN; ++q) acc[m][q] = DT::step(acc[m][q], xr[m], cr[q]);
        }
      }
      __syncthreads();
    }
    if (dot) {
      if (tid < BN) ccs[tid] = ccv;
      __syncthreads();
    }
#pragma unroll
    for (int m = 0; m < TM; ++m) {
      T bd = pos_inf<T>();
      int bi = 0x7fffffff;
#pragma unroll
      for (int q = 0; q < TN; ++q) {
        const int cl = (q < TN / 2) ? tx * (TN / 2) + q : BN / 2 + tx * (TN / 2) + (q - TN / 2);
        T dd = DT::finish(acc[m][q], dot ? ccs[cl] : T(0));
        if (dd < bd) { bd = dd; bi = c0 + cl; }
      }
#pragma unroll
      for (int off = 8; off >= 1; off >>= 1) {
        T od = __shfl_xor_sync(0xffffffffu, bd, off);
        int oi = __shfl_xor_sync(0xffffffffu, bi, off);
        if (od < bd || (od == bd && oi < bi)) { bd = od; bi = oi; }
      }
      if (bd < best[m]) { best[m] = bd; bidx[m] = bi; }
    }
    if (dot) __syncthreads();  // ccs is rewritten by the next tile
  }

  unsigned int ch = 0;
  if (tx == 0) {
#pragma unroll
    for (int m = 0; m < TM; ++m) {
      long long i = i0 + ty * TM + m;
      if (i < n) {
        int old = labels[i];
        int nl = bidx[m];
        if (nl < 0) nl = label_kept(old);
        label_commit(&labels[i], old, nl, ch);
      }
    }
  }
  if (ch) atomicAdd(&sh_changed, ch);
  __syncthreads();
  if (tid == 0 && st && sh_changed) atomicAdd(&st->changed, (u64)sh_changed);
}

// ---------------------------------------------------------------------------
// Single precision, d > 8, on the tensor cores: the same |c|^2 - 2 x.c form
// with x.c by error-compensated 3xTF32 (a = hi + lo, hi = tf32(a), lo = a - hi
// exactly; x.c ~ lo_x hi_c + hi_x lo_c + hi_x hi_c, fp32 accumulation; error
// about fp32's), mma.sync m16n8k8; the accumulators start from |c|^2 and
// the centers' operands are -2 c, so they end as the values themselves.
// Block: 128 points x 128 centers per tile, 8 warps as 4 (points) x 2
// (centers), each 32 x 64; coordinates in chunks of 16 through shared
// memory (row stride 136 floats: fragment loads hit 32 distinct banks).
// Each thread keeps the running argmin of its 4 points over
// its own centers (index order, strict <); lanes and the two center warps are
// combined at the end with (distance, index) order: the lowest index among
// equal minima, NaN never chosen, as the sequential scan.
__global__ void __launch_bounds__(256, 2)
k_assign_tf32(const float *__restrict__ x, long long n, int d, const float *__restrict__ cen, int k,
              int *__restrict__ labels, State *st, int max_iter) {
  enum { BM = 128, BN = 128, BK = 16, LD = 136 };
  if (fit_finished(st, max_iter)) return;
  __shared__ __align__(16) float xs[BK][LD];
  __shared__ __align__(16) float cs[BK][LD];
  __shared__ float ccs[BN];
  __shared__ float rbd[BM];
  __shared__ int rbi[BM];
  __shared__ unsigned int sh_changed;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp & 3, wn = warp >> 2;
  const int g = lane >> 2, t = lane & 3;
  const long long i0 = (long long)blockIdx.x * BM;
  if (tid == 0) sh_changed = 0;
  float best[4];
  int bidx[4];
#pragma unroll
  for (int r = 0; r < 4; ++r) { best[r] = pos_inf<float>(); bidx[r] = 0x7fffffff; }

  for (int c0 = 0; c0 < k; c0 += BN) {
    // the tile's norms (fmaf in coordinate order; NaN past k), which start
    // the accumulators: the products below then add -2 x.c to them, as the
    // packed kernel's do
    if (tid < BN) {
      const int c = c0 + tid;
      float ccv = 0.f;
      if (c < k)
        for (int j = 0; j < d; ++j) ccv = fmaf(cen[c + (size_t)k * j], cen[c + (size_t)k * j], ccv);
      ccs[tid] = c < k ? ccv : quiet_nan<float>();
    }
    __syncthreads();
    float acc[2][8][4];
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
      for (int nt = 0; nt < 8; ++nt)
#pragma unroll
        for (int q = 0; q < 4; ++q) acc[mt][nt][q] = ccs[wn * 64 + nt * 8 + 2 * t + (q & 1)];
    for (int j0 = 0; j0 < d; j0 += BK) {
      for (int e = tid; e < BK * BM; e += 256) {
        int jj = e / BM, ii = e - jj * BM;
        long long i = i0 + ii;
        int j = j0 + jj;
        xs[jj][ii] = (i < n && j < d) ? x[i + n * j] : 0.f;
      }
      for (int e = tid; e < BK * BN; e += 256) {
        int jj = e / BN, cc = e - jj * BN;
        int c = c0 + cc, j = j0 + jj;
        cs[jj][cc] = (c >= k) ? quiet_nan<float>() : (j < d ? cen[c + (size_t)k * j] : 0.f);
      }
      __syncthreads();
#pragma unroll
      for (int ks = 0; ks < BK; ks += 8) {
        unsigned int ah[2][4], al[2][4];
#pragma unroll
        for (int mt = 0; mt < 2; ++mt) {
          const int r0 = wm * 32 + mt * 16 + g;
          split_tf32(xs[ks + t][r0], ah[mt][0], al[mt][0]);
          split_tf32(xs[ks + t][r0 + 8], ah[mt][1], al[mt][1]);
          split_tf32(xs[ks + t + 4][r0], ah[mt][2], al[mt][2]);
          split_tf32(xs[ks + t + 4][r0 + 8], ah[mt][3], al[mt][3]);
        }
#pragma unroll
        for (int nt = 0; nt < 8; ++nt) {
          const int cl = wn * 64 + nt * 8 + g;
          unsigned int bh0, bl0, bh1, bl1;
          split_tf32(-2.0f * cs[ks + t][cl], bh0, bl0);
          split_tf32(-2.0f * cs[ks + t + 4][cl], bh1, bl1);
#pragma unroll
          for (int mt = 0; mt < 2; ++mt) {
            mma_tf32(acc[mt][nt], al[mt], bh0, bh1);
            mma_tf32(acc[mt][nt], ah[mt], bl0, bl1);
            mma_tf32(acc[mt][nt], ah[mt], bh0, bh1);
          }
        }
      }
      __syncthreads();
    }
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = mt * 2 + h;
#pragma unroll
        for (int nt = 0; nt < 8; ++nt)
#pragma unroll
          for (int q = 0; q < 2; ++q) {
            const int cl = wn * 64 + nt * 8 + 2 * t + q;
            const float dd = acc[mt][nt][h * 2 + q];
            if (dd < best[r]) { best[r] = dd; bidx[r] = c0 + cl; }
          }
      }
    // (ccs is rewritten by the next tile after the last chunk's barrier)
  }
  // lanes of a quad hold the same points: (distance, index) minimum
#pragma unroll
  for (int r = 0; r < 4; ++r) quad_min(best[r], bidx[r]);
  if (wn == 1 && t == 0) {
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int row = wm * 32 + (r >> 1) * 16 + (r & 1) * 8 + g;
      rbd[row] = best[r];
      rbi[row] = bidx[r];
    }
  }
  __syncthreads();
  unsigned int ch = 0;
  if (wn == 0 && t == 0) {
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int row = wm * 32 + (r >> 1) * 16 + (r & 1) * 8 + g;
      float bd = best[r];
      int bi = bidx[r];
      take_min(bd, bi, rbd[row], rbi[row]);
      const long long i = i0 + row;
      if (i < n) {
        int old = labels[i];
        label_commit(&labels[i], old, bi == 0x7fffffff ? label_kept(old) : bi, ch);
      }
    }
  }
  if (ch) atomicAdd(&sh_changed, ch);
  __syncthreads();
  if (tid == 0 && st && sh_changed) atomicAdd(&st->changed, (u64)sh_changed);
}

// ---------------------------------------------------------------------------
// Double precision through the certified filter (dfilter.cuh), its variant
// with the images rounded to TF32 and one mma a product (GPUKMEANS_DFILTER=2;
// the default, 3xTF32, is k_assign_tc_filter below): the tiles of
// k_assign_tf32 on the float images (x: n x d; cen: kp x d column-major,
// the kp - k padding centers NaN).  The tiles come through cp.async into two
// buffers (chunk q + 1 in flight while chunk q is computed).  Each thread
// tracks, in shared memory, the lowest and second lowest
// w_j = |b_j|^2 (1 - kappa) - 2 a.b_j (each step rounded down: ccs holds the
// first term) of its 4 points and the center of the lowest; the quads and
// the two center warps are merged, then one thread a point applies
// df_certified: the label where it holds (it is the exact rule's), else the
// point goes to the exact pass's list.  Dynamic shared memory: df_tc_smem.
constexpr int kDfBM = 128, kDfBN = 128, kDfBK = 16, kDfLD = 136;
constexpr size_t df_tc_smem = (size_t)4 * kDfBK * kDfLD * sizeof(float) + 3 * 4 * 256 * sizeof(float);


__global__ void __launch_bounds__(256, 2)
k_assign_tf32_filter(const float *__restrict__ x, long long n, int d, const float *__restrict__ cen, int k, int kp,
                     int *__restrict__ labels, State *st, int max_iter, DFArgs fa) {
  enum { BM = kDfBM, BN = kDfBN, BK = kDfBK, LD = kDfLD };
  if (fit_finished(st, max_iter)) return;
  extern __shared__ __align__(16) unsigned char smem[];
  float(*xb)[BK][LD] = reinterpret_cast<float(*)[BK][LD]>(smem);           // [2][BK][LD]
  float(*cb)[BK][LD] = reinterpret_cast<float(*)[BK][LD]>(smem + 2 * BK * LD * sizeof(float));
  float(*s_w)[256] = reinterpret_cast<float(*)[256]>(smem + 4 * BK * LD * sizeof(float));  // [4][256]
  float(*s_s)[256] = s_w + 4;
  int(*s_b)[256] = reinterpret_cast<int(*)[256]>(s_w + 8);
  __shared__ float ccs[BN];
  __shared__ float rbd[BM], rbs[BM], s_na[BM];
  __shared__ int rbi[BM];
  __shared__ unsigned int sh_changed;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp & 3, wn = warp >> 2;
  const int g = lane >> 2, t = lane & 3;
  const long long i0 = (long long)blockIdx.x * BM;
  if (fa.cnt[1]) {  // a center's image out of the box: every point exact
    if (tid < BM && i0 + tid < n) df_list(i0 + tid, fa);
    return;
  }
  if (tid == 0) sh_changed = 0;
  if (tid < BM) s_na[tid] = i0 + tid < n ? fa.na[i0 + tid] : 0.f;
#pragma unroll
  for (int r = 0; r < 4; ++r) { s_w[r][tid] = pos_inf<float>(); s_s[r][tid] = pos_inf<float>(); s_b[r][tid] = 0x7fffffff; }

  const int nj = (d + BK - 1) / BK, nq = nj * ((k + BN - 1) / BN);
  // chunk q: centers c0 = (q / nj) BN, coordinates j0 = (q % nj) BK
  auto load = [&](int q, int buf) {
    const int c0 = (q / nj) * BN, j0 = (q % nj) * BK;
#pragma unroll
    for (int e = tid; e < BK * BM; e += 256) {
      const int jj = e / BM, ii = e - jj * BM;
      const long long i = i0 + ii;
      const int j = j0 + jj;
      const bool ok = i < n && j < d;
      cp_async4(&xb[buf][jj][ii], ok ? x + i + n * (long long)j : x, ok);
    }
#pragma unroll
    for (int e = tid; e < BK * BN; e += 256) {
      const int jj = e / BN, cc = e - jj * BN;
      const int j = j0 + jj;
      const bool ok = j < d;
      cp_async4(&cb[buf][jj][cc], ok ? cen + c0 + cc + (size_t)kp * j : cen, ok);
    }
    cp_async_commit();
  };
  load(0, 0);
  float acc[2][8][4];
  float ccv = 0;
  for (int q = 0; q < nq; ++q) {
    const int buf = q & 1, jq = q % nj;
    if (jq == 0) {
#pragma unroll
      for (int mt = 0; mt < 2; ++mt)
#pragma unroll
        for (int nt = 0; nt < 8; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[mt][nt][e] = 0.f;
      ccv = 0.f;
    }
    __syncthreads();  // everyone is done with buffer buf ^ 1 (chunk q - 1)
    if (q + 1 < nq) {
      load(q + 1, buf ^ 1);
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();  // chunk q has landed for all threads
    const float(*xs)[LD] = xb[buf];
    const float(*cs)[LD] = cb[buf];
    if (tid < BN) {
#pragma unroll
      for (int jj = 0; jj < BK; ++jj) ccv = fmaf(cs[jj][tid], cs[jj][tid], ccv);
    }
#pragma unroll
    for (int ks = 0; ks < BK; ks += 8) {
      // TF32 images: the products are exact, one mma
      unsigned int ah[2][4];
#pragma unroll
      for (int mt = 0; mt < 2; ++mt) {
        const int r0 = wm * 32 + mt * 16 + g;
        ah[mt][0] = __float_as_uint(xs[ks + t][r0]);
        ah[mt][1] = __float_as_uint(xs[ks + t][r0 + 8]);
        ah[mt][2] = __float_as_uint(xs[ks + t + 4][r0]);
        ah[mt][3] = __float_as_uint(xs[ks + t + 4][r0 + 8]);
      }
#pragma unroll
      for (int nt = 0; nt < 8; ++nt) {
        const int cl = wn * 64 + nt * 8 + g;
        const unsigned int bh0 = __float_as_uint(cs[ks + t][cl]), bh1 = __float_as_uint(cs[ks + t + 4][cl]);
#pragma unroll
        for (int mt = 0; mt < 2; ++mt) mma_tf32(acc[mt][nt], ah[mt], bh0, bh1);
      }
    }
    if (jq == nj - 1) {  // the tile of centers is complete: track w
      const int c0 = (q / nj) * BN;
      if (tid < BN) ccs[tid] = __fmaf_rd(-fa.im.kappa, ccv, ccv);
      __syncthreads();
#pragma unroll
      for (int mt = 0; mt < 2; ++mt)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int r = mt * 2 + h;
          float bw = s_w[r][tid], bs = s_s[r][tid];
          int bi = s_b[r][tid];
#pragma unroll
          for (int nt = 0; nt < 8; ++nt)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              const int cl = wn * 64 + nt * 8 + 2 * t + e;
              const float w = __fmaf_rd(-2.0f, acc[mt][nt][h * 2 + e], ccs[cl]);
              if (w < bw) { bs = bw; bw = w; bi = c0 + cl; }
              else bs = fminf(bs, w);
            }
          s_w[r][tid] = bw;
          s_s[r][tid] = bs;
          s_b[r][tid] = bi;
        }
      // ccs is rewritten only after the next tile's chunks and their barriers
    }
  }
  float best[4], sec[4];
  int bidx[4];
#pragma unroll
  for (int r = 0; r < 4; ++r) { best[r] = s_w[r][tid]; sec[r] = s_s[r][tid]; bidx[r] = s_b[r][tid]; }
  // lanes of a quad hold the same points: (w, index) minimum, second lowest w
#pragma unroll
  for (int r = 0; r < 4; ++r) quad_min2(best[r], bidx[r], sec[r]);
  if (wn == 1 && t == 0) {
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int row = wm * 32 + (r >> 1) * 16 + (r & 1) * 8 + g;
      rbd[row] = best[r];
      rbi[row] = bidx[r];
      rbs[row] = sec[r];
    }
  }
  __syncthreads();
  if (wn == 0 && t == 0) {
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int row = wm * 32 + (r >> 1) * 16 + (r & 1) * 8 + g;
      float bd = best[r], bs = sec[r];
      int bi = bidx[r];
      take_min2(bd, bi, bs, rbd[row], rbi[row], rbs[row]);
      rbd[row] = bd;
      rbi[row] = bi;
      rbs[row] = bs;
    }
  }
  __syncthreads();
  unsigned int ch = 0;
  if (tid < BM) {  // one thread a point: the test, then the label or the list
    const long long i = i0 + tid;
    const int bi = rbi[tid];
    if (i < n) {
      if (bi < k && df_certified(rbd[tid], rbs[tid], fa.nb[bi], s_na[tid], d, df_bound(fa))) {
        const int old = labels[i];
        label_commit(&labels[i], old, bi, ch);
      } else {
        df_list(i, fa);  // (no candidates kept: k_df_exact)
      }
    }
  }
  const unsigned int wc = __popc(__ballot_sync(0xffffffffu, ch != 0));
  if (lane == 0 && wc) atomicAdd(&sh_changed, wc);
  __syncthreads();
  if (tid == 0 && st && sh_changed) atomicAdd(&st->changed, (u64)sh_changed);
}

// ---------------------------------------------------------------------------
// The kernels on packed operands (tc_tiles.cuh): the same arithmetic as
// k_assign_tf32 (single) and as the filter's earlier 3xTF32 kernel (double),
// faster main loop.  Each thread tracks 8 rows (points) over its 16 centers
// of each tile; the tile's 16 values of a row are first reduced with fminf,
// and searched in index order only where that minimum beats the row's best
// (the sequential scan's result with a fraction of its compare/selects).

// What both epilogues hold: the thread's place in the block tile (warp
// wm, wn; lane 4 g + t), its first center of a tile less c0 (cb), the
// labels, the shared rows of the cross-warp merge, the labels it changed.
struct TcEpiBase {
  static constexpr bool kWgmma = false;  // (tc_main_loop: mma.sync, or wgmma.cuh's products)
  int cb, wm, wn, g, t;
  long long n;
  int *labels;
  float *rbd;  // shared: kTcBM each
  int *rbi;
  unsigned int ch;
  __device__ __forceinline__ void place(long long n_, int *labels_, float *rbd_, int *rbi_) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    wm = warp & 1;
    wn = warp >> 1;
    g = lane >> 2;
    t = lane & 3;
    cb = wn * 64 + 2 * t;
    n = n_;
    labels = labels_;
    rbd = rbd_;
    rbi = rbi_;
    ch = 0;
  }
  // Where a thread's accumulators lie in the block tile, for the
  // mma.sync products (Wg false: warp (wm, wn) holds 64 rows x 64 centers;
  // 8 rows, one group of 16 values a row) or wgmma's (wgmma.cuh: a warp 32
  // rows x 128 centers; 4 rows, two groups of 16, the first 64 centers'
  // before the last 64's).  Row r's tile row; group grp's first center
  // less c0; the accumulator of value v (index order) of row r, group grp.
  template <bool Wg>
  __device__ __forceinline__ int row_of(int r) const {
    return Wg ? (r >> 1) * 64 + (wm + 2 * wn) * 16 + (r & 1) * 8 + g : tc_row(r, wm, g);
  }
  template <bool Wg>
  __device__ __forceinline__ int base_of(int grp) const { return Wg ? 64 * grp + 2 * t : cb; }
  template <bool Wg>
  static __device__ __forceinline__ float acc_of(const float (&acc)[4][8][4], int r, int grp, int v) {
    return Wg ? acc[2 * (r >> 1) + grp][v >> 1][(r & 1) * 2 + (v & 1)] : acc[r >> 1][v >> 1][(r & 1) * 2 + (v & 1)];
  }
  // Row r's 16 values of group grp of a tile, the filter's w = |c|^2 (1 -
  // kappa) - 2 x.c (the norms' term as packed; each step rounded down), in
  // index order, and their minimum (fminf: NaN ignored; +inf if all NaN).
  // (The single argmin's accumulators hold its values themselves: TcArgmin.)
  template <bool Wg>
  __device__ __forceinline__ float row_values(const float (&acc)[4][8][4], int r, const float2 (&nv)[8],
                                              float (&v)[16], int grp) const {
    float m = pos_inf<float>();
#pragma unroll
    for (int nt = 0; nt < 8; ++nt)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const float a = acc_of<Wg>(acc, r, grp, 2 * nt + e), c = e ? nv[nt].y : nv[nt].x;
        v[nt * 2 + e] = __fmaf_rd(-2.0f, a, c);
        m = fminf(m, v[nt * 2 + e]);
      }
    return m;
  }
  // f(r, grp, w, m) for each of a thread's rows r and groups grp of a tile:
  // w the group's 16 values (row_values, norms from the tile's), m their
  // least; a row's group 0 before its group 1 (index order).
  template <bool Wg, class F>
  __device__ __forceinline__ void each_row_values(const float (&acc)[4][8][4], const float *norms, F &&f) const {
#pragma unroll
    for (int grp = 0; grp < tc_groups(Wg); ++grp) {
      float2 nv[8];
      norms_of<Wg>(norms, nv, grp);
#pragma unroll
      for (int r = 0; r < tc_rows(Wg); ++r) {
        float w[16];
        const float m = row_values<Wg>(acc, r, nv, w, grp);
        f(r, grp, w, m);
      }
    }
  }
  // A row's 16 values (index order): their least m by a tree of fminf (NaN
  // ignored; +inf if all are NaN), the first value equal to it (the
  // sequential scan's choice: index()) by descending the tree, the left
  // subtree whenever its minimum equals m (4 tests and 11 selects instead
  // of 15 tests and selects), and m2, the least of the other values: the
  // minima of the subtrees beside the path.  (What a caller does not use is
  // not compiled; index() where it is needed only.)
  struct TreeMin {
    float m, m2;
    bool b3, b2, b1, b0;  // the half, quarter, pair and value of the path
    __device__ __forceinline__ int index() const { return 8 * b3 + 4 * b2 + 2 * b1 + b0; }
  };
  static __device__ __forceinline__ TreeMin tree_min(const float (&v)[16]) {
    TreeMin o;
    float p[8], q[4], s[2];
#pragma unroll
    for (int nt = 0; nt < 8; ++nt) p[nt] = fminf(v[2 * nt], v[2 * nt + 1]);
#pragma unroll
    for (int u = 0; u < 4; ++u) q[u] = fminf(p[2 * u], p[2 * u + 1]);
    s[0] = fminf(q[0], q[1]);
    s[1] = fminf(q[2], q[3]);
    const float m = fminf(s[0], s[1]);
    o.m = m;
    o.b3 = !(s[0] == m);
    const float qa = o.b3 ? q[2] : q[0], qb = o.b3 ? q[3] : q[1];
    const float p0 = o.b3 ? p[4] : p[0], p1 = o.b3 ? p[6] : p[2];
    const float p0b = o.b3 ? p[5] : p[1], p1b = o.b3 ? p[7] : p[3];
    o.b2 = !(qa == m);
    const float pa = o.b2 ? p1 : p0, pb = o.b2 ? p1b : p0b;
    float w[4];  // the quarter's values
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float lo = o.b3 ? v[8 + e] : v[e], hi = o.b3 ? v[12 + e] : v[4 + e];
      w[e] = o.b2 ? hi : lo;
    }
    o.b1 = !(pa == m);
    const float wa = o.b1 ? w[2] : w[0], wb = o.b1 ? w[3] : w[1];
    o.b0 = !(wa == m);
    o.m2 = fminf(fminf(o.b3 ? s[0] : s[1], o.b2 ? qa : qb), fminf(o.b1 ? pa : pb, o.b0 ? wa : wb));
    return o;
  }
  template <bool Wg>
  __device__ __forceinline__ void norms_of(const float *norms, float2 (&nv)[8], int grp) const {
#pragma unroll
    for (int nt = 0; nt < 8; ++nt) nv[nt] = *reinterpret_cast<const float2 *>(norms + base_of<Wg>(grp) + nt * 8);
  }
  // The center of value v (0..15) of group grp of a tile at c0.
  template <bool Wg>
  __device__ __forceinline__ int center(int c0, int v, int grp) const {
    return c0 + base_of<Wg>(grp) + (v >> 1) * 8 + (v & 1);
  }
};

// Single precision: dd = |c|^2 - 2 x.c, least (dd, index); NaN never chosen.
// The accumulators hold dd itself: the centers come packed times -2 and the
// first product of each starts from the norm (kNorms; k_assign_tf32 does
// the same products in the same order), which spares the epilogue a
// multiply-add a value.  Wg: wgmma's products (wgmma.cuh; centers
// TcPack::argmin_wg), the same values, so the same labels; a quad then
// holds all of its rows' centers (TcEpiBase's layouts), so no merge across
// warps.
template <bool Wg = false>
struct TcArgmin : TcEpiBase {
  static constexpr bool kZeroFirst = true, kSplitB = true, kNorms = true, kUnrolledCopies = true,
                        kWgmma = Wg;  // (tc_main_loop)
  static constexpr int R = tc_rows(Wg), G = tc_groups(Wg);
  float best[R];
  int bidx[R];
  __device__ __forceinline__ void reset() {
#pragma unroll
    for (int r = 0; r < R; ++r) { best[r] = pos_inf<float>(); bidx[r] = 0x7fffffff; }
  }
  // Row r's least value of a tile's group and the first value equal to it
  // (tree_min), taken where it beats the row's best (a row's group 0
  // before its group 1: index order).  (The descent runs whether or not:
  // nearly every tile takes some row's in a warp, the first of a point tile
  // all.  Selects instead of the branch gave the same time on D, with more
  // spills.)
  __device__ __forceinline__ void tile(const float (&acc)[4][8][4], int c0, const float *) {
#pragma unroll
    for (int grp = 0; grp < G; ++grp)
#pragma unroll
      for (int r = 0; r < R; ++r) {
        float v[16];
#pragma unroll
        for (int j = 0; j < 16; ++j) v[j] = acc_of<Wg>(acc, r, grp, j);
        const TreeMin tm = tree_min(v);
        if (tm.m < best[r]) {
          best[r] = tm.m;
          bidx[r] = center<Wg>(c0, tm.index(), grp);
        }
      }
  }
  // The point tile bt is done: (distance, index) minimum over the lanes of a
  // quad (the same rows) and (mma.sync) the two center warps, then the labels.
  __device__ __forceinline__ void finish(long long bt, const int *old_labels, const float *) {
#pragma unroll
    for (int r = 0; r < R; ++r) quad_min(best[r], bidx[r]);
    if (!Wg && wn == 1 && t == 0) {
#pragma unroll
      for (int r = 0; r < R; ++r) {
        rbd[tc_row(r, wm, g)] = best[r];
        rbi[tc_row(r, wm, g)] = bidx[r];
      }
    }
    if (!Wg) __syncthreads();
    if (Wg ? t == 0 : wn == 0 && t == 0) {
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const int row = row_of<Wg>(r);
        float bd = best[r];
        int bi = bidx[r];
        if (!Wg) take_min(bd, bi, rbd[row], rbi[row]);
        const long long i = bt * kTcBM + row;
        if (i < n) {
          const int old = old_labels[row];
          label_commit(&labels[i], old, bi == 0x7fffffff ? label_kept(old) : bi, ch);
        }
      }
    }
    reset();  // (rbd, rbi are rewritten after the main loop's next barrier)
  }
};

// The block's changed labels into the fit's count.
__device__ __forceinline__ void tc_add_changed(unsigned int mine, unsigned int *sh_changed, State *st) {
  if (mine) atomicAdd(sh_changed, mine);
  __syncthreads();
  if (threadIdx.x == 0 && st && *sh_changed) atomicAdd(&st->changed, (u64)*sh_changed);
}

// Wg: through wgmma (centers packed TcPack::argmin_wg), compiled for sm_90a
// only (GK_WGMMA_BODY; elsewhere empty and never launched: assign.cu).
template <bool Wg = false>
__global__ void __launch_bounds__(kTcThreads, 2)
k_assign_tc(const float *__restrict__ xp, long long n, int d, const float *__restrict__ cp, int k,
            int *__restrict__ labels, State *st, int max_iter) {
  if constexpr (Wg && !GK_WGMMA_BODY) {
    return;
  } else {
    if (fit_finished(st, max_iter)) return;
    extern __shared__ __align__(16) unsigned char smem[];
    __shared__ float rbd[kTcBM];
    __shared__ int rbi[kTcBM];
    __shared__ unsigned int sh_changed;
    if (threadIdx.x == 0) sh_changed = 0;  // (the main loop's barriers order it)
    TcArgmin<Wg> epi;
    epi.place(n, labels, rbd, rbi);
    epi.reset();
    tc_main_loop(xp, cp, d, tc_kp(k) / kTcBN, (n + kTcBM - 1) / kTcBM, TcRows{labels, nullptr, n},
                 reinterpret_cast<float *>(smem), epi);
    tc_add_changed(epi.ch, &sh_changed, st);
  }
}

// Double precision, the certified filter on the packed float images: per
// row the lowest and second lowest w = |b|^2 (1 - kappa) - 2 a.b (each step
// rounded down; the norms' term comes packed) and the center of the lowest,
// then df_certified (dfilter.cuh), as k_assign_tf32_filter.  Pair: also the
// second lowest's center and the lowest w of the other centers
// (take_min3), listed with a point that is not certified, so that
// k_df_pair decides most such points from their two nearest centers.  (The
// extra tracking costs the filter about 1 ms an iteration on D of bench.R,
// d = 16, more than k_df_pair saves there; on E, d = 128, the iteration
// went from 56.0 to 50.7 ms: H200, 2026-11-26.  The candidate pass,
// df_candidates.cuh, settles those points too, and the filter without the
// pair is the faster: the pair runs only where that pass does not.)
template <bool Pair, bool Top2 = false, bool Wg = false>
struct TcFilterEpi : TcEpiBase {
  // (tc_main_loop; the pair's tracking leaves no registers for a second
  // copy of the chunk's products, 220 bytes of spills, nor for split
  // centers; without it the filter reads them split: E 21.1 -> 16.7 ms.
  // Wg: wgmma's products, without the pair only)
  static constexpr bool kZeroFirst = !Pair, kSplitB = !Pair, kNorms = false, kUnrolledCopies = false, kWgmma = Wg;
  static_assert(!(Wg && Pair), "wgmma: split centers, so no pair");
  static constexpr int R = tc_rows(Wg);
  int k, d;
  const DFArgs *fa;
  float *rbs, *rb3;  // shared: kTcBM each (second lowest w, the lowest of the others)
  int *rbi2;         // shared: kTcBM (the second lowest's center)
  float w1[R], w2[R], w3[R];
  int i1[R], i2[R];
  __device__ __forceinline__ void reset() {
#pragma unroll
    for (int r = 0; r < R; ++r) {
      w1[r] = w2[r] = w3[r] = pos_inf<float>();
      i1[r] = i2[r] = 0x7fffffff;
    }
  }
  __device__ __forceinline__ void tile(const float (&acc)[4][8][4], int c0, const float *norms) {
    each_row_values<Wg>(acc, norms, [&](int r, int grp, const float (&w)[16], float m) {
      if (!Pair && Top2) {  // (few center tiles a row: the update below would run on most tiles;
                            // the least and the second least make the same update; m unused)
        const TreeMin tm = tree_min(w);
        if (tm.m < w1[r]) {
          w2[r] = fminf(w1[r], tm.m2);
          w1[r] = tm.m;
          i1[r] = center<Wg>(c0, tm.index(), grp);
        } else {
          w2[r] = fminf(w2[r], tm.m);
        }
      } else if (m < (Pair ? w2[r] : w1[r])) {  // the sequential update, in index order
#pragma unroll
        for (int v = 0; v < 16; ++v) {
          if (w[v] < w1[r]) {
            if (Pair) {
              w3[r] = fminf(w3[r], w2[r]);
              i2[r] = i1[r];
            }
            w2[r] = w1[r];
            w1[r] = w[v];
            i1[r] = center<Wg>(c0, v, grp);
          } else if (!Pair) {
            w2[r] = fminf(w2[r], w[v]);
          } else if (w[v] < w2[r]) {
            w3[r] = fminf(w3[r], w2[r]);
            w2[r] = w[v];
            i2[r] = center<Wg>(c0, v, grp);
          } else {
            w3[r] = fminf(w3[r], w[v]);
          }
        }
      } else if (Pair) {
        w3[r] = fminf(w3[r], m);  // no value below the second lowest: the others' lowest is at most m
      } else {
        w2[r] = fminf(w2[r], m);  // no value below the lowest: the second lowest is at most m
      }
    });
  }
  // The point tile bt is done: the minimum over the quads and (mma.sync)
  // the two center warps, then one thread a point: the test, then the label
  // or the exact pass's list.  (The lowest, its center and the second
  // lowest of a row are those of its values as a set: the same whichever
  // thread saw which value.)
  __device__ __forceinline__ void finish(long long bt, const int *old_labels, const float *na) {
#pragma unroll
    for (int r = 0; r < R; ++r) {
      if (Pair) quad_min3(w1[r], i1[r], w2[r], i2[r], w3[r]);
      else quad_min2(w1[r], i1[r], w2[r]);
    }
    if (Wg) {  // (a quad holds all of its rows' centers)
      if (t == 0) {
#pragma unroll
        for (int r = 0; r < R; ++r) {
          const int row = row_of<Wg>(r);
          rbd[row] = w1[r];
          rbi[row] = i1[r];
          rbs[row] = w2[r];
        }
      }
      __syncthreads();
    } else {
      if (wn == 1 && t == 0) {
#pragma unroll
        for (int r = 0; r < R; ++r) {
          const int row = tc_row(r, wm, g);
          rbd[row] = w1[r];
          rbi[row] = i1[r];
          rbs[row] = w2[r];
          if (Pair) {
            rbi2[row] = i2[r];
            rb3[row] = w3[r];
          }
        }
      }
      __syncthreads();
      if (wn == 0 && t == 0) {
#pragma unroll
        for (int r = 0; r < R; ++r) {
          const int row = tc_row(r, wm, g);
          float a1 = w1[r], a2 = w2[r], a3 = w3[r];
          int j1 = i1[r], j2 = i2[r];
          if (Pair) merge_min3(a1, j1, a2, j2, a3, rbd[row], rbi[row], rbs[row], rbi2[row], rb3[row]);
          else take_min2(a1, j1, a2, rbd[row], rbi[row], rbs[row]);
          rbd[row] = a1;
          rbi[row] = j1;
          rbs[row] = a2;
          if (Pair) {
            rbi2[row] = j2;
            rb3[row] = a3;
          }
        }
      }
      __syncthreads();
    }
    const int tid = threadIdx.x;
    const long long i = bt * kTcBM + tid;
    const int b = rbi[tid];
    if (i < n) {
      if (b < k && df_certified(rbd[tid], rbs[tid], fa->nb[b], na[tid], d, df_bound(*fa))) {
        const int old = old_labels[tid];
        label_commit(&labels[i], old, b, ch);
      } else if (Pair) {
        df_list(i, *fa, rbd[tid], b, rbi2[tid], rb3[tid]);
      } else {
        df_list(i, *fa, rbd[tid], b);  // (the candidate pass's threshold; no second center)
      }
    }
    reset();  // (the shared minima are rewritten after the main loop's next barrier)
  }
};

// Wg: through wgmma (centers packed TcPack::split_wg), compiled for sm_90a
// only (GK_WGMMA_BODY; elsewhere empty and never launched: assign.cu).
template <bool Pair, bool Top2 = false, bool Wg = false>
__global__ void __launch_bounds__(kTcThreads, 2)
k_assign_tc_filter(const float *__restrict__ xp, long long n, int d, const float *__restrict__ cp, int k,
                   int *__restrict__ labels, State *st, int max_iter, DFArgs fa) {
  if constexpr (Wg && !GK_WGMMA_BODY) {
    return;
  } else {
    if (fit_finished(st, max_iter)) return;
    const int tid = threadIdx.x;
    const long long ntiles = (n + kTcBM - 1) / kTcBM;
    if (fa.cnt[1]) {  // a center's image out of the box: every point exact
      for (long long bt = blockIdx.x; bt < ntiles; bt += gridDim.x)
        if (bt * kTcBM + tid < n) df_list(bt * kTcBM + tid, fa);
      return;
    }
    extern __shared__ __align__(16) unsigned char smem[];
    __shared__ float rbd[kTcBM], rbs[kTcBM], rb3[kTcBM];
    __shared__ int rbi[kTcBM], rbi2[kTcBM];
    __shared__ unsigned int sh_changed;
    if (tid == 0) sh_changed = 0;
    TcFilterEpi<Pair, Top2, Wg> epi;
    epi.place(n, labels, rbd, rbi);
    epi.k = k;
    epi.d = d;
    epi.fa = &fa;
    epi.rbs = rbs;
    epi.rb3 = rb3;
    epi.rbi2 = rbi2;
    epi.reset();
    tc_main_loop(xp, cp, d, tc_kp(k) / kTcBN, ntiles, TcRows{labels, fa.na, n}, reinterpret_cast<float *>(smem), epi);
    tc_add_changed(epi.ch, &sh_changed, st);
  }
}

}  // namespace
}  // namespace gk

#endif
