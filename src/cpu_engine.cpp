// cpu_engine.cpp: Lloyd's algorithm on the CPU, OpenMP over points.
//
// The assignment works on blocks of consecutive points: R stores x column by
// column, so a block's values of one coordinate are contiguous and the
// distance loop runs SIMD across points while each point still sums its
// coordinates in order, exactly as stats does.  No n x k matrix is formed.
#include "cpu_engine.h"
#include "wall_clock.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gk {

namespace {

constexpr int kMaxBlock = 256;

// Points per block: keep a block's coordinates (B x d) within ~32 KiB.
template <typename T>
int block_size(int d) {
  int b = static_cast<int>(32768 / (sizeof(T) * static_cast<size_t>(d)));
  b = std::max(16, std::min(kMaxBlock, b));
  return b - b % 8;
}

// Nearest center for points [i0, i0 + B).  cen is k x d row-major.
// Writes 0-based labels and the squared distance to the chosen center.
template <typename T>
inline __attribute__((always_inline)) void assign_block_impl(
    const T* __restrict x, std::int64_t n, int d, int k, const T* __restrict cen,
    std::int64_t i0, int B, int* __restrict lab, T* __restrict best) {
  T dd[kMaxBlock];
  for (int p = 0; p < B; ++p) {
    best[p] = std::numeric_limits<T>::infinity();
    lab[p] = 0;
  }
  for (int j = 0; j < k; ++j) {
    const T* cj = cen + static_cast<std::int64_t>(j) * d;
    {
      const T c0 = cj[0];
      const T* xc = x + i0;
#pragma omp simd
      for (int p = 0; p < B; ++p) {
        T t = xc[p] - c0;
        dd[p] = t * t;  // stats: 0.0 + t*t, which is t*t exactly
      }
    }
    for (int c = 1; c < d; ++c) {
      const T cc = cj[c];
      const T* xc = x + static_cast<std::int64_t>(c) * n + i0;
#pragma omp simd
      for (int p = 0; p < B; ++p) {
        T t = xc[p] - cc;
        dd[p] += t * t;
      }
    }
    // Strict '<': ties keep the lower index; NaN (empty) centers never win.
#pragma omp simd
    for (int p = 0; p < B; ++p) {
      bool better = dd[p] < best[p];
      best[p] = better ? dd[p] : best[p];
      lab[p] = better ? j : lab[p];
    }
  }
}

// Non-template entry points so that the compiler can build an AVX2 clone
// next to the baseline one (chosen at load time; never FMA, which would
// change the rounding of the distances).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define GK_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define GK_CLONES
#endif

GK_CLONES void assign_block(const double* x, std::int64_t n, int d, int k, const double* cen,
                            std::int64_t i0, int B, int* lab, double* best) {
  assign_block_impl<double>(x, n, d, k, cen, i0, B, lab, best);
}

GK_CLONES void assign_block(const float* x, std::int64_t n, int d, int k, const float* cen,
                            std::int64_t i0, int B, int* lab, float* best) {
  assign_block_impl<float>(x, n, d, k, cen, i0, B, lab, best);
}

// Thread t's contiguous share of n points.
inline void thread_range(std::int64_t n, int nt, int t, std::int64_t* lo, std::int64_t* hi) {
  *lo = n * t / nt;
  *hi = n * (t + 1) / nt;
}

}  // namespace

