// cpu_lloyd.cpp: Lloyd's algorithm on the CPU, OpenMP over points; the
// assignment (predict), totss and the exact step of the CPU engine.
//
// The assignment works on blocks of consecutive points: R stores x column by
// column, so a block's values of one coordinate are contiguous and the
// distance loop runs SIMD across points while each point still sums its
// coordinates in order, exactly as stats does.  No n x k matrix is formed.
//
// Lloyd's loop runs three kinds of iteration (src/cpu_bounds.h): plain (P:
// every distance, no bounds), full (F: every distance, the bounds set) and
// bounded (B: only the distances the bounds do not rule out); at d <= 3 a
// fourth instead, on the points ordered in space (S: each block's distances
// to the centers its box can need, src/cpu_spatial.h).  All give the
// labels of plain Lloyd.  The cluster sums are always those of a full pass
// in point order per thread, threads combined in order: a bounded iteration
// sums again only the clusters whose members changed in a thread's range
// (the others' sums are the same additions in the same order), or, while
// most clusters change members, all of them fused with the assignment.

// The distances must be rounded term by term, never fused.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include "column_sum.h"
#include "cpu_engine.h"

#include "cpu_block.h"
#include "cpu_bounds.h"
#include "cpu_screen.h"
#include "cpu_spatial.h"
#include "cpu_weights.h"
#include "pass_poll.h"

#include "wall_clock.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <new>

namespace gk {

namespace {

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
    block_sq_distances(x, n, d, cen + static_cast<std::int64_t>(j) * d, i0, B, dd);
    // Strict '<': ties keep the lower index; NaN (empty) centers never win.
#pragma omp simd
    for (int p = 0; p < B; ++p) {
      bool better = dd[p] < best[p];
      best[p] = better ? dd[p] : best[p];
      lab[p] = better ? j : lab[p];
    }
  }
}

// The same through the screen (cpu_screen.h): a certified point gets the
// exact distance to its one candidate, every other point all k exact
// distances (the rule above, one point at a time: the same operations in
// the same order, so the same bits).  Returns the distances computed.
template <typename T>
inline __attribute__((always_inline)) std::int64_t assign_block_screened_impl(
    const T* __restrict x, std::int64_t n, int d, int k, const T* __restrict cen, std::int64_t i0, int B,
    int* __restrict lab, T* __restrict best, const CenterScreen<T>& screen) {
  const T inf = std::numeric_limits<T>::infinity();
  int cand[kMaxBlock];
  unsigned char ok[kMaxBlock];
  const int m = B - B % kScreenTile;
  if (m > 0) screen.screen(x, n, i0, m, cand, ok);
  for (int p = m; p < B; ++p) {
    cand[p] = 0;
    ok[p] = 0;
  }
  T dd[kMaxBlock];
  block_sq_distances_own(x, n, d, cen, cand, i0, B, dd);
  T row[kMaxBlock];  // the point's coordinates when d <= kMaxBlock
  std::int64_t evals = B;
  for (int p = 0; p < B; ++p) {
    if (ok[p] && dd[p] < inf) {
      lab[p] = cand[p];
      best[p] = dd[p];
      continue;
    }
    evals += k;
    const bool gathered = d <= kMaxBlock;
    if (gathered)
      for (int c = 0; c < d; ++c) row[c] = x[i0 + p + static_cast<std::int64_t>(c) * n];
    T bp = inf;
    int lp = 0;
    for (int j = 0; j < k; ++j) {
      const T* cj = cen + static_cast<std::int64_t>(j) * d;
      T sq;
      if (gathered) {
        T t = row[0] - cj[0];
        sq = t * t;
        for (int c = 1; c < d; ++c) {
          t = row[c] - cj[c];
          sq += t * t;
        }
      } else {
        T t = x[i0 + p] - cj[0];
        sq = t * t;
        for (int c = 1; c < d; ++c) {
          t = x[i0 + p + static_cast<std::int64_t>(c) * n] - cj[c];
          sq += t * t;
        }
      }
      if (sq < bp) {
        bp = sq;
        lp = j;
      }
    }
    lab[p] = lp;
    best[p] = bp;
  }
  return evals;
}

// Non-template entry points so that the compiler can build an AVX2 clone
// next to the baseline one (GK_CLONES, cpu_engine.h).  screen: used when
// non-null and active.  Returns the distances computed.
GK_CLONES std::int64_t assign_block(const double* x, std::int64_t n, int d, int k, const double* cen,
                                    std::int64_t i0, int B, int* lab, double* best,
                                    const CenterScreen<double>* screen) {
  if (screen && screen->active())
    return assign_block_screened_impl<double>(x, n, d, k, cen, i0, B, lab, best, *screen);
  assign_block_impl<double>(x, n, d, k, cen, i0, B, lab, best);
  return static_cast<std::int64_t>(B) * k;
}

