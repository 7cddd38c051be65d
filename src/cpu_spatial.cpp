// cpu_spatial.cpp: the assignment on points ordered in space
// (cpu_spatial.h).
//
// Why a block's list holds the plain scan's choice.  Let u be the unit
// roundoff of T and a = 5.01 u.  For a point x and a center c, the exact
// rule computes D(c) = fl(sum_j fl(fl(x_j - c_j)^2)) (d <= 3 terms, in
// order): within a relative a of |x - c|^2 (a term's difference and
// square round twice, its square doubling the first, and the sum rounds
// at most d - 1 times: (d + 2) u and its second-order terms), plus an
// absolute s of underflow (a few halves of T's least subnormal).  For a block's box [lo, hi] (the
// least and largest value of each coordinate over its points, exact) the
// same operations give, within a relative and s,
//   LB(c) = sum_j max(lo_j - c_j, c_j - hi_j, 0)^2 <= |x - c|^2 and
//   UB(c) = sum_j max(c_j - lo_j, hi_j - c_j)^2 >= |x - c|^2
// for every point x of the box.  Let U be the least computed UB, at c'.
// The scan's choice c_s of a point has D(c_s) <= D(c'), so
//   |x - c_s|^2 <= (D(c') + s) / (1 - a) <= ((U + s) (1 + a) / (1 - a) + 2 s) / (1 - a),
// and its computed LB(c_s) <= |x - c_s|^2 (1 + a) + s: at most U (1 + a)^3
// / (1 - a)^2 + 5 s < U (1 + 64 u) + T's least normal, the limit (its own
// rounding inside the margin).  Every center whose computed LB passes the
// limit is listed, in index order, and the block's points take the first
// least D among them with strict '<', as the scan: the scan's choice, which
// is listed.  A block's list is taken from its group's (the group's box
// holds the block's; the rounded operations are monotone, so the group's
// computed LB of a center is at most the block's, its UB at least the
// block's, its U and limit at least the block's): every center the block
// lists, and the one that gives the block's U, is on the group's list, so
// the block's U and list from the group's list are those from all the
// centers.  Where no distance is below infinity the scan keeps label 0,
// and so does the list.  NaN centers (empty clusters) never give U and
// never win; a limit beyond half of T's largest value (or infinite) lists
// every center.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include "cpu_spatial.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>

#include "pass_poll.h"
#include "slot_sort.h"
#include "threads.h"

