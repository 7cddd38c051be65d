// detail/dfilter.cuh: the certified filter of Lloyd's assignment in double
// precision (the tiled path): labels bit for bit those of the exact rule
// (assign_kernels.cuh: no-FMA double distances in coordinate order, strict
// '<' in index order, NaN centers never chosen), most of them without any
// double arithmetic.
//
// Per iteration (assign.cu, launch_assign_df):
//   k_df_center_image  the centers' float image (FloatImage of init_bound.cuh,
//                      shift = column means, scale a power of two), their
//                      norms nb_j and the largest; flags the iteration when
//                      a center's image leaves the box |b_c| <= kBoxMax
//                      (initial centers very far from the data: float
//                      overflow): then every point is computed exactly;
//   k_assign_tf32_filter  (assign_kernels.cuh) with the image's dot products
//                      (3xTF32 on float images, or one TF32 mma on images
//                      rounded to TF32), per point the two lowest
//                      w_j = |b_j|^2 (1 - kappa) - 2 a.b_j (each step rounded
//                      down) and the center i of the lowest; where
//                      df_certified holds, i is the exact rule's label; the
//                      other points go to a list;
//   k_df_pair          the listed points whose image leaves only the two
//                      lowest w as candidates (the filter keeps the second
//                      lowest's center where there is no candidate pass):
//                      their two exact distances;
//   candidate pass     (df_candidates.cuh) the other listed points: the
//                      centers their bound does not rule out, by the
//                      filter's products again, and their exact distances;
//   k_df_exact         the points left (too many candidates; no candidate
//                      pass): exact distances to every center, least
//                      (distance, index) over the distances below +inf.
//
// The bound: with R_j = ||x - c_j||^2 (real), D_j the exact double
// distance, s the image's scale and A_j = |a|^2 + v_j,
//   |D_j - R_j| <= gamma R_j + absd / s^2   (rounding; absd: underflow)
//   |s sqrt(R_j) - ||a - b_j||| <= eps = uprime (|a| + max_j |b_j|) (images)
//   |A_j - ||a - b_j||^2| <= E_j = kappa (|a|^2 + |b_j|^2) + kAbs, the float
//   dot products on the tensor cores: the factor 4 of init_par_tc_kernels.cuh
//   on SIMT's 2 (2d + 8) u; 3xTF32 adds 32 u for the dropped lo x lo terms
//   and the truncated lo parts (at most 2.5 2^-20 |a_c b_c| a product); with
//   TF32 images the products are exact and uprime carries their 2^-11.
// With norms as computed (kappa covers their own error), A_j - E_j >= |a|^2
// (1 - kappa) + w_j - kAbs and A_i + E_i <= |a|^2 (1 + kappa) + w_i +
// (2 kappa + 2^-21) |b_i|^2 + kAbs (+ one ulp of w_i).  So s^2 D_i <= hi = (sqrt(A_i
// + E_i) + eps)^2 (1 + gamma) + absd and, for every other center, s^2 D_j >=
// lo = (sqrt(A_j - E_j) - eps)^2 (1 - gamma) - absd, at least the value of
// the second lowest w; hi < lo (with margins that cover the double
// arithmetic of the test) proves D_i < D_j for all j != i: the exact rule
// takes i.  Equal or nearly equal distances (ties, duplicate centers, points
// on bisectors) fail the test and are computed exactly.  NaN centers (empty
// clusters) have NaN w and are never taken, as in the exact rule.  The host
// uses the filter only for data with 2^-400 <= max|x| <= 2^400, so that s^2
// and absd are finite and no exact distance overflows.
#ifndef GPUKMEANS_DETAIL_DFILTER_CUH
#define GPUKMEANS_DETAIL_DFILTER_CUH

#include "init_bound.cuh"
#include "tf32.cuh"

