// multi_engine.cpp: the composite engine over row blocks (see multi_engine.h).
#include "multi_engine.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "column_sum.h"
#include "cpu_engine.h"
#include "fit_driver.h"
#include "labels.h"
#include "nonfinite.h"
#include "reader_blocks.h"
#include "row_block.h"
#include "single_shift.h"
#include "stage_log.h"
#include "wall_clock.h"

namespace gk {

namespace {

[[noreturn]] void unsupported(const std::string& what) { throw EngineError(EngineError::Kind::kUnsupported, what); }

// The first row of block p of P over n rows: n p / P, down to a multiple
// of align (block P: n).
std::int64_t split_row(std::int64_t n, int p, int P, std::int64_t align) {
  if (p >= P) return n;
  const std::int64_t a = n * p / P;
  return align > 1 ? a / align * align : a;
}

// A part's rows of x read from x's reader (RowRange); the blocks it reads
// in row order, from row 0 on, also go into the column sums of all the rows
// (`sums`: the means of totss, as the CUDA engine's take_rows adds them),
// while the blocks come on from where the last part's ended (*next).
class PartReader final : public RowRange {
 public:
  PartReader(RowReader& all, std::int64_t first, std::int64_t n, int threads)
      : RowRange(all, first, n), threads_(threads) {}
  void block(std::int64_t first, std::int64_t rows, double* out) override {
    RowRange::block(first, rows, out);
    if (sums_ && this->first() + first == *next_) {
      sums_->add_values(out, rows, threads_);
      *next_ += rows;
    }
  }
  void add_to(ColumnChunks* sums, std::int64_t* next) {
    sums_ = sums;
    next_ = next;
  }

 private:
  int threads_;
  ColumnChunks* sums_ = nullptr;
  std::int64_t* next_ = nullptr;
};

class MultiEngine final : public Engine {
 public:
  MultiEngine(const HostData& data, Precision precision, const PartFactory& make, const MultiOptions& opt)
      : Engine(data, precision),
        x_(data.x),
        threads_(opt.host_threads),
        label_(opt.device),
        whole_(opt.whole),
        together_(opt.together) {
    if (data.w) unsupported("observation weights are not supported on several devices yet: fit on one device");
    if (opt.parts < 1) throw EngineError(EngineError::Kind::kInvalid, "several devices: at least one part");
    const int P = opt.parts;
    // (the whole of x, before any part takes its block: the first bad value
    // is the one a single engine would find; x from a reader: below)
    if (data.x && !data.finite) check_finite(data.x, data.n, data.d, threads_);
    std::vector<double> shift;
    if (precision == Precision::kSingle) {
      shift.resize(d_);
      if (data.x) single_shift(data.x, data.n, data.d, shift.data());
      else reader_single_shift(*data.reader, data.n, data.d, shift.data());
    }
    std::vector<std::int64_t> lo;  // the non-empty blocks
    std::vector<int> which;        // their numbers among the P
    for (int p = 0; p < P; ++p) {
      const std::int64_t a = split_row(data.n, p, P, opt.align), b = split_row(data.n, p + 1, P, opt.align);
      if (b > a) {
        lo.push_back(a);
        which.push_back(p);
      }
    }
    const int m = static_cast<int>(lo.size());
    lo.push_back(data.n);
    blocks_.resize(m);
    std::vector<std::unique_ptr<Engine>> made(m);
    const double t0 = wall_now();
    if (!data.x) {
      made_from_reader(data, lo, which, shift, make, opt.reads_rows, &made);
    } else for_each_part(m, [&](int p) {
      const std::int64_t a = lo[p], nb = lo[p + 1] - lo[p];
      HostData h;
      h.n = nb;
      h.d = d_;
      std::vector<double, LabelAllocator<double>>& blk = blocks_[p];
      if (opt.in_place) {
        h.x = data.x + a;
        h.ld = data.n;
      } else {
        blk.resize(static_cast<std::size_t>(nb) * d_);  // (not zero-filled)
        copy_row_block(data.x, data.n, d_, a, nb, blk.data(), std::max(1, threads_ / m));
        h.x = blk.data();
      }
      made[p] = make(h, which[p], shift.empty() ? nullptr : shift.data());
      if (!made[p] || made[p]->n() != nb || made[p]->d() != d_)
        throw EngineError(EngineError::Kind::kInvalid, "several devices: a part's engine does not hold its block");
      // (a part that streams its rows from host memory reads its block throughout)
      if (!opt.keep_blocks && made[p]->streamed_chunks() == 0) std::vector<double, LabelAllocator<double>>().swap(blk);
    });
    seconds_upload_ = wall_now() - t0;
    for (int p = 0; p < m; ++p) {
      lo_.push_back(lo[p]);
      parts_.push_back(made[p].get());
      owned_.push_back(std::move(made[p]));
    }
    lo_.push_back(data.n);
    single_cuda_ = precision == Precision::kSingle && std::string(parts_[0]->backend()) == "cuda";
    shift_ = shift;
  }