namespace gk {

namespace {

// The low 8 bits of v spread to the even bits of 16.
inline unsigned spread8(unsigned v) {
  v &= 0xffu;
  v = (v | (v << 4)) & 0x0f0fu;
  v = (v | (v << 2)) & 0x3333u;
  return (v | (v << 1)) & 0x5555u;
}

// The low 5 bits of v spread to every third bit of 15 (bit t to bit 3 t).
inline unsigned spread5(unsigned v) {
  unsigned r = 0;
  for (int t = 0; t < 5; ++t) r |= ((v >> t) & 1u) << (3 * t);
  return r;
}

// A block's least and largest computed squared distances from its box to
// center c (the operations the exact rule uses, in order).
template <typename T>
inline void box_distances(const T* lo, const T* hi, const T* c, int d, T* least, T* largest) {
  T a = std::max(std::max(lo[0] - c[0], c[0] - hi[0]), T(0));
  T b = std::max(c[0] - lo[0], hi[0] - c[0]);
  T l = a * a, g = b * b;
  for (int j = 1; j < d; ++j) {
    a = std::max(std::max(lo[j] - c[j], c[j] - hi[j]), T(0));
    b = std::max(c[j] - lo[j], hi[j] - c[j]);
    l += a * a;
    g += b * b;
  }
  *least = l;
  *largest = g;
}

}  // namespace

template <typename T>
bool SpatialOrder<T>::wanted(std::int64_t n, int d, int k, int max_iter, bool weighted) {
  const char* env = std::getenv("GPUKMEANS_CPU_SPATIAL");
  const std::string mode = env ? env : "";
  if (mode == "0" || weighted || d > 3 || d < 1 || n > 0x7fffffffLL || k < 2) return false;
  if (mode == "1") return true;
  // (a bounds variant forced, as the tests and the convergence benchmark
  // do: the iterations it names)
  const char* bounds = std::getenv("GPUKMEANS_CPU_BOUNDS");
  if (bounds && *bounds && std::string(bounds) != "auto") return false;
  // Measured on this project's 2-core development machine
  // (tools/cpu-dev/spatial-shapes.R; blobs and uniform points, d = 1 and 2,
  // 5e4 and 1e6 points, 10 iterations and to convergence, 1 and 2 threads):
  // 1.0-17x as fast as the bounded and plain iterations from k = 8, and
  // 0.5-1.9x at k = 4, mostly slower: an exact assignment costs little there.
  // At d = 3 (spatial-shapes.R with d = 3, 2026-12-04): at 1e6 points and
  // k >= 8, 0.99-5.6x; at 5e4, where a block's box spans a larger share
  // of the space, 0.46-2.0x (uniform points, k = 100, to convergence:
  // 0.46), so from 2^18 points there.
  return n >= (d == 3 ? (1 << 18) : (1 << 15)) && k >= 8 && max_iter >= 3;
}

template <typename T>
SpatialLayout<T>::SpatialLayout(const T* x, std::int64_t n, int d, int threads) : n_(n), d_(d) {
  // Every step but the groups' boxes runs on nt slots, each on its own
  // stretch of rows or cells: with many threads, serial steps here cost
  // more than the iterations (16 threads, 1e6 x 2, k = 8: ten iterations
  // ordered took 39 ms against 26 with the bounds).  1e6 x 2 on this
  // project's 2-core machine: 15.1 -> 13.1 ms on one thread, 8.7 -> 6.6 on
  // two; most of the rest is the first touch of the new arrays' pages.
  const int nt = threads_for(threads, n / 65536);
  // the columns' ranges (and whether every value is finite), per slot
  std::vector<T> part(static_cast<std::size_t>(nt) * 2 * d);
  std::vector<unsigned char> part_finite(static_cast<std::size_t>(nt), 1);
  for_each_slot(nt, [&](int t) {
    const std::int64_t a = n * t / nt, b = n * (t + 1) / nt;
    for (int j = 0; j < d; ++j) {
      const T* col = x + static_cast<std::int64_t>(j) * n + a;
      const std::int64_t m = b - a;
      T l = std::numeric_limits<T>::infinity(), h = -l;
      bool finite = true;
      for (std::int64_t i = 0; i < m; ++i) {
        const T v = col[i];
        finite &= std::isfinite(v);
        l = std::min(l, v);
        h = std::max(h, v);
      }
      part[static_cast<std::size_t>(t) * 2 * d + j] = l;
      part[static_cast<std::size_t>(t) * 2 * d + d + j] = h;
      if (!finite) part_finite[t] = 0;
    }
  });
  T lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  for (int j = 0; j < d; ++j) {
    lo[j] = std::numeric_limits<T>::infinity();
    hi[j] = -lo[j];
    for (int t = 0; t < nt; ++t) {
      if (!part_finite[t]) return;
      lo[j] = std::min(lo[j], part[static_cast<std::size_t>(t) * 2 * d + j]);
      hi[j] = std::max(hi[j], part[static_cast<std::size_t>(t) * 2 * d + d + j]);
    }
  }
  // every point's cell on the Z curve (16 bits; 15 at d = 3), computed in double, and
  // each slot's count of its rows in every cell
  const int side = d == 1 ? 65536 : d == 2 ? 256 : 32;
  double f[3] = {0, 0, 0};
  for (int j = 0; j < d; ++j) {
    const double w = static_cast<double>(hi[j]) - static_cast<double>(lo[j]);
    f[j] = w > 0 ? side / w : 0.0;
  }
  constexpr int kCells = 65536;
  std::unique_ptr<unsigned short[]> key(new unsigned short[static_cast<std::size_t>(n)]);
  // slot t's counts, then its places (n < 2^31: SpatialOrder::wanted)
  std::unique_ptr<int[]> at(new int[static_cast<std::size_t>(nt) * kCells]);
  for_each_slot(nt, [&](int t) {
    const std::int64_t a = n * t / nt, b = n * (t + 1) / nt;
    int* count = at.get() + static_cast<std::size_t>(t) * kCells;
    std::fill(count, count + kCells, 0);
    // (the ranges and factors in locals, which the stores cannot alias;
    // each cell through int: the conversion of a double to unsigned takes
    // a branch per value without AVX-512)
    const double lo0 = lo[0], lo1 = lo[1], lo2 = lo[2], f0 = f[0], f1 = f[1], f2 = f[2], top = side - 1;
    const T* x0 = x;
    const T* x1 = x + (d >= 2 ? n : 0);
    const T* x2 = x + (d == 3 ? 2 * n : 0);
    unsigned short* kt = key.get();
    for (std::int64_t i = a; i < b; ++i) {
      const int c0 = static_cast<int>(std::min(top, std::max(0.0, (static_cast<double>(x0[i]) - lo0) * f0)));
      unsigned c = static_cast<unsigned>(c0);
      if (d >= 2) {
        const int c1 = static_cast<int>(std::min(top, std::max(0.0, (static_cast<double>(x1[i]) - lo1) * f1)));
        if (d == 2) {
          c = spread8(c) | (spread8(static_cast<unsigned>(c1)) << 1);
        } else {
          const int c2 = static_cast<int>(std::min(top, std::max(0.0, (static_cast<double>(x2[i]) - lo2) * f2)));
          c = spread5(c) | (spread5(static_cast<unsigned>(c1)) << 1) | (spread5(static_cast<unsigned>(c2)) << 2);
        }
      }
      kt[i] = static_cast<unsigned short>(c);
      ++count[c];
    }
  });
  // a counting sort by key, stable (rows of one cell in row order: slot by
  // slot, each slot's in order)
  slot_places(at.get(), nt, kCells);
  // each row scattered to its place with its values (a point's d values
  // together) and its place noted: the rows read in order, written where
  // they go (no array zeroed first, none read at random)
  perm_.reset(new int[static_cast<std::size_t>(n)]);
  place_.reset(new int[static_cast<std::size_t>(n)]);
  xo_.reset(new T[static_cast<std::size_t>(n) * d]);
  for_each_slot(nt, [&](int t) {
    const std::int64_t a = n * t / nt, b = n * (t + 1) / nt;
    int* next = at.get() + static_cast<std::size_t>(t) * kCells;
    for (std::int64_t i = a; i < b; ++i) {
      const std::int64_t q = next[key[i]]++;
      perm_[q] = static_cast<int>(i);
      place_[i] = static_cast<int>(q);
      for (int j = 0; j < d; ++j) xo_[q * d + j] = x[i + static_cast<std::int64_t>(j) * n];
    }
  });
  key.reset();
  // the blocks' boxes (the ordered points never change), then the groups'
  blocks_ = (n + kSpatialBlock - 1) / kSpatialBlock;
  groups_ = (blocks_ + kSpatialGroup - 1) / kSpatialGroup;
  box_.resize(static_cast<std::size_t>(blocks_ + groups_) * 2 * d);
  for_each_slot(nt, [&](int t) {
    const std::int64_t a = blocks_ * t / nt, b = blocks_ * (t + 1) / nt;
    for (std::int64_t q = a; q < b; ++q) {
      const std::int64_t i0 = q * kSpatialBlock, i1 = std::min(n, i0 + kSpatialBlock);
      T* bx = box_.data() + q * 2 * d;
      for (int j = 0; j < d; ++j) {
        T l = xo_[i0 * d + j], h = l;
        for (std::int64_t i = i0 + 1; i < i1; ++i) {
          l = std::min(l, xo_[i * d + j]);
          h = std::max(h, xo_[i * d + j]);
        }
        bx[j] = l;
        bx[d + j] = h;
      }
    }
  });
  for (std::int64_t g = 0; g < groups_; ++g) {
    T* gx = box_.data() + (blocks_ + g) * 2 * d;
    const std::int64_t q0 = g * kSpatialGroup, q1 = std::min(blocks_, q0 + kSpatialGroup);
    for (int j = 0; j < 2 * d; ++j) gx[j] = box_[q0 * 2 * d + j];
    for (std::int64_t q = q0 + 1; q < q1; ++q)
      for (int j = 0; j < d; ++j) {
        gx[j] = std::min(gx[j], box_[q * 2 * d + j]);
        gx[d + j] = std::max(gx[d + j], box_[q * 2 * d + d + j]);
      }
  }
  ok_ = true;
}

template <typename T>
SpatialOrder<T>::SpatialOrder(std::shared_ptr<const SpatialLayout<T>> layout)
    : L_(std::move(layout)),
      lab_(new int[static_cast<std::size_t>(L_->n_)]),  // (first written by the first assign())
      same_(static_cast<std::size_t>(L_->blocks_), -1) {}

namespace {

// The centers of `from` (nf of them, in index order) that the box bx (d
// least values, then d largest) can need, into `to`, in index order;
// returns how many.  least: room for nf values.
template <typename T>
int list_centers(const T* bx, int d, const T* cen, const int* from, int nf, int* to, T* least) {
  const T u = std::numeric_limits<T>::epsilon() / 2;
  const T grow = 1 + 64 * u, floor = std::numeric_limits<T>::min();
  const T too_far = std::numeric_limits<T>::max() / 2;
  T U = std::numeric_limits<T>::infinity();
  for (int q = 0; q < nf; ++q) {
    T g;
    box_distances(bx, bx + d, cen + static_cast<std::size_t>(from[q]) * d, d, &least[q], &g);
    if (g < U) U = g;  // (NaN centers left out)
  }
  const T limit = U * grow + floor;
  int m = 0;
  if (!(limit <= too_far)) {
    for (int q = 0; q < nf; ++q) to[m++] = from[q];
  } else {
    for (int q = 0; q < nf; ++q) {
      to[m] = from[q];
      m += !(least[q] > limit);
    }
  }
  return m;
}

}  // namespace

template <typename T>
std::int64_t SpatialOrder<T>::assign(const T* cen, int k, int nt, PassPoll& poll) {
  const SpatialLayout<T>& L = *L_;
  const int d = L.d_;
  const std::int64_t n = L.n_, blocks = L.blocks_, groups = L.groups_;
  const T* box = L.box_.data();
  const bool first_pass = first_;  // (every block then counts as changed)
  first_ = false;
  // (the room of every slot made here, outside the parallel region)
  slots_ = nt;
  changed_.resize(static_cast<std::size_t>(blocks));
  slot_first_.assign(static_cast<std::size_t>(nt), 0);
  changed_count_.assign(static_cast<std::size_t>(nt), 0);
  scratch_.resize(static_cast<std::size_t>(nt) * 3 * k);
  least_.resize(static_cast<std::size_t>(nt) * k);
  std::vector<std::int64_t> evals(static_cast<std::size_t>(nt), 0);
  for_each_slot(nt, poll, [&](int t) {
    int* all = scratch_.data() + static_cast<std::size_t>(t) * 3 * k;
    int* glist = all + k;
    int* list = glist + k;
    T* least = least_.data() + static_cast<std::size_t>(t) * k;
    for (int c = 0; c < k; ++c) all[c] = c;
    const std::int64_t g0 = groups * t / nt, g1 = groups * (t + 1) / nt;
    const std::int64_t first = std::min(blocks, g0 * kSpatialGroup);
    slot_first_[t] = first;
    std::int64_t* changed = changed_.data() + first;
    std::int64_t nc = 0, ev = 0;
    for (std::int64_t g = g0; g < g1; ++g) {
      if (poll.stop()) break;
      const int gm = list_centers(box + (blocks + g) * 2 * d, d, cen, all, k, glist, least);
      const std::int64_t q1 = std::min(blocks, (g + 1) * kSpatialGroup);
      for (std::int64_t q = g * kSpatialGroup; q < q1; ++q) {
        const int listed = list_centers(box + q * 2 * d, d, cen, glist, gm, list, least);
        // (one listed of k >= 2 centers: a finite limit, so some center's
        // distance is finite for every point, and the scan's choice is a
        // listed one)
        if (listed == 1 && same_[q] == list[0]) continue;
        const std::int64_t i0 = q * kSpatialBlock, i1 = std::min(n, i0 + kSpatialBlock);
        const int m = static_cast<int>(i1 - i0);
        const T* xb = L.xo_.get() + i0 * d;
        int* lab = lab_.get() + i0;
        int one = -2;  // the block's one label (-1: more than one)
        bool moved = false;
        // the block's points against the listed centers, as the scan
        for (int p = 0; p < m; ++p) {
          const T* xp = xb + p * d;
          T best = std::numeric_limits<T>::infinity();
          int bl = 0;
          for (int r = 0; r < listed; ++r) {
            const int c = list[r];
            const T* cc = cen + static_cast<std::size_t>(c) * d;
            T tt = xp[0] - cc[0];
            T dd = tt * tt;
            if (d >= 2) {
              tt = xp[1] - cc[1];
              dd += tt * tt;
            }
            if (d == 3) {
              tt = xp[2] - cc[2];
              dd += tt * tt;
            }
            if (dd < best) {
              best = dd;
              bl = c;
            }
          }
          one = one == -2 || one == bl ? bl : -1;
          moved |= first_pass || bl != lab[p];
          lab[p] = bl;
        }
        same_[q] = one;
        if (moved) changed[nc++] = q;
        ev += static_cast<std::int64_t>(listed) * m;
      }
    }
    changed_count_[t] = nc;
    evals[t] = ev;
  });
  std::int64_t total = 0;
  for (std::int64_t e : evals) total += e;
  return total;
}

template class SpatialLayout<double>;
template class SpatialLayout<float>;
template class SpatialOrder<double>;
template class SpatialOrder<float>;

}  // namespace gk
