// threads.h: OpenMP thread counts and ids for the CPU code, with the same
// answers when the compiler has no OpenMP (one thread).
#ifndef GPUKMEANS_THREADS_H
#define GPUKMEANS_THREADS_H

#include <algorithm>
#include <cstdint>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "process_guard.h"

namespace gk {

// Number of threads that `threads` (0 = all) resolves to: at most OpenMP's
// thread limit and 4 per processor (a larger request cannot help and can
// fail to create threads), and one in a forked child (process_guard.h).
inline int resolve_threads(int threads) {
#ifdef _OPENMP
  if (in_forked_child()) return 1;
  if (threads <= 0) threads = omp_get_max_threads();
  threads = std::min(threads, std::max(1, omp_get_thread_limit()));
  threads = std::min(threads, 4 * std::max(1, omp_get_num_procs()));
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

// The number of threads of the current team (1 outside a parallel region).
inline int team_size() {
#ifdef _OPENMP
  return omp_get_num_threads();
#else
  return 1;
#endif
}

// Runs body(t) exactly once for each slot t = 0 .. nt - 1 on an OpenMP team
// of at most nt threads.  A team can be smaller than asked (OMP_DYNAMIC on a
// busy machine, a region nested in another, thread limits): its threads
// then take several slots each, so work split by slot is never skipped, and
// partial results combined in slot order do not depend on the team's size.
// body must not throw.
template <typename Body>
void for_each_slot(int nt, Body&& body) {
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
  {
    const int team = team_size();
    for (int t = thread_id(); t < nt; t += team) body(t);
  }
#else
  for (int t = 0; t < nt; ++t) body(t);
#endif
}

}  // namespace gk

#endif
