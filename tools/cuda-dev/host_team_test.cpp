// host_team_test.cpp: the team of host threads of the staged copies
// (src/cuda/detail/host_team.hpp), alone, on any machine (no GPU): every
// element of every loop is visited exactly once, for team sizes 1-9, loop
// sizes 0-200000, part minima and alignments that leave any number of
// parts, the workers started as loops first need them.  Exit status 1 on a
// miss.  Build and run: make -C tools/cuda-dev host_team_test && ./tools/cuda-dev/host_team_test
// (with -fsanitize=thread: make ... HOST_TEAM_FLAGS=-fsanitize=thread).
#include <atomic>
#include <cstdio>
#include <vector>

#include "host_team.hpp"

int main() {
  long bad = 0, loops = 0;
  for (int rep = 0; rep < 200; ++rep) {
    gk::HostTeam team(1 + rep % 9);
    for (int it = 0; it < 50; ++it, ++loops) {
      const size_t total = (size_t)((rep * 7919L + it * 104729L) % 200000L);
      std::vector<std::atomic<int>> hit(total);
      for (auto &h : hit) h = 0;
      team.run(total, 1 + (it % 5) * 1000, 1 + it % 16, [&](size_t a, size_t b) {
        for (size_t t = a; t < b; ++t) hit[t]++;
      });
      for (auto &h : hit) bad += h != 1;
    }
  }
  std::printf("host_team_test: %ld loops, %ld elements visited other than once\n", loops, bad);
  return bad != 0;
}