  const char* backend() const override { return parts_[0]->backend(); }
  std::int64_t streamed_chunks() const override {
    std::int64_t c = 0;
    for (const Engine* e : parts_) c += e->streamed_chunks();
    return c;
  }
  std::string device() const override {
    const std::string read = reader_ ? source_suffix(streamed_chunks()) : "";
    if (!label_.empty()) return label_ + (reader_ ? read : streamed_suffix(streamed_chunks()));
    std::string s = std::to_string(parts_.size()) + " parts: ";
    for (std::size_t p = 0; p < parts_.size(); ++p) s += (p ? "; " : "") + parts_[p]->device();
    return s + read;
  }

  // ---- Lloyd ---------------------------------------------------------------
  // host only (x and the fields below): the fit driver overlaps it with
  // the fit on the devices (on CPU parts, the tests' composite, it competes
  // for the cores, but runs the same way)
  // (x from a reader: on this thread, which reads the rows again, the
  // means taken as the parts read them first)
  bool totss_concurrent() const override { return reader_ == nullptr; }
  double totss() override {
    if (!have_totss_) {
      totss_ = reader_ ? reader_totss() : cpu_totss(x_, n_, d_, threads_);
      have_totss_ = true;
    }
    return totss_;
  }
  LloydFit lloyd(const double* centers, int k, int max_iter, IterationObserver* observer, Labels into) override {
    LloydFit r;
    r.cluster = std::move(into);  // (lloyd_together sizes it for all the rows)
    if (parts_[0]->lloyd_together(parts_, centers, k, max_iter, observer, &r)) return r;
    return lloyd_parts(parts_, centers, k, max_iter, observer, CenterMap(), std::move(r.cluster));
  }
  LloydFit lloyd_mapped(const double* centers, int k, int max_iter, IterationObserver* observer,
                        const CenterMap& map, Labels into) override {
    return lloyd_parts(parts_, centers, k, max_iter, observer, map, std::move(into));
  }
  void assign(const double* centers, int k, int* cluster) override {
    for_each_part(count(), [&](int p) { parts_[p]->assign(centers, k, cluster + lo_[p]); });
  }

  // ---- one step at a time ----------------------------------------------------
  std::vector<double> column_maxabs() override {
    std::vector<std::vector<double>> m(count());
    for_each_part(count(), [&](int p) { m[p] = parts_[p]->column_maxabs(); });
    std::vector<double> out(d_, 0.0);
    for (const auto& v : m)
      for (int j = 0; j < d_; ++j) out[j] = std::max(out[j], v[j]);
    return out;
  }
  std::vector<double> shift() override { return parts_[0]->shift(); }
  StepSums step(const double* centers, int k, const std::vector<int>& scale, bool first) override {
    std::vector<StepSums> s(count());
    for_each_part(count(), [&](int p) { s[p] = parts_[p]->step(centers, k, scale, first); });
    StepSums out = std::move(s[0]);
    for (int p = 1; p < count(); ++p) {
      for (std::size_t e = 0; e < out.sum.size(); ++e) add_fixed(out.sum[e], s[p].sum[e]);
      for (int c = 0; c < k; ++c) out.count[c] += s[p].count[c];
      out.changed += s[p].changed;
    }
    return out;
  }
  std::vector<std::uint32_t> withinss_maxterm(const double* centers, int k) override {
    std::vector<std::vector<std::uint32_t>> m(count());
    for_each_part(count(), [&](int p) { m[p] = parts_[p]->withinss_maxterm(centers, k); });
    std::vector<std::uint32_t> out(k, 0);
    for (const auto& v : m)
      for (int c = 0; c < k; ++c) out[c] = std::max(out[c], v[c]);
    return out;
  }
  std::vector<Fixed128> withinss_sums(const double* centers, int k, const std::vector<std::uint32_t>& maxterm) override {
    std::vector<std::vector<Fixed128>> w(count());
    for_each_part(count(), [&](int p) { w[p] = parts_[p]->withinss_sums(centers, k, maxterm); });
    std::vector<Fixed128> out(k, Fixed128{0, 0});
    for (const auto& v : w)
      for (int c = 0; c < k; ++c) add_fixed(out[c], v[c]);
    return out;
  }
  std::vector<int> labels() override {
    std::vector<std::vector<int>> l(count());
    for_each_part(count(), [&](int p) { l[p] = parts_[p]->labels(); });
    std::vector<int> out;
    out.reserve(n_);
    for (const std::vector<int>& v : l) out.insert(out.end(), v.begin(), v.end());
    return out;
  }

