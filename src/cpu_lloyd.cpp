// cpu_lloyd.cpp: Lloyd's algorithm on the CPU, OpenMP over points; the
// assignment (predict), totss and the exact step of the CPU engine.
//
// The assignment works on blocks of consecutive points: R stores x column by
// column, so a block's values of one coordinate are contiguous and the
// distance loop runs SIMD across points while each point still sums its
// coordinates in order, exactly as stats does.  No n x k matrix is formed.
#include "cpu_engine.h"

#include "wall_clock.h"

#include <algorithm>
#include <cmath>
#include <cstring>
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

// Centers (k x d, column-major, double) as a row-major T matrix for
// assign_block().
template <typename T>
void centers_row_major(const double* centers, int k, int d, T* out) {
  for (int j = 0; j < k; ++j)
    for (int c = 0; c < d; ++c)
      out[static_cast<std::size_t>(j) * d + c] = static_cast<T>(centers[j + static_cast<std::size_t>(k) * c]);
}

// Assigns points [lo, hi) block by block: labels (0-based) updated, points
// per cluster added to cnt; visit(i0, nb, lab, best) sees each block's new
// labels and distances.  Returns the points whose label changed.
template <typename T, typename Visit>
std::int64_t assign_range(const T* x, std::int64_t n, int d, int k, const T* cen_rm, std::int64_t lo,
                          std::int64_t hi, int B, int* labels, std::int64_t* cnt, Visit visit) {
  std::int64_t changed = 0;
  int lab[kMaxBlock];
  T best[kMaxBlock];
  for (std::int64_t i0 = lo; i0 < hi; i0 += B) {
    const int nb = static_cast<int>(std::min<std::int64_t>(B, hi - i0));
    assign_block(x, n, d, k, cen_rm, i0, nb, lab, best);
    for (int p = 0; p < nb; ++p) {
      if (labels[i0 + p] != lab[p]) {
        labels[i0 + p] = lab[p];
        ++changed;
      }
      ++cnt[lab[p]];
    }
    visit(i0, nb, lab, best);
  }
  return changed;
}

// The state of one Lloyd fit: centers, labels and the per-thread partial
// results of the current iteration (combined in thread order).
template <typename T>
struct LloydState {
  const T* x;
  std::int64_t n;
  int d, k, nt, B;
  std::size_t kd;
  LloydFit res;
  std::vector<T> cen_rm;                 // row-major, in T, for distances
  std::vector<double> part_sum;          // per-thread partial sums
  std::vector<std::int64_t> part_count;  // per-thread counts
  std::vector<std::int64_t> part_changed;
  std::vector<double> part_dist;

  LloydState(const T* x_, std::int64_t n_, int d_, int k_, const double* centers0, int threads)
      : x(x_), n(n_), d(d_), k(k_), nt(threads_for(threads, n_ / 64)), B(block_size<T>(d_)),
        kd(static_cast<std::size_t>(k_) * d_), cen_rm(kd), part_sum(kd * nt),
        part_count(static_cast<std::size_t>(k_) * nt), part_changed(nt), part_dist(nt) {
    res.cluster.assign(n, -1);  // 0-based while iterating
    res.centers.assign(centers0, centers0 + kd);
    res.size.assign(k, 0);
    res.withinss.assign(k, 0.0);
  }

  void load_centers() { centers_row_major(res.centers.data(), k, d, cen_rm.data()); }

  // Assignment, fused with the accumulation of the next centers' sums; returns
  // the points that changed cluster, *tot the tot.withinss of the assignment.
  std::int64_t assign_and_sum(double* tot) {
    int* cl = res.cluster.data();
#pragma omp parallel num_threads(nt)
    {
      const int t = thread_id();
      std::int64_t lo, hi;
      thread_range(n, nt, t, &lo, &hi);
      double* sum = part_sum.data() + kd * t;
      std::int64_t* cnt = part_count.data() + static_cast<std::size_t>(k) * t;
      std::fill(sum, sum + kd, 0.0);
      std::fill(cnt, cnt + k, 0);
      double dist = 0.0;
      part_changed[t] = assign_range(x, n, d, k, cen_rm.data(), lo, hi, B, cl, cnt,
                                     [&](std::int64_t i0, int nb, const int* lab, const T* best) {
        for (int p = 0; p < nb; ++p) dist += static_cast<double>(best[p]);
        // Sums in point order within each thread (stats' order with 1 thread).
        for (int p = 0; p < nb; ++p) {
          double* s = sum + static_cast<std::size_t>(lab[p]) * d;
          const T* xp = x + i0 + p;
          for (int c = 0; c < d; ++c) s[c] += static_cast<double>(xp[static_cast<std::int64_t>(c) * n]);
        }
      });
      part_dist[t] = dist;
    }
    std::int64_t changed = 0;
    *tot = 0.0;
    for (int t = 0; t < nt; ++t) {
      changed += part_changed[t];
      *tot += part_dist[t];
    }
    return changed;
  }

