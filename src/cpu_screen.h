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
// Double data is screened in two passes: first in float (twice the lanes
// of a SIMD register), points and centers shifted by the centers' mean so
// that data far from the origin keeps float's relative error small; then
// the points the float pass left undecided are screened again in double.
// Where the float pass leaves most points undecided (data whose clusters lie
// closer than float can tell), it is skipped for a while.
//
// Used by the plain assignment of Lloyd's loop, by predict and by the step
// of split fits (cpu_lloyd.cpp), and by the full passes of the distance
// bounds (cpu_bounds.cpp).  Internal switch (environment variable, read when
// a screen is made, i.e. when a fit starts; the tests use it):
// GPUKMEANS_CPU_SCREEN unset or "auto" (by shape: screen_wanted), "on"
// (whenever sound), "off", and for double data "double" (the double pass
// alone) or "float" (the float pass alone, always tried: every point it
// leaves gets the exact distances).
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
  CenterScreen();  // reads the switch's passes ("double", "float", else both)

  // cen: the k x d centers, row-major in T (as the exact rule reads them).
  // Sets active(): false when the bound is void for these centers (too
  // many coordinates for the precision, centers too far apart).
  void prepare(const T* cen, int k, int d);
  bool active() const { return native_.active || low_.active; }

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

  // One pass's view of the centers, its tiles in S (T, or float for double
  // data); points and centers are shifted by `shift` first where S is not T.
  template <typename S>
  struct Pass {
    bool active = false;
    int kp = 0;                 // k rounded up to the tile of centers
    std::vector<S> ct;          // d x kp, coordinate-major, of the (shifted) centers; pad centers 0
    std::vector<S> nb;          // |c_j|^2 in S; NaN for NaN centers and pads (never chosen)
    std::vector<double> shift;  // d values (the centers' mean) where S is not T
    double nb_max = 0.0;        // max |c_j|^2 over centers with numbers, rounded up
    double nc_max = 0.0;        // max |c_j|, rounded up
    double g = 0.0;             // the screen values' relative error factor (cpu_screen.cpp)
    double a_g = 0.0, a_gx = 0.0;  // their absolute error: a_g + a_gx (|x| + max |c_j|)
    double big = 0.0;           // |x|^2 at most, for the bound to hold
    double nx_rel = 0.0;        // relative error of |x|^2 as the pass computes it
  };

 private:
  struct Out {  // a block's outputs (cand2, lo2, lo3 null: screen())
    int* cand;
    unsigned char* ok;
    int* cand2;
    double *lo2, *lo3;
  };
  template <typename S>
  int run_pass(const Pass<S>& pass, const T* xs, std::int64_t ld, int m, const Out& out) const;
  int rescreen_native(const T* xs, std::int64_t ld, int m, const Out& out) const;
  int run(const T* x, std::int64_t n, std::int64_t i0, int m, const Out& out) const;
  bool low_wanted() const;

  int d_ = 0;
  double gx_ = 0.0, a_e_ = 0.0;  // the exact rule's error: relative factor, absolute term
  bool native_pass_ = true, low_pass_ = true, low_always_ = false;  // the switch
  Pass<T> native_;
  Pass<float> low_;  // double data only
  // The float pass's record (points screened, points left), shared by the
  // threads (atomic adds), halved at each prepare(): where it leaves over a
  // third of the points it is skipped until the record fades.
  mutable std::int64_t low_tried_ = 0, low_left_ = 0;
};

}  // namespace gk

#endif
