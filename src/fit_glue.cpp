// fit_glue.cpp: the R entry points that run fits and predictions.  They
// convert Rcpp arguments, make the engine R chose (R/backend.R), call the
// driver (src/fit_driver.h) and convert its outcome; R/ has already
// validated the arguments and drawn the random starts.
#include <Rcpp.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "engine.h"
#include "engine_glue.h"
#include "stage_log.h"
#include "fit_driver.h"
#include "quality_driver.h"
#include "r_boundary.h"
#include "r_observer.h"
#include "source_glue.h"
#include "spherical.h"

namespace {

using gk::host_data;
using gk::make_engine;

// The starts R drew (R/starts.R): a list of starts, or a start source that
// draws them one at a time as they are fitted (as stats draws them):
//   structure(list(count, first, draw = function()), class = "gk_start_source").
// A start is a k x d matrix of centers, or the random numbers of a seeded
// initialisation:
//   list(method = "kmeans++", k, unif = 1 + (k - 1) * L uniforms, L)
//   list(method = "kmeans||", k, seed = two numbers in [0, 2^32))
class RStarts : public gk::StartSource {
 public:
  explicit RStarts(Rcpp::List starts) : starts_(starts) {
    if (Rf_inherits(starts, "gk_start_source")) {
      lazy_ = true;
      count_ = Rcpp::as<int>(starts["count"]);
    } else {
      count_ = starts.size();
    }
  }
  int count() const override { return count_; }
  gk::StartSpec next(int s) override {
    gk::StartSpec spec;
    // (an R error in draw() unwinds as Rcpp's LongjumpException: the driver
    // and the engine release what they hold on the way)
    Rcpp::RObject drawn;
    if (lazy_ && s == 0) drawn = starts_["first"];
    if (lazy_ && s > 0) drawn = Rcpp::Function(starts_["draw"])();
    SEXP start = lazy_ ? SEXP(drawn) : SEXP(starts_[s]);
    if (TYPEOF(start) != VECSXP) {
      Rcpp::NumericMatrix m(start);
      spec.k = m.nrow();
      spec.centers.assign(m.begin(), m.end());
      return spec;
    }
    Rcpp::List l(start);
    const std::string method = Rcpp::as<std::string>(l["method"]);
    spec.k = Rcpp::as<int>(l["k"]);
    if (method == "kmeans++") {
      spec.kind = gk::StartSpec::Kind::kKmeansPP;
      spec.unif = Rcpp::as<std::vector<double>>(l["unif"]);
      spec.L = Rcpp::as<int>(l["L"]);
    } else {
      spec.kind = gk::StartSpec::Kind::kKmeansPar;
      Rcpp::NumericVector seed = l["seed"];
      spec.seed = (static_cast<std::uint64_t>(seed[0]) << 32) | static_cast<std::uint64_t>(seed[1]);
    }
    return spec;
  }