  // Combine the per-thread sums in thread order, then divide (0/0 = NaN for
  // an empty cluster, as in stats).
  void update_centers() {
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

  // Within-cluster sums of squares with the final centers and labels, point
  // by point and coordinate by coordinate as stats adds them.
  void final_withinss() {
    const int* cl = res.cluster.data();
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
  }
};

}  // namespace

template <typename T>
LloydFit cpu_lloyd(const T* x, std::int64_t n, int d, int k, const double* centers0, int max_iter, int threads,
                   IterationObserver* observer) {
  const double t_start = wall_seconds();
  LloydState<T> S(x, n, d, k, centers0, threads);
  int iter = 0;
  bool updated = true;
  for (iter = 0; iter < max_iter; ++iter) {
    S.load_centers();
    double tot = 0.0;
    const std::int64_t changed = S.assign_and_sum(&tot);
    updated = changed > 0;
    if (observer && !observer->iteration(iter + 1, changed, tot)) throw Interrupted();
    if (!updated) break;
    S.update_centers();
  }
  S.res.iter = updated ? max_iter + 1 : iter + 1;
  S.final_withinss();
  for (int& c : S.res.cluster) c += 1;
  S.res.seconds_compute = wall_seconds() - t_start;
  return std::move(S.res);
}

template LloydFit cpu_lloyd<double>(const double*, std::int64_t, int, int, const double*, int, int,
                                    IterationObserver*);
template LloydFit cpu_lloyd<float>(const float*, std::int64_t, int, int, const double*, int, int,
                                   IterationObserver*);