namespace gk {

constexpr float kBoxMax = 1048576.f;  // |b_c| of a center's image: 2^20 (|x - mean| s <= 1 for the data)

// What the filter kernel needs besides the assignment's arguments.
struct DFArgs {
  init::FloatImage im;       // kappa of the tensor-core products (see above)
  double absd;               // (d + 1) 2^-1074 s^2: underflow of the exact distance, image units
  const float *na;           // n: |a|^2 of each point's image (fmaf, coordinate order)
  const float *nb;           // k: |b_j|^2 of each center's image (this iteration)
  int *list;                 // n: points left to the exact pass
  // By list position below lcap, what the filter knew of the point: its
  // lowest w (w1, center c1), the center of the second lowest (c2) and the
  // lowest w of every other center (w3); c1 < 0: nothing (k_df_pair).
  float *w1, *w3;
  int *c1, *c2;
  long long lcap;
  int *rest;                 // n: the listed points k_df_pair leaves (to k_df_exact, or first
                             // to the candidate pass, df_candidates.cuh)
  // The candidate pass, by rest position below ccap (0: no such pass): the
  // threshold wex (NaN: none proven), the number of candidates, kDfCand of
  // them a point; rp: those points' packed image (tc_tiles.cuh)
  float *thr;
  int *ccount, *cand;
  float *rp;
  long long ccap;
  unsigned int *cnt;         // [0] points listed this iteration, [1] a center's image out of the
                             // box, [2] the bits of max_j |b_j|^2, [3] the points in rest,
                             // [4] those the candidate pass leaves to k_df_exact (in list)
  unsigned long long *tot;   // [0] points listed, [1] filtered iterations, [2] points given every
                             // center's exact distance (k_df_exact), in the whole fit
};

// The bound's constants for one iteration: the image's (kappa, gamma,
// uprime), absd, and the largest |b_j|^2 of this iteration's centers.
struct DFBound {
  float uprime, kappa;
  double gamma, absd;
  float nbmax;
};
__device__ __forceinline__ DFBound df_bound(const DFArgs &a) {
  return DFBound{a.im.uprime, a.im.kappa, a.im.gamma, a.absd, __uint_as_float(a.cnt[2])};
}

// The radius eps of the image's rounding for a point of image norm^2 na (the
// bound's third line, with the largest center norm of this iteration).
__device__ __forceinline__ double df_eps(float na, int d, const DFBound &a) {
  const double kabs = 7.8886090522101181e-31;
  const double bmax = sqrt((double)a.nbmax * (1.001 + d * 1.2e-7));  // + the norms' rounding
  return (double)a.uprime * (sqrt((double)na) * (1.0 + d * 5.9604644775390625e-08) + bmax) + kabs;
}

// A lower bound of s^2 D_j (D_j: the exact distance of a point of image
// norm^2 na to a center j whose w is wo), or -inf where none is proven
// (NaN, +inf, cancellation).
__device__ __forceinline__ double df_lower(float wo, float na, double eps, const DFBound &a) {
  const double kap = a.kappa, nad = na, kabs = 7.8886090522101181e-31;
  if (!(wo < 3e38f)) return -HUGE_VAL;
  const double lw = nad * (1.0 - kap) + (double)wo - kabs - (nad + fabs((double)wo)) * 8.8817841970012523e-16;
  if (!(lw > 0)) return -HUGE_VAL;
  const double r = sqrt(lw) - eps;
  if (!(r > 0)) return -HUGE_VAL;
  return r * r * (1.0 - a.gamma) * (1.0 - 9.3132257461547852e-10) - a.absd;
}

// An upper bound of s^2 D_i for the center i of lowest w, wi (its norm
// nbi), of a point of image norm^2 na (eps: df_eps); not finite (NaN, inf)
// where none is proven.
__device__ __forceinline__ double df_upper(float wi, float nbi, float na, double eps, const DFBound &a) {
  const double kap = a.kappa, nad = na, kabs = 7.8886090522101181e-31;
  // |a|^2 (1 + kappa) + w_i, its rounding (w rounded down: one ulp), E_i's
  // other term, and the double arithmetic's error (cancellation)
  const double ua = nad * (1.0 + kap) + (double)wi + fabs((double)wi) * 2.384185791015625e-07 +
                    (2.0 * kap + 4.76837158203125e-07) * (double)nbi + kabs +
                    (nad + fabs((double)wi) + (double)nbi) * 8.8817841970012523e-16;
  const double up = sqrt(fmax(ua, 0.0)) + eps;
  return up * up * (1.0 + a.gamma) * (1.0 + 9.3132257461547852e-10) + a.absd;
}

// The candidate pass's threshold for a point whose lowest center is
// bounded by hi (s^2 D_c1 <= hi): a float wex with df_lower(wex) > hi,
// checked here (df_candidates.cuh says why no center of w >= wex can be the
// exact rule's choice); NaN where none is found.  The start inverts
// df_lower's formula, each try after it moves up by 2^-20 of the scale.
__device__ __forceinline__ float df_cand_threshold(double hi, float na, double eps, const DFBound &a) {
  const double kabs = 7.8886090522101181e-31, nad = na;
  if (!(hi < 1e300)) return quiet_nan<float>();
  const double t = (fmax(hi, 0.0) + a.absd) / ((1.0 - a.gamma) * (1.0 - 9.3132257461547852e-10));
  const double r = sqrt(t) + eps, lw = r * r;
  const double w0 = lw - nad * (1.0 - (double)a.kappa) + kabs;
  float w = __double2float_ru(w0 + (nad + fabs(w0)) * 1.7763568394002505e-15);
  for (int tries = 0; tries < 8; ++tries) {
    if (!(w < 3e38f)) break;
    if (df_lower(w, na, eps, a) > hi) return w;
    w = __fadd_ru(w, fmaxf(fabsf(w), na) * 9.5367431640625e-07f);
  }
  return quiet_nan<float>();
}

// Whether the image distances prove that center i (lowest w, wi; its norm
// nbi) is the exact rule's choice; wo: the lowest w of the other centers
// (+inf when there is none).
__device__ __forceinline__ bool df_certified(float wi, float wo, float nbi, float na, int d, const DFBound &a) {
  const double eps = df_eps(na, d, a);
  const double hi = df_upper(wi, nbi, na, eps, a);
  if (!(hi < 1e300)) return false;                    // NaN, inf: not proven
  if (!(wo < 3e38f)) return wo > 0;                   // no other center (+inf), not NaN
  return hi < df_lower(wo, na, eps, a);
}

// Point i to the exact pass, with what the filter knew (DFArgs' w1, c1, c2, w3;
// c1 < 0: nothing).
__device__ __forceinline__ void df_list(long long i, const DFArgs &a, float w1 = 0.f, int c1 = -1, int c2 = -1,
                                        float w3 = 0.f) {
  const unsigned int pos = atomicAdd(&a.cnt[0], 1u);
  a.list[pos] = (int)i;
  if ((long long)pos < a.lcap) {
    a.w1[pos] = w1;
    a.c1[pos] = c1;
    a.c2[pos] = c2;
    a.w3[pos] = w3;
  }
}

// The data's float image, once per handle: xi (n x d, column-major; none
// when nullptr: the packed tiles hold it) and na.  tc: rounded to TF32 (the
// one-mma filter).
static __global__ void k_df_data_image(const double *__restrict__ x, long long n, int d, init::FloatImage im, bool tc,
                                       float *__restrict__ xi, float *__restrict__ na) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float s = 0.f;
  for (int c = 0; c < d; ++c) {
    float a = init::image_coord(x, n, i, c, im);
    if (tc) a = __uint_as_float(tf32_rna(a));
    if (xi) xi[i + n * (long long)c] = a;
    s = fmaf(a, a, s);
  }
  na[i] = s;
}

