// tc_layout_check.cpp: the packed points' layout of tc_tiles.cuh on the CPU.
// tc_pack_group (the packing, run for every float4 of the packed points)
// and tc_packed_at (its inverse, which the double filter's settle pass
// reads a point's image with) are extracted by the Makefile; every
// coordinate of every point must be found where tc_packed_at says, each
// packed float must belong to one point or be padding (zero), at shapes
// with partial tiles and partial chunks.
//   make tc_layout_check && ./tc_layout_check
#include <cstddef>
#include <cstdio>
#include <vector>

#define __device__
#define __host__
#define __forceinline__ inline
struct float4 { float x, y, z, w; };
constexpr int kTcBM = 128, kTcChunk = 2048;
#include "build/tc_layout.inc"

struct Src {  // a distinct, exactly representable value for each (i, j)
  float operator()(long long i, int j) const { return (float)(1 + i * 1000 + j); }
};

int main() {
  long long bad = 0, checked = 0;
  for (long long n : {1LL, 127LL, 128LL, 300LL, 1000LL})
    for (int d : {1, 3, 8, 15, 16, 17, 24, 32, 40, 130}) {
      const size_t floats = (size_t)((n + kTcBM - 1) / kTcBM) * gk::tc_k16(d) * kTcChunk;
      std::vector<float> out(floats, -1.f);
      for (long long e = 0; e < (long long)(floats / 4); ++e) gk::tc_pack_group(Src{}, n, d, out.data(), e);
      std::vector<int> owner(floats, 0);
      for (long long i = 0; i < n; ++i)
        for (int j = 0; j < d; ++j) {
          const size_t at = gk::tc_packed_at(i, j, d);
          ++checked;
          if (at >= floats || out[at] != Src{}(i, j)) {
            if (++bad < 5) printf("BAD n %lld d %d: point %lld coordinate %d\n", n, d, i, j);
            continue;
          }
          ++owner[at];
        }
      for (size_t f = 0; f < floats; ++f)
        if (owner[f] > 1 || (owner[f] == 0 && out[f] != 0.f)) {
          if (++bad < 5) printf("BAD n %lld d %d: packed float %zu\n", n, d, f);
        }
    }
  printf("tc_packed_at: %lld coordinates checked, %lld wrong\n", checked, bad);
  return bad != 0;
}
