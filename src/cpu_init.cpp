// cpu_init.cpp: greedy k-means++ and the k-means|| rounds on the CPU; the
// reference for the CUDA engine's src/cuda/init_pp.cu and init_par.cu.  The
// order of every floating-point operation that decides a choice is fixed by
// parity.h and does not depend on the number of threads.

// The distances must be rounded term by term, never fused (see parity.h).
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include "cpu_engine.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "cpu_points.h"
#include "parity.h"
#include "single_shift.h"
#include "sum_tree.h"
#include "threads.h"
#include "weights.h"

namespace gk {

namespace {

constexpr int A = GK_SUM_ARITY;

// Squared distances of points [i0, i0 + B) of x (column c at x + c n) to
// center cen (d values), in coordinate order, into dd[0..B).  B <= A.
inline void dist_chunk(const double* x, std::int64_t n, int d, const double* cen, std::int64_t i0,
                       int B, double* dd) {
  for (int p = 0; p < B; ++p) dd[p] = 0.0;
  for (int c = 0; c < d; ++c) {
    const double cc = cen[c];
    const double* xc = x + static_cast<std::int64_t>(c) * n + i0;
    for (int p = 0; p < B; ++p) {
      const double t = xc[p] - cc;
      dd[p] = dd[p] + t * t;
    }
  }
}

inline double min_d2(double d2, double dist) { return dist < d2 ? dist : d2; }

// Lowest index in [from, n) with flag 0 (the degenerate rule).
std::int64_t next_unchosen(const std::vector<char>& flag, std::int64_t& from) {
  while (from < static_cast<std::int64_t>(flag.size()) && flag[from]) ++from;
  return from;
}

// Greedy D^2 sampling step shared by k-means++ and the weighted reduction:
// the points are the rows of pts with weights w (NULL = 1); D2 is the
// current squared distance to the chosen centers.  Draws L candidates with
// uniforms unif[0..L) (or applies the degenerate rule) and returns the one
// whose potential sum_i w_i min(D2_i, dist(i, cand)) is smallest.  Each pass
// goes over pts block by block (cpu_points.h: blocks start at level-1 nodes).
struct Greedy {
  const CpuPoints& pts;
  std::int64_t n;
  int d;
  const double* w;  // NULL: unweighted
  int threads;
  std::vector<double> d2, wd2;                // D2 and w * D2 (sampled)
  std::vector<std::vector<double>> tree;      // levels of the tree of wd2
  std::vector<char> chosen;
  std::int64_t free_from = 0;

  Greedy(const CpuPoints& pts_, const double* w_, int threads_)
      : pts(pts_), n(pts_.n()), d(pts_.d()), w(w_), threads(threads_),
        d2(n, std::numeric_limits<double>::infinity()), wd2(n, 0.0), chosen(n, 0) {}

  // D2 = min(D2, dist to row ci); rebuilds the sampling tree.
  void add_center(std::int64_t ci) {
    chosen[ci] = 1;
    std::vector<double> cen(d);
    pts.rows_row_major(&ci, 1, cen.data());
    std::vector<double> lv1(level_up(n));
    pts.for_each_block([&](std::int64_t first, std::int64_t rows, const double* xb, std::int64_t ld) {
      const std::int64_t nch = level_up(rows), ch0 = first / A;
      const int nt = threads_for(threads, nch / 8);
#pragma omp parallel for num_threads(nt) schedule(static)
      for (std::int64_t ch = 0; ch < nch; ++ch) {
        const std::int64_t i0 = ch * A;
        const int B = static_cast<int>(std::min<std::int64_t>(A, rows - i0));
        double dd[A];
        dist_chunk(xb, ld, d, cen.data(), i0, B, dd);
        double s = 0.0;
        for (int p = 0; p < B; ++p) {
          const std::int64_t i = first + i0 + p;
          d2[i] = min_d2(d2[i], dd[p]);
          wd2[i] = w ? w[i] * d2[i] : d2[i];
          s = s + wd2[i];
        }
        lv1[ch0 + ch] = s;
      }
    });
    tree.clear();
    if (n > 1) {
      tree.push_back(std::move(lv1));
      sum_tree_build_from_level1(tree, threads);
    }
  }

