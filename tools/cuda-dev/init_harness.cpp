// init_harness.cpp: the initialisation of the CUDA engine against the CPU
// engine's, through the engine interface (src/engine.h) and the driver that
// R runs (src/init_driver.cpp), without R.
//   ./init_harness test    same rows / candidates / weights as the CPU in double,
//                          filter (tensor cores) == SIMT filter == exact, single
//                          precision sane
//   ./init_harness bench   wall times on problems B, D, E (blobs)
// Built by the Makefile beside it (make init_harness).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "engine.h"
#include "fit_driver.h"
#include "parity.h"

namespace {

int fails = 0, passes = 0;

void check(bool ok, const std::string &what) {
  if (ok) {
    ++passes;
  } else {
    ++fails;
    std::printf("FAIL %s\n", what.c_str());
  }
}

// Blobs: k centers uniform in [0, 100)^d, unit normal noise; column-major.
std::vector<double> blobs(long long n, int d, int k, unsigned seed, double offset = 0, double scale = 1) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> U(0, 100);
  std::normal_distribution<double> N(0, 1);
  std::vector<double> c((size_t)k * d);
  for (auto &v : c) v = U(g);
  std::vector<double> x((size_t)n * d);
  for (long long i = 0; i < n; ++i) {
    const int j = (int)(g() % (unsigned long long)k);
    for (int a = 0; a < d; ++a) x[i + n * (long long)a] = (c[(size_t)j * d + a] + N(g)) * scale + offset;
  }
  return x;
}

std::vector<double> uniforms(size_t m, unsigned seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> U(0, 1);
  std::vector<double> u(m);
  for (auto &v : u) v = U(g);
  return u;
}

gk::HostData host(const std::vector<double> &x, long long n, int d) {
  gk::HostData h;
  h.x = x.data();
  h.n = n;
  h.d = d;
  return h;
}

// A CUDA engine with the k-means|| filter `filter` (gk::CudaTuning), or null
// with the reason printed.
std::unique_ptr<gk::Engine> cuda(const std::vector<double> &x, long long n, int d, bool single, int filter = 0) {
  gk::CudaTuning t;
  t.init_filter = filter;
  try {
    return gk::make_cuda_engine(host(x, n, d), single ? gk::Precision::kSingle : gk::Precision::kDouble, 0, nullptr,
                                t);
  } catch (const std::exception &e) {
    std::printf("CUDA engine failed: %s\n", e.what());
    return nullptr;
  }
}

std::unique_ptr<gk::Engine> cpu(const std::vector<double> &x, long long n, int d) {
  return gk::make_cpu_engine(host(x, n, d), gk::Precision::kDouble, 4);
}

