// b_blobs.h: problem B's blobs for the dev probes (bproto, ordfit), drawn
// as bench.R draws them in spirit: k centers U(0, 100) a coordinate, each
// row a center's copy plus N(0, 1) noise; x column-major, n x d.  rng goes
// on from where the blobs leave it (the probes draw their starts from it).
#ifndef GK_TOOLS_B_BLOBS_H
#define GK_TOOLS_B_BLOBS_H

#include <random>
#include <vector>

inline std::vector<double> b_blobs(long long n, int d, int k, std::mt19937_64 &rng) {
  std::uniform_real_distribution<double> U(0, 100);
  std::normal_distribution<double> N01(0, 1);
  std::vector<double> mu((size_t)k * d), x((size_t)n * d);
  for (auto &v : mu) v = U(rng);
  for (long long i = 0; i < n; ++i) {
    const int c = (int)(rng() % k);
    for (int j = 0; j < d; ++j) x[i + n * j] = mu[c + (size_t)k * j] + N01(rng);
  }
  return x;
}

#endif
