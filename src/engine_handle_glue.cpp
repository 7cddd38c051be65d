// engine_handle_glue.cpp: the R entry points of a fit over MPI ranks
// (R/mpi.R).  R holds the collective operations (Rmpi); between them each
// rank calls these on its block of rows, through a handle: an external
// pointer to a gk::BlockFit (src/block_driver.h) that owns the engine of the
// block and keeps the block's matrix alive (the CPU engine reads it in
// place).  The handle is freed by gk_block_free() or, failing that, by its
// finalizer.  Arguments are converted here and nothing else; indices of rows
// cross as doubles (0-based, global: below 2^53).
#include <Rcpp.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "block_driver.h"
#include "engine.h"
#include "engine_glue.h"
#include "parity.h"
#include "r_boundary.h"
#include "single_shift.h"
#include "sum_tree.h"

namespace {

gk::BlockFit* block(SEXP h) {
  if (TYPEOF(h) != EXTPTRSXP) throw gk::EngineError(gk::EngineError::Kind::kInvalid, "not a block handle");
  gk::BlockFit* p = static_cast<gk::BlockFit*>(R_ExternalPtrAddr(h));
  if (!p) throw gk::EngineError(gk::EngineError::Kind::kInvalid, "the block's engine was freed");
  return p;
}

std::uint64_t seed64(const Rcpp::NumericVector& seed) {
  return (static_cast<std::uint64_t>(seed[0]) << 32) | static_cast<std::uint64_t>(seed[1]);
}

Rcpp::NumericVector as_numeric(const std::vector<double>& v) { return Rcpp::NumericVector(v.begin(), v.end()); }

Rcpp::NumericVector as_numeric(const std::vector<std::int64_t>& v) {
  Rcpp::NumericVector out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = static_cast<double>(v[i]);
  return out;
}

Rcpp::LogicalVector as_logical(const std::vector<char>& v) {
  Rcpp::LogicalVector out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = v[i] != 0;
  return out;
}

}  // namespace

// A handle on rows [offset, offset + nrow(x)) of `total`: the engine R chose
// (make_engine) on x, none when x has no rows.  shift: the single-precision
// shift all ranks share (NULL in double precision).
// [[Rcpp::export(rng = false)]]
SEXP gk_block_new(Rcpp::NumericMatrix x, double offset, double total, std::string engine, bool single, int threads,
                  int device, Rcpp::List cuda, Rcpp::Nullable<Rcpp::NumericVector> shift) {
  return gk::guarded([&] {
    std::vector<double> sh;
    if (shift.isNotNull()) sh = Rcpp::as<std::vector<double>>(shift.get());
    std::unique_ptr<gk::Engine> e;
    if (x.nrow() > 0)
      e = gk::make_engine(gk::host_data(x), engine, single, threads, device, cuda, sh.empty() ? nullptr : sh.data());
    Rcpp::XPtr<gk::BlockFit> p(new gk::BlockFit(std::move(e), x.ncol(), static_cast<std::int64_t>(offset),
                                                static_cast<std::int64_t>(total), threads),
                               true, R_NilValue, x);
    return SEXP(p);
  });
}

// Frees the engine (device memory) now; the handle is then empty.
// [[Rcpp::export(rng = false)]]
void gk_block_free(SEXP h) {
  if (TYPEOF(h) != EXTPTRSXP) return;
  gk::BlockFit* p = static_cast<gk::BlockFit*>(R_ExternalPtrAddr(h));
  if (!p) return;
  R_ClearExternalPtr(h);
  delete p;
}

// [[Rcpp::export(rng = false)]]
Rcpp::List gk_block_info(SEXP h) {
  return gk::guarded([&] {
    gk::BlockFit* b = block(h);
    gk::Engine* e = b->engine();
    return Rcpp::List::create(Rcpp::_["n"] = static_cast<double>(b->n()),
                              Rcpp::_["backend"] = e ? std::string(e->backend()) : std::string("none"),
                              Rcpp::_["device"] = e ? e->device() : std::string("no rows"),
                              Rcpp::_["seconds_upload"] = e ? e->seconds_upload() : 0.0);
  });
}

