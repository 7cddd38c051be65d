// cpu_engine_base.h: what the two CPU engines share (over x in host memory,
// src/cpu_engine.cpp, and over a reader's blocks read at every pass,
// src/cpu_stream_engine.cpp): the threads, the single-precision shift, the
// labels of the step-by-step pieces, and the initialisations, which read
// the points through CpuPoints (src/cpu_points.h) on the double values (so
// that a seed chooses the same rows in both precisions).  Plain C++, no R.
#ifndef GPUKMEANS_CPU_ENGINE_BASE_H
#define GPUKMEANS_CPU_ENGINE_BASE_H

#include <memory>
#include <string>
#include <vector>

#include "cpu_engine.h"
#include "cpu_points.h"
#include "single_shift.h"

namespace gk {

class CpuEngineBase : public Engine {
 public:
  const char* backend() const override { return "cpu"; }
  std::string device() const override {
    return "CPU, " + std::to_string(threads_) + (threads_ == 1 ? " thread" : " threads");
  }
  std::vector<double> shift() override { return shift_; }
  std::vector<int> labels() override {
    std::vector<int> out(labels_);
    for (int& c : out) c += 1;
    return out;
  }

  std::vector<std::int64_t> greedy(const std::int64_t* rows, const double* weight, std::int64_t m,
                                   std::int64_t first, int picks, const double* unif, int L,
                                   IterationObserver* observer) override {
    return cpu_greedy(points(), rows, weight, m, first, picks, unif, L, threads_, observer);
  }
  double par_begin(std::int64_t first) override {
    par_.reset(new CpuParRounds(points(), threads_, w_));
    return par_->begin(first);
  }
  std::vector<std::int64_t> par_round(std::uint64_t seed, int round, double l, double phi, double* phi_out,
                                      IterationObserver* observer) override {
    return rounds().round(seed, round, l, phi, phi_out, observer);
  }
  std::vector<double> par_weights(std::int64_t m) override { return rounds().weights(m); }
  void par_end() override { par_.reset(); }

 protected:
  CpuEngineBase(const HostData& data, Precision precision, int threads)
      : Engine(data, precision), threads_(resolve_threads(threads)), shift_(data.d, 0.0) {}
  // The double values of x, as the initialisations read them.
  virtual const CpuPoints& points() const = 0;

  bool single() const { return precision_ == Precision::kSingle; }
  // The step's labels (0-based, -1 = none yet), reset where first.
  int* step_labels(bool first) {
    if (first || labels_.empty()) labels_.assign(n_, -1);
    return labels_.data();
  }
  // rows x d doubles (column-major) as the engines store them in single
  // precision, float(x - shift), into out: in parallel over columns.
  void store_rows(const double* x, std::int64_t rows, float* out) const {
#pragma omp parallel for num_threads(threads_for(threads_, d_)) schedule(dynamic, 1)
    for (int j = 0; j < d_; ++j) {
      const double* col = x + static_cast<std::int64_t>(j) * rows;
      float* o = out + static_cast<std::int64_t>(j) * rows;
      const double s = shift_[j];
      for (std::int64_t i = 0; i < rows; ++i) o[i] = single_stored(col[i], s);
    }
  }
  // centers (k x d) += sign * shift, column by column.
  void shift_centers(double* c, int k, double sign) const {
    for (int j = 0; j < d_; ++j)
      for (int i = 0; i < k; ++i) c[i + static_cast<std::size_t>(k) * j] += sign * shift_[j];
  }

  int threads_;
  std::vector<double> shift_;  // single precision: the shift of the stored values (else 0)
  std::vector<int> labels_;    // step mode: 0-based, -1 = none yet

 private:
  CpuParRounds& rounds() {
    if (!par_) throw EngineError(EngineError::Kind::kInvalid, "k-means|| round without par_begin");
    return *par_;
  }
  std::unique_ptr<CpuParRounds> par_;
};

}  // namespace gk

#endif
