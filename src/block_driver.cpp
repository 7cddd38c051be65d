// block_driver.cpp: see block_driver.h.
#include "block_driver.h"

#include <cmath>
#include <unordered_map>

#include "exact_reduce.h"
#include "parity.h"
#include "row_keys.h"

namespace gk {

namespace {

[[noreturn]] void invalid(const std::string& what) { throw EngineError(EngineError::Kind::kInvalid, what); }

// k x d column-major -> row-major.
std::vector<double> row_major(const double* c, std::int64_t k, int d) {
  std::vector<double> out(static_cast<std::size_t>(k) * d);
  for (std::int64_t i = 0; i < k; ++i)
    for (int j = 0; j < d; ++j) out[static_cast<std::size_t>(i) * d + j] = c[i + k * static_cast<std::int64_t>(j)];
  return out;
}

}  // namespace

BlockFit::BlockFit(std::unique_ptr<Engine> engine, int d, std::int64_t offset, std::int64_t total, int host_threads)
    : engine_(std::move(engine)), d_(d), n_(engine_ ? engine_->n() : 0), offset_(offset), total_(total),
      host_threads_(host_threads) {
  if (engine_ && engine_->d() != d) invalid("block: the engine's columns differ");
  if (offset < 0 || offset + n_ > total) invalid("block: rows outside [0, N)");
}

// ---- Lloyd ------------------------------------------------------------------

std::vector<double> BlockFit::column_maxabs() {
  return engine_ ? engine_->column_maxabs() : std::vector<double>(d_, 0.0);
}

std::vector<double> BlockFit::shift() { return engine_ ? engine_->shift() : std::vector<double>(d_, 0.0); }

std::vector<double> BlockFit::step(const double* centers, int k, const std::vector<int>& scale, bool first) {
  const std::size_t kd = static_cast<std::size_t>(k) * d_;
  std::vector<double> p(1 + k + kLimbs * kd, 0.0);
  if (static_cast<int>(scale.size()) != d_) invalid("step: one scale per column");
  const bool reset = first || stepped_k_ != k;  // labels of another k are no labels
  stepped_k_ = 0;
  if (!engine_) {
    stepped_k_ = k;
    return p;
  }
  const StepSums s = engine_->step(centers, k, scale, reset);
  stepped_k_ = k;
  p[0] = static_cast<double>(s.changed);
  for (int c = 0; c < k; ++c) p[1 + c] = static_cast<double>(s.count[c]);
  for (std::size_t e = 0; e < kd; ++e) fixed_to_limbs(s.sum[e], p.data() + 1 + k + kLimbs * e);
  return p;
}

void BlockFit::check_stepped(int k) const {
  if (stepped_k_ == 0 || stepped_k_ != k) invalid("block: within-SS or labels without a step of the same k");
}

std::vector<double> BlockFit::withinss_maxterm(const double* centers, int k) {
  check_stepped(k);
  std::vector<double> out(k, 0.0);
  if (!engine_) return out;
  const std::vector<std::uint32_t> m = engine_->withinss_maxterm(centers, k);
  for (int c = 0; c < k; ++c) out[c] = static_cast<double>(m[c]);
  return out;
}

std::vector<double> BlockFit::withinss_sums(const double* centers, int k, const std::vector<double>& maxterm) {
  check_stepped(k);
  std::vector<double> out(kLimbs * static_cast<std::size_t>(k), 0.0);
  if (!engine_) return out;
  if (static_cast<int>(maxterm.size()) != k) invalid("within-SS: one maximum per cluster");
  std::vector<std::uint32_t> m(k);
  for (int c = 0; c < k; ++c) {
    const double v = maxterm[c];
    if (!(v >= 0 && v <= 4294967295.0 && v == std::floor(v))) invalid("within-SS: a maximum is not 32 bits");
    m[c] = static_cast<std::uint32_t>(v);
  }
  const std::vector<Fixed128> w = engine_->withinss_sums(centers, k, m);
  for (int c = 0; c < k; ++c) fixed_to_limbs(w[c], out.data() + kLimbs * c);
  return out;
}

std::vector<int> BlockFit::labels() {
  if (stepped_k_ == 0) invalid("block: labels without a step");
  return engine_ ? engine_->labels() : std::vector<int>();
}

StepTotals unpack_step(const std::vector<double>& p, int k, int d) {
  const std::size_t kd = static_cast<std::size_t>(k) * d;
  if (p.size() != 1 + k + kLimbs * kd) invalid("step: the reduced packet has the wrong length");
  StepTotals t;
  t.changed = count_sum(p[0]);
  t.count.resize(k);
  for (int c = 0; c < k; ++c) t.count[c] = count_sum(p[1 + c]);
  t.sum.resize(kd);
  for (std::size_t e = 0; e < kd; ++e) t.sum[e] = limbs_to_fixed(p.data() + 1 + k + kLimbs * e);
  return t;
}

std::vector<Fixed128> unpack_limbs(const std::vector<double>& limbs) {
  if (limbs.size() % kLimbs != 0) invalid("limbs: the length is not a multiple of 4");
  std::vector<Fixed128> out(limbs.size() / kLimbs);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = limbs_to_fixed(limbs.data() + kLimbs * i);
  return out;
}

// ---- k-means++ / k-means|| ---------------------------------------------------

BlockInit& BlockFit::init() {
  if (!init_) invalid("block init: not begun");
  return *init_;
}

void BlockFit::init_begin() {
  init_ = engine_ ? engine_->block_init(offset_, total_, host_threads_) : nullptr;
  d2_tree_ = BlockTree();
}

void BlockFit::init_end() {
  init_.reset();
  d2_tree_ = BlockTree();
}

void BlockFit::init_add(const double* centers, std::int64_t m) {
  if (!engine_) return;
  const std::vector<double> rm = row_major(centers, m, d_);
  init().add_centers(rm.data(), m);
  d2_tree_ = BlockTree(block_layout(offset_, n_, total_), init().d2_tree());
}

std::vector<double> BlockFit::init_d2_cover() { return pack_cover(d2_tree_.cover(), total_); }

std::vector<double> BlockFit::init_potential_covers(const double* candidates, int L) {
  const std::size_t len = packed_cover_length(total_);
  std::vector<double> out;
  out.reserve(len * L);
  if (!engine_) {
    out.assign(len * L, 0.0);
    return out;
  }
  const std::vector<double> rm = row_major(candidates, L, d_);
  const std::vector<BlockLevel1> pieces = init().potentials(rm.data(), L);
  const BlockLayout lay = block_layout(offset_, n_, total_);
  for (int j = 0; j < L; ++j) {
    const std::vector<double> p = pack_cover(BlockTree(lay, pieces[j]).cover(), total_);
    out.insert(out.end(), p.begin(), p.end());
  }
  return out;
}

std::int64_t BlockFit::init_descend(int level, std::int64_t index, double target, double off) {
  if (!engine_) invalid("block init: a descent into a block without rows");
  BlockInit& bi = init();
  return d2_tree_.descend(level, index, target, off,
                          [&](std::int64_t from, int count, double* out) { bi.d2(from, count, out); });
}

std::vector<std::int64_t> BlockFit::init_select(std::uint64_t seed, int round, double l, double phi) {
  if (!engine_) return std::vector<std::int64_t>();
  return init().select(seed, round, l, phi);
}

std::vector<double> BlockFit::init_label_counts(std::int64_t m) {
  if (!engine_) return std::vector<double>(m, 0.0);
  return init().label_counts(m);
}

std::size_t packed_cover_length(std::int64_t N) { return 1 + 3 * static_cast<std::size_t>(cover_bound(N)); }

std::vector<double> pack_cover(const std::vector<TreeNode>& cover, std::int64_t N) {
  std::vector<double> p(packed_cover_length(N), 0.0);
  if (cover.size() > static_cast<std::size_t>(cover_bound(N))) invalid("cover: more nodes than the bound");
  p[0] = static_cast<double>(cover.size());
  for (std::size_t i = 0; i < cover.size(); ++i) {
    p[1 + 3 * i] = cover[i].level;
    p[2 + 3 * i] = static_cast<double>(cover[i].index);
    p[3 + 3 * i] = cover[i].value;
  }
  return p;
}

CoverTree unpack_covers(const double* packed, int P, int per_block, int which, std::int64_t N) {
  const std::size_t len = packed_cover_length(N);
  const double bound = cover_bound(N);
  std::vector<TreeNode> nodes;
  std::vector<int> owner;
  for (int b = 0; b < P; ++b) {
    const double* c = packed + (static_cast<std::size_t>(b) * per_block + which) * len;
    if (!(c[0] >= 0 && c[0] <= bound && c[0] == std::floor(c[0]))) invalid("cover: a bad node count");
    const int m = static_cast<int>(c[0]);
    for (int i = 0; i < m; ++i) {
      TreeNode v;
      v.level = static_cast<int>(c[1 + 3 * i]);
      v.index = static_cast<std::int64_t>(c[2 + 3 * i]);
      v.value = c[3 + 3 * i];
      nodes.push_back(v);
      owner.push_back(b);
    }
  }
  return CoverTree(std::move(nodes), std::move(owner), N);
}

std::vector<std::int64_t> par_reduce_gathered(const HostData& candidates, const std::vector<double>& weight, int k,
                                              std::uint64_t seed, int threads) {
  if (static_cast<std::int64_t>(weight.size()) != candidates.n) invalid("k-means|| reduction: one weight per row");
  std::unique_ptr<Engine> e = make_cpu_engine(candidates, Precision::kDouble, threads);
  std::vector<std::int64_t> rows(candidates.n);
  for (std::int64_t i = 0; i < candidates.n; ++i) rows[i] = i;
  return par_reduce_picks(*e, rows.data(), weight, k, seed, nullptr);
}

// ---- distinct rows -------------------------------------------------------------

std::vector<std::uint64_t> row_hashes(const HostData& x, const std::vector<std::int64_t>& rows) {
  std::vector<std::uint64_t> h(rows.size());
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (rows[r] < 0 || rows[r] >= x.n) invalid("row hashes: a row outside x");
    h[r] = row_hash(x.x, x.n, x.d, rows[r]);
  }
  return h;
}

