// distinct_rows.h: the distinct rows of a data set that is never whole in
// host memory (a RowReader, engine.h), as gk_unique_rows() finds them in a
// matrix (src/data_glue.cpp; R/starts.R: random starts with nstart > 1 draw
// from them, as stats draws from unique(x)).  Plain C++ (no R).
#ifndef GPUKMEANS_DISTINCT_ROWS_H
#define GPUKMEANS_DISTINCT_ROWS_H

#include <cstdint>
#include <vector>

#include "engine.h"
#include "row_keys.h"

namespace gk {

// A row's hash as the distinct-row scans take it (values as row_key_bits():
// 0 and -0 alike); the same in one process wherever the row is read.
inline std::uint64_t distinct_row_hash(const double* x, std::int64_t ld, int d, std::int64_t i) {
  std::uint64_t h = 1469598103934665603ULL;
  for (int c = 0; c < d; ++c) {
    h ^= row_key_bits(x[i + ld * c]);
    h *= 1099511628211ULL;
    h ^= h >> 29;
  }
  return h;
}

// The 0-based indices of the distinct rows of x (n x d, column-major, in
// memory; n < 2^31), in order of first occurrence: the rows base R's
// unique(x) keeps (rows compare with == in every column, 0 and -0 alike).
// Open-addressed tables of 8-byte slots (the row and 32 bits of its hash),
// at most half full: one for all the rows on one thread; with more, the
// rows split by hash into parts, one table a part, the parts on the
// threads.  1e6 distinct rows x 2 on this project's machine: 31-42 ms on
// one thread, against 269 for the std::unordered_map before it (a node
// allocated per row), and 14-17 on two (x 16: 110 -> 31); 1e6 rows of 2601
// distinct ones 9 ms on one, 18 on two (the parts' arrays cost more than
// the tables' few hot slots).  GPUKMEANS_DISTINCT_HASH_BITS (internal, the tests)
// keeps fewer bits of the hashes, as for distinct_rows().
std::vector<std::int32_t> distinct_matrix_rows(const double* x, std::int64_t n, int d, int threads = 1);

// The 0-based indices of the distinct rows of the n x d rows of `reader`,
// in order of first occurrence; rows compare with == in every column (as
// gk_unique_rows).  Two passes: the rows' hashes, block by block; then the
// rows that share a hash with another, read again in groups, compared with
// the group's rows seen before.  Memory: up to 21 bytes a row, and a block.
std::vector<std::int64_t> distinct_rows(RowReader& reader, std::int64_t n, int d, int threads);

}  // namespace gk

#endif
