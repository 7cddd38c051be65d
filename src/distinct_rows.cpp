// distinct_rows.cpp: distinct_rows() (distinct_rows.h).
#include "distinct_rows.h"

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "parity.h"
#include "reader_blocks.h"
#include "slot_sort.h"
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

namespace {

// A row's mixed hash (distinct_row_hash mixed again: its low bits index a
// table, its high bits pick the part and the tag), `kept` its bits kept.
inline std::uint64_t mixed_row_hash(const double* x, std::int64_t n, int d, std::int64_t i, std::uint64_t kept) {
  return splitmix64_mix(distinct_row_hash(x, n, d, i) & kept);
}

// Rows rows[0 .. m) (0-based, in index order; nullptr: rows 0 .. m) with
// their mixed hashes h[row] (nullptr: computed here) through an
// open-addressed table of 2^bits slots at `table` (zeroed here): first[row]
// = 1 for the first of each distinct row, else 0.  A slot holds the row + 1
// in its low 32 bits (0: empty) and the hash's high 32 bits above.
void mark_first_rows(const double* x, std::int64_t n, int d, const std::int32_t* rows, std::int64_t m,
                     const std::uint64_t* h, std::uint64_t kept, int bits, std::uint64_t* table,
                     unsigned char* first) {
  const std::uint64_t mask = (std::uint64_t(1) << bits) - 1;
  std::fill(table, table + mask + 1, std::uint64_t(0));
  for (std::int64_t q = 0; q < m; ++q) {
    const std::int64_t i = rows ? rows[q] : q;
    const std::uint64_t hi = h ? h[i] : mixed_row_hash(x, n, d, i, kept);
    const std::uint64_t tag = hi >> 32;
    bool found = false;
    std::uint64_t s = hi & mask;
    for (; table[s] != 0; s = (s + 1) & mask) {
      if ((table[s] >> 32) != tag) continue;
      const std::int64_t r = static_cast<std::int64_t>(table[s] & 0xffffffffu) - 1;
      bool same = true;
      for (int c = 0; c < d && same; ++c) same = x[r + n * c] == x[i + n * c];
      if (same) {
        found = true;
        break;
      }
    }
    if (!found) table[s] = (tag << 32) | static_cast<std::uint64_t>(i + 1);
    first[i] = found ? 0 : 1;
  }
}

// The least b >= 4 with 2^b >= 2 m: a table at most half full.
int table_bits(std::int64_t m) {
  int b = 4;
  while ((std::int64_t(1) << b) < 2 * m) ++b;
  return b;
}

}  // namespace

std::vector<std::int32_t> distinct_matrix_rows(const double* x, std::int64_t n, int d, int threads) {
  const std::uint64_t kept = hash_mask();
  const int nt = threads_for(threads, n / 65536);
  std::unique_ptr<unsigned char[]> first(new unsigned char[static_cast<std::size_t>(n > 0 ? n : 1)]);
  if (nt == 1) {
    const int bits = table_bits(n);
    std::unique_ptr<std::uint64_t[]> table(new std::uint64_t[std::size_t(1) << bits]);
    mark_first_rows(x, n, d, nullptr, n, nullptr, kept, bits, table.get(), first.get());
  } else {
    // The rows split into P parts by their hashes' top bits (equal rows in
    // one part), each part's rows in index order, each part through a
    // table of its own: the first of a part's equal rows is the first of
    // all of them.
    int pbits = 1;
    while ((1 << pbits) < 4 * nt) ++pbits;
    const int P = 1 << pbits;
    std::unique_ptr<std::uint64_t[]> h(new std::uint64_t[static_cast<std::size_t>(n)]);
    std::vector<std::int64_t> at(static_cast<std::size_t>(nt) * P, 0);  // slot t's count in part p, then its place
    for_each_slot(nt, [&](int t) {
      std::int64_t* count = at.data() + static_cast<std::size_t>(t) * P;
      for (std::int64_t i = n * t / nt; i < n * (t + 1) / nt; ++i) {
        h[i] = mixed_row_hash(x, n, d, i, kept);
        ++count[h[i] >> (64 - pbits)];
      }
    });
    slot_places(at.data(), nt, P);
    // part p's rows at [part[p], part[p + 1]): from slot 0's first place
    std::vector<std::int64_t> part(static_cast<std::size_t>(P) + 1, n);
    for (int p = 0; p < P; ++p) part[p] = at[p];
    std::unique_ptr<std::int32_t[]> rows(new std::int32_t[static_cast<std::size_t>(n)]);
    for_each_slot(nt, [&](int t) {
      std::int64_t* next = at.data() + static_cast<std::size_t>(t) * P;
      for (std::int64_t i = n * t / nt; i < n * (t + 1) / nt; ++i)
        rows[next[h[i] >> (64 - pbits)]++] = static_cast<std::int32_t>(i);
    });
    // every part's table, side by side (none allocated in the parallel region)
    std::vector<std::int64_t> slot0(static_cast<std::size_t>(P) + 1, 0);
    for (int p = 0; p < P; ++p) slot0[p + 1] = slot0[p] + (std::int64_t(1) << table_bits(part[p + 1] - part[p]));
    std::unique_ptr<std::uint64_t[]> table(new std::uint64_t[static_cast<std::size_t>(slot0[P])]);
    for_each_slot(nt, [&](int t) {
      for (int p = t; p < P; p += nt)
        mark_first_rows(x, n, d, rows.get() + part[p], part[p + 1] - part[p], h.get(), kept,
                        table_bits(part[p + 1] - part[p]), table.get() + slot0[p], first.get());
    });
  }
  std::vector<std::int32_t> keep;
  keep.reserve(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    if (first[i]) keep.push_back(static_cast<std::int32_t>(i));
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