  // ---- initialisation: the parts together, else one engine over all the rows (init_engine())
  std::vector<std::int64_t> greedy(const std::int64_t* rows, const double* weight, std::int64_t m, std::int64_t first,
                                   int picks, const double* unif, int L, IterationObserver* observer) override {
    if (!rows) {  // k-means++ over all the rows: the parts' passes on their devices, where they can
      if (!weight && together_ && count() > 1) {
        std::vector<std::int64_t> out;
        try {
          if (parts_[0]->greedy_together(parts_, first, picks, unif, L, observer, &out)) {
            stage_mark("init_pp_together");
            return out;
          }
        } catch (const EngineError& e) {  // (its buffers do not fit: as where it cannot run)
          if (e.kind() != EngineError::Kind::kOutOfMemory) throw;
        }
      }
      // else on one engine over all the rows
      struct Release {
        MultiEngine* self;
        ~Release() { self->release_init(); }
      } release{this};
      return with_init([&](Engine& e) { return e.greedy(nullptr, weight, m, first, picks, unif, L, observer); });
    }
    // The k-means|| reduction: over the m candidates, gathered (as MPI ranks
    // gather them, src/block_driver.h par_reduce_gathered); from a reader,
    // the candidates' rows alone (the picks index `rows` either way).
    const double* sh = single_cuda_ ? shift_.data() : nullptr;
    if (x_) return cpu_greedy_stored(x_, n_, d_, sh, rows, weight, m, first, picks, unif, L, threads_, observer);
    std::vector<double> cand(static_cast<std::size_t>(m) * d_);
    reader_->rows(rows, m, cand.data());
    std::vector<std::int64_t> all(static_cast<std::size_t>(m));
    for (std::int64_t i = 0; i < m; ++i) all[i] = i;
    return cpu_greedy_stored(cand.data(), m, d_, sh, all.data(), weight, m, first, picks, unif, L, threads_, observer);
  }
  // k-means||: the parts' rounds together where they can (par_together),
  // else on one engine over all the rows
  double par_begin(std::int64_t first) override {
    if (together_ && count() > 1) {
      team_ = parts_[0]->par_together(parts_);
      double phi = 0.0;
      try {
        if (team_ && team_->begin(first, &phi)) {
          stage_mark("init_par_together");
          return phi;
        }
      } catch (const EngineError& e) {
        if (e.kind() != EngineError::Kind::kOutOfMemory) throw;
      }
      team_.reset();
    }
    return with_init([&](Engine& e) { return e.par_begin(first); });
  }
  std::vector<std::int64_t> par_round(std::uint64_t seed, int round, double l, double phi, double* phi_out,
                                      IterationObserver* observer) override {
    if (team_) return team_->round(seed, round, l, phi, phi_out);
    return init_engine().par_round(seed, round, l, phi, phi_out, observer);
  }
  std::vector<double> par_weights(std::int64_t m) override {
    if (team_) return team_->weights(m);
    return init_engine().par_weights(m);
  }
  void par_end() override {
    team_.reset();
    if (init_) init_->par_end();
    release_init();
  }

  QualityPoints quality(const QualityRequest&, IterationObserver*) override {
    unsupported("the quality indices (silhouette, the sweep over k) run on one device: use a single 'device'");
  }

