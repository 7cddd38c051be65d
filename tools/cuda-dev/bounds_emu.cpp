// bounds_emu.cpp: runs the CUDA engine's bounded Lloyd kernels
// (src/cuda/detail/bounds_kernels.cuh) on the CPU -- one std::thread per
// CUDA thread, a std::barrier per block and per warp, directed rounding
// through fesetround (bounds_emu_shim.cuh stands in for common.cuh) -- in
// the launch order of src/cuda/bounds.cu, and checks every iteration's
// labels and centers bit for bit against plain Lloyd with the exact rule and
// the same fixed-point sums.  Where bounds_model.cpp checks the design, this
// checks the kernels' code (indexing, barriers, the active list, the sums
// moved point by point, the last-block state update).  No GPU needed:
//   make -C tools/cuda-dev bounds_emu && tools/cuda-dev/bounds_emu
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "bounds_kernels.cuh"

using namespace gk;
typedef long long ll;

template <typename F>
void launch(int grid, int threads, F body) {
  gridDim.x = grid;
  blockDim.x = threads;
  for (int b = 0; b < grid; ++b) {
    std::barrier<> bar(threads);
    std::vector<EmuWarp> warps(threads / 32);
    g_bar = &bar;
    g_warps = &warps;
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t)
      ts.emplace_back([&, b, t] {
        blockIdx.x = b;
        threadIdx.x = t;
        body();
      });
    for (auto& th : ts) th.join();
  }
}

BoundsMargin margin(int d) {  // as bounds.cu
  const double gamma = (d + 4.0) * 0x1p-53 * 1.1;
  BoundsMargin m;
  m.g_up = std::nextafter(1.0 + gamma, 2.0);
  m.g_dn = std::nextafter(1.0 - gamma, 0.0);
  m.inv_dn = std::nextafter(1.0 / (1.0 - gamma), 2.0);
  m.inv_up = std::nextafter(1.0 / (1.0 + gamma), 0.0);
  m.eta = (d + 2.0) * 0x1p-1070;
  m.eta2 = 2.0 * m.eta;
  return m;
}

int fails = 0;