template <typename T>
LloydResult cpu_lloyd(const T* x, std::int64_t n, int d, int k, const double* centers0,
                      int max_iter, int threads, IterationObserver* observer) {
  const double t_start = wall_seconds();
  const int nt = threads_for(threads, n / 64);
  const int B = block_size<T>(d);
  const std::size_t kd = static_cast<std::size_t>(k) * d;

  LloydResult res;
  res.cluster.assign(n, -1);                   // 0-based while iterating
  res.centers.assign(centers0, centers0 + kd); // column-major, double
  res.size.assign(k, 0);
  res.withinss.assign(k, 0.0);

  std::vector<T> cen_rm(kd);                   // row-major, in T, for distances
  std::vector<double> part_sum(kd * nt);       // per-thread partial sums
  std::vector<std::int64_t> part_count(static_cast<std::size_t>(k) * nt);
  std::vector<std::int64_t> part_changed(nt);
  std::vector<double> part_dist(nt);
  int* cl = res.cluster.data();

  int iter = 0;
  bool updated = true;
  for (iter = 0; iter < max_iter; ++iter) {
    for (int j = 0; j < k; ++j)
      for (int c = 0; c < d; ++c)
        cen_rm[static_cast<std::size_t>(j) * d + c] = static_cast<T>(res.centers[j + static_cast<std::size_t>(k) * c]);

    // Assignment, fused with the accumulation of the next centers' sums.
#pragma omp parallel num_threads(nt)
    {
      const int t = thread_id();
      std::int64_t lo, hi;
      thread_range(n, nt, t, &lo, &hi);
      double* sum = part_sum.data() + kd * t;
      std::int64_t* cnt = part_count.data() + static_cast<std::size_t>(k) * t;
      std::fill(sum, sum + kd, 0.0);
      std::fill(cnt, cnt + k, 0);
      std::int64_t changed = 0;
      double dist = 0.0;
      int lab[kMaxBlock];
      T best[kMaxBlock];
      for (std::int64_t i0 = lo; i0 < hi; i0 += B) {
        const int nb = static_cast<int>(std::min<std::int64_t>(B, hi - i0));
        assign_block(x, n, d, k, cen_rm.data(), i0, nb, lab, best);
        for (int p = 0; p < nb; ++p) {
          if (cl[i0 + p] != lab[p]) {
            cl[i0 + p] = lab[p];
            ++changed;
          }
          ++cnt[lab[p]];
        }
        for (int p = 0; p < nb; ++p) dist += static_cast<double>(best[p]);
        // Sums in point order within each thread (stats' order with 1 thread).
        for (int p = 0; p < nb; ++p) {
          double* s = sum + static_cast<std::size_t>(lab[p]) * d;
          const T* xp = x + i0 + p;
          for (int c = 0; c < d; ++c) s[c] += static_cast<double>(xp[static_cast<std::int64_t>(c) * n]);
        }
      }
      part_changed[t] = changed;
      part_dist[t] = dist;
    }
    std::int64_t changed = 0;
    double tot = 0.0;
    for (int t = 0; t < nt; ++t) {
      changed += part_changed[t];
      tot += part_dist[t];
    }
    updated = changed > 0;
    if (observer && !observer->iteration(iter + 1, changed, tot)) {
      res.interrupted = true;
      return res;
    }
    if (!updated) break;

    // Update: combine the per-thread sums in thread order, then divide
    // (0/0 = NaN for an empty cluster, as in stats).
    for (int j = 0; j < k; ++j) {
      std::int64_t count = 0;
      for (int t = 0; t < nt; ++t) count += part_count[static_cast<std::size_t>(k) * t + j];
      res.size[j] = static_cast<int>(count);
      for (int c = 0; c < d; ++c) {
        double s = 0.0;
        for (int t = 0; t < nt; ++t) s += part_sum[kd * t + static_cast<std::size_t>(j) * d + c];
        res.centers[j + static_cast<std::size_t>(k) * c] = s / static_cast<double>(count);
      }
    }
  }
  res.iter = iter + 1;
  res.converged = !updated;

  // Within-cluster sums of squares with the final centers and labels,
  // point by point and coordinate by coordinate as stats adds them.
  std::vector<double> part_wss(static_cast<std::size_t>(k) * nt, 0.0);
#pragma omp parallel num_threads(nt)
  {
    const int t = thread_id();
    std::int64_t lo, hi;
    thread_range(n, nt, t, &lo, &hi);
    double* w = part_wss.data() + static_cast<std::size_t>(k) * t;
    for (std::int64_t i = lo; i < hi; ++i) {
      const int j = cl[i];
      for (int c = 0; c < d; ++c) {
        double tmp = static_cast<double>(x[i + static_cast<std::int64_t>(c) * n]) -
                     res.centers[j + static_cast<std::size_t>(k) * c];
        w[j] += tmp * tmp;
      }
    }
  }
  for (int j = 0; j < k; ++j) {
    double w = 0.0;
    for (int t = 0; t < nt; ++t) w += part_wss[static_cast<std::size_t>(k) * t + j];
    res.withinss[j] = w;
  }
  for (std::int64_t i = 0; i < n; ++i) cl[i] += 1;
  res.seconds = wall_seconds() - t_start;
  return res;
}

template LloydResult cpu_lloyd<double>(const double*, std::int64_t, int, int, const double*, int, int,
                                       IterationObserver*);
template LloydResult cpu_lloyd<float>(const float*, std::int64_t, int, int, const double*, int, int,
                                      IterationObserver*);

void cpu_assign(const double* x, std::int64_t n, int d, int k, const double* centers, int threads,
                int* cluster) {
  const int nt = resolve_threads(threads);
  const int B = block_size<double>(d);
  std::vector<double> cen_rm(static_cast<std::size_t>(k) * d);
  for (int j = 0; j < k; ++j)
    for (int c = 0; c < d; ++c) cen_rm[static_cast<std::size_t>(j) * d + c] = centers[j + static_cast<std::size_t>(k) * c];
  const std::int64_t nblocks = (n + B - 1) / B;
#pragma omp parallel for num_threads(nt) schedule(static)
  for (std::int64_t b = 0; b < nblocks; ++b) {
    int lab[kMaxBlock];
    double best[kMaxBlock];
    const std::int64_t i0 = b * B;
    const int nb = static_cast<int>(std::min<std::int64_t>(B, n - i0));
    assign_block(x, n, d, k, cen_rm.data(), i0, nb, lab, best);
    for (int p = 0; p < nb; ++p) cluster[i0 + p] = lab[p] + 1;
  }
}

double cpu_totss(const double* x, std::int64_t n, int d, int threads) {
  const int nt = threads_for(threads, d);
  std::vector<long double> per_col(d, 0.0L);
  // One column per task; within a column R's order (colMeans, then sum of
  // squared deviations accumulated in long double).
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
  for (int c = 0; c < d; ++c) {
    const double* col = x + static_cast<std::int64_t>(c) * n;
    long double s = 0.0L;
    for (std::int64_t i = 0; i < n; ++i) s += col[i];
    const double mean = static_cast<double>(s / n);
    long double ss = 0.0L;
    for (std::int64_t i = 0; i < n; ++i) {
      double t = col[i] - mean;
      ss += t * t;
    }
    per_col[c] = ss;
  }
  long double total = 0.0L;
  for (int c = 0; c < d; ++c) total += per_col[c];
  return static_cast<double>(total);
}

}  // namespace gk