  // The rows' initialisation for MPI ranks, on the host as the CUDA engine's.
  std::unique_ptr<BlockInit> block_init(std::int64_t offset, std::int64_t total, int host_threads) override {
    if (!x_) unsupported("the initialisation of MPI ranks needs x in host memory (R sends a rank no reader)");
    return make_cpu_block_init(x_, n_, d_, offset, total, host_threads);
  }

 private:
  static double wall_now() { return wall_seconds(); }
  int count() const { return static_cast<int>(parts_.size()); }

  // The parts, each reading its rows from x's reader (PartReader; parts
  // that take no reader, a copy of them read from it): all at once where
  // the reader allows (RowReader::concurrent), else one after another on
  // this thread (a reader that calls R), the reader then also adding the
  // rows up for the means of totss.  A value that is not finite: the first
  // in x's order, looked for in every part (one after another: in the parts
  // after the one that found one).
  void made_from_reader(const HostData& data, const std::vector<std::int64_t>& lo, const std::vector<int>& which,
                        const std::vector<double>& shift, const PartFactory& make, bool reads_rows,
                        std::vector<std::unique_ptr<Engine>>* made) {
    reader_ = data.reader;
    const int m = static_cast<int>(which.size());
    for (int p = 0; p < m; ++p) part_readers_.emplace_back(new PartReader(*reader_, lo[p], lo[p + 1] - lo[p], threads_));
    // Part p made from its reader; the place in x of the first value that
    // is not finite in its rows, or -1.
    auto make_part = [&](int p) -> std::int64_t {
      const std::int64_t a = lo[p], nb = lo[p + 1] - lo[p];
      PartReader& r = *part_readers_[p];
      HostData h;
      h.n = nb;
      h.d = d_;
      h.finite = data.finite;
      h.reader_streams = data.reader_streams;  // (a part that does not fit on its device: streamed from its rows)
      if (reads_rows) {
        h.reader = &r;
      } else {  // (the part's rows copied to host memory first)
        std::vector<double, LabelAllocator<double>>& blk = blocks_[p];
        blk.resize(static_cast<std::size_t>(nb) * d_);
        for_each_block(r, nb, d_, [&](std::int64_t first, std::int64_t rows, const double* block) {
          put_row_block(block, rows, d_, blk.data(), nb, first);
        });
        h.x = blk.data();
      }
      try {
        (*made)[p] = make(h, which[p], shift.empty() ? nullptr : shift.data());
      } catch (const NonFiniteData& e) {  // (its element e: the part's nb rows, column-major)
        return block_index_in_x(e.index(), a, nb, n_);
      }
      if (!(*made)[p] || (*made)[p]->n() != nb || (*made)[p]->d() != d_)
        throw EngineError(EngineError::Kind::kInvalid, "several devices: a part's engine does not hold its block");
      return -1;
    };
    std::int64_t bad = -1;
    if (reader_->concurrent() && m > 1) {
      // all at once (the column sums of totss then read x again: the
      // parts' blocks do not come in order)
      std::vector<std::int64_t> found(m, -1);
      for_each_part(m, [&](int p) { found[p] = make_part(p); });
      for (std::int64_t b : found) bad = earlier_place(bad, b);
    } else {
      ColumnChunks sums(n_, d_);
      std::int64_t next = 0;
      for (int p = 0; p < m; ++p) {
        const std::int64_t a = lo[p], nb = lo[p + 1] - lo[p];
        if (bad >= 0) {  // (only looking for an earlier bad value)
          bad = earlier_place(bad, reader_first_nonfinite(*part_readers_[p], nb, d_, a, n_, threads_));
          continue;
        }
        part_readers_[p]->add_to(&sums, &next);
        bad = make_part(p);
        part_readers_[p]->add_to(nullptr, nullptr);
      }
      if (bad < 0 && next == n_) means_ = sums.means();
    }
    if (bad >= 0) throw NonFiniteData(bad);
  }
  // totss of x from a reader: its second pass (and its first, where the
  // parts did not read all the rows in order), block by block.
  double reader_totss() {
    const double t0 = wall_now();
    if (means_.empty()) means_ = reader_column_means(*reader_, n_, d_, threads_);
    const double total = reader_deviations_total(*reader_, n_, d_, means_.data(), threads_);
    stage_note("source_totss", wall_now() - t0);
    return total;
  }
  // The data of the initialisations' engine on the host: x as the parts
  // store it (x itself in double precision; float(x - shift) for CUDA parts
  // in single), read from x's reader where there is one; nullptr: x itself.
  const double* init_host_x() {
    if (x_ && !single_cuda_) return nullptr;
    init_x_.resize(static_cast<std::size_t>(n_) * d_);
    auto put = [&](const double* v, std::int64_t first, std::int64_t rows, std::int64_t ld) {
      for (int j = 0; j < d_; ++j)
        for (std::int64_t i = 0; i < rows; ++i) {
          const double e = v[i + ld * j];
          init_x_[first + i + n_ * static_cast<std::int64_t>(j)] =
              single_cuda_ ? static_cast<double>(single_stored(e, shift_[j])) : e;
        }
    };
    if (x_) put(x_, 0, n_, n_);
    else for_each_block(*reader_, n_, d_, [&](std::int64_t first, std::int64_t rows, const double* block) {
      put(block, first, rows, rows);
    });
    return init_x_.data();
  }
  Engine& init_engine() {
    if (!init_ && whole_ && !skip_whole_) {
      // one engine over all the rows on a device, where x fits there beside
      // the parts (the same picks: parity.h, and the parts' shift): made
      // from the parts' device copies where they allow (gathered()), else
      // by a second upload of x
      HostData h;
      h.x = x_;
      h.n = n_;
      h.d = d_;
      h.reader = x_ ? nullptr : reader_;
      try {
        init_ = parts_[0]->gathered(parts_, h, threads_);
        if (init_) {
          stage_mark("init_engine_gathered");
        } else {
          init_ = whole_(h, shift_.empty() ? nullptr : shift_.data());
          if (init_) stage_mark("init_engine_uploaded");
        }
        init_whole_ = init_ != nullptr;
      } catch (const EngineError& e) {
        if (e.kind() != EngineError::Kind::kOutOfMemory) throw;
      }
    }
    if (!init_) {
      const double* stored = init_host_x();
      HostData h;
      h.x = stored ? stored : x_;
      h.n = n_;
      h.d = d_;
      init_ = make_cpu_engine(h, Precision::kDouble, threads_);
      stage_mark("init_engine_host");
    }
    return *init_;
  }
  void release_init() {
    init_.reset();
    init_whole_ = false;
    std::vector<double>().swap(init_x_);
  }
  // fn(the initialisation's engine), once more on the host where the device
  // engine ran out of memory as it began (it held nothing the host needs).
  template <typename Fn>
  auto with_init(Fn fn) -> decltype(fn(std::declval<Engine&>())) {
    Engine& e = init_engine();
    if (!init_whole_) return fn(e);
    try {
      return fn(e);
    } catch (const EngineError& err) {
      if (err.kind() != EngineError::Kind::kOutOfMemory) throw;
    }
    release_init();
    skip_whole_ = true;
    Engine& host = init_engine();
    skip_whole_ = false;
    return fn(host);
  }

