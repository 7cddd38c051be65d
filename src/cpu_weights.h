// cpu_weights.h: observation weights in the CPU engine (src/weights.h says
// what they mean): the weighted centers and within-cluster sums of squares
// of Lloyd's algorithm and the weighted totss, added in stats' order.
//
// stats::kmeans() adds a cluster's rows one after another in row order; on
// rows replicated w times it adds x_i w times in a row, each addition
// rounded, which is not w * x_i rounded once.  repeat_block() gives the
// result of those w additions exactly, in O(1) work per binade that the sum
// crosses instead of O(w).  The weighted sums are taken per cluster in row
// order (clusters in parallel), so a weighted fit does not depend on the
// number of threads, and with whole weights it has the bits of the
// one-thread fit (and of stats::kmeans()) of the replicated rows.  Memory:
// the previous labels (4 bytes per row) and O(k d).
#ifndef GPUKMEANS_CPU_WEIGHTS_H
#define GPUKMEANS_CPU_WEIGHTS_H

#include <cstdint>
#include <vector>

namespace gk {

// s after w repetitions of: for c = 0 .. d-1: s = s + t[c], each addition
// rounded in T (double or long double).  For d > 1 the t[c] must not have
// opposite signs (they are squares here).  Exact: the same bits as the loop.
template <typename T>
T repeat_block(T s, const T* t, int d, std::uint64_t w);

// Lloyd's weighted sums over x (n x d column-major in T, the engine's stored
// values) with weights w (n, >= 0).
template <typename T>
class WeightedSums {
 public:
  WeightedSums(const T* x, std::int64_t n, int d, int k, const double* w, int threads);

  // The centers (k x d column-major) of the labels (0-based): per cluster,
  // per coordinate, the sum of w_i x_i in row order (whole w_i: x_i added w_i
  // times) divided by the sum of the weights in row order; 0/0 = NaN for a
  // cluster of weight 0.  Clusters whose rows are those of the previous call
  // keep their centers.
  void centers(const int* labels, double* centers);

  // Within-cluster sums of squares of the labels w.r.t. the centers: per
  // cluster, in row order, each row's squared differences in coordinate
  // order (whole w_i: the row's d terms added w_i times in a row).
  std::vector<double> withinss(const int* labels, const double* centers);

 private:
  const T* x_;
  std::int64_t n_;
  int d_, k_;
  const double* w_;
  int threads_;
  std::vector<int> prev_;              // the labels of the previous centers() call
  std::vector<double> cen_;            // its centers
  std::vector<char> dirty_;            // clusters to sum again
};

// sum_i w_i ||x_i - m||^2 about the weighted mean m, as cpu_totss() computes
// the unweighted one (per column in long double, rows in order, in chunks
// of kTotssChunkRows; whole w_i: the row's term added w_i times, split
// where the replicated rows' chunks end), so that whole weights give the
// bits of cpu_totss() on the replicated rows.
double cpu_weighted_totss(const double* x, std::int64_t n, int d, const double* w, int threads);

}  // namespace gk

#endif
