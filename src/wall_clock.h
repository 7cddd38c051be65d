// wall_clock.h: seconds on a monotonic clock, for the engines' timings.
#ifndef GPUKMEANS_WALL_CLOCK_H
#define GPUKMEANS_WALL_CLOCK_H

#include <chrono>

namespace gk {

inline double wall_seconds() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

}  // namespace gk

#endif
