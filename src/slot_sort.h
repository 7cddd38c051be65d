// slot_sort.h: the places of a stable counting sort whose rows were counted
// by slot (threads.h: slot t takes a contiguous stretch of the rows), for
// the scatters of the CPU spatial order (cpu_spatial.cpp) and of the
// distinct rows' parts (distinct_rows.cpp).
#ifndef GPUKMEANS_SLOT_SORT_H
#define GPUKMEANS_SLOT_SORT_H

#include <cstdint>
#include <vector>

#include "threads.h"

namespace gk {

// at[t * buckets + b]: on entry slot t's count of its rows in bucket b; on
// return the place of slot t's first row in bucket b, places in order of
// (bucket, slot), so that scattering each slot's rows in order, each to
// at[t * buckets + b]++, is stable.  The buckets are cut into nt stretches,
// each stretch's first place from the totals of those before it; C holds
// the rows' count (int where it stays below 2^31).
template <typename C>
void slot_places(C* at, int nt, int buckets) {
  std::vector<std::int64_t> stretch(static_cast<std::size_t>(nt) + 1, 0);
  for_each_slot(nt, [&](int s) {
    std::int64_t tot = 0;
    for (int t = 0; t < nt; ++t)
      for (int b = static_cast<int>(std::int64_t(buckets) * s / nt); b < std::int64_t(buckets) * (s + 1) / nt; ++b)
        tot += at[static_cast<std::size_t>(t) * buckets + b];
    stretch[s + 1] = tot;
  });
  for (int s = 0; s < nt; ++s) stretch[s + 1] += stretch[s];
  for_each_slot(nt, [&](int s) {
    C run = static_cast<C>(stretch[s]);
    for (int b = static_cast<int>(std::int64_t(buckets) * s / nt); b < std::int64_t(buckets) * (s + 1) / nt; ++b)
      for (int t = 0; t < nt; ++t) {
        C& v = at[static_cast<std::size_t>(t) * buckets + b];
        const C m = v;
        v = run;
        run += m;
      }
  });
}

}  // namespace gk

#endif  // GPUKMEANS_SLOT_SORT_H