gk::StartSpec pp_spec(int k, const std::vector<double> &u) {
  gk::StartSpec s;
  s.kind = gk::StartSpec::Kind::kKmeansPP;
  s.k = k;
  s.unif = u;
  s.L = gk::greedy_candidates(k);
  return s;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

bool distinct_rows(const std::vector<double> &x, long long n, int d, const std::vector<std::int64_t> &rows) {
  std::set<std::vector<double>> s;
  for (auto r : rows) {
    std::vector<double> v(d);
    for (int a = 0; a < d; ++a) v[a] = x[r + n * (long long)a];
    s.insert(v);
  }
  return s.size() == rows.size();
}

void test_shape(const char *label, const std::vector<double> &x, long long n, int d, int k, unsigned seed) {
  const int L = gk::greedy_candidates(k);
  const std::string id = std::string(label) + " n=" + std::to_string(n) + " d=" + std::to_string(d) +
                         " k=" + std::to_string(k);
  auto c = cpu(x, n, d);
  auto g = cuda(x, n, d, false), g_exact = cuda(x, n, d, false, 1), g_simt = cuda(x, n, d, false, 2);
  check(g && g_exact && g_simt, id + " upload");
  if (!g || !g_exact || !g_simt) return;
  try {
    // k-means++
    const gk::StartSpec pp = pp_spec(k, uniforms(1 + (size_t)(k - 1) * L, seed));
    const auto rc = gk::initial_rows(*c, pp, nullptr);
    check(gk::initial_rows(*g, pp, nullptr) == rc, id + " kmeans++ rows == CPU");
    // k-means||: candidates and weights with every filter, then the reduction
    const std::uint64_t s64 = 0x9E3779B97F4A7C15ull * (seed + 1);
    const gk::ParResult pc = gk::par_candidates(*c, k, s64, nullptr);
    const gk::ParResult on = gk::par_candidates(*g, k, s64, nullptr);
    const gk::ParResult off = gk::par_candidates(*g_exact, k, s64, nullptr);
    const gk::ParResult simt = gk::par_candidates(*g_simt, k, s64, nullptr);
    check(on.rows == pc.rows, id + " kmeans|| candidates == CPU");
    check(on.weight == pc.weight, id + " kmeans|| weights == CPU");
    check(on.rounds == pc.rounds, id + " kmeans|| rounds == CPU");
    check(off.rows == on.rows && off.weight == on.weight, id + " kmeans|| filter == exact");
    check(simt.rows == on.rows && simt.weight == on.weight, id + " kmeans|| tensor-core filter == SIMT filter");
    check(gk::par_reduce(*g, k, s64, on, nullptr) == gk::par_reduce(*c, k, s64, pc, nullptr),
          id + " kmeans|| reduction == CPU");
    // single precision: runs, distinct rows when the data allow
    auto g1 = cuda(x, n, d, true);
    check(g1 != nullptr, id + " single upload");
    if (!g1) return;
    const bool distinct = distinct_rows(x, n, d, rc) && std::string(label) != "huge";  // > FLT_MAX
    const auto r1 = gk::initial_rows(*g1, pp, nullptr);
    if (distinct) check(distinct_rows(x, n, d, r1), id + " single kmeans++ distinct rows");
    const gk::ParResult p1 = gk::par_candidates(*g1, k, s64, nullptr);
    const auto q1 = gk::par_reduce(*g1, k, s64, p1, nullptr);
    if (distinct) check(distinct_rows(x, n, d, q1), id + " single kmeans|| distinct rows");
  } catch (const std::exception &e) {
    check(false, id + " threw: " + e.what());
  }
}

int run_tests() {
  struct S { const char *label; long long n; int d, k; double offset, scale; };
  S shapes[] = {
      {"blobs", 1000, 2, 10, 0, 1},       {"blobs", 5000, 7, 40, 0, 1},       {"blobs", 70000, 3, 5, 0, 1},
      {"blobs", 20000, 16, 64, 0, 1},     {"blobs", 20000, 40, 50, 0, 1},     {"blobs", 3000, 129, 33, 0, 1},
      {"blobs", 50000, 1, 100, 0, 1},     {"offset", 20000, 8, 60, 1e6, 1},   {"tiny", 20000, 8, 60, 0, 1e-20},
      {"huge", 20000, 5, 30, 0, 1e150},   {"offset-tiny", 20000, 4, 30, 5, 1e-9},
      {"few", 3, 2, 3, 0, 1},             {"one", 1, 4, 1, 0, 1},             {"k=n", 40, 3, 40, 0, 1},
      {"k300", 30000, 12, 300, 0, 1},     {"blobs", 4000, 256, 40, 0, 1},     {"blobs", 3000, 300, 20, 0, 1},
      {"k600", 30000, 24, 600, 0, 1},     {"offset", 20000, 33, 64, -3e4, 2},
  };
  unsigned seed = 1;
  for (auto &s : shapes) {
    auto x = blobs(s.n, s.d, std::max(1, s.k / 2), 100 + seed, s.offset, s.scale);
    test_shape(s.label, x, s.n, s.d, s.k, seed++);
  }
  {  // duplicates: one row repeated, five distinct others
    const long long n = 45;
    std::vector<double> base = blobs(6, 2, 6, 7), x(n * 2);
    int rep[45];
    for (int i = 0; i < 40; ++i) rep[i] = 0;
    for (int i = 40; i < 45; ++i) rep[i] = i - 39;
    for (long long i = 0; i < n; ++i)
      for (int a = 0; a < 2; ++a) x[i + n * a] = base[rep[i] + 6 * a];
    for (unsigned s = 0; s < 5; ++s) test_shape("dups", x, n, 2, 6, 50 + s);
  }
  std::printf("tests: %d passed, %d failed\n", passes, fails);
  return fails ? 1 : 0;
}


void run_bench() {
  struct P { const char *id; long long n; int d, k; };
  P probs[] = {{"B", 1000000, 2, 100}, {"D", 10000000, 16, 256}, {"E", 1000000, 128, 4096}};
  std::printf("wall ms (host clock around each call, synchronised)\n");
  std::printf("%-2s %-6s %12s %14s %14s %14s %12s %10s\n", "id", "prec", "kmeans++", "par(filter)", "par(simt)",
              "par(exact)", "reduce", "cands");
  for (auto &p : probs) {
    auto x = blobs(p.n, p.d, p.k, 11);
    const int L = gk::greedy_candidates(p.k);
    const gk::StartSpec pp = pp_spec(p.k, uniforms(1 + (size_t)(p.k - 1) * L, 3));
    for (int single = 1; single >= 0; --single) {
      auto g = cuda(x, p.n, p.d, single), g_simt = cuda(x, p.n, p.d, single, 2);
      if (!g || !g_simt) continue;
      (void)gk::initial_rows(*g, pp_spec(std::min(p.k, 16), uniforms(1 + 15 * 4, 3)), nullptr);  // warm-up
      auto t0 = std::chrono::steady_clock::now();
      (void)gk::initial_rows(*g, pp, nullptr);
      const double ms_pp = ms_since(t0);
      t0 = std::chrono::steady_clock::now();
      const gk::ParResult on = gk::par_candidates(*g, p.k, 12345, nullptr);
      const double ms_on = ms_since(t0);
      t0 = std::chrono::steady_clock::now();
      (void)gk::par_reduce(*g, p.k, 12345, on, nullptr);
      const double ms_red = ms_since(t0);
      t0 = std::chrono::steady_clock::now();
      const gk::ParResult simt = gk::par_candidates(*g_simt, p.k, 12345, nullptr);
      const double ms_simt = ms_since(t0);
      if (simt.rows != on.rows || simt.weight != on.weight) std::printf("MISMATCH filter tc/simt\n");
      double ms_off = -1;
      if (p.n * (long long)p.k <= 10000000LL * 256) {  // E exact would take seconds
        auto g_exact = cuda(x, p.n, p.d, single, 1);
        t0 = std::chrono::steady_clock::now();
        const gk::ParResult off = gk::par_candidates(*g_exact, p.k, 12345, nullptr);
        ms_off = ms_since(t0);
        if (off.rows != on.rows || off.weight != on.weight) std::printf("MISMATCH filter on/off\n");
      }
      std::printf("%-2s %-6s %12.2f %14.2f %14.2f %14.2f %12.2f %10zu\n", p.id, single ? "single" : "double", ms_pp,
                  ms_on, ms_simt, ms_off, ms_red, on.rows.size());
      std::fflush(stdout);
    }
  }
}

}  // namespace