// The centers' float image (kp x d, column-major; centers k..kp-1 NaN, the
// padding of the tiles) and norms nb (NaN centers NaN); cnt[1] = 1 when a
// center's image leaves the box, cnt[2] = max of the norms (as bits:
// nonnegative floats order as their bits).
static __global__ void k_df_center_image(const double *__restrict__ cen, int k, int kp, int d, init::FloatImage im,
                                         bool tc, float *__restrict__ ci, float *__restrict__ nb, unsigned int *cnt,
                                         const State *st, int max_iter) {
  if (fit_finished(st, max_iter)) return;
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= kp) return;
  if (c >= k) {
    for (int j = 0; j < d; ++j) ci[c + (size_t)kp * j] = __int_as_float(0x7fffffff);
    return;
  }
  bool out = false;
  float q = 0.f;
  for (int j = 0; j < d; ++j) {
    const double v = cen[c + (size_t)k * j];
    float b;
    if (v != v) {
      b = __int_as_float(0x7fffffff);  // empty cluster: never chosen by either rule
    } else {
      b = init::image_value(v, j, im);
      if (tc) b = __uint_as_float(tf32_rna(b));
      out |= !(fabsf(b) <= kBoxMax);
    }
    ci[c + (size_t)kp * j] = b;
    q = fmaf(b, b, q);
  }
  nb[c] = q;
  if (out) cnt[1] = 1u;
  else if (q == q) atomicMax(&cnt[2], __float_as_uint(q));
}

