// harness.cpp: standalone correctness tests and benchmarks of the CUDA engine
// (src/cuda) against a CPU reference with exactly stats::kmeans' Lloyd rules.
//   harness test     correctness, determinism, edge cases
//   harness bench    ms per iteration on the five standard problems A-E
//   harness all      both (default)
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "gk_cuda.h"

static int g_fail = 0, g_pass = 0;
#define CHECK(cond, ...)                      \
  do {                                        \
    if (cond) ++g_pass;                       \
    else { ++g_fail; printf("  FAIL: " __VA_ARGS__); printf("\n"); } \
  } while (0)

// ---- data -------------------------------------------------------------------
struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed) {}
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double unif() { return (next() >> 11) * (1.0 / 9007199254740992.0); }
  double norm() {
    double u = unif(), v = unif();
    if (u < 1e-300) u = 1e-300;
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
  }
};

// blobs: kt true centers uniform in [-10, 10]^d, unit normal noise, offset added
static std::vector<double> blobs(long long n, int d, int kt, uint64_t seed, double offset = 0) {
  Rng r(seed);
  std::vector<double> ctr((size_t)kt * d), x((size_t)n * d);
  for (auto &v : ctr) v = -10 + 20 * r.unif();
  for (long long i = 0; i < n; ++i) {
    int c = (int)(r.next() % kt);
    for (int j = 0; j < d; ++j) x[i + n * j] = offset + ctr[c + (size_t)kt * j] + r.norm();
  }
  return x;
}
static std::vector<double> uniform(long long n, int d, uint64_t seed) {
  Rng r(seed);
  std::vector<double> x((size_t)n * d);
  for (auto &v : x) v = r.unif();
  return x;
}
static std::vector<double> init_centers(const std::vector<double> &x, long long n, int d, int k) {
  std::vector<double> c((size_t)k * d);
  for (int cc = 0; cc < k; ++cc) {
    long long i = (n == k) ? cc : ((long long)cc * 7919 + 13) % n;
    for (int j = 0; j < d; ++j) c[cc + (size_t)k * j] = x[i + n * j];
  }
  return c;
}

// ---- CPU reference: R's src/library/stats/src/kmeans.c, kmeans_Lloyd ----------
static int cpu_lloyd(const double *x, int n, int p, double *cen, int k, int maxiter, int *cl,
                     int *nc, double *wss) {
  int iter, i, j, c, it, inew = 0;
  double best, dd, tmp;
  bool updated;
  for (i = 0; i < n; i++) cl[i] = -1;
  for (iter = 0; iter < maxiter; iter++) {
    updated = false;
    for (i = 0; i < n; i++) {
      best = INFINITY;
      for (j = 0; j < k; j++) {
        dd = 0.0;
        for (c = 0; c < p; c++) {
          tmp = x[i + (size_t)n * c] - cen[j + (size_t)k * c];
          dd += tmp * tmp;
        }
        if (dd < best) { best = dd; inew = j + 1; }
      }
      if (cl[i] != inew) { updated = true; cl[i] = inew; }
    }
    if (!updated) break;
    for (j = 0; j < k * p; j++) cen[j] = 0.0;
    for (j = 0; j < k; j++) nc[j] = 0;
    for (i = 0; i < n; i++) {
      it = cl[i] - 1;
      nc[it]++;
      for (c = 0; c < p; c++) cen[it + (size_t)c * k] += x[i + (size_t)c * n];
    }
    for (j = 0; j < k * p; j++) cen[j] /= nc[j % k];
  }
  for (j = 0; j < k; j++) wss[j] = 0.0;
  for (j = 0; j < k; j++) nc[j] = 0;
  for (i = 0; i < n; i++) {
    it = cl[i] - 1;
    nc[it]++;
    for (c = 0; c < p; c++) {
      tmp = x[i + (size_t)n * c] - cen[it + (size_t)k * c];
      wss[it] += tmp * tmp;
    }
  }
  return iter + 1;
}

// ---- GPU fit ------------------------------------------------------------------
struct Result {
  int status = 0;
  std::string msg;
  std::vector<double> centers, wss;
  std::vector<int> cl, size;
  gk_cuda_fit_info info;
  bool converged = false;
};


struct Fitter {
  gk_cuda_data *data = nullptr;
  long long n;
  int d, single;
  Fitter(const std::vector<double> &x, long long n_, int d_, int single_, int bounds = 0) : n(n_), d(d_), single(single_) {
    char err[512] = "";
    gk_cuda_options o = {0, single, 0, 0, 0, 0.0, bounds};
    int st = gk_cuda_upload(x.data(), n, d, &o, nullptr, &data, nullptr, nullptr, err, sizeof err);
    if (st) { printf("  upload failed (%d): %s\n", st, err); data = nullptr; }
  }
  ~Fitter() { gk_cuda_free(data); }
  Result fit(int k, const std::vector<double> &c0, int max_iter, const gk_cuda_callbacks *cb = nullptr) {
    Result r;
    char err[512] = "";
    r.centers = c0;
    r.cl.assign(n, -7);
    r.size.assign(k, -7);
    r.wss.assign(k, -7);
    memset(&r.info, 0, sizeof r.info);
    if (!data) { r.status = -1; return r; }
    r.status = gk_cuda_lloyd(data, k, max_iter, r.centers.data(), cb, r.cl.data(), r.size.data(), r.wss.data(), &r.info, err, sizeof err);
    r.converged = r.info.iter <= max_iter;
    r.msg = err;
    return r;
  }
};