GK_CLONES std::int64_t assign_block(const float* x, std::int64_t n, int d, int k, const float* cen,
                                    std::int64_t i0, int B, int* lab, float* best,
                                    const CenterScreen<float>* screen) {
  if (screen && screen->active())
    return assign_block_screened_impl<float>(x, n, d, k, cen, i0, B, lab, best, *screen);
  assign_block_impl<float>(x, n, d, k, cen, i0, B, lab, best);
  return static_cast<std::int64_t>(B) * k;
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
// labels and distances.  Returns the points whose label changed.  Stops
// early when poll (may be null) says so.  screen (may be null): the
// certified screen of these centers (cpu_screen.h); evals (may be null):
// the distances computed are added to it.
template <typename T, typename Visit>
std::int64_t assign_range(const T* x, std::int64_t n, int d, int k, const T* cen_rm, std::int64_t lo,
                          std::int64_t hi, int B, int* labels, std::int64_t* cnt, PassPoll* poll,
                          const CenterScreen<T>* screen, std::int64_t* evals, Visit visit) {
  std::int64_t changed = 0, ev = 0;
  int lab[kMaxBlock];
  T best[kMaxBlock];
  for (std::int64_t i0 = lo; i0 < hi; i0 += B) {
    if (poll && poll->stop()) break;
    const int nb = static_cast<int>(std::min<std::int64_t>(B, hi - i0));
    ev += assign_block(x, n, d, k, cen_rm, i0, nb, lab, best, screen);
    for (int p = 0; p < nb; ++p) {
      if (labels[i0 + p] != lab[p]) {
        labels[i0 + p] = lab[p];
        ++changed;
      }
      ++cnt[lab[p]];
    }
    visit(i0, nb, lab, best);
  }
  if (evals) *evals += ev;
  return changed;
}

// best[] of assign_block() for a point whose label is known: its squared
// distance to center c (d values), the point's coordinates `stride` apart,
// added in coordinate order in T; Inf when it is not below Inf (the label
// is then 0, whatever its distance).
template <typename T>
inline T label_distance(const T* xp, std::int64_t stride, const T* c, int d) {
  T tt = xp[0] - c[0];
  T sq = tt * tt;
  for (int cc = 1; cc < d; ++cc) {
    tt = xp[cc * stride] - c[cc];
    sq += tt * tt;
  }
  return sq < std::numeric_limits<T>::infinity() ? sq : std::numeric_limits<T>::infinity();
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
  const bool use_screen;                 // screen_wanted(): the plain passes screen
  CenterScreen<T> screen;                // of cen_rm, when use_screen
  std::vector<double> part_sum;          // per-thread partial sums
  std::vector<std::int64_t> part_count;  // per-thread counts
  std::vector<std::int64_t> part_changed;
  std::vector<double> part_dist;
  std::vector<std::int64_t> part_evals;    // bounded: distances computed per thread
  std::vector<unsigned char> part_dirty;   // bounded: per thread, clusters to sum again
  std::size_t rows_cap;                    // bounded: per thread, room for rows gathered by sum_range()
  std::vector<T> part_rows;
  const CenterMap* map = nullptr;          // applied after every update (spherical k-means)
  // Observation weights (or nullptr): the centers and withinss are then
  // those of wsum (cpu_weights.h), the tot.withinss of the trace weighted.
  const double* w;
  std::unique_ptr<WeightedSums<T>> wsum;

  LloydState(const T* x_, std::int64_t n_, int d_, int k_, const double* centers0, int threads,
             const double* w_, Labels into)
      : x(x_), n(n_), d(d_), k(k_), nt(threads_for(threads, n_ / 64)), B(block_size<T>(d_)),
        kd(static_cast<std::size_t>(k_) * d_), cen_rm(kd), use_screen(screen_wanted(d_, k_)), part_sum(kd * nt),
        part_count(static_cast<std::size_t>(k_) * nt), part_changed(nt), part_dist(nt), part_evals(nt),
        rows_cap(std::max<std::size_t>(2048, static_cast<std::size_t>(d_))), part_rows(rows_cap * nt), w(w_) {
    if (w) wsum.reset(new WeightedSums<T>(x, n, d, k, w, nt));
    res.cluster = std::move(into);
    res.cluster.assign(n, -1);  // 0-based while iterating
    res.centers.assign(centers0, centers0 + kd);
    res.size.assign(k, 0);
    res.withinss.assign(k, 0.0);
  }

  // The centers of the next iteration; prepare_screen: it will be plain.
  void load_centers(bool prepare_screen) {
    centers_row_major(res.centers.data(), k, d, cen_rm.data());
    if (use_screen && prepare_screen) screen.prepare(cen_rm.data(), k, d);
  }

  // Assignment, fused with the accumulation of the next centers' sums; returns
  // the points that changed cluster, *tot the tot.withinss of the assignment.
  // *evals: the distances computed.
  std::int64_t assign_and_sum(double* tot, std::int64_t* evals, IterationObserver* observer) {
    int* cl = res.cluster.data();
    PassPoll poll(observer, nt);
    for_each_slot(nt, poll, [&](int t) {
      std::int64_t lo, hi;
      thread_range(n, nt, t, &lo, &hi);
      double* sum = part_sum.data() + kd * t;
      std::int64_t* cnt = part_count.data() + static_cast<std::size_t>(k) * t;
      std::fill(sum, sum + kd, 0.0);
      std::fill(cnt, cnt + k, 0);
      double dist = 0.0;
      part_evals[t] = 0;
      part_changed[t] = assign_range(x, n, d, k, cen_rm.data(), lo, hi, B, cl, cnt, &poll,
                                     use_screen ? &screen : nullptr, &part_evals[t], [&](std::int64_t i0, int nb, const int* lab, const T* best) {
        if (w) {  // weighted: the weighted tot.withinss; the sums are wsum's
          for (int p = 0; p < nb; ++p) dist += w[i0 + p] * static_cast<double>(best[p]);
          return;
        }
        for (int p = 0; p < nb; ++p) dist += static_cast<double>(best[p]);
        // Sums in point order within each thread (stats' order with 1 thread).
        for (int p = 0; p < nb; ++p) {
          double* s = sum + static_cast<std::size_t>(lab[p]) * d;
          const T* xp = x + i0 + p;
          for (int c = 0; c < d; ++c) s[c] += static_cast<double>(xp[static_cast<std::int64_t>(c) * n]);
        }
      });
      part_dist[t] = dist;
    });
    poll.finish();
    std::int64_t changed = 0;
    *tot = 0.0;
    *evals = 0;
    for (int t = 0; t < nt; ++t) {
      changed += part_changed[t];
      *tot += part_dist[t];
      *evals += part_evals[t];
    }
    return changed;
  }

  // Adds the points of [b0, b1) of the clusters marked in `dirty` (every
  // point when all) to the thread's sums, in point order (the additions of
  // assign_and_sum()); with want_tot, adds every point's distance to its
  // center to *dist in point order, as assign_and_sum() adds best[].
  void sum_range(std::int64_t b0, std::int64_t b1, bool all, const unsigned char* dirty, bool want_tot,
                 double* sum, double* dist) {
    if (w && !want_tot) return;  // weighted: the sums are wsum's
    const int* cl = res.cluster.data();
    constexpr int kSB = 256;
    T* xbuf = part_rows.data() + rows_cap * thread_id();  // scratch of this thread (team <= nt)
    const int sb = static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>(kSB, rows_cap / d)));
    int idx[kSB];
    for (std::int64_t i0 = b0; i0 < b1; i0 += sb) {
      const int nb = static_cast<int>(std::min<std::int64_t>(sb, b1 - i0));
      int m = 0;
      for (int p = 0; p < nb; ++p) {
        idx[m] = p;
        m += all || want_tot || dirty[cl[i0 + p]];
      }
      if (m == 0) continue;
      // the rows needed, gathered column by column
      for (int c = 0; c < d; ++c) {
        const T* col = x + static_cast<std::int64_t>(c) * n + i0;
        for (int q = 0; q < m; ++q) xbuf[static_cast<std::size_t>(q) * d + c] = col[idx[q]];
      }
      for (int q = 0; q < m; ++q) {
        const int j = cl[i0 + idx[q]];
        const T* xp = xbuf + static_cast<std::size_t>(q) * d;
        if (want_tot) {
          const double sq = static_cast<double>(label_distance(xp, 1, cen_rm.data() + static_cast<std::size_t>(j) * d, d));
          *dist += w ? w[i0 + idx[q]] * sq : sq;
        }
        if (all || dirty[j]) {
          double* sj = sum + static_cast<std::size_t>(j) * d;
          for (int c = 0; c < d; ++c) sj[c] += static_cast<double>(xp[c]);
        }
      }
    }
  }

  // The sums of the clusters marked in `dirty` made again over the thread's
  // range [lo, hi), in point order (the others' sums kept: the same
  // additions in the same order); want_tot as sum_range()'s.
  void resum_dirty(std::int64_t lo, std::int64_t hi, const unsigned char* dirty, bool want_tot, double* sum,
                   double* dist) {
    bool any = false;
    for (int j = 0; j < k; ++j)
      if (dirty[j]) {
        any = true;
        std::fill(sum + static_cast<std::size_t>(j) * d, sum + static_cast<std::size_t>(j + 1) * d, 0.0);
      }
    if (any || want_tot) sum_range(lo, hi, false, dirty, want_tot, sum, dist);
  }

  // The assignment with bounds (full: every distance, bounds set anew) and
  // the cluster sums, as assign_and_sum() would give them: fused (every
  // cluster summed again, chunk by chunk while the chunk's rows are in
  // cache) or, after the pass, only the clusters whose members changed in
  // each thread's range (the others' sums are the same additions in the
  // same order).  With want_tot, *tot is the tot.withinss of the assignment
  // exactly as assign_and_sum() adds it; otherwise NaN.  *dirty_share: the
  // share of (thread, cluster) sums that changed members.
  std::int64_t bounded_and_sum(bounds::Bounds<T>& bd, bool full, bool fused, bool want_tot, double* tot,
                               std::int64_t* evals, double* dirty_share, IterationObserver* observer) {
    int* cl = res.cluster.data();
    part_dirty.assign(static_cast<std::size_t>(k) * nt, 0);
    // chunks of ~256 KiB of rows (256 to 8192 points)
    const std::int64_t rows = 262144 / (static_cast<std::int64_t>(d) * static_cast<std::int64_t>(sizeof(T)));
    const std::int64_t chunk = std::max<std::int64_t>(256, std::min<std::int64_t>(8192, rows / 256 * 256));
    PassPoll poll(observer, nt);
    for_each_slot(nt, poll, [&](int t) {
      std::int64_t lo, hi;
      thread_range(n, nt, t, &lo, &hi);
      double* sum = part_sum.data() + kd * t;
      std::int64_t* cnt = part_count.data() + static_cast<std::size_t>(k) * t;
      unsigned char* dirty = part_dirty.data() + static_cast<std::size_t>(k) * t;
      std::int64_t ev = 0, ch = 0;
      double dist = 0.0;
      if (full) {
        std::fill(cnt, cnt + k, 0);
        std::fill(dirty, dirty + k, 1);
      }
      if (fused) {
        std::fill(sum, sum + kd, 0.0);
        for (std::int64_t c0 = lo; c0 < hi && !poll.stop(); c0 += chunk) {
          const std::int64_t c1 = std::min(hi, c0 + chunk);
          ch += full ? bd.full_pass(c0, c1, cl, cnt, &ev) : bd.bounded_pass(c0, c1, cl, cnt, dirty, &ev);
          sum_range(c0, c1, true, dirty, want_tot, sum, &dist);
        }
      } else {
        // the same pass chunk by chunk, so that it can be interrupted
        for (std::int64_t c0 = lo; c0 < hi && !poll.stop(); c0 += chunk) {
          const std::int64_t c1 = std::min(hi, c0 + chunk);
          ch += full ? bd.full_pass(c0, c1, cl, cnt, &ev) : bd.bounded_pass(c0, c1, cl, cnt, dirty, &ev);
        }
        resum_dirty(lo, hi, dirty, want_tot, sum, &dist);
      }
      part_changed[t] = ch;
      part_evals[t] = ev;
      part_dist[t] = dist;
    });
    poll.finish();
    std::int64_t changed = 0, ndirty = 0;
    *evals = 0;
    *tot = 0.0;
    for (int t = 0; t < nt; ++t) {
      changed += part_changed[t];
      *evals += part_evals[t];
      *tot += part_dist[t];
    }
    for (unsigned char v : part_dirty) ndirty += v;
    *dirty_share = static_cast<double>(ndirty) / static_cast<double>(part_dirty.size());
    if (!want_tot) *tot = std::numeric_limits<double>::quiet_NaN();
    return changed;
  }

  // The assignment on the points ordered in space (cpu_spatial.h) and the
  // cluster sums as assign_and_sum() would give them: each thread applies
  // the new labels of its range of rows (from the blocks where one
  // changed) to the labels and counts, then sums
  // again, in point order, only the clusters whose members changed (the
  // others' sums are the same additions in the same order).  *tot as
  // bounded_and_sum()'s.
  std::int64_t spatial_and_sum(SpatialOrder<T>& so, bool want_tot, double* tot, std::int64_t* evals,
                               IterationObserver* observer) {
    {
      PassPoll poll(observer, nt);
      *evals = so.assign(cen_rm.data(), k, nt, poll);
      poll.finish();
    }
    int* cl = res.cluster.data();
    part_dirty.assign(static_cast<std::size_t>(k) * nt, 0);
    PassPoll poll(observer, nt);
    for_each_slot(nt, poll, [&](int t) {
      std::int64_t lo, hi;
      thread_range(n, nt, t, &lo, &hi);
      double* sum = part_sum.data() + kd * t;
      std::int64_t* cnt = part_count.data() + static_cast<std::size_t>(k) * t;  // (0 before the first iteration)
      unsigned char* dirty = part_dirty.data() + static_cast<std::size_t>(k) * t;
      std::int64_t ch = 0;
      so.each_changed(lo, hi, [&](std::int64_t row, int to) {
        const int from = cl[row];
        if (to == from) return;
        cl[row] = to;
        ++cnt[to];
        dirty[to] = 1;
        if (from >= 0) {
          --cnt[from];
          dirty[from] = 1;
        }
        ++ch;
      });
      double dist = 0.0;
      resum_dirty(lo, hi, dirty, want_tot, sum, &dist);
      part_changed[t] = ch;
      part_evals[t] = 0;
      part_dist[t] = dist;
    });
    poll.finish();
    std::int64_t changed = 0;
    *tot = 0.0;
    for (int t = 0; t < nt; ++t) {
      changed += part_changed[t];
      *tot += part_dist[t];
    }
    if (!want_tot) *tot = std::numeric_limits<double>::quiet_NaN();
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
    if (wsum) wsum->centers(res.cluster.data(), res.centers.data());
    if (map && *map) (*map)(res.centers.data(), k);
  }

  // Within-cluster sums of squares with the final centers and labels, point
  // by point and coordinate by coordinate as stats adds them.
  void final_withinss() {
    if (wsum) {
      res.withinss = wsum->withinss(res.cluster.data(), res.centers.data());
      return;
    }
    const int* cl = res.cluster.data();
    std::vector<double> part_wss(static_cast<std::size_t>(k) * nt, 0.0);
    for_each_slot(nt, [&](int t) {
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
    });
    for (int j = 0; j < k; ++j) {
      double w = 0.0;
      for (int t = 0; t < nt; ++t) w += part_wss[static_cast<std::size_t>(k) * t + j];
      res.withinss[j] = w;
    }
  }
};

}  // namespace

