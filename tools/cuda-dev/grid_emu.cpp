// grid_emu.cpp: the small-d assignment through a grid of cells
// (src/cuda/detail/cell_grid.cuh) on the CPU: the grid and each cell's
// candidate list as the build kernel makes them (the header's own
// functions), then every point's label from its cell's list, checked
// against the full scan in both precisions' arithmetic:
//   double: exact no-FMA distances in coordinate order, strict '<' in index
//           order, NaN never taken (stats::kmeans's rule);
//   float:  Small<float>'s dot form |c|^2 + sum_j x_j (-2 c_j) by FMAs.
// Data: blobs like bench.R's B and C, uniform, lattices (exact ties),
// duplicate centers, points on bisectors, offsets, scales 1e-30 .. 1e30
// (double also 1e-200 .. 1e200), NaN centers, a line, d = 1..3.
// Prints, per data set, the share of points the lists served, their mean
// length and a warp's cost (the longest list of 32 consecutive points)
// against k.  Replacing the test by "lb <= U" (no slack) must give wrong
// labels (the check works: ./grid_emu naive).
// The same data also check the warp boxes' lists (warp_box.cuh, issue 15's
// route for B): rows ordered along a Z curve, 128 consecutive rows a box,
// its list from U (both precisions) and from R over previous labels (float;
// a few of them wrong on purpose), each point's label from the list against
// the full scan.
//   make grid_emu && ./grid_emu
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "../../src/cuda/detail/cell_grid.cuh"
#include "../../src/cuda/detail/warp_box.cuh"
using namespace gk;

static bool naive = false;
static long long total_wrong = 0;

// The exact rule over the centers list[0, cnt) (null: 0 .. cnt - 1), in
// that order (-1: no finite distance).
static int scan_double(const double *x, const std::vector<double> &c, int d, const int *list, int cnt) {
  double best = INFINITY;
  int bi = -1;
  for (int t = 0; t < cnt; ++t) {
    const int j = list ? list[t] : t;
    double dd = 0;
    for (int q = 0; q < d; ++q) {
      const double df = x[q] - c[(size_t)j * d + q];
      const double sq = df * df;
      dd = q == 0 ? sq : dd + sq;
    }
    if (dd < best) { best = dd; bi = j; }
  }
  return bi;
}
static float dot_float(const float *x, const float *c, int d) {
  float cc = 0;
  for (int t = 0; t < d; ++t) cc = std::fmaf(c[t], c[t], cc);
  float w = cc;
  for (int t = 0; t < d; ++t) w = std::fmaf(x[t], -2.0f * c[t], w);
  return w;
}
static int scan_float(const float *x, const std::vector<float> &c, int k, int d, const int *list, int cnt) {
  float best = INFINITY;
  int bi = -1;
  for (int t = 0; t < cnt; ++t) {
    const int j = list ? list[t] : t;
    const float w = dot_float(x, &c[(size_t)j * d], d);
    if (w < best) { best = w; bi = j; }
  }
  return bi;
}
struct Grid {
  GridBox box;
  std::vector<int> counts, lists;
};