static bool same_bits(const std::vector<double> &a, const std::vector<double> &b) {
  return a.size() == b.size() && memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

static double relerr(double a, double b) {
  if (isnan(a) && isnan(b)) return 0;
  if (isnan(a) || isnan(b)) return INFINITY;
  double den = std::max(fabs(a), fabs(b));
  return den == 0 ? 0 : fabs(a - b) / den;
}

// One test case: GPU (double and single) against the CPU reference.
static void case_run(const char *name, const std::vector<double> &x, long long n, int d, int k,
                     const std::vector<double> &c0, int max_iter) {
  printf("[%s] n=%lld d=%d k=%d max_iter=%d\n", name, n, d, k, max_iter);
  std::vector<double> rc = c0, rw(k);
  std::vector<int> rcl(n), rnc(k);
  int riter = cpu_lloyd(x.data(), (int)n, d, rc.data(), k, max_iter, rcl.data(), rnc.data(), rw.data());
  double rtot = 0;
  for (double v : rw) rtot += v;
  // scale for center comparisons: relative to the data's magnitude
  double xs = 0;
  for (double v : x) xs = std::max(xs, fabs(v));
  for (int single = 0; single <= 1; ++single) {
    Fitter F(x, n, d, single);
    Result a = F.fit(k, c0, max_iter);
    Result b = F.fit(k, c0, max_iter);
    const char *pr = single ? "single" : "double";
    CHECK(a.status == 0 && b.status == 0, "%s %s: status %d %s", name, pr, a.status, a.msg.c_str());
    if (a.status) continue;
    CHECK(a.cl == b.cl && same_bits(a.centers, b.centers) && same_bits(a.wss, b.wss) && a.size == b.size &&
              a.info.iter == b.info.iter,
          "%s %s: repeat fit not bitwise identical", name, pr);
    long long agree = 0;
    for (long long i = 0; i < n; ++i) agree += (a.cl[i] == rcl[i]);
    double tot = 0;
    for (double v : a.wss) tot += v;
    if (!single) {
      CHECK(agree == n, "%s double: %lld of %lld labels differ", name, n - agree, n);
      CHECK(a.info.iter == riter, "%s double: iter %d, CPU %d", name, a.info.iter, riter);
      double worst = 0;
      int nan_mismatch = 0;
      for (size_t e = 0; e < rc.size(); ++e) {
        if (isnan(rc[e]) != isnan(a.centers[e])) ++nan_mismatch;
        else if (!isnan(rc[e])) worst = std::max(worst, fabs(rc[e] - a.centers[e]) / std::max(fabs(rc[e]), 1e-300 + 0 * xs));
      }
      double worst_abs = 0;
      for (size_t e = 0; e < rc.size(); ++e)
        if (!isnan(rc[e]) && !isnan(a.centers[e])) worst_abs = std::max(worst_abs, fabs(rc[e] - a.centers[e]) / std::max(xs, 1e-300));
      CHECK(nan_mismatch == 0 && (worst <= 1e-10 || worst_abs <= 1e-13),
            "%s double: centers rel err %.3g (abs/max|x| %.3g), NaN mismatches %d", name, worst, worst_abs, nan_mismatch);
      CHECK(a.size == rnc, "%s double: sizes differ", name);
      // per cluster: relative 1e-10, or 1e-12 of tot.withinss (the device sums are
      // fixed point with 60 bits below the largest term: a singleton's 0 may be 1e-30)
      double wworst = 0;
      for (int c = 0; c < k; ++c) {
        double e = relerr(a.wss[c], rw[c]);
        if (e > 1e-10 && fabs(a.wss[c] - rw[c]) <= 1e-12 * rtot) e = 0;
        wworst = std::max(wworst, e);
      }
      CHECK(wworst <= 1e-10, "%s double: withinss rel err %.3g", name, wworst);
      printf("  double: iter %d (cpu %d), labels %lld/%lld, centers rel %.2e, wss rel %.2e, %.3f ms\n",
             a.info.iter, riter, agree, n, worst, wworst, a.info.ms_compute);
    } else {
      double frac = (double)agree / n;
      CHECK(frac >= 0.999, "%s single: label agreement %.5f", name, frac);
      CHECK(relerr(tot, rtot) <= 1e-5, "%s single: tot.withinss rel err %.3g", name, relerr(tot, rtot));
      printf("  single: iter %d (cpu %d), labels %.5f, tot.wss rel %.2e, %.3f ms\n", a.info.iter, riter, frac,
             relerr(tot, rtot), a.info.ms_compute);
    }
    // predict with the final centers == final labels (when converged: same assignment)
    if (a.converged) {
      std::vector<int> pl(n);
      char err[512];
      int st = gk_cuda_assign(F.data, k, a.centers.data(), pl.data(), err, sizeof err);
      long long pa = 0;
      for (long long i = 0; i < n; ++i) pa += (pl[i] == a.cl[i]);
      CHECK(st == 0 && (single ? pa >= 0.999 * n : pa == n), "%s %s: gk_cuda_assign %d (%s), %lld/%lld agree",
            name, pr, st, err, pa, n);
    }
  }
}

static void test_totss() {
  long long n = 100003;
  int d = 5;
  auto x = blobs(n, d, 7, 99, 1000.0);
  double ref = 0;
  for (int j = 0; j < d; ++j) {
    double m = 0;
    for (long long i = 0; i < n; ++i) m += x[i + n * j];
    m /= n;
    for (long long i = 0; i < n; ++i) ref += (x[i + n * j] - m) * (x[i + n * j] - m);
  }
  for (int single = 0; single <= 1; ++single) {
    Fitter F(x, n, d, single);
    double t1 = 0, t2 = 0;
    char err[512];
    int s1 = gk_cuda_totss(F.data, &t1, err, sizeof err);
    int s2 = gk_cuda_totss(F.data, &t2, err, sizeof err);
    double tol = single ? 1e-5 : 1e-12;
    CHECK(s1 == 0 && s2 == 0 && relerr(t1, ref) <= tol && memcmp(&t1, &t2, 8) == 0,
          "totss %s: %.17g vs %.17g (rel %.3g)", single ? "single" : "double", t1, ref, relerr(t1, ref));
    printf("[totss] %s rel err %.2e\n", single ? "single" : "double", relerr(t1, ref));
  }
}

struct TraceCtx { int calls = 0; int last_iter = 0; int64_t first_changed = -1; double last_tot = 0; };
static int on_iter(void *ctx, int iter, int64_t changed, double tot) {
  TraceCtx *t = (TraceCtx *)ctx;
  t->calls++;
  t->last_iter = iter;
  if (iter == 1) t->first_changed = changed;
  t->last_tot = tot;
  return 0;
}
static int stop_now(void *) { return 1; }

static void test_callbacks() {
  long long n = 20000;
  int d = 3, k = 8;
  auto x = blobs(n, d, 8, 5);
  auto c0 = init_centers(x, n, d, k);
  Fitter F(x, n, d, 0);
  Result plain = F.fit(k, c0, 50);
  TraceCtx t;
  gk_cuda_callbacks cb = {nullptr, on_iter, &t};
  Result tr = F.fit(k, c0, 50, &cb);
  CHECK(tr.status == 0 && tr.cl == plain.cl && same_bits(tr.centers, plain.centers) && tr.info.iter == plain.info.iter,
        "trace fit differs from plain fit");
  CHECK(t.calls == tr.info.iter - (tr.converged ? 0 : 1) && t.first_changed == n,
        "trace: %d calls, iter %d, first changed %lld", t.calls, tr.info.iter, (long long)t.first_changed);
  printf("[callbacks] trace calls %d, iter %d, changed(1) %lld, last tot %.6g\n", t.calls, tr.info.iter,
         (long long)t.first_changed, t.last_tot);
  gk_cuda_callbacks cb2 = {stop_now, nullptr, nullptr};
  Result in = F.fit(k, c0, 50, &cb2);
  CHECK(in.status == GK_CUDA_INTERRUPTED, "interrupt: status %d", in.status);
}

// ---- the certified filter of double precision (src/cuda/detail/dfilter.cuh) ----
// The same fit with GPUKMEANS_DFILTER=0 (exact kernel) and =1 (filter where
// safe): labels, centers, within-SS bit for bit, sizes and iter equal.
static long long g_df_exact[3] = {0, 0, 0}, g_df_points[3] = {0, 0, 0};
static void df_pair(const char *name, const std::vector<double> &x, long long n, int d, int k,
                    const std::vector<double> &c0, int max_iter, int bounds = 1, bool cpu = false) {
  Fitter F(x, n, d, 0, bounds);
  setenv("GPUKMEANS_DFILTER", "0", 1);
  Result e = F.fit(k, c0, max_iter);
  int64_t ex0 = 0, it0 = 0;
  int used0 = 0;
  gk_cuda_dfilter_stats(F.data, &ex0, nullptr, &it0, &used0);
  CHECK(e.status == 0, "dfilter %s d=%d k=%d: exact status %d %s", name, d, k, e.status, e.msg.c_str());
  if (e.status) return;
  CHECK(used0 == 0, "dfilter %s: filter used with GPUKMEANS_DFILTER=0", name);
  if (cpu) {
    std::vector<double> rc = c0, rw(k);
    std::vector<int> rcl(n), rnc(k);
    int riter = cpu_lloyd(x.data(), (int)n, d, rc.data(), k, max_iter, rcl.data(), rnc.data(), rw.data());
    long long agree = 0;
    for (long long i = 0; i < n; ++i) agree += e.cl[i] == rcl[i];
    CHECK(agree == n && riter == e.info.iter, "dfilter %s: exact vs CPU %lld/%lld labels, iter %d vs %d", name, agree,
          n, e.info.iter, riter);
  }
  for (int mode = 1; mode <= 2; ++mode) {
    setenv("GPUKMEANS_DFILTER", mode == 1 ? "1" : "2", 1);
    Result f = F.fit(k, c0, max_iter);
    int64_t ex = 0, every = 0, it = 0;
    int used = 0;
    gk_cuda_dfilter_stats(F.data, &ex, &every, &it, &used);
    CHECK(f.status == 0, "dfilter %s d=%d k=%d mode %d: status %d %s", name, d, k, mode, f.status, f.msg.c_str());
    if (f.status) continue;
    long long diff = 0;
    for (long long i = 0; i < n; ++i) diff += e.cl[i] != f.cl[i];
    const bool same = diff == 0 && same_bits(e.centers, f.centers) && same_bits(e.wss, f.wss) && e.size == f.size &&
                      e.info.iter == f.info.iter;
    CHECK(same, "dfilter %s n=%lld d=%d k=%d mode %d: filtered fit differs (%lld labels, centers %s, wss %s, iter %d vs %d)",
          name, n, d, k, mode, diff, same_bits(e.centers, f.centers) ? "same" : "DIFFER",
          same_bits(e.wss, f.wss) ? "same" : "DIFFER", f.info.iter, e.info.iter);
    const double share = it > 0 ? (double)ex / ((double)n * it) : 0.0;
    if (used) { g_df_exact[mode] += ex; g_df_points[mode] += (long long)n * it; }
    const double share_every = it > 0 ? (double)every / ((double)n * it) : 0.0;
    printf("  [dfilter %-11s m%d] n=%-6lld d=%-4d k=%-5d iter %-3d used %d, filtered iters %lld, exact share %.4f (every center %.4f)%s, ms exact %.2f filter %.2f\n",
           name, mode, n, d, k, f.info.iter, used, (long long)it, share, share_every, same ? "" : " MISMATCH",
           e.info.ms_compute, f.info.ms_compute);
  }
  unsetenv("GPUKMEANS_DFILTER");
  fflush(stdout);
}

static std::vector<double> lattice(long long n, int d, int levels, uint64_t seed) {
  Rng r(seed);
  std::vector<double> x((size_t)n * d);
  for (auto &v : x) v = (double)(r.next() % levels);
  return x;
}

// ---- single precision on packed tensor-core tiles (src/cuda/detail/tc_tiles.cuh) ----
// The same arithmetic as the unpacked kernel (GPUKMEANS_TC=0): the fits and
// predict must agree bit for bit.
static void tc_pair(const char *name, const std::vector<double> &x, long long n, int d, int k,
                    const std::vector<double> &c0, int max_iter) {
  Fitter F(x, n, d, 1);
  setenv("GPUKMEANS_TC", "0", 1);
  Result u = F.fit(k, c0, max_iter);
  std::vector<int> pu(n), pp(n);
  char err[512] = "";
  int su = gk_cuda_assign(F.data, k, c0.data(), pu.data(), err, sizeof err);
  unsetenv("GPUKMEANS_TC");
  Result p = F.fit(k, c0, max_iter);
  int sp = gk_cuda_assign(F.data, k, c0.data(), pp.data(), err, sizeof err);
  CHECK(u.status == 0 && p.status == 0 && su == 0 && sp == 0, "tcpack %s: status %d %d %d %d %s", name, u.status,
        p.status, su, sp, p.msg.c_str());
  if (u.status || p.status) return;
  long long diff = 0, pdiff = 0;
  for (long long i = 0; i < n; ++i) { diff += u.cl[i] != p.cl[i]; pdiff += pu[i] != pp[i]; }
  const bool same = diff == 0 && same_bits(u.centers, p.centers) && same_bits(u.wss, p.wss) && u.size == p.size &&
                    u.info.iter == p.info.iter;
  CHECK(same && pdiff == 0, "tcpack %s n=%lld d=%d k=%d: packed fit differs (%lld labels, predict %lld, centers %s, iter %d vs %d)",
        name, n, d, k, diff, pdiff, same_bits(u.centers, p.centers) ? "same" : "DIFFER", p.info.iter, u.info.iter);
  printf("  [tcpack %-9s] n=%-6lld d=%-4d k=%-5d iter %-3d %s ms unpacked %.2f packed %.2f\n", name, n, d, k,
         p.info.iter, same && pdiff == 0 ? "identical" : "MISMATCH", u.info.ms_compute, p.info.ms_compute);
  fflush(stdout);
}

static void run_tc_tests() {
  const int ds[] = {9, 16, 17, 33, 64, 128, 300};
  const int ks[] = {32, 100, 256, 1000};
  for (int d : ds)
    for (int k : ks) {
      const long long n = d >= 128 ? 5003 : 20011;
      auto x = blobs(n, d, 40, 7 + d + k);
      auto c0 = init_centers(x, n, d, k);
      tc_pair("blobs", x, n, d, k, c0, 15);
    }
  {  // duplicate points and exact ties on a lattice; an offset far from 0
    auto x = lattice(9000, 17, 3, 5);
    tc_pair("lattice", x, 9000, 17, 256, init_centers(x, 9000, 17, 256), 20);
    auto y = blobs(7000, 24, 12, 9, 1e6);
    tc_pair("offset", y, 7000, 24, 64, init_centers(y, 7000, 24, 64), 20);
  }
  {  // empty clusters (NaN centers): initial centers far away
    const long long n = 3000;
    const int d = 20, k = 64;
    auto x = blobs(n, d, 5, 11);
    auto c0 = init_centers(x, n, d, k);
    for (int c = 32; c < k; ++c)
      for (int j = 0; j < d; ++j) c0[c + (size_t)k * j] = 1e4 + c;
    tc_pair("empty", x, n, d, k, c0, 20);
  }
}


// A few small cases (compute-sanitizer): every kernel of the filter, ties,
// NaN centers, a center out of the box.
static void run_dfilter_small() {
  long long n = 3000;
  auto x = blobs(n, 17, 10, 601);
  df_pair("small", x, n, 17, 256, init_centers(x, n, 17, 256), 4);
  auto x2 = lattice(n, 33, 2, 602);
  df_pair("small-lat", x2, n, 33, 64, init_centers(x2, n, 33, 64), 4);
  auto x3 = blobs(n, 3, 5, 603);
  df_pair("small-d3", x3, n, 3, 1500, init_centers(x3, n, 3, 1500), 3);
  int k = 16;
  auto c0 = init_centers(x, n, 17, k);
  for (int j = 0; j < 17; ++j) c0[2 + (size_t)k * j] = 1e5;
  for (int j = 0; j < 17; ++j) c0[4 + (size_t)k * j] = 1e12;
  df_pair("small-far", x, n, 17, k, c0, 4);
}

static void run_dfilter_tests() {
  printf("\n== certified filter (double): GPUKMEANS_DFILTER=1 vs =0\n");
  const int ds[] = {3, 8, 16, 17, 33, 64, 128, 300};
  const int ks[] = {1, 2, 7, 256, 4096};
  for (int d : ds)
    for (int k : ks) {
      const long long n = k == 4096 ? 8192 : 5000;
      auto x = blobs(n, d, 10, 500 + d * 7 + k);
      df_pair("blobs", x, n, d, k, init_centers(x, n, d, k), 8);
    }
  {
    long long n = 20000;
    auto x = uniform(n, 16, 77);
    df_pair("uniform", x, n, 16, 256, init_centers(x, n, 16, 256), 10, 1, true);
    auto x2 = uniform(n, 128, 78);
    df_pair("uniform", x2, n, 128, 512, init_centers(x2, n, 128, 512), 6);
    df_pair("unif+bnds", x, n, 16, 256, init_centers(x, n, 16, 256), 30, 0);  // with bounded iterations
  }
  {  // lattice: duplicate points, duplicate initial centers, exact ties, points on bisectors
    long long n = 20000;
    auto x = lattice(n, 17, 4, 91);
    df_pair("lattice", x, n, 17, 256, init_centers(x, n, 17, 256), 10, 1, true);
    auto x2 = lattice(n, 8, 3, 92);
    df_pair("lattice", x2, n, 8, 4096, init_centers(x2, n, 8, 4096), 5);
    auto x3 = lattice(n, 33, 2, 93);
    df_pair("lattice", x3, n, 33, 64, init_centers(x3, n, 33, 64), 10);
    // centers at lattice points, points exactly midway between two of them
    int d = 16, k = 40;
    Rng r(94);
    std::vector<double> c((size_t)k * d), xm((size_t)n * d);
    for (auto &v : c) v = (double)(r.next() % 5) * 2.0;
    for (long long i = 0; i < n; ++i) {
      int a = (int)(r.next() % k), b = (int)(r.next() % k);
      for (int j = 0; j < d; ++j) xm[i + n * j] = 0.5 * (c[a + (size_t)k * j] + c[b + (size_t)k * j]);
    }
    df_pair("bisector", xm, n, d, k, c, 10, 1, true);
  }
  {  // duplicate centers
    long long n = 6000;
    int d = 33, k = 64;
    auto x = blobs(n, d, 12, 95);
    auto c0 = init_centers(x, n, d, k);
    for (int cc = 10; cc < 20; ++cc)
      for (int j = 0; j < d; ++j) c0[cc + (size_t)k * j] = c0[cc - 10 + (size_t)k * j];
    df_pair("dupcenters", x, n, d, k, c0, 10, 1, true);
  }
  {  // scales: the filter only for 2^-400 <= max|x| <= 2^400
    const double scales[] = {1e-300, 1e-150, 1e-100, 1e-20, 1e20, 1e100, 1e150, 1e300};
    long long n = 6000;
    int d = 20, k = 64;
    auto x0 = blobs(n, d, 10, 96);
    for (double sc : scales) {
      auto x = x0;
      for (auto &v : x) v *= sc;
      char nm[32];
      snprintf(nm, sizeof nm, "scale%.0e", sc);
      df_pair(nm, x, n, d, k, init_centers(x, n, d, k), 10);
    }
  }
  {  // large offsets, small spread
    long long n = 20000;
    auto x = blobs(n, 16, 20, 97, 1e8);
    df_pair("offset1e8", x, n, 16, 256, init_centers(x, n, 16, 256), 10, 1, true);
    auto x2 = blobs(n, 64, 20, 98);
    for (auto &v : x2) v = 1e8 + 1e-3 * v;
    df_pair("off1e8s1e-3", x2, n, 64, 256, init_centers(x2, n, 64, 256), 10);
  }
  {  // empty clusters (NaN centers); a center far outside: its image leaves the box
    long long n = 6000;
    int d = 20, k = 16;
    auto x = blobs(n, d, 5, 99);
    auto c0 = init_centers(x, n, d, k);
    for (int j = 0; j < d; ++j) c0[2 + (size_t)k * j] = 1e5;
    for (int j = 0; j < d; ++j) c0[3 + (size_t)k * j] = -1e5;
    df_pair("empty", x, n, d, k, c0, 10, 1, true);
    for (int j = 0; j < d; ++j) c0[4 + (size_t)k * j] = 1e12;
    df_pair("empty+far", x, n, d, k, c0, 10, 1, true);
  }
  for (int m = 1; m <= 2; ++m)
    printf("[dfilter] mode %d (%s): exact share over all filtered iterations: %lld / %lld = %.4f\n", m,
           m == 1 ? "3xTF32, float images" : "TF32 images", g_df_exact[m], g_df_points[m],
           g_df_points[m] ? (double)g_df_exact[m] / g_df_points[m] : 0.0);
}

static void run_tests() {
  struct S { long long n; int d, k, kt, iters; double offset; };
  S shapes[] = {
      {1000, 2, 1, 3, 20, 0},     {1000, 2, 2, 3, 20, 0},     {5000, 3, 31, 10, 30, 0},
      {5000, 3, 32, 10, 30, 0},   {5003, 17, 33, 12, 30, 0},  {20011, 2, 1000, 50, 10, 0},
      {30001, 2, 5000, 100, 4, 0}, {40000, 1, 20000, 50, 3, 0}, {3001, 128, 64, 16, 15, 0},
      {1500, 1000, 33, 8, 10, 0},  {7777, 5, 12, 6, 30, 0},    {7777, 8, 100, 20, 20, 0},
      {10007, 16, 256, 40, 10, 0}, {9000, 2, 12, 6, 30, 500.0}, {4099, 128, 300, 30, 6, 0},
  };
  for (auto &s : shapes) {
    char name[64];
    snprintf(name, sizeof name, "blobs%s", s.offset ? "+offset" : "");
    auto x = blobs(s.n, s.d, s.kt, 1234 + s.n + s.d + s.k, s.offset);
    auto c0 = init_centers(x, s.n, s.d, s.k);
    case_run(name, x, s.n, s.d, s.k, c0, s.iters);
  }
  {  // n = 1
    std::vector<double> x = {3.5, -1.25};
    case_run("n=1", x, 1, 2, 1, x, 10);
  }
  {  // n = k
    long long n = 50;
    auto x = blobs(n, 3, 5, 77);
    case_run("n=k", x, n, 3, 50, init_centers(x, n, 3, 50), 10);
  }
  {  // empty cluster: one center far from all data -> size 0, NaN center
    long long n = 3000;
    int d = 2, k = 6;
    auto x = blobs(n, d, 5, 31);
    auto c0 = init_centers(x, n, d, k);
    c0[3] = 1e6;
    c0[3 + k] = -1e6;
    case_run("empty", x, n, d, k, c0, 20);
    auto x2 = blobs(n, 20, 5, 32);  // tiled path
    auto c2 = init_centers(x2, n, 20, k);
    for (int j = 0; j < 20; ++j) c2[2 + k * j] = 1e5;
    case_run("empty-tiled", x2, n, 20, k, c2, 20);
  }
  {  // duplicate initial centers: ties go to the lowest index
    long long n = 4000;
    auto x = blobs(n, 2, 4, 41);
    auto c0 = init_centers(x, n, 2, 6);
    for (int j = 0; j < 2; ++j) c0[5 + 6 * j] = c0[1 + 6 * j];
    case_run("ties", x, n, 2, 6, c0, 20);
  }
  test_totss();
  test_callbacks();
  {  // out of memory message
    gk_cuda_data *dd = nullptr;
    char err[512] = "";
    gk_cuda_options o = {0, 0, 0, 0, 0, 0.0, 0};
    std::vector<double> tiny(16);
    // ask for an absurd n with a tiny buffer: the memory check fails before any copy
    int st = gk_cuda_upload(tiny.data(), (int64_t)1 << 40, 16, &o, nullptr, &dd, nullptr, nullptr, err, sizeof err);
    CHECK(st == GK_CUDA_OUT_OF_MEMORY && dd == nullptr, "OOM: status %d", st);
    printf("[oom] %s\n", err);
  }
}

// ---- benchmarks -----------------------------------------------------------------
static void run_bench() {
  struct P { const char *id; long long n; int d, k; double goal_s, goal_d; };
  P probs[] = {{"A", 21600, 2, 12, 0.010, 0.010},
               {"B", 1000000, 2, 100, 0.025, 0.040},
               {"C", 1000000, 2, 1000, 0.25, 0.40},
               {"D", 10000000, 16, 256, 2.0, 4.0},
               {"E", 1000000, 128, 4096, 20, 40}};
  printf("\n%-3s %-6s %9s %4s %5s %6s %11s %8s %s\n", "id", "prec", "n", "d", "k", "iters", "ms/iter", "goal", "upload_ms");
  const char *only = getenv("GK_BENCH_ONLY");  // (problem ids to run, say "DE")
  for (auto &p : probs) {
    if (only && !strchr(only, p.id[0])) continue;
    auto x = uniform(p.n, p.d, 2024 + p.k);
    auto c0 = init_centers(x, p.n, p.d, p.k);
    std::vector<int> ref_cl;
    std::vector<double> ref_c;
    int ref_iter = 0;
    for (int pass = 3; pass >= 0; --pass) {
      // 3: single, unpacked tiles (GPUKMEANS_TC=0); 2: single; 1: double, exact kernel
      // (GPUKMEANS_DFILTER=0); 0: double, filter (=1)
      const int single = pass >= 2;
      if (pass == 3) setenv("GPUKMEANS_TC", "0", 1);
      else unsetenv("GPUKMEANS_TC");
      if (pass < 2) setenv("GPUKMEANS_DFILTER", pass == 1 ? "0" : "1", 1);
      auto t0 = std::chrono::steady_clock::now();
      Fitter F(x, p.n, p.d, single);
      double up = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      F.fit(p.k, c0, 2);  // warm-up
      std::vector<double> per;
      int iters = 0;
      Result last;
      for (int rep = 0; rep < 3; ++rep) {
        Result r = F.fit(p.k, c0, 10);
        if (r.status) { printf("  %s fit failed: %s\n", p.id, r.msg.c_str()); break; }
        int ran = r.converged ? r.info.iter : 10;
        iters = r.info.iter;
        per.push_back(r.info.ms_compute / ran);
        last = r;
      }
      if (per.empty()) continue;
      char extra[160] = "";
      if (pass == 1) { ref_cl = last.cl; ref_c = last.centers; ref_iter = last.info.iter; }
      if (pass == 0) {
        int64_t ex = 0, it = 0;
        int used = 0;
        gk_cuda_dfilter_stats(F.data, &ex, nullptr, &it, &used);
        const bool same = last.cl == ref_cl && same_bits(last.centers, ref_c) && last.info.iter == ref_iter;
        CHECK(same, "bench %s: filtered double fit differs from the exact one", p.id);
        snprintf(extra, sizeof extra, " [filter used %d, exact share %.4f, %s]", used,
                 it ? (double)ex / ((double)p.n * it) : 0.0, same ? "identical to exact" : "DIFFERS from exact");
      }
      std::sort(per.begin(), per.end());
      double med = per[per.size() / 2];
      double goal = single ? p.goal_s : p.goal_d;
      printf("%-3s %-6s %9lld %4d %5d %6d %11.4f %8.3f %.0f %s%s\n", p.id,
             pass == 3 ? "single0" : single ? "single" : pass == 1 ? "double" : "dfilt", p.n, p.d, p.k, iters, med, goal, up,
             med <= goal ? "ok" : "MISS", extra);
      fflush(stdout);
    }
    unsetenv("GPUKMEANS_DFILTER");
  }
}

// D and E in double: the exact kernel and the certified filter, with the
// default bounds and with plain iterations only (bounds = 1); the filtered
// fits must be the exact ones bit for bit.
static void run_dbench() {
  struct P { const char *id; long long n; int d, k; };
  P probs[] = {{"D", 10000000, 16, 256}, {"E", 1000000, 128, 4096}};
  printf("\n%-3s %-7s %-6s %6s %11s  %s\n", "id", "kernel", "bounds", "iters", "ms/iter", "filter");
  const char *only = getenv("GK_BENCH_ONLY");  // (problem ids to run, say "DE")
  for (auto &p : probs) {
    if (only && !strchr(only, p.id[0])) continue;
    auto x = uniform(p.n, p.d, 2024 + p.k);
    auto c0 = init_centers(x, p.n, p.d, p.k);
    for (int bounds = 0; bounds <= 1; ++bounds) {
      Fitter F(x, p.n, p.d, 0, bounds);
      Result ref;
      for (int filt = 0; filt <= 2; ++filt) {
        setenv("GPUKMEANS_DFILTER", filt == 0 ? "0" : filt == 1 ? "1" : "2", 1);
        F.fit(p.k, c0, 2);  // warm-up (and the filter's image of x)
        std::vector<double> per;
        Result last;
        for (int rep = 0; rep < 3; ++rep) {
          Result r = F.fit(p.k, c0, 10);
          if (r.status) { printf("  %s fit failed: %s\n", p.id, r.msg.c_str()); break; }
          per.push_back(r.info.ms_compute / (r.converged ? r.info.iter : 10));
          last = r;
        }
        if (per.empty()) continue;
        std::sort(per.begin(), per.end());
        char extra[200] = "";
        if (!filt) ref = last;
        else {
          int64_t ex = 0, it = 0;
          int used = 0;
          gk_cuda_dfilter_stats(F.data, &ex, nullptr, &it, &used);
          const bool same = last.cl == ref.cl && same_bits(last.centers, ref.centers) && same_bits(last.wss, ref.wss) &&
                            last.info.iter == ref.info.iter;
          CHECK(same, "dbench %s bounds %d mode %d: filtered fit differs from the exact one", p.id, bounds, filt);
          snprintf(extra, sizeof extra, "used %d, filtered iters %lld, exact share %.5f, %s", used, (long long)it,
                   it ? (double)ex / ((double)p.n * it) : 0.0, same ? "identical to exact" : "DIFFERS");
        }
        printf("%-3s %-7s %-6s %6d %11.4f  %s\n", p.id, filt == 0 ? "exact" : filt == 1 ? "dfilt3x" : "dfilt1x",
               bounds ? "never" : "dflt",
               last.info.iter, per[per.size() / 2], extra);
        fflush(stdout);
      }
    }
  }
  unsetenv("GPUKMEANS_DFILTER");
}

// For a profiler (ncu): D and E in double, 3 plain iterations with the exact
// kernel, then each filter mode.
static void run_dprof() {
  struct P { long long n; int d, k; };
  P probs[] = {{10000000, 16, 256}, {1000000, 128, 4096}};
  const bool blob = getenv("GK_DPROF_BLOBS") != nullptr;  // (blobs of k clusters: many points listed)
  for (auto &p : probs) {
    auto x = blob ? blobs(p.n, p.d, p.k, 2024 + p.k) : uniform(p.n, p.d, 2024 + p.k);
    auto c0 = init_centers(x, p.n, p.d, p.k);
    Fitter F(x, p.n, p.d, 0, 1);
    for (int filt = 0; filt <= 2; ++filt) {
      char v[2] = {(char)('0' + filt), 0};
      setenv("GPUKMEANS_DFILTER", v, 1);
      Result r = F.fit(p.k, c0, 3);
      int64_t ex = 0, every = 0, it = 0;
      int used = 0;
      gk_cuda_dfilter_stats(F.data, &ex, &every, &it, &used);
      printf("dprof%s n=%lld d=%d k=%d mode %d: status %d, %.3f ms, exact share %.4f (every center %.4f)\n",
             blob ? " blobs" : "", p.n, p.d, p.k, filt, r.status, r.info.ms_compute,
             it ? (double)ex / ((double)it * p.n) : 0.0, it ? (double)every / ((double)it * p.n) : 0.0);
    }
  }
  unsetenv("GPUKMEANS_DFILTER");
}

// ---- fixed per-fit overhead: the sequence the R glue calls, host-timed ----------
static double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static void run_seq() {
  struct P { const char *id; long long n; int d, k, single; };
  P probs[] = {{"B", 1000000, 2, 100, 0}, {"B", 1000000, 2, 100, 1}, {"C", 1000000, 2, 1000, 0}};
  printf("\nseq: ms per call, median of 6 (first run in brackets)\n");
  printf("%-3s %-6s %8s %8s %8s %8s %8s %8s | %8s %8s %8s\n", "id", "prec", "getdev", "upload", "totss", "lloyd",
         "free", "total", "compute", "download", "ms_upl");
  const char *only = getenv("GK_BENCH_ONLY");  // (problem ids to run, say "DE")
  for (auto &p : probs) {
    if (only && !strchr(only, p.id[0])) continue;
    auto x = uniform(p.n, p.d, 2024 + p.k);
    auto c0 = init_centers(x, p.n, p.d, p.k);
    std::vector<int> cl(p.n), sz(p.k);
    std::vector<double> wss(p.k), cen;
    std::vector<std::vector<double>> t(9);
    for (int rep = 0; rep < 7; ++rep) {
      char err[512] = "";
      gk_cuda_options o = {0, p.single, 0, 0, 0, 0.0, 0};
      gk_cuda_device dev;
      double ut = 0;
      gk_cuda_fit_info fi;
      gk_cuda_data *D = nullptr;
      double totss = 0;
      cen = c0;
      double a = now_ms();
      int st = gk_cuda_get_device(0, &dev, err, sizeof err);
      double b = now_ms();
      st |= gk_cuda_upload(x.data(), p.n, p.d, &o, nullptr, &D, &ut, nullptr, err, sizeof err);
      double c = now_ms();
      st |= gk_cuda_totss(D, &totss, err, sizeof err);
      double e = now_ms();
      st |= gk_cuda_lloyd(D, p.k, 10, cen.data(), nullptr, cl.data(), sz.data(), wss.data(), &fi, err, sizeof err);
      double f = now_ms();
      gk_cuda_free(D);
      double g = now_ms();
      if (st) { printf("  seq failed: %s\n", err); return; }
      double v[9] = {b - a, c - b, e - c, f - e, g - f, g - a, fi.ms_compute, fi.ms_download, 1000 * ut};
      if (rep == 0) {
        printf("%-3s %-6s", p.id, p.single ? "single" : "double");
        for (int q = 0; q < 9; ++q) printf(" [%6.3f]", v[q]);
        printf("\n");
      } else {
        for (int q = 0; q < 9; ++q) t[q].push_back(v[q]);
      }
    }
    printf("%-3s %-6s", p.id, p.single ? "single" : "double");
    for (int q = 0; q < 9; ++q) {
      std::sort(t[q].begin(), t[q].end());
      printf(" %8.3f", t[q][t[q].size() / 2]);
      if (q == 5) printf(" |");
    }
    printf("\n");
    fflush(stdout);
  }
}

int main(int argc, char **argv) {
  std::string mode = argc > 1 ? argv[1] : "all";
  gk_cuda_info info;
  gk_cuda_get_info(&info);
  printf("runtime %d driver %d devices %d %s\n", info.runtime_version, info.driver_version, info.device_count,
         info.message);
  if (info.device_count == 0) {
    gk_cuda_data *dd = nullptr;
    char err[512] = "";
    gk_cuda_options o = {0, 0, 0, 0, 0, 0.0, 0};
    std::vector<double> x(10, 1.0);
    int st = gk_cuda_upload(x.data(), 5, 2, &o, nullptr, &dd, nullptr, nullptr, err, sizeof err);
    printf("no device: upload status %d (expect %d): %s\n", st, GK_CUDA_NO_DEVICE, err);
    gk_cuda_device dev;
    st = gk_cuda_get_device(0, &dev, err, sizeof err);
    printf("no device: get_device status %d: %s\n", st, err);
    return st == GK_CUDA_NO_DEVICE ? 0 : 1;
  }
  gk_cuda_device dev;
  char err[512];
  if (gk_cuda_get_device(0, &dev, err, sizeof err) == 0)
    printf("device 0: %s, sm_%d%d, %d SMs, %.1f GiB (%.1f free)\n", dev.name, dev.major, dev.minor, dev.multiprocessors,
           dev.total_memory / 1073741824.0, dev.free_memory / 1073741824.0);
  if (mode == "dprof") run_dprof();
  if (mode == "dfilter_small") {
    run_dfilter_small();
    printf("\ntests: %d passed, %d failed\n", g_pass, g_fail);
  }
  if (mode == "dbench") {
    run_dbench();
    printf("\ntests: %d passed, %d failed\n", g_pass, g_fail);
  }
  if (mode == "tcpack") {
    run_tc_tests();
    printf("\ntests: %d passed, %d failed\n", g_pass, g_fail);
  }
  if (mode == "dfilter") {
    run_dfilter_tests();
    printf("\ntests: %d passed, %d failed\n", g_pass, g_fail);
  }
  if (mode == "test" || mode == "all") {
    run_tests();
    run_dfilter_tests();
    run_tc_tests();
    printf("\ntests: %d passed, %d failed\n", g_pass, g_fail);
  }
  if (mode == "bench" || mode == "all") run_bench();
  if (mode == "seq") {
    run_seq();
  }
  return g_fail ? 1 : 0;
}