namespace {

// The appended per-iteration line of GPUKMEANS_CPU_BOUNDS_LOG (cpu_bounds.h).
void log_iteration(std::FILE* f, int iter, char kind, std::int64_t changed, std::int64_t evals, std::int64_t n,
                   int k, double seconds) {
  if (f)
    std::fprintf(f, "%d %c %lld %lld %lld %d %.6f\n", iter, kind, static_cast<long long>(changed),
                 static_cast<long long>(evals), static_cast<long long>(n), k, seconds);
}

// The kinds of Lloyd's iterations: P (plain), F (full, bounds set) and B
// (bounded), chosen by the plan (only P without bounds).  Adaptive plans
// watch each bounded iteration: one that computed more than kMaxShare of
// the n k distances or took longer than kMaxTime times the last full or
// plain one is followed by a full one (bounds set anew) or, when the bounds
// were fresh already, by `backoff` plain iterations (2, 4, ... 64: data
// whose points keep moving) and then a full one.  (The kinds only change
// the time taken, never the result.)  From the initial centers most points
// move: the first iteration is plain, the bounds are set by the second
// (forced plans: by the first).
class IterationKinds {
 public:
  IterationKinds(const bounds::Plan& plan, bool use_bounds)
      : plan_(plan), use_bounds_(use_bounds), next_(use_bounds && !plan.adaptive ? 'F' : 'P') {}
  // The kind of iteration `iter` (0-based).
  char kind(int iter) const { return use_bounds_ && plan_.cycle ? "FBBPP"[iter % 5] : next_; }
  // After an iteration of that kind that computed `evals` of the nk
  // distances in `seconds` and updated the centers.
  void after(char kind, std::int64_t evals, double nk, double seconds) {
    constexpr double kMaxShare = 0.5, kMaxTime = 0.8;
    if (!use_bounds_) return;
    if (kind != 'B') t_full_ = seconds;
    if (kind == 'P') {
      next_ = --plain_left_ > 0 ? 'P' : 'F';
    } else if (plan_.adaptive && kind == 'B' &&
               (static_cast<double>(evals) > kMaxShare * nk || seconds > kMaxTime * t_full_)) {
      if (last_ == 'F') {
        // fresh bounds did not pay: plain iterations, more each time
        next_ = 'P';
        plain_left_ = backoff_;
        backoff_ = std::min(64, 2 * backoff_);
      } else {
        next_ = 'F';  // bounds worn out by many movements: set them anew
      }
    } else {
      next_ = 'B';
    }
    last_ = kind;
  }

