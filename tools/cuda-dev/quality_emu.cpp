// quality_emu.cpp: runs src/cuda/detail/quality_kernels.cuh on the CPU (one
// std::thread per CUDA thread, a std::barrier per block; quality_emu_shim.cuh
// stands in for common.cuh) and checks the sorted copy, the distances to the
// centers, the simplified and the exact silhouette (every kernel width, sampled
// rows, launches over ranges of row tiles, empty and singleton clusters, float
// storage) bit for bit against a plain sequential reference with the same
// arithmetic.  No GPU needed:  make -C tools/cuda-dev quality_emu && tools/cuda-dev/quality_emu
#include <cstdio>
#include <random>
#include <thread>
#include <vector>
#include "quality_kernels.cuh"
using namespace gk::quality;

template <typename F>
void launch(int grid, int threads, F body) {
  gridDim.x = grid; blockDim.x = threads;
  for (int b = 0; b < grid; ++b) {
    std::barrier<> bar(threads);
    g_bar = &bar;
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t)
      ts.emplace_back([&, b, t] { blockIdx.x = b; threadIdx.x = t; body(); });
    for (auto& th : ts) th.join();
  }
}

int padded_width(int d) {
  const int dms[] = {2, 4, 8, 12, 16, 24, 32};
  for (int dm : dms) if (d <= dm) return dm;
  return (d + kWideChunk - 1) / kWideChunk * kWideChunk;
}

template <int DM, int R> void run_exact(const SilArgs& A, int grid) { launch(grid, kThreads, [&] { k_sil_exact<DM, R>(A); }); }
void launch_exact(const SilArgs& A, int dp, int grid) {
  switch (dp) {
    case 2: run_exact<2, 2>(A, grid); break;
    case 4: run_exact<4, 2>(A, grid); break;
    case 8: run_exact<8, 2>(A, grid); break;
    case 12: run_exact<12, 2>(A, grid); break;
    case 16: run_exact<16, 2>(A, grid); break;
    case 24: run_exact<24, 1>(A, grid); break;
    case 32: run_exact<32, 1>(A, grid); break;
    default: launch(grid, kThreads, [&] { k_sil_exact_wide(A, dp); }); break;
  }
}

int fails = 0;
void check(bool ok, const char* what, int d) { if (!ok) { ++fails; std::printf("FAIL %s d = %d\n", what, d); } }