// The build kernel's work: the finite centers' box, then per cell U and the
// list (index order, at most kGridCap; more: -1).
static Grid build(const std::vector<double> &c, int k, int d, int cells, bool single) {
  Grid g;
  double bmin[kGridMaxD], bmax[kGridMaxD];
  for (int j = 0; j < kGridMaxD; ++j) { bmin[j] = INFINITY; bmax[j] = -INFINITY; }
  std::vector<float> cf((size_t)k * d);
  for (int i = 0; i < k; ++i) {
    bool fin = true;
    for (int j = 0; j < d; ++j) fin = fin && std::isfinite(c[(size_t)i * d + j]);
    for (int j = 0; j < d; ++j) cf[(size_t)i * d + j] = (float)c[(size_t)i * d + j];
    if (!fin) { cf[(size_t)i * d] = NAN; continue; }
    for (int j = 0; j < d; ++j) {
      bmin[j] = std::min(bmin[j], c[(size_t)i * d + j]);
      bmax[j] = std::max(bmax[j], c[(size_t)i * d + j]);
    }
  }
  grid_box(bmin, bmax, d, cells, single, g.box);
  if (!g.box.usable) return g;
  for (int i = 0; i < k; ++i)  // (the kernel's values: relative to the box's middle)
    if (!std::isnan(cf[(size_t)i * d]))
      for (int j = 0; j < d; ++j) cf[(size_t)i * d + j] = (float)((c[(size_t)i * d + j] - g.box.mid[j]) * g.box.scale);
  const int ncell = g.box.g[0] * g.box.g[1] * g.box.g[2];
  g.counts.assign(ncell, 0);
  g.lists.assign((size_t)ncell * kGridCap, 0);
  // a list of the candidates src (all when null) for the box [lo, hi]
  auto list_of = [&](const float *lo, const float *hi, const std::vector<int> *src, std::vector<int> &out) {
    float l[kGridMaxD] = {0, 0, 0}, h[kGridMaxD] = {0, 0, 0};
    for (int j = 0; j < d; ++j) { l[j] = lo[j]; h[j] = hi[j]; }
    const int m = src ? (int)src->size() : k;
    float U = INFINITY;
    std::vector<float> lbs(m);
    for (int t = 0; t < m; ++t) {
      const int i = src ? (*src)[t] : t;
      float lb, ub, cv[kGridMaxD] = {0, 0, 0};
      for (int j = 0; j < d; ++j) cv[j] = cf[(size_t)i * d + j];
      box_dist(l, h, cv, d, lb, ub);
      lbs[t] = lb;
      U = std::fmin(U, ub);
    }
    const double lim = naive ? (double)U : grid_limit(U, g.box.slack);
    out.clear();
    for (int t = 0; t < m; ++t)
      if ((double)lbs[t] <= lim) out.push_back(src ? (*src)[t] : t);
  };
  // the kernel's super-cells of kGridSuper cells a side, then their cells
  int sg[kGridMaxD], nsup = 1, per_sup = 1;
  for (int j = 0; j < kGridMaxD; ++j) {
    sg[j] = (g.box.g[j] + kGridSuper - 1) / kGridSuper;
    nsup *= sg[j];
    if (j < d) per_sup *= kGridSuper;
  }
  std::vector<int> sup, cl;
  for (int S = 0; S < nsup; ++S) {
    int s0[kGridMaxD] = {0, 0, 0}, r = S;
    float lo[kGridMaxD] = {0, 0, 0}, hi[kGridMaxD] = {0, 0, 0};
    for (int j = 0; j < kGridMaxD; ++j) {
      s0[j] = (r % sg[j]) * kGridSuper;
      r /= sg[j];
      if (j < d) {
        lo[j] = edge_lo(g.box, j, s0[j]);
        hi[j] = edge_hi(g.box, j, std::min(s0[j] + kGridSuper, g.box.g[j]) - 1);
      }
    }
    list_of(lo, hi, nullptr, sup);
    const bool listed = (int)sup.size() <= kGridSuperCap;
    for (int q = 0; q < per_sup; ++q) {
      int cell = 0, mul = 1, rr = q;
      bool in = true;
      for (int j = 0; j < d; ++j) {
        const int i = s0[j] + rr % kGridSuper;
        rr /= kGridSuper;
        in = in && i < g.box.g[j];
        cell += i * mul;
        mul *= g.box.g[j];
      }
      if (!in) continue;
      float clo[kGridMaxD], chi[kGridMaxD];
      cell_box(g.box, cell, d, clo, chi);
      list_of(clo, chi, listed ? &sup : nullptr, cl);
      for (int t = 0; t < (int)cl.size() && t < kGridCap; ++t) g.lists[(size_t)cell * kGridCap + t] = cl[t];
      g.counts[cell] = (int)cl.size() <= kGridCap ? (int)cl.size() : -1;
    }
  }
  return g;
}

