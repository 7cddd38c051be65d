// cpu_screen.cpp: the certified screen of cpu_screen.h.
//
// Why a point can be certified.  Let x and c_j be the values in T (the
// exact rule reads the same ones), u T's unit roundoff, s_j = |c_j|^2 -
// 2 x.c_j and T_j = |x|^2 + s_j = |x - c_j|^2 (real numbers).
//  * The screen value G_j: |c_j|^2 is summed in double and rounded to T
//    once, x.c_j summed over the coordinates in order with or without
//    fused multiply-adds (error <= gamma_d sum |x_c c_jc|), and G_j =
//    fl(|c_j|^2 - 2 x.c_j) rounded once more.  With Cauchy-Schwarz,
//        |G_j - s_j| <= gamma_{d+2} (|c_j|^2 + 2 |x| |c_j|) + a_G =: e,
//    bounded for every j at once with the largest |c_j|^2 and |c_j|.
//  * The exact rule's E_j rounds each difference, square and partial sum
//    of d non-negative terms: |E_j - T_j| <= gamma_{d+2} T_j + a_E.
//  * Hence with g >= gamma_{d+2}, G_1 the smallest screen value (center
//    j1) and G_2 the next: for every j != j1 (G_j >= G_2),
//        E_j - E_j1 >= T_j (1 - g) - T_j1 (1 + g) - 2 a_E
//                   >= G_2 (1 - g) - G_1 (1 + g) - 2 e - 2 g |x|^2 - 2 a_E,
//    so E_j1 < E_j (j1 is the strict argmin, whatever the tie rule) when
//        G_2 (1 - g) - G_1 (1 + g) > 2 e + 2 g |x|^2 + 2 a_E,
//    tested in double with every quantity on the right rounded up and the
//    rounding of the left covered by an extra 4 u_double (|G_1| + |G_2|).
// g = (d + 4) u >= gamma_{d+2} while (d + 2)(d + 4) u <= 2; a_G, a_E cover
// underflow (each rounding may lose half the smallest subnormal).
//
// The float pass of double data.  Nothing above needs x and c_j themselves:
// with any vector m, y = x - m and b_j = c_j - m (real numbers) give
// |y - b_j|^2 = T_j, so the same test holds with s_j = |b_j|^2 - 2 y.b_j,
// |y|^2 for |x|^2, and e the float screen's error (g, the exact rule's
// factor, stays double's).  m is the centers' mean: the screen's error grows
// with |y| |b_j|, which the shift keeps near the clusters' spread however
// far the data lie from the origin.  The pass computes y_c and b_jc in
// double and rounds them to float (each within (u_f + u_d + u_f u_d) of the
// real value, plus half float's smallest subnormal), |b_j|^2 in double from
// the rounded differences, rounded once to float, and G_j in float as above.
// Summing the errors: |G_j - s_j| <= g_f (|b_j|^2 + 2 |y| |b_j|) + a_G +
// a_X (|y| + |b_j|), where g_f = (d + 8) u_f covers gamma_d of the float dot
// product, the roundings of both operands, of |b_j|^2 and of the last
// subtraction while (d + 8)^2 u_f <= 1, a_G = (9 d + 18) eta_f the
// underflow of the float operations and a_X = 2 sqrt(d) eta_f that of the
// operands (with Cauchy-Schwarz, sum |y_c| <= sqrt(d) |y|); |y|^2, summed
// in double from the rounded differences, is within (d + 4) 2 u_d.  Values
// are kept far from overflow (the limits in prepare() and screen()), so no
// G is infinite unless there is no second center with numbers; NaN centers
// (empty clusters) have G = NaN and are never chosen, as in the exact rule.
//
// The tiles: T_W-lane vectors (GCC vector extensions), PV vectors of points
// by Q centers of accumulators kept in registers, one FMA per coordinate
// and pair, the centers coordinate-major so that a coordinate of Q centers
// is Q consecutive values.  Three builds of the kernel (AVX-512, AVX2 + FMA,
// baseline), chosen once by what the processor supports.

// The screen's own rounding is covered by the bound: let the compiler fuse.
#if defined(__clang__)
#pragma clang fp contract(fast)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=fast")
#endif

#include "cpu_screen.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "cpu_block.h"

