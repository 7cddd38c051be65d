// screen_stress.cpp: the CPU screen's certificates (src/cpu_screen.cpp)
// against the exact rule on many adversarial points, outside R.
//
// For each case: k centers, points made to sit near the bisector of their
// two nearest centers at relative gaps from 1e-12 to 1e-1, at scales and
// offsets from 1e-300 to 1e150; every point the screen certifies must have
// the exact rule's strict argmin as its candidate (stats' rule: squared
// differences summed in order, lowest index on ties).  Prints, per
// precision mode, the points screened, certified and wrongly certified
// (which must be 0), and exits 1 on any wrong certificate.
//   g++ -std=c++17 -O2 -I src tools/cpu-dev/screen_stress.cpp src/cpu_screen.cpp -o /tmp/screen_stress
//   /tmp/screen_stress [cases]
#pragma GCC optimize("fp-contract=off")
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "cpu_screen.h"

namespace {

// The exact rule's strict argmin for point i (x column-major n x d), or -1
// when the smallest exact distance is shared (a tie: no certificate may
// name any center but the lowest, so ties are checked as such).
int exact_argmin(const std::vector<double>& x, std::int64_t n, int d, const std::vector<double>& cen, int k,
                 std::int64_t i) {
  double best = INFINITY;
  int lab = 0;
  for (int j = 0; j < k; ++j) {
    double s = 0.0;
    for (int c = 0; c < d; ++c) {
      const double t = x[c * n + i] - cen[j * d + c];
      s += t * t;
    }
    if (s < best) {
      best = s;
      lab = j;
    }
  }
  return lab;
}

struct Tally {
  long screened = 0, certified = 0, wrong = 0;
};

Tally run_case(std::mt19937_64& rng, int d, int k, double scale, double offset, const char* mode) {
  setenv("GPUKMEANS_CPU_SCREEN", mode, 1);
  std::normal_distribution<double> nd;
  std::uniform_real_distribution<double> ud(0.0, 1.0);
  const int n = 512;
  std::vector<double> cen(static_cast<std::size_t>(k) * d), x(static_cast<std::size_t>(n) * d);
  for (int j = 0; j < k; ++j)
    for (int c = 0; c < d; ++c) cen[j * d + c] = offset + scale * nd(rng);
  // some centers repeated or a rounding apart
  if (k > 3) {
    for (int c = 0; c < d; ++c) cen[1 * d + c] = cen[0 * d + c];
    cen[1 * d] = std::nextafter(cen[0], INFINITY);
    for (int c = 0; c < d; ++c) cen[3 * d + c] = cen[2 * d + c];
  }
  for (int i = 0; i < n; ++i) {
    // between two random centers a and b: the midpoint, moved along b - a by
    // a relative gap t, plus a little noise orthogonal-ish to it
    const int a = static_cast<int>(ud(rng) * k) % k, b = static_cast<int>(ud(rng) * k) % k;
    const double t = (ud(rng) < 0.5 ? -1 : 1) * std::pow(10.0, -12.0 + 11.0 * ud(rng));
    const double noise = ud(rng) < 0.3 ? 0.0 : scale * std::pow(10.0, -6.0 * ud(rng)) * 0.1;
    for (int c = 0; c < d; ++c) {
      const double ca = cen[a * d + c], cb = cen[b * d + c];
      x[static_cast<std::size_t>(c) * n + i] = 0.5 * (ca + cb) + t * (cb - ca) + noise * nd(rng);
    }
    if (ud(rng) < 0.05)  // exactly a center
      for (int c = 0; c < d; ++c) x[static_cast<std::size_t>(c) * n + i] = cen[a * d + c];
  }
  gk::CenterScreen<double> screen;
  screen.prepare(cen.data(), k, d);
  Tally tl;
  if (!screen.active()) return tl;
  int cand[256], cand2[256];
  unsigned char ok[256];
  double lo2[256], lo3[256];
  for (int i0 = 0; i0 < n; i0 += 256) {
    const bool third = (i0 / 256) % 2 == 1;
    if (third)
      screen.screen3(x.data(), n, i0, 256, cand, ok, cand2, lo2, lo3);
    else
      screen.screen(x.data(), n, i0, 256, cand, ok);
    for (int p = 0; p < 256; ++p) {
      ++tl.screened;
      if (!ok[p]) continue;
      ++tl.certified;
      const int e = exact_argmin(x, n, d, cen, k, i0 + p);
      bool bad = e != cand[p];
      if (third && !bad) {  // the lower bounds: real distances to every other center
        for (int j = 0; j < k; ++j) {
          if (j == cand[p]) continue;
          long double s = 0.0L;
          for (int c = 0; c < d; ++c) {
            const long double t = (long double)x[c * n + i0 + p] - (long double)cen[j * d + c];
            s += t * t;
          }
          const double bound = j == cand2[p] ? lo2[p] : lo3[p];
          if ((long double)bound * bound > s * (1.0L + 1e-15L)) bad = true;
        }
      }
      if (bad) {
        ++tl.wrong;
        if (tl.wrong <= 3)
          std::fprintf(stderr, "WRONG mode=%s d=%d k=%d scale=%g offset=%g point=%d cand=%d exact=%d\n", mode, d, k,
                       scale, offset, i0 + p, cand[p], e);
      }
    }
  }
  return tl;
}

}  // namespace

int main(int argc, char** argv) {
  const int cases = argc > 1 ? std::atoi(argv[1]) : 400;
  std::mt19937_64 rng(20261201);
  const int dims[] = {1, 2, 3, 8, 17, 64, 130, 600};
  const int ks[] = {2, 5, 12, 40, 100};
  const double scales[] = {1e-300, 1e-160, 1e-40, 1e-20, 1e-3, 1.0, 1e3, 1e20, 1e140};
  const double offsets[] = {0.0, 1.0, 1e3, 1e8};
  long wrong = 0;
  for (const char* mode : {"float", "double", "on"}) {
    Tally all;
    for (int r = 0; r < cases; ++r) {
      const int d = dims[rng() % 8], k = ks[rng() % 5];
      const double scale = scales[rng() % 9];
      const double offset = offsets[rng() % 4] * scale * (rng() % 2 ? 1.0 : 1e4);
      const Tally t = run_case(rng, d, k, scale, offset, mode);
      all.screened += t.screened;
      all.certified += t.certified;
      all.wrong += t.wrong;
    }
    std::printf("mode %-6s screened %ld certified %ld (%.1f%%) wrong %ld\n", mode, all.screened, all.certified,
                100.0 * all.certified / (all.screened ? all.screened : 1), all.wrong);
    wrong += all.wrong;
  }
  return wrong ? 1 : 0;
}