// The float engine's values: x and the centers less x's column means, in
// float; a center with a coordinate that is not finite is NaN throughout
// (Small<float>: never taken).  rounded (may be null): the centers' float
// values before that, as doubles.
static void float_values(const std::vector<double> &x, const std::vector<double> &c, long long n, int k, int d,
                         std::vector<float> &xf, std::vector<float> &cfl, std::vector<double> *rounded) {
  std::vector<double> mean(d, 0.0);
  for (long long i = 0; i < n; ++i) for (int j = 0; j < d; ++j) mean[j] += x[(size_t)i * d + j] / n;
  xf.resize(x.size());
  cfl.resize(c.size());
  for (size_t i = 0; i < x.size(); ++i) xf[i] = (float)(x[i] - mean[i % d]);
  for (size_t i = 0; i < c.size(); ++i) cfl[i] = (float)(c[i] - mean[i % d]);
  if (rounded) rounded->assign(cfl.begin(), cfl.end());
  for (int i = 0; i < k; ++i) {
    bool fin = true;
    for (int j = 0; j < d; ++j) fin = fin && std::isfinite(cfl[(size_t)i * d + j]);
    if (!fin) for (int j = 0; j < d; ++j) cfl[(size_t)i * d + j] = NAN;
  }
}

// All points against the full scan, in one precision.
static void check(const char *what, const std::vector<double> &x, const std::vector<double> &c, long long n, int k,
                  int d, bool single, int cells) {
  std::vector<double> cx = c;
  std::vector<float> xf, cfl;
  if (single) float_values(x, c, n, k, d, xf, cfl, &cx);  // (the grid built from the rounded centers)
  Grid g = build(cx, k, d, cells, single);
  long long served = 0, listed = 0, wrong = 0;
  double warp_cost = 0;
  long long warps = 0;
  int wmax = 0;
  for (long long i = 0; i < n; ++i) {
    const double *xd = &x[(size_t)i * d];
    double xs[kGridMaxD];
    for (int j = 0; j < d; ++j) xs[j] = single ? (double)xf[(size_t)i * d + j] : xd[j];
    const int cell = g.box.usable ? grid_cell(g.box, xs, d) : -1;
    const int cnt = cell >= 0 ? g.counts[cell] : -1;
    int got, want;
    if (single) {
      const float *xp = &xf[(size_t)i * d];
      want = scan_float(xp, cfl, k, d, nullptr, k);
      got = cnt >= 0 ? scan_float(xp, cfl, k, d, &g.lists[(size_t)cell * kGridCap], cnt) : want;
    } else {
      want = scan_double(xd, c, d, nullptr, k);
      got = cnt >= 0 ? scan_double(xd, c, d, &g.lists[(size_t)cell * kGridCap], cnt) : want;
    }
    if (cnt >= 0) { ++served; listed += cnt; }
    if (got != want) ++wrong;
    wmax = std::max(wmax, cnt >= 0 ? cnt : k);
    if (i % 32 == 31 || i == n - 1) { warp_cost += wmax; ++warps; wmax = 0; }
  }
  total_wrong += wrong;
  std::printf("%-28s %s d=%d k=%5d cells=%5d(%dx%dx%d): served %6.2f%%, list %5.2f, warp %6.1f (k %d), wrong %lld\n",
              what, single ? "float " : "double", d, k, cells, g.box.g[0], g.box.g[1], g.box.g[2],
              100.0 * served / n, served ? (double)listed / served : 0.0, warp_cost / warps, k, wrong);
}

// Rows in the order of a Z curve over their box (10 bits a dimension).
static std::vector<long long> z_order(const std::vector<double> &v, long long n, int d) {
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (long long i = 0; i < n; ++i)
    for (int j = 0; j < d; ++j) { lo[j] = std::min(lo[j], v[(size_t)i * d + j]); hi[j] = std::max(hi[j], v[(size_t)i * d + j]); }
  std::vector<unsigned long long> key(n);
  for (long long i = 0; i < n; ++i) {
    unsigned long long z = 0;
    for (int j = 0; j < d; ++j) {
      const double w = hi[j] - lo[j];
      const unsigned q = w > 0 ? (unsigned)std::min(1023.0, (v[(size_t)i * d + j] - lo[j]) / w * 1024) : 0u;
      for (int t = 0; t < 10; ++t) z |= (unsigned long long)((q >> t) & 1u) << (d * t + j);
    }
    key[i] = z;
  }
  std::vector<long long> ord(n);
  for (long long i = 0; i < n; ++i) ord[i] = i;
  std::stable_sort(ord.begin(), ord.end(), [&](long long a, long long b) { return key[a] < key[b]; });
  return ord;
}
static float down_to_float(double v) {
  float f = (float)v;
  if ((double)f > v) f = std::nextafterf(f, -INFINITY);
  return f;
}
static float up_to_float(double v) {
  float f = (float)v;
  if ((double)f < v) f = std::nextafterf(f, INFINITY);
  return f;
}