  double total() const { return sum_tree_total(wd2.data(), n, tree); }

  // One greedy step; returns the chosen row.
  std::int64_t step(const double* unif, int L) {
    std::vector<std::int64_t> cand(L);
    const double tot = total();
    for (int j = 0; j < L; ++j) {
      std::int64_t c = tot > 0 ? sum_tree_sample(wd2.data(), n, tree, unif[j]) : -1;
      if (c < 0) c = next_unchosen(chosen, free_from);
      cand[j] = c;
    }
    std::vector<double> cc(static_cast<std::size_t>(L) * d);
    pts.rows_row_major(cand.data(), L, cc.data());
    // Level 1 of each candidate's potential, then the rest of its tree.
    std::vector<std::vector<double>> lv1(L, std::vector<double>(level_up(n)));
    pts.for_each_block([&](std::int64_t first, std::int64_t rows, const double* xb, std::int64_t ld) {
      const std::int64_t nch = level_up(rows), ch0 = first / A;
      const int nt = threads_for(threads, nch / 8);
#pragma omp parallel for num_threads(nt) schedule(static)
      for (std::int64_t ch = 0; ch < nch; ++ch) {
        const std::int64_t i0 = ch * A, g0 = first + i0;
        const int B = static_cast<int>(std::min<std::int64_t>(A, rows - i0));
        double dd[A];
        for (int j = 0; j < L; ++j) {
          dist_chunk(xb, ld, d, cc.data() + static_cast<std::size_t>(j) * d, i0, B, dd);
          double s = 0.0;
          for (int p = 0; p < B; ++p) {
            const double m = min_d2(d2[g0 + p], dd[p]);
            s = s + (w ? w[g0 + p] * m : m);
          }
          lv1[j][ch0 + ch] = s;
        }
      }
    });
    int best = 0;
    double best_pot = 0.0;
    for (int j = 0; j < L; ++j) {
      double pot;
      if (n == 1) {
        pot = lv1[j][0];
      } else {
        std::vector<std::vector<double>> up;
        up.push_back(std::move(lv1[j]));
        sum_tree_build_from_level1(up, threads);
        pot = up.back()[0];
      }
      if (j == 0 || pot < best_pot) {
        best = j;
        best_pot = pot;
      }
    }
    return cand[best];
  }
};

}  // namespace

std::vector<std::int64_t> cpu_greedy(const CpuPoints& points, const std::int64_t* rows, const double* weight,
                                     std::int64_t m, std::int64_t first, int picks, const double* unif, int L,
                                     int threads, IterationObserver* observer) {
  const int d = points.d();
  // The points: all of them, or the rows gathered as a dense column-major matrix.
  std::vector<double> xc;
  std::unique_ptr<HostPoints> gathered;
  if (rows) {
    std::vector<double> rm(static_cast<std::size_t>(m) * d);
    points.rows_row_major(rows, m, rm.data());
    xc.resize(rm.size());
    for (std::int64_t j = 0; j < m; ++j)
      for (int c = 0; c < d; ++c) xc[j + static_cast<std::size_t>(c) * m] = rm[static_cast<std::size_t>(j) * d + c];
    gathered.reset(new HostPoints(xc.data(), m, d));
  }
  Greedy g(gathered ? *gathered : points, weight, threads);
  std::vector<std::int64_t> pick;
  pick.reserve(picks);
  pick.push_back(first);
  if (picks > 1) g.add_center(first);
  for (int s = 1; s < picks; ++s) {
    if (observer && !observer->keep_going()) throw Interrupted();  // it polls R every 50 ms at most
    pick.push_back(g.step(unif + static_cast<std::size_t>(s - 1) * L, L));
    if (s + 1 < picks) g.add_center(pick.back());
  }
  return pick;
}

std::vector<std::int64_t> cpu_greedy(const double* x, std::int64_t n, int d, const std::int64_t* rows,
                                     const double* weight, std::int64_t m, std::int64_t first, int picks,
                                     const double* unif, int L, int threads, IterationObserver* observer) {
  return cpu_greedy(HostPoints(x, n, d), rows, weight, m, first, picks, unif, L, threads, observer);
}

std::vector<std::int64_t> cpu_greedy_stored(const double* x, std::int64_t n, int d, const double* shift,
                                            const std::int64_t* rows, const double* weight, std::int64_t m,
                                            std::int64_t first, int picks, const double* unif, int L, int threads,
                                            IterationObserver* observer) {
  for (std::int64_t i = 0; i < m; ++i)
    if (rows[i] < 0 || rows[i] >= n) throw EngineError(EngineError::Kind::kInvalid, "greedy: a row outside x");
  if (!shift) return cpu_greedy(x, n, d, rows, weight, m, first, picks, unif, L, threads, observer);
  std::vector<double> stored(static_cast<std::size_t>(m) * d);  // the rows as stored, column-major
  for (int j = 0; j < d; ++j)
    for (std::int64_t i = 0; i < m; ++i)
      stored[i + static_cast<std::size_t>(j) * m] =
          static_cast<double>(single_stored(x[rows[i] + static_cast<std::int64_t>(j) * n], shift[j]));
  return cpu_greedy(stored.data(), m, d, nullptr, weight, m, first, picks, unif, L, threads, observer);
}

// ---- k-means|| -------------------------------------------------------------

CpuParRounds::CpuParRounds(const CpuPoints& points, int threads, const double* w)
    : pts_(points), n_(points.n()), d_(points.d()), threads_(threads), w_(w) {
  if (w_) wscale_ = sampling_scale(w_, n_);
}

double CpuParRounds::begin(std::int64_t first) {
  count_ = 0;
  d2_.assign(n_, std::numeric_limits<double>::infinity());
  lab_.assign(n_, 0);
  return add(&first, 1, nullptr);
}

// Adds m candidates (rows[0..m)) after the count_ already there: D2 =
// min(D2, dist) in candidate order, and the labels; returns phi.  Block by
// block, the candidates go in groups of about 2^27 / (n d) (at least one):
// each point still sees them in order, and the observer is polled between
// groups.
double CpuParRounds::add(const std::int64_t* rows, std::int64_t m, IterationObserver* observer) {
  const std::int64_t base = count_;
  count_ += m;
  std::vector<double> cen(static_cast<std::size_t>(m) * d_);  // row-major
  pts_.rows_row_major(rows, m, cen.data());
  const std::int64_t group =
      std::max<std::int64_t>(1, static_cast<std::int64_t>(134217728.0 / (static_cast<double>(n_) * d_)));
  pts_.for_each_block([&](std::int64_t first, std::int64_t nb, const double* xb, std::int64_t ld) {
    const std::int64_t nch = level_up(nb);
    const int nt = threads_for(threads_, nch / 4);
    for (std::int64_t g0 = 0; g0 < m; g0 += group) {
      const std::int64_t g1 = std::min(m, g0 + group);
#pragma omp parallel for num_threads(nt) schedule(static)
      for (std::int64_t ch = 0; ch < nch; ++ch) {
        const std::int64_t i0 = ch * A, r0 = first + i0;
        const int B = static_cast<int>(std::min<std::int64_t>(A, nb - i0));
        double dd[A];
        for (std::int64_t j = g0; j < g1; ++j) {
          dist_chunk(xb, ld, d_, cen.data() + static_cast<std::size_t>(j) * d_, i0, B, dd);
          for (int p = 0; p < B; ++p) {
            if (dd[p] < d2_[r0 + p]) {
              d2_[r0 + p] = dd[p];
              lab_[r0 + p] = base + j;
            }
          }
        }
      }
      if (observer && (g1 < m || first + nb < n_) && !observer->keep_going()) throw Interrupted();
    }
  });
  if (w_) {  // weighted: the tree of w D2
    wd2_.resize(n_);
    for (std::int64_t i = 0; i < n_; ++i) wd2_[i] = (w_[i] * wscale_) * d2_[i];
    sum_tree_build(wd2_.data(), n_, tree_, threads_);
    return sum_tree_total(wd2_.data(), n_, tree_);
  }
  sum_tree_build(d2_.data(), n_, tree_, threads_);
  return sum_tree_total(d2_.data(), n_, tree_);
}

std::vector<std::int64_t> CpuParRounds::round(std::uint64_t seed, int r, double l, double phi, double* phi_out,
                                              IterationObserver* observer) {
  std::vector<std::vector<std::int64_t>> per(threads_for(threads_, level_up(n_) / 64));
  const int nt = static_cast<int>(per.size());
  // Each thread takes a contiguous range, so concatenating keeps index order.
  for_each_slot(nt, [&](int t) {
    const std::int64_t lo = n_ * t / nt, hi = n_ * (t + 1) / nt;
    const double* v = w_ ? wd2_.data() : d2_.data();  // weighted: w D2
    for (std::int64_t i = lo; i < hi; ++i) {
      if (v[i] > 0) {
        const double p = (l * v[i]) / phi;
        if (counter_uniform(seed, static_cast<std::uint64_t>(r), static_cast<std::uint64_t>(i)) < p)
          per[t].push_back(i);
      }
    }
  });
  std::vector<std::int64_t> sel;
  for (auto& v : per) sel.insert(sel.end(), v.begin(), v.end());
  *phi_out = sel.empty() ? phi : add(sel.data(), static_cast<std::int64_t>(sel.size()), observer);
  return sel;
}

std::vector<double> CpuParRounds::weights(std::int64_t m) const {
  std::vector<double> w(m, 0.0);
  if (w_)
    for (std::int64_t i = 0; i < n_; ++i) w[lab_[i]] += w_[i] * wscale_;
  else
    for (std::int64_t i = 0; i < n_; ++i) w[lab_[i]] += 1.0;
  return w;
}

}  // namespace gk

