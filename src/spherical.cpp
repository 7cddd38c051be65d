// spherical.cpp: spherical k-means on any engine (see spherical.h), and the
// default Engine::lloyd_mapped (over step(), as lloyd_parts).

// The squares and sums must be rounded term by term, never fused, so that
// the rows and the centers are scaled alike on every platform.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include "spherical.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "fit_driver.h"
#include "threads.h"

namespace gk {

LloydFit Engine::lloyd_mapped(const double* centers, int k, int max_iter, IterationObserver* observer,
                              const CenterMap& map, Labels into) {
  return lloyd_parts({this}, centers, k, max_iter, observer, map, std::move(into));
}

namespace {

constexpr int kBlock = 256;  // rows per block: their partial sums stay in L1

// Rows [i0, i0 + B) of a (m x d, column-major) into out; returns the first
// zero row of the block, or -1.
std::int64_t normalize_block(const double* a, std::int64_t m, int d, double* out, std::int64_t i0, int B) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  double top[kBlock], sc[kBlock], s[kBlock];
  for (int p = 0; p < B; ++p) top[p] = 0.0;
  for (int j = 0; j < d; ++j) {
    const double* col = a + static_cast<std::int64_t>(j) * m + i0;
    for (int p = 0; p < B; ++p) {
      const double v = std::fabs(col[p]);
      top[p] = v > top[p] || v != v ? v : top[p];  // NaN stays
    }
  }
  std::int64_t zero = -1;
  for (int p = 0; p < B; ++p) {
    if (top[p] > 0.0 && top[p] <= std::numeric_limits<double>::max()) {
      const int e = std::min(1023, std::max(-1000, std::ilogb(top[p])));
      sc[p] = std::ldexp(1.0, -e);  // exact: 2^-1023 .. 2^1000
    } else {
      if (top[p] == 0.0 && zero < 0) zero = i0 + p;
      sc[p] = kNaN;  // zero, NaN or infinite: no direction
    }
    s[p] = 0.0;
  }
  for (int j = 0; j < d; ++j) {
    const double* col = a + static_cast<std::int64_t>(j) * m + i0;
    for (int p = 0; p < B; ++p) {
      const double t = col[p] * sc[p];
      s[p] = s[p] + t * t;
    }
  }
  for (int p = 0; p < B; ++p) s[p] = std::sqrt(s[p]);
  for (int j = 0; j < d; ++j) {
    const double* col = a + static_cast<std::int64_t>(j) * m + i0;
    double* o = out + static_cast<std::int64_t>(j) * m + i0;
    for (int p = 0; p < B; ++p) o[p] = (col[p] * sc[p]) / s[p];
  }
  return zero;
}

// The observer of a spherical fit: tot.withinss as sums of 1 - cos (half the
// squared distances the engine reports).
class HalfObserver final : public IterationObserver {
 public:
  explicit HalfObserver(IterationObserver* o) : o_(o) {}
  bool wants_iterations() const override { return o_->wants_iterations(); }
  bool iteration(int iter, std::int64_t changed, double tot) override { return o_->iteration(iter, changed, 0.5 * tot); }
  bool keep_going() override { return o_->keep_going(); }
  void set_start(int s, int nstart) override { o_->set_start(s, nstart); }

 private:
  IterationObserver* o_;
};

HostData shape_of(const Engine& e) {
  HostData h;
  h.n = e.n();
  h.d = e.d();
  return h;
}

class SphericalEngine final : public Engine {
 public:
  explicit SphericalEngine(std::unique_ptr<Engine> inner)
      : Engine(shape_of(*inner), inner->precision()), inner_(std::move(inner)) {
    seconds_upload_ = inner_->seconds_upload();
  }

  const char* backend() const override { return inner_->backend(); }
  std::string device() const override { return inner_->device(); }

