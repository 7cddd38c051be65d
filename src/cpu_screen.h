// cpu_screen.h: a certified fast screen for the CPU engine's nearest-center
// assignment (issue 15: the CPU engine at high d).
//
// The exact rule (cpu_block.h) costs three rounded operations per
// coordinate and pair.  The screen instead computes, for every pair,
//     G_j = |c_j|^2 - 2 x.c_j
// with fused multiply-adds in SIMD registers over a tile of points and
// centers (one FMA per coordinate and pair), keeps each point's smallest
// (G_1, its center) and second smallest (G_2) value, and certifies the
// center of G_1 when the error analysis (cpu_screen.cpp) proves that its
// exact squared distance, computed by the exact rule, is strictly below
// every other center's.  A certified point then needs the exact distance to
// that one center only; a point that is not certified (ties, near ties,
// duplicate centers, ranges where the bound is void) gets every exact
// distance, as before.  So labels and distances are those of the exact rule
// bit for bit, whatever the screen's own rounding.
//
// Used by the plain assignment of Lloyd's loop, by predict and by the step
// of split fits (cpu_lloyd.cpp).  Internal switch (environment variable,
// read when a fit starts; the tests use it): GPUKMEANS_CPU_SCREEN unset or
// "auto" (by shape: screen_wanted), "on" (whenever sound) or "off".
#ifndef GPUKMEANS_CPU_SCREEN_H
#define GPUKMEANS_CPU_SCREEN_H

#include <cstdint>
#include <vector>

namespace gk {

// Points of the tiles the screen works on: screen() takes a multiple of it.
constexpr int kScreenTile = 16;

// Whether fits of this shape screen (the switch above, then by shape).
bool screen_wanted(int d, int k);

template <typename T>
class CenterScreen {
 public:
  // cen: the k x d centers, row-major in T (as the exact rule reads them).
  // Sets active(): false when the bound is void for these centers (too
  // many coordinates for T's precision, a center too far from the origin).
  void prepare(const T* cen, int k, int d);
  bool active() const { return active_; }

  // Points [i0, i0 + m) of x (n x d, column-major), m a multiple of
  // kScreenTile: cand[p] the center of the smallest screen value,
  // ok[p] = 1 when cand[p] is certified as the strict argmin of the exact
  // squared distances (0: the point needs every exact distance).  Returns
  // the points certified.
  int screen(const T* x, std::int64_t n, std::int64_t i0, int m, int* cand, unsigned char* ok) const;

  // The same for the full pass of the distance bounds (cpu_bounds.h), which
  // also needs: cand2[p], the center of the second smallest screen value,
  // and lower bounds on the real distances |x - c| to it (lo2[p]) and to
  // every center but cand[p] and cand2[p] (lo3[p]); +Inf where there is no
  // such center with numbers.  The bounds hold for every point, certified
  // or not (0 when the point's bound is void).
  int screen3(const T* x, std::int64_t n, std::int64_t i0, int m, int* cand, unsigned char* ok, int* cand2,
              double* lo2, double* lo3) const;

 private:
  int run(const T* x, std::int64_t n, std::int64_t i0, int m, int* cand, unsigned char* ok, int* cand2, double* lo2,
          double* lo3) const;
  bool active_ = false;
  int k_ = 0, d_ = 0, kp_ = 0;  // kp_: k rounded up to the tile of centers
  std::vector<T> ct_;           // d x kp_, coordinate-major; pad centers 0
  std::vector<T> nb_;           // |c_j|^2 in T; NaN for NaN centers and pads (never chosen)
  double nb_max_ = 0.0;         // max |c_j|^2 over centers with numbers, rounded up
  double nc_max_ = 0.0;         // max |c_j|, rounded up
  double g_ = 0.0;              // relative error factor (cpu_screen.cpp)
};

}  // namespace gk

#endif
