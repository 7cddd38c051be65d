// cpu_engine.cpp: the CPU engine object: the data (read in place in double
// precision, a float copy in single), the threads, and the state that lives
// between calls (step labels, k-means|| rounds).
#include "cpu_engine.h"

#include <memory>
#include <string>

#include "wall_clock.h"

namespace gk {

namespace {

class CpuEngine final : public Engine {
 public:
  CpuEngine(const HostData& data, Precision precision, int threads)
      : Engine(data, precision), x_(data.x), threads_(resolve_threads(threads)) {
    const double t0 = wall_seconds();
    if (precision == Precision::kSingle) xf_.assign(x_, x_ + static_cast<std::size_t>(n_) * d_);
    seconds_upload_ = wall_seconds() - t0;
  }

  const char* backend() const override { return "cpu"; }
  std::string device() const override {
    return "CPU, " + std::to_string(threads_) + (threads_ == 1 ? " thread" : " threads");
  }

  double totss() override { return cpu_totss(x_, n_, d_, threads_); }

  LloydFit lloyd(const double* centers, int k, int max_iter, IterationObserver* observer) override {
    if (single()) return cpu_lloyd<float>(xf_.data(), n_, d_, k, centers, max_iter, threads_, observer);
    return cpu_lloyd<double>(x_, n_, d_, k, centers, max_iter, threads_, observer);
  }

  void assign(const double* centers, int k, int* cluster) override {
    cpu_assign(x_, n_, d_, k, centers, threads_, cluster);
  }

  std::vector<double> column_maxabs() override {
    return single() ? cpu_column_maxabs<float>(xf_.data(), n_, d_, threads_)
                    : cpu_column_maxabs<double>(x_, n_, d_, threads_);
  }
  std::vector<double> shift() override { return std::vector<double>(d_, 0.0); }

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
    par_.reset(new CpuParRounds(x_, n_, d_, threads_));
    return par_->begin(first);
  }
  std::vector<std::int64_t> par_round(std::uint64_t seed, int round, double l, double phi,
                                      double* phi_out) override {
    return rounds().round(seed, round, l, phi, phi_out);
  }
  std::vector<double> par_weights(std::int64_t m) override { return rounds().weights(m); }
  void par_end() override { par_.reset(); }

  QualityPoints quality(const QualityRequest& request, IterationObserver* observer) override {
    if (single()) return cpu_quality<float>(xf_.data(), n_, d_, request, threads_, observer);
    return cpu_quality<double>(x_, n_, d_, request, threads_, observer);
  }

 private:
  bool single() const { return precision_ == Precision::kSingle; }
  CpuParRounds& rounds() {
    if (!par_) throw EngineError(EngineError::Kind::kInvalid, "k-means|| round without par_begin");
    return *par_;
  }

  const double* x_;
  int threads_;
  std::vector<float> xf_;  // single precision: the one copy of x, as float
  std::vector<int> labels_;  // step mode: 0-based, -1 = none yet
  std::unique_ptr<CpuParRounds> par_;
};

}  // namespace

std::unique_ptr<Engine> make_cpu_engine(const HostData& data, Precision precision, int threads) {
  return std::unique_ptr<Engine>(new CpuEngine(data, precision, threads));
}

}  // namespace gk