namespace gk {

bool screen_wanted(int d, int k) {
  const char* env = std::getenv("GPUKMEANS_CPU_SCREEN");
  const std::string mode = env ? env : "";
  if (mode == "off") return false;
  if (mode == "on" || mode == "double" || mode == "float") return k >= 2;
  // Auto: the screen costs about one FMA per coordinate and pair against
  // three rounded operations, plus a fixed cost per pair (the running
  // minima), per tile of centers (k is padded to the tile: 12 with
  // AVX-512) and per point (|x|^2, the certificate, one exact distance).
  // Measured on 1e5 points, d = 2 to 128, one thread (2026-11-23, AMD EPYC
  // with AVX-512): it pays from k = 32 at every d >= 2 (1.1x at d = 2 to
  // 2.7x at d = 64, k = 256) and costs up to 1.5x below k = 16.
  return d >= 2 && k >= 32;
}

namespace {

template <typename T>
struct Limits;
template <>
struct Limits<double> {
  static constexpr double u = 1.1102230246251565e-16;   // 2^-53
  static constexpr double eta = 4.9406564584124654e-324;  // 2^-1074 (a rounding loses half at most)
  static constexpr double big = 1e280;                    // |c|^2, |x|^2 stay below
};
template <>
struct Limits<float> {
  static constexpr double u = 5.9604644775390625e-08;   // 2^-24
  static constexpr double eta = 1.401298464324817e-45;  // 2^-149
  static constexpr double big = 1e34;
};

constexpr double kUp = 1.0 + 8.881784197001252e-16;  // 1 + 2^-50: rounds a few operations up

// The two (Third: three) smallest screen values of each point of a tile and
// the centers of the first (and second).
template <typename T>
struct ScreenOut {
  T *b1, *b2, *b3;
  int *i1, *i2;
  ScreenOut at(int p) const { return {b1 + p, b2 + p, b3 + p, i1 + p, i2 + p}; }
};

// One tile: PT = PV * W points at xs (column stride n) against every center.
template <typename T, int W, int PV, int Q, bool Third>
inline __attribute__((always_inline)) void screen_tile(const T* __restrict xs, std::int64_t n, int d,
                                                       const T* __restrict ct, const T* __restrict nb, int kp,
                                                       const ScreenOut<T>& out) {
  typedef T V __attribute__((vector_size(W * sizeof(T))));
  typedef decltype(V{} < V{}) IV;  // lanes of T's size: masks and center indices
  const T inf = std::numeric_limits<T>::infinity();
  V b1[PV], b2[PV], b3[PV];
  IV i1[PV], i2[PV];
  for (int v = 0; v < PV; ++v) {
    b1[v] = b2[v] = b3[v] = V{} + inf;
    i1[v] = i2[v] = IV{};
  }
  for (int j0 = 0; j0 < kp; j0 += Q) {
    V acc[Q][PV];
    for (int q = 0; q < Q; ++q)
      for (int v = 0; v < PV; ++v) acc[q][v] = V{};
    const T* cc = ct + j0;
    const T* xc = xs;
    for (int c = 0; c < d; ++c, cc += kp, xc += n) {
      V xv[PV];
      for (int v = 0; v < PV; ++v) std::memcpy(&xv[v], xc + v * W, sizeof(V));
      for (int q = 0; q < Q; ++q) {
        const V cb = V{} + cc[q];
        for (int v = 0; v < PV; ++v) acc[q][v] += xv[v] * cb;
      }
    }
    for (int q = 0; q < Q; ++q) {
      const V nbq = V{} + nb[j0 + q];
      const IV jq = IV{} + (j0 + q);
      for (int v = 0; v < PV; ++v) {
        const V g = nbq - (acc[q][v] + acc[q][v]);
        const IV lt1 = g < b1[v], lt2 = g < b2[v];  // false for NaN: never chosen
        if (Third) {
          b3[v] = lt2 ? b2[v] : (g < b3[v] ? g : b3[v]);
          i2[v] = lt1 ? i1[v] : (lt2 ? jq : i2[v]);
        }
        b2[v] = lt1 ? b1[v] : (lt2 ? g : b2[v]);
        b1[v] = lt1 ? g : b1[v];
        i1[v] = lt1 ? jq : i1[v];
      }
    }
  }
  for (int v = 0; v < PV; ++v)
    for (int l = 0; l < W; ++l) {
      out.b1[v * W + l] = b1[v][l];
      out.b2[v * W + l] = b2[v][l];
      out.i1[v * W + l] = static_cast<int>(i1[v][l]);
      if (Third) {
        out.b3[v * W + l] = b3[v][l];
        out.i2[v * W + l] = static_cast<int>(i2[v][l]);
      }
    }
}

// The tiles of m points (a multiple of W * PV) at xs.
template <typename T, int W, int PV, int Q>
inline __attribute__((always_inline)) void screen_tiles(const T* xs, std::int64_t n, int d, const T* ct,
                                                        const T* nb, int kp, int m, bool third,
                                                        const ScreenOut<T>& out) {
  for (int p = 0; p < m; p += W * PV) {
    if (third)
      screen_tile<T, W, PV, Q, true>(xs + p, n, d, ct, nb, kp, out.at(p));
    else
      screen_tile<T, W, PV, Q, false>(xs + p, n, d, ct, nb, kp, out.at(p));
  }
}

enum class Isa { kBase, kAvx2, kAvx512 };

Isa detect_isa() {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")) return Isa::kAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::kAvx2;
#endif
  return Isa::kBase;
}

Isa isa() {
  static const Isa v = detect_isa();
  return v;
}

// Centers per tile of each build (the registers hold Q x PV accumulators).
template <typename T>
int tile_centers(Isa i) {
  return i == Isa::kAvx512 ? 12 : i == Isa::kAvx2 ? 5 : (sizeof(T) == 8 ? 2 : 3);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define GK_SCREEN_AVX512 __attribute__((target("avx512f,avx512dq,fma")))
#define GK_SCREEN_AVX2 __attribute__((target("avx2,fma")))
#define GK_SCREEN_ISAS 1
#endif

#define GK_SCREEN_BUILD(NAME, ATTR, T, W, PV, Q)                                                          \
  ATTR void NAME(const T* xs, std::int64_t n, int d, const T* ct, const T* nb, int kp, int m, bool third, \
                 const ScreenOut<T>& out) {                                                             \
    screen_tiles<T, W, PV, Q>(xs, n, d, ct, nb, kp, m, third, out);                                     \
  }
#ifdef GK_SCREEN_ISAS
GK_SCREEN_BUILD(tiles_avx512, GK_SCREEN_AVX512, double, 8, 2, 12)
GK_SCREEN_BUILD(tiles_avx512, GK_SCREEN_AVX512, float, 16, 1, 12)
GK_SCREEN_BUILD(tiles_avx2, GK_SCREEN_AVX2, double, 4, 2, 5)
GK_SCREEN_BUILD(tiles_avx2, GK_SCREEN_AVX2, float, 8, 2, 5)
#endif
GK_SCREEN_BUILD(tiles_base, , double, 2, 4, 2)
GK_SCREEN_BUILD(tiles_base, , float, 4, 2, 3)
#undef GK_SCREEN_BUILD

}  // namespace

namespace {

// A squared norm in double, summed over the coordinates in order from the
// values v(c); NaN where a coordinate is NaN (an empty cluster's center).
template <typename V>
double norm2(int d, V v) {
  double acc = 0.0;
  for (int c = 0; c < d; ++c) {
    const double w = v(c);
    acc += w * w;
  }
  return acc;
}

}  // namespace

template <typename T>
CenterScreen<T>::CenterScreen() {
  const char* env = std::getenv("GPUKMEANS_CPU_SCREEN");
  const std::string mode = env ? env : "";
  const bool low_precision = sizeof(T) == sizeof(float);  // float data: one pass, in float
  native_pass_ = low_precision || mode != "float";
  low_pass_ = !low_precision && mode != "double";
  low_always_ = mode == "float";
}

template <typename T>
void CenterScreen<T>::prepare(const T* cen, int k, int d) {
  typedef Limits<T> L;
  native_.active = low_.active = false;
  d_ = d;
  low_tried_ /= 2;  // (prepare runs between the passes, on one thread)
  low_left_ /= 2;
  if (k < 2 || d < 1) return;
  gx_ = (d + 4.0) * L::u;
  a_e_ = (4.0 * d + 8.0) * L::eta;
  if ((d + 2.0) * (d + 4.0) * L::u > 2.0) return;  // the exact rule's bound is void
  const double rel_d = 2.220446049250313e-16;     // 2 u of double
  std::vector<unsigned char> live(k);  // the centers with numbers
  int lives = 0;
  // The native pass: the centers as they are, in T.
  {
    Pass<T>& P = native_;
    const int q = tile_centers<T>(isa());
    P.kp = (k + q - 1) / q * q;
    P.ct.assign(static_cast<std::size_t>(d) * P.kp, T(0));
    P.nb.assign(P.kp, std::numeric_limits<T>::quiet_NaN());
    double nbmax = 0.0;
    for (int j = 0; j < k; ++j) {
      const T* cj = cen + static_cast<std::size_t>(j) * d;
      const double s = norm2(d, [&](int c) { return static_cast<double>(cj[c]); });
      live[j] = !std::isnan(s);
      if (!live[j]) continue;  // an empty cluster's center: never chosen
      ++lives;
      for (int c = 0; c < d; ++c) P.ct[static_cast<std::size_t>(c) * P.kp + j] = cj[c];
      P.nb[j] = static_cast<T>(s);
      nbmax = std::max(nbmax, s * (1.0 + (d + 2.0) * rel_d));  // s: relative error <= gamma_d (double)
    }
    if (lives > 0 && native_pass_ && nbmax <= L::big) {
      P.nb_max = nbmax * kUp;
      P.nc_max = std::sqrt(P.nb_max) * kUp;
      P.g = gx_;
      P.a_g = (8.0 * d + 16.0) * L::eta;
      P.a_gx = 0.0;
      P.big = L::big;
      P.nx_rel = (d + 2.0) * rel_d;
      P.active = true;
    }
    if (lives == 0) return;
  }
  // The float pass of double data: points and centers less the centers'
  // mean m, in double, then rounded to float (the bound: cpu_screen.cpp's
  // top).
  if (sizeof(T) == sizeof(float) || !low_pass_) return;
  typedef Limits<float> F;
  const double uf = F::u;
  if ((d + 8.0) * (d + 8.0) * uf > 1.0) return;
  Pass<float>& P = low_;
  P.shift.assign(d, 0.0);
  for (int j = 0; j < k; ++j)
    if (live[j])
      for (int c = 0; c < d; ++c) P.shift[c] += static_cast<double>(cen[static_cast<std::size_t>(j) * d + c]);
  for (int c = 0; c < d; ++c) P.shift[c] /= lives;
  const int q = tile_centers<float>(isa());
  P.kp = (k + q - 1) / q * q;
  P.ct.assign(static_cast<std::size_t>(d) * P.kp, 0.0f);
  P.nb.assign(P.kp, std::numeric_limits<float>::quiet_NaN());
  double nbmax = 0.0;
  for (int j = 0; j < k; ++j) {
    if (!live[j]) continue;
    const T* cj = cen + static_cast<std::size_t>(j) * d;
    auto shifted = [&](int c) { return static_cast<double>(cj[c]) - P.shift[c]; };
    const double s = norm2(d, shifted);
    if (!(s <= F::big)) return;  // (also where a center or m overflowed: Inf, NaN)
    for (int c = 0; c < d; ++c) P.ct[static_cast<std::size_t>(c) * P.kp + j] = static_cast<float>(shifted(c));
    P.nb[j] = static_cast<float>(s);
    // the real |c_j - m|^2: s from the rounded differences, summed in double
    nbmax = std::max(nbmax, s * (1.0 + (d + 4.0) * rel_d));
  }
  if (!(nbmax <= F::big)) return;
  P.nb_max = nbmax * kUp;
  P.nc_max = std::sqrt(P.nb_max) * kUp;
  P.g = (d + 8.0) * uf;
  P.a_g = (9.0 * d + 18.0) * F::eta;
  P.a_gx = 2.0 * std::sqrt(static_cast<double>(d)) * F::eta;
  P.big = F::big;
  P.nx_rel = (d + 4.0) * rel_d;
  P.active = true;
}

// One pass over points [0, m) of xs (column stride ld): per point the
// certificate of cand[p] (ok[p]) and, for screen3, the second center
// cand2[p] and lower bounds lo2[p], lo3[p] on the real distances |x - c_j|
// to it and to every other center but cand[p] (+Inf when there is no such
// center with numbers).  Lower bounds: for every j, T_j >= |x|^2 + G_j - e
// (the top of the file), every operation rounded down by a relative 2^-51
// of its operands' magnitude.
template <typename T>
template <typename S>
int CenterScreen<T>::run_pass(const Pass<S>& P, const T* xs, std::int64_t ld, int m, const Out& out) const {
  const bool third = out.lo2 != nullptr;
  S b1[kMaxBlock], b2[kMaxBlock], b3[kMaxBlock];
  int i2[kMaxBlock];
  double nx2[kMaxBlock];
  for (int p = 0; p < m; ++p) nx2[p] = 0.0;
  // |x|^2 in double (relative error <= gamma_d, or gamma_{d+1} with the
  // shift's rounded differences; products of floats exact)
  const S* tx;
  std::int64_t tld;
  std::vector<S> shifted;
  if constexpr (std::is_same<S, T>::value) {
    tx = xs;
    tld = ld;
    for (int c = 0; c < d_; ++c) {
      const T* xc = xs + static_cast<std::int64_t>(c) * ld;
      for (int p = 0; p < m; ++p) {
        const double v = static_cast<double>(xc[p]);
        nx2[p] += v * v;
      }
    }
  } else {
    shifted.resize(static_cast<std::size_t>(d_) * m);
    for (int c = 0; c < d_; ++c) {
      const T* xc = xs + static_cast<std::int64_t>(c) * ld;
      const double mc = P.shift[c];
      S* yc = shifted.data() + static_cast<std::size_t>(c) * m;
      for (int p = 0; p < m; ++p) {
        const double v = static_cast<double>(xc[p]) - mc;
        yc[p] = static_cast<S>(v);
        nx2[p] += v * v;
      }
    }
    tx = shifted.data();
    tld = m;
  }
  const ScreenOut<S> so{b1, b2, b3, out.cand, i2};
  switch (isa()) {
#ifdef GK_SCREEN_ISAS
    case Isa::kAvx512: tiles_avx512(tx, tld, d_, P.ct.data(), P.nb.data(), P.kp, m, third, so); break;
    case Isa::kAvx2: tiles_avx2(tx, tld, d_, P.ct.data(), P.nb.data(), P.kp, m, third, so); break;
#endif
    default: tiles_base(tx, tld, d_, P.ct.data(), P.nb.data(), P.kp, m, third, so); break;
  }
  const double g = gx_;  // the exact rule's factor; the pass's own is in e
  const double inf = std::numeric_limits<double>::infinity();
  int certified = 0;
  for (int p = 0; p < m; ++p) {
    const double N = nx2[p] * (1.0 + P.nx_rel) * kUp;  // |x|^2 rounded up
    const double G1 = static_cast<double>(b1[p]), G2 = static_cast<double>(b2[p]);
    const bool bounded = N <= P.big && G1 < inf;
    const double nx = std::sqrt(N) * kUp;
    const double e = (P.g * (P.nb_max + 2.0 * nx * P.nc_max) * kUp + P.a_g + P.a_gx * (nx + P.nc_max) * kUp) * kUp;
    bool sure = false;
    if (bounded) {
      if (G2 == inf) {
        sure = true;  // no other center with numbers
      } else {
        const double rhs = (2.0 * e + 2.0 * g * N + 2.0 * a_e_) * kUp * kUp +
                           4.0 * 1.1102230246251565e-16 * (std::fabs(G1) + std::fabs(G2));
        sure = G2 * (1.0 - g) - G1 * (1.0 + g) > rhs;
      }
    }
    out.ok[p] = sure;
    certified += sure;
    if (third) {
      out.cand2[p] = i2[p];
      const double Nlo = nx2[p] * (1.0 - P.nx_rel) * (1.0 - 8.881784197001252e-16);
      auto lower = [&](double G) {
        if (!(G < inf)) return inf;
        if (!bounded) return 0.0;
        const double s = (Nlo + G - e) - 4.0 * 1.1102230246251565e-16 * (Nlo + std::fabs(G) + e);
        return s > 0.0 ? std::sqrt(s) * (1.0 - 8.881784197001252e-16) : 0.0;
      };
      out.lo2[p] = lower(G2);
      out.lo3[p] = lower(static_cast<double>(b3[p]));
    }
  }
  return certified;
}

// The native pass over the points of [0, m) that the float pass left:
// gathered into tiles of their own (the last tile padded with copies of the
// first), screened, their outputs put back.  Returns the points it certified.
template <typename T>
int CenterScreen<T>::rescreen_native(const T* xs, std::int64_t ld, int m, const Out& out) const {
  int idx[kMaxBlock];
  int left = 0;
  for (int p = 0; p < m; ++p)
    if (!out.ok[p]) idx[left++] = p;
  if (left == 0) return 0;
  const int mm = (left + kScreenTile - 1) / kScreenTile * kScreenTile;
  std::vector<T> xb(static_cast<std::size_t>(d_) * mm);
  for (int c = 0; c < d_; ++c) {
    const T* xc = xs + static_cast<std::int64_t>(c) * ld;
    T* bc = xb.data() + static_cast<std::size_t>(c) * mm;
    for (int q = 0; q < mm; ++q) bc[q] = xc[idx[q < left ? q : 0]];
  }
  int cand[kMaxBlock], cand2[kMaxBlock];
  unsigned char ok[kMaxBlock];
  double lo2[kMaxBlock], lo3[kMaxBlock];
  const bool third = out.lo2 != nullptr;
  const Out sub{cand, ok, third ? cand2 : nullptr, third ? lo2 : nullptr, third ? lo3 : nullptr};
  run_pass(native_, xb.data(), mm, mm, sub);
  int certified = 0;
  for (int q = 0; q < left; ++q) {
    const int p = idx[q];
    out.cand[p] = cand[q];
    out.ok[p] = ok[q];
    certified += ok[q];
    if (third) {
      out.cand2[p] = cand2[q];
      out.lo2[p] = lo2[q];
      out.lo3[p] = lo3[q];
    }
  }
  return certified;
}

// Whether the float pass is worth trying on the next block: yes until its
// record holds a few thousand points, then while it leaves a third at most.
template <typename T>
bool CenterScreen<T>::low_wanted() const {
  if (!low_.active) return false;
  if (low_always_) return true;
  const std::int64_t tried = __atomic_load_n(&low_tried_, __ATOMIC_RELAXED);
  const std::int64_t left = __atomic_load_n(&low_left_, __ATOMIC_RELAXED);
  return tried < 4096 || 3 * left <= tried;
}

template <typename T>
int CenterScreen<T>::run(const T* x, std::int64_t n, std::int64_t i0, int m, const Out& out) const {
  const T* xs = x + i0;
  if (low_wanted()) {
    int certified = run_pass(low_, xs, n, m, out);
    __atomic_add_fetch(&low_tried_, static_cast<std::int64_t>(m), __ATOMIC_RELAXED);
    __atomic_add_fetch(&low_left_, static_cast<std::int64_t>(m - certified), __ATOMIC_RELAXED);
    if (certified < m && native_.active) certified += rescreen_native(xs, n, m, out);
    return certified;
  }
  if (native_.active) return run_pass(native_, xs, n, m, out);
  for (int p = 0; p < m; ++p) {  // neither pass holds: every point exact
    out.cand[p] = 0;
    out.ok[p] = 0;
    if (out.lo2) {
      out.cand2[p] = 0;
      out.lo2[p] = out.lo3[p] = 0.0;
    }
  }
  return 0;
}

template <typename T>
int CenterScreen<T>::screen(const T* x, std::int64_t n, std::int64_t i0, int m, int* cand,
                            unsigned char* ok) const {
  return run(x, n, i0, m, Out{cand, ok, nullptr, nullptr, nullptr});
}

template <typename T>
int CenterScreen<T>::screen3(const T* x, std::int64_t n, std::int64_t i0, int m, int* cand, unsigned char* ok,
                             int* cand2, double* lo2, double* lo3) const {
  return run(x, n, i0, m, Out{cand, ok, cand2, lo2, lo3});
}

template class CenterScreen<double>;
template class CenterScreen<float>;

}  // namespace gk
