// cpu_bounds.cpp: the distance bounds of the CPU engine's Lloyd loop (see
// cpu_bounds.h for what they do and the internal switches).
//
// ---- Why a proven label is the label of plain Lloyd -------------------------
//
// T is the type of the distances (double, or float in single precision),
// u = epsilon(T) / 2 its unit roundoff, tiny = its smallest subnormal
// (2^-1074, 2^-149).  The bounds themselves are doubles (unit roundoff
// u' = 2^-53 <= u).
//
// Exact distances.  For a point x and a center c (the T values the
// assignment reads), plain Lloyd computes D^ = fl(...fl(fl(t_1^2) + fl(t_2^2))
// ... + fl(t_d^2)) with t^_j = fl(x_j - c_j), every operation rounded on its
// own (no FMA: this file and cpu_lloyd.cpp are compiled without contraction).
// Let D = sum_j (x_j - c_j)^2 (real numbers) and delta = sqrt(D), the true
// Euclidean distance.  A difference is exact or within a factor (1 +- u) (a
// subnormal result is exact); a product within (1 +- u) plus an absolute
// error <= tiny/2 (underflow); the d - 1 additions of nonnegative terms each
// within (1 +- u).  Hence, while nothing overflows,
//     |D^ - D| <= gamma D + eta,   gamma = (d + 2) u / (1 - (d + 2) u),
//                                   eta = d tiny.                        (1)
//
// Margins.  With f = 1 + (2d + 16) u, g = 1 - (2d + 16) u (both exact in
// double), s = sqrt(d) 2^ceil((log2(tiny) + 4) / 2) (s^2 >= 16 eta):
//   upper(D^) = fl(fl(fl(sqrt(D^)) f) + s) >= delta, since by (1)
//       delta <= sqrt(D^ / (1 - gamma)) + sqrt(eta / (1 - gamma)) and
//       f (1 - u')^3 >= 1 + (2d + 12) u >= (1 - gamma)^-1/2,
//       s (1 - u') >= sqrt(eta / (1 - gamma));
//   lower(D^) = max(0, fl(fl(fl(sqrt(D^)) g) - s)) <= delta, likewise
//       (g (1 + u')^3 <= (1 + gamma)^-1/2 and s >= sqrt(eta)); when D^
//       overflowed to Inf, some intermediate exceeded the largest T, so
//       delta >= 2^(max_exponent / 2 - 1) = linf (2^511, 2^63).
//
// The test.  U >= delta(x, c_a) (own center a) and L <= delta(x, c_j) for
// every j != a whose center has no NaN.  If
//       U < umax = 2^((max_exponent - 8) / 2)  and  L > thr(U) = fl(fl(U f) + s),
// then L >= U f (1 - u')^2 + s (1 - u') - tiny' =: U h + s' (tiny' = 2^-1075
// for a subnormal product) and, as h^2 >= (1 + gamma) / (1 - gamma) and
// s'^2 (1 - gamma) >= 2 eta,
//       D^_j >= (1 - gamma) L^2 - eta > (1 - gamma)(U^2 h^2 + s'^2) - eta
//            >= (1 + gamma) U^2 + eta >= D^_a
// for every such j: D^_a is finite (U < umax keeps D_a and every
// intermediate far below overflow) and strictly smaller than every other
// non-NaN distance; a center with a NaN coordinate has D^_j = NaN and is
// never chosen.  So the strict-'<' scan in index order (ties to the lowest
// index, NaN never, label 0 when nothing is below Inf) picks a: proven.  A
// competitor that could tie is never excluded.  NaN and Inf make every
// comparison of the test false.
//
// Movements.  mv_j >= ||c_j(new) - c_j(old)|| (true norm of the T values):
// with Delta_i = fl(new_i - old_i) and M = max |Delta_i| (exact), the sum
// S = sum fl(fl(|Delta_i| / M)^2) >= 1 has no harmful underflow, and
//       mv = fl(fl(fl(M fl(sqrt(S))) fm) + 2^-1000),  fm = 1 + (2d + 16) u'
// covers the rounding of the differences, the quotients, the sum and the
// square root (fm (1 - u')^4 >= (1 - u')^-1 sqrt((1 + d 2^-1073) /
// (1 - u')^(d + 2))) and subnormal products (the 2^-1000).  M = 0 means
// the center did not move: mv = 0 and the bounds are left as they are.  A
// NaN or Inf difference gives mv = Inf.  A center with NaN coordinates both
// before and after (an empty cluster) stays out of every competition:
// mv = 0, and so does one that becomes NaN because its cluster emptied (it
// has no point of its own).  One that becomes NaN with points (the sums
// overflowed) or stops being NaN, and any infinite movement, make the
// iteration full (every bound set anew).  Triangle inequality: delta_new <= delta_old + mv (upper bounds:
// add_up) and delta_new >= delta_old - mv (lower bounds: sub_down), with
//   add_up(a, b) = fl(fl(a + b) kup) >= a + b          (kup = 1 + 2^-51, a, b >= 0)
//   sub_down(a, b) = fl(fl(a - b) kdn) <= a - b        (kdn = 1 - 2^-51)
// (a subnormal sum or difference is exact; a result <= 0 stays <= 0, a
// valid lower bound of a distance).  Yinyang's group bounds, brought up to
// date lazily, subtract the sum of the group's largest movements since
// their version v, bounded by fl(fl(cum_up[now] - cum_dn[v]) kup) where
// cum_up / cum_dn add the movements rounded up / down (add_up, add_dn).
// Group bounds are stored as floats rounded down (st_dn).  Every other
// bound is applied lazily the same way: U is stored as round_up(U - cu_dn)
// and read as round_up(stored + cu_up), a lower bound L stored as
// add_dn(L, c_dn) and read as sub_down(stored, c_up), where cu / c sum the
// movements that apply to it since the last full iteration, rounded up
// (_up) and down (_dn); as cu_up(now) - cu_dn(then) >= the true sum of the
// movements in between, the bounds read are those of the eager updates or
// safer.
//
// Hamerly with the second nearest center.  Hamerly's one lower bound is
// split in two: l2 for the second nearest center j2 (found by the last
// scan) and l3 for all the others.  A point that the test above (with
// L = min(l2, l3)) leaves unproven, even with U tightened, but whose l3
// passes it, needs only the exact distance to j2: every other center has
// D^_j > D^_a, so the label is the first of a and j2 under the exact rule
// (lexicographic minimum of (D^, index), D^_a finite).  Points on the
// border of two clusters cost two distances instead of k.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include "cpu_bounds.h"

#include "cpu_block.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "cpu_engine.h"
#include "threads.h"

