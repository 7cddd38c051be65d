// cpu_engine.h: the multi-threaded CPU engine (plain C++ with OpenMP, no R).
//
// It follows the rules of stats::kmeans(algorithm = "Lloyd") to the letter:
// squared distances summed over coordinates in order, ties to the lowest
// center, stop when no point changed, empty clusters get NaN centers (0/0),
// withinss from the final centers and labels.  With one thread the sums are
// taken in the same order as stats' C code, so the results are bitwise equal.
//
//   cpu_engine.cpp  the engine object (data, precision, threads, step state)
//   cpu_lloyd.cpp   Lloyd's algorithm, the assignment, totss and the step
//   cpu_bounds.cpp  exact distance bounds for Lloyd (Hamerly, Yinyang): cpu_bounds.h
//   cpu_init.cpp    greedy k-means++ and the k-means|| rounds
//   cpu_quality.cpp the quality pass (silhouette, distances to the centers)
#ifndef GPUKMEANS_CPU_ENGINE_H
#define GPUKMEANS_CPU_ENGINE_H

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "cpu_points.h"
#include "cpu_spatial.h"
#include "engine.h"
#include "threads.h"

// Distance kernels are built for the baseline target and an AVX2 clone
// (chosen at load time), never with FMA, which would change the rounding of
// the distances.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define GK_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define GK_CLONES
#endif