// ---- the initialisation of a block of a larger data set (Engine::block_init)

namespace gk {

namespace {

class CpuBlockInit final : public BlockInit {
 public:
  CpuBlockInit(const double* x, std::int64_t n, int d, std::int64_t offset, std::int64_t total, int threads)
      : x_(x), n_(n), d_(d), threads_(threads), lay_(block_layout(offset, n, total)),
        d2_(n, std::numeric_limits<double>::infinity()), lab_(n, 0) {}

  // As CpuParRounds::add: each row sees the centers in order.
  void add_centers(const double* c, std::int64_t m) override {
    const std::int64_t base = count_;
    count_ += m;
    if (n_ == 0 || m == 0) return;
    const std::int64_t nch = level_up(n_);
    const int nt = threads_for(threads_, nch / 4);
#pragma omp parallel for num_threads(nt) schedule(static)
    for (std::int64_t ch = 0; ch < nch; ++ch) {
      const std::int64_t i0 = ch * A;
      const int B = static_cast<int>(std::min<std::int64_t>(A, n_ - i0));
      double dd[A];
      for (std::int64_t j = 0; j < m; ++j) {
        dist_chunk(x_, n_, d_, c + static_cast<std::size_t>(j) * d_, i0, B, dd);
        for (int p = 0; p < B; ++p) {
          if (dd[p] < d2_[i0 + p]) {
            d2_[i0 + p] = dd[p];
            lab_[i0 + p] = base + j;
          }
        }
      }
    }
  }

