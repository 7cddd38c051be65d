// block_tree.h: the fixed sum tree of src/parity.h (points 2 and 3) over N
// leaves whose values are spread over several processes (MPI ranks), each
// holding a block of consecutive leaves [offset, offset + n).  The blocks need
// not be aligned to the tree.
//
// Node (t, j) of level t covers the leaves [j 32^t, min(N, (j + 1) 32^t));
// its value is the sequential sum of its children in order (level 0: the
// leaves).  A block can compute alone every node that lies inside it (its
// "complete" nodes); it sends the largest of them, those whose parent is not
// complete in it (its "cover": at most 62 per level), and any process that
// sees the covers of all blocks computes the nodes that straddle blocks from
// their children in the same order, so the total and the D^2 descent are,
// bit for bit, those of sum_tree_total / sum_tree_sample over all N leaves
// in one process, for any split of the leaves.  Plain C++, no R.
#ifndef GPUKMEANS_BLOCK_TREE_H
#define GPUKMEANS_BLOCK_TREE_H

#include <cstdint>
#include <functional>
#include <vector>

namespace gk {

// The top level of the tree over N leaves (0 when N <= 1: the leaf is the
// total), and the number of nodes of level t.
int tree_top(std::int64_t N);
std::int64_t tree_level_size(std::int64_t N, int t);

// Where a block's leaves sit in the tree: the level-1 nodes that lie inside
// it, [first_node, end_node) (empty when equal), and the leaves before
// ([offset, head_end)) and after ([tail_begin, offset + n)) them, which
// belong to level-1 nodes the block shares with its neighbours.  All
// indices are global.
struct BlockLayout {
  std::int64_t offset = 0, n = 0, total = 0;
  std::int64_t first_node = 0, end_node = 0;
  std::int64_t head_end = 0, tail_begin = 0;
};
BlockLayout block_layout(std::int64_t offset, std::int64_t n, std::int64_t total);

// What an engine computes over its block for one tree (engine.h, BlockInit):
// the values of the level-1 nodes inside the block and the leaves outside
// them.
struct BlockLevel1 {
  std::vector<double> level1;  // nodes [first_node, end_node)
  std::vector<double> head;    // leaves [offset, head_end)
  std::vector<double> tail;    // leaves [tail_begin, offset + n)
};

struct TreeNode {
  int level = 0;
  std::int64_t index = 0;
  double value = 0.0;
};

// The most cover nodes a block of a tree over N leaves can have.
int cover_bound(std::int64_t N);

// A block's complete nodes, built from its level-1 pieces.
class BlockTree {
 public:
  BlockTree() = default;
  BlockTree(const BlockLayout& layout, const BlockLevel1& pieces);
  // The maximal complete nodes in leaf order (empty for an empty block).
  const std::vector<TreeNode>& cover() const { return cover_; }
  // D^2 descent below the complete node (level, index) of this block, with
  // the target and offset the descent above it reached (parity.h point 3);
  // leaves(from, count, out) gives the block's leaf values (global from) of
  // a complete level-1 node.  Returns the chosen leaf (global index).
  std::int64_t descend(int level, std::int64_t index, double target, double off,
                       const std::function<void(std::int64_t, int, double*)>& leaves) const;

 private:
  double node(int level, std::int64_t index) const;  // a complete node of level >= 1
  BlockLayout lay_;
  int top_ = 0;
  std::vector<std::vector<double>> levels_;  // levels_[t - 1]: complete nodes of level t from first_[t - 1]
  std::vector<std::int64_t> first_;
  std::vector<TreeNode> cover_;
};

// The covers of all blocks, in block order, with the block each node came
// from; the tree over N leaves they make.  Throws EngineError(kInvalid) when
// the covers do not tile [0, N).
class CoverTree {
 public:
  CoverTree(std::vector<TreeNode> nodes, std::vector<int> owner, std::int64_t N);
  double total() const;
  // The D^2 descent with uniform u from the root down to the first cover
  // node it enters: that node's block (-1 when the total is not > 0), the
  // node, and the target and offset to continue with (BlockTree::descend).
  struct Entry {
    int owner = -1;
    int level = 0;
    std::int64_t index = 0;
    double target = 0.0, off = 0.0;
  };
  Entry descend(double u) const;

 private:
  long find(int level, std::int64_t index) const;  // position in nodes_, or -1
  double value(int level, std::int64_t index) const;
  std::vector<double> children(int level, std::int64_t index) const;
  std::vector<TreeNode> nodes_;
  std::vector<int> owner_;
  std::int64_t N_;
  int top_;
};

}  // namespace gk

#endif
