// cpu_engine.h: the multi-threaded CPU engine (plain C++, no R headers).
//
// It follows the rules of stats::kmeans(algorithm = "Lloyd") to the letter:
// squared distances summed over coordinates in order, ties to the lowest
// center, stop when no point changed, empty clusters get NaN centers (0/0),
// withinss from the final centers and labels.  With one thread the sums are
// taken in the same order as stats' C code, so the results are bitwise equal.
#ifndef GPUKMEANS_CPU_ENGINE_H
#define GPUKMEANS_CPU_ENGINE_H

#include <cstdint>
#include <vector>
#include "observer.h"
#include "threads.h"

namespace gk {

struct LloydResult {
  std::vector<int> cluster;      // n, 1-based
  std::vector<double> centers;   // k x d, column-major
  std::vector<int> size;         // k
  std::vector<double> withinss;  // k
  int iter = 0;                  // as stats reports it (max_iter + 1: not converged)
  bool converged = false;
  bool interrupted = false;
  double seconds = 0.0;          // wall time of all iterations and withinss
};

// x: n x d column-major in T (double or float); centers0: k x d column-major.
template <typename T>
LloydResult cpu_lloyd(const T* x, std::int64_t n, int d, int k, const double* centers0,
                      int max_iter, int threads, IterationObserver* observer);

// Nearest center (1-based) of every row of x (n x d column-major).
void cpu_assign(const double* x, std::int64_t n, int d, int k, const double* centers,
                int threads, int* cluster);

// sum(scale(x, scale = FALSE)^2) as R computes it (long double accumulation).
double cpu_totss(const double* x, std::int64_t n, int d, int threads);

}  // namespace gk

#endif
