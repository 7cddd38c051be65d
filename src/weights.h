// weights.h: what observation weights mean on every engine (HostData::w),
// and the helpers that the device-agnostic drivers share.  Plain C++, no R.
//
// A weighted fit minimises sum_i w_i ||x_i - c(i)||^2.  Definitions, for
// every engine that supports weights (Engine::supports_weights()):
//  * Lloyd: the assignment ignores the weights (each row to its nearest
//    center, as without weights); a center is the weighted mean of its
//    rows; a cluster whose rows all weigh 0 is empty (center 0/0 = NaN, as
//    stats gives an empty cluster); withinss, totss (about the weighted
//    mean) are weighted sums; size is the count of rows; a row of weight 0
//    adds nothing anywhere (as if dropped) but is assigned a cluster;
//    convergence as without weights (no label changed).
//  * Whole weights (w_i in 0, 1, 2, ... <= 2^53) are repeated rows: an
//    engine gives, in double precision, the bits of its own fit of the rows
//    replicated w_i times in place (x[rep(seq_len(n), w), ]), except size.
//    The CPU engine adds in stats' order whatever its threads (its cluster
//    sums add x_i w_i times in a row, src/cpu_weights.h), so it gives the
//    bits of its one-thread fit, and of stats::kmeans(), of the replicated
//    rows; an engine with fixed-point sums (src/fixed_point.h) would add w_i
//    times the rounded x_i, the same integer as w_i additions.  Other
//    weights: each row's term times w_i, added in the same order.
//  * Initialisation (src/init_driver.cpp): D^2 sampling draws row i with
//    probability w_i D2_i / sum_j w_j D2_j, the first center with
//    probability w_i / sum w; k-means|| samples row i in a round with
//    probability min(1, l w_i D2_i / phi), phi = sum w D2, and weighs each
//    candidate by the weight of the rows nearest to it.  The products use
//    the weights scaled by a power of two (sampling_scale()), exact, so that
//    w D2 cannot overflow; rows of weight 0 are never drawn.
#ifndef GPUKMEANS_WEIGHTS_H
#define GPUKMEANS_WEIGHTS_H

#include <cmath>
#include <cstdint>
#include <vector>

namespace gk {

// A whole weight that a fit takes as that many repeated rows.
inline bool whole_weight(double w) { return w >= 0 && w == std::floor(w) && w <= 9007199254740992.0; }

// The power of two 2^-e that brings the largest weight into [0.5, 1) (the
// scale is at most 2^1000, for weights below the normal range).
inline double sampling_scale(const double* w, std::int64_t n) {
  double top = 0.0;
  for (std::int64_t i = 0; i < n; ++i)
    if (w[i] > top) top = w[i];
  if (!(top > 0)) return 1.0;
  int e = 0;
  std::frexp(top, &e);
  return std::ldexp(1.0, e < -1000 ? 1000 : -e);
}

// The weights times sampling_scale(): the weights of D^2 sampling.
inline std::vector<double> sampling_weights(const double* w, std::int64_t n) {
  const double s = sampling_scale(w, n);
  std::vector<double> out(w, w + n);
  for (double& v : out) v *= s;
  return out;
}

}  // namespace gk

#endif
