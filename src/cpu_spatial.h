// cpu_spatial.h: the CPU engine's assignment at d <= 3 on points ordered
// in space (the idea of the CUDA engine's warp boxes, src/cuda/ordered.cu,
// in the CPU engine's own arithmetic).
//
// Once for the data (at the first fit that wants it, then kept by the
// engine: SpatialCache), the points are sorted along a Z curve over the
// columns' ranges (65536 cells at d = 1, 256 a side at d = 2, 32 at d = 3), so that
// each block of kSpatialBlock consecutive ordered points lies in a small
// box.  Each iteration, a block lists the centers its box can need; its
// points then take the nearest of the listed centers only, with the exact
// rule of assign_block() (src/cpu_lloyd.cpp: coordinate by coordinate, each
// term rounded, ties to the lower index).  cpu_spatial.cpp says why the list
// always holds the plain scan's choice, so the labels are plain Lloyd's,
// and the cluster sums (made by the Lloyd loop in point order) keep the
// centers bitwise.  A block whose points all hold the label u, and whose
// list is u alone, keeps its labels without a distance: later iterations
// of well separated clusters cost little more than the lists.
//
// Internal switch (read at each fit; the tests use it):
//   GPUKMEANS_CPU_SPATIAL  "0": never; "1": at d <= 3 whatever n, k and
//                          iter.max; unset: by shape (SpatialOrder::wanted:
//                          n >= 2^15 (2^18 at d = 3), k >= 8, iter.max >= 3, and no
//                          bounds variant forced by GPUKMEANS_CPU_BOUNDS).
#ifndef GPUKMEANS_CPU_SPATIAL_H
#define GPUKMEANS_CPU_SPATIAL_H

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

namespace gk {

class PassPoll;

constexpr int kSpatialBlock = 64;
// Blocks a group: each group first lists the centers its own box can need,
// and its blocks choose theirs from that list only (cpu_spatial.cpp: the
// same lists as from all the centers).
constexpr int kSpatialGroup = 16;

template <typename T>
class SpatialOrder;

// The points of x (n x d, column-major, d <= 3) in their order along the Z
// curve, copied in that order, with each block's and group's box: what
// every fit on the same x shares (SpatialCache keeps it for the CPU
// engine's data: the starts of nstart, the fits on one handle).  ok() is
// false where x holds a value that is not finite (the fit then runs as
// before).  Throws std::bad_alloc.
template <typename T>
class SpatialLayout {
 public:
  SpatialLayout(const T* x, std::int64_t n, int d, int threads);
  bool ok() const { return ok_; }

 private:
  friend class SpatialOrder<T>;
  std::int64_t n_;
  int d_;
  bool ok_ = false;
  // (arrays that the constructor's slots fill, never zeroed serially first)
  std::unique_ptr<int[]> perm_;   // ordered point i is row perm_[i]
  std::unique_ptr<int[]> place_;  // and row r is ordered point place_[r]
  std::unique_ptr<T[]> xo_;       // the ordered points, d values each
  std::vector<T> box_;  // each block's box, then each group's: d least values, then d largest
  std::int64_t blocks_ = 0, groups_ = 0;
};

// The layout of the one x of an engine, made at the first fit that wants it
// and kept for the next.  Used by one fit at a time.
template <typename T>
class SpatialCache {
 public:
  // The layout of x (n x d), made now with `threads` threads unless this
  // cache holds x's; nullptr where x holds a value that is not finite.
  // Throws std::bad_alloc.
  std::shared_ptr<const SpatialLayout<T>> get(const T* x, std::int64_t n, int d, int threads) {
    if (!made_ || x != x_ || n != n_ || d != d_) {
      layout_.reset();
      made_ = false;
      std::shared_ptr<SpatialLayout<T>> l = std::make_shared<SpatialLayout<T>>(x, n, d, threads);
      if (l->ok()) layout_ = std::move(l);
      x_ = x;
      n_ = n;
      d_ = d;
      made_ = true;
    }
    return layout_;
  }

 private:
  const T* x_ = nullptr;
  std::int64_t n_ = 0;
  int d_ = 0;
  bool made_ = false;
  std::shared_ptr<const SpatialLayout<T>> layout_;
};

// One fit on a layout: the ordered points' labels, each block's one label
// where its points hold one, and what the last iteration changed.
template <typename T>
class SpatialOrder {
 public:
  // Whether a fit of n points, d coordinates, k centers and at most
  // max_iter iterations orders its points (weighted fits do not).
  static bool wanted(std::int64_t n, int d, int k, int max_iter, bool weighted);

  // Throws std::bad_alloc.
  explicit SpatialOrder(std::shared_ptr<const SpatialLayout<T>> layout);

  // An iteration's assignment: every point's nearest center, 0-based, from
  // cen (k x d, row-major, in T: the centers the exact rule reads), kept
  // here in the points' order (none before the first: every block then
  // counts as changed).  Slot t of nt (for_each_slot(), poll.stop()
  // checked between groups) takes a stretch of the blocks and notes those
  // where a label changed.  A block whose points all kept one label u, and
  // whose list is u alone, computes nothing.  Nothing is allocated in the
  // parallel region (an exception there would end the process).  Returns
  // the point-center distances computed.
  std::int64_t assign(const T* cen, int k, int nt, PassPoll& poll);

  // f(row, label) for every row in [lo, hi) of the blocks where the last
  // assign() changed a label, and perhaps for other rows of [lo, hi) with
  // their labels (unchanged): the rows of one range, for the thread that
  // owns them.  Where the changed blocks hold more points than the range,
  // every row of the range is read through its place instead: in the first
  // iterations, when most blocks change, each of many threads would
  // otherwise scan them all (1e6 points, 2 threads: the first iteration
  // 5.8 -> 5.0 ms on this project's 2-core machine).
  template <typename F>
  void each_changed(std::int64_t lo, std::int64_t hi, F&& f) const {
    const SpatialLayout<T>& L = *L_;
    std::int64_t blocks = 0;
    for (int t = 0; t < slots_; ++t) blocks += changed_count_[t];
    if (blocks * kSpatialBlock > hi - lo) {
      for (std::int64_t row = lo; row < hi; ++row) f(row, lab_[L.place_[row]]);
      return;
    }
    for (int t = 0; t < slots_; ++t) {
      const std::int64_t* q = changed_.data() + slot_first_[t];
      for (std::int64_t c = 0; c < changed_count_[t]; ++c) {
        const std::int64_t i0 = q[c] * kSpatialBlock, i1 = std::min(L.n_, i0 + kSpatialBlock);
        for (std::int64_t i = i0; i < i1; ++i) {
          const std::int64_t row = L.perm_[i];
          if (row >= lo && row < hi) f(row, lab_[i]);
        }
      }
    }
  }

 private:
  std::shared_ptr<const SpatialLayout<T>> L_;
  bool first_ = true;             // no assign() yet (lab_ holds nothing)
  std::unique_ptr<int[]> lab_;    // the ordered points' labels
  std::vector<int> same_;         // each block's one label, where its points hold one (else -1)
  // assign()'s record: slot t's blocks where a label changed, at
  // changed_[slot_first_[t] ...], changed_count_[t] of them
  std::vector<std::int64_t> changed_, slot_first_, changed_count_;
  int slots_ = 0;
  std::vector<int> scratch_;  // assign()'s lists, 3 k ints a slot
  std::vector<T> least_;      // and k values a slot
};

}  // namespace gk

#endif  // GPUKMEANS_CPU_SPATIAL_H