 private:
  const bounds::Plan& plan_;
  bool use_bounds_;
  char next_;
  int plain_left_ = 1, backoff_ = 2;
  char last_ = 'P';
  double t_full_ = 0.0;
};

// The distance bounds of a plan, or nullptr (a plain plan, or no memory for
// them: plain Lloyd).  x: nullptr where it comes block by block.
template <typename T>
std::unique_ptr<bounds::Bounds<T>> make_bounds(const T* x, std::int64_t n, int d, int k, const bounds::Plan& plan,
                                               const double* centers0, int threads) {
  if (plan.variant == bounds::Variant::kPlain) return nullptr;
  try {
    return std::unique_ptr<bounds::Bounds<T>>(new bounds::Bounds<T>(x, n, d, k, plan, centers0, threads));
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}

// The points ordered in space for the fit (cpu_spatial.h), their layout
// from `cache` where it holds x's (else made for this fit alone), or
// nullptr (not wanted, a value that is not finite, or no memory for it).
template <typename T>
std::unique_ptr<SpatialOrder<T>> make_spatial(const LloydState<T>& S, int max_iter, SpatialCache<T>* cache) {
  if (!SpatialOrder<T>::wanted(S.n, S.d, S.k, max_iter, S.w != nullptr)) return nullptr;
  try {
    SpatialCache<T> own;  // (the fit's own, where no cache is given: the layout outlives it)
    std::shared_ptr<const SpatialLayout<T>> layout = (cache ? cache : &own)->get(S.x, S.n, S.d, S.nt);
    if (layout) return std::unique_ptr<SpatialOrder<T>>(new SpatialOrder<T>(std::move(layout)));
  } catch (const std::bad_alloc&) {
  }
  return nullptr;
}

// Lloyd's loop over the kinds of IterationKinds, or (S: points ordered in
// space, cpu_spatial.h) every iteration on the ordered points.  The sums
// are fused with the assignment while most clusters change members.
// Returns the iterations run; *updated: the last one changed a label.
template <typename T>
int lloyd_loop(LloydState<T>& S, const bounds::Plan& plan, const double* centers0, int max_iter,
               IterationObserver* observer, SpatialCache<T>* spatial, bool* updated) {
  constexpr double kFuseShare = 0.5;
  const std::unique_ptr<SpatialOrder<T>> so = make_spatial(S, max_iter, spatial);
  std::unique_ptr<bounds::Bounds<T>> bd = so ? nullptr : make_bounds(S.x, S.n, S.d, S.k, plan, centers0, S.nt);
  const bool use_bounds = bd != nullptr;
  std::FILE* logf = plan.log.empty() ? nullptr : std::fopen(plan.log.c_str(), "a");
  const bool want_tot = observer && observer->wants_iterations();
  const double nk = static_cast<double>(S.n) * S.k;
  IterationKinds kinds(plan, use_bounds);
  double dirty_share = 1.0;
  int iter = 0;
  *updated = true;
  try {
    for (iter = 0; iter < max_iter; ++iter) {
      const double t_iter = wall_seconds();
      char kind = so ? 'S' : kinds.kind(iter);
      S.load_centers(kind == 'P');
      if (kind == 'B' && !bd->begin_bounded(S.cen_rm.data(), S.res.size.data())) kind = 'F';
      if (kind == 'F') bd->begin_full(S.cen_rm.data());
      double tot = 0.0;
      std::int64_t evals = 0, changed = 0;
      if (kind == 'S') {
        changed = S.spatial_and_sum(*so, want_tot, &tot, &evals, observer);
      } else if (kind == 'P') {
        changed = S.assign_and_sum(&tot, &evals, observer);
      } else {
        const bool fused = kind == 'F' || dirty_share > kFuseShare;
        changed = S.bounded_and_sum(*bd, kind == 'F', fused, want_tot, &tot, &evals, &dirty_share, observer);
      }
      S.res.exact_fraction.push_back(static_cast<double>(evals) / nk);
      const double seconds = wall_seconds() - t_iter;
      if (logf) log_iteration(logf, iter + 1, kind, changed, evals, S.n, S.k, seconds);
      *updated = changed > 0;
      if (observer && !observer->iteration(iter + 1, changed, tot)) throw Interrupted();
      if (!*updated) break;
      S.update_centers();
      kinds.after(kind, evals, nk, seconds);
    }
  } catch (...) {
    if (logf) std::fclose(logf);
    throw;
  }
  if (logf) std::fclose(logf);
  return iter;
}

}  // namespace

template <typename T>
LloydFit cpu_lloyd(const T* x, std::int64_t n, int d, int k, const double* centers0, int max_iter, int threads,
                   IterationObserver* observer, const CenterMap& map, const double* weights, Labels into,
                   SpatialCache<T>* spatial) {
  const double t_start = wall_seconds();
  LloydState<T> S(x, n, d, k, centers0, threads, weights, std::move(into));
  S.map = &map;
  const bounds::Plan plan =
      bounds::choose_plan(n, d, k, static_cast<double>(std::numeric_limits<T>::epsilon()) / 2.0);
  bool updated = true;
  const int iter = lloyd_loop(S, plan, centers0, max_iter, observer, spatial, &updated);
  S.res.iter = updated ? max_iter + 1 : iter + 1;
  S.final_withinss();
  for (int& c : S.res.cluster) c += 1;
  S.res.seconds_compute = wall_seconds() - t_start;
  return std::move(S.res);
}

template LloydFit cpu_lloyd<double>(const double*, std::int64_t, int, int, const double*, int, int,
                                    IterationObserver*, const CenterMap&, const double*, Labels,
                                    SpatialCache<double>*);
template LloydFit cpu_lloyd<float>(const float*, std::int64_t, int, int, const double*, int, int,
                                   IterationObserver*, const CenterMap&, const double*, Labels,
                                   SpatialCache<float>*);

template <typename T>
LloydFit cpu_lloyd_blocks(const StoredBlocks<T>& blocks, const StoredRange<T>& range, std::int64_t n, int d, int k,
                          const double* centers0, int max_iter, int threads, IterationObserver* observer,
                          Labels into) {
  const double t_start = wall_seconds();
  // cpu_lloyd's slots: nt contiguous ranges of the rows, each adding its
  // points' coordinates (and distances) in point order; the slots' sums
  // are added in slot order.
  const int nt = threads_for(threads, n / 64), B = block_size<T>(d);
  const int pool = resolve_threads(threads);
  const std::size_t kd = static_cast<std::size_t>(k) * d;
  std::vector<std::int64_t> lo(nt + 1);
  for (int t = 0; t <= nt; ++t) lo[t] = n * t / nt;
  LloydFit res;
  res.cluster = std::move(into);
  res.cluster.assign(n, -1);  // 0-based while iterating
  res.centers.assign(centers0, centers0 + kd);
  res.size.assign(k, 0);
  res.withinss.assign(k, 0.0);
  std::vector<T> cen_rm(kd);
  CenterScreen<T> screen;
  const bool use_screen = screen_wanted(d, k);
  std::vector<double> slot_sum(kd * nt);  // slot t: column c, cluster j at [kd t + c k + j]
  std::vector<double> slot_dist(nt);
  std::vector<std::int64_t> count(k);
  std::vector<T> best_rows;  // the block's distances to the new labels (the trace's tot.withinss)
  const bool want_tot = observer && observer->wants_iterations();
  const double nk = static_cast<double>(n) * k;
  int* cl = res.cluster.data();
  // cpu_lloyd's distance bounds and kinds of iteration, the bounds moved to
  // each block's rows before its pass (no labels change with them)
  const bounds::Plan plan =
      bounds::choose_plan(n, d, k, static_cast<double>(std::numeric_limits<T>::epsilon()) / 2.0);
  std::unique_ptr<bounds::Bounds<T>> bd = make_bounds<T>(nullptr, n, d, k, plan, centers0, pool);
  IterationKinds kinds(plan, bd != nullptr);
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> logf(plan.log.empty() ? nullptr : std::fopen(plan.log.c_str(), "a"),
                                                       [](std::FILE* f) { return f ? std::fclose(f) : 0; });
  bool updated = true;
  int iter = 0;
  for (iter = 0; iter < max_iter; ++iter) {
    const double t_iter = wall_seconds();
    char kind = kinds.kind(iter);
    centers_row_major(res.centers.data(), k, d, cen_rm.data());
    if (use_screen && kind == 'P') screen.prepare(cen_rm.data(), k, d);
    if (kind == 'B' && !bd->begin_bounded(cen_rm.data(), res.size.data())) kind = 'F';
    if (kind == 'F') bd->begin_full(cen_rm.data());
    std::fill(slot_sum.begin(), slot_sum.end(), 0.0);
    std::fill(slot_dist.begin(), slot_dist.end(), 0.0);
    if (kind != 'B') std::fill(count.begin(), count.end(), 0);  // (bounded: the last counts, moved)
    std::int64_t changed = 0, evals = 0;
    blocks([&](std::int64_t first, std::int64_t rows, const T* xb) {
      if (observer && !observer->keep_going()) throw Interrupted();
      // the labels, a thread a range of rows (any split: each label is exact)
      const std::int64_t pieces = (rows + B - 1) / B;
      const int np = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(pool, pieces / 4)));
      std::vector<std::int64_t> cnt(static_cast<std::size_t>(k) * np, 0), ch(np, 0), ev(np, 0);
      std::vector<unsigned char> dirty(static_cast<std::size_t>(k) * np, 0);  // (unused: every sum is taken again)
      if (kind == 'P') best_rows.resize(static_cast<std::size_t>(rows));
      else bd->set_rows(xb, first, rows);
      for_each_slot(np, [&](int t) {
        std::int64_t* c = cnt.data() + static_cast<std::size_t>(k) * t;
        const std::int64_t a = pieces * t / np * B, e = std::min(rows, pieces * (t + 1) / np * B);  // (in the block)
        if (kind == 'P')
          ch[t] = assign_range(xb, rows, d, k, cen_rm.data(), a, e, B, cl + first, c, nullptr,
                               use_screen ? &screen : nullptr, &ev[t],
                               [&](std::int64_t i0, int nb, const int*, const T* best) {
                                 std::copy(best, best + nb, best_rows.begin() + i0);
                               });
        else if (kind == 'F')
          ch[t] = bd->full_pass(first + a, first + e, cl, c, &ev[t]);
        else
          ch[t] = bd->bounded_pass(first + a, first + e, cl, c, dirty.data() + static_cast<std::size_t>(k) * t, &ev[t]);
      });
      for (int t = 0; t < np; ++t) {
        changed += ch[t];
        evals += ev[t];
        for (int j = 0; j < k; ++j) count[j] += cnt[static_cast<std::size_t>(k) * t + j];
      }
      // the sums: each (slot, cluster, column) in point order, a thread a
      // range of columns
      const int nc = std::max(1, std::min(pool, d));
      for_each_slot(nc, [&](int t) {
        for (int s = 0; s < nt; ++s) {
          const std::int64_t a = std::max(first, lo[s]), e = std::min(first + rows, lo[s + 1]);
          if (a >= e) continue;
          for (int c = d * t / nc; c < d * (t + 1) / nc; ++c) {
            double* sum = slot_sum.data() + kd * s + static_cast<std::size_t>(c) * k;
            const T* col = xb + static_cast<std::int64_t>(c) * rows - first;
            for (std::int64_t i = a; i < e; ++i) sum[cl[i]] += static_cast<double>(col[i]);
          }
        }
      });
      // the trace's tot.withinss: per slot in point order, the distances of
      // the assignment (a bounded pass: computed again, label_distance(), as
      // cpu_lloyd's sum_range() computes them)
      if (want_tot)
        for (int s = 0; s < nt; ++s)
          for (std::int64_t i = std::max(first, lo[s]); i < std::min(first + rows, lo[s + 1]); ++i) {
            const T sq = kind == 'P' ? best_rows[i - first]
                                     : label_distance(xb + (i - first), rows,
                                                      cen_rm.data() + static_cast<std::size_t>(cl[i]) * d, d);
            slot_dist[s] += static_cast<double>(sq);
          }
    });
    res.exact_fraction.push_back(static_cast<double>(evals) / nk);
    double tot = std::numeric_limits<double>::quiet_NaN();
    if (want_tot) {
      tot = 0.0;
      for (int s = 0; s < nt; ++s) tot += slot_dist[s];
    }
    if (logf) log_iteration(logf.get(), iter + 1, kind, changed, evals, n, k, wall_seconds() - t_iter);
    updated = changed > 0;
    if (observer && !observer->iteration(iter + 1, changed, tot)) throw Interrupted();
    if (!updated) break;
    // cpu_lloyd's update_centers()
    for (int j = 0; j < k; ++j) {
      res.size[j] = static_cast<int>(count[j]);
      for (int c = 0; c < d; ++c) {
        double sm = 0.0;
        for (int s = 0; s < nt; ++s) sm += slot_sum[kd * s + static_cast<std::size_t>(c) * k + j];
        res.centers[j + static_cast<std::size_t>(k) * c] = sm / static_cast<double>(count[j]);
      }
    }
    kinds.after(kind, evals, nk, wall_seconds() - t_iter);
  }
  res.iter = updated ? max_iter + 1 : iter + 1;
  // cpu_lloyd's final_withinss(): per slot, point by point and coordinate
  // by coordinate (one chain per slot and cluster): every slot at once,
  // each reading its rows, where the rows may be read so; else block by
  // block, the slots that share a block at once
  std::vector<double> slot_wss(static_cast<std::size_t>(k) * nt, 0.0);
  const auto add_rows = [&](int s, std::int64_t first, std::int64_t rows, const T* xb, std::int64_t a,
                            std::int64_t e) {
    double* w = slot_wss.data() + static_cast<std::size_t>(k) * s;
    for (std::int64_t i = a; i < e; ++i) {
      const int j = cl[i];
      for (int c = 0; c < d; ++c) {
        double tmp = static_cast<double>(xb[i - first + static_cast<std::int64_t>(c) * rows]) -
                     res.centers[j + static_cast<std::size_t>(k) * c];
        w[j] += tmp * tmp;
      }
    }
  };
  if (range) {
    const std::int64_t piece = std::max<std::int64_t>(256, 262144 / d);
    std::vector<std::exception_ptr> err(nt);
#pragma omp parallel for num_threads(std::max(1, std::min(pool, nt))) schedule(dynamic, 1)
    for (int s = 0; s < nt; ++s) {
      try {
        std::vector<T> buf(static_cast<std::size_t>(std::min(piece, lo[s + 1] - lo[s])) * d);
        for (std::int64_t a = lo[s]; a < lo[s + 1]; a += piece) {
          const std::int64_t rows = std::min(piece, lo[s + 1] - a);
          range(a, rows, buf.data());
          add_rows(s, a, rows, buf.data(), a, a + rows);
        }
      } catch (...) {
        err[s] = std::current_exception();
      }
    }
    for (const std::exception_ptr& e : err)
      if (e) std::rethrow_exception(e);
  } else blocks([&](std::int64_t first, std::int64_t rows, const T* xb) {
    std::vector<int> in;
    for (int s = 0; s < nt; ++s)
      if (std::max(first, lo[s]) < std::min(first + rows, lo[s + 1])) in.push_back(s);
    const int m = static_cast<int>(in.size());
#pragma omp parallel for num_threads(std::max(1, std::min(pool, m))) schedule(dynamic, 1)
    for (int q = 0; q < m; ++q)
      add_rows(in[q], first, rows, xb, std::max(first, lo[in[q]]), std::min(first + rows, lo[in[q] + 1]));
  });
  for (int j = 0; j < k; ++j) {
    double w = 0.0;
    for (int s = 0; s < nt; ++s) w += slot_wss[static_cast<std::size_t>(k) * s + j];
    res.withinss[j] = w;
  }
  for (int& c : res.cluster) c += 1;
  res.seconds_compute = wall_seconds() - t_start;
  return res;
}

