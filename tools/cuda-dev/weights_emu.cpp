// weights_emu.cpp: runs the CUDA engine's weighted Lloyd kernels
// (src/cuda/detail/weighted_kernels.cuh: k_accumulate_w, k_finalize_w,
// k_withinss_w, k_col_maxabs_w) on the CPU -- one std::thread per CUDA
// thread, a std::barrier per block (weights_emu_shim.cuh stands in for
// common.cuh) -- with the scales of gk_cuda_set_weights (weight_scales), and
// checks them against plain sequential references:
//  * whole weights: bit for bit against the unweighted arithmetic (per-row
//    round_fixed, exact integer sums) on the rows replicated w times:
//    centers, within-SS, sizes (rows), with rows of weight 0 and a cluster
//    whose rows all weigh 0 (NaN center);
//  * large whole weights (up to 2^53; total beyond 2^66, where the scales
//    drop): against exact __int128 sums of w * round_fixed(x);
//  * other weights: against __int128 sums of rint(w' x 2^S), and the
//    centers against long double weighted means (relative 1e-15);
// shared limbs and global atomics, several grids and column groups, float
// storage.  No GPU needed:  make -C tools/cuda-dev weights_emu && tools/cuda-dev/weights_emu
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "weighted_kernels.cuh"

using namespace gk;
typedef long long ll;
typedef __int128 i128;

template <typename F>
void launch(int gx, int gy, int threads, size_t smem, F body) {
  gridDim.x = gx;
  gridDim.y = gy;
  blockDim.x = threads;
  std::vector<unsigned char> sm(smem + 16);
  for (int by = 0; by < gy; ++by)
    for (int b = 0; b < gx; ++b) {
      std::barrier<> bar(threads);
      std::vector<EmuWarp> warps(threads / 32);
      g_bar = &bar;
      g_warps = &warps;
      g_smem = sm.data();
      std::vector<std::thread> ts;
      for (int t = 0; t < threads; ++t)
        ts.emplace_back([&, b, by, t] {
          blockIdx.x = b;
          blockIdx.y = by;
          threadIdx.x = t;
          body();
        });
      for (auto& th : ts) th.join();
    }
}

int fails = 0, checks = 0;
void check(bool ok, const char* what, const char* name) {
  ++checks;
  if (!ok) {
    ++fails;
    std::printf("FAIL %s: %s\n", name, what);
  }
}
bool same_bits(double a, double b) { return std::memcmp(&a, &b, 8) == 0; }
i128 as_i128(u64 lo, u64 hi) { return (i128)(((unsigned __int128)hi << 64) | lo); }
Fixed128 of_i128(i128 v) { return Fixed128{(u64)v, (u64)((unsigned __int128)v >> 64)}; }
double value(i128 v, int S) { Fixed128 f = of_i128(v); return from_fixed(f.lo, f.hi, S); }

struct Out {
  std::vector<double> cen, wss;
  std::vector<unsigned> size;
  std::vector<Fixed128> sums;  // k x d, before finalize
};