  BlockLevel1 d2_tree() override {
    BlockLevel1 out;
    const std::int64_t K = lay_.end_node - lay_.first_node;
    out.level1.resize(K);
    const int nt = threads_for(threads_, K / 256);
#pragma omp parallel for num_threads(nt) schedule(static)
    for (std::int64_t g = 0; g < K; ++g) {
      std::int64_t lo, hi;
      node_range(g, &lo, &hi);
      double s = 0.0;
      for (std::int64_t i = lo; i < hi; ++i) s = s + d2_[i];
      out.level1[g] = s;
    }
    out.head.assign(d2_.begin(), d2_.begin() + (lay_.head_end - lay_.offset));
    out.tail.assign(d2_.begin() + (lay_.tail_begin - lay_.offset), d2_.end());
    return out;
  }

  // As Greedy::step: the level-1 sums of min(D2, dist) in row order.
  std::vector<BlockLevel1> potentials(const double* cand, int L) override {
    std::vector<BlockLevel1> out(L);
    const std::int64_t K = lay_.end_node - lay_.first_node;
    for (int j = 0; j < L; ++j) out[j].level1.resize(K);
    const int nt = threads_for(threads_, K / 8);
#pragma omp parallel for num_threads(nt) schedule(static)
    for (std::int64_t g = 0; g < K; ++g) {
      std::int64_t lo, hi;
      node_range(g, &lo, &hi);
      const int B = static_cast<int>(hi - lo);
      double dd[A];
      for (int j = 0; j < L; ++j) {
        dist_chunk(x_, n_, d_, cand + static_cast<std::size_t>(j) * d_, lo, B, dd);
        double s = 0.0;
        for (int p = 0; p < B; ++p) s = s + min_d2(d2_[lo + p], dd[p]);
        out[j].level1[g] = s;
      }
    }
    for (int j = 0; j < L; ++j) {
      const double* c = cand + static_cast<std::size_t>(j) * d_;
      out[j].head = leaf_potentials(c, 0, lay_.head_end - lay_.offset);
      out[j].tail = leaf_potentials(c, lay_.tail_begin - lay_.offset, n_);
    }
    return out;
  }