 private:
  Rcpp::List starts_;
  bool lazy_ = false;
  int count_ = 0;
};

// x as the engines take it: a double matrix read in place (kept in *xm),
// or a gk_reader (src/source_glue.h; kept in *rows): its reader, or the
// values of a dense one, read in place as a matrix's.  Both must outlive
// the engine.
gk::HostData data_of(SEXP x, int threads, Rcpp::NumericMatrix* xm, std::unique_ptr<gk::SourceReader>* rows) {
  if (!Rf_inherits(x, "gk_reader")) {
    *xm = Rcpp::NumericMatrix(x);
    return host_data(*xm);
  }
  rows->reset(new gk::SourceReader(Rcpp::List(x), threads));
  gk::HostData data;
  data.n = (*rows)->n;
  data.d = (*rows)->d;
  if ((*rows)->values) data.x = (*rows)->values;
  else data.reader = (*rows)->reader.get();
  return data;
}

// The internal GPUKMEANS_EARLY=0: no work started beside the upload (totss,
// the labels' pages), as before (tools/gpu/b-rest.R compares the two).
bool early_off() {
  const char* e = std::getenv("GPUKMEANS_EARLY");
  return e && e[0] == '0';
}

Rcpp::NumericMatrix as_matrix(const std::vector<double>& v, int nrow, int ncol) {
  Rcpp::NumericMatrix m(nrow, ncol);
  std::copy(v.begin(), v.end(), m.begin());
  return m;
}

// cluster: the labels' destination given to the fit (the best start's
// labels are there, or are copied there).
Rcpp::List as_list(const gk::FitOutcome& fit, const gk::Engine& e, int threads, Rcpp::IntegerVector cluster) {
  const gk::Labels& best = fit.best.cluster;
  if (best.data() != cluster.begin()) {
    if (static_cast<R_xlen_t>(best.size()) != cluster.size())
      throw gk::EngineError(gk::EngineError::Kind::kInvalid, "the fit's labels do not match the rows of x");
    gk::copy_labels(cluster.begin(), best.data(), best.size(), threads);
  }
  const int nstart = static_cast<int>(fit.starts.size());
  Rcpp::NumericVector start_wss(nstart);
  Rcpp::IntegerVector start_iter(nstart);
  Rcpp::LogicalVector start_empty(nstart);
  Rcpp::List init_rows(nstart);  // per start: the rows its init chose (1-based), or NULL
  for (int s = 0; s < nstart; ++s) {
    const gk::StartSummary& st = fit.starts[s];
    start_wss[s] = st.tot_withinss;
    start_iter[s] = st.iter;
    start_empty[s] = st.empty;
    if (!st.init_rows.empty()) {
      Rcpp::IntegerVector rows(st.init_rows.size());
      for (std::size_t j = 0; j < st.init_rows.size(); ++j) rows[j] = static_cast<int>(st.init_rows[j] + 1);
      init_rows[s] = rows;
    }
  }
  const int k = static_cast<int>(fit.best.size.size());
  const bool cuda = std::string(e.backend()) == "cuda";
  Rcpp::NumericVector timing =
      cuda ? Rcpp::NumericVector::create(Rcpp::_["transfer_to_device"] = e.seconds_upload(),
                                         Rcpp::_["compute"] = fit.seconds_compute,
                                         Rcpp::_["transfer_to_host"] = fit.seconds_download,
                                         Rcpp::_["init"] = fit.seconds_init)
           : Rcpp::NumericVector::create(Rcpp::_["compute"] = fit.seconds_compute, Rcpp::_["init"] = fit.seconds_init);
  return Rcpp::List::create(
      Rcpp::_["cluster"] = cluster, Rcpp::_["centers"] = as_matrix(fit.best.centers, k, e.d()),
      Rcpp::_["totss"] = fit.totss, Rcpp::_["withinss"] = Rcpp::wrap(fit.best.withinss),
      Rcpp::_["size"] = Rcpp::wrap(fit.best.size), Rcpp::_["iter"] = fit.best.iter,
      Rcpp::_["best_start"] = fit.best_start + 1, Rcpp::_["start_tot_withinss"] = start_wss,
      Rcpp::_["start_iter"] = start_iter, Rcpp::_["start_empty"] = start_empty,
      Rcpp::_["start_init_rows"] = init_rows, Rcpp::_["timing"] = timing, Rcpp::_["device"] = e.device(),
      Rcpp::_["exact_fraction"] = Rcpp::wrap(fit.best.exact_fraction),
      Rcpp::_["screen_exact"] = fit.best.screen_exact, Rcpp::_["screen_every"] = fit.best.screen_every,
      Rcpp::_["grid_share"] = fit.best.grid_share, Rcpp::_["sums_share"] = fit.best.sums_share,
      Rcpp::_["rows_ordered"] = fit.best.rows_ordered);
}

}  // namespace

