// cpu_engine.cpp: the CPU engine object: the data (read in place in double
// precision, a float copy in single), the threads, and the state that lives
// between calls (step labels, k-means|| rounds).
#include "cpu_engine.h"

#include <memory>
#include <string>

#include "cpu_weights.h"
#include "nonfinite.h"
#include "single_shift.h"
#include "wall_clock.h"

namespace gk {

namespace {

class CpuEngine final : public Engine {
 public:
  CpuEngine(const HostData& data, Precision precision, int threads, const double* shift)
      : Engine(data, precision), x_(data.x), threads_(resolve_threads(threads)), shift_(data.d, 0.0) {
    const double t0 = wall_seconds();
    if (!data.finite) check_finite(x_, n_, d_, threads_);
    if (single()) store_single(shift);
    seconds_upload_ = wall_seconds() - t0;
  }

  const char* backend() const override { return "cpu"; }
  std::string device() const override {
    return "CPU, " + std::to_string(threads_) + (threads_ == 1 ? " thread" : " threads");
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
      return cpu_lloyd<double>(x_, n_, d_, k, centers, max_iter, threads_, observer, map, w_, std::move(into));
    // single precision works on float(x - shift): centers in and out of those coordinates
    std::vector<double> c(centers, centers + static_cast<std::size_t>(k) * d_);
    shift_centers(c.data(), k, -1.0);
    const CenterMap stored = [&](double* cen, int kk) {  // the map in the coordinates of float(x - shift)
      shift_centers(cen, kk, 1.0);
      map(cen, kk);
      shift_centers(cen, kk, -1.0);
    };
    LloydFit fit = cpu_lloyd<float>(xf_.data(), n_, d_, k, c.data(), max_iter, threads_, observer,
                                    map ? stored : CenterMap(), w_, std::move(into));
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
  std::vector<double> shift() override { return shift_; }

  StepSums step(const double* centers, int k, const std::vector<int>& scale, bool first) override {
    if (first || labels_.empty()) labels_.assign(n_, -1);
    if (single()) return cpu_step<float>(xf_.data(), n_, d_, k, centers, scale, labels_.data(), threads_);
    return cpu_step<double>(x_, n_, d_, k, centers, scale, labels_.data(), threads_);
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
  std::vector<int> labels() override {
    std::vector<int> out(labels_);
    for (int& c : out) c += 1;
    return out;
  }

  // The initialisation always works on the double data (so a seed chooses
  // the same rows in both precisions).
  std::vector<std::int64_t> greedy(const std::int64_t* rows, const double* weight, std::int64_t m,
                                   std::int64_t first, int picks, const double* unif, int L,
                                   IterationObserver* observer) override {
    return cpu_greedy(x_, n_, d_, rows, weight, m, first, picks, unif, L, threads_, observer);
  }
  double par_begin(std::int64_t first) override {
    par_.reset(new CpuParRounds(x_, n_, d_, threads_, w_));
    return par_->begin(first);
  }
  std::vector<std::int64_t> par_round(std::uint64_t seed, int round, double l, double phi, double* phi_out,
                                      IterationObserver* observer) override {
    return rounds().round(seed, round, l, phi, phi_out, observer);
  }
  std::vector<double> par_weights(std::int64_t m) override { return rounds().weights(m); }
  void par_end() override { par_.reset(); }
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
  bool single() const { return precision_ == Precision::kSingle; }

  // The float copy of x - shift (single_shift.h, or as given), in parallel
  // over columns.
  void store_single(const double* shift) {
    if (shift) shift_.assign(shift, shift + d_);
    else single_shift(x_, n_, d_, shift_.data());
    xf_.resize(static_cast<std::size_t>(n_) * d_);
    const int nt = threads_for(threads_, d_);
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
    for (int j = 0; j < d_; ++j) {
      const double* col = x_ + static_cast<std::int64_t>(j) * n_;
      float* out = xf_.data() + static_cast<std::int64_t>(j) * n_;
      const double s = shift_[j];
      for (std::int64_t i = 0; i < n_; ++i) out[i] = single_stored(col[i], s);
    }
  }

  // centers (k x d) += sign * shift, column by column.
  void shift_centers(double* c, int k, double sign) const {
    for (int j = 0; j < d_; ++j)
      for (int i = 0; i < k; ++i) c[i + static_cast<std::size_t>(k) * j] += sign * shift_[j];
  }
  CpuParRounds& rounds() {
    if (!par_) throw EngineError(EngineError::Kind::kInvalid, "k-means|| round without par_begin");
    return *par_;
  }

  const double* x_;
  int threads_;
  std::vector<double> shift_;  // single precision: the shift of the stored values (else 0)
  std::vector<float> xf_;      // single precision: the one copy of x, as float(x - shift)
  std::vector<int> labels_;  // step mode: 0-based, -1 = none yet
  std::unique_ptr<CpuParRounds> par_;
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