  const double* x_;  // x, or nullptr: x comes from reader_ (HostData::reader)
  RowReader* reader_ = nullptr;
  std::vector<std::unique_ptr<PartReader>> part_readers_;  // the parts' rows of it
  std::vector<double> means_;                              // x's column means for totss, as the parts read them
  int threads_;
  std::string label_;
  // what CPU parts read: declared before them, freed after (labels.h's
  // allocator: not zero-filled, huge pages when large)
  std::vector<std::vector<double, LabelAllocator<double>>> blocks_;
  std::vector<std::unique_ptr<Engine>> owned_;
  std::vector<Engine*> parts_;
  std::vector<std::int64_t> lo_;  // first row of each part, then n
  bool single_cuda_ = false;
  std::vector<double> shift_;
  double totss_ = 0.0;
  bool have_totss_ = false;
  WholeFactory whole_;
  bool together_;
  bool init_whole_ = false, skip_whole_ = false;  // init_ is whole_'s; make the host's instead
  std::unique_ptr<ParTogether> team_;  // the parts' k-means|| rounds together, while they run
  std::unique_ptr<Engine> init_;  // the engine of an initialisation (whole_'s, or the CPU engine)
  std::vector<double> init_x_;    // its data, for CUDA parts in single precision
};

}  // namespace


std::unique_ptr<Engine> make_multi_engine(const HostData& data, Precision precision, const PartFactory& make,
                                          const MultiOptions& options) {
  return std::unique_ptr<Engine>(new MultiEngine(data, precision, make, options));
}

}  // namespace gk
