// small_dfilter_emu.cpp: the small-d filter of the double-precision
// assignment (src/cuda/detail/small_dfilter.cuh) on the CPU, step by step
// as the kernel computes it: the images, w by FMAs rounded down from q, the
// groups of 8 centers and their two lowest minima, the rescan of the best
// group and df_certified (extracted from dfilter.cuh by the Makefile).
// Every certified label must be the exact rule's (no-FMA double distances
// in coordinate order, strict '<' in index order, NaN never taken).  Data:
// uniform, offset, lattices (exact ties), duplicate centers, points on
// bisectors and near them, scales 1e-110 .. 1e110, NaN centers,
// d = 1..8.  Replacing df_certified by "b1 < second" gives wrong labels
// (the check works: ./small_dfilter_emu naive).
//   make small_dfilter_emu && ./small_dfilter_emu
#include <algorithm>
#include <cfenv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <vector>
#include "df_certified_shim.h"
using namespace gk;

struct Result { long long pts = 0, cert = 0, wrong = 0; };

// One data set: n x d points (row-major), k x d centers (NaN rows: empty).
static void run(const std::vector<double> &x, const std::vector<double> &c, int n, int d, int k, bool naive,
                Result &res, const char *what) {
  double M = 0;
  for (double v : x) M = std::max(M, fabs(v));
  if (!(M >= std::ldexp(1.0, -400) && M <= std::ldexp(1.0, 400))) return;  // (the host's range check)
  std::vector<double> mean(d, 0.0);
  for (int i = 0; i < n; ++i) for (int j = 0; j < d; ++j) mean[j] += x[(size_t)i * d + j];
  for (int j = 0; j < d; ++j) mean[j] /= n;
  int e = 0;
  (void)std::frexp(2.0 * M, &e);
  const double scale = std::ldexp(1.0, -e), u = std::ldexp(1.0, -24);
  DFBound bd;
  bd.uprime = (float)(1.01 * (u + std::ldexp(1.0, -52)));
  bd.kappa = (float)(2.0 * (2.0 * d + 8.0) * u);
  bd.gamma = 1.01 * (d + 3.0) * std::ldexp(1.0, -53);
  bd.absd = std::ldexp(d + 1.0, -1074 - 2 * e) + 4.9406564584124654e-324;
  // the centers' rows: -2 b, q, nb (padding to a multiple of 8: NaN)
  const int G = 8, kp = (k + G - 1) / G * G;
  std::vector<float> m((size_t)kp * d), q(kp), nb(kp);
  bool far = false;
  float nbmax = 0.f;
  const float qnan = std::numeric_limits<float>::quiet_NaN();
  for (int cc = 0; cc < kp; ++cc) {
    bool nan = cc >= k;
    float s = 0.f;
    std::vector<float> b(d, 0.f);
    for (int j = 0; j < d && !nan; ++j) {
      const double v = c[(size_t)cc * d + j];
      if (v != v) { nan = true; break; }
      b[j] = (float)((v - mean[j]) * scale);
      far |= !(fabsf(b[j]) <= 1048576.f);
      s = fmaf(b[j], b[j], s);
    }
    for (int j = 0; j < d; ++j) m[(size_t)cc * d + j] = nan ? qnan : -2.0f * b[j];
    q[cc] = nan ? qnan : __fmaf_rd(-bd.kappa, s, s);
    nb[cc] = nan ? qnan : s;
    if (!nan && !far) nbmax = std::max(nbmax, s);
  }
  bd.nbmax = nbmax;
  for (int i = 0; i < n; ++i) {
    const double *xi = &x[(size_t)i * d];
    // the exact rule
    double best = INFINITY;
    int eb = -1;
    for (int cc = 0; cc < k; ++cc) {
      double t = xi[0] - c[(size_t)cc * d];
      double dd = t * t;
      for (int j = 1; j < d; ++j) { t = xi[j] - c[(size_t)cc * d + j]; dd = dd + t * t; }
      if (dd < best) { best = dd; eb = cc; }
    }
    ++res.pts;
    if (far) continue;
    std::vector<float> a(d);
    float na = 0.f;
    for (int j = 0; j < d; ++j) { a[j] = (float)((xi[j] - mean[j]) * scale); na = fmaf(a[j], a[j], na); }
    auto w = [&](int cc) {
      float t = q[cc];
      for (int j = 0; j < d; ++j) t = __fmaf_rd(a[j], m[(size_t)cc * d + j], t);
      return t;
    };
    float b1 = INFINITY, b2 = INFINITY;
    int bg = -1;
    for (int c0 = 0; c0 < kp; c0 += G) {
      float mm = INFINITY;
      for (int g = 0; g < G; ++g) mm = fminf(mm, w(c0 + g));
      b2 = fminf(b2, fmaxf(b1, mm));
      if (mm < b1) { b1 = mm; bg = c0; }
    }
    if (bg < 0) continue;
    int first = -1;
    float others = INFINITY, nbi = 0.f;
    for (int g = 0; g < G; ++g) {
      const float v = w(bg + g);
      if (first < 0 && v == b1) { first = g; nbi = nb[bg + g]; }
      else others = fminf(others, v);
    }
    const float wo = fminf(b2, others);
    const bool ok = first >= 0 && (naive ? b1 < wo : df_certified(b1, wo, nbi, na, d, bd));
    if (ok) {
      ++res.cert;
      if (bg + first != eb) {
        if (++res.wrong <= 5) printf("WRONG %s: point %d d %d k %d: %d vs exact %d\n", what, i, d, k, bg + first, eb);
      }
    }
  }
}

