/* parity.h: the parity contract of the initialisation.  Everything that R,
 * the fit driver (src/init_driver.cpp), the CPU engine (src/cpu_init.cpp) and
 * the CUDA engine (src/cuda/init_pp.cu, init_par.cu) must do the same way, so
 * that a seed gives bitwise-identical centers on both engines in double
 * precision, is defined here once: the constants (rounds, oversampling,
 * candidates per greedy step), the counter-based generator, the order of
 * every floating-point operation that decides a choice, and the tree
 * descent.  Plain C++ (host and device), no R, no CUDA headers.
 *
 * 0. Constants and control flow.  k-means||: at least GK_PAR_ROUNDS rounds
 *    with oversampling l = GK_PAR_OVERSAMPLING * k; more rounds (at most
 *    GK_PAR_MAX_EXTRA) while there are fewer than k candidates, or fewer than
 *    k candidates with positive weight, and the potential is > 0 (the loop
 *    itself is written once, in the driver: src/init_driver.cpp).  Greedy
 *    k-means++ (and the weighted reduction of k-means||) draws
 *    greedy_candidates(k) = 2 + floor(log k) candidates per step; R draws its
 *    uniforms with the same count (R/starts.R asks gk_greedy_candidates()).
 *
 * 1. Squared distance of point i to a center c (a row of x):
 *        s = 0; for j = 0..d-1 in order: t = x_ij - c_j; s = s + t*t
 *    each operation rounded separately (no FMA: the CPU file is compiled with
 *    fp-contract off, the GPU uses __dsub_rn/__dmul_rn/__dadd_rn).  Computed
 *    in double; in single precision the GPU reads the stored floats and
 *    converts them to double first (so the engines then differ: the CUDA
 *    engine stores x - shift in float).
 *    "min(D2, dist)" is (dist < D2 ? dist : D2).
 *
 * 2. Sums of n non-negative values v_0..v_{n-1} (potentials, weights): a
 *    fixed tree of arity GK_SUM_ARITY = 32.  Level 0 is v; element j of level
 *    t+1 is the sequential sum  s = 0; s = s + a[32j]; ...; s = s + a[32j+31]
 *    (stopping at the end of level t).  Levels are built until one has a
 *    single element, the total (n = 1: level 0 itself).  Any number of
 *    threads gives the same bits; the GPU computes level 1 inside a warp
 *    (32 consecutive points) and each further level with one thread per
 *    output element.
 *
 * 3. D^2 sampling with a uniform u in [0, 1) over the tree of step 2:
 *    target = u * total; if !(total > 0) there is nothing to sample (the
 *    degenerate rule, below).  Descend from the root, with offset O = 0:
 *    among the children a_0..a_m of the current node (m < 32), in order, with
 *    q = 0 and, for each child, before = q; q = q + a_j: the chosen child is
 *    the first with a_j > 0 and O + q > target; if there is none (rounding),
 *    the last with a_j > 0.  Then O = O + before(chosen) and descend into it.
 *    At level 0 the chosen child is the point.  This is "the first point
 *    whose inclusive prefix sum exceeds u * total", with the prefix sums
 *    taken along the tree; a point with D2 = 0 is never chosen.
 *
 * 4. Degenerate rule (both engines, k-means++ and the k-means|| reduction):
 *    when every remaining D2 is 0 (all points coincide with chosen centers;
 *    or underflow), the next center is the lowest-index point (candidate) not
 *    chosen yet.  That happens only when there are fewer than k distinct
 *    points, and R then stops with "more cluster centers than distinct data
 *    points." as stats does.
 *
 * 5. Counter-based random numbers for k-means|| (no state, any order, any
 *    thread): u(seed, stream, i) = (splitmix64(seed + (ctr + 1) * GAMMA) >> 11)
 *    * 2^-53 with ctr = stream * 2^40 + i, GAMMA = 0x9E3779B97F4A7C15 and the
 *    splitmix64 finaliser below.  The 64-bit seed is made in R from two
 *    runif() draws: seed = floor(u1 * 2^32) * 2^32 + floor(u2 * 2^32).
 *    Streams: 0 = first center (i = 0), r = oversampling round r (i = point),
 *    GK_PAR_REDUCE_STREAM = the weighted k-means++ reduction (i = draw).
 */
#ifndef GPUKMEANS_PARITY_H
#define GPUKMEANS_PARITY_H

#include <math.h>
#include <stdint.h>

#if defined(__CUDACC__)
#define GK_HD static __host__ __device__ __forceinline__
#else
#define GK_HD static inline
#endif

#define GK_SUM_ARITY 32
#define GK_PAR_ROUNDS 5            /* k-means|| oversampling rounds (at least) */
#define GK_PAR_OVERSAMPLING 2.0    /* k-means|| expects l = 2k samples per round */
#define GK_PAR_MAX_EXTRA 1000      /* extra rounds when fewer than k candidates */
#define GK_PAR_REDUCE_STREAM 0xFFFFFFull
#define GK_SPLITMIX_GAMMA 0x9E3779B97F4A7C15ull

namespace gk {

GK_HD uint64_t splitmix64_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* The oversampling factor l of k-means|| for k clusters. */
GK_HD double par_oversampling(int k) { return GK_PAR_OVERSAMPLING * (double)k; }

/* Candidates per greedy k-means++ step: 2 + floor(log k). */
GK_HD int greedy_candidates(int k) { return 2 + (int)floor(log((double)k)); }

/* Uniform in [0, 1) with 53 random bits. */
GK_HD double counter_uniform(uint64_t seed, uint64_t stream, uint64_t i) {
  uint64_t ctr = (stream << 40) + i;
  uint64_t z = splitmix64_mix(seed + (ctr + 1ull) * GK_SPLITMIX_GAMMA);
  return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

/* Row index from a uniform: floor(u * n), at most n - 1. */
GK_HD int64_t uniform_index(double u, int64_t n) {
  int64_t i = (int64_t)(u * (double)n);
  if (i >= n) i = n - 1;
  if (i < 0) i = 0;
  return i;
}

/* Number of elements of the level above one of length m. */
GK_HD int64_t level_up(int64_t m) { return (m + GK_SUM_ARITY - 1) / GK_SUM_ARITY; }

/* One step of the descent of point 3 over the children a[0..m) of the
 * current node (m <= GK_SUM_ARITY), with offset *off: returns the chosen
 * child (-1 if none is > 0) and adds the sum of the children before it to
 * *off.  Additions only, so no multiply-add can be fused in. */
GK_HD int descend_children(const double *a, int m, double target, double *off) {
  double q = 0.0, chosen_before = 0.0, last_before = 0.0;
  int chosen = -1, last = -1;
  for (int j = 0; j < m; ++j) {
    const double before = q;
    const double v = a[j];
    q = q + v;
    if (v > 0) {
      last = j;
      last_before = before;
      if (*off + q > target) {
        chosen = j;
        chosen_before = before;
        break;
      }
    }
  }
  if (chosen < 0) {
    chosen = last;
    chosen_before = last_before;
  }
  *off = *off + chosen_before;
  return chosen;
}

}  // namespace gk

#endif
