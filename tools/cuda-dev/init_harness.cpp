// init_harness.cpp: the initialisation of the CUDA engine against the CPU
// engine's (src/cpu_init.cpp), without R.
//   ./init_harness test    same rows / candidates / weights as the CPU in double,
//                          filter (tensor cores) == SIMT filter == off, single
//                          precision sane
//   ./init_harness bench   device times on problems B, D, E (blobs)
// Built by the Makefile beside it (make init_harness).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cpu_init.h"
#include "gk_cuda.h"
#include "init_order.h"

extern "C" void gk_cuda_dev_init_knobs(int filter);

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

struct Device {
  gk_cuda_data *D = nullptr;
  char err[1024] = "";
  Device(const std::vector<double> &x, long long n, int d, int single) {
    gk_cuda_options o = {0, single, 1, 10};
    gk_cuda_upload_timing t;
    if (gk_cuda_upload(x.data(), n, d, &o, &D, &t, err, sizeof err) != GK_CUDA_OK) {
      std::printf("upload failed: %s\n", err);
      D = nullptr;
    }
  }
  ~Device() { gk_cuda_free(D); }
};

struct ParOut {
  std::vector<std::int64_t> cand;
  std::vector<double> weight;
  int rounds = 0;
  double ms = 0;
  int st = 0;
};

ParOut cuda_par(gk_cuda_data *D, int k, std::uint64_t seed, char *err) {
  ParOut r;
  // as src/fit_glue.cpp: room for every candidate, no second run
  std::int64_t cap = 1 + (std::int64_t)(2.0 * GK_PAR_ROUNDS * gk::kmeans_par_oversampling(k)) + 4096, m = 0;
  for (;;) {
    r.cand.resize(cap);
    r.weight.resize(cap);
    r.st = gk_cuda_kmeans_par(D, k, seed, nullptr, cap, r.cand.data(), r.weight.data(), &m, &r.rounds, &r.ms,
                              err, 1024);
    if (r.st != GK_CUDA_OK || m <= cap) break;
    cap = m;
  }
  r.cand.resize(m);
  r.weight.resize(m);
  return r;
}

