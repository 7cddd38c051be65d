// row_keys.h: rows compared as base R's duplicated() compares the rows of a
// numeric matrix (exactly, with -0 equal to 0): one definition for the
// distinct-row scans of one process (data_glue.cpp) and across MPI ranks
// (block_driver.cpp), and the well-mixed row hash the ranks exchange.
#ifndef GPUKMEANS_ROW_KEYS_H
#define GPUKMEANS_ROW_KEYS_H

#include <cstdint>
#include <cstring>

#include "parity.h"

namespace gk {

// The bits that identify a value: 0 and -0 alike.
inline std::uint64_t row_key_bits(double v) {
  if (v == 0.0) v = 0.0;
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// A hash of row i of x (n x d, column-major), the same on every rank.
inline std::uint64_t row_hash(const double* x, std::int64_t n, int d, std::int64_t i) {
  std::uint64_t h = 0x6a09e667f3bcc909ULL;
  for (int c = 0; c < d; ++c) h = splitmix64_mix(h ^ row_key_bits(x[i + n * static_cast<std::int64_t>(c)]));
  return h;
}

}  // namespace gk

#endif
