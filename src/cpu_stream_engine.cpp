// cpu_stream_engine.cpp: the CPU engine over x that is never whole in host
// memory: the rows of a reader (HostData::reader) that reads them again
// cheaply (a dgCMatrix's slots, src/csc_reader.h), read block by block at
// every pass over the rows.  Host memory: one block of x (about 8 MiB of
// doubles; its float copy in single precision) and O(n) per-row state
// (labels, the initialisations' D2, the distance bounds), never n x d.
//
// Every pass is the in-memory CPU engine's own code run on one block at a
// time, so the results are that engine's, bit for bit, with the same
// threads: Lloyd (cpu_lloyd_blocks: cpu_lloyd's iterations, whose threads
// add their contiguous ranges of rows in point order, with its distance
// bounds: O(n) per-point state, moved to each block's rows), totss' two
// passes (src/reader_blocks.h), the initialisations (src/cpu_init.cpp over
// ReaderPoints: the same picks), the assignment, and the step-by-step
// pieces of lloyd_parts() (whose fixed-point sums add up the same for any
// split of the rows).
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cpu_engine.h"
#include "cpu_engine_base.h"
#include "cpu_points.h"
#include "fit_driver.h"
#include "reader_blocks.h"
#include "single_shift.h"
#include "wall_clock.h"

namespace gk {

namespace {

// The rows of a block: about 8 MiB of doubles, so that a block read from
// the source is still in cache when the assignment and the sums read it
// (2e6 x 50 on the 2-core development machine: 0.34 s an iteration against
// 0.40 s with the readers' 32 MiB blocks; tools/cuda-dev/LOG.md).  Internal:
// GPUKMEANS_CPU_STREAM_BLOCK (bytes) sets another size, for measurements.
inline std::int64_t block_rows_for(int d) {
  const char* e = std::getenv("GPUKMEANS_CPU_STREAM_BLOCK");
  const double bytes = e && std::atof(e) > 0 ? std::atof(e) : 8388608.0;
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(bytes / 8.0 / d));
}

class CpuStreamEngine final : public CpuEngineBase {
 public:
  CpuStreamEngine(const HostData& data, Precision precision, int threads, const double* shift)
      : CpuEngineBase(data, precision, threads), reader_(*data.reader), points_(reader_, n_, d_, block_rows_for(d_)) {
    const double t0 = wall_seconds();
    // One pass: the check of the values (where R left it here) and totss'
    // column means.
    std::int64_t bad = -1;
    means_ = reader_column_means(reader_, n_, d_, threads_, data.finite ? nullptr : &bad);
    if (bad >= 0) throw NonFiniteData(bad);
    if (single()) {
      if (shift) shift_.assign(shift, shift + d_);
      else reader_single_shift(reader_, n_, d_, shift_.data());
    }
    seconds_upload_ = wall_seconds() - t0;
  }

  std::string device() const override { return CpuEngineBase::device() + source_suffix(streamed_chunks()); }
  std::int64_t streamed_chunks() const override { return points_.blocks(); }

  double totss() override { return reader_deviations_total(reader_, n_, d_, means_.data(), threads_); }

  // The in-memory engine's fit (cpu_lloyd), bit for bit, distance bounds
  // included.
  LloydFit lloyd(const double* centers, int k, int max_iter, IterationObserver* observer, Labels into) override {
    if (!single()) {
      const StoredBlocks<double> blocks = [this](const std::function<void(std::int64_t, std::int64_t, const double*)>& fn) {
        points_.for_each_block([&](std::int64_t first, std::int64_t rows, const double* xb, std::int64_t) { fn(first, rows, xb); });
      };
      StoredRange<double> range;
      if (reader_.concurrent()) range = [this](std::int64_t first, std::int64_t rows, double* out) { reader_.block(first, rows, out); };
      return cpu_lloyd_blocks<double>(blocks, range, n_, d_, k, centers, max_iter, threads_, observer,
                                      std::move(into));
    }
    // single precision works on float(x - shift): centers in and out of those coordinates
    const StoredBlocks<float> blocks = [this](const std::function<void(std::int64_t, std::int64_t, const float*)>& fn) {
      points_.for_each_block([&](std::int64_t first, std::int64_t rows, const double* xb, std::int64_t) {
        fn(first, rows, stored_block(xb, rows));
      });
    };
    std::vector<double> c(centers, centers + static_cast<std::size_t>(k) * d_);
    shift_centers(c.data(), k, -1.0);
    StoredRange<float> range;
    if (reader_.concurrent())
      range = [this](std::int64_t first, std::int64_t rows, float* out) {
        std::vector<double> v(static_cast<std::size_t>(rows) * d_);
        reader_.block(first, rows, v.data());
        store_rows(v.data(), rows, out);  // (inside a thread of a parallel region: one thread)
      };
    LloydFit fit = cpu_lloyd_blocks<float>(blocks, range, n_, d_, k, c.data(), max_iter, threads_, observer,
                                           std::move(into));
    shift_centers(fit.centers.data(), k, 1.0);
    return fit;
  }