// One fit from centers c0 (k x d column-major): plain Lloyd for `plain_first`
// iterations, then the bounded launches; compared with plain Lloyd after
// every iteration.
template <typename T>
void one_case(const char* what, ll n, int d, int k, const std::vector<double>& xd, std::vector<double> c0,
              int plain_first, int grid, int max_iter) {
  std::vector<T> x(xd.begin(), xd.end());
  std::vector<int> scale(d);
  for (int a = 0; a < d; ++a) {
    double m = 0;
    for (ll i = 0; i < n; ++i) m = std::max(m, std::fabs((double)x[i + n * a]));
    scale[a] = limb_scale(m);
  }
  const size_t kd = (size_t)k * d;
  // the centers in storage precision, as the engine holds them
  auto stored = [&](const std::vector<double>& c) {
    std::vector<T> s(kd);
    for (size_t e = 0; e < kd; ++e) s[e] = (T)c[e];
    return s;
  };
  auto exact = [&](ll i, const std::vector<T>& cen, int j) {
    double t = (double)x[i] - (double)cen[j];
    double s = t * t;
    for (int a = 1; a < d; ++a) {
      t = (double)x[i + n * a] - (double)cen[j + (size_t)k * a];
      s = s + t * t;
    }
    return s;
  };
  // plain Lloyd's step: labels (exact rule) and the new centers; false when
  // nothing changed
  auto plain_step = [&](std::vector<int>& lab, std::vector<double>& c) {
    const std::vector<T> cs = stored(c);
    std::vector<Fixed128> acc(kd, Fixed128{0, 0});
    std::vector<unsigned> cnt(k, 0);
    ll ch = 0;
    for (ll i = 0; i < n; ++i) {
      double best = INFINITY;
      int b = -1;
      for (int j = 0; j < k; ++j) {
        const double dd = exact(i, cs, j);
        if (dd < best) best = dd, b = j;
      }
      if (b < 0) b = lab[i] >= 0 ? lab[i] : 0;
      if (b != lab[i]) lab[i] = b, ++ch;
      for (int a = 0; a < d; ++a) add_fixed(acc[b + (size_t)k * a], round_fixed((double)x[i + n * a], pow2(scale[a])));
      ++cnt[b];
    }
    if (ch == 0) return false;
    for (int a = 0; a < d; ++a)
      for (int j = 0; j < k; ++j) {
        const size_t e = j + (size_t)k * a;
        c[e] = from_fixed(acc[e].lo, acc[e].hi, scale[a]) / (double)cnt[j];
      }
    return true;
  };

  // the reference trajectory
  std::vector<std::vector<int>> ref_lab;
  std::vector<std::vector<double>> ref_c;
  {
    std::vector<int> lab(n, -1);
    std::vector<double> c = c0;
    for (int it = 0; it < max_iter; ++it) {
      const bool moved = plain_step(lab, c);
      ref_lab.push_back(lab);
      ref_c.push_back(c);
      if (!moved) break;
    }
  }

  // the emulated engine: plain iterations first (the plain path's results
  // are those of plain_step), then first() and iteration() of bounds.cu
  std::vector<int> lab(n, -1);
  std::vector<double> cen_d = c0;
  int it = 0;
  bool ok = true, converged = false;
  for (; it < plain_first && it < max_iter; ++it) {
    if (!plain_step(lab, cen_d)) {
      converged = true;
      ++it;
      break;
    }
  }
  std::vector<float> u(n), l(n), cen_f(kd);
  std::vector<unsigned> active(n), counts(k);
  std::vector<double> move(k), top(3);
  std::vector<T> prev(kd);
  std::vector<u64> acc(2 * kd), hist(64);
  State st;
  std::memset(&st, 0, sizeof st);
  st.iter_done = it;
  const BoundsMargin m = margin(d);
  auto cen_now = [&]() {
    if (sizeof(T) == 4)
      for (size_t e = 0; e < kd; ++e) cen_f[e] = (float)cen_d[e];
    return (const T*)(sizeof(T) == 4 ? (const void*)cen_f.data() : (const void*)cen_d.data());
  };
  float* cf = sizeof(T) == 4 ? cen_f.data() : nullptr;
  auto compare = [&](int iter_done) {
    const int r = iter_done - 1;
    if (r >= (int)ref_lab.size()) return;
    const bool lab_ok = lab == ref_lab[r];
    const bool c_ok = std::memcmp(cen_d.data(), ref_c[r].data(), kd * sizeof(double)) == 0;
    if ((!lab_ok || !c_ok) && ok) {
      std::printf("  %s: iteration %d: labels %s, centers %s\n", what, iter_done, lab_ok ? "same" : "DIFFER",
                  c_ok ? "same" : "DIFFER");
      ok = false;
    }
  };
  if (!converged && it < max_iter) {
    // first(): init (full assignment, bounds set), sums from scratch (the
    // plain path's accumulate, here on the host), finalize, moves
    const T* cen = cen_now();
    launch(grid, kBoundsThreads, [&] {
      k_bounds_init<T>(x.data(), n, d, cen, k, lab.data(), u.data(), l.data(), m, &st, max_iter);
    });
    std::fill(acc.begin(), acc.end(), 0);
    std::fill(counts.begin(), counts.end(), 0);
    for (ll i = 0; i < n; ++i) {
      for (int a = 0; a < d; ++a)
        atomic_add_fixed(&acc[2 * (lab[i] + (size_t)k * a)], round_fixed((double)x[i + n * a], pow2(scale[a])));
      ++counts[lab[i]];
    }
    launch(2, 256, [&] {
      k_bounds_finalize<T>(&st, max_iter, acc.data(), counts.data(), cen_d.data(), cf, prev.data(), k, d,
                           scale.data(), hist.data(), 64);
    });
    compare(st.iter_done);
    launch(1, 1024, [&] { k_bounds_moves<T>(prev.data(), cen_now(), k, d, move.data(), top.data(), &st, max_iter); });
    while (!st.flag && st.iter_done < max_iter) {
      const T* c = cen_now();
      launch(grid, kBoundsThreads, [&] {
        k_bounds_filter<T>(x.data(), n, d, c, k, lab.data(), u.data(), l.data(), move.data(), top.data(), m,
                           active.data(), &st, max_iter);
      });
      launch(grid, kBoundsThreads, [&] {
        k_bounds_assign<T>(x.data(), n, d, c, k, lab.data(), u.data(), l.data(), m, active.data(), acc.data(),
                           counts.data(), scale.data(), &st, max_iter);
      });
      launch(2, 256, [&] {
        k_bounds_finalize<T>(&st, max_iter, acc.data(), counts.data(), cen_d.data(), cf, prev.data(), k, d,
                             scale.data(), hist.data(), 64);
      });
      compare(st.iter_done);
      launch(1, 1024, [&] { k_bounds_moves<T>(prev.data(), cen_now(), k, d, move.data(), top.data(), &st, max_iter); });
    }
  }
  const int iters = converged ? it : (st.flag ? st.conv_iter : max_iter + 1);
  const bool ref_conv = ref_lab.size() >= 2 && ref_lab[ref_lab.size() - 1] == ref_lab[ref_lab.size() - 2] &&
                        (int)ref_lab.size() <= max_iter;
  const int want = ref_conv ? (int)ref_lab.size() : max_iter + 1;
  if (iters != want && ok) {
    std::printf("  %s: iter %d, plain Lloyd %d\n", what, iters, want);
    ok = false;
  }
  ll skipped = 0;
  for (int i = 0; i < 64 && i < st.iter_done; ++i) skipped += hist[i];
  std::printf("%-44s n=%-5lld d=%-3d k=%-3d %s iter %3d, exact points in bounded iterations %lld: %s\n", what, n, d,
              k, sizeof(T) == 4 ? "float " : "double", iters, skipped, ok ? "ok" : "MISMATCH");
  if (!ok) ++fails;
}

