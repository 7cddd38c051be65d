// sum_tree.cpp: see sum_tree.h.
#include "sum_tree.h"

#include <algorithm>

#include "parity.h"
#include "threads.h"

namespace gk {

namespace {

constexpr int A = GK_SUM_ARITY;

// Sequential sum of a[0..m) from 0 (one node of the tree).
inline double seq_sum(const double* a, std::int64_t m) {
  double s = 0.0;
  for (std::int64_t j = 0; j < m; ++j) s = s + a[j];
  return s;
}

// One level from the one below it.
std::vector<double> level_of(const double* in, std::int64_t m, int threads) {
  std::vector<double> out(level_up(m));
  const std::int64_t mo = static_cast<std::int64_t>(out.size());
  const int nt = threads_for(threads, mo / 256);
#pragma omp parallel for num_threads(nt) schedule(static)
  for (std::int64_t j = 0; j < mo; ++j) {
    const std::int64_t lo = j * A, hi = std::min<std::int64_t>(m, lo + A);
    out[j] = seq_sum(in + lo, hi - lo);
  }
  return out;
}

}  // namespace

void sum_tree_build_from_level1(std::vector<std::vector<double>>& up, int threads) {
  while (up.back().size() > 1) {
    std::vector<double> next = level_of(up.back().data(), static_cast<std::int64_t>(up.back().size()), threads);
    up.push_back(std::move(next));
  }
}

void sum_tree_build(const double* v, std::int64_t n, std::vector<std::vector<double>>& up, int threads) {
  up.clear();
  if (n <= 1) return;
  up.push_back(level_of(v, n, threads));
  sum_tree_build_from_level1(up, threads);
}

double sum_tree_total(const double* v, std::int64_t n, const std::vector<std::vector<double>>& up) {
  if (n <= 0) return 0.0;
  return up.empty() ? v[0] : up.back()[0];
}

std::int64_t sum_tree_sample(const double* v, std::int64_t n, const std::vector<std::vector<double>>& up,
                             double u) {
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

}  // namespace gk