// The weighted kernels as weights.cu launches them: scales, sums, update, within-SS.
template <typename T>
Out run_weighted(const std::vector<T>& x, ll n, int d, int k, const std::vector<int>& lab, const std::vector<double>& w,
                 const std::vector<double>& cen_wss, int gx, int jb, int shared, WeightSpec* spec, std::vector<int>* sc) {
  // gk_cuda_set_weights: summary, positive-weight maxima, scales
  bool whole = true;
  double wmax = 0, W = 0;
  for (double v : w) {
    whole = whole && v == std::floor(v) && v <= 9007199254740992.0;
    wmax = std::max(wmax, v);
    W += v;
  }
  WeightSpec ws;
  ws.w = w.data();
  const int more = weight_scales(whole, wmax, W, ws);
  std::vector<u64> mx(d, 0);
  launch(3, d, 64, 0, [&] { k_col_maxabs_w<T>(x.data(), n, w.data(), mx.data()); });
  std::vector<int> scale(d);
  for (int j = 0; j < d; ++j) {
    double v;
    std::memcpy(&v, &mx[j], 8);
    scale[j] = std::max(-1022, std::min(1023, limb_scale(v) + more));
  }
  *spec = ws;
  *sc = scale;
  Out o;
  std::vector<u64> acc(2 * (size_t)k * d, 0), wc(2 * (size_t)k, 0);
  State st{};
  const int gy = (d + jb - 1) / jb;
  const size_t smem = shared ? (size_t)kWLimbs * k * (jb + 1) * 4 + 4 * k : 0;
  launch(gx, gy, 256, smem, [&] {
    k_accumulate_w<T>(x.data(), n, d, lab.data(), k, jb, shared, &st, 10, acc.data(), wc.data(), scale.data(), ws);
  });
  for (size_t e = 0; e < (size_t)k * d; ++e) o.sums.push_back(Fixed128{acc[2 * e], acc[2 * e + 1]});
  st.changed = 1;
  o.cen.assign((size_t)k * d, -1.0);
  launch(2, 1, 64, 0, [&] {
    k_finalize_w(&st, 10, acc.data(), wc.data(), o.cen.data(), nullptr, k, d, scale.data(), ws.cscale);
  });
  for (u64 v : acc) check(v == 0, "finalize zeroes the sums", "finalize");
  for (u64 v : wc) check(v == 0, "finalize zeroes the counts", "finalize");
  check(st.iter_done == 1 && st.flag == 0, "state advanced", "finalize");
  // within-SS w.r.t. cen_wss
  std::vector<unsigned> gmax(k, 0), wcnt(k, 0);
  std::vector<u64> wacc(2 * (size_t)k, 0);
  const size_t ws1 = shared ? ((size_t)kWLimbs * k + k + (k & 1)) * 4 + 8 * (size_t)k : 0;
  launch(gx, 1, 256, shared ? 4 * (size_t)k : 0, [&] {
    k_withinss_w<T, 0>(x.data(), n, d, lab.data(), cen_wss.data(), k, shared, gmax.data(), wacc.data(), wcnt.data(), ws);
  });
  launch(gx, 1, 256, ws1, [&] {
    k_withinss_w<T, 1>(x.data(), n, d, lab.data(), cen_wss.data(), k, shared, gmax.data(), wacc.data(), wcnt.data(), ws);
  });
  for (int c = 0; c < k; ++c) {
    o.wss.push_back(wss_value(ws, wacc[2 * c], wacc[2 * c + 1], gmax[c]));
    o.size.push_back(wcnt[c]);
  }
  return o;
}

template <typename T>
double pwss(const std::vector<T>& x, ll n, int d, ll i, const std::vector<double>& cen, int k, int c) {
  double t = (double)x[i] - cen[c];
  double s = t * t;
  for (int j = 1; j < d; ++j) {
    t = (double)x[i + n * j] - cen[c + (size_t)k * j];
    s = s + t * t;
  }
  return s;
}

// The unweighted engine's arithmetic (every path: round_fixed per row,
// exact integer sums, count division; within-SS at wss_scale of the largest
// term), sequential.
template <typename T>
Out reference_plain(const std::vector<T>& x, ll n, int d, int k, const std::vector<int>& lab,
                    const std::vector<double>& cen_wss) {
  Out o;
  std::vector<int> scale(d);
  for (int j = 0; j < d; ++j) {
    double m = 0;
    for (ll i = 0; i < n; ++i) m = std::max(m, std::fabs((double)x[i + n * j]));
    scale[j] = limb_scale(m);
  }
  std::vector<i128> s((size_t)k * d, 0);
  std::vector<unsigned> cnt(k, 0);
  for (ll i = 0; i < n; ++i) {
    ++cnt[lab[i]];
    for (int j = 0; j < d; ++j) s[lab[i] + (size_t)k * j] += round_fixed((double)x[i + n * j], pow2(scale[j]));
  }
  for (int j = 0; j < d; ++j)
    for (int c = 0; c < k; ++c) o.cen.push_back(value(s[c + (size_t)k * j], scale[j]) / (double)cnt[c]);
  std::vector<unsigned> mx(k, 0);
  for (ll i = 0; i < n; ++i) {
    const double t = pwss(x, n, d, i, cen_wss, k, lab[i]);
    u64 b;
    std::memcpy(&b, &t, 8);
    mx[lab[i]] = std::max(mx[lab[i]], (unsigned)(b >> 32));
  }
  std::vector<i128> ws(k, 0);
  for (ll i = 0; i < n; ++i) ws[lab[i]] += round_fixed(pwss(x, n, d, i, cen_wss, k, lab[i]), pow2(wss_scale(mx[lab[i]])));
  for (int c = 0; c < k; ++c) {
    o.wss.push_back(value(ws[c], wss_scale(mx[c])));
    o.size.push_back(cnt[c]);
  }
  return o;
}

// Rows in the order of their clusters (whole warps of one cluster: the
// kernels' whole-warp sums, warp_sums.cuh), rows of weight 0 kept only where
// a case asks for them.
bool g_ordered = false;