  void d2(std::int64_t from, int count, double* out) override {
    const std::int64_t lo = from - lay_.offset;
    if (lo < 0 || lo + count > n_) throw EngineError(EngineError::Kind::kInvalid, "block init: rows outside the block");
    std::copy(d2_.begin() + lo, d2_.begin() + lo + count, out);
  }

  // As CpuParRounds::round, with the rows' global indices.
  std::vector<std::int64_t> select(std::uint64_t seed, int r, double l, double phi) override {
    std::vector<std::vector<std::int64_t>> per(threads_for(threads_, level_up(n_) / 64));
    const int nt = static_cast<int>(per.size());
    const std::int64_t off = lay_.offset;
    // One slot per contiguous range, whatever team the runtime gives (a
    // smaller team takes several slots): concatenated in slot order.
#pragma omp parallel for num_threads(nt) schedule(static, 1)
    for (int t = 0; t < nt; ++t) {
      const std::int64_t lo = n_ * t / nt, hi = n_ * (t + 1) / nt;
      for (std::int64_t i = lo; i < hi; ++i) {
        if (d2_[i] > 0) {
          const double p = (l * d2_[i]) / phi;
          if (counter_uniform(seed, static_cast<std::uint64_t>(r), static_cast<std::uint64_t>(off + i)) < p)
            per[t].push_back(off + i);
        }
      }
    }
    std::vector<std::int64_t> sel;
    for (auto& v : per) sel.insert(sel.end(), v.begin(), v.end());
    return sel;
  }

  std::vector<double> label_counts(std::int64_t m) override {
    std::vector<double> w(m, 0.0);
    for (std::int64_t i = 0; i < n_; ++i)
      if (lab_[i] < m) w[lab_[i]] += 1.0;
    return w;
  }

 private:
  // Local rows of complete level-1 node first_node + g.
  void node_range(std::int64_t g, std::int64_t* lo, std::int64_t* hi) const {
    const std::int64_t start = (lay_.first_node + g) * A;
    *lo = start - lay_.offset;
    *hi = std::min(lay_.total, start + A) - lay_.offset;
  }
  // min(D2, dist(i, c)) of local rows [lo, hi).
  std::vector<double> leaf_potentials(const double* c, std::int64_t lo, std::int64_t hi) const {
    std::vector<double> v;
    double dd[A];
    for (std::int64_t i0 = lo; i0 < hi; i0 += A) {
      const int B = static_cast<int>(std::min<std::int64_t>(A, hi - i0));
      dist_chunk(x_, n_, d_, c, i0, B, dd);
      for (int p = 0; p < B; ++p) v.push_back(min_d2(d2_[i0 + p], dd[p]));
    }
    return v;
  }

  const double* x_;
  std::int64_t n_;
  int d_, threads_;
  BlockLayout lay_;
  std::vector<double> d2_;
  std::vector<std::int64_t> lab_;
  std::int64_t count_ = 0;
};

}  // namespace

std::unique_ptr<BlockInit> make_cpu_block_init(const double* x, std::int64_t n, int d, std::int64_t offset,
                                               std::int64_t total, int threads) {
  return std::unique_ptr<BlockInit>(new CpuBlockInit(x, n, d, offset, total, threads));
}

}  // namespace gk