std::vector<std::int64_t> cuda_reduce(gk_cuda_data *D, const double *x, long long n, int d, int k,
                                      std::uint64_t seed, const ParOut &p, double *ms, char *err) {
  gk::ReduceGreedy dev = [&](std::int64_t first, int picks, const double *u, int L) {
    std::vector<std::int64_t> pick(picks);
    int st = gk_cuda_weighted_pp(D, p.cand.data(), p.weight.data(), (std::int64_t)p.cand.size(), first, picks, u, L,
                                 nullptr, pick.data(), ms, err, 1024);
    if (st != GK_CUDA_OK) std::printf("weighted_pp failed: %s\n", err);
    return pick;
  };
  return gk::kmeans_par_reduce(x, n, d, k, seed, p.cand, p.weight, 4, &dev);
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
  char err[1024] = "";
  const int L = gk::kmeanspp_candidates(k);
  const std::string id = std::string(label) + " n=" + std::to_string(n) + " d=" + std::to_string(d) +
                         " k=" + std::to_string(k);
  Device dev(x, n, d, 0);
  check(dev.D != nullptr, id + " upload");
  if (!dev.D) return;
  // k-means++
  auto u = uniforms(1 + (size_t)(k - 1) * L, seed);
  auto cpu = gk::cpu_kmeanspp(x.data(), n, d, k, u.data(), L, 4, nullptr);
  std::vector<std::int64_t> gpu(k);
  double ms = 0;
  int st = gk_cuda_kmeanspp(dev.D, k, u.data(), L, nullptr, gpu.data(), &ms, err, sizeof err);
  check(st == GK_CUDA_OK, id + " kmeans++ status " + err);
  check(gpu == cpu, id + " kmeans++ rows == CPU");
  // k-means||: candidates and weights, filter on and off
  const std::uint64_t s64 = 0x9E3779B97F4A7C15ull * (seed + 1);
  gk::ParCandidates pc = gk::cpu_kmeans_par_candidates(x.data(), n, d, k, s64, 4, nullptr);
  gk_cuda_dev_init_knobs(1);
  ParOut on = cuda_par(dev.D, k, s64, err);
  gk_cuda_dev_init_knobs(0);
  ParOut off = cuda_par(dev.D, k, s64, err);
  gk_cuda_dev_init_knobs(2);
  ParOut simt = cuda_par(dev.D, k, s64, err);
  gk_cuda_dev_init_knobs(1);
  check(on.st == GK_CUDA_OK && off.st == GK_CUDA_OK && simt.st == GK_CUDA_OK, id + " kmeans|| status " + err);
  check(on.cand == pc.idx, id + " kmeans|| candidates == CPU");
  check(on.weight == pc.weight, id + " kmeans|| weights == CPU");
  check(on.rounds == pc.rounds, id + " kmeans|| rounds == CPU");
  check(off.cand == on.cand && off.weight == on.weight, id + " kmeans|| filter on == off");
  check(simt.cand == on.cand && simt.weight == on.weight, id + " kmeans|| tensor-core filter == SIMT filter");
  // the reduction
  auto rc = gk::kmeans_par_reduce(x.data(), n, d, k, s64, pc.idx, pc.weight, 4);
  auto rg = cuda_reduce(dev.D, x.data(), n, d, k, s64, on, &ms, err);
  check(rg == rc, id + " kmeans|| reduction == CPU");
  // single precision: runs, distinct rows when the data allow
  Device dev1(x, n, d, 1);
  std::vector<std::int64_t> g1(k);
  st = gk_cuda_kmeanspp(dev1.D, k, u.data(), L, nullptr, g1.data(), &ms, err, sizeof err);
  check(st == GK_CUDA_OK, id + " single kmeans++ status");
  const bool distinct = distinct_rows(x, n, d, cpu) && std::string(label) != "huge";  // > FLT_MAX
  if (distinct) check(distinct_rows(x, n, d, g1), id + " single kmeans++ distinct rows");
  ParOut p1 = cuda_par(dev1.D, k, s64, err);
  check(p1.st == GK_CUDA_OK, id + " single kmeans|| status");
  auto r1 = cuda_reduce(dev1.D, x.data(), n, d, k, s64, p1, &ms, err);
  if (distinct) check(distinct_rows(x, n, d, r1), id + " single kmeans|| distinct rows");
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
  std::printf("%-2s %-6s %12s %14s %14s %14s %12s %12s %10s\n", "id", "prec", "kmeans++ ms", "par(filter) ms",
              "par(simt) ms", "par(exact) ms", "reduce ms", "par total ms", "cands");
  for (auto &p : probs) {
    auto x = blobs(p.n, p.d, p.k, 11);
    const int L = gk::kmeanspp_candidates(p.k);
    auto u = uniforms(1 + (size_t)(p.k - 1) * L, 3);
    for (int single = 1; single >= 0; --single) {
      Device dev(x, p.n, p.d, single);
      if (!dev.D) continue;
      char err[1024] = "";
      std::vector<std::int64_t> rows(p.k);
      double ms_pp = 0, ms_on = 0, ms_off = -1, ms_simt = -1, ms_red = 0;
      gk_cuda_kmeanspp(dev.D, std::min(p.k, 16), u.data(), L, nullptr, rows.data(), &ms_pp, err, sizeof err);  // warm-up
      int st = gk_cuda_kmeanspp(dev.D, p.k, u.data(), L, nullptr, rows.data(), &ms_pp, err, sizeof err);
      if (st != GK_CUDA_OK) std::printf("kmeans++ failed: %s\n", err);
      gk_cuda_dev_init_knobs(1);
      const auto w0 = std::chrono::steady_clock::now();
      ParOut on = cuda_par(dev.D, p.k, 12345, err);
      const auto w1 = std::chrono::steady_clock::now();
      auto red = cuda_reduce(dev.D, x.data(), p.n, p.d, p.k, 12345, on, &ms_red, err);
      const auto w2 = std::chrono::steady_clock::now();
      std::printf("   wall: par %.2f ms, reduce %.2f ms\n", std::chrono::duration<double, std::milli>(w1 - w0).count(),
                  std::chrono::duration<double, std::milli>(w2 - w1).count());
      ms_on = on.ms;
      gk_cuda_dev_init_knobs(2);
      ParOut simt = cuda_par(dev.D, p.k, 12345, err);
      ms_simt = simt.ms;
      if (simt.cand != on.cand || simt.weight != on.weight) std::printf("MISMATCH filter tc/simt\n");
      gk_cuda_dev_init_knobs(1);
      if (p.n * (long long)p.k <= 10000000LL * 256) {  // E exact would take seconds
        gk_cuda_dev_init_knobs(0);
        ParOut off = cuda_par(dev.D, p.k, 12345, err);
        ms_off = off.ms;
        if (off.cand != on.cand || off.weight != on.weight) std::printf("MISMATCH filter on/off\n");
        gk_cuda_dev_init_knobs(1);
      }
      std::printf("%-2s %-6s %12.2f %14.2f %14.2f %14.2f %12.2f %12.2f %10zu\n", p.id, single ? "single" : "double",
                  ms_pp, ms_on, ms_simt, ms_off, ms_red, ms_on + ms_red, on.cand.size());
      std::fflush(stdout);
      (void)red;
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
    const int L = gk::kmeanspp_candidates(p.k);
    auto u = uniforms(1 + (size_t)(p.k - 1) * L, 3);
    Device dev(x, p.n, p.d, 1);
    char err[1024] = "";
    std::vector<std::int64_t> rows(p.k);
    double ms = 0;
    gk_cuda_kmeanspp(dev.D, p.k, u.data(), L, nullptr, rows.data(), &ms, err, sizeof err);
    std::printf("n=%lld d=%d k=%d kmeans++ %.2f ms\n", p.n, p.d, p.k, ms);
    ParOut on = cuda_par(dev.D, 4 * p.k, 12345, err);
    std::printf("n=%lld d=%d k=%d kmeans|| %.2f ms\n", p.n, p.d, 4 * p.k, on.ms);
    Device dev2(x, p.n, p.d, 0);
    gk_cuda_kmeanspp(dev2.D, p.k, u.data(), L, nullptr, rows.data(), &ms, err, sizeof err);
    std::printf("n=%lld d=%d k=%d kmeans++ double %.2f ms\n", p.n, p.d, p.k, ms);
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
