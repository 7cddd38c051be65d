// fit_glue.cpp: the R entry points that run fits and predictions on either
// engine.  R/ has already validated the arguments and drawn the starts.
#include <Rcpp.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cpu_engine.h"
#include "cpu_init.h"
#include "cuda/gk_cuda.h"
#include "init_order.h"
#include "r_observer.h"
#include "wall_clock.h"

namespace {

// The fit of one start, in the shape the R side needs.
struct StartFit {
  std::vector<int> cluster;
  std::vector<double> centers;
  std::vector<int> size;
  std::vector<double> withinss;
  int iter = 0;
  bool converged = false;
};

// R's sum() of withinss (long double accumulation): how stats ranks starts.
double r_sum(const std::vector<double>& v) {
  long double s = 0.0L;
  for (double x : v) s += x;
  return static_cast<double>(s);
}

bool has_empty(const std::vector<int>& size) {
  for (int s : size)
    if (s == 0) return true;
  return false;
}

[[noreturn]] void cuda_fail(int status, const char* what, const char* err) {
  std::string msg = std::string("CUDA engine: ") + what + " failed: " + err;
  if (status == GK_CUDA_OUT_OF_MEMORY)
    msg += " (use precision = \"single\", or backend = \"cpu\")";
  Rcpp::stop(msg);
}

// Frees the device copy of x on every exit path, R errors included.
struct DeviceData {
  gk_cuda_data* p = nullptr;
  ~DeviceData() { gk_cuda_free(p); }
};

// The device's name, queried once per device and process (a full property
// query costs more than a small fit).
int cached_device_name(int device, std::string* name, char* err, size_t errlen) {
  static std::map<int, std::string> names;
  auto it = names.find(device);
  if (it == names.end()) {
    gk_cuda_device dev;
    int st = gk_cuda_get_device(device, &dev, err, errlen);
    if (st != GK_CUDA_OK) return st;
    it = names.emplace(device, dev.name).first;
  }
  *name = it->second;
  return GK_CUDA_OK;
}

// The engine's options; it is always deterministic (fixed-point sums).
gk_cuda_options cuda_options(int device, bool single, int max_iter) {
  gk_cuda_options opts;
  opts.device = device;
  opts.single = single ? 1 : 0;
  opts.deterministic = 1;
  opts.max_iter = max_iter;
  return opts;
}

// Callbacks handed to the CUDA engine, forwarding to the R observer.
int cb_interrupt(void* ctx) { return static_cast<gk::RObserver*>(ctx)->keep_going() ? 0 : 1; }
int cb_iteration(void* ctx, int iter, int64_t changed, double tot) {
  return static_cast<gk::RObserver*>(ctx)->iteration(iter, changed, tot) ? 0 : 1;
}

// Rows idx of x (n x d) as a k x d column-major matrix.
std::vector<double> rows_of(const double* x, std::int64_t n, int d, const std::vector<std::int64_t>& idx) {
  const std::size_t k = idx.size();
  std::vector<double> c(k * d);
  for (std::size_t j = 0; j < k; ++j)
    for (int a = 0; a < d; ++a) c[j + k * a] = x[idx[j] + n * a];
  return c;
}

// True when two rows of the k x d matrix c are equal (0 == -0, as R's
// duplicated() sees them).
bool has_duplicate_rows(const std::vector<double>& c, int k, int d) {
  std::vector<int> ord(k);
  for (int j = 0; j < k; ++j) ord[j] = j;
  auto less = [&](int a, int b) {
    for (int j = 0; j < d; ++j) {
      const double u = c[a + static_cast<std::size_t>(k) * j], v = c[b + static_cast<std::size_t>(k) * j];
      if (u < v) return true;
      if (v < u) return false;
    }
    return false;
  };
  std::sort(ord.begin(), ord.end(), less);
  for (int j = 1; j < k; ++j)
    if (!less(ord[j - 1], ord[j]) && !less(ord[j], ord[j - 1])) return true;
  return false;
}

// The 64-bit k-means|| seed from two numbers in [0, 2^32) drawn in R.
std::uint64_t par_seed(Rcpp::NumericVector s) {
  return (static_cast<std::uint64_t>(s[0]) << 32) | static_cast<std::uint64_t>(s[1]);
}

}  // namespace

