// block_tree.cpp: see block_tree.h.
#include "block_tree.h"

#include <algorithm>

#include "engine.h"
#include "parity.h"

namespace gk {

namespace {

constexpr int A = GK_SUM_ARITY;

// 32^t (t <= 12 here: N < 2^63).
std::int64_t span(int t) {
  std::int64_t s = 1;
  for (int i = 0; i < t; ++i) s *= A;
  return s;
}

inline double seq_sum(const double* a, std::int64_t m) {
  double s = 0.0;
  for (std::int64_t j = 0; j < m; ++j) s = s + a[j];
  return s;
}

[[noreturn]] void invalid(const char* what) { throw EngineError(EngineError::Kind::kInvalid, what); }

}  // namespace

int tree_top(std::int64_t N) {
  int t = 0;
  for (std::int64_t m = N; m > 1; m = level_up(m)) ++t;
  return t;
}

std::int64_t tree_level_size(std::int64_t N, int t) {
  std::int64_t m = N;
  for (int i = 0; i < t; ++i) m = level_up(m);
  return m;
}

int cover_bound(std::int64_t N) { return 2 * (A - 1) * (tree_top(N) + 1); }

BlockLayout block_layout(std::int64_t offset, std::int64_t n, std::int64_t total) {
  BlockLayout L;
  L.offset = offset;
  L.n = n;
  L.total = total;
  const std::int64_t e = offset + n;
  L.head_end = L.tail_begin = e;
  if (n <= 0 || tree_top(total) == 0) return L;
  const std::int64_t first = (offset + A - 1) / A;
  const std::int64_t end = e == total ? level_up(total) : e / A;
  L.first_node = L.end_node = first;
  if (end <= first) return L;
  L.end_node = end;
  L.head_end = first * A;
  L.tail_begin = std::min(e, end * A);
  return L;
}

BlockTree::BlockTree(const BlockLayout& layout, const BlockLevel1& pieces) : lay_(layout), top_(tree_top(layout.total)) {
  const BlockLayout& L = lay_;
  if (L.n <= 0) return;
  if (static_cast<std::int64_t>(pieces.level1.size()) != L.end_node - L.first_node ||
      static_cast<std::int64_t>(pieces.head.size()) != L.head_end - L.offset ||
      static_cast<std::int64_t>(pieces.tail.size()) != L.offset + L.n - L.tail_begin)
    invalid("block tree: the pieces do not match the block");
  for (std::size_t i = 0; i < pieces.head.size(); ++i)
    cover_.push_back(TreeNode{0, L.offset + static_cast<std::int64_t>(i), pieces.head[i]});
  for (std::size_t i = 0; i < pieces.tail.size(); ++i)
    cover_.push_back(TreeNode{0, L.tail_begin + static_cast<std::int64_t>(i), pieces.tail[i]});
  if (top_ >= 1 && L.end_node > L.first_node) {
    levels_.push_back(pieces.level1);
    first_.push_back(L.first_node);
    // Level t + 1 from level t: the parents all of whose children are complete.
    for (int t = 1; t < top_; ++t) {
      const std::vector<double>& below = levels_[t - 1];
      if (below.empty()) break;
      const std::int64_t a = first_[t - 1], b = a + static_cast<std::int64_t>(below.size()) - 1;
      const std::int64_t m = tree_level_size(L.total, t);
      const std::int64_t j0 = (a + A - 1) / A;
      const std::int64_t j1 = b == m - 1 ? (m - 1) / A : (b + 1) / A - 1;
      std::vector<double> up;
      for (std::int64_t j = j0; j <= j1; ++j) {
        const std::int64_t c0 = j * A, c1 = std::min(m, c0 + A);
        up.push_back(seq_sum(below.data() + (c0 - a), c1 - c0));
      }
      if (up.empty()) break;
      levels_.push_back(std::move(up));
      first_.push_back(j0);
    }
    // The cover: complete nodes whose parent is not complete.
    for (std::size_t t = 1; t <= levels_.size(); ++t) {
      const std::int64_t a = first_[t - 1], b = a + static_cast<std::int64_t>(levels_[t - 1].size()) - 1;
      std::int64_t lo = b + 1, hi = b;  // children of complete parents: [lo, hi]
      if (t < levels_.size()) {
        const std::int64_t pa = first_[t], pb = pa + static_cast<std::int64_t>(levels_[t].size()) - 1;
        lo = pa * A;
        hi = std::min(pb * A + A - 1, b);
      }
      for (std::int64_t j = a; j <= b; ++j)
        if (j < lo || j > hi) cover_.push_back(TreeNode{static_cast<int>(t), j, levels_[t - 1][j - a]});
    }
  }
  // (N == 1: the one leaf, a head leaf, is the root.)
  std::sort(cover_.begin(), cover_.end(), [](const TreeNode& u, const TreeNode& v) {
    return u.index * span(u.level) < v.index * span(v.level);
  });
}

double BlockTree::node(int level, std::int64_t index) const {
  const std::size_t t = static_cast<std::size_t>(level);
  if (t < 1 || t > levels_.size()) invalid("block tree: not a complete node");
  const std::int64_t i = index - first_[t - 1];
  if (i < 0 || i >= static_cast<std::int64_t>(levels_[t - 1].size())) invalid("block tree: not a complete node");
  return levels_[t - 1][i];
}

std::int64_t BlockTree::descend(int level, std::int64_t index, double target, double off,
                                const std::function<void(std::int64_t, int, double*)>& leaves) const {
  double a[A];
  while (level >= 1) {
    const std::int64_t c0 = index * A;
    const std::int64_t m = std::min<std::int64_t>(A, tree_level_size(lay_.total, level - 1) - c0);
    if (level == 1) {
      if (c0 < lay_.offset || c0 + m > lay_.offset + lay_.n) invalid("block tree: descent outside the block");
      leaves(c0, static_cast<int>(m), a);
    } else {
      for (int c = 0; c < m; ++c) a[c] = node(level - 1, c0 + c);
    }
    const int c = descend_children(a, static_cast<int>(m), target, &off);
    if (c < 0) return -1;
    index = c0 + c;
    --level;
  }
  return index;
}

CoverTree::CoverTree(std::vector<TreeNode> nodes, std::vector<int> owner, std::int64_t N)
    : nodes_(std::move(nodes)), owner_(std::move(owner)), N_(N), top_(tree_top(N)) {
  if (owner_.size() != nodes_.size()) invalid("cover tree: one owner per node");
  std::int64_t next = 0;
  for (const TreeNode& v : nodes_) {
    if (v.level < 0 || v.level > top_ || v.index < 0 || v.index >= tree_level_size(N_, v.level))
      invalid("cover tree: a node outside the tree");
    const std::int64_t s = span(v.level);
    if (v.index * s != next) invalid("cover tree: the blocks' nodes do not tile the rows");
    next = std::min(N_, (v.index + 1) * s);
  }
  if (next != N_) invalid("cover tree: the blocks' nodes do not cover every row");
}

long CoverTree::find(int level, std::int64_t index) const {
  const std::int64_t start = index * span(level);
  auto it = std::lower_bound(nodes_.begin(), nodes_.end(), start,
                             [](const TreeNode& v, std::int64_t s) { return v.index * span(v.level) < s; });
  if (it == nodes_.end() || it->level != level || it->index != index) return -1;
  return static_cast<long>(it - nodes_.begin());
}

std::vector<double> CoverTree::children(int level, std::int64_t index) const {
  const std::int64_t c0 = index * A;
  const std::int64_t m = std::min<std::int64_t>(A, tree_level_size(N_, level - 1) - c0);
  std::vector<double> a(m);
  for (std::int64_t c = 0; c < m; ++c) a[c] = value(level - 1, c0 + c);
  return a;
}

double CoverTree::value(int level, std::int64_t index) const {
  const long p = find(level, index);
  if (p >= 0) return nodes_[p].value;
  if (level == 0) invalid("cover tree: a row no block holds");
  const std::vector<double> a = children(level, index);
  return seq_sum(a.data(), static_cast<std::int64_t>(a.size()));
}

double CoverTree::total() const { return N_ > 0 ? value(top_, 0) : 0.0; }

CoverTree::Entry CoverTree::descend(double u) const {
  Entry e;
  const double tot = total();
  if (!(tot > 0)) return e;
  e.target = u * tot;
  int level = top_;
  std::int64_t index = 0;
  for (;;) {
    const long p = find(level, index);
    if (p >= 0) {
      e.owner = owner_[p];
      e.level = level;
      e.index = index;
      return e;
    }
    const std::vector<double> a = children(level, index);
    const int c = descend_children(a.data(), static_cast<int>(a.size()), e.target, &e.off);
    if (c < 0) return Entry();
    index = index * A + c;
    --level;
  }
}

}  // namespace gk
