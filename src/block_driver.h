// block_driver.h: one process's part of a fit whose rows are spread over
// several processes (MPI ranks), each holding a block of consecutive rows
// [offset, offset + n) of N.  The processes talk in R (R/mpi.R, through
// Rmpi); this is what each does with its block between two collective
// operations, on any engine (engine.h), and how it reads what they return.
//
// Everything a process sends is exact to combine, so the result does not
// depend on how the rows are split:
// - Lloyd: the step's partial sums are 128-bit fixed point
//   (src/fixed_point.h) at scales from the maxima of all blocks, sent as
//   limbs that MPI adds exactly as doubles (src/exact_reduce.h); counts and
//   changed points are integers; the centers are computed from the totals
//   as lloyd_parts() computes them, so a fit over any blocks is lloyd_parts()
//   over the concatenated rows, bit for bit.
// - The initialisations: the sum trees of src/parity.h over the N rows, from
//   each block's cover (src/block_tree.h), so the totals and the D^2
//   descents are those of one process holding every row.
// - Distinct rows (stats' unique(x) for random starts): 64-bit row hashes,
//   then an exact comparison of the rows whose hash occurs in more than one
//   block.
// Plain C++, no R.
#ifndef GPUKMEANS_BLOCK_DRIVER_H
#define GPUKMEANS_BLOCK_DRIVER_H

#include <cstdint>
#include <memory>
#include <vector>

#include "block_tree.h"
#include "engine.h"
#include "fit_driver.h"

namespace gk {

class BlockFit {
 public:
  // engine holds the block's rows; nullptr for a block without rows (its
  // contributions are then zeros and empty covers).
  BlockFit(std::unique_ptr<Engine> engine, int d, std::int64_t offset, std::int64_t total, int host_threads);
  Engine* engine() { return engine_.get(); }
  std::int64_t n() const { return n_; }
  int d() const { return d_; }
  std::int64_t offset() const { return offset_; }
  std::int64_t total() const { return total_; }

  // ---- Lloyd ------------------------------------------------------------------
  // max |stored x| per column (0 for no rows): the maxima over all blocks
  // give the scales (step_scales) and the range check.
  std::vector<double> column_maxabs();
  std::vector<double> shift();
  // One step with centers (k x d, stored coordinates): the packet
  //   [changed, count[0..k), limbs of sum[c + k j] (kLimbs each)],
  // whose element-wise sum over all blocks unpack_step() reads.
  std::vector<double> step(const double* centers, int k, const std::vector<int>& scale, bool first);
  // Within-SS of the last step's labels: each cluster's largest term (upper
  // 32 bits, k values, combined by max), then the limbs of the sums (kLimbs
  // k values, combined by sum) at the scales of the combined maxima.
  std::vector<double> withinss_maxterm(const double* centers, int k);
  std::vector<double> withinss_sums(const double* centers, int k, const std::vector<double>& maxterm);
  std::vector<int> labels();  // 1-based, n

  // ---- k-means++ / k-means|| (BlockInit, parity.h) ---------------------------
  void init_begin();
  void init_end();
  // Adds m centers (m x d, column-major as R holds them) in order; the
  // block's tree of D2 is rebuilt.
  void init_add(const double* centers, std::int64_t m);
  // The block's cover of the D2 tree, packed (pack_cover).
  std::vector<double> init_d2_cover();
  // For L candidates (L x d, column-major), L packed covers one after the
  // other: the trees of min(D2, dist(., candidate)).
  std::vector<double> init_potential_covers(const double* candidates, int L);
  // The D^2 descent below a cover node of this block (CoverTree::descend):
  // the chosen row (global).
  std::int64_t init_descend(int level, std::int64_t index, double target, double off);
  std::vector<std::int64_t> init_select(std::uint64_t seed, int round, double l, double phi);
  std::vector<double> init_label_counts(std::int64_t m);

 private:
  BlockInit& init();
  std::unique_ptr<Engine> engine_;
  int d_;
  std::int64_t n_, offset_, total_;
  int host_threads_;
  void check_stepped(int k) const;
  std::unique_ptr<BlockInit> init_;
  BlockTree d2_tree_;
  int stepped_k_ = 0;  // the k of the last step (0: none yet)
};

// The total of a step's packets over all blocks.
struct StepTotals {
  std::int64_t changed = 0;
  std::vector<std::int64_t> count;  // k
  std::vector<Fixed128> sum;        // k x d
};
StepTotals unpack_step(const std::vector<double>& packet, int k, int d);
std::vector<Fixed128> unpack_limbs(const std::vector<double>& limbs);

// A cover as doubles: 1 + 3 cover_bound(N) values: the count, then (level,
// index, value) per node, zero padded (every block's is the same length, for
// an allgather).
std::size_t packed_cover_length(std::int64_t N);
std::vector<double> pack_cover(const std::vector<TreeNode>& cover, std::int64_t N);
// The tree made by P blocks' packed covers, block after block, each block
// giving `per_block` covers one after the other: cover number `which` of
// each.
CoverTree unpack_covers(const double* packed, int P, int per_block, int which, std::int64_t N);

// The weighted greedy picks of the k-means|| reduction (par_reduce_picks)
// over m candidates gathered on the host (m x d), on the CPU engine: the
// same picks as any engine holding all the rows, in double precision.
std::vector<std::int64_t> par_reduce_gathered(const HostData& candidates, const std::vector<double>& weight, int k,
                                              std::uint64_t seed, int threads);

// ---- distinct rows over blocks (stats' unique(x)) --------------------------
// 64-bit hashes of rows rows[0..m) (0-based) of x, equal for rows that are
// equal as R's duplicated() sees doubles (0 == -0).
std::vector<std::uint64_t> row_hashes(const HostData& x, const std::vector<std::int64_t>& rows);
// For the hashes each block sent (in block order): whether the hash also
// occurs in another block.
std::vector<std::vector<char>> shared_hashes(const std::vector<std::vector<std::uint64_t>>& by_block);
// For the rows each block sent (m_b x d each, column-major, in block order;
// each block's rows distinct): whether an earlier block sent an equal row.
std::vector<std::vector<char>> rows_seen_before(const std::vector<HostData>& by_block);

}  // namespace gk

#endif