// Fit every start in `starts` and return the best by tot.withinss (the first
// of equals, as stats), with per-start summaries.  A start is a k x d matrix
// of initial centers or an init spec drawn in R (R/starts.R):
//   list(method = "kmeans++", k, unif = 1 + (k - 1) * L uniforms, L)
//   list(method = "kmeans||", k, seed = two numbers in [0, 2^32))
// which the engine turns into centers (rows of x) on the data it holds.
// [[Rcpp::export(rng = false)]]
Rcpp::List gk_fit_cpp(Rcpp::NumericMatrix x, Rcpp::List starts, int iter_max, bool single,
                      std::string engine, int threads, int device, bool trace,
                      SEXP progress, double progress_after) {
  const double t_begin = gk::wall_seconds();
  const std::int64_t n = x.nrow();
  const int d = x.ncol();
  const int nstart = starts.size();
  const bool cuda = engine == "cuda";

  gk::RObserver observer(trace, progress, progress_after, 1, nstart);
  StartFit best, current;
  double best_wss = R_PosInf;
  int best_start = 0;
  Rcpp::NumericVector start_wss(nstart);
  Rcpp::IntegerVector start_iter(nstart);
  Rcpp::LogicalVector start_empty(nstart);
  double t_up = 0.0, t_compute = 0.0, t_down = 0.0, t_init = 0.0, totss = 0.0;
  std::string device_name;

  DeviceData data;
  std::vector<float> xf;  // the one copy of x in single precision (CPU)
  char err[1024] = {0};
  const gk_cuda_options opts = cuda_options(device, single, iter_max);
  gk_cuda_callbacks cb;
  cb.interrupt = cb_interrupt;
  cb.on_iteration = observer.wants_iterations() ? cb_iteration : nullptr;
  cb.ctx = &observer;

  if (cuda) {
    int st = cached_device_name(device, &device_name, err, sizeof err);
    if (st != GK_CUDA_OK) cuda_fail(st, "device query", err);
    gk_cuda_upload_timing up;
    st = gk_cuda_upload(x.begin(), n, d, &opts, &data.p, &up, err, sizeof err);
    if (st != GK_CUDA_OK) cuda_fail(st, "upload of x", err);
    t_up = up.ms_upload / 1000.0;
    st = gk_cuda_totss(data.p, &totss, err, sizeof err);
    if (st != GK_CUDA_OK) cuda_fail(st, "totss", err);
  } else {
    if (single) xf.assign(x.begin(), x.end());
    totss = gk::cpu_totss(x.begin(), n, d, threads);
  }

  std::vector<double> c0;
  Rcpp::List init_rows(nstart);  // per start: the rows chosen by its init (1-based), or NULL
  for (int s = 0; s < nstart; ++s) {
    observer.set_start(s + 1);
    SEXP start = starts[s];
    int k;
    if (TYPEOF(start) == VECSXP) {
      Rcpp::List spec(start);
      const std::string method = Rcpp::as<std::string>(spec["method"]);
      k = Rcpp::as<int>(spec["k"]);
      const double t0 = gk::wall_seconds();
      std::vector<std::int64_t> idx;
      if (method == "kmeans++") {
        Rcpp::NumericVector unif = spec["unif"];
        const int L = Rcpp::as<int>(spec["L"]);
        if (unif.size() != 1 + static_cast<R_xlen_t>(k - 1) * L) Rcpp::stop("internal error: kmeans++ uniforms");
        if (cuda) {
          idx.resize(k);
          double ms = 0.0;
          int st = gk_cuda_kmeanspp(data.p, k, unif.begin(), L, &cb, idx.data(), &ms, err, sizeof err);
          if (st == GK_CUDA_INTERRUPTED || observer.interrupted()) throw Rcpp::internal::InterruptedException();
          if (st != GK_CUDA_OK) cuda_fail(st, "k-means++ initialisation", err);
        } else {
          idx = gk::cpu_kmeanspp(x.begin(), n, d, k, unif.begin(), L, threads, &observer);
          if (idx.empty()) throw Rcpp::internal::InterruptedException();
        }
      } else if (method == "kmeans||") {
        const std::uint64_t seed = par_seed(spec["seed"]);
        std::vector<std::int64_t> cand;
        std::vector<double> weight;
        if (cuda) {
          const double l = gk::kmeans_par_oversampling(k);
          std::int64_t cap = std::min<std::int64_t>(
              n, 1 + static_cast<std::int64_t>(2.0 * GK_PAR_ROUNDS * l) + 4096);
          for (;;) {
            cand.resize(cap);
            weight.resize(cap);
            std::int64_t m = 0;
            int rounds = 0;
            double ms = 0.0;
            int st = gk_cuda_kmeans_par(data.p, k, seed, &cb, cap, cand.data(), weight.data(), &m,
                                        &rounds, &ms, err, sizeof err);
            if (st == GK_CUDA_INTERRUPTED || observer.interrupted()) throw Rcpp::internal::InterruptedException();
            if (st != GK_CUDA_OK) cuda_fail(st, "k-means|| initialisation", err);
            if (m <= cap) {
              cand.resize(m);
              weight.resize(m);
              break;
            }
            cap = m;  // deterministic: the rerun draws the same candidates
          }
        } else {
          gk::ParCandidates pc = gk::cpu_kmeans_par_candidates(x.begin(), n, d, k, seed, threads, &observer);
          if (pc.interrupted) throw Rcpp::internal::InterruptedException();
          cand.swap(pc.idx);
          weight.swap(pc.weight);
        }
        // The reduction's greedy steps run where the candidates were found.
        const gk::ReduceGreedy on_device = [&](std::int64_t first, int picks, const double* u, int L) {
          std::vector<std::int64_t> pick(picks);
          double ms = 0.0;
          int st = gk_cuda_weighted_pp(data.p, cand.data(), weight.data(), static_cast<std::int64_t>(cand.size()),
                                       first, picks, u, L, &cb, pick.data(), &ms, err, sizeof err);
          if (st == GK_CUDA_INTERRUPTED || observer.interrupted()) throw Rcpp::internal::InterruptedException();
          if (st != GK_CUDA_OK) cuda_fail(st, "k-means|| reduction", err);
          return pick;
        };
        idx = gk::kmeans_par_reduce(x.begin(), n, d, k, seed, cand, weight, threads, cuda ? &on_device : nullptr);
      } else {
        Rcpp::stop("internal error: unknown init method '%s'", method);
      }
      c0 = rows_of(x.begin(), n, d, idx);
      Rcpp::IntegerVector rows(k);
      for (int j = 0; j < k; ++j) rows[j] = static_cast<int>(idx[j] + 1);
      init_rows[s] = rows;
      t_init += gk::wall_seconds() - t0;
      if (has_duplicate_rows(c0, k, d)) Rcpp::stop("more cluster centers than distinct data points.");
    } else {
      Rcpp::NumericMatrix m0(start);
      k = m0.nrow();
      c0.assign(m0.begin(), m0.end());
    }
    if (cuda) {
      current.centers.assign(c0.begin(), c0.end());
      current.cluster.resize(n);
      current.size.resize(k);
      current.withinss.resize(k);
      gk_cuda_fit_info info;
      int st = gk_cuda_lloyd(data.p, k, current.centers.data(), &opts, &cb, current.cluster.data(),
                             current.size.data(), current.withinss.data(), &info, err, sizeof err);
      if (st == GK_CUDA_INTERRUPTED || observer.interrupted()) throw Rcpp::internal::InterruptedException();
      if (st != GK_CUDA_OK) cuda_fail(st, "Lloyd iterations", err);
      current.iter = info.iter;
      current.converged = info.converged != 0;
      t_compute += info.ms_compute / 1000.0;
      t_down += info.ms_download / 1000.0;
    } else {
      gk::LloydResult r = single
          ? gk::cpu_lloyd<float>(xf.data(), n, d, k, c0.data(), iter_max, threads, &observer)
          : gk::cpu_lloyd<double>(x.begin(), n, d, k, c0.data(), iter_max, threads, &observer);
      if (r.interrupted) throw Rcpp::internal::InterruptedException();
      current.cluster.swap(r.cluster);
      current.centers.swap(r.centers);
      current.size.swap(r.size);
      current.withinss.swap(r.withinss);
      current.iter = r.iter;
      current.converged = r.converged;
      t_compute += r.seconds;
    }
    const double wss = r_sum(current.withinss);
    start_wss[s] = wss;
    start_iter[s] = current.iter;
    start_empty[s] = has_empty(current.size);
    if (s == 0 || wss < best_wss) {
      best_wss = wss;
      best_start = s;
      std::swap(best, current);
    }
  }

  const int k = static_cast<int>(best.size.size());
  Rcpp::NumericMatrix centers(k, d);
  std::copy(best.centers.begin(), best.centers.end(), centers.begin());
  Rcpp::NumericVector timing;
  if (cuda) {
    timing = Rcpp::NumericVector::create(Rcpp::_["transfer_to_device"] = t_up,
                                         Rcpp::_["compute"] = t_compute,
                                         Rcpp::_["transfer_to_host"] = t_down,
                                         Rcpp::_["init"] = t_init);
  } else {
    timing = Rcpp::NumericVector::create(Rcpp::_["compute"] = t_compute, Rcpp::_["init"] = t_init);
  }
  return Rcpp::List::create(
      Rcpp::_["cluster"] = Rcpp::IntegerVector(best.cluster.begin(), best.cluster.end()),
      Rcpp::_["centers"] = centers,
      Rcpp::_["totss"] = totss,
      Rcpp::_["withinss"] = Rcpp::NumericVector(best.withinss.begin(), best.withinss.end()),
      Rcpp::_["size"] = Rcpp::IntegerVector(best.size.begin(), best.size.end()),
      Rcpp::_["iter"] = best.iter,
      Rcpp::_["converged"] = best.converged,
      Rcpp::_["best_start"] = best_start + 1,
      Rcpp::_["start_tot_withinss"] = start_wss,
      Rcpp::_["start_iter"] = start_iter,
      Rcpp::_["start_empty"] = start_empty,
      Rcpp::_["start_init_rows"] = init_rows,
      Rcpp::_["timing"] = timing,
      Rcpp::_["device_name"] = device_name,
      Rcpp::_["threads"] = cuda ? 0 : gk::resolve_threads(threads),
      Rcpp::_["seconds"] = gk::wall_seconds() - t_begin);
}

// Nearest center (1-based) for each row of x.
// [[Rcpp::export(rng = false)]]
Rcpp::IntegerVector gk_predict_cpp(Rcpp::NumericMatrix x, Rcpp::NumericMatrix centers,
                                   std::string engine, int threads, int device) {
  const std::int64_t n = x.nrow();
  const int d = x.ncol(), k = centers.nrow();
  Rcpp::IntegerVector cluster(n);
  if (engine == "cuda") {
    char err[1024] = {0};
    const gk_cuda_options opts = cuda_options(device, false, 1);
    DeviceData data;
    gk_cuda_upload_timing up;
    int st = gk_cuda_upload(x.begin(), n, d, &opts, &data.p, &up, err, sizeof err);
    if (st != GK_CUDA_OK) cuda_fail(st, "upload of newdata", err);
    st = gk_cuda_assign(data.p, k, centers.begin(), cluster.begin(), err, sizeof err);
    if (st != GK_CUDA_OK) cuda_fail(st, "assignment", err);
  } else {
    gk::cpu_assign(x.begin(), n, d, k, centers.begin(), threads, cluster.begin());
  }
  return cluster;
}