template LloydFit cpu_lloyd_blocks<double>(const StoredBlocks<double>&, const StoredRange<double>&, std::int64_t,
                                           int, int, const double*, int, int, IterationObserver*, Labels);
template LloydFit cpu_lloyd_blocks<float>(const StoredBlocks<float>&, const StoredRange<float>&, std::int64_t, int,
                                          int, const double*, int, int, IterationObserver*, Labels);

void cpu_assign(const double* x, std::int64_t n, int d, int k, const double* centers, int threads,
                int* cluster) {
  const int nt = resolve_threads(threads);
  const int B = block_size<double>(d);
  std::vector<double> cen_rm(static_cast<std::size_t>(k) * d);
  centers_row_major(centers, k, d, cen_rm.data());
  CenterScreen<double> screen;
  if (screen_wanted(d, k)) screen.prepare(cen_rm.data(), k, d);
  const std::int64_t nblocks = (n + B - 1) / B;
#pragma omp parallel for num_threads(nt) schedule(static)
  for (std::int64_t b = 0; b < nblocks; ++b) {
    int lab[kMaxBlock];
    double best[kMaxBlock];
    const std::int64_t i0 = b * B;
    const int nb = static_cast<int>(std::min<std::int64_t>(B, n - i0));
    assign_block(x, n, d, k, cen_rm.data(), i0, nb, lab, best, &screen);
    for (int p = 0; p < nb; ++p) cluster[i0 + p] = lab[p] + 1;
  }
}