// [[Rcpp::export(rng = false)]]
Rcpp::NumericVector gk_block_maxabs(SEXP h) {
  return gk::guarded([&] { return as_numeric(block(h)->column_maxabs()); });
}

// [[Rcpp::export(rng = false)]]
Rcpp::NumericVector gk_block_shift(SEXP h) {
  return gk::guarded([&] { return as_numeric(block(h)->shift()); });
}

// The fixed-point scales of the step sums from the maxima of all ranks.
// [[Rcpp::export(rng = false)]]
Rcpp::IntegerVector gk_step_scales(Rcpp::NumericVector maxabs) {
  const std::vector<int> s = gk::step_scales(Rcpp::as<std::vector<double>>(maxabs));
  return Rcpp::IntegerVector(s.begin(), s.end());
}

// Stops with the engines' error when distances could overflow (or, in
// single precision, underflow), given the maxima of all ranks.
// [[Rcpp::export(rng = false)]]
void gk_check_range(Rcpp::NumericVector maxabs, bool single) {
  gk::guarded([&] {
    gk::check_range(Rcpp::as<std::vector<double>>(maxabs), single ? gk::Precision::kSingle : gk::Precision::kDouble);
  });
}

// One step's packet (gk::BlockFit::step); centers k x d, stored coordinates.
// [[Rcpp::export(rng = false)]]
Rcpp::NumericVector gk_block_step(SEXP h, Rcpp::NumericMatrix centers, Rcpp::IntegerVector scale, bool first) {
  return gk::guarded([&] {
    const std::vector<int> sc(scale.begin(), scale.end());
    return as_numeric(block(h)->step(centers.begin(), centers.nrow(), sc, first));
  });
}

// The sum of all ranks' packets: changed, size and the new centers (stored
// coordinates, k x d).
// [[Rcpp::export(rng = false)]]
Rcpp::List gk_step_unpack(Rcpp::NumericVector packet, int k, Rcpp::IntegerVector scale) {
  return gk::guarded([&] {
    const int d = scale.size();
    const gk::StepTotals t = gk::unpack_step(Rcpp::as<std::vector<double>>(packet), k, d);
    const std::vector<double> cen = gk::centers_from_sums(t.sum, t.count, std::vector<int>(scale.begin(), scale.end()), k);
    Rcpp::NumericMatrix c(k, d);
    std::copy(cen.begin(), cen.end(), c.begin());
    Rcpp::IntegerVector size(k);
    for (int j = 0; j < k; ++j) size[j] = static_cast<int>(t.count[j]);
    return Rcpp::List::create(Rcpp::_["changed"] = static_cast<double>(t.changed), Rcpp::_["size"] = size,
                              Rcpp::_["centers"] = c);
  });
}

// [[Rcpp::export(rng = false)]]
Rcpp::NumericVector gk_block_wss_maxterm(SEXP h, Rcpp::NumericMatrix centers) {
  return gk::guarded([&] { return as_numeric(block(h)->withinss_maxterm(centers.begin(), centers.nrow())); });
}

// [[Rcpp::export(rng = false)]]
Rcpp::NumericVector gk_block_wss_sums(SEXP h, Rcpp::NumericMatrix centers, Rcpp::NumericVector maxterm) {
  return gk::guarded([&] {
    return as_numeric(block(h)->withinss_sums(centers.begin(), centers.nrow(), Rcpp::as<std::vector<double>>(maxterm)));
  });
}

// The within-SS from the sums of all ranks' limbs and the maxima.
// [[Rcpp::export(rng = false)]]
Rcpp::NumericVector gk_wss_unpack(Rcpp::NumericVector limbs, Rcpp::NumericVector maxterm) {
  return gk::guarded([&] {
    const std::vector<gk::Fixed128> w = gk::unpack_limbs(Rcpp::as<std::vector<double>>(limbs));
    std::vector<std::uint32_t> m(maxterm.size());
    for (R_xlen_t c = 0; c < maxterm.size(); ++c) m[c] = static_cast<std::uint32_t>(maxterm[c]);
    if (w.size() != m.size()) throw gk::EngineError(gk::EngineError::Kind::kInvalid, "within-SS: lengths differ");
    return as_numeric(gk::withinss_from_sums(w, m));
  });
}