namespace gk {

// ---- cpu_stream_engine.cpp ----------------------------------------------------

// The CPU engine over a reader's rows (HostData::reader, x nullptr), read
// block by block at every pass (make_cpu_engine makes it); it throws
// SourceNotResident, having read nothing, where the caller allows no
// streaming (HostData::reader_streams false), with observation weights, and
// for a reader that does not read its rows again cheaply.
std::unique_ptr<Engine> make_cpu_stream_engine(const HostData& data, Precision precision, int threads,
                                               const double* shift);

// ---- cpu_lloyd.cpp: x is n x d column-major in T (double or float) ----------

// Lloyd's algorithm from centers0 (k x d, column-major, in the coordinates of
// x); throws Interrupted when the observer says stop.  map (optional): applied
// to the centers after every update (Engine::lloyd_mapped).  weights:
// observation weights (src/weights.h; sums in cpu_weights.h), or nullptr.
// into: the labels' destination (Engine::lloyd).  spatial (optional): where
// the points ordered in space (cpu_spatial.h) are kept between the fits on
// x; without it a fit that orders them makes its own.
template <typename T>
LloydFit cpu_lloyd(const T* x, std::int64_t n, int d, int k, const double* centers0, int max_iter, int threads,
                   IterationObserver* observer, const CenterMap& map = CenterMap(),
                   const double* weights = nullptr, Labels into = Labels(), SpatialCache<T>* spatial = nullptr);

// x given block by block, in row order (rows x d, column-major, in T):
// blocks(fn) calls fn(first, rows, xb) for each (the streamed CPU engine's
// blocks, read again at every call).
template <typename T>
using StoredBlocks =
    std::function<void(const std::function<void(std::int64_t first, std::int64_t rows, const T* xb)>&)>;

// Rows [first, first + rows) of x into out (rows x d, column-major, in T),
// from several threads at once; or empty, where x cannot be read so.
template <typename T>
using StoredRange = std::function<void(std::int64_t first, std::int64_t rows, T* out)>;

// cpu_lloyd (no map, no weights) over x given block by block: its fit, bit
// for bit, with the same threads (the same contiguous ranges of rows add
// their points in point order), with its distance bounds and kinds of
// iteration (the bounds keep per-point state; a pass moves them to a
// block's rows).  The observer is polled between blocks.
// range (may be empty): the final within-SS pass reads each thread's rows
// at once through it.
template <typename T>
LloydFit cpu_lloyd_blocks(const StoredBlocks<T>& blocks, const StoredRange<T>& range, std::int64_t n, int d, int k,
                          const double* centers0, int max_iter, int threads, IterationObserver* observer,
                          Labels into = Labels());

// Nearest center (1-based) of every row of x.
void cpu_assign(const double* x, std::int64_t n, int d, int k, const double* centers, int threads, int* cluster);

// sum(scale(x, scale = FALSE)^2) to rounding: the column means, then the
// squared deviations, each added in long double per column in chunks of
// kTotssChunkRows (column_sum.h; the same bits for any threads).  means:
// NULL, or the column means as column_sum.h makes them, already computed
// (the CUDA engine's staged upload): one pass over x less.
double cpu_totss(const double* x, std::int64_t n, int d, int threads, const double* means = nullptr);

// max |x_ij| per column.
template <typename T>
std::vector<double> cpu_column_maxabs(const T* x, std::int64_t n, int d, int threads);

// One assignment step (labels: 0-based, -1 = none; updated) with sums
// rounded to 2^-scale[j] (round_fixed), added in any order: the same bits
// for any number of threads and any split of the rows.
template <typename T>
StepSums cpu_step(const T* x, std::int64_t n, int d, int k, const double* centers, const std::vector<int>& scale,
                  int* labels, int threads);

// Within-SS of labels w.r.t. centers in fixed point, as the CUDA engine
// computes it: maxterm[c] = upper 32 bits of the largest term of cluster c;
// sums at scale wss_scale(maxterm[c]).
template <typename T>
std::vector<std::uint32_t> cpu_withinss_maxterm(const T* x, std::int64_t n, int d, int k, const double* centers,
                                                const int* labels, int threads);
template <typename T>
std::vector<Fixed128> cpu_withinss_sums(const T* x, std::int64_t n, int d, int k, const double* centers,
                                        const int* labels, const std::vector<std::uint32_t>& maxterm,
                                        int threads);

// ---- cpu_quality.cpp (the reference for src/cuda/quality.cu) ---------------

// Engine::quality on x (n x d column-major in T).
template <typename T>
QualityPoints cpu_quality(const T* x, std::int64_t n, int d, const QualityRequest& request, int threads,
                          IterationObserver* observer);

// ---- cpu_init.cpp (the reference for src/cuda/init_pp.cu, init_par.cu) -------

// Greedy k-means++ over the rows `rows` of x (m; nullptr: all) with weights
// (nullptr: 1), as Engine::greedy; of the rows of `points` (cpu_points.h:
// x in memory, or a reader's blocks at every pass), the same picks.
std::vector<std::int64_t> cpu_greedy(const CpuPoints& points, const std::int64_t* rows, const double* weight,
                                     std::int64_t m, std::int64_t first, int picks, const double* unif, int L,
                                     int threads, IterationObserver* observer);
std::vector<std::int64_t> cpu_greedy(const double* x, std::int64_t n, int d, const std::int64_t* rows,
                                     const double* weight, std::int64_t m, std::int64_t first, int picks,
                                     const double* unif, int L, int threads, IterationObserver* observer);

// The k-means|| reduction for an engine that stores x as float(x - shift)
// (shift: d values; nullptr: as x itself): cpu_greedy over the rows `rows`
// (m, each in [0, n), else kInvalid) as that engine stores them, in double
// precision, on the host; the picks index rows.  (Several devices, streamed
// x: the candidates live in host memory, not in one device's.)
std::vector<std::int64_t> cpu_greedy_stored(const double* x, std::int64_t n, int d, const double* shift,
                                            const std::int64_t* rows, const double* weight, std::int64_t m,
                                            std::int64_t first, int picks, const double* unif, int L, int threads,
                                            IterationObserver* observer);

// The initialisation of a block of rows [offset, offset + n) of `total`
// (Engine::block_init) on x (n x d, double).
std::unique_ptr<BlockInit> make_cpu_block_init(const double* x, std::int64_t n, int d, std::int64_t offset,
                                               std::int64_t total, int threads);

// The k-means|| rounds on the rows of `points` (x in memory, or a reader's
// blocks read at every pass; they must outlive the rounds), as
// Engine::par_*; with observation weights w (or nullptr), as src/weights.h
// defines them.
class CpuParRounds {
 public:
  CpuParRounds(const CpuPoints& points, int threads, const double* w = nullptr);
  double begin(std::int64_t first);
  std::vector<std::int64_t> round(std::uint64_t seed, int r, double l, double phi, double* phi_out,
                                  IterationObserver* observer);
  std::vector<double> weights(std::int64_t m) const;

 private:
  double add(const std::int64_t* rows, std::int64_t m, IterationObserver* observer);
  const CpuPoints& pts_;
  std::int64_t n_;
  int d_, threads_;
  const double* w_;                // observation weights, or nullptr
  double wscale_ = 1.0;            // their sampling scale (weights.h)
  std::vector<double> wd2_;        // weighted: w_i wscale_ D2_i, what is sampled
  std::int64_t count_ = 0;         // candidates so far
  std::vector<double> d2_;         // squared distance to the nearest candidate
  std::vector<std::int64_t> lab_;  // the nearest candidate (the first of equals)
  std::vector<std::vector<double>> tree_;
};

}  // namespace gk

#endif
