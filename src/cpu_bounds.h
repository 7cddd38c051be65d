// cpu_bounds.h: exact acceleration of the CPU engine's Lloyd loop by distance
// bounds (Hamerly 2010; Yinyang, Ding et al. 2015), internal to the CPU
// engine (src/cpu_lloyd.cpp runs the loop; src/cpu_bounds.cpp holds the
// bounds, their arithmetic and the argument of its soundness).
//
// Every point keeps an upper bound U on its distance to its own center and
// lower bounds on its distances to the other centers: Hamerly, one to the
// second nearest center and one to all the rest (so that a point between
// two clusters costs two distances, not k); Yinyang, one to all the others
// and one per group of centers.  After the centers move by at most mv
// (rounded up), U grows by mv of its center and the lower bounds shrink by
// the largest mv of the centers they cover; the movements are summed per
// center and applied when a bound is read, so a point whose bounds hold is
// read, never written.  A point whose bounds prove that its label is still
// the strict argmin of the exact squared distances (every rounding error of
// those distances accounted for) needs no distance; every other point gets
// exact distances, with the arithmetic and tie rule of assign_block() in
// src/cpu_lloyd.cpp, to its own center (tightening U), then to its second
// nearest (Hamerly) and, if still unproven, to every center of the groups
// its bounds do not exclude.  So the labels are those of plain Lloyd at
// every iteration; the cluster sums (src/cpu_lloyd.cpp: every point in
// point order, or only the clusters whose members changed) keep the
// centers bitwise identical.  The variant and the kinds of iteration only
// change the time taken.
//
// Memory per point besides the label: Hamerly 28 bytes (U, two lower
// bounds, the second nearest center); Yinyang 20 + 4 G bytes (U, the
// global lower bound, a version, G group bounds as floats), G chosen so
// that 4 G bytes stay within the size of the point's data or 64 MiB in all.
//
// Internal switches (environment variables, read at each fit; not part of
// the user API; the tests and inst/bench/bench_convergence_cpu.R use them):
//   GPUKMEANS_CPU_BOUNDS      unset or "auto": choose by shape (choose_plan);
//                             "off": plain Lloyd; "hamerly", "yinyang" or
//                             "yinyang:G" (G groups): bounds at every
//                             iteration whatever the shape (no plain
//                             fallback); a suffix ":cycle" runs the fixed
//                             pattern full, bounded, bounded, plain, plain
//                             (the transitions between kinds of iteration).
//   GPUKMEANS_CPU_BOUNDS_LOG  a file to which every iteration appends one
//                             line "iter kind changed evaluations n k seconds"
//                             (kind P plain, F full with bounds set, B
//                             bounded, S on the points ordered in space,
//                             src/cpu_spatial.h; evaluations = point-center
//                             distances computed).
#ifndef GPUKMEANS_CPU_BOUNDS_H
#define GPUKMEANS_CPU_BOUNDS_H

#include <cstdint>
#include <string>
#include <vector>

#include "cpu_screen.h"

namespace gk {
namespace bounds {

enum class Variant { kPlain, kHamerly, kYinyang };

// What the Lloyd loop does.
struct Plan {
  Variant variant = Variant::kPlain;
  int groups = 1;        // Yinyang: groups of centers (Hamerly: 1)
  bool adaptive = true;  // plain iterations while the bounds do not pay
  bool cycle = false;    // test hook: the fixed pattern F B B P P
  std::string log;       // GPUKMEANS_CPU_BOUNDS_LOG, or empty
};

// The plan for n points, d coordinates and k centers with distances
// computed in a type whose unit roundoff is `unit_roundoff`; the
// environment variables above override the choice by shape.
Plan choose_plan(std::int64_t n, int d, int k, double unit_roundoff);

// The bounds of every point of x (n x d, column-major, T = double or float)
// with respect to k centers.  Used by one fit at a time; the passes run on
// disjoint ranges of points, one per thread.
template <typename T>
class Bounds {
 public:
  // threads: the threads that will run the passes (each has its scratch).
  // x may be nullptr: x comes block by block (set_rows) before each pass.
  Bounds(const T* x, std::int64_t n, int d, int k, const Plan& plan, const double* centers0, int threads);
  ~Bounds();

  // The passes that follow read rows [first, first + rows) of x from xb
  // (rows x d, column-major): x streamed block by block.  Nothing else
  // changes (the bounds are per point, by the points' global indices).
  void set_rows(const T* xb, std::int64_t first, std::int64_t rows) {
    x_ = xb - first;  // (row i, column c at x_[i + c n_], as for x in memory)
    n_ = rows;
  }

  // The centers (k x d, row-major in T, as the assignment reads them) of a
  // full iteration: every distance is computed and every bound set anew.
  void begin_full(const T* cen_rm);
  // The centers of a bounded iteration (size: the points of each cluster,
  // from which they were computed): the bounds are moved by how far each
  // center moved since the previous iteration.  False (nothing changed) when
  // a movement is infinite (a center became a number again, a coordinate
  // overflowed, or a center of a cluster with points is NaN): the iteration
  // must then be full.
  bool begin_bounded(const T* cen_rm, const int* size);

