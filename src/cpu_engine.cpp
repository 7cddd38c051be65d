// cpu_engine.cpp: the CPU engine object: the data (read in place in double
// precision, a float copy in single), the threads, and the state that lives
// between calls (step labels, k-means|| rounds).
#include "cpu_engine.h"

#include <memory>
#include <string>

#include "cpu_engine_base.h"

#include "cpu_weights.h"
#include "nonfinite.h"
#include "single_shift.h"
#include "wall_clock.h"

namespace gk {

namespace {

class CpuEngine final : public CpuEngineBase {
 public:
  CpuEngine(const HostData& data, Precision precision, int threads, const double* shift)
      : CpuEngineBase(data, precision, threads), x_(data.x), points_(data.x, data.n, data.d) {
    const double t0 = wall_seconds();
    if (!data.finite) check_finite(x_, n_, d_, threads_);
    if (single()) store_single(shift);
    seconds_upload_ = wall_seconds() - t0;
  }

  bool supports_weights() const override { return true; }

  double totss() override {
    return w_ ? cpu_weighted_totss(x_, n_, d_, w_, threads_) : cpu_totss(x_, n_, d_, threads_);
  }

  LloydFit lloyd(const double* centers, int k, int max_iter, IterationObserver* observer, Labels into) override {
    return lloyd_mapped(centers, k, max_iter, observer, CenterMap(), std::move(into));
  }

  // Lloyd with the map after each update (spherical k-means' own path, with
  // the distance bounds: they follow any movement of the centers), or none.
  LloydFit lloyd_mapped(const double* centers, int k, int max_iter, IterationObserver* observer,
                        const CenterMap& map, Labels into) override {
    if (!single())
      return cpu_lloyd<double>(x_, n_, d_, k, centers, max_iter, threads_, observer, map, w_, std::move(into),
                               &spatial_d_);
    // single precision works on float(x - shift): centers in and out of those coordinates
    std::vector<double> c(centers, centers + static_cast<std::size_t>(k) * d_);
    shift_centers(c.data(), k, -1.0);
    const CenterMap stored = [&](double* cen, int kk) {  // the map in the coordinates of float(x - shift)
      shift_centers(cen, kk, 1.0);
      map(cen, kk);
      shift_centers(cen, kk, -1.0);
    };
    LloydFit fit = cpu_lloyd<float>(xf_.data(), n_, d_, k, c.data(), max_iter, threads_, observer,
                                    map ? stored : CenterMap(), w_, std::move(into), &spatial_f_);
    shift_centers(fit.centers.data(), k, 1.0);
    return fit;
  }

  void assign(const double* centers, int k, int* cluster) override {
    cpu_assign(x_, n_, d_, k, centers, threads_, cluster);
  }

  std::vector<double> column_maxabs() override {
    return single() ? cpu_column_maxabs<float>(xf_.data(), n_, d_, threads_)
                    : cpu_column_maxabs<double>(x_, n_, d_, threads_);
  }
  StepSums step(const double* centers, int k, const std::vector<int>& scale, bool first) override {
    int* lab = step_labels(first);
    if (single()) return cpu_step<float>(xf_.data(), n_, d_, k, centers, scale, lab, threads_);
    return cpu_step<double>(x_, n_, d_, k, centers, scale, lab, threads_);
  }
  std::vector<std::uint32_t> withinss_maxterm(const double* centers, int k) override {
    return single() ? cpu_withinss_maxterm<float>(xf_.data(), n_, d_, k, centers, labels_.data(), threads_)
                    : cpu_withinss_maxterm<double>(x_, n_, d_, k, centers, labels_.data(), threads_);
  }
  std::vector<Fixed128> withinss_sums(const double* centers, int k,
                                      const std::vector<std::uint32_t>& maxterm) override {
    return single() ? cpu_withinss_sums<float>(xf_.data(), n_, d_, k, centers, labels_.data(), maxterm, threads_)
                    : cpu_withinss_sums<double>(x_, n_, d_, k, centers, labels_.data(), maxterm, threads_);
  }
  std::unique_ptr<BlockInit> block_init(std::int64_t offset, std::int64_t total, int) override {
    return make_cpu_block_init(x_, n_, d_, offset, total, threads_);
  }

  QualityPoints quality(const QualityRequest& request, IterationObserver* observer) override {
    if (!single()) return cpu_quality<double>(x_, n_, d_, request, threads_, observer);
    // single precision holds x - shift: the centers in those coordinates too
    QualityRequest shifted = request;
    std::vector<double> c;
    if (request.centers) {
      c.assign(request.centers, request.centers + static_cast<std::size_t>(request.k) * d_);
      shift_centers(c.data(), request.k, -1.0);
      shifted.centers = c.data();
    }
    return cpu_quality<float>(xf_.data(), n_, d_, shifted, threads_, observer);
  }

 private:
  const CpuPoints& points() const override { return points_; }

  // The float copy of x - shift (single_shift.h, or as given), in parallel
  // over columns.
  void store_single(const double* shift) {
    if (shift) shift_.assign(shift, shift + d_);
    else single_shift(x_, n_, d_, shift_.data());
    xf_.resize(static_cast<std::size_t>(n_) * d_);
    store_rows(x_, n_, xf_.data());
  }

  const double* x_;
  HostPoints points_;      // x, for the initialisations
  std::vector<float> xf_;  // single precision: the one copy of x, as float(x - shift)
  // the points ordered in space (cpu_spatial.h), made at the first fit that
  // orders them and kept for the engine's next fits (nstart's starts):
  // 12 + 4 d bytes a point in single precision, 12 + 8 d in double
  SpatialCache<double> spatial_d_;
  SpatialCache<float> spatial_f_;
};

}  // namespace

std::unique_ptr<Engine> make_cpu_engine(const HostData& data, Precision precision, int threads,
                                        const double* shift) {
  if (!data.x && data.reader) return make_cpu_stream_engine(data, precision, threads, shift);
  if (!data.x) throw EngineError(EngineError::Kind::kInvalid, "the CPU engine reads x in host memory");
  if (data.ld != 0 && data.ld != data.n)
    throw EngineError(EngineError::Kind::kInvalid, "the CPU engine reads x with contiguous columns (ld = n)");
  return std::unique_ptr<Engine>(new CpuEngine(data, precision, threads, shift));
}

}  // namespace gk