template <typename T>
void one_case(long long n, int d, int k, bool sampled, bool empty, std::mt19937_64& rng, int per_launch) {
  std::normal_distribution<double> N(0, 1);
  std::vector<T> x(n * d);
  for (auto& v : x) v = (T)(3 * N(rng));
  std::vector<int> lab(n);
  for (long long i = 0; i < n; ++i) { int c = (int)(rng() % (k - 1)); if (empty && c == 1) c = 0; lab[i] = c; }
  lab[n / 2] = k - 1;  // a singleton
  std::vector<long long> start(k + 1, 0);
  for (int c : lab) ++start[c + 1];
  for (int c = 0; c < k; ++c) start[c + 1] += start[c];
  std::vector<int> order(n);
  { std::vector<long long> nx(start.begin(), start.end() - 1); for (long long i = 0; i < n; ++i) order[nx[lab[i]]++] = (int)i; }
  std::vector<double> cen(k * d, 0.0);  // row-major means (0 for the empty cluster)
  for (long long i = 0; i < n; ++i) for (int a = 0; a < d; ++a) cen[lab[i] * d + a] += (double)x[i + n * a];
  for (int c = 0; c < k; ++c) if (start[c + 1] > start[c]) for (int a = 0; a < d; ++a) cen[c * d + a] /= (double)(start[c + 1] - start[c]);
  const int dp = padded_width(d);
  std::vector<double> xs(n * dp);
  launch(3, 64, [&] { k_sorted_copy<T>(x.data(), n, d, dp, order.data(), xs.data()); });
  std::vector<double> cdist(n), ws(n); std::vector<int> nbs(n);
  launch((int)((n + 63) / 64), 64, [&] { k_quality_centers(xs.data(), n, d, dp, order.data(), start.data(), k, cen.data(), 1, cdist.data(), ws.data(), nbs.data()); });
  std::vector<int> ipos; std::vector<long long> rows;
  if (sampled) { std::vector<int> inv(n); for (long long p = 0; p < n; ++p) inv[order[p]] = (int)p; for (long long i = 0; i < n; i += 3) { rows.push_back(i); ipos.push_back(inv[i]); } }
  const long long mi = sampled ? (long long)rows.size() : n;
  std::vector<double> w(mi, -7); std::vector<int> nb(mi, -7);
  SilArgs A; A.xs = xs.data(); A.n = n; A.order = order.data(); A.start = start.data(); A.k = k; A.ipos = sampled ? ipos.data() : nullptr; A.width = w.data(); A.neighbor = nb.data();
  const int R = dp <= 16 ? 2 : 1;
  const long long per_block = (long long)R * kThreads, blocks = (mi + per_block - 1) / per_block;
  for (long long b0 = 0; b0 < blocks; b0 += per_launch) {
    const long long nbk = std::min<long long>(per_launch, blocks - b0);
    A.q0 = b0 * per_block; A.q1 = std::min(mi, (b0 + nbk) * per_block);
    launch_exact(A, dp, (int)nbk);
  }
  auto dist = [&](long long i, long long j) { double s = 0; for (int a = 0; a < d; ++a) { double u = (double)x[i + n * a] - (double)x[j + n * a]; s = s + u * u; } return std::sqrt(s); };
  auto cdistf = [&](long long i, int c) { double s = 0; for (int a = 0; a < d; ++a) { double u = (double)x[i + n * a] - cen[c * d + a]; s = s + u * u; } return std::sqrt(s); };
  auto wof = [](double a, double b, bool alone) { return (!alone && a != b) ? (b - a) / (a < b ? b : a) : 0.0; };
  bool ok_c = true, ok_s = true, ok_e = true;
  for (long long i = 0; i < n; ++i) {
    const int own = lab[i]; const long long no = start[own + 1] - start[own];
    const double ao = cdistf(i, own);
    double b = INFINITY; int bn = -1;
    for (int c = 0; c < k; ++c) { if (c == own || start[c + 1] == start[c]) continue; double v = cdistf(i, c); if (v < b) { b = v; bn = c; } }
    ok_c = ok_c && cdist[i] == ao;
    ok_s = ok_s && ws[i] == wof(ao, b, no == 1) && nbs[i] == bn + 1;
  }
  for (long long q = 0; q < mi; ++q) {
    const long long i = sampled ? rows[q] : q;
    const int own = lab[i];
    double a = 0, b = INFINITY; int bn = -1;
    for (int c = 0; c < k; ++c) {
      const long long nc = start[c + 1] - start[c]; if (!nc) continue;
      double acc = 0; for (long long j = 0; j < n; ++j) if (lab[j] == c) acc = acc + dist(i, j);
      if (c == own) a = nc > 1 ? acc / (double)(nc - 1) : 0.0; else { double v = acc / (double)nc; if (v < b) { b = v; bn = c; } }
    }
    const double wr = wof(a, b, start[own + 1] - start[own] == 1);
    if (!(w[q] == wr && nb[q] == bn + 1)) { if (ok_e) std::printf("  q = %lld: %.17g vs %.17g, nb %d vs %d\n", q, w[q], wr, nb[q], bn + 1); ok_e = false; }
  }
  check(ok_c, "center distances", d); check(ok_s, "simplified", d); check(ok_e, sampled ? "exact (sampled)" : "exact", d);
}

int main() {
  std::mt19937_64 rng(42);
  int cases = 0;
  for (int d : {1, 2, 3, 5, 8, 11, 12, 13, 16, 17, 24, 29, 32, 33, 40, 47, 64}) {
    for (int v = 0; v < 4; ++v) {
      const long long n = 150 + (long long)(rng() % 400);
      const int k = 3 + (int)(rng() % 9);
      one_case<double>(n, d, k, v & 1, v & 2, rng, 1 + (v % 3));
      ++cases;
    }
    one_case<float>(211, d, 5, false, false, rng, 100); ++cases;
  }
  std::printf("%d cases, %d failures\n", cases, fails);
  return fails != 0;
}