namespace gk {
namespace bounds {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kUp = 1.0 + 0x1p-51;
constexpr double kDn = 1.0 - 0x1p-51;

inline double add_up(double a, double b) { return (a + b) * kUp; }
inline double add_dn(double a, double b) { return (a + b) * kDn; }
inline double sub_down(double a, double b) { return (a - b) * kDn; }
// r = fl(a + b) rounded up, of either sign (a subnormal r is exact).
inline double round_up(double r) { return r >= 0.0 ? r * kUp : r * kDn; }

// The exact squared distance of plain Lloyd (assign_block's arithmetic).
template <typename T>
inline T dist_one(const T* xi, const T* c, int d) {
  T t = xi[0] - c[0];
  T s = t * t;
  for (int j = 1; j < d; ++j) {
    t = xi[j] - c[j];
    s += t * t;
  }
  return s;
}

// acc[q] = the exact squared distance of xi to the m centers of cg (d x m,
// coordinate-major): SIMD across centers, coordinates in order, 16 centers
// at a time held in registers through all coordinates.  Reads and writes up
// to 15 values past the end of cg and acc (the callers pad both; the values
// past m mean nothing).
constexpr int kDistPad = 16;
template <typename T>
inline __attribute__((always_inline)) void dist_many_impl(const T* __restrict xi, int d, const T* __restrict cg,
                                                          int m, T* __restrict acc) {
  constexpr int W = kDistPad;
  for (int q0 = 0; q0 < m; q0 += W) {
    T a[W];
    {
      const T x0 = xi[0];
      const T* c0 = cg + q0;
#pragma omp simd
      for (int l = 0; l < W; ++l) {
        T t = x0 - c0[l];
        a[l] = t * t;
      }
    }
    for (int c = 1; c < d; ++c) {
      const T xc = xi[c];
      const T* cc = cg + static_cast<std::size_t>(c) * m + q0;
#pragma omp simd
      for (int l = 0; l < W; ++l) {
        T t = xc - cc[l];
        a[l] += t * t;
      }
    }
#pragma omp simd
    for (int l = 0; l < W; ++l) acc[q0 + l] = a[l];  // acc holds m + kDistPad values
  }
}

GK_CLONES void dist_many(const double* xi, int d, const double* cg, int m, double* acc) {
  dist_many_impl<double>(xi, d, cg, m, acc);
}
GK_CLONES void dist_many(const float* xi, int d, const float* cg, int m, float* acc) {
  dist_many_impl<float>(xi, d, cg, m, acc);
}

// out[q] = the exact squared distance between column-major blocks (ld
// apart) of m points and m centers: SIMD across points.
template <typename T>
inline __attribute__((always_inline)) void pair_dist_impl(const T* __restrict xb, const T* __restrict cb, int ld,
                                                          int d, int m, T* __restrict out) {
#pragma omp simd
  for (int q = 0; q < m; ++q) {
    T t = xb[q] - cb[q];
    out[q] = t * t;
  }
  for (int c = 1; c < d; ++c) {
    const T* xc = xb + static_cast<std::size_t>(c) * ld;
    const T* cc = cb + static_cast<std::size_t>(c) * ld;
#pragma omp simd
    for (int q = 0; q < m; ++q) {
      T t = xc[q] - cc[q];
      out[q] += t * t;
    }
  }
}

GK_CLONES void pair_dist(const double* xb, const double* cb, int ld, int d, int m, double* out) {
  pair_dist_impl<double>(xb, cb, ld, d, m, out);
}
GK_CLONES void pair_dist(const float* xb, const float* cb, int ld, int d, int m, float* out) {
  pair_dist_impl<float>(xb, cb, ld, d, m, out);
}

// The smallest of v[a..b) that is not NaN (Inf when none).
template <typename T>
inline T min_range(const T* v, int a, int b) {
  constexpr int W = 8;
  const T inf = std::numeric_limits<T>::infinity();
  T lane[W];
  for (int l = 0; l < W; ++l) lane[l] = inf;
  int q = a;
  for (; q + W <= b; q += W) {
#pragma omp simd
    for (int l = 0; l < W; ++l) lane[l] = v[q + l] < lane[l] ? v[q + l] : lane[l];
  }
  T r = inf;
  for (; q < b; ++q) r = v[q] < r ? v[q] : r;
  for (int l = 0; l < W; ++l) r = lane[l] < r ? lane[l] : r;
  return r;
}

// The first position of the value a (below Inf) in v[0..m) other than `skip`.
template <typename T>
inline int first_of(const T* v, int m, T a, int skip) {
  for (int q = 0; q < m; ++q)
    if (q != skip && v[q] == a) return q;
  return -1;
}

// Of v[0..m): *m1 the smallest value below Inf (NaN never), its first
// position (returned; -1 when there is none, *m1 = Inf), *m2 the smallest
// of the other positions (so equal to *m1 on a tie).
template <typename T>
inline int min_two(const T* v, int m, T* m1, T* m2) {
  const T inf = std::numeric_limits<T>::infinity();
  const T a = min_range(v, 0, m);
  *m1 = a;
  *m2 = inf;
  if (!(a < inf)) return -1;
  const int q1 = first_of(v, m, a, -1);
  const T l = min_range(v, 0, q1), r = min_range(v, q1 + 1, m);
  *m2 = l < r ? l : r;
  return q1;
}

// assign_block() of cpu_lloyd.cpp (the same labels and best distances, the
// same arithmetic) that also keeps, of the other centers, the smallest
// non-NaN distance (second), a center at that distance (lab2) and the
// smallest distance of the rest (third).  x is read at x[c * n + i0 + p].
template <typename T>
inline __attribute__((always_inline)) void assign_block3_impl(const T* __restrict x, std::int64_t n, int d, int k,
                                                              const T* __restrict cen, std::int64_t i0, int B,
                                                              int* __restrict lab, T* __restrict best,
                                                              int* __restrict lab2, T* __restrict second,
                                                              T* __restrict third) {
  const T inf = std::numeric_limits<T>::infinity();
  T dd[kMaxBlock];
  for (int p = 0; p < B; ++p) {
    best[p] = second[p] = third[p] = inf;
    lab[p] = lab2[p] = 0;
  }
  for (int j = 0; j < k; ++j) {
    block_sq_distances(x, n, d, cen + static_cast<std::int64_t>(j) * d, i0, B, dd);
#pragma omp simd
    for (int p = 0; p < B; ++p) {
      const T v = dd[p];
      const bool better = v < best[p];   // strict: ties to the lower index, NaN never
      const bool below2 = v < second[p];  // (implied by better)
      third[p] = below2 ? second[p] : (v < third[p] ? v : third[p]);
      second[p] = better ? best[p] : (below2 ? v : second[p]);
      lab2[p] = better ? lab[p] : (below2 ? j : lab2[p]);
      best[p] = better ? v : best[p];
      lab[p] = better ? j : lab[p];
    }
  }
}

GK_CLONES void assign_block3(const double* x, std::int64_t n, int d, int k, const double* cen, std::int64_t i0,
                             int B, int* lab, double* best, int* lab2, double* second, double* third) {
  assign_block3_impl<double>(x, n, d, k, cen, i0, B, lab, best, lab2, second, third);
}
GK_CLONES void assign_block3(const float* x, std::int64_t n, int d, int k, const float* cen, std::int64_t i0,
                             int B, int* lab, float* best, int* lab2, float* second, float* third) {
  assign_block3_impl<float>(x, n, d, k, cen, i0, B, lab, best, lab2, second, third);
}

// assign_block() for Yinyang: besides the label and its distance, per
// group g the smallest (gm1[g * B + p]) and second smallest (gm2, equal on
// a tie) non-NaN distance of point p to the group's centers.
template <typename T>
inline __attribute__((always_inline)) void assign_block_groups_impl(
    const T* __restrict x, std::int64_t n, int d, int k, const T* __restrict cen, const int* __restrict grp, int G,
    std::int64_t i0, int B, int* __restrict lab, T* __restrict best, T* __restrict gm1, T* __restrict gm2) {
  const T inf = std::numeric_limits<T>::infinity();
  T dd[kMaxBlock];
  for (int p = 0; p < B; ++p) {
    best[p] = inf;
    lab[p] = 0;
  }
  for (std::size_t e = 0; e < static_cast<std::size_t>(G) * B; ++e) gm1[e] = gm2[e] = inf;
  for (int j = 0; j < k; ++j) {
    block_sq_distances(x, n, d, cen + static_cast<std::int64_t>(j) * d, i0, B, dd);
    T* g1 = gm1 + static_cast<std::size_t>(grp[j]) * B;
    T* g2 = gm2 + static_cast<std::size_t>(grp[j]) * B;
#pragma omp simd
    for (int p = 0; p < B; ++p) {
      const T v = dd[p];
      const bool better = v < best[p];
      best[p] = better ? v : best[p];
      lab[p] = better ? j : lab[p];
      const bool lt1 = v < g1[p];
      const T o2 = v < g2[p] ? v : g2[p];
      g2[p] = lt1 ? g1[p] : o2;
      g1[p] = lt1 ? v : g1[p];
    }
  }
}

GK_CLONES void assign_block_groups(const double* x, std::int64_t n, int d, int k, const double* cen, const int* grp,
                                   int G, std::int64_t i0, int B, int* lab, double* best, double* gm1, double* gm2) {
  assign_block_groups_impl<double>(x, n, d, k, cen, grp, G, i0, B, lab, best, gm1, gm2);
}
GK_CLONES void assign_block_groups(const float* x, std::int64_t n, int d, int k, const float* cen, const int* grp,
                                   int G, std::int64_t i0, int B, int* lab, float* best, float* gm1, float* gm2) {
  assign_block_groups_impl<float>(x, n, d, k, cen, grp, G, i0, B, lab, best, gm1, gm2);
}

// ||b - a|| rounded up (see the top of the file): 0 when equal, Inf when a
// difference is not finite.
template <typename T>
double movement(const T* a, const T* b, int d, double fm) {
  double M = 0.0;
  for (int c = 0; c < d; ++c) {
    const double dl = std::fabs(static_cast<double>(b[c]) - static_cast<double>(a[c]));
    if (!(dl <= std::numeric_limits<double>::max())) return kInf;
    M = std::max(M, dl);
  }
  if (M == 0.0) return 0.0;
  double S = 0.0;
  for (int c = 0; c < d; ++c) {
    const double r = std::fabs(static_cast<double>(b[c]) - static_cast<double>(a[c])) / M;
    S += r * r;
  }
  const double mv = M * std::sqrt(S);
  return mv * fm + 0x1p-1000;
}

template <typename T>
bool has_nan(const T* c, int d) {
  for (int j = 0; j < d; ++j)
    if (std::isnan(c[j])) return true;
  return false;
}

// Groups of centers for Yinyang: a few Lloyd iterations on the initial
// centers (double, k x d column-major) from G evenly spaced ones; only the
// speed depends on them.  Returns the group of every center (0..G'-1, no
// empty group).
std::vector<int> group_centers(const double* c0, int k, int d, int G) {
  std::vector<int> grp(k, 0);
  if (G <= 1) return grp;
  auto at = [&](int j, int c) { return c0[j + static_cast<std::size_t>(k) * c]; };
  std::vector<double> gc(static_cast<std::size_t>(G) * d);
  for (int g = 0; g < G; ++g) {
    const int j = static_cast<int>(static_cast<std::int64_t>(g) * k / G);
    for (int c = 0; c < d; ++c) gc[static_cast<std::size_t>(g) * d + c] = at(j, c);
  }
  std::vector<double> sum(static_cast<std::size_t>(G) * d);
  std::vector<int> cnt(G);
  for (int it = 0; it < 5; ++it) {
    for (int j = 0; j < k; ++j) {
      double best = kInf;
      int bg = 0;
      for (int g = 0; g < G; ++g) {
        double s = 0.0;
        for (int c = 0; c < d; ++c) {
          const double t = at(j, c) - gc[static_cast<std::size_t>(g) * d + c];
          s += t * t;
        }
        if (s < best) {
          best = s;
          bg = g;
        }
      }
      grp[j] = bg;
    }
    std::fill(sum.begin(), sum.end(), 0.0);
    std::fill(cnt.begin(), cnt.end(), 0);
    for (int j = 0; j < k; ++j) {
      ++cnt[grp[j]];
      for (int c = 0; c < d; ++c) sum[static_cast<std::size_t>(grp[j]) * d + c] += at(j, c);
    }
    for (int g = 0; g < G; ++g)
      if (cnt[g] > 0)
        for (int c = 0; c < d; ++c)
          gc[static_cast<std::size_t>(g) * d + c] = sum[static_cast<std::size_t>(g) * d + c] / cnt[g];
  }
  // renumber without empty groups
  std::vector<int> id(G, -1);
  int next = 0;
  for (int j = 0; j < k; ++j)
    if (id[grp[j]] < 0) id[grp[j]] = next++;
  for (int j = 0; j < k; ++j) grp[j] = id[grp[j]];
  return grp;
}

}  // namespace

// ---- the plan -------------------------------------------------------------------

Plan choose_plan(std::int64_t n, int d, int k, double unit_roundoff) {
  Plan p;
  if (const char* lg = std::getenv("GPUKMEANS_CPU_BOUNDS_LOG")) p.log = lg;
  const char* env = std::getenv("GPUKMEANS_CPU_BOUNDS");
  const std::string mode = env ? env : "";
  // The margins need (2d + 16) u to be small (float: d up to ~8000).
  const bool sound = (2.0 * d + 16.0) * unit_roundoff <= 1e-3;
  if (mode == "off" || !sound) return p;
  if (!mode.empty() && mode != "auto") {
    std::string m = mode;
    const std::string cyc = ":cycle";
    bool cycle = false;
    if (m.size() > cyc.size() && m.compare(m.size() - cyc.size(), cyc.size(), cyc) == 0) {
      cycle = true;
      m.resize(m.size() - cyc.size());
    }
    if (m == "hamerly") {
      p.variant = Variant::kHamerly;
    } else if (m.compare(0, 7, "yinyang") == 0) {
      p.variant = Variant::kYinyang;
      p.groups = (k + 5) / 10;
      if (m.size() > 8 && m[7] == ':') p.groups = std::atoi(m.c_str() + 8);
      p.groups = std::max(1, std::min(p.groups, k));
    }
    if (p.variant != Variant::kPlain) {
      p.adaptive = false;
      p.cycle = cycle;
      return p;
    }
    // unknown: as auto
  }
  // Auto (measured on blobs and uniform data, 2e4 to 2e5 points, k = 2 to
  // 1000, d = 2 to 64, inst/bench/bench_convergence_cpu.R): bounds cost a
  // few operations and ~40 bytes of memory traffic per point and iteration
  // whatever k, so they pay once an exact assignment costs clearly more
  // (k >= 6, k d >= 12) on a problem that is not tiny.  Hamerly (with the
  // second nearest center) up to k = 150 max(1, d / 4) (in low dimension
  // more centers are near each point), Yinyang beyond, with k / 40 groups
  // (fewer than Ding et al.'s k / 10: with distances SIMD across the
  // centers of a group, the per-group work dominates sooner).
  if (k < 6 || static_cast<double>(k) * d < 12.0 || static_cast<double>(n) * k < 20000.0) return p;
  if (k <= 150.0 * std::max(1.0, d / 4.0)) {
    p.variant = Variant::kHamerly;
    return p;
  }
  p.variant = Variant::kYinyang;
  // At most what 4 bytes per group and point allow within the size of the
  // data itself or 64 MiB.
  int G = (k + 20) / 40;
  const double budget = std::max(8.0 * d * static_cast<double>(n), 64.0 * 1024 * 1024);
  const double cap = budget / (4.0 * static_cast<double>(n));
  if (G > cap) G = static_cast<int>(cap);
  p.groups = std::max(2, G);
  return p;
}

// ---- the bounds ---------------------------------------------------------------------

constexpr int kB = 256;   // at most this many points per block of the bounded passes
constexpr int kGB = 64;   // points per block of Yinyang's full pass

// One thread's scratch, allocated with the bounds (never inside a parallel
// region): the gathered rows and own centers of a block's unproven points
// (column-major, bsz_ apart), one row, distances to a group (or to all k
// centers), Yinyang's per-group values.
template <typename T>
struct Bounds<T>::Work {
  std::vector<T> xb, cb, xi, acc, fgm1, fgm2, gm1, gm2;
  std::vector<double> lnew;
  std::vector<int> gj1;
  std::vector<unsigned char> comp;
  Work(int bsz, int d, int k, int G)
      : xb(static_cast<std::size_t>(bsz) * d), cb(static_cast<std::size_t>(bsz) * d), xi(d),
        acc(static_cast<std::size_t>(k) + kDistPad),
        fgm1(G > 1 ? static_cast<std::size_t>(G) * kGB : 0), fgm2(G > 1 ? static_cast<std::size_t>(G) * kGB : 0),
        gm1(G), gm2(G), lnew(G), gj1(G), comp(G) {}
};

template <typename T>
Bounds<T>::~Bounds() = default;

template <typename T>
Bounds<T>::Bounds(const T* x, std::int64_t n, int d, int k, const Plan& plan, const double* centers0, int threads)
    : x_(x), n_(n), d_(d), k_(k), variant_(plan.variant) {
  using L = std::numeric_limits<T>;
  const double u = static_cast<double>(L::epsilon()) / 2.0;
  f_ = 1.0 + (2.0 * d + 16.0) * u;
  g_ = 1.0 - (2.0 * d + 16.0) * u;
  s_ = std::ldexp(std::sqrt(static_cast<double>(d)), (L::min_exponent - L::digits + 4) / 2);
  umax_ = std::ldexp(1.0, (L::max_exponent - 8) / 2);
  linf_ = std::ldexp(1.0, L::max_exponent / 2 - 1);
  fm_ = 1.0 + (2.0 * d + 16.0) * 0x1p-53;
  use_screen_ = plan.variant == Variant::kHamerly && screen_wanted(d, k);

  grp_ = group_centers(centers0, k, d, plan.variant == Variant::kYinyang ? plan.groups : 1);
  G_ = 1 + *std::max_element(grp_.begin(), grp_.end());
  if (variant_ == Variant::kYinyang && G_ == 1) variant_ = Variant::kHamerly;
  gs_.assign(G_ + 1, 0);
  for (int j = 0; j < k; ++j) ++gs_[grp_[j] + 1];
  for (int g = 0; g < G_; ++g) gs_[g + 1] += gs_[g];
  perm_.resize(k);
  {
    std::vector<int> pos(gs_.begin(), gs_.end() - 1);
    for (int j = 0; j < k; ++j) perm_[pos[grp_[j]]++] = j;  // index order within a group
  }
  cur_.assign(static_cast<std::size_t>(k) * d, T(0));
  ct_.assign(static_cast<std::size_t>(k) * d + kDistPad, T(0));  // dist_many reads past a group's end
  live_.assign(k, 1);
  mv_u_.assign(k, 0.0);
  mv_l_.assign(k, 0.0);
  for (auto* v : {&cu_up_, &cu_dn_, &c2_up_, &c2_dn_, &cx_up_, &cx_dn_}) v->assign(k, 0.0);
  uadj_.assign(n, 0.0);
  l3adj_.assign(n, 0.0);
  if (variant_ == Variant::kHamerly) {
    l2adj_.assign(n, 0.0);
    j2_.assign(n, 0);
  } else {
    stamp_.assign(n, 0);
    glo_.assign(static_cast<std::size_t>(n) * G_, 0.0f);
    // Yinyang's group bounds are floats in units of sig_ = 2^e (exact
    // scaling), e from the magnitude of the data (a sample of rows) and of
    // the centers, so that distances are near 1 in float's wide range.
    // (x streamed, nullptr here: the centers alone; the scale changes the
    // bounds' precision, never a label)
    double mx = 0.0;
    const std::int64_t step = std::max<std::int64_t>(1, n / 4096);
    for (int c = 0; c < d; ++c) {
      if (x)
        for (std::int64_t i = 0; i < n; i += step) mx = std::max(mx, std::fabs(static_cast<double>(x[i + c * n])));
      for (int j = 0; j < k; ++j) {
        const double v = std::fabs(centers0[j + static_cast<std::size_t>(k) * c]);
        if (v <= std::numeric_limits<double>::max()) mx = std::max(mx, v);
      }
    }
    int e = mx > 0.0 ? std::ilogb(mx) + 2 + static_cast<int>(std::ceil(0.5 * std::log2(static_cast<double>(d)))) : 0;
    e = std::max(-400, std::min(400, e));
    sig_ = std::ldexp(1.0, e);
    isig_ = std::ldexp(1.0, -e);
  }
  // blocks of the bounded passes: at most ~512 KiB of gathered rows
  bsz_ = std::max(16, std::min(kB, 65536 / std::max(1, d)));
  for (int t = 0; t < std::max(1, threads); ++t) work_.emplace_back(bsz_, d, k, G_);
}

// A stored group bound: a float <= v / sig_ when v > 0 (branch-free: w (1 -
// 2^-23) - 2^-149 rounded to float is below w, subnormal floats included),
// <= 0 (a bound of any distance) when v <= 0, at most the largest float.
template <typename T>
float Bounds<T>::st_dn(double v) const {
  return static_cast<float>(std::min(v * isig_ * (1.0 - 0x1p-23) - 0x1p-149,
                                     static_cast<double>(std::numeric_limits<float>::max())));
}

template <typename T>
double Bounds<T>::upper(T D) const {
  if (!(D < std::numeric_limits<T>::infinity())) return static_cast<double>(D);  // Inf, NaN: never proves
  return std::sqrt(static_cast<double>(D)) * f_ + s_;
}

// lower(D^) of the top of the file; Inf (overflow) gives linf, NaN (a
// center with NaN coordinates, never chosen) 0.
template <typename T>
double Bounds<T>::lower(T D) const {
  if (!(D < std::numeric_limits<T>::infinity())) return D == std::numeric_limits<T>::infinity() ? linf_ : 0.0;
  return std::max(0.0, std::sqrt(static_cast<double>(D)) * g_ - s_);
}

// U of point i (label a) now, and setting it: stored as U - cu_dn[a] (both
// rounded up), read as that + cu_up[a] >= U + the movements of a since.
template <typename T>
double Bounds<T>::eff_u(std::int64_t i, int a) const {
  return round_up(uadj_[i] + cu_up_[a]);
}

template <typename T>
void Bounds<T>::set_u(std::int64_t i, int a, double u) {
  uadj_[i] = round_up(u - cu_dn_[a]);
}

template <typename T>
void Bounds<T>::set_centers(const T* cen_rm) {
  std::copy(cen_rm, cen_rm + static_cast<std::size_t>(k_) * d_, cur_.begin());
  for (int g = 0; g < G_; ++g) {
    const int m = gs_[g + 1] - gs_[g];
    T* blk = ct_.data() + static_cast<std::size_t>(gs_[g]) * d_;
    for (int q = 0; q < m; ++q) {
      const T* c = cen_rm + static_cast<std::size_t>(perm_[gs_[g] + q]) * d_;
      for (int cc = 0; cc < d_; ++cc) blk[static_cast<std::size_t>(cc) * m + q] = c[cc];
    }
  }
  for (int j = 0; j < k_; ++j) live_[j] = !has_nan(cen_rm + static_cast<std::size_t>(j) * d_, d_);
}

template <typename T>
void Bounds<T>::begin_full(const T* cen_rm) {
  set_centers(cen_rm);
  if (use_screen_ && variant_ == Variant::kHamerly) screen_.prepare(cen_rm, k_, d_);
  version_ = 0;
  cum_up_.assign(G_, 0.0);
  cum_dn_.assign(G_, 0.0);
  for (auto* v : {&cu_up_, &cu_dn_, &c2_up_, &c2_dn_, &cx_up_, &cx_dn_}) std::fill(v->begin(), v->end(), 0.0);
}

template <typename T>
bool Bounds<T>::begin_bounded(const T* cen_rm, const int* size) {
  double top0 = 0.0, top1 = 0.0;
  int tj0 = -1;
  for (int j = 0; j < k_; ++j) {
    const T* nw = cen_rm + static_cast<std::size_t>(j) * d_;
    const bool live = !has_nan(nw, d_);
    double mv;
    if (live_[j] && live) {
      mv = movement(cur_.data() + static_cast<std::size_t>(j) * d_, nw, d_, fm_);
    } else if (!live && (!live_[j] || size[j] == 0)) {
      mv = 0.0;  // NaN (an empty cluster): out of every competition, and no point of its own
    } else {
      return false;  // NaN with points of its own (overflow), or a number again
    }
    if (mv == kInf) return false;
    mv_u_[j] = mv_l_[j] = mv;
    if (mv > top0) {
      top1 = top0;
      top0 = mv;
      tj0 = j;
    } else if (mv > top1) {
      top1 = mv;
    }
  }
  // The sums (only where something moved: a bound whose centers stay is
  // left exactly as it is).
  for (int j = 0; j < k_; ++j) {
    const double mu = mv_u_[j], ml = mv_l_[j], mx = j == tj0 ? top1 : top0;
    if (mu != 0.0) {
      cu_up_[j] = add_up(cu_up_[j], mu);
      cu_dn_[j] = add_dn(cu_dn_[j], mu);
    }
    if (ml != 0.0) {
      c2_up_[j] = add_up(c2_up_[j], ml);
      c2_dn_[j] = add_dn(c2_dn_[j], ml);
    }
    if (mx != 0.0) {
      cx_up_[j] = add_up(cx_up_[j], mx);
      cx_dn_[j] = add_dn(cx_dn_[j], mx);
    }
  }
  if (variant_ == Variant::kYinyang) {
    const std::size_t base = static_cast<std::size_t>(version_) * G_;
    cum_up_.resize(base + 2 * static_cast<std::size_t>(G_));
    cum_dn_.resize(base + 2 * static_cast<std::size_t>(G_));
    for (int g = 0; g < G_; ++g) {
      double m = 0.0;
      for (int q = gs_[g]; q < gs_[g + 1]; ++q) m = std::max(m, mv_l_[perm_[q]]);
      cum_up_[base + G_ + g] = m != 0.0 ? add_up(cum_up_[base + g], m) : cum_up_[base + g];
      cum_dn_[base + G_ + g] = m != 0.0 ? add_dn(cum_dn_[base + g], m) : cum_dn_[base + g];
    }
  }
  ++version_;
  set_centers(cen_rm);
  if (use_screen_ && variant_ == Variant::kHamerly) screen_.prepare(cen_rm, k_, d_);  // for the scans
  return true;
}

// How far the centers of group g moved, at most, between version `stamp`
// and now (rounded up; Inf when unknown).
template <typename T>
double Bounds<T>::drift(int g, int stamp) const {
  const double dl =
      cum_up_[static_cast<std::size_t>(version_) * G_ + g] - cum_dn_[static_cast<std::size_t>(stamp) * G_ + g];
  return dl >= 0.0 ? dl * kUp : kInf;
}

// Hamerly: the bounds of point i (label a) from an exact pass over all
// centers (b the distance to a, j2 a center at the smallest distance s2 of
// the others, s3 the smallest distance of the rest).
template <typename T>
void Bounds<T>::set_hamerly(std::int64_t i, int a, T b, int j2, T s2, T s3) {
  set_u(i, a, upper(b));
  l2adj_[i] = add_dn(lower(s2), c2_dn_[j2]);
  l3adj_[i] = add_dn(lower(s3), cx_dn_[a]);
  j2_[i] = j2;
}

// set_hamerly() for a point certified by the screen, whose lower bounds on
// the real distances to j2 and to every other center come from the screen
// (+Inf: no such center with numbers, as lower(Inf) for an exact distance).
template <typename T>
void Bounds<T>::set_hamerly_screened(std::int64_t i, int a, T b, int j2, double l2, double l3) {
  const double inf = std::numeric_limits<double>::infinity();
  if (!(l2 < inf)) j2 = a == 0 ? 1 : 0;  // (the screen needs k >= 2)
  set_u(i, a, upper(b));
  l2adj_[i] = add_dn(l2 < inf ? l2 : linf_, c2_dn_[j2]);
  l3adj_[i] = add_dn(l3 < inf ? l3 : linf_, cx_dn_[a]);
  j2_[i] = j2;
}

// Hamerly's full pass through the screen: a certified point gets the exact
// distance to its center (the upper bound) and the screen's lower bounds;
// any other point the exact distances of assign_block3, as without it.
template <typename T>
std::int64_t Bounds<T>::hamerly_full_screened(std::int64_t lo, std::int64_t hi, int* labels, std::int64_t* cnt,
                                              std::int64_t* evals) {
  const T inf = std::numeric_limits<T>::infinity();
  const int B = block_size<T>(d_);
  int cand[kMaxBlock], cand2[kMaxBlock];
  unsigned char ok[kMaxBlock];
  double lo2[kMaxBlock], lo3[kMaxBlock];
  T dd[kMaxBlock];
  std::int64_t changed = 0, ev = 0;
  for (std::int64_t i0 = lo; i0 < hi; i0 += B) {
    const int nb = static_cast<int>(std::min<std::int64_t>(B, hi - i0));
    const int m = nb - nb % kScreenTile;
    if (m > 0) screen_.screen3(x_, n_, i0, m, cand, ok, cand2, lo2, lo3);
    for (int p = m; p < nb; ++p) {
      cand[p] = 0;
      ok[p] = 0;
    }
    block_sq_distances_own(x_, n_, d_, cur_.data(), cand, i0, nb, dd);
    for (int p = 0; p < nb; ++p) {
      const std::int64_t i = i0 + p;
      int a;
      if (ok[p] && dd[p] < inf) {
        a = cand[p];
        set_hamerly_screened(i, a, dd[p], cand2[p], lo2[p], lo3[p]);
        ev += 1;
      } else {
        int a2;
        T b, s2, s3;
        assign_block3(x_, n_, d_, k_, cur_.data(), i, 1, &a, &b, &a2, &s2, &s3);
        set_hamerly_block(i, 1, &a, &b, &a2, &s2, &s3);
        ev += k_;
      }
      if (labels[i] != a) {
        labels[i] = a;
        ++changed;
      }
      ++cnt[a];
    }
  }
  *evals += ev;
  return changed;
}

// set_hamerly() for the nb points of a block from i0 (assign_block3's
// output), SIMD across the points: upper() and lower() without branches
// (sqrt(Inf) f + s = Inf, NaN stays NaN; second and third are never NaN).
template <typename T>
void Bounds<T>::set_hamerly_block(std::int64_t i0, int nb, const int* lab, const T* best, const int* lab2,
                                  const T* second, const T* third) {
  const T inf = std::numeric_limits<T>::infinity();
  const double f = f_, g = g_, sm = s_, linf = linf_;
  const int k = k_;
  const double *cud = cu_dn_.data(), *c2d = c2_dn_.data(), *cxd = cx_dn_.data();
  double* ua = uadj_.data() + i0;
  double* l2a = l2adj_.data() + i0;
  double* l3a = l3adj_.data() + i0;
  int* j2a = j2_.data() + i0;
#pragma omp simd
  for (int p = 0; p < nb; ++p) {
    const int a = lab[p];
    // no second center below Inf: any other index (k = 1: the label)
    const int j2 = second[p] < inf ? lab2[p] : (k > 1 ? (a == 0 ? 1 : 0) : a);
    const double u = std::sqrt(static_cast<double>(best[p])) * f + sm;
    const double v2 = static_cast<double>(second[p]), v3 = static_cast<double>(third[p]);
    const double l2 = second[p] < inf ? std::max(0.0, std::sqrt(v2) * g - sm) : linf;
    const double l3 = third[p] < inf ? std::max(0.0, std::sqrt(v3) * g - sm) : linf;
    ua[p] = round_up(u - cud[a]);
    l2a[p] = add_dn(l2, c2d[j2]);
    l3a[p] = add_dn(l3, cxd[a]);
    j2a[p] = j2;
  }
}

template <typename T>
std::int64_t Bounds<T>::full_pass(std::int64_t lo, std::int64_t hi, int* labels, std::int64_t* cnt,
                                  std::int64_t* evals) {
  const T inf = std::numeric_limits<T>::infinity();
  std::int64_t changed = 0;
  if (variant_ == Variant::kHamerly && use_screen_ && screen_.active())
    return hamerly_full_screened(lo, hi, labels, cnt, evals);
  *evals += (hi - lo) * static_cast<std::int64_t>(k_);
  if (variant_ == Variant::kHamerly) {
    // Blocks of points, SIMD across points.
    const int B = block_size<T>(d_);
    int lab[kMaxBlock], lab2[kMaxBlock];
    T best[kMaxBlock], second[kMaxBlock], third[kMaxBlock];
    for (std::int64_t i0 = lo; i0 < hi; i0 += B) {
      const int nb = static_cast<int>(std::min<std::int64_t>(B, hi - i0));
      assign_block3(x_, n_, d_, k_, cur_.data(), i0, nb, lab, best, lab2, second, third);
      set_hamerly_block(i0, nb, lab, best, lab2, second, third);
      for (int p = 0; p < nb; ++p) {
        const std::int64_t i = i0 + p;
        if (labels[i] != lab[p]) {
          labels[i] = lab[p];
          ++changed;
        }
        ++cnt[lab[p]];
      }
    }
    return changed;
  }
  // Yinyang: blocks of points, SIMD across points, the groups' two smallest
  // distances on the side.
  int lab[kGB];
  T best[kGB];
  std::vector<T>& gm1 = work_[thread_id()].fgm1;
  std::vector<T>& gm2 = work_[thread_id()].fgm2;
  for (std::int64_t i0 = lo; i0 < hi; i0 += kGB) {
    const int nb = static_cast<int>(std::min<std::int64_t>(kGB, hi - i0));
    assign_block_groups(x_, n_, d_, k_, cur_.data(), grp_.data(), G_, i0, nb, lab, best, gm1.data(), gm2.data());
    for (int p = 0; p < nb; ++p) {
      const std::int64_t i = i0 + p;
      const int b = lab[p];
      const T bd = best[p];
      // The bound of b's group leaves b out: its second smallest distance
      // (when b is a real minimum, below Inf).
      const int gb = bd < inf ? grp_[b] : -1;
      double lglob = kInf;
      float* gl = glo_.data() + static_cast<std::size_t>(i) * G_;
      for (int g = 0; g < G_; ++g) {
        // (the kernel's per-group rows are nb apart)
        const double lv = lower(g == gb ? gm2[static_cast<std::size_t>(g) * nb + p]
                                        : gm1[static_cast<std::size_t>(g) * nb + p]);
        lglob = std::min(lglob, lv);
        gl[g] = st_dn(lv);
      }
      stamp_[i] = version_;
      set_u(i, b, upper(bd));
      l3adj_[i] = add_dn(lglob, cx_dn_[b]);
      if (labels[i] != b) {
        labels[i] = b;
        ++changed;
      }
      ++cnt[b];
    }
  }
  return changed;
}

template <typename T>
std::int64_t Bounds<T>::bounded_pass(std::int64_t lo, std::int64_t hi, int* labels, std::int64_t* cnt,
                                     unsigned char* dirty, std::int64_t* evals) {
  return variant_ == Variant::kHamerly ? hamerly_pass(lo, hi, labels, cnt, dirty, evals)
                                       : yinyang_pass(lo, hi, labels, cnt, dirty, evals);
}

namespace {

// The points of a block whose bounds fail, their coordinates and own
// centers gathered column by column (consecutive addresses in a column:
// many loads in flight; into the thread's scratch, ld apart) and their
// exact distances to the own centers (SIMD across points).
template <typename T>
struct Unproven {
  T *xb, *cb, *xi;
  int ld;
  int idx[kB];  // positions in the block
  double l2[kB], l3[kB];
  T da[kB];
  int n = 0;
  Unproven(T* xb_, T* cb_, T* xi_, int ld_) : xb(xb_), cb(cb_), xi(xi_), ld(ld_) {}
  void gather(const T* x, std::int64_t nrow, int d, std::int64_t i0, const int* labels, const T* cen) {
    for (int c = 0; c < d; ++c) {
      const T* col = x + static_cast<std::int64_t>(c) * nrow + i0;
      T* xc = xb + static_cast<std::size_t>(c) * ld;
      T* cc = cb + static_cast<std::size_t>(c) * ld;
      for (int q = 0; q < n; ++q) {
        xc[q] = col[idx[q]];
        cc[q] = cen[static_cast<std::size_t>(labels[i0 + idx[q]]) * d + c];
      }
    }
    pair_dist(xb, cb, ld, d, n, da);
  }
  const T* row(int q, int d) {
    for (int c = 0; c < d; ++c) xi[c] = xb[static_cast<std::size_t>(c) * ld + q];
    return xi;
  }
};

}  // namespace

// hamerly_pass's scan of the ns compacted points of a block (xb, column
// stride bsz_; point r is block position idx[scan[r]] from i0) through the
// screen: the certified ones get their bounds as in hamerly_full_screened
// and their label (relabel(i, old, new)); the others are moved to the
// front of xb and scan, in order, and their number returned.  *evals: the
// ns k distances counted for the scan less the k - 1 that each certified
// point did not need.
template <typename T>
template <typename Relabel>
int Bounds<T>::scan_screened(T* xb, int ns, std::int64_t i0, const int* idx, int* scan, const int* labels,
                             std::int64_t* evals, Relabel relabel) {
  const T inf = std::numeric_limits<T>::infinity();
  const int bsz = bsz_;
  const int m = ns - ns % kScreenTile;
  int cand[kB], cand2[kB];
  unsigned char ok[kB];
  double lo2[kB], lo3[kB];
  T dd[kB];
  screen_.screen3(xb, bsz, 0, m, cand, ok, cand2, lo2, lo3);
  block_sq_distances_own(xb, bsz, d_, cur_.data(), cand, 0, m, dd);
  int left = 0;
  for (int r = 0; r < ns; ++r) {
    if (r < m && ok[r] && dd[r] < inf) {
      const std::int64_t i = i0 + idx[scan[r]];
      set_hamerly_screened(i, cand[r], dd[r], cand2[r], lo2[r], lo3[r]);
      *evals -= k_ - 1;
      relabel(i, labels[i], cand[r]);
      continue;
    }
    if (left != r) {
      scan[left] = scan[r];
      for (int c = 0; c < d_; ++c)
        xb[static_cast<std::size_t>(c) * bsz + left] = xb[static_cast<std::size_t>(c) * bsz + r];
    }
    ++left;
  }
  return left;
}

// Hamerly, blocks of points: (1) the bounds of all, the proven ones are
// done (read, not written); (2) the others' exact distances to their own
// centers (Unproven): proven now, or (3) with the exact distance to the
// second nearest center when the rest is excluded, or (4) scanned: an exact
// pass over all centers, SIMD across the points of the compacted block
// (across the centers for a few points).
template <typename T>
std::int64_t Bounds<T>::hamerly_pass(std::int64_t lo, std::int64_t hi, int* labels, std::int64_t* cnt,
                                     unsigned char* dirty, std::int64_t* evals) {
  constexpr int kFewScans = 12;
  Work& w = work_[thread_id()];
  Unproven<T> uv(w.xb.data(), w.cb.data(), w.xi.data(), bsz_);
  T* acc = w.acc.data();  // k + kDistPad: dist_many writes past k
  const int bsz = bsz_;
  int scan[kB], lab[kB], lab2[kB];
  T best[kB], second[kB], third[kB];
  std::int64_t changed = 0;
  const double umax = umax_, f = f_, sm = s_;
  const T tinf = std::numeric_limits<T>::infinity();
  const double *cuu = cu_up_.data(), *c2u = c2_up_.data(), *cxu = cx_up_.data();
  auto relabel = [&](std::int64_t i, int a, int b) {
    if (b == a) return;
    labels[i] = b;
    ++changed;
    --cnt[a];
    ++cnt[b];
    dirty[a] = 1;
    dirty[b] = 1;
  };
  for (std::int64_t i0 = lo; i0 < hi; i0 += bsz) {
    const int nb = static_cast<int>(std::min<std::int64_t>(bsz, hi - i0));
    const int* lb = labels + i0;
    const int* jb = j2_.data() + i0;
    const double *ub = uadj_.data() + i0, *l2b = l2adj_.data() + i0, *l3b = l3adj_.data() + i0;
    double u_[kB], l2_[kB], l3_[kB];
    unsigned char ok[kB];
#pragma omp simd
    for (int p = 0; p < nb; ++p) {
      const double u = round_up(ub[p] + cuu[lb[p]]);
      const double l2 = sub_down(l2b[p], c2u[jb[p]]);
      const double l3 = sub_down(l3b[p], cxu[lb[p]]);
      u_[p] = u;
      l2_[p] = l2;
      l3_[p] = l3;
      ok[p] = u < umax && std::min(l2, l3) > u * f + sm;
    }
    int nf = 0;
    for (int p = 0; p < nb; ++p) {
      uv.idx[nf] = p;
      uv.l2[nf] = l2_[p];
      uv.l3[nf] = l3_[p];
      nf += !ok[p];
    }
    (void)u_;
    if (nf == 0) continue;
    uv.n = nf;
    uv.gather(x_, n_, d_, i0, labels, cur_.data());
    *evals += nf;
    int ns = 0;
    for (int q = 0; q < nf; ++q) {
      const std::int64_t i = i0 + uv.idx[q];
      const int a = labels[i];
      const T da = uv.da[q];
      const double u = upper(da);
      const bool good = u < umax;
      const double th = u * f + sm;
      if (good && std::min(uv.l2[q], uv.l3[q]) > th) {
        set_u(i, a, u);
        continue;
      }
      const int j2 = j2_[i];
      if (good && uv.l3[q] > th && j2 != a) {
        // Only a and j2 can win: the exact rule between the two.
        const T d2 = dist_one(uv.row(q, d_), cur_.data() + static_cast<std::size_t>(j2) * d_, d_);
        ++*evals;
        if (d2 < da || (d2 == da && j2 < a)) {
          set_u(i, j2, upper(d2));
          l2adj_[i] = add_dn(lower(da), c2_dn_[a]);
          j2_[i] = a;
          l3adj_[i] = add_dn(std::max(0.0, uv.l3[q]), cx_dn_[j2]);
          relabel(i, a, j2);
        } else {
          set_u(i, a, u);
          // j2 with NaN coordinates competes no more (until it is a number
          // again, which makes the iteration full)
          l2adj_[i] = add_dn(std::isnan(d2) ? linf_ : lower(d2), c2_dn_[j2]);
        }
        continue;
      }
      scan[ns++] = q;
    }
    if (ns == 0) continue;
    *evals += static_cast<std::int64_t>(ns) * k_;
    if (ns <= kFewScans) {
      // SIMD across the centers, point by point.
      for (int r = 0; r < ns; ++r) {
        const int q = scan[r];
        const std::int64_t i = i0 + uv.idx[q];
        dist_many(uv.row(q, d_), d_, ct_.data(), k_, acc);
        T m1, m2;
        int q1 = min_two(acc, k_, &m1, &m2);
        int q2;
        T m3 = tinf;
        if (q1 < 0) {
          q1 = 0;  // nothing below Inf: label 0, as the scan in index order
          q2 = k_ > 1 ? 1 : 0;
        } else if (m2 < tinf) {
          q2 = first_of(acc, k_, m2, q1);
          const int lo2 = std::min(q1, q2), hi2 = std::max(q1, q2);
          const T x1 = min_range(acc, 0, lo2), x2 = min_range(acc, lo2 + 1, hi2), x3 = min_range(acc, hi2 + 1, k_);
          m3 = x1 < x2 ? x1 : x2;
          m3 = x3 < m3 ? x3 : m3;
        } else {
          q2 = k_ > 1 ? (q1 == 0 ? 1 : 0) : q1;
        }
        set_hamerly(i, q1, m1, q2, m2, m3);
        relabel(i, labels[i], q1);
      }
      continue;
    }
    // SIMD across the points: compact the block in place (r <= q).
    for (int r = 0; r < ns; ++r) {
      const int q = scan[r];
      if (q != r)
        for (int c = 0; c < d_; ++c)
          uv.xb[static_cast<std::size_t>(c) * bsz + r] = uv.xb[static_cast<std::size_t>(c) * bsz + q];
    }
    if (ns >= kScreenTile && use_screen_ && screen_.active()) {
      // Through the screen, as the full pass: a certified point gets its
      // bounds from the exact distance to its center and the screen's lower
      // bounds; the others stay for the exact scan, compacted again.
      ns = scan_screened(uv.xb, ns, i0, uv.idx, scan, labels, evals, relabel);
      if (ns == 0) continue;
    }
    assign_block3(uv.xb, bsz, d_, k_, cur_.data(), 0, ns, lab, best, lab2, second, third);
    for (int r = 0; r < ns; ++r) {
      const std::int64_t i = i0 + uv.idx[scan[r]];
      // no second center below Inf: any other index (k = 1: the label)
      const int j2 = second[r] < tinf ? lab2[r] : (k_ > 1 ? (lab[r] == 0 ? 1 : 0) : lab[r]);
      set_hamerly(i, lab[r], best[r], j2, second[r], third[r]);
      relabel(i, labels[i], lab[r]);
    }
  }
  return changed;
}

// Yinyang, blocks of points as hamerly_pass, the unproven points scanned
// one by one over the groups their bounds do not exclude.
template <typename T>
std::int64_t Bounds<T>::yinyang_pass(std::int64_t lo, std::int64_t hi, int* labels, std::int64_t* cnt,
                                     unsigned char* dirty, std::int64_t* evals) {
  Work& w = work_[thread_id()];
  Unproven<T> uv(w.xb.data(), w.cb.data(), w.xi.data(), bsz_);
  const int bsz = bsz_;
  std::int64_t changed = 0;
  const double umax = umax_, f = f_, sm = s_;
  const double *cuu = cu_up_.data(), *cxu = cx_up_.data();
  for (std::int64_t i0 = lo; i0 < hi; i0 += bsz) {
    const int nb = static_cast<int>(std::min<std::int64_t>(bsz, hi - i0));
    const int* lb = labels + i0;
    const double *ub = uadj_.data() + i0, *l3b = l3adj_.data() + i0;
    double l_[kB];
    unsigned char ok[kB];
#pragma omp simd
    for (int p = 0; p < nb; ++p) {
      const double u = round_up(ub[p] + cuu[lb[p]]);
      const double l = sub_down(l3b[p], cxu[lb[p]]);
      l_[p] = l;
      ok[p] = u < umax && l > u * f + sm;
    }
    int nf = 0;
    for (int p = 0; p < nb; ++p) {
      uv.idx[nf] = p;
      uv.l3[nf] = l_[p];
      nf += !ok[p];
    }
    if (nf == 0) continue;
    uv.n = nf;
    uv.gather(x_, n_, d_, i0, labels, cur_.data());
    *evals += nf;
    for (int q = 0; q < nf; ++q) {
      const std::int64_t i = i0 + uv.idx[q];
      const int a = labels[i];
      const double u = upper(uv.da[q]);
      if (u < umax && uv.l3[q] > u * f + sm) {
        set_u(i, a, u);
        continue;
      }
      const int b = yinyang_scan(i, uv.row(q, d_), a, uv.da[q], u, uv.l3[q], w, evals);
      if (b != a) {
        labels[i] = b;
        ++changed;
        --cnt[a];
        ++cnt[b];
        dirty[a] = 1;
        dirty[b] = 1;
      }
    }
  }
  return changed;
}

// Yinyang: the exact assignment of point i (row xi, label a, da = D^(x, c_a),
// u = upper(da), lprev its bound to every center but a) among the centers
// of the groups its bounds do not exclude, and its new bounds.  Returns the
// label.
template <typename T>
int Bounds<T>::yinyang_scan(std::int64_t i, const T* xi, int a, T da, double u, double lprev, Work& s,
                            std::int64_t* evals) {
  const T inf = std::numeric_limits<T>::infinity();
  // The exact rule as a lexicographic minimum of (distance, index) over the
  // values below Inf (NaN never), label 0 when there is none: the same as
  // the strict-'<' scan in index order, whatever the order of the scan.
  T bestD = inf;
  int bestJ = 0;
  if (da < inf) {
    bestD = da;
    bestJ = a;
  }
  const bool can_filter = u < umax_;
  const double th = can_filter ? thr(u) : 0.0;
  float* gl = glo_.data() + static_cast<std::size_t>(i) * G_;
  const int stamp = stamp_[i];
  const bool stale = stamp != version_;
  for (int g = 0; g < G_; ++g) {
    double lg = ld(gl[g]);
    if (stale) lg = sub_down(lg, drift(g, stamp));
    s.lnew[g] = lg;
    if (can_filter && lg > th) {
      s.comp[g] = 0;
      continue;
    }
    s.comp[g] = 1;
    const int m = gs_[g + 1] - gs_[g];
    *evals += m;
    dist_many(xi, d_, ct_.data() + static_cast<std::size_t>(gs_[g]) * d_, m, s.acc.data());
    // The group's smallest distance (the first center of equals: perm_ is
    // in index order within a group) and the smallest of the others.
    T m1, m2;
    const int q1 = min_two(s.acc.data(), m, &m1, &m2);
    const int j1 = q1 < 0 ? -1 : perm_[gs_[g] + q1];
    if (j1 >= 0 && (m1 < bestD || (m1 == bestD && j1 < bestJ))) {
      bestD = m1;
      bestJ = j1;
    }
    s.gm1[g] = m1;
    s.gm2[g] = m2;
    s.gj1[g] = j1;
  }
  const int b = bestJ;
  double lglob = kInf;
  for (int g = 0; g < G_; ++g) {
    double v;
    if (s.comp[g]) {
      v = lower(s.gj1[g] == b ? s.gm2[g] : s.gm1[g]);  // the smallest distance to a center other than b
    } else {
      v = s.lnew[g];
      if (b != a && grp_[a] == g) v = std::min(v, lower(da));  // a competes now
    }
    lglob = std::min(lglob, v);
    gl[g] = st_dn(v);
  }
  stamp_[i] = version_;
  set_u(i, b, b == a ? u : upper(bestD));
  // lprev, the point's bound to every center but a, still holds if a stays.
  l3adj_[i] = add_dn(std::max(0.0, b == a ? std::max(lglob, lprev) : lglob), cx_dn_[b]);
  return b;
}

template class Bounds<double>;
template class Bounds<float>;

}  // namespace bounds
}  // namespace gk