std::vector<std::vector<char>> shared_hashes(const std::vector<std::vector<std::uint64_t>>& by_block) {
  struct Seen {
    std::size_t block;
    bool shared;
  };
  std::size_t total = 0;
  for (const auto& v : by_block) total += v.size();
  std::unordered_map<std::uint64_t, Seen> seen(total);
  for (std::size_t b = 0; b < by_block.size(); ++b)
    for (std::uint64_t h : by_block[b]) {
      auto it = seen.find(h);
      if (it == seen.end()) seen.emplace(h, Seen{b, false});
      else if (it->second.block != b) it->second.shared = true;
    }
  std::vector<std::vector<char>> out(by_block.size());
  for (std::size_t b = 0; b < by_block.size(); ++b) {
    out[b].resize(by_block[b].size());
    for (std::size_t i = 0; i < by_block[b].size(); ++i) out[b][i] = seen[by_block[b][i]].shared ? 1 : 0;
  }
  return out;
}

std::vector<std::vector<char>> rows_seen_before(const std::vector<HostData>& by_block) {
  struct Ref {
    std::size_t block;
    std::int64_t row;
  };
  struct Hash {
    const std::vector<HostData>* b;
    std::size_t operator()(const Ref& r) const {
      const HostData& x = (*b)[r.block];
      return static_cast<std::size_t>(row_hash(x.x, x.n, x.d, r.row));
    }
  };
  struct Equal {
    const std::vector<HostData>* b;
    bool operator()(const Ref& u, const Ref& v) const {
      const HostData &x = (*b)[u.block], &y = (*b)[v.block];
      for (int c = 0; c < x.d; ++c)
        if (!(x.x[u.row + x.n * static_cast<std::int64_t>(c)] == y.x[v.row + y.n * static_cast<std::int64_t>(c)]))
          return false;
      return true;
    }
  };
  std::size_t total = 0;
  for (const HostData& h : by_block) {
    if (h.d != by_block[0].d) invalid("distinct rows: the blocks' columns differ");
    total += static_cast<std::size_t>(h.n);
  }
  std::unordered_map<Ref, char, Hash, Equal> first(total, Hash{&by_block}, Equal{&by_block});
  std::vector<std::vector<char>> out(by_block.size());
  for (std::size_t b = 0; b < by_block.size(); ++b) {
    out[b].assign(by_block[b].n, 0);
    for (std::int64_t i = 0; i < by_block[b].n; ++i) {
      auto ins = first.emplace(Ref{b, i}, 0);
      if (!ins.second && ins.first->first.block < b) out[b][i] = 1;
    }
  }
  return out;
}

}  // namespace gk
