// init_driver.cpp: the seeded initialisations, written once for every
// engine (fit_driver.h, initial_rows).  The engines supply the passes over
// the data (greedy steps, k-means|| rounds); the control flow -- how many
// rounds, the first pick, the reduction of the candidates to k centers and
// the degenerate rule -- is here, with the constants of src/parity.h.
#include <algorithm>

#include "fit_driver.h"
#include "parity.h"
#include "sum_tree.h"

namespace gk {

namespace {

// Releases the engine's k-means|| state on every exit path.
struct ParGuard {
  Engine& e;
  ~ParGuard() { e.par_end(); }
};

// The oversampling phase of k-means|| (Bahmani et al. 2012): the first
// candidate from u(seed, 0, 0); at least GK_PAR_ROUNDS rounds, more while
// there are fewer than k candidates, or fewer than k with positive weight,
// and the potential phi is > 0.
}  // namespace

ParResult par_candidates(Engine& e, int k, std::uint64_t seed, IterationObserver* observer) {
  const std::int64_t n = e.n();
  const double l = par_oversampling(k);
  const int max_rounds = GK_PAR_ROUNDS + GK_PAR_MAX_EXTRA;
  ParGuard guard{e};
  ParResult res;
  res.rows.push_back(uniform_index(counter_uniform(seed, 0, 0), n));
  double phi = e.par_begin(res.rows[0]);
  int rounds = 0;
  auto round = [&]() {
    if (observer && !observer->keep_going()) throw Interrupted();
    double phi_next = phi;
    const std::vector<std::int64_t> added = e.par_round(seed, ++rounds, l, phi, &phi_next, observer);
    res.rows.insert(res.rows.end(), added.begin(), added.end());
    phi = phi_next;
  };
  for (;;) {
    while (phi > 0 && rounds < max_rounds &&
           (rounds < GK_PAR_ROUNDS || static_cast<std::int64_t>(res.rows.size()) < k))
      round();
    res.weight = e.par_weights(static_cast<std::int64_t>(res.rows.size()));
    const std::int64_t positive = std::count_if(res.weight.begin(), res.weight.end(), [](double w) { return w > 0; });
    if (positive >= k || !(phi > 0) || rounds >= max_rounds) break;
    round();
  }
  res.rounds = rounds;
  return res;
}

// The reduction of k-means||: weighted greedy k-means++ over the candidates
// (random numbers from stream GK_PAR_REDUCE_STREAM of the seed); then, with
// fewer than k candidates, the degenerate rule on the rows of x.
std::vector<std::int64_t> par_reduce_picks(Engine& e, const std::int64_t* rows, const std::vector<double>& weight,
                                           int k, std::uint64_t seed, IterationObserver* observer) {
  const std::int64_t m = static_cast<std::int64_t>(weight.size());
  const int L = greedy_candidates(k);
  // The draws of the stream: the first pick, then L per step s = 1..k-1.
  std::vector<double> u(1 + static_cast<std::size_t>(k - 1) * L);
  for (std::size_t j = 0; j < u.size(); ++j) u[j] = counter_uniform(seed, GK_PAR_REDUCE_STREAM, j);
  std::vector<std::vector<double>> wt;
  sum_tree_build(weight.data(), m, wt, 1);
  std::int64_t first = sum_tree_sample(weight.data(), m, wt, u[0]);
  if (first < 0) first = 0;
  // A pick never repeats a candidate (a chosen one has D2 = 0, and the
  // degenerate rule skips chosen ones), so min(k, m) picks exhaust nothing.
  const int picks = static_cast<int>(std::min<std::int64_t>(k, m));
  return e.greedy(rows, weight.data(), m, first, picks, u.data() + 1, L, observer);
}

std::vector<std::int64_t> par_reduce(Engine& e, int k, std::uint64_t seed, const ParResult& cand,
                                     IterationObserver* observer) {
  const std::int64_t n = e.n();
  const std::vector<std::int64_t> pick = par_reduce_picks(e, cand.rows.data(), cand.weight, k, seed, observer);
  const int picks = static_cast<int>(pick.size());
  std::vector<std::int64_t> out;
  out.reserve(k);
  for (std::int64_t c : pick) out.push_back(cand.rows[c]);
  if (picks == k) return out;
  // Fewer than k distinct candidates: only with fewer than k distinct points
  // (R then stops with an error) or after the cap on rounds.  The degenerate
  // rule goes on with the lowest rows of x not taken yet.
  std::vector<char> used(n, 0);
  for (std::int64_t r : out) used[r] = 1;
  std::int64_t from = 0;
  while (static_cast<int>(out.size()) < k) {
    while (from < n && used[from]) ++from;
    if (from < n) used[from] = 1;
    out.push_back(from < n ? from : 0);
  }
  return out;
}

std::vector<std::int64_t> initial_rows(Engine& engine, const StartSpec& spec, IterationObserver* observer) {
  const int k = spec.k;
  if (spec.kind == StartSpec::Kind::kKmeansPP) {
    if (static_cast<std::size_t>(1 + static_cast<std::size_t>(k - 1) * spec.L) != spec.unif.size())
      throw EngineError(EngineError::Kind::kInvalid, "k-means++: wrong number of uniforms");
    const std::int64_t first = uniform_index(spec.unif[0], engine.n());
    return engine.greedy(nullptr, nullptr, engine.n(), first, k, spec.unif.data() + 1, spec.L, observer);
  }
  if (spec.kind == StartSpec::Kind::kKmeansPar) {
    const ParResult cand = par_candidates(engine, k, spec.seed, observer);
    return par_reduce(engine, k, spec.seed, cand, observer);
  }
  throw EngineError(EngineError::Kind::kInvalid, "initial_rows: not a seeded start");
}

}  // namespace gk