int main(int argc, char **argv) {
  const bool naive = argc > 1 && !strcmp(argv[1], "naive");
  std::mt19937_64 g(7);
  std::uniform_real_distribution<double> U(-1, 1);
  std::normal_distribution<double> N(0, 1);
  Result res, by[8];
  const char *names[8] = {};
  for (int trial = 0; trial < 400; ++trial) {
    const int d = 1 + trial % 8, k = 2 + (trial * 37) % 160, n = 300;
    const int kind = trial % 8;
    const double scales[] = {1.0, 1e-110, 1e110, 1e-20, 1e20, 1e-3};
    const double sc = scales[(trial / 8) % 6], off = (trial / 48) % 2 ? 1e8 : 0.0;
    std::vector<double> x((size_t)n * d), c((size_t)k * d);
    const char *what = "";
    if (kind == 0) {  // uniform
      what = "uniform";
      for (auto &v : x) v = U(g);
      for (auto &v : c) v = U(g);
    } else if (kind == 1) {  // lattice: exact ties
      what = "lattice";
      for (auto &v : x) v = (double)(g() % 4);
      for (auto &v : c) v = (double)(g() % 7) * 0.5;
    } else if (kind == 2) {  // duplicate centers
      what = "duplicates";
      for (auto &v : x) v = U(g);
      for (int cc = 0; cc < k; ++cc) for (int j = 0; j < d; ++j) c[(size_t)cc * d + j] = cc % 2 ? c[(size_t)(cc - 1) * d + j] : U(g);
    } else if (kind == 3 || kind == 4) {  // bisector of centers 0 and 1 (and 2^-6 .. 2^-45 off it)
      what = kind == 3 ? "bisector" : "off bisector";
      for (int j = 0; j < d; ++j) { c[j] = j ? 0.0 : -0.5; c[d + j] = j ? 0.0 : 0.5; }
      for (int cc = 2; cc < k; ++cc) for (int j = 0; j < d; ++j) c[(size_t)cc * d + j] = 30 + N(g);
      for (int i = 0; i < n; ++i) for (int j = 0; j < d; ++j) {
        double v = j ? N(g) : 0.0;
        if (kind == 4 && !j) v = (i % 2 ? 1 : -1) * std::ldexp(1.0, -6 - i % 40);
        x[(size_t)i * d + j] = v;
      }
    } else if (kind == 5) {  // blobs, two starting centers a blob
      what = "blobs";
      std::vector<double> mu((size_t)k * d);
      for (auto &v : mu) v = 20 * U(g);
      for (int i = 0; i < n; ++i) { int b = g() % k; for (int j = 0; j < d; ++j) x[(size_t)i * d + j] = mu[(size_t)b * d + j] + N(g); }
      for (int cc = 0; cc < k; ++cc) for (int j = 0; j < d; ++j) c[(size_t)cc * d + j] = x[(size_t)((cc / 2) % n) * d + j] + 1e-9 * (cc % 2);
    } else if (kind == 6) {  // NaN centers (empty clusters) among uniform ones
      what = "NaN centers";
      for (auto &v : x) v = U(g);
      for (int cc = 0; cc < k; ++cc) for (int j = 0; j < d; ++j) c[(size_t)cc * d + j] = cc % 3 == 1 ? NAN : U(g);
    } else {  // points copied from centers (distance 0), and far centers
      what = "on centers";
      for (auto &v : c) v = U(g);
      for (int i = 0; i < n; ++i) for (int j = 0; j < d; ++j) x[(size_t)i * d + j] = i % 2 ? c[(size_t)(i % k) * d + j] : U(g);
      if (trial % 16 == 7) for (int j = 0; j < d; ++j) c[(size_t)(k - 1) * d + j] = 1e7;  // outside the box
    }
    for (auto &v : x) v = v * sc + off * sc;
    for (auto &v : c) v = v * sc + off * sc;
    Result r;
    run(x, c, n, d, k, naive, r, what);
    names[kind] = what;
    for (Result *t : {&res, &by[kind]}) { t->pts += r.pts; t->cert += r.cert; t->wrong += r.wrong; }
  }
  for (int i = 0; i < 8; ++i)
    printf("  %-13s certified %5.1f%% of %lld points, wrong %lld\n", names[i], 100.0 * by[i].cert / by[i].pts,
           by[i].pts, by[i].wrong);
  printf("%s: certified %lld of %lld points, wrong %lld\n", naive ? "naive test" : "df_certified", res.cert, res.pts,
         res.wrong);
  return naive ? res.wrong == 0 : res.wrong != 0;
}