// The warp boxes' lists against the full scan, in one precision (the same
// values as check()).
static void check_wbox(const char *what, const std::vector<double> &x, const std::vector<double> &c, long long n, int k,
                       int d, bool single, std::mt19937_64 &rng) {
  std::vector<float> xf, cfl((size_t)k * d);
  if (single) float_values(x, c, n, k, d, xf, cfl, nullptr);
  else for (size_t i = 0; i < c.size(); ++i) cfl[i] = (float)c[i];  // (the box test's centers)
  std::vector<double> vals(x.size());
  for (size_t i = 0; i < x.size(); ++i) vals[i] = single ? (double)xf[i] : x[i];
  const std::vector<long long> ord = z_order(vals, n, d);
  // the largest |c_j| of the finite centers (the kernels: once a block)
  float Mc[3] = {0, 0, 0};
  double Mcd = 0;
  for (int i = 0; i < k; ++i)
    for (int j = 0; j < d; ++j) {
      const double v = c[(size_t)i * d + j];
      if (std::isfinite(v)) Mcd = std::max(Mcd, std::fabs(v));
      if (std::isfinite(cfl[(size_t)i * d + j])) Mc[j] = std::max(Mc[j], std::fabs(cfl[(size_t)i * d + j]));
    }
  const int W = 128;
  long long wrong[2] = {0, 0}, listed[2] = {0, 0}, boxes = 0;
  std::vector<int> want(n), list;
  for (long long i = 0; i < n; ++i)
    want[i] = single ? scan_float(&xf[(size_t)i * d], cfl, k, d, nullptr, k) : scan_double(&x[(size_t)i * d], c, d, nullptr, k);
  std::vector<int> second(n, 0), others(k > 1 ? k - 1 : 1);  // (float: R's movers)
  if (single && k > 1)
    for (long long i = 0; i < n; ++i) {
      int q = 0;
      for (int j = 0; j < k; ++j) if (j != want[i]) others[q++] = j;
      const int s2 = scan_float(&xf[(size_t)i * d], cfl, k, d, others.data(), k - 1);
      second[i] = s2 >= 0 ? s2 : 0;
    }
  for (long long w0 = 0; w0 < n; w0 += W) {
    const long long w1 = std::min(n, w0 + W);
    float lo[3], hi[3];
    double M = Mcd;
    for (int j = 0; j < d; ++j) {
      double a = INFINITY, b = -INFINITY;
      for (long long t = w0; t < w1; ++t) { a = std::min(a, vals[(size_t)ord[t] * d + j]); b = std::max(b, vals[(size_t)ord[t] * d + j]); }
      lo[j] = down_to_float(a);
      hi[j] = up_to_float(b);
      M = std::max(M, (double)std::max(std::fabs(lo[j]), std::fabs(hi[j])));
    }
    float U = INFINITY;
    for (int i = 0; i < k; ++i) U = std::fmin(U, wb_largest(lo, hi, &cfl[(size_t)i * d], d));
    for (int bound = 0; bound < (single ? 2 : 1); ++bound) {
      double limit;
      if (single) {
        float M2 = 0;
        for (int j = 0; j < d; ++j) {
          const float m = std::max(Mc[j], std::max(std::fabs(lo[j]), std::fabs(hi[j])));
          M2 = std::fmaf(m, m, M2);
        }
        float B = U;
        if (bound == 1) {  // R: previous labels, one in 50 of them the second nearest center (a mover)
          float R = 0;
          bool lost = false;  // (a NaN center named: U instead)
          for (long long t = w0; t < w1; ++t) {
            const long long i = ord[t];
            const int old = rng() % 50 ? (want[i] >= 0 ? want[i] : 0) : second[i];
            const float *cp = &cfl[(size_t)old * d];
            float r = 0;
            for (int j = 0; j < d; ++j) {
              const float df = xf[(size_t)i * d + j] - cp[j];
              r = j == 0 ? df * df : std::fmaf(df, df, r);
            }
            R = std::fmax(R, r);
            lost = lost || r != r;
          }
          B = lost ? U : R;
        }
        limit = naive ? (double)B : (double)wb_limit_single(B, wb_error_single(M2, d));
      } else {
        limit = !wb_usable(M) ? INFINITY : naive ? (double)U : wb_limit_double(U, wb_center_eps(Mcd, d), d);
      }
      list.clear();
      for (int i = 0; i < k; ++i)
        if (!((double)wb_least(lo, hi, &cfl[(size_t)i * d], d) > limit)) list.push_back(i);
      listed[bound] += (long long)list.size();
      for (long long t = w0; t < w1; ++t) {
        const long long i = ord[t];
        const int got = single ? scan_float(&xf[(size_t)i * d], cfl, k, d, list.data(), (int)list.size())
                               : scan_double(&x[(size_t)i * d], c, d, list.data(), (int)list.size());
        if (got != want[i]) ++wrong[bound];
      }
    }
    ++boxes;
  }
  total_wrong += wrong[0] + wrong[1];
  if (single)
    std::printf("%-28s float  d=%d k=%5d: warp boxes, U: list %6.2f, wrong %lld; R: list %6.2f, wrong %lld\n", what, d, k,
                (double)listed[0] / boxes, wrong[0], (double)listed[1] / boxes, wrong[1]);
  else
    std::printf("%-28s double d=%d k=%5d: warp boxes, U: list %6.2f, wrong %lld\n", what, d, k, (double)listed[0] / boxes,
                wrong[0]);
}