// Fits every start in `starts` and returns the best by tot.withinss (the
// first of equals, as stats), with per-start summaries.  spherical: spherical
// k-means on the unit rows x (R/cosine.R).  weights: NULL, or the
// observation weights (R/weights.R checked them: double, nrow(x)).
// device: one CUDA device, or several (the rows split across them,
// src/multi_engine.h; gk::make_fit_engine).  finite: whether R checked that
// x is finite; FALSE leaves the check to the engine, which signals an error
// of class gpukmeans_nonfinite with the 1-based `index` of the first value
// that is not (R/gpu_kmeans.R).
// [[Rcpp::export(rng = false)]]
Rcpp::List gk_fit_cpp(SEXP x, Rcpp::List starts, int iter_max, bool single, std::string engine,
                      int threads, Rcpp::IntegerVector device, bool trace, SEXP progress, double progress_after,
                      Rcpp::List cuda, bool spherical = false, SEXP weights = R_NilValue,
                      bool finite = true) {
  return gk::guarded([&] {
    gk::StageLog log;
    std::unique_ptr<gk::SourceReader> rows;  // (these two outlive the engine: declared first)
    Rcpp::NumericMatrix xm;
    gk::HostData data = data_of(x, threads, &xm, &rows);
    data.finite = finite;
    data.reader_streams = true;  // (a fit needs no pass over x on the host: each runs on streamed x)
    data.totss_early = !spherical && !early_off();  // (the spherical engine has a totss of its own)
    gk::set_weights(data, weights);
    gk::RObserver observer(trace, progress, progress_after);
    RStarts source(starts);
    // the labels' destination: the result's vector, written in place by the
    // engine (the internal GPUKMEANS_LABELS_OUT=0 gives the engine none and
    // copies the labels, as before: tools/gpu/switch-turns.R compares them);
    // made first, so that its pages are touched while x goes to the device
    Rcpp::IntegerVector cluster = gk::label_vector(static_cast<R_xlen_t>(data.n));
    std::unique_ptr<gk::Engine> e;
    {
      // (threads = 1, options(gpukmeans.threads = 1): no helper thread for this)
      gk::PageToucher touch(engine == "cuda" && threads != 1 && !early_off() ? cluster.begin() : nullptr,
                            static_cast<std::size_t>(data.n) * sizeof(int));
      try {
        e = gk::make_fit_engine(data, engine, single, threads, std::vector<int>(device.begin(), device.end()), cuda);
      } catch (const gk::SourceNotResident& why) {  // (nothing drawn or read yet: R reads x into memory)
        return Rcpp::List::create(Rcpp::_["not_resident"] = std::string(why.what()));
      }
    }
    log.mark("engine");
    if (spherical && data.w)  // (R refuses them first: R/weights.R)
      throw gk::EngineError(gk::EngineError::Kind::kUnsupported, "spherical k-means has no observation weights yet");
    if (spherical) e = gk::make_spherical_engine(std::move(e));  // x: unit rows (src/spherical.h)
    const char* out_env = std::getenv("GPUKMEANS_LABELS_OUT");
    int* labels_out = out_env && out_env[0] == '0' ? nullptr : cluster.begin();
    const gk::FitOutcome fit = gk::observed(
        observer, [&] { return gk::fit_starts(*e, data, source, iter_max, &observer, labels_out); });
    log.mark("fit");
    Rcpp::List out = as_list(fit, *e, threads, cluster);
    log.mark("result");
    e.reset();
    log.mark("release");
    return out;
  });
}

// Rows of a gk_reader (above) as the engines read them: rows [first, first
// + rows) (1-based first) where idx is NULL, else rows idx (1-based).
// Internal: the tests compare the readers with the dense matrix.
// [[Rcpp::export(rng = false)]]
Rcpp::NumericMatrix gk_reader_rows(Rcpp::List reader, double first, double rows, SEXP idx = R_NilValue) {
  return gk::guarded([&] {
    gk::SourceReader s(reader, 2);
    if (Rf_isNull(idx)) {
      if (!(first >= 1) || rows < 0 || first - 1 + rows > s.n)
        throw gk::EngineError(gk::EngineError::Kind::kInvalid, "rows out of x");
      Rcpp::NumericMatrix out(static_cast<int>(rows), s.d);
      s.reader->block(static_cast<std::int64_t>(first) - 1, static_cast<std::int64_t>(rows), out.begin());
      return out;
    }
    Rcpp::NumericVector v(idx);
    std::vector<std::int64_t> at(v.size());
    for (R_xlen_t q = 0; q < v.size(); ++q) at[q] = static_cast<std::int64_t>(v[q]) - 1;
    Rcpp::NumericMatrix out(static_cast<int>(v.size()), s.d);
    s.reader->rows(at.data(), static_cast<std::int64_t>(at.size()), out.begin());
    return out;
  });
}

// Nearest center (1-based) for each row of x (a matrix, or a gk_reader: NULL
// where its rows would not fit on the device).  finite: as gk_fit_cpp's.
// [[Rcpp::export(rng = false)]]
SEXP gk_predict_cpp(SEXP x, Rcpp::NumericMatrix centers, std::string engine, int threads, Rcpp::IntegerVector device,
                    Rcpp::List cuda, bool finite = true) {
  return gk::guarded([&]() -> SEXP {
    std::unique_ptr<gk::SourceReader> rows;  // (these two outlive the engine: declared first)
    Rcpp::NumericMatrix xm;
    gk::HostData data = data_of(x, threads, &xm, &rows);
    data.finite = finite;
    data.reader_streams = true;
    // (several devices: the rows split across them, gk::make_fit_engine)
    std::unique_ptr<gk::Engine> e;
    try {
      e = gk::make_fit_engine(data, engine, false, threads, std::vector<int>(device.begin(), device.end()), cuda);
    } catch (const gk::SourceNotResident&) {  // (nothing read: R reads x into memory)
      return R_NilValue;
    }
    Rcpp::IntegerVector cluster(static_cast<R_xlen_t>(data.n));
    e->assign(centers.begin(), centers.nrow(), cluster.begin());
    return cluster;
  });
}

