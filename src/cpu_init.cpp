// cpu_init.cpp: k-means++ and k-means|| on the CPU; the reference for the
// CUDA engine's src/cuda/init_pp.cu and init_par.cu.  The order of every floating-point
// operation that decides a choice is fixed by init_order.h and does not
// depend on the number of threads.

// The distances must be rounded term by term, never fused (see init_order.h).
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include "cpu_init.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "init_order.h"
#include "threads.h"

namespace gk {

namespace {

constexpr int A = GK_SUM_ARITY;

// Row i of x as a dense vector.
void get_row(const double* x, std::int64_t n, int d, std::int64_t i, double* out) {
  for (int c = 0; c < d; ++c) out[c] = x[i + static_cast<std::int64_t>(c) * n];
}

// Squared distances of points [i0, i0 + B) to center cen (d values), in
// coordinate order, into dd[0..B).  B <= A.
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

// Sequential sum of a[0..m) from 0 (one node of the tree).
inline double seq_sum(const double* a, std::int64_t m) {
  double s = 0.0;
  for (std::int64_t j = 0; j < m; ++j) s = s + a[j];
  return s;
}

// Levels 2, 3, ... given level 1 (lv1 already in up[0]).
void build_from_level1(std::vector<std::vector<double>>& up, int threads) {
  while (up.back().size() > 1) {
    const std::vector<double>& in = up.back();
    const std::int64_t m = static_cast<std::int64_t>(in.size());
    std::vector<double> out(level_up(m));
    const std::int64_t mo = static_cast<std::int64_t>(out.size());
    const int nt = threads_for(threads, mo / 256);
#pragma omp parallel for num_threads(nt) schedule(static)
    for (std::int64_t j = 0; j < mo; ++j) {
      const std::int64_t lo = j * A, hi = std::min<std::int64_t>(m, lo + A);
      out[j] = seq_sum(in.data() + lo, hi - lo);
    }
    up.push_back(std::move(out));
  }
}

// Lowest index in [from, n) with flag 0 (the degenerate rule).
std::int64_t next_unchosen(const std::vector<char>& flag, std::int64_t& from) {
  while (from < static_cast<std::int64_t>(flag.size()) && flag[from]) ++from;
  return from;
}

// Greedy D^2 sampling step shared by k-means++ and the weighted reduction:
// the points are rows of x (n x d) with weights w (NULL = 1); D2 is the
// current squared distance to the chosen centers.  Draws L candidates with
// uniforms unif[0..L) (or applies the degenerate rule) and returns the one
// whose potential sum_i w_i min(D2_i, dist(i, cand)) is smallest.
struct Greedy {
  const double* x;
  std::int64_t n;
  int d;
  const double* w;  // NULL: unweighted
  int threads;
  std::vector<double> d2, wd2;                // D2 and w * D2 (sampled)
  std::vector<std::vector<double>> tree;      // levels of the tree of wd2
  std::vector<char> chosen;
  std::int64_t free_from = 0;

  Greedy(const double* x_, std::int64_t n_, int d_, const double* w_, int threads_)
      : x(x_), n(n_), d(d_), w(w_), threads(threads_),
        d2(n_, std::numeric_limits<double>::infinity()), wd2(n_, 0.0), chosen(n_, 0) {}