static void both(const char *what, const std::vector<double> &x, const std::vector<double> &c, long long n, int k,
                 int d, int cells, bool float_too = true) {
  check(what, x, c, n, k, d, false, cells);
  if (float_too) check(what, x, c, n, k, d, true, cells);
  static std::mt19937_64 wrng(11);
  check_wbox(what, x, c, n, k, d, false, wrng);
  if (float_too) check_wbox(what, x, c, n, k, d, true, wrng);
}

// bench.R's blobs: k centers uniform in [0, 100]^d, points ~ N(center, 1);
// centers: k rows of x, then `lloyd` full-scan Lloyd steps in double.
static void blobs(const char *what, long long n, int d, int k, int lloyd, int cells, std::mt19937_64 &rng) {
  std::uniform_real_distribution<double> U(0, 100);
  std::normal_distribution<double> N(0, 1);
  std::vector<double> mu((size_t)k * d), x((size_t)n * d), c((size_t)k * d);
  for (auto &v : mu) v = U(rng);
  for (long long i = 0; i < n; ++i) {
    const int l = (int)(rng() % k);
    for (int j = 0; j < d; ++j) x[(size_t)i * d + j] = mu[(size_t)l * d + j] + N(rng);
  }
  for (int i = 0; i < k; ++i) {
    const long long r = (long long)(rng() % n);
    for (int j = 0; j < d; ++j) c[(size_t)i * d + j] = x[(size_t)r * d + j];
  }
  both(what, x, c, n, k, d, cells);
  for (int it = 0; it < lloyd; ++it) {
    std::vector<double> s((size_t)k * d, 0.0);
    std::vector<long long> cnt(k, 0);
    for (long long i = 0; i < n; ++i) {
      const int l = scan_double(&x[(size_t)i * d], c, d, nullptr, k);
      ++cnt[l];
      for (int j = 0; j < d; ++j) s[(size_t)l * d + j] += x[(size_t)i * d + j];
    }
    for (int i = 0; i < k; ++i)
      for (int j = 0; j < d; ++j) c[(size_t)i * d + j] = cnt[i] ? s[(size_t)i * d + j] / cnt[i] : NAN;
  }
  if (lloyd) {
    char w[64];
    std::snprintf(w, sizeof w, "%s, %d Lloyd", what, lloyd);
    both(w, x, c, n, k, d, cells);
  }
}

