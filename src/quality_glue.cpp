// quality_glue.cpp: the R entry point of the quality pass alone
// (gpu_silhouette): converts the arguments, makes the engine R chose, runs
// Engine::quality and converts its outcome.  R/silhouette.R has validated
// everything.  (The sweep over k is in src/fit_glue.cpp: it runs fits.)
#include <Rcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "engine.h"
#include "engine_glue.h"
#include "quality_driver.h"
#include "r_boundary.h"
#include "r_observer.h"
#include "wall_clock.h"

// Per-row silhouette widths of the partition `cluster` (1-based labels in
// 1..k; at least two non-empty clusters): method 1 exact (of the rows
// `rows`, 1-based, only when not empty: the sampled silhouette), 2
// simplified (centers: k x d).  Returns list(width, neighbor, seconds,
// device), in row order or in the order of rows.
// [[Rcpp::export(rng = false)]]
Rcpp::List gk_silhouette_cpp(Rcpp::NumericMatrix x, Rcpp::IntegerVector cluster, int k, SEXP centers, int method,
                             Rcpp::IntegerVector rows, std::string engine, int threads, int device, SEXP progress,
                             double progress_after, Rcpp::List cuda) {
  return gk::guarded([&] {
    const gk::HostData data = gk::host_data(x);
    gk::RObserver observer(false, progress, progress_after);
    std::unique_ptr<gk::Engine> e = gk::make_engine(data, engine, false, threads, device, cuda);
    const double t0 = gk::wall_seconds();
    const gk::ClusterOrder order = gk::cluster_order(cluster.begin(), data.n, k);
    if (gk::nonempty_clusters(order) < 2)
      throw gk::EngineError(gk::EngineError::Kind::kInvalid, "silhouette: fewer than 2 non-empty clusters");
    std::vector<std::int64_t> r0;
    for (int r : rows) r0.push_back(static_cast<std::int64_t>(r) - 1);
    std::vector<double> cen;
    if (method == 2) {
      Rcpp::NumericMatrix c(centers);
      cen.assign(c.begin(), c.end());
    }
    gk::QualityRequest req;
    req.order = &order;
    req.k = k;
    req.centers = cen.empty() ? nullptr : cen.data();
    req.silhouette = method == 2 ? gk::QualityRequest::Silhouette::kSimplified : gk::QualityRequest::Silhouette::kExact;
    if (method == 1 && !r0.empty()) {
      req.rows = r0.data();
      req.m = static_cast<std::int64_t>(r0.size());
    }
    const gk::QualityPoints q = gk::observed(observer, [&] { return e->quality(req, &observer); });
    return Rcpp::List::create(Rcpp::_["width"] = Rcpp::wrap(q.width), Rcpp::_["neighbor"] = Rcpp::wrap(q.neighbor),
                              Rcpp::_["seconds"] = gk::wall_seconds() - t0, Rcpp::_["device"] = e->device());
  });
}