// Lloyd's algorithm from `centers` with the rows of x split into `parts`
// contiguous blocks, each held by an engine of its own, combined step by step
// (gk::lloyd_parts).  Internal: the tests check that the split changes
// nothing.
// [[Rcpp::export(rng = false)]]
Rcpp::List gk_fit_parts_cpp(Rcpp::NumericMatrix x, Rcpp::NumericMatrix centers, int iter_max, int parts, bool single,
                            std::string engine, int threads, int device) {
  return gk::guarded([&] {
    const int d = x.ncol(), k = centers.nrow();
    const gk::PartEngines pe = gk::part_engines(x, parts, engine, single, threads, device);
    const gk::LloydFit fit = gk::lloyd_parts(pe.engines, centers.begin(), k, iter_max, nullptr);
    return Rcpp::List::create(Rcpp::_["cluster"] = gk::int_vector(fit.cluster),
                              Rcpp::_["centers"] = as_matrix(fit.centers, k, d),
                              Rcpp::_["withinss"] = Rcpp::wrap(fit.withinss), Rcpp::_["size"] = Rcpp::wrap(fit.size),
                              Rcpp::_["iter"] = fit.iter);
  });
}

// The sweep over k (gpu_kmeans_sweep): one engine (the data taken once), for
// each k the starts R drew (starts_by_k[[i]], as in gk_fit_cpp) fitted with
// iter_max[i] iterations, then the quality pass of the best fit
// (gk::fit_sweep).  silhouette: 0 none, 1 exact, 2 simplified; rows: the
// sampled rows (1-based) of an exact silhouette, empty for every row.
// x: a matrix or a gk_reader, and finite, as gk_fit_cpp's (list(not_resident)
// where a reader's rows would not fit on the device).
// [[Rcpp::export(rng = false)]]
Rcpp::List gk_sweep_cpp(SEXP x, Rcpp::List starts_by_k, Rcpp::IntegerVector iter_max, bool single,
                        std::string engine, int threads, int device, SEXP progress, double progress_after,
                        int silhouette, Rcpp::IntegerVector rows, bool center_dist, Rcpp::List cuda,
                        bool finite = true) {
  return gk::guarded([&] {
    std::unique_ptr<gk::SourceReader> reader;  // (these two outlive the engine: declared first)
    Rcpp::NumericMatrix xm;
    gk::HostData data = data_of(x, threads, &xm, &reader);
    data.finite = finite;
    gk::RObserver observer(false, progress, progress_after);
    std::vector<RStarts> sources;
    for (R_xlen_t i = 0; i < starts_by_k.size(); ++i) sources.emplace_back(Rcpp::List(starts_by_k[i]));
    std::vector<gk::StartSource*> src;
    for (RStarts& r : sources) src.push_back(&r);
    gk::QualityOptions opt;
    opt.silhouette = silhouette == 1   ? gk::QualityRequest::Silhouette::kExact
                     : silhouette == 2 ? gk::QualityRequest::Silhouette::kSimplified
                                       : gk::QualityRequest::Silhouette::kNone;
    for (int r : rows) opt.rows.push_back(static_cast<std::int64_t>(r) - 1);
    opt.center_dist = center_dist;
    std::unique_ptr<gk::Engine> e;
    try {
      e = make_engine(data, engine, single, threads, device, cuda);
    } catch (const gk::SourceNotResident& why) {  // (nothing drawn or read yet: R reads x into memory)
      return Rcpp::List::create(Rcpp::_["not_resident"] = std::string(why.what()));
    }
    const std::vector<int> its(iter_max.begin(), iter_max.end());
    const std::vector<gk::SweepStep> steps =
        gk::observed(observer, [&] { return gk::fit_sweep(*e, data, src, its, opt, &observer); });
    Rcpp::List fits(steps.size()), quality(steps.size());
    for (std::size_t i = 0; i < steps.size(); ++i) {
      fits[i] = as_list(steps[i].fit, *e, threads, gk::label_vector(static_cast<R_xlen_t>(data.n)));
      const gk::QualitySums& q = steps[i].quality;
      quality[i] = Rcpp::List::create(
          Rcpp::_["size"] = Rcpp::NumericVector(q.size.begin(), q.size.end()),
          Rcpp::_["center_dist"] = Rcpp::wrap(q.center_dist), Rcpp::_["silhouette"] = q.silhouette,
          Rcpp::_["width"] = Rcpp::wrap(q.width),
          Rcpp::_["width_count"] = Rcpp::NumericVector(q.width_count.begin(), q.width_count.end()),
          Rcpp::_["seconds"] = q.seconds);
    }
    return Rcpp::List::create(Rcpp::_["fits"] = fits, Rcpp::_["quality"] = quality,
                              Rcpp::_["seconds_upload"] = e->seconds_upload(), Rcpp::_["device"] = e->device());
  });
}