// [[Rcpp::export(rng = false)]]
Rcpp::IntegerVector gk_block_labels(SEXP h) {
  return gk::guarded([&] {
    const std::vector<int> l = block(h)->labels();
    return Rcpp::IntegerVector(l.begin(), l.end());
  });
}

// The single-precision shift of src/single_shift.h from its sample rows
// (those of a one-process engine, gathered in order).
// [[Rcpp::export(rng = false)]]
Rcpp::NumericVector gk_single_shift_rows(Rcpp::NumericMatrix sample) {
  std::vector<double> s(sample.ncol());
  gk::single_shift(sample.begin(), sample.nrow(), sample.ncol(), s.data());
  return as_numeric(s);
}

// ---- k-means++ / k-means|| ----------------------------------------------------

// [[Rcpp::export(rng = false)]]
void gk_block_init_begin(SEXP h) {
  gk::guarded([&] { block(h)->init_begin(); });
}

// [[Rcpp::export(rng = false)]]
void gk_block_init_end(SEXP h) {
  gk::guarded([&] { block(h)->init_end(); });
}

// [[Rcpp::export(rng = false)]]
void gk_block_init_add(SEXP h, Rcpp::NumericMatrix centers) {
  gk::guarded([&] { block(h)->init_add(centers.begin(), centers.nrow()); });
}

// [[Rcpp::export(rng = false)]]
Rcpp::NumericVector gk_block_init_d2_cover(SEXP h) {
  return gk::guarded([&] { return as_numeric(block(h)->init_d2_cover()); });
}

// [[Rcpp::export(rng = false)]]
Rcpp::NumericVector gk_block_init_potentials(SEXP h, Rcpp::NumericMatrix candidates) {
  return gk::guarded([&] { return as_numeric(block(h)->init_potential_covers(candidates.begin(), candidates.nrow())); });
}

// [[Rcpp::export(rng = false)]]
double gk_block_init_descend(SEXP h, int level, double index, double target, double off) {
  return gk::guarded([&] {
    return static_cast<double>(block(h)->init_descend(level, static_cast<std::int64_t>(index), target, off));
  });
}

// [[Rcpp::export(rng = false)]]
Rcpp::NumericVector gk_block_init_select(SEXP h, Rcpp::NumericVector seed, int round, double l, double phi) {
  return gk::guarded([&] { return as_numeric(block(h)->init_select(seed64(seed), round, l, phi)); });
}

// [[Rcpp::export(rng = false)]]
Rcpp::NumericVector gk_block_init_counts(SEXP h, double m) {
  return gk::guarded([&] { return as_numeric(block(h)->init_label_counts(static_cast<std::int64_t>(m))); });
}

// The length of one packed cover of a tree over N rows.
// [[Rcpp::export(rng = false)]]
int gk_cover_length(double N) { return static_cast<int>(gk::packed_cover_length(static_cast<std::int64_t>(N))); }

// The totals of the per_block trees that P ranks' packed covers make.
// [[Rcpp::export(rng = false)]]
Rcpp::NumericVector gk_cover_totals(Rcpp::NumericVector packed, int P, int per_block, double N) {
  return gk::guarded([&] {
    Rcpp::NumericVector out(per_block);
    for (int j = 0; j < per_block; ++j)
      out[j] = gk::unpack_covers(packed.begin(), P, per_block, j, static_cast<std::int64_t>(N)).total();
    return out;
  });
}

// The D^2 descents with uniforms u in tree `which` down to a rank's cover
// node: one row per u, (owner rank or -1, level, index, target, off).
// [[Rcpp::export(rng = false)]]
Rcpp::NumericMatrix gk_cover_descend(Rcpp::NumericVector packed, int P, int per_block, int which, double N,
                                     Rcpp::NumericVector u) {
  return gk::guarded([&] {
    const gk::CoverTree t = gk::unpack_covers(packed.begin(), P, per_block, which, static_cast<std::int64_t>(N));
    Rcpp::NumericMatrix out(u.size(), 5);
    for (R_xlen_t i = 0; i < u.size(); ++i) {
      const gk::CoverTree::Entry e = t.descend(u[i]);
      out(i, 0) = e.owner;
      out(i, 1) = e.level;
      out(i, 2) = static_cast<double>(e.index);
      out(i, 3) = e.target;
      out(i, 4) = e.off;
    }
    return out;
  });
}

