// cpu_weights.cpp: see cpu_weights.h.

// Every sum is rounded addition by addition, never fused.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include "cpu_weights.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "column_sum.h"
#include "threads.h"
#include "weights.h"

namespace gk {

// Why the jump is exact.  Let every value of a stretch of additions lie in
// one binade [L, H) (in magnitude, one sign), where the doubles (or long
// doubles) are the multiples of u = ulp.  A value s = S u plus t rounds to
// u * rint(S + t / u): S plus a fixed integer, except when t / u is an odd
// multiple of 1/2 (a tie), where the parity of S decides between two.  So a
// block of additions (its partial sums in the binade) changes S by an
// amount fixed by the parity of S at its start, and ends at a parity fixed
// by it: a map on two states.  After one block every state is on a cycle of
// length 1 or 2, so from there each pair of blocks adds the same R, and m
// pairs add m R exactly (a multiple of u within the binade: representable,
// as is the product m R).  The jump stops short of the binade's ends by
// more than one block's reach, so that no exact intermediate sum leaves it.
namespace {

// The binade of v != 0: |v| in [*L, *H), its ulp *u; false near 0 (below
// 4 times the smallest normal number, where ulps are those of subnormals).
template <typename T>
inline bool binade(T v, T* L, T* H, T* u) {
  int e = 0;
  std::frexp(v, &e);
  *L = std::ldexp(T(1), e - 1);
  *H = std::ldexp(T(1), e);
  *u = std::ldexp(T(1), e - std::numeric_limits<T>::digits);
  return *L >= std::numeric_limits<T>::min() * 4;
}

// double: from the bits (no libm calls: this runs once per row and column).
template <>
inline bool binade<double>(double v, double* L, double* H, double* u) {
  std::uint64_t b;
  std::memcpy(&b, &v, 8);
  const std::uint64_t E = (b >> 52) & 0x7ff;  // |v| in [2^(E - 1023), 2^(E - 1022))
  if (E == 0 || E >= 0x7fe) return false;      // subnormal (spacing: below), or near overflow
  if (E < 64) {  // ulps below 2^-1011: subnormal for E < 53, not from the bits below
    *L = std::ldexp(1.0, (int)E - 1023);
    *H = std::ldexp(1.0, (int)E - 1022);
    *u = std::ldexp(1.0, (int)E - 1075);
    return true;
  }
  const std::uint64_t lb = E << 52, hb = (E + 1) << 52, ub = (E - 52) << 52;
  std::memcpy(L, &lb, 8);
  std::memcpy(H, &hb, 8);
  std::memcpy(u, &ub, 8);
  return true;
}

}  // namespace

template <typename T>
T repeat_block(T s, const T* t, int d, std::uint64_t w) {
  auto block = [&](T v) {
    for (int c = 0; c < d; ++c) v = v + t[c];
    return v;
  };
  constexpr std::uint64_t kDirect = 16;
  T reach = 0;  // how far one block can move the value (rounded up below)
  for (int c = 0; c < d; ++c) reach = reach + std::fabs(t[c]);
  // zero terms: one block (-0 + 0 is +0), then nothing changes
  if (reach == 0) return w > 0 ? block(s) : s;
  // below twice the smallest normal number every value is a multiple of the
  // smallest subnormal with that spacing: additions there are exact
  const T two_min = std::numeric_limits<T>::min() * 2;
  while (w > kDirect) {
    const T a = block(s), b = block(a), c = block(b), e = block(c);
    w -= 4;
    s = e;
    // a fixed point or a cycle of two (a sum that the block no longer moves,
    // e.g. sitting on a power of two, where the binade test below never
    // holds): the rest of the blocks are known
    if (b == a && std::signbit(b) == std::signbit(a)) return a;
    if (c == a && e == b) return w % 2 == 0 ? e : a;
    if (!std::isfinite(s) || !std::isfinite(reach)) {
      // Inf and NaN absorb within two blocks (Inf plus the other Inf: NaN)
      for (int r = 0; r < 2 && w > 0; ++r, --w) s = block(s);
      return s;
    }
    // a -> b -> c -> e within one binade, with margins: then b is on the
    // cycle, and every second block from b (and from e) adds R = e - b.
    T L, H, u;
    if (b == 0 || !binade<T>(b, &L, &H, &u)) {
      // near 0: while every value stays below two_min, a block adds exactly
      // B = c - b, and m blocks add m B (a multiple of the smallest
      // subnormal below two_min: exact)
      const T B = c - b;
      if (std::fabs(b) < two_min && std::fabs(c) < two_min && std::fabs(e) < two_min && B != 0) {
        const T room = two_min - std::fabs(e) - reach;  // exact: values below two_min
        const T q = std::floor(room / std::fabs(B));
        if (q >= 2) {
          std::uint64_t m = static_cast<std::uint64_t>(q) - 1;
          m = std::min<std::uint64_t>(m, w);
          s = e + static_cast<T>(m) * B;
          w -= m;
        }
      }
      continue;
    }
    const T lo = L + u, hi = H - u;
    const bool neg = std::signbit(b);
    auto inside = [&](T v) {
      const T m = std::fabs(v);
      return std::signbit(v) == neg && m >= lo && m <= hi;
    };
    if (!(inside(a) && inside(b) && inside(c) && inside(e))) continue;
    const T R = e - b;  // exact: both multiples of u in the binade
    if (R == 0) return e;  // every block from b on leaves the value as it is
    const T slack = reach + T(d + 4) * u;
    const bool grows = std::signbit(R) == neg;
    const T room = grows ? (hi - slack) - std::fabs(e) : std::fabs(e) - (lo + slack);
    if (!(room > 0)) continue;
    const T q = std::floor(room / std::fabs(R));  // < 2^digits, as room < H and |R| >= u
    if (!(q >= 2)) continue;
    std::uint64_t m = static_cast<std::uint64_t>(q) - 1;  // one less, for the rounding of room / |R|
    m = std::min<std::uint64_t>(m, w / 2);
    if (m == 0) continue;
    s = e + static_cast<T>(m) * R;
    w -= 2 * m;
  }
  for (; w > 0; --w) s = block(s);
  return s;
}

template double repeat_block<double>(double, const double*, int, std::uint64_t);
template long double repeat_block<long double>(long double, const long double*, int, std::uint64_t);

namespace {

// s + w * (the block), in T: whole weights repeat it, others multiply each
// term (w_i t_c added in order).
template <typename T>
inline T add_weighted(T s, const T* t, int d, double w) {
  if (w == 1.0) {
    for (int c = 0; c < d; ++c) s = s + t[c];
    return s;
  }
  if (whole_weight(w)) return repeat_block<T>(s, t, d, static_cast<std::uint64_t>(w));
  const T wt = static_cast<T>(w);
  for (int c = 0; c < d; ++c) s = s + wt * t[c];
  return s;
}

}  // namespace

template <typename T>
WeightedSums<T>::WeightedSums(const T* x, std::int64_t n, int d, int k, const double* w, int threads)
    : x_(x), n_(n), d_(d), k_(k), w_(w), threads_(threads), cen_(static_cast<std::size_t>(k) * d, 0.0),
      dirty_(k, 1) {}

// The rows are read in row order (each sum gets its rows in that order), the
// sums of a row's coordinates advancing together; the threads take ranges
// of columns (centers) or of clusters (withinss), so that each sum is one
// thread's, whatever the threads.
template <typename T>
void WeightedSums<T>::centers(const int* labels, double* centers) {
  if (prev_.empty()) {
    std::fill(dirty_.begin(), dirty_.end(), 1);
  } else {
    std::fill(dirty_.begin(), dirty_.end(), 0);
    for (std::int64_t i = 0; i < n_; ++i)
      if (labels[i] != prev_[i]) dirty_[labels[i]] = dirty_[prev_[i]] = 1;
  }
  prev_.assign(labels, labels + n_);
  std::vector<double> wsum(k_, 0.0);  // exact for whole weights (below 2^53)
  for (std::int64_t i = 0; i < n_; ++i)
    if (dirty_[labels[i]]) wsum[labels[i]] = wsum[labels[i]] + w_[i];
  const int nt = threads_for(threads_, std::max(1, d_ / 2));
  // scratch, allocated here (none inside the parallel region), a cache line
  // apart between slots: slot t sums columns [c0, c1) into its k x m sums
  constexpr std::size_t kPad = 8;
  std::vector<double> sums(static_cast<std::size_t>(k_) * d_ + kPad * nt, 0.0), vals((d_ + kPad) * nt);
  for_each_slot(nt, [&](int t) {
    const int c0 = d_ * t / nt, c1 = d_ * (t + 1) / nt, m = c1 - c0;
    double* s = sums.data() + static_cast<std::size_t>(k_) * c0 + kPad * t;
    double* v = vals.data() + (d_ + kPad) * t;
    for (std::int64_t i = 0; i < n_; ++i) {
      const int j = labels[i];
      const double wi = w_[i];
      if (!dirty_[j] || wi == 0) continue;
      double* sj = s + static_cast<std::size_t>(j) * m;
      for (int c = 0; c < m; ++c) v[c] = static_cast<double>(x_[i + static_cast<std::int64_t>(c0 + c) * n_]);
      if (wi == 1) {
        for (int c = 0; c < m; ++c) sj[c] = sj[c] + v[c];
      } else if (wi <= 16 && whole_weight(wi)) {
        for (int rep = static_cast<int>(wi); rep > 0; --rep)
          for (int c = 0; c < m; ++c) sj[c] = sj[c] + v[c];
      } else {
        for (int c = 0; c < m; ++c) sj[c] = add_weighted<double>(sj[c], &v[c], 1, wi);
      }
    }
    for (int j = 0; j < k_; ++j)
      if (dirty_[j])
        for (int c = 0; c < m; ++c)
          cen_[j + static_cast<std::size_t>(k_) * (c0 + c)] = s[static_cast<std::size_t>(j) * m + c] / wsum[j];
  });
  std::copy(cen_.begin(), cen_.end(), centers);
}

template <typename T>
std::vector<double> WeightedSums<T>::withinss(const int* labels, const double* centers) {
  std::vector<double> out(k_, 0.0);
  const int nt = threads_for(threads_, k_);
  // per slot: the terms of a row and the sums of its clusters, a cache line apart
  constexpr std::size_t kPad = 8;
  const std::size_t stride = static_cast<std::size_t>(d_) + k_ + kPad;
  std::vector<double> scratch(stride * nt, 0.0);
  for_each_slot(nt, [&](int t) {
    const int j0 = k_ * t / nt, j1 = k_ * (t + 1) / nt;
    double* term = scratch.data() + stride * t;
    double* acc = term + d_;  // acc[j] for j in [j0, j1)
    for (std::int64_t i = 0; i < n_; ++i) {
      const int j = labels[i];
      const double wi = w_[i];
      if (j < j0 || j >= j1 || wi == 0) continue;
      for (int c = 0; c < d_; ++c) {
        const double tmp = static_cast<double>(x_[i + static_cast<std::int64_t>(c) * n_]) -
                           centers[j + static_cast<std::size_t>(k_) * c];
        term[c] = tmp * tmp;
      }
      acc[j] = add_weighted<double>(acc[j], term, d_, wi);
    }
    for (int j = j0; j < j1; ++j) out[j] = acc[j];
  });
  return out;
}

template class WeightedSums<double>;
template class WeightedSums<float>;

namespace {

// One column's sum of w_i term(x_i) in cpu_totss()'s chunks of the
// replicated rows (term: the value, for the weighted mean, or (x_i -
// mean)^2 rounded to double): a whole weight w_i stands for w_i rows in a
// row, its run split where the chunks end; a row of any other weight takes
// one place (w_i times its term, added once).  Full chunks within one run
// all have the same sum, so a long run costs two repeat_block() calls, not
// one addition per replicated row.
template <typename Term>
long double chunked_weighted(const double* col, std::int64_t n, const double* w, Term term) {
  constexpr std::uint64_t kChunk = static_cast<std::uint64_t>(kTotssChunkRows);
  long double total = 0.0L, chunk = 0.0L;
  std::uint64_t used = 0;  // replicated rows in the open chunk
  auto close_chunk = [&] {
    total += chunk;
    chunk = 0.0L;
    used = 0;
  };
  for (std::int64_t i = 0; i < n; ++i) {
    if (w[i] == 0) continue;
    const long double tt = term(col[i]);
    if (w[i] == 1 || !whole_weight(w[i])) {
      chunk = add_weighted<long double>(chunk, &tt, 1, w[i]);
      if (++used == kChunk) close_chunk();
      continue;
    }
    std::uint64_t rest = static_cast<std::uint64_t>(w[i]);
    while (rest > 0) {
      if (used == 0 && rest >= kChunk) {  // whole chunks of this row alone
        const long double full = repeat_block<long double>(0.0L, &tt, 1, kChunk);
        const std::uint64_t m = rest / kChunk;
        total = repeat_block<long double>(total, &full, 1, m);
        rest -= m * kChunk;
        continue;
      }
      const std::uint64_t take = std::min(rest, kChunk - used);
      chunk = repeat_block<long double>(chunk, &tt, 1, take);
      used += take;
      rest -= take;
      if (used == kChunk) close_chunk();
    }
  }
  return total + chunk;  // the last, partial chunk (+0 where there is none)
}

}  // namespace

double cpu_weighted_totss(const double* x, std::int64_t n, int d, const double* w, int threads) {
  const int nt = threads_for(threads, d);
  long double wsum = 0.0L;  // the number of replicated rows, for whole weights
  for (std::int64_t i = 0; i < n; ++i) wsum += w[i];
  std::vector<long double> per_col(d, 0.0L);
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
  for (int c = 0; c < d; ++c) {
    const double* col = x + static_cast<std::int64_t>(c) * n;
    // the weighted mean in the same chunks (column_sum.h)
    const long double s = chunked_weighted(col, n, w, ColumnValue());
    per_col[c] = chunked_weighted(col, n, w, SquaredDeviation{static_cast<double>(s / wsum)});
  }
  long double total = 0.0L;
  for (int c = 0; c < d; ++c) total += per_col[c];
  return static_cast<double>(total);
}

}  // namespace gk