int main(int argc, char **argv) {
  naive = argc > 1 && !std::strcmp(argv[1], "naive");
  std::mt19937_64 rng(7);
  // the bench problems (fewer points) and the cell counts a plan would use
  for (int cells : {256, 512, 1024}) blobs("B blobs", 200000, 2, 100, 3, cells, rng);
  for (int cells : {2048, 4096, 8192}) blobs("C blobs", 200000, 2, 1000, 3, cells, rng);
  blobs("blobs d=1", 100000, 1, 300, 2, 1024, rng);
  blobs("blobs d=3", 100000, 3, 500, 2, 2048, rng);
  std::uniform_real_distribution<double> U01(0, 1);
  for (int d = 1; d <= 3; ++d) {
    for (int k : {40, 200, 1500}) {
      const long long n = 60000;
      std::vector<double> x((size_t)n * d), c((size_t)k * d);
      for (auto &v : x) v = U01(rng);
      for (auto &v : c) v = U01(rng);
      both("uniform", x, c, n, k, d, 4 * k);
      // the same shape at scales and offsets
      for (double sc : {1e-30, 1e30, 1e-200, 1e200}) {
        std::vector<double> xs = x, cs = c;
        for (auto &v : xs) v *= sc;
        for (auto &v : cs) v *= sc;
        both(sc > 1 ? "scaled up" : "scaled down", xs, cs, n, k, d, 4 * k, std::fabs(std::log10(sc)) < 35);
      }
      {
        std::vector<double> xs = x, cs = c;
        for (auto &v : xs) v = 1e4 + v * 1e-3;
        for (auto &v : cs) v = 1e4 + v * 1e-3;
        both("offset 1e4, width 1e-3", xs, cs, n, k, d, 4 * k);
      }
      {  // lattice: points and centers on integers (exact ties), duplicates
        std::vector<double> xs = x, cs = c;
        for (auto &v : xs) v = std::floor(v * 12);
        for (auto &v : cs) v = std::floor(v * 8) * 1.5;
        both("lattice, duplicate centers", xs, cs, n, k, d, 4 * k);
      }
      {  // points on the bisectors of center pairs, and 2^-40 off them
        std::vector<double> xs = x;
        for (long long i = 0; i < n; ++i) {
          const int a = (int)(rng() % k), b = (int)(rng() % k);
          const double off = (i % 3) * 0x1p-40;
          for (int j = 0; j < d; ++j)
            xs[(size_t)i * d + j] = 0.5 * (c[(size_t)a * d + j] + c[(size_t)b * d + j]) + off;
        }
        both("bisectors", xs, c, n, k, d, 4 * k);
      }
      {  // empty clusters' NaN centers, one far center
        std::vector<double> cs = c;
        for (int i = 0; i < k; i += 7) for (int j = 0; j < d; ++j) cs[(size_t)i * d + j] = NAN;
        cs[(size_t)(k - 1) * d] = 50;
        both("NaN centers, one far", x, cs, n, k, d, 4 * k);
      }
    }
  }
  {  // longitude and latitude: far from the origin, a small spread
    const int k = 300, d = 2;
    const long long n = 100000;
    std::vector<double> x((size_t)n * d), c((size_t)k * d);
    std::normal_distribution<double> N(0, 0.01);
    for (int i = 0; i < k; ++i) { c[(size_t)i * d] = -74.2 + 0.4 * U01(rng); c[(size_t)i * d + 1] = 40.5 + 0.4 * U01(rng); }
    for (long long i = 0; i < n; ++i) {
      const int l = (int)(rng() % k);
      for (int j = 0; j < d; ++j) x[(size_t)i * d + j] = c[(size_t)l * d + j] + N(rng);
    }
    both("longitude, latitude", x, c, n, k, d, 4 * k);
  }
  {  // a line: the second coordinate constant among the centers
    const int k = 300, d = 2;
    const long long n = 60000;
    std::vector<double> x((size_t)n * d), c((size_t)k * d);
    for (long long i = 0; i < n; ++i) { x[(size_t)i * d] = U01(rng); x[(size_t)i * d + 1] = 0.01 * U01(rng); }
    for (int i = 0; i < k; ++i) { c[(size_t)i * d] = U01(rng); c[(size_t)i * d + 1] = 0.005; }
    both("line", x, c, n, k, d, 4 * k);
  }
  std::printf("%s: %lld wrong labels\n", naive ? "naive test" : "grid lists", total_wrong);
  return naive ? (total_wrong > 0 ? 0 : 1) : (total_wrong == 0 ? 0 : 1);
}
