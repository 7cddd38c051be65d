// cpu_init.h: k-means++ and k-means|| initialisation on the CPU (OpenMP).
//
// The CPU engine's versions are the reference: the CUDA engine
// (src/cuda/init_pp.cu, init_par.cu) does the same arithmetic in the same order (see
// init_order.h), so in double precision both choose the same rows.
// Every function returns row indices of x (0-based); the caller takes the
// centers from x.  Plain C++, no R headers.
#ifndef GPUKMEANS_CPU_INIT_H
#define GPUKMEANS_CPU_INIT_H

#include <cstdint>
#include <functional>
#include <vector>

#include "observer.h"

namespace gk {

// ---- the fixed-order sum tree (init_order.h, points 2 and 3) ---------------

// Levels 1, 2, ... of the sum tree over v (n values); up.back() has one
// element unless n == 1 (then up is empty and the total is v[0]).
void sum_tree_build(const double* v, std::int64_t n, std::vector<std::vector<double>>& up,
                    int threads);
double sum_tree_total(const double* v, std::int64_t n, const std::vector<std::vector<double>>& up);
// D^2 sampling: the chosen index, or -1 when the total is not > 0.
std::int64_t sum_tree_sample(const double* v, std::int64_t n,
                             const std::vector<std::vector<double>>& up, double u);

// ---- k-means++ -----------------------------------------------------------

// Greedy k-means++ on x (n x d, column-major, double).  unif holds
// 1 + (k - 1) * L uniforms from R: unif[0] picks the first center
// (floor(u * n)); step s (1-based) uses unif[1 + (s-1)*L + j], j < L, to draw
// L candidates by D^2 sampling and keeps the one giving the smallest
// potential (the first of equals).  Returns k row indices, or an empty
// vector if the observer asked to stop.
std::vector<std::int64_t> cpu_kmeanspp(const double* x, std::int64_t n, int d, int k,
                                       const double* unif, int L, int threads,
                                       IterationObserver* observer);

// ---- k-means|| -------------------------------------------------------------

struct ParCandidates {
  std::vector<std::int64_t> idx;  // candidate rows, in the order they were added
  std::vector<double> weight;     // points nearest to each (ties: first candidate)
  int rounds = 0;                 // oversampling rounds run
  bool interrupted = false;
};

// The oversampling phase of k-means|| (Bahmani et al. 2012): first center
// from u(seed, 0, 0), then rounds of independent Bernoulli draws with
// p_i = (l * D2_i) / phi, l = 2k, u(seed, r, i) < p_i; at least
// GK_PAR_ROUNDS rounds, more while fewer than k distinct (positive-weight)
// candidates and phi > 0.  Then the weight of each candidate.
ParCandidates cpu_kmeans_par_candidates(const double* x, std::int64_t n, int d, int k,
                                        std::uint64_t seed, int threads,
                                        IterationObserver* observer);

// The greedy part of the reduction on another engine: picks `picks`
// candidate indices (0-based into the candidates), the first being `first`;
// step s >= 1 draws its L candidates with unif[(s - 1) * L + j].
using ReduceGreedy = std::function<std::vector<std::int64_t>(std::int64_t first, int picks,
                                                             const double* unif, int L)>;

// The reduction of k-means|| (shared by both engines): weighted greedy
// k-means++ over the candidates (random numbers from stream
// GK_PAR_REDUCE_STREAM of the seed), on the CPU or, when greedy is given,
// by it; then, if there are fewer than k candidates, the degenerate rule.
// Returns k row indices of x.
std::vector<std::int64_t> kmeans_par_reduce(const double* x, std::int64_t n, int d, int k,
                                            std::uint64_t seed,
                                            const std::vector<std::int64_t>& cand,
                                            const std::vector<double>& weight, int threads,
                                            const ReduceGreedy* greedy = nullptr);

// The oversampling factor l and the reduction's candidates per step.
double kmeans_par_oversampling(int k);
int kmeanspp_candidates(int k);

}  // namespace gk

#endif