namespace {

// A chunk's terms term(col[i]) (a double each) added in row order to a long
// double from 0: the chunk's sum (term: the value) or its sum of squared
// deviations (term: (value - m)^2, rounded to double).
template <typename Term>
long double chunk_terms(const double* col, std::int64_t len, Term term) {
  long double s = 0.0L;
  for (std::int64_t i = 0; i < len; ++i) s += term(col[i]);
  return s;
}

// chunk_terms() of four whole chunks that follow each other, in one loop:
// the same four chains (the same bits), whose long double additions overlap
// (3x faster per element than one chain on the development machine's EPYC).
template <typename Term>
void four_chunks(const double* col, Term term, long double* out) {
  const double *a = col, *b = a + kTotssChunkRows, *c = b + kTotssChunkRows, *e = c + kTotssChunkRows;
  long double s0 = 0.0L, s1 = 0.0L, s2 = 0.0L, s3 = 0.0L;
  for (std::int64_t i = 0; i < kTotssChunkRows; ++i) {
    s0 += term(a[i]);
    s1 += term(b[i]);
    s2 += term(c[i]);
    s3 += term(e[i]);
  }
  out[0] = s0;
  out[1] = s1;
  out[2] = s2;
  out[3] = s3;
}

// Every chunk's chunk_terms() of every column, term_of(c) the term of
// column c: out[c chunks + q] for chunk q, four chunks of a column a task.
template <typename TermOf>
void all_chunks(const double* x, std::int64_t n, int d, int threads, TermOf term_of, long double* out) {
  const std::int64_t chunks = totss_chunks(n);
  const std::int64_t groups = (chunks + 3) / 4;
  const std::int64_t tasks = groups * d;
  // (dynamic: a thread that the host takes away for a while delays no one's share)
#pragma omp parallel for num_threads(threads_for(threads, tasks)) schedule(dynamic, 1)
  for (std::int64_t task = 0; task < tasks; ++task) {
    const int c = static_cast<int>(task / groups);
    const std::int64_t q0 = (task % groups) * 4;
    const double* col = x + static_cast<std::int64_t>(c) * n;
    long double* o = out + static_cast<std::size_t>(c * chunks + q0);
    const auto term = term_of(c);
    if ((q0 + 4) * kTotssChunkRows <= n) {
      four_chunks(col + q0 * kTotssChunkRows, term, o);
    } else {
      for (std::int64_t q = q0; q < std::min(chunks, q0 + 4); ++q) {
        const std::int64_t lo = q * kTotssChunkRows, hi = std::min(n, lo + kTotssChunkRows);
        o[q - q0] = chunk_terms(col + lo, hi - lo, term);
      }
    }
  }
}

}  // namespace