  // Points [lo, hi): labels (0-based, -1 = none yet) updated, cnt (k, the
  // points per cluster) counted (full: from zero set by the caller) or
  // updated (bounded),
  // dirty[j] set for the clusters that gained or lost a point (bounded);
  // returns the points whose label changed, *evals the point-center
  // distances computed.
  std::int64_t full_pass(std::int64_t lo, std::int64_t hi, int* labels, std::int64_t* cnt, std::int64_t* evals);
  std::int64_t bounded_pass(std::int64_t lo, std::int64_t hi, int* labels, std::int64_t* cnt, unsigned char* dirty,
                            std::int64_t* evals);

 private:
  struct Work;
  std::int64_t hamerly_pass(std::int64_t lo, std::int64_t hi, int* labels, std::int64_t* cnt, unsigned char* dirty,
                            std::int64_t* evals);
  std::int64_t yinyang_pass(std::int64_t lo, std::int64_t hi, int* labels, std::int64_t* cnt, unsigned char* dirty,
                            std::int64_t* evals);
  int yinyang_scan(std::int64_t i, const T* xi, int a, T da, double u, double lprev, Work& s,
                   std::int64_t* evals);
  void set_hamerly(std::int64_t i, int a, T b, int j2, T s2, T s3);
  void set_hamerly_screened(std::int64_t i, int a, T b, int j2, double l2, double l3);
  template <typename Relabel>
  int scan_screened(T* xb, int ns, std::int64_t i0, const int* idx, int* scan, const int* labels, std::int64_t* evals,
                    Relabel relabel);
  std::int64_t hamerly_full_screened(std::int64_t lo, std::int64_t hi, int* labels, std::int64_t* cnt,
                                     std::int64_t* evals);
  void set_hamerly_block(std::int64_t i0, int nb, const int* lab, const T* best, const int* lab2, const T* second,
                         const T* third);
  void set_centers(const T* cen_rm);
  double drift(int g, int stamp) const;
  double upper(T D) const;
  double lower(T D) const;
  double thr(double u) const { return u * f_ + s_; }

  const T* x_;       // row i, column c at x_[i + c n_] (set_rows: a block's)
  std::int64_t n_;   // x's stride between columns
  int d_, k_, G_;
  Variant variant_;
  // the full passes of Hamerly's bounds screen (cpu_screen.h) when wanted
  bool use_screen_ = false;
  CenterScreen<T> screen_;
  // margins (cpu_bounds.cpp: the error analysis)
  double f_, g_, s_, umax_, linf_, fm_;
  // the groups: centers in group order (perm_), group g = positions
  // [gs_[g], gs_[g + 1]); Hamerly: one group, the identity
  std::vector<int> perm_, gs_, grp_;
  int bsz_ = 256;             // points per block of the bounded passes
  std::vector<Work> work_;    // per thread
  // the centers of this iteration: row-major (cur_), and per group
  // coordinate-major (ct_: group g's block d x m_g at gs_[g] * d)
  std::vector<T> cur_, ct_;
  std::vector<unsigned char> live_;  // no NaN coordinate
  // Movements since the previous iteration (rounded up) of each center as a
  // point's own (mv_u_) and as a competitor (mv_l_), and their sums since
  // the last full iteration rounded up (_up) and down (_dn), applied to the
  // bounds lazily: a bound is stored relative to the sums at the time it is
  // set (U - cu_dn[a], L + c_dn), read relative to the sums now (+ cu_up[a],
  // - c_up), so that a point whose bounds hold is read, not written.
  //   cu: own-center movements; c2: competitor movements (Hamerly's second
  //   nearest); cx: per center j, the largest movement of the centers other
  //   than j (the bound to every other center of a point labelled j).
  std::vector<double> mv_u_, mv_l_;
  std::vector<double> cu_up_, cu_dn_, c2_up_, c2_dn_, cx_up_, cx_dn_;
  // Yinyang: the bounds of the groups are brought up to date only when
  // needed, with cumulative sums of the groups' largest movements since the
  // last full iteration, rounded up (cum_up_) and down (cum_dn_), per version
  int version_ = 0;
  std::vector<double> cum_up_, cum_dn_;
  // Per point (adjusted as above):
  //   uadj_: U, the upper bound to the own center;
  //   Hamerly: l3adj_ a lower bound to every center but the own and the
  //     second nearest j2_, l2adj_ one to the second nearest;
  //   Yinyang: l3adj_ to every center but the own; glo_ (n x G, floats in
  //     units of sig_, a power of two, rounded down) to every center of a
  //     group but the own, valid at version stamp_.
  std::vector<double> uadj_, l2adj_, l3adj_;
  std::vector<int> j2_, stamp_;
  std::vector<float> glo_;
  double sig_ = 1.0, isig_ = 1.0;
  double eff_u(std::int64_t i, int a) const;
  void set_u(std::int64_t i, int a, double u);
  float st_dn(double v) const;
  double ld(float v) const { return static_cast<double>(v) * sig_; }
};

}  // namespace bounds
}  // namespace gk

#endif