template <typename T>
void whole_vs_replicated(const char* name, ll n, int d, int k, int wmaxw, double zero_share, bool empty_cluster,
                         int gx, int jb, int shared, std::mt19937_64& rng) {
  std::normal_distribution<double> N(0, 1);
  std::vector<double> xd((size_t)n * d);
  for (auto& v : xd) v = 5 * N(rng) + 3;
  std::vector<T> x(xd.begin(), xd.end());
  std::vector<int> lab(n);
  std::vector<double> w(n);
  for (ll i = 0; i < n; ++i) {
    lab[i] = (int)(rng() % k);
    w[i] = (rng() % 1000) < zero_share * 1000 ? 0.0 : (double)(rng() % wmaxw + 1);
    if (empty_cluster && lab[i] == k - 1) w[i] = 0;
  }
  if (g_ordered) std::sort(lab.begin(), lab.end());
  x[0] = (T)1e3;  // the largest value of column 0 on a row of weight 0: not a scale
  w[0] = 0;
  std::vector<double> cen_wss((size_t)k * d);
  for (auto& v : cen_wss) v = 2 * N(rng);
  WeightSpec ws;
  std::vector<int> sc;
  Out a = run_weighted(x, n, d, k, lab, w, cen_wss, gx, jb, shared, &ws, &sc);
  check(ws.whole == 1 && ws.wshift == 0, "whole weights, no shift", name);
  // the rows replicated in place
  ll N2 = 0;
  for (double v : w) N2 += (ll)v;
  std::vector<T> xr((size_t)N2 * d);
  std::vector<int> lr;
  ll r = 0;
  for (ll i = 0; i < n; ++i)
    for (ll t = 0; t < (ll)w[i]; ++t, ++r) {
      for (int j = 0; j < d; ++j) xr[r + N2 * j] = x[i + n * j];
      lr.push_back(lab[i]);
    }
  Out b = reference_plain(xr, N2, d, k, lr, cen_wss);
  for (size_t e = 0; e < a.cen.size(); ++e) {
    const int c = (int)(e % k);
    bool emptyc = empty_cluster && c == k - 1;
    if (emptyc) check(std::isnan(a.cen[e]), "a cluster of weight 0 has a NaN center", name);
    else check(same_bits(a.cen[e], b.cen[e]), "center bits = the replicated rows'", name);
  }
  std::vector<unsigned> rows(k, 0);
  for (int c : lab) ++rows[c];
  for (int c = 0; c < k; ++c) {
    if (!(empty_cluster && c == k - 1)) check(same_bits(a.wss[c], b.wss[c]), "within-SS bits = the replicated rows'", name);
    else check(a.wss[c] == 0, "within-SS 0 for a cluster of weight 0", name);
    check(a.size[c] == rows[c], "size = rows", name);
  }
}

// rint of a long double as a 128-bit integer (beyond 2^63 it is one already).
i128 rint128(long double y) { return std::fabs(y) < 0x1p63L ? (i128)llrintl(y) : (i128)y; }