// The points listed this iteration (cnt[0]), added by one thread of the
// first pass over the list (k_df_pair or k_df_settle) to the fit's counts.
__device__ __forceinline__ long long df_count_listed(const DFArgs &fa) {
  const long long m = fa.cnt[0];
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    fa.tot[0] += (unsigned long long)m;
    fa.tot[1] += 1ull;
  }
  return m;
}

// The least d for which the 3xTF32 filter keeps each point's two nearest
// centers for k_df_pair (TcFilterEpi<true>, assign_kernels.cuh).
constexpr int kDfPairMinD = 32;

// The listed points whose image leaves two candidates, one thread a point.
// The filter listed the point with its lowest w (center c1), the center of
// the second lowest (c2) and w3, at most the w of every other center (the
// filter without the pair: c2 = -1).  Where the image proves s^2 D_c1 <= hi
// < df_lower(w3) (df_lower grows with w), every other center is farther
// than c1: the exact rule's choice is the nearer of c1 and c2 by exact
// distances (the lower index of equals).  Most listed points are such: a
// point between two close centers.  The others go to `rest`, with the
// candidate pass's threshold from hi (df_cand_threshold; NaN: not proven).
// Counts the listed points for the fit's exact share.
static __global__ void k_df_pair(const double *__restrict__ x, long long n, int d, const double *__restrict__ cen,
                                 int k, int *__restrict__ labels, State *st, int max_iter, DFArgs fa) {
  if (fit_finished(st, max_iter)) return;
  const long long m = df_count_listed(fa);
  unsigned int ch = 0;
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < m; e += (long long)gridDim.x * blockDim.x) {
    const long long row = fa.list[e];
    bool done = false;
    float thr = quiet_nan<float>();
    if (e < fa.lcap && !fa.cnt[1]) {
      const int c1 = fa.c1[e], c2 = fa.c2[e];
      if (c1 >= 0 && c1 < k) {
        const float na = fa.na[row];
        const DFBound bd = df_bound(fa);
        const double eps = df_eps(na, d, bd);
        const double hi = df_upper(fa.w1[e], fa.nb[c1], na, eps, bd);
        if (hi < 1e300 && c2 >= 0 && c2 < k && hi < df_lower(fa.w3[e], na, eps, bd)) {
          const int lo_c = min(c1, c2), hi_c = max(c1, c2);
          const double dl = exact_dist(x, n, d, row, cen, k, lo_c), dh = exact_dist(x, n, d, row, cen, k, hi_c);
          // (the exact rule on the two, in index order; s^2 D_c1 <= hi: one is taken)
          double bd = pos_inf<double>();
          int bi = -1;
          if (dl < bd) { bd = dl; bi = lo_c; }
          if (dh < bd) { bd = dh; bi = hi_c; }
          const int old = labels[row];
          label_commit(&labels[row], old, bi >= 0 ? bi : label_kept(old), ch);
          done = true;
        } else if (fa.ccap) {
          thr = df_cand_threshold(hi, na, eps, bd);
        }
      }
    }
    if (!done) {
      const unsigned int pos = atomicAdd(&fa.cnt[3], 1u);
      fa.rest[pos] = (int)row;
      if ((long long)pos < fa.ccap) {
        fa.thr[pos] = thr;
        fa.ccount[pos] = 0;
      }
    }
  }
  if (ch && st) atomicAdd(&st->changed, (u64)ch);
}

// k_df_exact: the points k_df_pair left (rest, count cnt[3]), or those the
// candidate pass left (list, count cnt[4]), P a block (counted in tot_every):
// exact distances to every center, least (distance, index) over the
// distances below +inf (none: the label stays).  Threads split the
// centers, each in index order, the P points' chains independent: each
// center value read serves P points, and few points still occupy the
// device.
constexpr int kDfExactThreads = 256;
constexpr int kDfNarrowCenters = 8;  // k up to 64 times this: blocks of 64 threads (k_df_exact)
constexpr size_t kDfExactSmem = 48 * 1024;  // the P points' rows (doubles): at most this

// The points a block takes (P) for d columns: as many as their rows leave
// room for in shared memory, up to 16; 0: the rows do not fit even for 4
// points, and are read from x.  (E of bench.R, d = 128: 16 points a block
// took 55.5 ms an iteration, 4 points 56.7, H200 2026-11-26.)
inline int df_exact_points(int d) {
  for (int p = 16; p >= 4; p /= 2)
    if ((size_t)p * d * sizeof(double) <= kDfExactSmem) return p;
  return 0;
}