  void assign(const double* centers, int k, int* cluster) override {
    points_.for_each_block([&](std::int64_t first, std::int64_t rows, const double* xb, std::int64_t) {
      cpu_assign(xb, rows, d_, k, centers, threads_, cluster + first);
    });
  }

  std::vector<double> column_maxabs() override {
    std::vector<double> m(d_, 0.0);
    for_each_stored([&](std::int64_t, std::int64_t rows, const auto* xb) {
      const std::vector<double> b = cpu_column_maxabs(xb, rows, d_, threads_);
      for (int j = 0; j < d_; ++j) m[j] = std::max(m[j], b[j]);
    });
    return m;
  }

  StepSums step(const double* centers, int k, const std::vector<int>& scale, bool first) override {
    int* lab = step_labels(first);
    StepSums out;
    out.sum.assign(static_cast<std::size_t>(k) * d_, Fixed128{0, 0});
    out.count.assign(k, 0);
    for_each_stored([&](std::int64_t from, std::int64_t rows, const auto* xb) {
      const StepSums b = cpu_step(xb, rows, d_, k, centers, scale, lab + from, threads_);
      for (std::size_t e = 0; e < out.sum.size(); ++e) add_fixed(out.sum[e], b.sum[e]);
      for (int c = 0; c < k; ++c) out.count[c] += b.count[c];
      out.changed += b.changed;
    });
    return out;
  }
  std::vector<std::uint32_t> withinss_maxterm(const double* centers, int k) override {
    std::vector<std::uint32_t> out(k, 0);
    for_each_stored([&](std::int64_t from, std::int64_t rows, const auto* xb) {
      const std::vector<std::uint32_t> b =
          cpu_withinss_maxterm(xb, rows, d_, k, centers, labels_.data() + from, threads_);
      for (int c = 0; c < k; ++c) out[c] = std::max(out[c], b[c]);
    });
    return out;
  }
  std::vector<Fixed128> withinss_sums(const double* centers, int k,
                                      const std::vector<std::uint32_t>& maxterm) override {
    std::vector<Fixed128> out(k, Fixed128{0, 0});
    for_each_stored([&](std::int64_t from, std::int64_t rows, const auto* xb) {
      const std::vector<Fixed128> b =
          cpu_withinss_sums(xb, rows, d_, k, centers, labels_.data() + from, maxterm, threads_);
      for (int c = 0; c < k; ++c) add_fixed(out[c], b[c]);
    });
    return out;
  }
  // (the initialisations: CpuEngineBase's, over the reader's blocks)

  // (R gives no streamed engine these: the sweep's quality passes and the
  // MPI ranks take x in memory.)
  QualityPoints quality(const QualityRequest&, IterationObserver*) override {
    throw EngineError(EngineError::Kind::kUnsupported, "the quality of a partition needs x in host memory");
  }
  std::unique_ptr<BlockInit> block_init(std::int64_t, std::int64_t, int) override {
    throw EngineError(EngineError::Kind::kUnsupported, "the initialisation of MPI ranks needs x in host memory");
  }

 private:
  const CpuPoints& points() const override { return points_; }

  // fn(first, rows, xb) for the blocks of x as stored (double, or
  // float(x - shift) in single precision), xb rows x d column-major.
  template <typename Fn>
  void for_each_stored(Fn fn) {
    points_.for_each_block([&](std::int64_t first, std::int64_t rows, const double* xb, std::int64_t) {
      if (single()) fn(first, rows, stored_block(xb, rows));
      else fn(first, rows, xb);
    });
  }
  // A block (rows x d) as float(x - shift), in stored_, as the in-memory
  // engine stores x.
  const float* stored_block(const double* xb, std::int64_t rows) {
    stored_.resize(static_cast<std::size_t>(rows) * d_);
    store_rows(xb, rows, stored_.data());
    return stored_.data();
  }
  RowReader& reader_;
  ReaderPoints points_;
  std::vector<double> means_;  // the column means (totss' first pass)
  std::vector<float> stored_;  // single precision: a block as float(x - shift)
};

}  // namespace

std::unique_ptr<Engine> make_cpu_stream_engine(const HostData& data, Precision precision, int threads,
                                               const double* shift) {
  if (!data.reader) throw EngineError(EngineError::Kind::kInvalid, "the streamed CPU engine reads x from a reader");
  // (a fit that needs x on the host, weights, or a reader that calls R,
  // which a pass at every iteration would make slower than one copy: R then
  // reads x into memory, or a scratch file, R/matrix_sources.R)
  if (!data.reader_streams)
    throw SourceNotResident("x from its source: this use of the CPU engine needs x in host memory");
  if (data.w) throw SourceNotResident("x from its source: observation weights need x in host memory");
  if (!data.reader->reads_again_cheaply())
    throw SourceNotResident("x from its source: the source is read through R, once, into host memory");
  return std::unique_ptr<Engine>(new CpuStreamEngine(data, precision, threads, shift));
}

}  // namespace gk
