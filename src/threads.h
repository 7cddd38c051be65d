// threads.h: OpenMP thread counts and ids for the CPU code, with the same
// answers when the compiler has no OpenMP (one thread).
#ifndef GPUKMEANS_THREADS_H
#define GPUKMEANS_THREADS_H

#include <algorithm>
#include <cstdint>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace gk {

// Number of threads that `threads` (0 = all) resolves to.
inline int resolve_threads(int threads) {
#ifdef _OPENMP
  if (threads <= 0) threads = omp_get_max_threads();
#else
  threads = 1;
#endif
  return std::max(1, threads);
}

// Threads for `work` units: at most one per unit, at least one.
inline int threads_for(int threads, std::int64_t work) {
  return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(resolve_threads(threads), work)));
}

// This thread's number inside a parallel region.
inline int thread_id() {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

}  // namespace gk

#endif
