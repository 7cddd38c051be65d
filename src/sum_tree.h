// sum_tree.h: the fixed-order sum tree of src/parity.h (points 2 and 3) on
// the host: sums of non-negative values whose bits do not depend on the
// number of threads, and D^2 sampling over them.  Used by the CPU engine's
// initialisation and by the driver's k-means|| reduction.
#ifndef GPUKMEANS_SUM_TREE_H
#define GPUKMEANS_SUM_TREE_H

#include <cstdint>
#include <vector>

namespace gk {

// Levels 1, 2, ... of the sum tree over v (n values); up.back() has one
// element unless n == 1 (then up is empty and the total is v[0]).
void sum_tree_build(const double* v, std::int64_t n, std::vector<std::vector<double>>& up, int threads);
// Levels 2, 3, ... given level 1 in up[0].
void sum_tree_build_from_level1(std::vector<std::vector<double>>& up, int threads);
double sum_tree_total(const double* v, std::int64_t n, const std::vector<std::vector<double>>& up);
// D^2 sampling: the chosen index, or -1 when the total is not > 0.
std::int64_t sum_tree_sample(const double* v, std::int64_t n, const std::vector<std::vector<double>>& up,
                             double u);

}  // namespace gk

#endif