// Large whole weights and fractional ones: exact 128-bit references.
template <typename T>
void exact_reference(const char* name, ll n, int d, int k, int kind, int gx, int jb, int shared, std::mt19937_64& rng) {
  std::normal_distribution<double> N(0, 1);
  std::uniform_real_distribution<double> U(0, 1);
  std::vector<double> xd((size_t)n * d);
  for (auto& v : xd) v = 100 * N(rng);
  std::vector<T> x(xd.begin(), xd.end());
  std::vector<int> lab(n);
  std::vector<double> w(n);
  for (ll i = 0; i < n; ++i) {
    lab[i] = (int)(rng() % k);
    if (kind == 0) w[i] = 9007199254740992.0 - (double)(rng() % 1000);   // whole, near 2^53: sum beyond 2^66
    else if (kind == 1) w[i] = U(rng) * 1e-3;                           // fractional, small
    else w[i] = std::ldexp(U(rng) + 0.01, (int)(rng() % 80) - 40);      // fractional, 2^-40 .. 2^40
    if (rng() % 10 == 0 && !g_ordered) w[i] = 0;
  }
  if (g_ordered) std::sort(lab.begin(), lab.end());
  std::vector<double> cen_wss((size_t)k * d);
  for (auto& v : cen_wss) v = 50 * N(rng);
  WeightSpec ws;
  std::vector<int> sc;
  Out a = run_weighted(x, n, d, k, lab, w, cen_wss, gx, jb, shared, &ws, &sc);
  if (kind == 0) check(ws.whole == 1 && ws.wshift > 0, "huge total: the scales drop", name);
  else check(ws.whole == 0, "fractional", name);
  std::vector<i128> s((size_t)k * d, 0), cnt(k, 0);
  std::vector<long double> ls((size_t)k * d, 0), la((size_t)k * d, 0), lw(k, 0);
  for (ll i = 0; i < n; ++i) {
    if (!(w[i] > 0)) continue;
    const int c = lab[i];
    cnt[c] += ws.whole ? (i128)(ll)w[i] : rint128((long double)(w[i] * ws.wscale) * std::ldexp(1.0L, ws.cscale));
    lw[c] += w[i];
    for (int j = 0; j < d; ++j) {
      const double v = (double)x[i + n * j];
      const i128 t = ws.whole ? (i128)round_fixed(v, pow2(sc[j])) * (i128)(ll)w[i]
                              : rint128((long double)((w[i] * ws.wscale) * v) * std::ldexp(1.0L, sc[j]));
      s[c + (size_t)k * j] += t;
      ls[c + (size_t)k * j] += (long double)w[i] * v;
      la[c + (size_t)k * j] += (long double)w[i] * std::fabs(v);
    }
  }
  for (size_t e = 0; e < s.size(); ++e) {
    const Fixed128 f = of_i128(s[e]);
    check(a.sums[e].lo == f.lo && a.sums[e].hi == f.hi, "sums = the exact 128-bit reference", name);
    const int c = (int)(e % k), j = (int)(e / k);
    const double ref = value(s[e], sc[j]) / value(cnt[c], ws.cscale);
    check(same_bits(a.cen[e], ref), "center = sum / weighted count", name);
    const long double m = ls[e] / lw[c];
    // each term w x rounded once (2^-53): relative to the mean of |x|
    check(std::fabs((long double)a.cen[e] - m) <= 1e-15L * (la[e] / lw[c]), "center = the weighted mean to 1e-15", name);
  }
  // within-SS against long double
  std::vector<long double> lwss(k, 0);
  for (ll i = 0; i < n; ++i) lwss[lab[i]] += (long double)w[i] * pwss(x, n, d, i, cen_wss, k, lab[i]);
  for (int c = 0; c < k; ++c)
    check(std::fabs(a.wss[c] - lwss[c]) <= 1e-14L * lwss[c], "within-SS = the weighted sum to 1e-14", name);
}

int main() {
  std::mt19937_64 rng(20261124);
  // whole weights vs replicated rows: shared limbs / global atomics, grids, column groups
  whole_vs_replicated<double>("whole d=3 shared", 3000, 3, 4, 5, 0.1, false, 2, 3, 1, rng);
  whole_vs_replicated<double>("whole d=5 shared jb=2", 2500, 5, 7, 4, 0.2, true, 3, 2, 1, rng);
  whole_vs_replicated<double>("whole d=2 global", 2000, 2, 3, 6, 0.1, true, 2, 2, 0, rng);
  whole_vs_replicated<double>("whole d=1 k=1", 1500, 1, 1, 3, 0.05, false, 1, 1, 1, rng);
  whole_vs_replicated<float>("whole float d=4", 2000, 4, 5, 4, 0.1, false, 2, 4, 1, rng);
  // large whole weights, fractional weights
  exact_reference<double>("whole near 2^53 (sum > 2^66)", 12000, 2, 3, 0, 2, 2, 1, rng);
  exact_reference<double>("whole near 2^53 global", 12000, 2, 3, 0, 2, 1, 0, rng);
  exact_reference<double>("fractional small", 3000, 3, 4, 1, 2, 3, 1, rng);
  exact_reference<double>("fractional 2^-40..2^40", 3000, 3, 4, 2, 3, 2, 1, rng);
  exact_reference<double>("fractional global", 2000, 3, 4, 2, 2, 3, 0, rng);
  exact_reference<float>("fractional float", 2000, 3, 4, 2, 2, 3, 1, rng);
  // rows ordered by cluster: whole warps add as one
  g_ordered = true;
  whole_vs_replicated<double>("ordered whole d=3 shared", 3000, 3, 4, 5, 0.0, false, 2, 3, 1, rng);
  whole_vs_replicated<float>("ordered whole float d=4", 2000, 4, 5, 4, 0.0, false, 2, 4, 1, rng);
  exact_reference<double>("ordered fractional 2^-40..2^40", 3000, 3, 4, 2, 3, 2, 1, rng);
  g_ordered = false;
  std::printf("%d checks, %d failed\n", checks, fails);
  return fails ? 1 : 0;
}