std::vector<double> blobs(ll n, int d, int g, double spread, std::mt19937_64& rng, double scale = 1, double shift = 0) {
  std::normal_distribution<double> N(0, 1);
  std::vector<double> mu((size_t)g * d), x((size_t)n * d);
  for (auto& v : mu) v = 10 * N(rng);
  for (ll i = 0; i < n; ++i) {
    const int c = (int)(rng() % g);
    for (int a = 0; a < d; ++a) x[i + n * a] = (mu[c + (size_t)g * a] + spread * N(rng)) * scale + shift;
  }
  return x;
}

std::vector<double> pick(const std::vector<double>& x, ll n, int d, int k, std::mt19937_64& rng) {
  std::vector<double> c((size_t)k * d);
  for (int j = 0; j < k; ++j) {
    const ll i = (ll)(rng() % n);
    for (int a = 0; a < d; ++a) c[j + (size_t)k * a] = x[i + n * a];
  }
  return c;
}

int main() {
  std::mt19937_64 rng(7);
  int cases = 0;
  for (int d : {1, 2, 3, 8, 17, 64, 80}) {
    for (int v = 0; v < 3; ++v) {
      const ll n = 300 + (ll)(rng() % 500);
      const int k = 2 + (int)(rng() % 12), g = 2 + (int)(rng() % 8);
      auto x = blobs(n, d, g, v == 2 ? 6.0 : 1.0, rng);
      auto c = pick(x, n, d, k, rng);
      char what[64];
      std::snprintf(what, sizeof what, "blobs%s, bounded from iteration %d", v == 2 ? " (overlapping)" : "", 1 + v % 2);
      one_case<double>(what, n, d, k, x, c, v % 2, 1 + v, 60);
      ++cases;
      if (v == 0) {
        one_case<float>("blobs, float storage", n, d, k, x, c, 1, 2, 60);
        ++cases;
      }
    }
  }
  {  // scales and shifts
    for (double s : {1e-150, 1e-10, 1e12, 1e150}) {
      auto x = blobs(400, 3, 4, 1.0, rng, s, 0);
      one_case<double>("scaled blobs", 400, 3, 6, x, pick(x, 400, 3, 6, rng), 1, 2, 60);
      ++cases;
    }
    auto x = blobs(400, 4, 5, 1.0, rng, 1, 1e8);
    one_case<double>("shifted blobs (+1e8)", 400, 4, 7, x, pick(x, 400, 4, 7, rng), 1, 2, 60);
    ++cases;
  }
  {  // ties: a lattice of duplicates, centers on bisectors, duplicate centers
    const ll n = 512;
    const int d = 2;
    std::vector<double> x(n * d);
    for (ll i = 0; i < n; ++i) {
      x[i] = (double)(i % 8);
      x[i + n] = (double)((i / 8) % 8);
    }
    std::vector<double> c = {0.5, 3.5, 3.5, 6.5, 0.5, /* y */ 0.5, 3.5, 3.5, 6.5, 6.5};
    one_case<double>("lattice with duplicate centers", n, d, 5, x, c, 0, 3, 60);
    one_case<double>("lattice with duplicate centers, plain first", n, d, 5, x, c, 1, 3, 60);
    cases += 2;
  }
  {  // an empty cluster from the start (a center far away) and one that empties
    auto x = blobs(600, 2, 3, 1.0, rng);
    auto c = pick(x, 600, 2, 5, rng);
    c[4] = 1e6;
    c[4 + 5] = 1e6;
    one_case<double>("a center that never gets points", 600, 2, 5, x, c, 0, 2, 60);
    c = pick(x, 600, 2, 4, rng);
    c[3] = c[0];
    c[3 + 4] = c[0 + 4];  // a duplicate center: the later one empties
    one_case<double>("a duplicate center empties", 600, 2, 4, x, c, 0, 2, 60);
    cases += 2;
  }
  {  // not converged within max_iter
    auto x = blobs(500, 2, 6, 4.0, rng);
    one_case<double>("stopped by max_iter", 500, 2, 9, x, pick(x, 500, 2, 9, rng), 1, 2, 4);
    ++cases;
  }
  std::printf("%d cases, %d failures\n", cases, fails);
  return fails != 0;
}