void cpu_assign(const double* x, std::int64_t n, int d, int k, const double* centers, int threads,
                int* cluster) {
  const int nt = resolve_threads(threads);
  const int B = block_size<double>(d);
  std::vector<double> cen_rm(static_cast<std::size_t>(k) * d);
  centers_row_major(centers, k, d, cen_rm.data());
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

template <typename T>
std::vector<double> cpu_column_maxabs(const T* x, std::int64_t n, int d, int threads) {
  std::vector<double> m(d, 0.0);
  const int nt = threads_for(threads, d);
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
  for (int c = 0; c < d; ++c) {
    const T* col = x + static_cast<std::int64_t>(c) * n;
    double v = 0.0;
    for (std::int64_t i = 0; i < n; ++i) v = std::max(v, std::fabs(static_cast<double>(col[i])));
    m[c] = v;
  }
  return m;
}

template <typename T>
StepSums cpu_step(const T* x, std::int64_t n, int d, int k, const double* centers, const std::vector<int>& scale,
                  int* labels, int threads) {
  const std::size_t kd = static_cast<std::size_t>(k) * d;
  const int nt = threads_for(threads, n / 64);
  const int B = block_size<T>(d);
  std::vector<T> cen_rm(kd);
  centers_row_major(centers, k, d, cen_rm.data());
  std::vector<double> pw(d);
  for (int c = 0; c < d; ++c) pw[c] = pow2(scale[c]);
  std::vector<Fixed128> part_sum(kd * nt, Fixed128{0, 0});
  std::vector<std::int64_t> part_count(static_cast<std::size_t>(k) * nt, 0), part_changed(nt, 0);
#pragma omp parallel num_threads(nt)
  {
    const int t = thread_id();
    std::int64_t lo, hi;
    thread_range(n, nt, t, &lo, &hi);
    Fixed128* sum = part_sum.data() + kd * t;
    std::int64_t* cnt = part_count.data() + static_cast<std::size_t>(k) * t;
    part_changed[t] = assign_range(x, n, d, k, cen_rm.data(), lo, hi, B, labels, cnt,
                                   [&](std::int64_t i0, int nb, const int* lab, const T*) {
      for (int p = 0; p < nb; ++p)
        for (int c = 0; c < d; ++c)
          add_fixed(sum[static_cast<std::size_t>(lab[p]) + static_cast<std::size_t>(k) * c],
                    round_fixed(static_cast<double>(x[i0 + p + static_cast<std::int64_t>(c) * n]), pw[c]));
    });
  }
  StepSums out;
  out.sum.assign(kd, Fixed128{0, 0});
  out.count.assign(k, 0);
  for (int t = 0; t < nt; ++t) {
    for (std::size_t e = 0; e < kd; ++e) add_fixed(out.sum[e], part_sum[kd * t + e]);
    for (int j = 0; j < k; ++j) out.count[j] += part_count[static_cast<std::size_t>(k) * t + j];
    out.changed += part_changed[t];
  }
  return out;
}

namespace {

// (x_i - c)^2 summed in coordinate order: the within-SS term of point i.
template <typename T>
inline double wss_term(const T* x, std::int64_t n, int d, std::int64_t i, const double* centers, int k, int c) {
  double w = 0.0;
  for (int j = 0; j < d; ++j) {
    const double t = static_cast<double>(x[i + static_cast<std::int64_t>(j) * n]) -
                     centers[c + static_cast<std::size_t>(k) * j];
    w = w + t * t;
  }
  return w;
}

inline std::uint32_t upper_bits(double w) {
  std::uint64_t b;
  std::memcpy(&b, &w, 8);
  return static_cast<std::uint32_t>(b >> 32);
}

}  // namespace

template <typename T>
std::vector<std::uint32_t> cpu_withinss_maxterm(const T* x, std::int64_t n, int d, int k, const double* centers,
                                                const int* labels, int threads) {
  const int nt = threads_for(threads, n / 64);
  std::vector<std::uint32_t> part(static_cast<std::size_t>(k) * nt, 0);
#pragma omp parallel num_threads(nt)
  {
    const int t = thread_id();
    std::int64_t lo, hi;
    thread_range(n, nt, t, &lo, &hi);
    std::uint32_t* m = part.data() + static_cast<std::size_t>(k) * t;
    for (std::int64_t i = lo; i < hi; ++i) {
      const int c = labels[i];
      m[c] = std::max(m[c], upper_bits(wss_term(x, n, d, i, centers, k, c)));
    }
  }
  std::vector<std::uint32_t> out(k, 0);
  for (int t = 0; t < nt; ++t)
    for (int c = 0; c < k; ++c) out[c] = std::max(out[c], part[static_cast<std::size_t>(k) * t + c]);
  return out;
}

template <typename T>
std::vector<Fixed128> cpu_withinss_sums(const T* x, std::int64_t n, int d, int k, const double* centers,
                                        const int* labels, const std::vector<std::uint32_t>& maxterm,
                                        int threads) {
  const int nt = threads_for(threads, n / 64);
  std::vector<double> pw(k);
  for (int c = 0; c < k; ++c) pw[c] = pow2(wss_scale(maxterm[c]));
  std::vector<Fixed128> part(static_cast<std::size_t>(k) * nt, Fixed128{0, 0});
#pragma omp parallel num_threads(nt)
  {
    const int t = thread_id();
    std::int64_t lo, hi;
    thread_range(n, nt, t, &lo, &hi);
    Fixed128* s = part.data() + static_cast<std::size_t>(k) * t;
    for (std::int64_t i = lo; i < hi; ++i) {
      const int c = labels[i];
      add_fixed(s[c], round_fixed(wss_term(x, n, d, i, centers, k, c), pw[c]));
    }
  }
  std::vector<Fixed128> out(k, Fixed128{0, 0});
  for (int t = 0; t < nt; ++t)
    for (int c = 0; c < k; ++c) add_fixed(out[c], part[static_cast<std::size_t>(k) * t + c]);
  return out;
}

#define GK_INSTANTIATE(T)                                                                                       \
  template std::vector<double> cpu_column_maxabs<T>(const T*, std::int64_t, int, int);                           \
  template StepSums cpu_step<T>(const T*, std::int64_t, int, int, const double*, const std::vector<int>&, int*, \
                                int);                                                                           \
  template std::vector<std::uint32_t> cpu_withinss_maxterm<T>(const T*, std::int64_t, int, int, const double*,  \
                                                              const int*, int);                                 \
  template std::vector<Fixed128> cpu_withinss_sums<T>(const T*, std::int64_t, int, int, const double*,          \
                                                      const int*, const std::vector<std::uint32_t>&, int);
GK_INSTANTIATE(double)
GK_INSTANTIATE(float)
#undef GK_INSTANTIATE

}  // namespace gk
