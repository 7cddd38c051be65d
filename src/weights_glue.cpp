// weights_glue.cpp: R entry points of observation weights (R/weights.R)
// besides the fit itself (gk_fit_cpp takes them): the engines' capability,
// and a check of repeat_block() against the loop it replaces (tests).
#include <Rcpp.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "cpu_weights.h"
#include "engine.h"

// Whether the CUDA engine fits observation weights (gk::cuda_supports_weights()).
// [[Rcpp::export(rng = false)]]
bool gk_cuda_supports_weights_cpp() { return gk::cuda_supports_weights(); }

namespace {

// One random case of repeat_block<T>: a start, a block of d terms (one sign
// for d > 1) and a repetition count, with values chosen to reach binade
// edges, ties (terms that are odd multiples of half an ulp of the sum) and
// sums that cross 0.
template <typename T>
bool repeat_case(std::mt19937_64& g) {
  std::uniform_real_distribution<double> U(0.0, 1.0);
  std::uniform_int_distribution<int> kind(0, 5), dd(1, 4), ex(-30, 30);
  const int d = kind(g) < 2 ? 1 : dd(g);
  const bool neg = U(g) < 0.3;
  std::vector<T> t(d);
  T s = static_cast<T>(std::ldexp(U(g), ex(g)));
  if (U(g) < 0.3) s = -s;
  if (U(g) < 0.1) s = 0;
  for (int c = 0; c < d; ++c) {
    T v = static_cast<T>(std::ldexp(U(g), ex(g)));
    switch (kind(g)) {
      case 0: {  // an odd multiple of half the ulp of s (a tie)
        int e = 0;
        std::frexp(s == 0 ? T(1) : s, &e);
        const T u = std::ldexp(T(1), e - std::numeric_limits<T>::digits);
        v = u * (T(2 * static_cast<int>(U(g) * 40)) + 1) / 2;
        break;
      }
      case 1:  // a whole number
        v = static_cast<T>(static_cast<int>(U(g) * 100));
        break;
      case 2:  // tiny beside s
        v = s * static_cast<T>(std::ldexp(U(g), -50));
        break;
      default:
        break;
    }
    t[c] = (d == 1 ? (U(g) < 0.4) : neg) ? -std::fabs(v) : std::fabs(v);
  }
  const std::uint64_t w = static_cast<std::uint64_t>(std::ldexp(U(g), static_cast<int>(U(g) * 17)));
  T loop = s;
  for (std::uint64_t r = 0; r < w; ++r)
    for (int c = 0; c < d; ++c) loop = loop + t[c];
  const T fast = gk::repeat_block<T>(s, t.data(), d, w);
  return loop == fast || (loop != loop && fast != fast);
}

// Fixed cases: ties (terms that are odd multiples of half an ulp of the sum,
// alone and in blocks), sums that cross 0, long runs, terms that a large sum
// absorbs.  The number of mismatches.
template <typename T>
int fixed_cases() {
  int bad = 0;
  auto check = [&](T s, std::vector<T> t, std::uint64_t w) {
    T loop = s;
    for (std::uint64_t r = 0; r < w; ++r)
      for (T v : t) loop = loop + v;
    bad += !(gk::repeat_block<T>(s, t.data(), static_cast<int>(t.size()), w) == loop);
  };
  const T u = std::ldexp(T(1), 1 - std::numeric_limits<T>::digits);  // the ulp of [1, 2)
  for (int M = 0; M < 6; ++M)
    for (int k = 0; k < 4; ++k)
      for (T sg : {T(1), T(-1)}) {
        check(T(1) + k * u, {sg * (M + T(0.5)) * u}, 20000);
        check(T(1) + k * u, {(M + T(0.5)) * u, T(1.5) * u}, 20000);
        check(T(1) + k * u, {(M + T(0.5)) * u, T(0.5) * u, T(0.25) * u}, 20000);
      }
  check(T(1000), {T(-0.37)}, 10000);
  check(T(-3), {T(0.1)}, 200000);
  check(T(0), {T(1e-3), T(2e-3), T(0.5), T(1e-9), T(3), T(0), T(7e-5), T(1)}, 300000);
  check(T(0), {T(0.1)}, 1000000);
  check(T(1e16), {T(1)}, 100000);
  check(T(1e16), {T(3)}, 100000);
  // zero terms, and sums among the subnormal and smallest normal numbers
  // (these once stepped one block at a time: w = 2^53 did not end)
  const T dm = std::numeric_limits<T>::denorm_min(), mn = std::numeric_limits<T>::min();
  check(T(0), {T(0)}, 3000000);
  check(T(-0.0), {T(0), T(0)}, 3000000);
  check(T(5), {T(0)}, 3000000);
  check(T(0), {dm}, 3000000);
  check(T(0), {T(3) * dm}, 3000000);
  check(T(0), {T(-7) * dm}, 3000000);
  check(mn * T(1.5), {T(5) * dm, dm}, 3000000);
  check(T(0), {mn / T(1000)}, 3000000);
  check(-mn, {mn / T(3)}, 3000000);
  // a sum that stops on a power of two (the block adds less than half its
  // ulp above, more than half below): it stayed there one block at a time
  const T p60 = std::ldexp(T(1), 60 + std::numeric_limits<T>::digits - 53);
  check(p60, {T(100)}, 3000000);
  check(p60 - T(16) * std::ldexp(T(1), std::numeric_limits<T>::digits - 53) * T(64), {T(100)}, 3000000);
  return bad;
}

}  // namespace

// repeat_block() against the plain loop on `cases` random cases per type
// (double, long double), then on fixed cases: the number of mismatches of
// each.  Internal (tests).
// [[Rcpp::export(rng = false)]]
Rcpp::IntegerVector gk_repeat_block_check_cpp(int cases, double seed) {
  std::mt19937_64 g(static_cast<std::uint64_t>(seed));
  int bad_d = fixed_cases<double>(), bad_ld = fixed_cases<long double>();
  for (int i = 0; i < cases; ++i) {
    bad_d += !repeat_case<double>(g);
    bad_ld += !repeat_case<long double>(g);
  }
  return Rcpp::IntegerVector::create(Rcpp::_["double"] = bad_d, Rcpp::_["long_double"] = bad_ld);
}
