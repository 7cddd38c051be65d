// spherical.h: spherical k-means (gpu_kmeans(distance = "cosine"); Dhillon
// and Modha 2001) on any engine, without code of its own in the engines.
//
// The rows are scaled to unit length once, on the host (normalize_rows), and
// an engine holds them as its data.  make_spherical_engine() wraps that
// engine so that the fit driver (fit_starts, src/fit_driver.h) runs
// spherical k-means unchanged:
//   * lloyd(): Engine::lloyd_mapped with sphere_map(): after every update
//     the centers (means of their members) are scaled to unit length, so a
//     center is the normalised mean of its members; a center whose members
//     add up to exactly zero has no direction and becomes NaN, as the
//     center of an empty cluster (its members go elsewhere at the next
//     step, and never return to it);
//   * the assignment is the engine's own exact one: the smallest squared
//     Euclidean distance between the unit row and the unit centers (ties to
//     the lowest index, NaN centers never).  On the unit sphere
//     |x - c|^2 = 2 - 2 cos(x, c), so this is the largest cosine; computed,
//     it differs from the argmax of the rounded dot products only where two
//     cosines agree to within a few units in the last place (1e-15), and it
//     keeps full relative accuracy for rows close to their center, where
//     1 - x.c cancels;
//   * withinss[c] = sum over the members of 1 - cos(x_i, c), computed as
//     half their squared distances (|x - c|^2 / 2, the same on the sphere);
//   * totss() = sum over all rows of 1 - cos(x_i, m), m the normalised mean
//     of all rows: the tot.withinss of the one-cluster fit, min over unit c
//     of sum(1 - cos(x_i, c)) = n - |sum x_i|; n when the rows add up to
//     zero;
//   * the initialisations (k-means++, k-means||) are the engine's D^2
//     seeding on the unit rows: |x - c|^2 = 2 - 2 cos, so they sample by
//     1 - (largest cosine to the chosen centers), as spherical k-means++.
// Everything else (assign for predict, step, quality) is the wrapped
// engine's, on the unit rows.
#ifndef GPUKMEANS_SPHERICAL_H
#define GPUKMEANS_SPHERICAL_H

#include <cstdint>
#include <memory>

#include "engine.h"

namespace gk {

// Each row of the m x d column-major matrix a scaled to unit Euclidean
// length, into out (m x d column-major; may be a itself):
//   out_ij = (a_ij 2^-e_i) / sqrt(sum_j (a_ij 2^-e_i)^2),
// the sum in coordinate order, each operation rounded on its own (no FMA),
// where 2^-e_i is the power of two that puts the row's largest |a_ij| in
// [1, 2) (clamped to [2^-1023, 2^1000]): an exact scaling, so the squares
// neither overflow nor underflow for any finite row, and the result is that
// of the plain formula wherever the plain formula does not overflow.  A row
// of zeros or with a NaN gives NaN.  Returns the first (0-based) row of
// zeros, or -1.
std::int64_t normalize_rows(const double* a, std::int64_t m, int d, double* out, int threads);

// The centers' map of spherical k-means: each center (k x d, column-major)
// scaled to unit length by normalize_rows (a zero or NaN center: NaN).
CenterMap sphere_map(int d);

// The engine that runs spherical k-means on `inner`, whose data are the unit
// rows (see above).
std::unique_ptr<Engine> make_spherical_engine(std::unique_ptr<Engine> inner);

}  // namespace gk

#endif