// The k-means|| reduction's picks (0-based) among the gathered candidates.
// [[Rcpp::export(rng = false)]]
Rcpp::NumericVector gk_par_reduce_gathered(Rcpp::NumericMatrix candidates, Rcpp::NumericVector weight, int k,
                                           Rcpp::NumericVector seed, int threads) {
  return gk::guarded([&] {
    return as_numeric(gk::par_reduce_gathered(gk::host_data(candidates), Rcpp::as<std::vector<double>>(weight), k,
                                              seed64(seed), threads));
  });
}

// The constants of src/parity.h a distributed initialisation needs.
// [[Rcpp::export(rng = false)]]
Rcpp::List gk_par_settings(int k) {
  return Rcpp::List::create(Rcpp::_["rounds"] = GK_PAR_ROUNDS,
                            Rcpp::_["max_rounds"] = GK_PAR_ROUNDS + GK_PAR_MAX_EXTRA,
                            Rcpp::_["l"] = gk::par_oversampling(k), Rcpp::_["L"] = gk::greedy_candidates(k));
}

// Row floor(u N) (0-based), of a uniform u; with seed, u = u(seed, 0, 0)
// (the first k-means|| candidate).
// [[Rcpp::export(rng = false)]]
double gk_uniform_row(double u, double N, Rcpp::Nullable<Rcpp::NumericVector> seed) {
  if (seed.isNotNull()) u = gk::counter_uniform(seed64(Rcpp::NumericVector(seed.get())), 0, 0);
  return static_cast<double>(gk::uniform_index(u, static_cast<std::int64_t>(N)));
}

// ---- distinct rows ------------------------------------------------------------

// 64-bit hashes of rows (1-based) of x, as two 32-bit halves.
// [[Rcpp::export(rng = false)]]
Rcpp::List gk_row_hashes(Rcpp::NumericMatrix x, Rcpp::IntegerVector rows) {
  return gk::guarded([&] {
    std::vector<std::int64_t> r(rows.size());
    for (R_xlen_t i = 0; i < rows.size(); ++i) r[i] = static_cast<std::int64_t>(rows[i]) - 1;
    const std::vector<std::uint64_t> h = gk::row_hashes(gk::host_data(x), r);
    Rcpp::NumericVector hi(h.size()), lo(h.size());
    for (std::size_t i = 0; i < h.size(); ++i) {
      hi[i] = static_cast<double>(h[i] >> 32);
      lo[i] = static_cast<double>(h[i] & 0xffffffffULL);
    }
    return Rcpp::List::create(Rcpp::_["hi"] = hi, Rcpp::_["lo"] = lo);
  });
}

// For hashes from each rank (a list of list(hi, lo)): whether each occurs
// in another rank's list too.
// [[Rcpp::export(rng = false)]]
Rcpp::List gk_shared_hashes(Rcpp::List by_rank) {
  return gk::guarded([&] {
    std::vector<std::vector<std::uint64_t>> h(by_rank.size());
    for (R_xlen_t b = 0; b < by_rank.size(); ++b) {
      Rcpp::List l(by_rank[b]);
      Rcpp::NumericVector hi = l["hi"], lo = l["lo"];
      h[b].resize(hi.size());
      for (R_xlen_t i = 0; i < hi.size(); ++i)
        h[b][i] = (static_cast<std::uint64_t>(hi[i]) << 32) | static_cast<std::uint64_t>(lo[i]);
    }
    const std::vector<std::vector<char>> s = gk::shared_hashes(h);
    Rcpp::List out(s.size());
    for (std::size_t b = 0; b < s.size(); ++b) out[b] = as_logical(s[b]);
    return out;
  });
}

