// fit_driver.h: fits written once against the engine interface (engine.h):
// restarts and the best start (fit_starts), the initialisations
// (initial_rows, src/init_driver.cpp) and Lloyd's algorithm over several
// engines that each hold a part of the rows (lloyd_parts).  Plain C++, no R.
#ifndef GPUKMEANS_FIT_DRIVER_H
#define GPUKMEANS_FIT_DRIVER_H

#include <cstdint>
#include <functional>
#include <vector>

#include "engine.h"
#include "for_each_part.h"  // (lloyd_parts runs the parts' steps and within-SS calls at once)

namespace gk {

// One start: given centers, or the random numbers of a seeded initialisation
// drawn in R (R/starts.R).
struct StartSpec {
  enum class Kind { kCenters, kKmeansPP, kKmeansPar };
  Kind kind = Kind::kCenters;
  int k = 0;
  std::vector<double> centers;  // kCenters: k x d, column-major
  std::vector<double> unif;     // kKmeansPP: 1 + (k - 1) * L uniforms
  int L = 0;                    // kKmeansPP: candidates per greedy step
  std::uint64_t seed = 0;       // kKmeansPar: the counter generator's seed
};

// The starts of a fit, one at a time and in order (R draws each one when
// asked, so that its random numbers are drawn in stats' order).
class StartSource {
 public:
  virtual ~StartSource() = default;
  virtual int count() const = 0;
  virtual StartSpec next(int s) = 0;  // s = 0 .. count() - 1
};

struct StartSummary {
  double tot_withinss = 0.0;
  int iter = 0;
  bool empty = false;                  // some cluster ended empty
  std::vector<std::int64_t> init_rows;  // rows chosen by the initialisation (0-based), if seeded
};

struct FitOutcome {
  LloydFit best;
  int best_start = 0;  // 0-based: the first start of the smallest tot.withinss
  std::vector<StartSummary> starts;
  double totss = 0.0;
  double seconds_init = 0.0, seconds_compute = 0.0, seconds_download = 0.0;
};

// Fits every start of `source` on the engine (which holds `data`) and keeps
// the best by tot.withinss, ranked as stats ranks them (R's sum()).
// labels_out (data.n ints, or nullptr): the labels' destination, given to
// the engine for each start while it does not hold the best start's labels;
// the best's cluster is a view of it where it landed there (otherwise the
// caller copies them).
FitOutcome fit_starts(Engine& engine, const HostData& data, StartSource& source, int max_iter,
                      IterationObserver* observer, int* labels_out = nullptr);

// The rows (0-based) a seeded start chooses as initial centers
// (src/init_driver.cpp).
std::vector<std::int64_t> initial_rows(Engine& engine, const StartSpec& spec, IterationObserver* observer);

// The two phases of k-means|| (initial_rows runs both): the candidates of
// the oversampling rounds, and their reduction to k rows of x.
struct ParResult {
  std::vector<std::int64_t> rows;  // the candidates, in the order they were added
  std::vector<double> weight;      // points nearest to each (the first of equals)
  int rounds = 0;
};
ParResult par_candidates(Engine& engine, int k, std::uint64_t seed, IterationObserver* observer);
std::vector<std::int64_t> par_reduce(Engine& engine, int k, std::uint64_t seed, const ParResult& cand,
                                     IterationObserver* observer);

// The reduction's weighted greedy picks alone: at most k indices into the m
// candidates rows[0..m) (rows of the engine's x) with weights `weight`.
std::vector<std::int64_t> par_reduce_picks(Engine& engine, const std::int64_t* rows, const std::vector<double>& weight,
                                           int k, std::uint64_t seed, IterationObserver* observer);

// Squared distances must neither overflow nor (single precision) underflow,
// given the columns' max |stored x| over all the rows: else
// EngineError(kData) says what to do.
void check_range(const std::vector<double>& maxabs, Precision precision);

// The pieces of Lloyd's algorithm over parts of the rows (lloyd_parts, and
// the MPI ranks of src/block_driver.h): the fixed-point scales of the sums
// from the columns' max |stored x| over all parts, the new centers (stored
// coordinates; 0/0 = NaN for an empty cluster) from the sums of all parts,
// and the within-SS from its fixed-point sums.
std::vector<int> step_scales(const std::vector<double>& maxabs);
std::vector<double> centers_from_sums(const std::vector<Fixed128>& sum, const std::vector<std::int64_t>& count,
                                      const std::vector<int>& scale, int k);
std::vector<double> withinss_from_sums(const std::vector<Fixed128>& wsum, const std::vector<std::uint32_t>& maxterm);


// Lloyd's algorithm over engines that each hold a part of the rows (in row
// order), step by step with exact partial sums: the result does not depend
// on how the rows are split, and on one CUDA engine it is bit for bit
// gk_cuda_lloyd's.  centers: k x d, column-major; cluster in row order.
// The parts' calls run concurrently (for_each_part), combined in part order.
// map (optional): applied to the centers after every update (Engine::lloyd_mapped).
// into: the labels' destination (Engine::lloyd).
LloydFit lloyd_parts(const std::vector<Engine*>& parts, const double* centers, int k, int max_iter,
                     IterationObserver* observer, const CenterMap& map = CenterMap(), Labels into = Labels());

}  // namespace gk

#endif