double cpu_totss(const double* x, std::int64_t n, int d, int threads, const double* means) {
  const std::int64_t chunks = totss_chunks(n);
  std::vector<long double> part(static_cast<std::size_t>(chunks * d), 0.0L);
  // The column means (column_sum.h), where not given.
  std::vector<double> mean(d);
  if (means) {
    std::copy(means, means + d, mean.begin());
  } else {
    all_chunks(x, n, d, threads, [](int) { return ColumnValue(); }, part.data());
    for (int c = 0; c < d; ++c) mean[c] = chunked_mean(part.data() + static_cast<std::size_t>(c * chunks), chunks, n);
  }
  // The squared deviations, in the same chunks.  (One chain a column held a
  // 1e8 x 16 single-precision fit on a 32-thread host about 0.04 s past its
  // device's 10 iterations.)
  all_chunks(x, n, d, threads, [&mean](int c) { return SquaredDeviation{mean[c]}; }, part.data());
  long double total = 0.0L;
  for (int c = 0; c < d; ++c) {
    long double col_ss = 0.0L;
    for (std::int64_t q = 0; q < chunks; ++q) col_ss += part[static_cast<std::size_t>(c * chunks + q)];
    total += col_ss;
  }
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
  CenterScreen<T> screen;
  if (screen_wanted(d, k)) screen.prepare(cen_rm.data(), k, d);
  std::vector<double> pw(d);
  for (int c = 0; c < d; ++c) pw[c] = pow2(scale[c]);
  std::vector<Fixed128> part_sum(kd * nt, Fixed128{0, 0});
  std::vector<std::int64_t> part_count(static_cast<std::size_t>(k) * nt, 0), part_changed(nt, 0);
  for_each_slot(nt, [&](int t) {
    std::int64_t lo, hi;
    thread_range(n, nt, t, &lo, &hi);
    Fixed128* sum = part_sum.data() + kd * t;
    std::int64_t* cnt = part_count.data() + static_cast<std::size_t>(k) * t;
    part_changed[t] = assign_range(x, n, d, k, cen_rm.data(), lo, hi, B, labels, cnt, nullptr, &screen, nullptr,
                                   [&](std::int64_t i0, int nb, const int* lab, const T*) {
      for (int p = 0; p < nb; ++p)
        for (int c = 0; c < d; ++c)
          add_fixed(sum[static_cast<std::size_t>(lab[p]) + static_cast<std::size_t>(k) * c],
                    round_fixed(static_cast<double>(x[i0 + p + static_cast<std::int64_t>(c) * n]), pw[c]));
    });
  });
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
  for_each_slot(nt, [&](int t) {
    std::int64_t lo, hi;
    thread_range(n, nt, t, &lo, &hi);
    std::uint32_t* m = part.data() + static_cast<std::size_t>(k) * t;
    for (std::int64_t i = lo; i < hi; ++i) {
      const int c = labels[i];
      m[c] = std::max(m[c], upper_bits(wss_term(x, n, d, i, centers, k, c)));
    }
  });
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
  for_each_slot(nt, [&](int t) {
    std::int64_t lo, hi;
    thread_range(n, nt, t, &lo, &hi);
    Fixed128* s = part.data() + static_cast<std::size_t>(k) * t;
    for (std::int64_t i = lo; i < hi; ++i) {
      const int c = labels[i];
      add_fixed(s[c], round_fixed(wss_term(x, n, d, i, centers, k, c), pw[c]));
    }
  });
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
