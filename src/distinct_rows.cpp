// distinct_rows.cpp: distinct_rows() (distinct_rows.h).
#include "distinct_rows.h"

#include <algorithm>
#include <cstdlib>

#include "parity.h"
#include "reader_blocks.h"
#include "threads.h"

namespace gk {

namespace {

// The bits of the hashes kept: all, or (GPUKMEANS_DISTINCT_HASH_BITS=b,
// internal: the tests) b of them, so that distinct rows share hashes and
// the comparisons are put to work.
std::uint64_t hash_mask() {
  const char* v = std::getenv("GPUKMEANS_DISTINCT_HASH_BITS");
  const int bits = v ? std::atoi(v) : 0;
  return bits > 0 && bits < 64 ? (std::uint64_t(1) << bits) - 1 : ~std::uint64_t(0);
}

}  // namespace

std::vector<std::int32_t> distinct_matrix_rows(const double* x, std::int64_t n, int d) {
  int bits = 4;
  while ((std::int64_t(1) << bits) < 2 * n) ++bits;
  const std::uint64_t mask = (std::uint64_t(1) << bits) - 1;
  // slot: (row + 1) in the low 32 bits (0: empty), 32 bits of the hash above
  std::vector<std::uint64_t> table(static_cast<std::size_t>(mask) + 1, 0);
  std::vector<std::int32_t> keep;
  keep.reserve(static_cast<std::size_t>(n));
  const std::uint64_t kept = hash_mask();
  for (std::int64_t i = 0; i < n; ++i) {
    // (distinct_row_hash mixed again: its low bits alone index the table)
    const std::uint64_t h = splitmix64_mix(distinct_row_hash(x, n, d, i) & kept);
    const std::uint64_t tag = h >> 32;
    bool found = false;
    std::uint64_t q = h & mask;
    for (; table[q] != 0; q = (q + 1) & mask) {
      if ((table[q] >> 32) != tag) continue;
      const std::int64_t r = static_cast<std::int64_t>(table[q] & 0xffffffffu) - 1;
      bool same = true;
      for (int c = 0; c < d && same; ++c) same = x[r + n * c] == x[i + n * c];
      if (same) {
        found = true;
        break;
      }
    }
    if (!found) {
      table[q] = (tag << 32) | static_cast<std::uint64_t>(i + 1);
      keep.push_back(static_cast<std::int32_t>(i));
    }
  }
  return keep;
}

std::vector<std::int64_t> distinct_rows(RowReader& reader, std::int64_t n, int d, int threads) {
  const std::uint64_t mask = hash_mask();
  std::vector<std::uint64_t> hash(static_cast<std::size_t>(n));
  for_each_block(reader, n, d, [&](std::int64_t first, std::int64_t rows, const double* b) {
#pragma omp parallel for num_threads(threads_for(threads, rows / 4096)) schedule(static)
    for (std::int64_t i = 0; i < rows; ++i) hash[first + i] = distinct_row_hash(b, rows, d, i) & mask;
  });
  // The rows in order of (hash, index); those alone with their hash are distinct.
  std::vector<std::int32_t> order(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) order[i] = static_cast<std::int32_t>(i);
  std::sort(order.begin(), order.end(), [&hash](std::int32_t a, std::int32_t b) {
    return hash[a] != hash[b] ? hash[a] < hash[b] : a < b;
  });
  std::vector<char> repeat(static_cast<std::size_t>(n), 0);  // equal to an earlier row
  std::vector<std::int64_t> shared;                           // rows that share their hash, in that order
  for (std::int64_t q = 0; q < n;) {
    std::int64_t e = q + 1;
    while (e < n && hash[order[e]] == hash[order[q]]) ++e;
    if (e - q > 1)
      for (std::int64_t t = q; t < e; ++t) shared.push_back(order[t]);
    q = e;
  }
  // Those read again, a block's worth at a time; each compared with the
  // distinct rows of its hash group seen before it (in index order).
  std::vector<double> seen;  // the current group's distinct rows, d values each
  std::uint64_t group = 0;
  const std::int64_t m = static_cast<std::int64_t>(shared.size());
  const std::int64_t B = reader_block_rows(reader, n);
  std::vector<double> block(static_cast<std::size_t>(B) * d);
  for (std::int64_t a = 0; a < m; a += B) {
    const std::int64_t len = std::min(B, m - a);
    reader.rows(shared.data() + a, len, block.data());
    for (std::int64_t r = 0; r < len; ++r) {
      const std::int64_t i = shared[a + r];
      if (a + r == 0 || hash[i] != group) {
        group = hash[i];
        seen.clear();
      }
      bool found = false;
      for (std::size_t s = 0; !found && s < seen.size(); s += d) {
        found = true;
        for (int c = 0; c < d && found; ++c) found = seen[s + c] == block[r + len * c];
      }
      if (found) {
        repeat[i] = 1;
      } else {
        for (int c = 0; c < d; ++c) seen.push_back(block[r + len * c]);
      }
    }
  }
  std::vector<std::int64_t> keep;
  for (std::int64_t i = 0; i < n; ++i)
    if (!repeat[i]) keep.push_back(i);
  return keep;
}

}  // namespace gk
