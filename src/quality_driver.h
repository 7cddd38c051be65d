// quality_driver.h: choosing k, written once against the engine interface
// (engine.h): the rows in cluster order (cluster_order), the per-cluster
// sums of a partition's quality pieces (quality_sums; R turns them into the
// silhouette, Calinski-Harabasz and Davies-Bouldin indices, R/sweep.R), and
// the sweep over k on one engine, the data taken once (fit_sweep).  Plain
// C++, no R.
#ifndef GPUKMEANS_QUALITY_DRIVER_H
#define GPUKMEANS_QUALITY_DRIVER_H

#include <cstdint>
#include <vector>

#include "engine.h"
#include "fit_driver.h"

namespace gk {

// The rows of each cluster in row order (a stable counting sort of the
// 1-based labels; throws EngineError(kInvalid) for a label outside 1..k).
ClusterOrder cluster_order(const int* cluster, std::int64_t n, int k);

// Number of non-empty clusters of an order.
int nonempty_clusters(const ClusterOrder& order);

// What a sweep (or one call) asks of the quality pass.
struct QualityOptions {
  QualityRequest::Silhouette silhouette = QualityRequest::Silhouette::kNone;
  std::vector<std::int64_t> rows;  // exact silhouette of these rows only (0-based; the sampled silhouette)
  bool center_dist = true;         // Davies-Bouldin's per-cluster mean distances to the centers
};

// A partition's quality pieces summed per cluster, in row order (the same
// bits on every engine that gives the same per-row values).
struct QualitySums {
  std::vector<std::int64_t> size;         // k
  std::vector<double> center_dist;        // k, sums of the rows' distances to their center (when asked)
  bool silhouette = false;                // false: fewer than 2 non-empty clusters, or as many as rows
  std::vector<double> width;              // k, sums of silhouette widths (of the sampled rows of each cluster)
  std::vector<std::int64_t> width_count;  // k, rows counted in width
  double seconds = 0.0;
};

// The quality pieces of the partition `cluster` (n labels, 1-based) with
// `centers` (k x d, column-major, original coordinates).
QualitySums quality_sums(Engine& engine, const int* cluster, const double* centers, int k,
                         const QualityOptions& options, IterationObserver* observer);

// One k of a sweep: the best of its starts and the quality of that fit.
struct SweepStep {
  FitOutcome fit;
  QualitySums quality;
};

// Fits the starts of every source in turn on `engine` (which holds `data`;
// it is not taken again), source s with max_iter[s] iterations, each fit
// followed by its quality pass.  The observer sees the starts numbered
// across all sources (1 .. total).
std::vector<SweepStep> fit_sweep(Engine& engine, const HostData& data, const std::vector<StartSource*>& sources,
                                 const std::vector<int>& max_iter, const QualityOptions& options,
                                 IterationObserver* observer);

}  // namespace gk

#endif
