// cpu_quality.cpp: the CPU engine's quality pass (Engine::quality): each
// row's distance to its own center, the simplified silhouette (O(n k d)) and
// the exact silhouette (O(n^2 d), no n x n matrix), OpenMP over blocks of
// rows.  It is the reference of src/cuda/quality.cu: the same operations in
// the same order, so the two agree bit for bit in double precision.
//
// Exactness: a distance is sqrt(s), s = 0; s = s + (u_a - v_a)^2 in
// coordinate order, each operation rounded on its own (contraction into FMA
// is off in this file), as R's dist() computes it; the exact silhouette adds
// the distances of a row to the rows of a cluster in row order, as
// cluster::silhouette (sildist) does, so its widths are those of
// cluster::silhouette(cl, dist(x)) to the last bit where R is built without
// FMA (x86-64).  Blocks of rows run SIMD across rows: each row still adds in
// its own order.
#ifdef __clang__
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off", "no-math-errno")
#endif

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "cpu_engine.h"

namespace gk {

namespace {

// Rows of a block: SIMD across them; a block's coordinates (B x d) stay in
// ~16 KiB.
int quality_block(int d) {
  int b = 2048 / std::max(1, d);
  b = std::max(8, std::min(64, b));
  return b - b % 8;
}

constexpr int kMaxB = 64;

// acc[p] = acc[p] + sqrt(s[p]), p < B.  The compiler does not vectorise
// sqrt (errno), so SSE2 does it two at a time: the same correctly rounded
// square roots.
inline void add_sqrt(double* __restrict acc, const double* __restrict s, int B) {
  int p = 0;
#if defined(__SSE2__)
  for (; p + 2 <= B; p += 2)
    _mm_storeu_pd(acc + p, _mm_add_pd(_mm_loadu_pd(acc + p), _mm_sqrt_pd(_mm_loadu_pd(s + p))));
#endif
  for (; p < B; ++p) acc[p] = acc[p] + std::sqrt(s[p]);
}

// An AVX2 clone next to the baseline one (chosen at load time), as
// cpu_lloyd.cpp: never FMA.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define GK_QCLONES __attribute__((target_clones("avx2", "default")))
#else
#define GK_QCLONES
#endif

// (b - a) / max(a, b), or 0 for a row alone in its cluster or when a == b
// (cluster::silhouette's rule).
inline double width_of(double a, double b, bool alone) {
  return (!alone && a != b) ? (b - a) / (a < b ? b : a) : 0.0;
}

// The cluster (0-based) of each row, from the order.
std::vector<int> labels_of(const ClusterOrder& o, std::int64_t n) {
  std::vector<int> lab(n);
  const int k = static_cast<int>(o.start.size()) - 1;
  for (int c = 0; c < k; ++c)
    for (std::int64_t p = o.start[c]; p < o.start[c + 1]; ++p) lab[o.order[p]] = c;
  return lab;
}

// Runs body(b) for blocks b = 0 .. nblocks - 1 in parallel, in pieces of
// about `per_piece` blocks, polling the observer between pieces (on this
// thread).
template <typename F>
void for_blocks(std::int64_t nblocks, std::int64_t per_piece, int threads, IterationObserver* observer, F body) {
  per_piece = std::max<std::int64_t>(1, per_piece);
  for (std::int64_t b0 = 0; b0 < nblocks; b0 += per_piece) {
    const std::int64_t b1 = std::min(nblocks, b0 + per_piece);
    const int nt = threads_for(threads, b1 - b0);
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
    for (std::int64_t b = b0; b < b1; ++b) body(b);
    if (observer && !observer->keep_going()) throw Interrupted();
  }
}

// Distances of the rows of a block to their own center and, for the
// simplified silhouette, to the nearest center of another non-empty cluster.
template <typename T>
void centers_block(const T* __restrict x, std::int64_t n, int d, int k, const double* __restrict cen_rm,
                   const std::vector<std::int64_t>& size, const int* __restrict lab, std::int64_t i0, int B,
                   bool simplified, double* __restrict center_dist, double* __restrict width,
                   int* __restrict neighbor) {
  double s[kMaxB], own[kMaxB], best[kMaxB];
  int nb[kMaxB];
  const int* L = lab + i0;
  for (int p = 0; p < B; ++p) s[p] = 0.0;
  for (int a = 0; a < d; ++a) {
    const T* xa = x + static_cast<std::int64_t>(a) * n + i0;
#pragma omp simd
    for (int p = 0; p < B; ++p) {
      const double u = static_cast<double>(xa[p]) - cen_rm[static_cast<std::size_t>(L[p]) * d + a];
      s[p] = s[p] + u * u;
    }
  }
#pragma omp simd
  for (int p = 0; p < B; ++p) {
    own[p] = std::sqrt(s[p]);
    best[p] = std::numeric_limits<double>::infinity();
    nb[p] = -1;
  }
  if (simplified) {
    for (int c = 0; c < k; ++c) {
      if (size[c] == 0) continue;
      const double* cc = cen_rm + static_cast<std::size_t>(c) * d;
      for (int p = 0; p < B; ++p) s[p] = 0.0;
      for (int a = 0; a < d; ++a) {
        const T* xa = x + static_cast<std::int64_t>(a) * n + i0;
        const double ca = cc[a];
#pragma omp simd
        for (int p = 0; p < B; ++p) {
          const double u = static_cast<double>(xa[p]) - ca;
          s[p] = s[p] + u * u;
        }
      }
#pragma omp simd
      for (int p = 0; p < B; ++p) {
        const double dist = std::sqrt(s[p]);
        const bool better = L[p] != c && dist < best[p];
        best[p] = better ? dist : best[p];
        nb[p] = better ? c : nb[p];
      }
    }
  }
  for (int p = 0; p < B; ++p) {
    const std::int64_t i = i0 + p;
    if (center_dist) center_dist[i] = own[p];
    if (simplified) {
      width[i] = width_of(own[p], best[p], size[L[p]] == 1);
      neighbor[i] = nb[p] + 1;
    }
  }
}

// The exact silhouette of the rows at positions pos[0 .. B) of the sorted
// copy xs (n x d, row-major, cluster by cluster).
// xi: room for B x d doubles (the block's coordinates, a * B + p).
GK_QCLONES void exact_block(const double* __restrict xs, int d, const ClusterOrder& o, const int* pos, int B,
                 const std::vector<int>& lab_pos, double* __restrict xi, double* wout, int* nbout) {
  const int k = static_cast<int>(o.start.size()) - 1;
  for (int p = 0; p < B; ++p)
    for (int a = 0; a < d; ++a) xi[static_cast<std::size_t>(a) * B + p] = xs[static_cast<std::size_t>(pos[p]) * d + a];
  double s[kMaxB], acc[kMaxB], own_mean[kMaxB], best[kMaxB];
  int nb[kMaxB];
  for (int p = 0; p < B; ++p) {
    own_mean[p] = 0.0;
    best[p] = std::numeric_limits<double>::infinity();
    nb[p] = -1;
  }
  const double* X = xi;
  for (int c = 0; c < k; ++c) {
    const std::int64_t j0 = o.start[c], j1 = o.start[c + 1];
    if (j1 == j0) continue;
    for (int p = 0; p < B; ++p) acc[p] = 0.0;
    for (std::int64_t j = j0; j < j1; ++j) {
      const double* y = xs + static_cast<std::size_t>(j) * d;
      {
        const double y0 = y[0];
#pragma omp simd
        for (int p = 0; p < B; ++p) {
          const double u = X[p] - y0;
          s[p] = u * u;  // 0 + u * u, which is u * u exactly
        }
      }
      for (int a = 1; a < d; ++a) {
        const double ya = y[a];
        const double* xa = X + static_cast<std::size_t>(a) * B;
#pragma omp simd
        for (int p = 0; p < B; ++p) {
          const double u = xa[p] - ya;
          s[p] = s[p] + u * u;
        }
      }
      add_sqrt(acc, s, B);
    }
    const double m = static_cast<double>(j1 - j0);
    for (int p = 0; p < B; ++p) {
      if (lab_pos[pos[p]] == c) {
        own_mean[p] = j1 - j0 > 1 ? acc[p] / (m - 1.0) : 0.0;
      } else {
        const double v = acc[p] / m;
        if (v < best[p]) {
          best[p] = v;
          nb[p] = c;
        }
      }
    }
  }
  for (int p = 0; p < B; ++p) {
    const int c = lab_pos[pos[p]];
    wout[p] = width_of(own_mean[p], best[p], o.start[c + 1] - o.start[c] == 1);
    nbout[p] = nb[p] + 1;
  }
}

}  // namespace

template <typename T>
QualityPoints cpu_quality(const T* x, std::int64_t n, int d, const QualityRequest& req, int threads,
                          IterationObserver* observer) {
  using Sil = QualityRequest::Silhouette;
  const ClusterOrder& o = *req.order;
  const int k = req.k;
  QualityPoints out;
  if (static_cast<std::int64_t>(o.order.size()) != n || static_cast<int>(o.start.size()) != k + 1)
    throw EngineError(EngineError::Kind::kInvalid, "quality: the cluster order does not match the data");
  const bool simplified = req.silhouette == Sil::kSimplified;
  const bool exact = req.silhouette == Sil::kExact;
  if ((req.center_dist || simplified) && !req.centers)
    throw EngineError(EngineError::Kind::kInvalid, "quality: centers are needed");
  std::vector<std::int64_t> size(k);
  for (int c = 0; c < k; ++c) size[c] = o.start[c + 1] - o.start[c];
  const std::vector<int> lab = labels_of(o, n);

  if (req.center_dist || simplified) {
    std::vector<double> cen_rm(static_cast<std::size_t>(k) * d);
    for (int c = 0; c < k; ++c)
      for (int a = 0; a < d; ++a) cen_rm[static_cast<std::size_t>(c) * d + a] = req.centers[c + static_cast<std::size_t>(k) * a];
    if (req.center_dist) out.center_dist.resize(n);
    if (simplified) {
      out.width.resize(n);
      out.neighbor.resize(n);
    }
    const int B = quality_block(d);
    const std::int64_t nblocks = (n + B - 1) / B;
    // ~2e8 coordinate operations between polls
    const std::int64_t per_piece = 1 + 200000000LL / (static_cast<std::int64_t>(B) * d * (simplified ? k : 1));
    double* cd = req.center_dist ? out.center_dist.data() : nullptr;
    for_blocks(nblocks, per_piece, threads, observer, [&](std::int64_t b) {
      const std::int64_t i0 = b * B;
      const int nbk = static_cast<int>(std::min<std::int64_t>(B, n - i0));
      centers_block(x, n, d, k, cen_rm.data(), size, lab.data(), i0, nbk, simplified, cd,
                    simplified ? out.width.data() : nullptr, simplified ? out.neighbor.data() : nullptr);
    });
  }

  if (exact) {
    // The rows cluster by cluster, row-major, in double.
    std::vector<double> xs(static_cast<std::size_t>(n) * d);
    {
      const int nt = threads_for(threads, n / 4096);
#pragma omp parallel for num_threads(nt) schedule(static)
      for (std::int64_t p = 0; p < n; ++p) {
        const std::int64_t i = o.order[p];
        for (int a = 0; a < d; ++a) xs[static_cast<std::size_t>(p) * d + a] = static_cast<double>(x[i + n * a]);
      }
    }
    std::vector<int> lab_pos(n);  // cluster of each position
    for (int c = 0; c < k; ++c)
      for (std::int64_t p = o.start[c]; p < o.start[c + 1]; ++p) lab_pos[p] = c;
    // Positions whose widths are wanted.
    const std::int64_t m = req.rows ? req.m : n;
    std::vector<int> pos(m);
    if (req.rows) {
      std::vector<int> inv(n);
      for (std::int64_t p = 0; p < n; ++p) inv[o.order[p]] = static_cast<int>(p);
      for (std::int64_t q = 0; q < m; ++q) {
        if (req.rows[q] < 0 || req.rows[q] >= n)
          throw EngineError(EngineError::Kind::kInvalid, "quality: a sampled row is out of range");
        pos[q] = inv[req.rows[q]];
      }
    } else {
      for (std::int64_t p = 0; p < n; ++p) pos[p] = static_cast<int>(p);
    }
    std::vector<double> w(m);
    std::vector<int> nb(m);
    const int B = quality_block(d);
    const std::int64_t nblocks = (m + B - 1) / B;
    // ~1e9 pair-coordinates between polls
    const std::int64_t per_piece = 1 + 1000000000LL / (static_cast<std::int64_t>(B) * std::max<std::int64_t>(1, n) * d);
    // one block's coordinates per thread
    std::vector<double> xi(static_cast<std::size_t>(resolve_threads(threads)) * B * d);
    for_blocks(nblocks, per_piece, threads, observer, [&](std::int64_t b) {
      const std::int64_t q0 = b * B;
      const int nbk = static_cast<int>(std::min<std::int64_t>(B, m - q0));
      exact_block(xs.data(), d, o, pos.data() + q0, nbk, lab_pos, xi.data() + static_cast<std::size_t>(thread_id()) * B * d,
                  w.data() + q0, nb.data() + q0);
    });
    if (req.rows) {
      out.width.swap(w);
      out.neighbor.swap(nb);
    } else {
      // positions -> rows
      out.width.resize(n);
      out.neighbor.resize(n);
      for (std::int64_t p = 0; p < n; ++p) {
        out.width[o.order[p]] = w[p];
        out.neighbor[o.order[p]] = nb[p];
      }
    }
  }
  return out;
}

template QualityPoints cpu_quality<double>(const double*, std::int64_t, int, const QualityRequest&, int,
                                           IterationObserver*);
template QualityPoints cpu_quality<float>(const float*, std::int64_t, int, const QualityRequest&, int,
                                          IterationObserver*);

}  // namespace gk