// A short run for the profilers: kmeans++ and k-means|| on D (k = 64) and
// kmeans++ on E (k = 64), single precision; then kmeans++ in double.
void run_prof() {
  struct P { long long n; int d, k; };
  P probs[] = {{10000000, 16, 64}, {1000000, 128, 64}};
  for (auto &p : probs) {
    auto x = blobs(p.n, p.d, 256, 11);
    const int L = gk::greedy_candidates(p.k);
    const gk::StartSpec pp = pp_spec(p.k, uniforms(1 + (size_t)(p.k - 1) * L, 3));
    auto g = cuda(x, p.n, p.d, true);
    if (!g) return;
    auto t0 = std::chrono::steady_clock::now();
    (void)gk::initial_rows(*g, pp, nullptr);
    std::printf("n=%lld d=%d k=%d kmeans++ %.2f ms\n", p.n, p.d, p.k, ms_since(t0));
    t0 = std::chrono::steady_clock::now();
    (void)gk::par_candidates(*g, 4 * p.k, 12345, nullptr);
    std::printf("n=%lld d=%d k=%d kmeans|| %.2f ms\n", p.n, p.d, 4 * p.k, ms_since(t0));
    auto g2 = cuda(x, p.n, p.d, false);
    t0 = std::chrono::steady_clock::now();
    (void)gk::initial_rows(*g2, pp, nullptr);
    std::printf("n=%lld d=%d k=%d kmeans++ double %.2f ms\n", p.n, p.d, p.k, ms_since(t0));
  }
}

int main(int argc, char **argv) {
  const std::string what = argc > 1 ? argv[1] : "all";
  int rc = 0;
  if (what == "test" || what == "all") rc = run_tests();
  if (what == "bench" || what == "all") run_bench();
  if (what == "prof") run_prof();
  return rc;
}