// (the least of (d, i) pairs: lower d, then lower index)
__device__ __forceinline__ void df_take(double od, int oi, double &bd, int &bi) {
  if (od < bd || (od == bd && oi < bi)) { bd = od; bi = oi; }
}

// P points a block of Threads; sh: their rows in dynamic shared memory (P d
// doubles), else read from x.  (Threads = 64 where k is small: with 256, D's
// k = 256 gave each thread one center, and the merge of the threads' minima
// cost about what the distances did.  The least (distance, index) over the
// threads does not depend on how they split the centers.)
template <int P, int MinBlocks, int Threads = kDfExactThreads>
__global__ void __launch_bounds__(Threads, MinBlocks)
k_df_exact(const double *__restrict__ x, long long n, int d, const double *__restrict__ cen, int k,
           int *__restrict__ labels, State *st, int max_iter, const int *__restrict__ list,
           const unsigned int *__restrict__ count, bool sh, unsigned long long *tot_every) {
  if (fit_finished(st, max_iter)) return;
  extern __shared__ __align__(16) unsigned char df_smem[];
  double *s_x = reinterpret_cast<double *>(df_smem);  // P x d (row p at p d)
  __shared__ double s_d[Threads / 32][P];
  __shared__ int s_i[Threads / 32][P];
  __shared__ long long s_row[P];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const long long m = *count;
  if (blockIdx.x == 0 && tid == 0) *tot_every += (unsigned long long)m;
  unsigned int ch = 0;
  for (long long e0 = (long long)blockIdx.x * P; e0 < m; e0 += (long long)gridDim.x * P) {
    if (tid < P) s_row[tid] = e0 + tid < m ? (long long)list[e0 + tid] : (long long)list[e0];  // pad: repeat
    __syncthreads();
    if (sh) {
      for (int e = tid; e < P * d; e += Threads) {
        const int p = e / d, j = e - p * d;
        s_x[p * d + j] = x[s_row[p] + n * (long long)j];
      }
      __syncthreads();
    }
    double bd[P];
    int bi[P];
#pragma unroll
    for (int p = 0; p < P; ++p) { bd[p] = pos_inf<double>(); bi[p] = 0x7fffffff; }
    for (int c = tid; c < k; c += Threads) {
      double acc[P];
      {
        const double cv = cen[c];
#pragma unroll
        for (int p = 0; p < P; ++p) {
          const double t = __dsub_rn(sh ? s_x[p * d] : x[s_row[p]], cv);
          acc[p] = __dmul_rn(t, t);
        }
      }
#pragma unroll 4
      for (int j = 1; j < d; ++j) {
        const double cv = cen[c + (size_t)k * j];
#pragma unroll
        for (int p = 0; p < P; ++p) {
          const double t = __dsub_rn(sh ? s_x[p * d + j] : x[s_row[p] + n * (long long)j], cv);
          acc[p] = __dadd_rn(acc[p], __dmul_rn(t, t));
        }
      }
#pragma unroll
      for (int p = 0; p < P; ++p)
        if (acc[p] < bd[p]) { bd[p] = acc[p]; bi[p] = c; }
    }
#pragma unroll
    for (int p = 0; p < P; ++p) {
#pragma unroll
      for (int off = 16; off; off >>= 1)
        df_take(__shfl_xor_sync(0xffffffffu, bd[p], off), __shfl_xor_sync(0xffffffffu, bi[p], off), bd[p], bi[p]);
      if (lane == 0) { s_d[warp][p] = bd[p]; s_i[warp][p] = bi[p]; }
    }
    __syncthreads();
    if (tid < P && e0 + tid < m) {
      double b = s_d[0][tid];
      int i = s_i[0][tid];
      for (int w = 1; w < Threads / 32; ++w) df_take(s_d[w][tid], s_i[w][tid], b, i);
      const long long row = s_row[tid];
      const int old = labels[row];
      label_commit(&labels[row], old, i == 0x7fffffff ? label_kept(old) : i, ch);
    }
    __syncthreads();  // s_row, s_x, s_d, s_i are rewritten by the next points
  }
  if (ch && st) atomicAdd(&st->changed, (u64)ch);
}

}  // namespace gk

#endif