  // sum(1 - cos(x_i, m)), m the normalised mean of the rows: one step with a
  // single center gives the exact sum of the rows, the within-SS passes
  // the squared distances to m (halved).
  double totss() override {
    const std::vector<double> maxabs = inner_->column_maxabs(), shift = inner_->shift();
    std::vector<int> scale(d_);
    for (int j = 0; j < d_; ++j) scale[j] = limb_scale(maxabs[j]);
    std::vector<double> m(d_, 0.0);
    const StepSums s = inner_->step(m.data(), 1, scale, true);
    for (int j = 0; j < d_; ++j)
      m[j] = from_fixed(s.sum[j].lo, s.sum[j].hi, scale[j]) / static_cast<double>(n_) + shift[j];
    sphere_map(d_)(m.data(), 1);
    if (std::isnan(m[0])) return static_cast<double>(n_);  // the rows add up to 0: every direction gives n
    for (int j = 0; j < d_; ++j) m[j] -= shift[j];
    const std::vector<std::uint32_t> maxterm = inner_->withinss_maxterm(m.data(), 1);
    const std::vector<Fixed128> w = inner_->withinss_sums(m.data(), 1, maxterm);
    return 0.5 * from_fixed(w[0].lo, w[0].hi, wss_scale(maxterm[0]));
  }

  LloydFit lloyd(const double* centers, int k, int max_iter, IterationObserver* observer, Labels into) override {
    HalfObserver half(observer);
    LloydFit fit =
        inner_->lloyd_mapped(centers, k, max_iter, observer ? &half : nullptr, sphere_map(d_), std::move(into));
    for (double& w : fit.withinss) w *= 0.5;  // |x - c|^2 / 2 = 1 - cos(x, c) on the unit sphere
    return fit;
  }

  // The rest is the wrapped engine's, on the unit rows.
  void assign(const double* centers, int k, int* cluster) override { inner_->assign(centers, k, cluster); }
  std::vector<double> column_maxabs() override { return inner_->column_maxabs(); }
  std::vector<double> shift() override { return inner_->shift(); }
  StepSums step(const double* centers, int k, const std::vector<int>& scale, bool first) override {
    return inner_->step(centers, k, scale, first);
  }
  std::vector<std::uint32_t> withinss_maxterm(const double* centers, int k) override {
    return inner_->withinss_maxterm(centers, k);
  }
  std::vector<Fixed128> withinss_sums(const double* centers, int k,
                                      const std::vector<std::uint32_t>& maxterm) override {
    return inner_->withinss_sums(centers, k, maxterm);
  }
  std::vector<int> labels() override { return inner_->labels(); }
  std::vector<std::int64_t> greedy(const std::int64_t* rows, const double* weight, std::int64_t m,
                                   std::int64_t first, int picks, const double* unif, int L,
                                   IterationObserver* observer) override {
    return inner_->greedy(rows, weight, m, first, picks, unif, L, observer);
  }
  double par_begin(std::int64_t first) override { return inner_->par_begin(first); }
  std::vector<std::int64_t> par_round(std::uint64_t seed, int round, double l, double phi, double* phi_out,
                                      IterationObserver* observer) override {
    return inner_->par_round(seed, round, l, phi, phi_out, observer);
  }
  std::vector<double> par_weights(std::int64_t m) override { return inner_->par_weights(m); }
  void par_end() override { inner_->par_end(); }
  QualityPoints quality(const QualityRequest& request, IterationObserver* observer) override {
    return inner_->quality(request, observer);
  }
  std::unique_ptr<BlockInit> block_init(std::int64_t offset, std::int64_t total, int host_threads) override {
    return inner_->block_init(offset, total, host_threads);
  }

 private:
  std::unique_ptr<Engine> inner_;
};

}  // namespace

std::int64_t normalize_rows(const double* a, std::int64_t m, int d, double* out, int threads) {
  const std::int64_t nblocks = (m + kBlock - 1) / kBlock;
  const int nt = threads_for(threads, nblocks);
  std::vector<std::int64_t> first(nt, -1);
  for_each_slot(nt, [&](int t) {
    const std::int64_t b0 = nblocks * t / nt, b1 = nblocks * (t + 1) / nt;
    for (std::int64_t b = b0; b < b1; ++b) {
      const std::int64_t i0 = b * kBlock;
      const std::int64_t z = normalize_block(a, m, d, out, i0, static_cast<int>(std::min<std::int64_t>(kBlock, m - i0)));
      if (z >= 0 && first[t] < 0) first[t] = z;
    }
  });
  for (std::int64_t z : first)
    if (z >= 0) return z;
  return -1;
}

CenterMap sphere_map(int d) {
  return [d](double* centers, int k) { normalize_rows(centers, k, d, centers, 1); };
}

std::unique_ptr<Engine> make_spherical_engine(std::unique_ptr<Engine> inner) {
  return std::unique_ptr<Engine>(new SphericalEngine(std::move(inner)));
}

}  // namespace gk
