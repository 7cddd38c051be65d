// quality_driver.cpp: see quality_driver.h.
#include "quality_driver.h"

#include <string>

#include "wall_clock.h"

namespace gk {

ClusterOrder cluster_order(const int* cluster, std::int64_t n, int k) {
  if (k < 1) throw EngineError(EngineError::Kind::kInvalid, "cluster_order: k < 1");
  if (n > 2147483647LL) throw EngineError(EngineError::Kind::kInvalid, "cluster_order: more than 2^31 - 1 rows");
  ClusterOrder o;
  o.start.assign(static_cast<std::size_t>(k) + 1, 0);
  for (std::int64_t i = 0; i < n; ++i) {
    const int c = cluster[i];
    if (c < 1 || c > k)
      throw EngineError(EngineError::Kind::kInvalid,
                        "cluster label " + std::to_string(c) + " of row " + std::to_string(i + 1) +
                            " is not in 1.." + std::to_string(k));
    ++o.start[c];
  }
  for (int c = 0; c < k; ++c) o.start[c + 1] += o.start[c];
  std::vector<std::int64_t> next(o.start.begin(), o.start.end() - 1);
  o.order.resize(n);
  for (std::int64_t i = 0; i < n; ++i) o.order[next[cluster[i] - 1]++] = static_cast<std::int32_t>(i);
  return o;
}

int nonempty_clusters(const ClusterOrder& order) {
  int m = 0;
  for (std::size_t c = 0; c + 1 < order.start.size(); ++c) m += order.start[c + 1] > order.start[c];
  return m;
}

QualitySums quality_sums(Engine& engine, const int* cluster, const double* centers, int k,
                         const QualityOptions& options, IterationObserver* observer) {
  const double t0 = wall_seconds();
  const std::int64_t n = engine.n();
  const ClusterOrder order = cluster_order(cluster, n, k);
  QualitySums out;
  out.size.resize(k);
  for (int c = 0; c < k; ++c) out.size[c] = order.start[c + 1] - order.start[c];
  const int kk = nonempty_clusters(order);
  // Like cluster::silhouette: widths need 2 <= (non-empty clusters) <= n - 1;
  // Davies-Bouldin needs 2 clusters.
  QualityRequest req;
  req.order = &order;
  req.k = k;
  req.centers = centers;
  req.center_dist = options.center_dist && kk >= 2;
  out.silhouette = options.silhouette != QualityRequest::Silhouette::kNone && kk >= 2 && kk < n;
  req.silhouette = out.silhouette ? options.silhouette : QualityRequest::Silhouette::kNone;
  const bool sampled = out.silhouette && options.silhouette == QualityRequest::Silhouette::kExact &&
                       !options.rows.empty();
  if (sampled) {
    req.rows = options.rows.data();
    req.m = static_cast<std::int64_t>(options.rows.size());
  }
  if (!req.center_dist && req.silhouette == QualityRequest::Silhouette::kNone) {
    out.seconds = wall_seconds() - t0;
    return out;
  }
  const QualityPoints q = engine.quality(req, observer);
  // Sums per cluster in row order: the same bits from the same per-row values.
  if (req.center_dist) {
    out.center_dist.assign(k, 0.0);
    for (std::int64_t i = 0; i < n; ++i) out.center_dist[cluster[i] - 1] += q.center_dist[i];
  }
  if (out.silhouette) {
    out.width.assign(k, 0.0);
    out.width_count.assign(k, 0);
    const std::int64_t m = sampled ? req.m : n;
    for (std::int64_t r = 0; r < m; ++r) {
      const int c = cluster[sampled ? req.rows[r] : r] - 1;
      out.width[c] += q.width[r];
      ++out.width_count[c];
    }
  }
  out.seconds = wall_seconds() - t0;
  return out;
}

namespace {

// Numbers the starts of every source of a sweep 1 .. total for the observer.
class SweepObserver final : public IterationObserver {
 public:
  SweepObserver(IterationObserver* inner, int total) : inner_(inner), total_(total) {}
  void next_source(int offset) { offset_ = offset; }
  bool wants_iterations() const override { return inner_->wants_iterations(); }
  bool iteration(int iter, std::int64_t changed, double tot) override { return inner_->iteration(iter, changed, tot); }
  bool keep_going() override { return inner_->keep_going(); }
  void set_start(int s, int) override { inner_->set_start(offset_ + s, total_); }

 private:
  IterationObserver* inner_;
  int total_;
  int offset_ = 0;
};

}  // namespace

std::vector<SweepStep> fit_sweep(Engine& engine, const HostData& data, const std::vector<StartSource*>& sources,
                                 const std::vector<int>& max_iter, const QualityOptions& options,
                                 IterationObserver* observer) {
  if (max_iter.size() != sources.size()) throw EngineError(EngineError::Kind::kInvalid, "fit_sweep: max_iter");
  int total = 0;
  for (StartSource* s : sources) total += s->count();
  SweepObserver obs(observer, total);
  IterationObserver* o = observer ? &obs : nullptr;
  std::vector<SweepStep> out;
  out.reserve(sources.size());
  int offset = 0;
  for (std::size_t s = 0; s < sources.size(); ++s) {
    obs.next_source(offset);
    SweepStep step;
    step.fit = fit_starts(engine, data, *sources[s], max_iter[s], o);
    const int k = static_cast<int>(step.fit.best.size.size());
    step.quality = quality_sums(engine, step.fit.best.cluster.data(), step.fit.best.centers.data(), k, options, o);
    offset += sources[s]->count();
    out.push_back(std::move(step));
  }
  return out;
}

}  // namespace gk