// For rows from each rank (a list of matrices): whether an earlier rank's
// matrix has an equal row.
// [[Rcpp::export(rng = false)]]
Rcpp::List gk_rows_seen_before(Rcpp::List by_rank) {
  return gk::guarded([&] {
    std::vector<Rcpp::NumericMatrix> keep;
    std::vector<gk::HostData> blocks;
    for (R_xlen_t b = 0; b < by_rank.size(); ++b) {
      keep.emplace_back(Rcpp::NumericMatrix(by_rank[b]));
      blocks.push_back(gk::host_data(keep.back()));
    }
    const std::vector<std::vector<char>> s = gk::rows_seen_before(blocks);
    Rcpp::List out(s.size());
    for (std::size_t b = 0; b < s.size(); ++b) out[b] = as_logical(s[b]);
    return out;
  });
}

// Internal (tests): the sum tree of parity.h over leaves v split into blocks
// starting at `starts` (0-based, increasing, starts[0] = 0), built from each
// block's cover as the ranks build it, against sum_tree_* over all of v:
// the totals, and the rows the D^2 descent chooses with uniforms u.
// [[Rcpp::export(rng = false)]]
Rcpp::List gk_tree_split_test(Rcpp::NumericVector v, Rcpp::NumericVector starts, Rcpp::NumericVector u) {
  return gk::guarded([&] {
    const std::int64_t N = v.size();
    const int P = starts.size();
    const std::size_t len = gk::packed_cover_length(N);
    std::vector<double> packed;
    std::vector<gk::BlockTree> trees;
    for (int b = 0; b < P; ++b) {
      const std::int64_t o = static_cast<std::int64_t>(starts[b]);
      const std::int64_t e = b + 1 < P ? static_cast<std::int64_t>(starts[b + 1]) : N;
      const gk::BlockLayout lay = gk::block_layout(o, e - o, N);
      gk::BlockLevel1 pieces;
      for (std::int64_t j = lay.first_node; j < lay.end_node; ++j) {
        double s = 0.0;
        for (std::int64_t i = j * GK_SUM_ARITY; i < std::min<std::int64_t>(N, (j + 1) * GK_SUM_ARITY); ++i) s = s + v[i];
        pieces.level1.push_back(s);
      }
      pieces.head.assign(v.begin() + o, v.begin() + lay.head_end);
      pieces.tail.assign(v.begin() + lay.tail_begin, v.begin() + e);
      trees.emplace_back(lay, pieces);
      const std::vector<double> p = gk::pack_cover(trees.back().cover(), N);
      if (p.size() != len) throw gk::EngineError(gk::EngineError::Kind::kInvalid, "packed length");
      packed.insert(packed.end(), p.begin(), p.end());
    }
    const gk::CoverTree t = gk::unpack_covers(packed.data(), P, 1, 0, N);
    std::vector<std::vector<double>> up;
    gk::sum_tree_build(v.begin(), N, up, 1);
    Rcpp::NumericVector ref(u.size()), split(u.size());
    for (R_xlen_t i = 0; i < u.size(); ++i) {
      ref[i] = static_cast<double>(gk::sum_tree_sample(v.begin(), N, up, u[i]));
      const gk::CoverTree::Entry e = t.descend(u[i]);
      split[i] = e.owner < 0 ? -1.0
                             : static_cast<double>(trees[e.owner].descend(
                                   e.level, e.index, e.target, e.off,
                                   [&](std::int64_t from, int count, double* out) {
                                     std::copy(v.begin() + from, v.begin() + from + count, out);
                                   }));
    }
    return Rcpp::List::create(Rcpp::_["total_ref"] = gk::sum_tree_total(v.begin(), N, up),
                              Rcpp::_["total_split"] = t.total(), Rcpp::_["sample_ref"] = ref,
                              Rcpp::_["sample_split"] = split);
  });
}

// An interrupt that is pending (Ctrl-C, SIGINT) now, where interrupts are
// allowed: R/mpi.R polls before and after each rank's local work, so that an
// interrupt becomes that rank's failure in the next collective operation.
// [[Rcpp::export(rng = false)]]
void gk_poll_interrupts() { Rcpp::checkUserInterrupt(); }