  // D2 = min(D2, dist to row ci); rebuilds the sampling tree.
  void add_center(std::int64_t ci) {
    chosen[ci] = 1;
    std::vector<double> cen(d);
    get_row(x, n, d, ci, cen.data());
    const std::int64_t nch = level_up(n);
    std::vector<double> lv1(nch);
    const int nt = threads_for(threads, nch / 8);
#pragma omp parallel for num_threads(nt) schedule(static)
    for (std::int64_t ch = 0; ch < nch; ++ch) {
      const std::int64_t i0 = ch * A;
      const int B = static_cast<int>(std::min<std::int64_t>(A, n - i0));
      double dd[A];
      dist_chunk(x, n, d, cen.data(), i0, B, dd);
      double s = 0.0;
      for (int p = 0; p < B; ++p) {
        const std::int64_t i = i0 + p;
        d2[i] = min_d2(d2[i], dd[p]);
        wd2[i] = w ? w[i] * d2[i] : d2[i];
        s = s + wd2[i];
      }
      lv1[ch] = s;
    }
    tree.clear();
    if (n > 1) {
      tree.push_back(std::move(lv1));
      build_from_level1(tree, threads);
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
    for (int j = 0; j < L; ++j) get_row(x, n, d, cand[j], cc.data() + static_cast<std::size_t>(j) * d);
    // Level 1 of each candidate's potential, then the rest of its tree.
    const std::int64_t nch = level_up(n);
    std::vector<std::vector<double>> lv1(L, std::vector<double>(nch));
    const int nt = threads_for(threads, nch / 8);
#pragma omp parallel for num_threads(nt) schedule(static)
    for (std::int64_t ch = 0; ch < nch; ++ch) {
      const std::int64_t i0 = ch * A;
      const int B = static_cast<int>(std::min<std::int64_t>(A, n - i0));
      double dd[A];
      for (int j = 0; j < L; ++j) {
        dist_chunk(x, n, d, cc.data() + static_cast<std::size_t>(j) * d, i0, B, dd);
        double s = 0.0;
        for (int p = 0; p < B; ++p) {
          const double m = min_d2(d2[i0 + p], dd[p]);
          s = s + (w ? w[i0 + p] * m : m);
        }
        lv1[j][ch] = s;
      }
    }
    int best = 0;
    double best_pot = 0.0;
    for (int j = 0; j < L; ++j) {
      double pot;
      if (n == 1) {
        pot = lv1[j][0];
      } else {
        std::vector<std::vector<double>> up;
        up.push_back(std::move(lv1[j]));
        build_from_level1(up, threads);
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

// ---- the sum tree ------------------------------------------------------------

void sum_tree_build(const double* v, std::int64_t n, std::vector<std::vector<double>>& up,
                    int threads) {
  up.clear();
  if (n <= 1) return;
  const std::int64_t nch = level_up(n);
  std::vector<double> lv1(nch);
  const int nt = threads_for(threads, nch / 256);
#pragma omp parallel for num_threads(nt) schedule(static)
  for (std::int64_t j = 0; j < nch; ++j) {
    const std::int64_t lo = j * A, hi = std::min<std::int64_t>(n, lo + A);
    lv1[j] = seq_sum(v + lo, hi - lo);
  }
  up.push_back(std::move(lv1));
  build_from_level1(up, threads);
}

double sum_tree_total(const double* v, std::int64_t n, const std::vector<std::vector<double>>& up) {
  if (n <= 0) return 0.0;
  return up.empty() ? v[0] : up.back()[0];
}

std::int64_t sum_tree_sample(const double* v, std::int64_t n,
                             const std::vector<std::vector<double>>& up, double u) {
  const double total = sum_tree_total(v, n, up);
  if (!(total > 0)) return -1;
  const double target = u * total;
  std::int64_t node = 0;
  double off = 0.0;
  for (int t = static_cast<int>(up.size()); t >= 1; --t) {
    const double* a = (t == 1) ? v : up[t - 2].data();
    const std::int64_t m = (t == 1) ? n : static_cast<std::int64_t>(up[t - 2].size());
    const std::int64_t lo = node * A, hi = std::min<std::int64_t>(m, lo + A);
    const int c = descend_children(a + lo, static_cast<int>(hi - lo), target, &off);
    node = c < 0 ? -1 : lo + c;
  }
  return node;
}

// ---- k-means++ -------------------------------------------------------------

int kmeanspp_candidates(int k) { return 2 + static_cast<int>(std::floor(std::log(static_cast<double>(k)))); }

std::vector<std::int64_t> cpu_kmeanspp(const double* x, std::int64_t n, int d, int k,
                                       const double* unif, int L, int threads,
                                       IterationObserver* observer) {
  std::vector<std::int64_t> idx;
  idx.reserve(k);
  Greedy g(x, n, d, nullptr, threads);
  idx.push_back(uniform_index(unif[0], n));
  if (k > 1) g.add_center(idx[0]);
  for (int s = 1; s < k; ++s) {
    if (observer && (s % 16) == 0 && !observer->keep_going()) return {};
    const std::int64_t c = g.step(unif + 1 + static_cast<std::size_t>(s - 1) * L, L);
    idx.push_back(c);
    if (s + 1 < k) g.add_center(c);
  }
  return idx;
}

// ---- k-means|| -------------------------------------------------------------

double kmeans_par_oversampling(int k) { return 2.0 * k; }

ParCandidates cpu_kmeans_par_candidates(const double* x, std::int64_t n, int d, int k,
                                        std::uint64_t seed, int threads,
                                        IterationObserver* observer) {
  ParCandidates res;
  const double l = kmeans_par_oversampling(k);
  const std::int64_t nch = level_up(n);
  std::vector<double> d2(n, std::numeric_limits<double>::infinity());
  // lab[i]: the candidate nearest to point i (the first of equals), which
  // gives the weights without another pass over the candidates.
  std::vector<std::int64_t> lab(n, 0);
  std::vector<std::vector<double>> tree;
  std::vector<double> cen;  // new candidates' rows, row-major

  // Adds the last m candidates (rows new[0..m)): D2 = min(D2, dist) in
  // candidate order, and the labels; then phi.
  auto update = [&](const std::int64_t* nw, std::int64_t m) -> double {
    const std::int64_t base = static_cast<std::int64_t>(res.idx.size()) - m;
    cen.resize(static_cast<std::size_t>(m) * d);
    for (std::int64_t j = 0; j < m; ++j) get_row(x, n, d, nw[j], cen.data() + static_cast<std::size_t>(j) * d);
    const int nt = threads_for(threads, nch / 4);
#pragma omp parallel for num_threads(nt) schedule(static)
    for (std::int64_t ch = 0; ch < nch; ++ch) {
      const std::int64_t i0 = ch * A;
      const int B = static_cast<int>(std::min<std::int64_t>(A, n - i0));
      double dd[A];
      for (std::int64_t j = 0; j < m; ++j) {
        dist_chunk(x, n, d, cen.data() + static_cast<std::size_t>(j) * d, i0, B, dd);
        for (int p = 0; p < B; ++p) {
          if (dd[p] < d2[i0 + p]) {
            d2[i0 + p] = dd[p];
            lab[i0 + p] = base + j;
          }
        }
      }
    }
    sum_tree_build(d2.data(), n, tree, threads);
    return sum_tree_total(d2.data(), n, tree);
  };

  const std::int64_t first = uniform_index(counter_uniform(seed, 0, 0), n);
  res.idx.push_back(first);
  double phi = update(&first, 1);

  auto round = [&](int r) {
    std::vector<std::vector<std::int64_t>> per(threads_for(threads, nch / 64));
    const int nt = static_cast<int>(per.size());
    // Each thread takes a contiguous range, so concatenating keeps index order.
#pragma omp parallel num_threads(nt)
    {
      const int t = thread_id();
      const std::int64_t lo = n * t / nt, hi = n * (t + 1) / nt;
      for (std::int64_t i = lo; i < hi; ++i) {
        if (d2[i] > 0) {
          const double p = (l * d2[i]) / phi;
          if (counter_uniform(seed, static_cast<std::uint64_t>(r), static_cast<std::uint64_t>(i)) < p)
            per[t].push_back(i);
        }
      }
    }
    std::vector<std::int64_t> sel;
    for (auto& v : per) sel.insert(sel.end(), v.begin(), v.end());
    res.idx.insert(res.idx.end(), sel.begin(), sel.end());
    if (!sel.empty()) phi = update(sel.data(), static_cast<std::int64_t>(sel.size()));
    res.rounds = r;
  };

  const int max_rounds = GK_PAR_ROUNDS + GK_PAR_MAX_EXTRA;
  for (;;) {
    while (phi > 0 && res.rounds < max_rounds &&
           (res.rounds < GK_PAR_ROUNDS || static_cast<std::int64_t>(res.idx.size()) < k)) {
      if (observer && !observer->keep_going()) {
        res.interrupted = true;
        return res;
      }
      round(res.rounds + 1);
    }
    // Weights: points nearest to each candidate (first of equals).
    const std::int64_t m = static_cast<std::int64_t>(res.idx.size());
    res.weight.assign(m, 0.0);
    for (std::int64_t i = 0; i < n; ++i) res.weight[lab[i]] += 1.0;
    std::int64_t pos = 0;
    for (std::int64_t j = 0; j < m; ++j) pos += res.weight[j] > 0;
    if (pos >= k || !(phi > 0) || res.rounds >= max_rounds) break;
    round(res.rounds + 1);
  }
  return res;
}

std::vector<std::int64_t> kmeans_par_reduce(const double* x, std::int64_t n, int d, int k,
                                            std::uint64_t seed,
                                            const std::vector<std::int64_t>& cand,
                                            const std::vector<double>& weight, int threads,
                                            const ReduceGreedy* greedy) {
  const std::int64_t m = static_cast<std::int64_t>(cand.size());
  const int L = kmeanspp_candidates(k);
  // The draws of the stream: the first pick, then L per step s = 1..k-1.
  std::vector<double> u(1 + static_cast<std::size_t>(k - 1) * L);
  for (std::size_t j = 0; j < u.size(); ++j) u[j] = counter_uniform(seed, GK_PAR_REDUCE_STREAM, j);
  std::vector<std::vector<double>> wt;
  sum_tree_build(weight.data(), m, wt, threads);
  std::int64_t first = sum_tree_sample(weight.data(), m, wt, u[0]);
  if (first < 0) first = 0;

  // Greedy picks among the candidates.  A pick never repeats a candidate (a
  // chosen one has D2 = 0, and the degenerate rule skips chosen ones), so
  // min(k, m) picks exhaust nothing.
  const int picks = static_cast<int>(std::min<std::int64_t>(k, m));
  std::vector<std::int64_t> pick;
  if (greedy) {
    pick = (*greedy)(first, picks, u.data() + 1, L);
  } else {
    std::vector<double> xc(static_cast<std::size_t>(m) * d);  // the candidates, column-major
    for (std::int64_t j = 0; j < m; ++j)
      for (int c = 0; c < d; ++c)
        xc[j + static_cast<std::size_t>(c) * m] = x[cand[j] + static_cast<std::int64_t>(c) * n];
    Greedy g(xc.data(), m, d, weight.data(), threads);
    pick.push_back(first);
    if (picks > 1) g.add_center(first);
    for (int s = 1; s < picks; ++s) {
      pick.push_back(g.step(u.data() + 1 + static_cast<std::size_t>(s - 1) * L, L));
      if (s + 1 < picks) g.add_center(pick.back());
    }
  }
  std::vector<std::int64_t> out;
  out.reserve(k);
  for (std::int64_t c : pick) out.push_back(cand[c]);
  if (picks == k) return out;

  // Fewer than k distinct candidates: only with fewer than k distinct
  // points (R then stops with an error) or after the cap on rounds.  The
  // degenerate rule goes on with the lowest rows of x not taken yet.
  std::vector<char> used_row(n, 0);
  for (std::int64_t r : out) used_row[r] = 1;
  std::int64_t row_from = 0;
  while (static_cast<int>(out.size()) < k) {
    while (row_from < n && used_row[row_from]) ++row_from;
    const std::int64_t c = row_from < n ? row_from : 0;
    if (row_from < n) used_row[row_from] = 1;
    out.push_back(c);
  }
  return out;
}

}  // namespace gk
