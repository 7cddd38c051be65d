// cuda_engine.cpp: the CUDA engine behind the engine interface (engine.h),
// the only caller of the C interface src/cuda/gk_cuda.h.  Its statuses become
// EngineError / Interrupted here, and the observer becomes its callbacks.
//
// Without CUDA (configure found no nvcc) this file alone stands for the
// engine: make_cuda_engine throws "not built" and cuda_info() says so.
#include "engine.h"
#include "process_guard.h"
#include "row_block.h"
#include "stage_log.h"

#ifdef GPUKMEANS_CUDA
#include "column_sum.h"
#include "cpu_engine.h"
#include "cpu_weights.h"
#include "fit_driver.h"
#include "reader_blocks.h"
#include "single_shift.h"
#include "threads.h"
#include "wall_clock.h"
#endif

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#ifdef GPUKMEANS_CUDA
#include "cuda/gk_cuda.h"
#endif

namespace gk {

#ifdef GPUKMEANS_CUDA

namespace {

constexpr std::size_t kErrLen = 1024;

// Throws the status as an engine exception ("CUDA engine: <what> failed: <why>").
void check(int status, const char* what, const char* err) {
  switch (status) {
    case GK_CUDA_OK:
      return;
    case GK_CUDA_INTERRUPTED:
      throw Interrupted();
    case GK_CUDA_NO_DEVICE:
      throw EngineError(EngineError::Kind::kNoDevice, std::string("CUDA engine: ") + what + " failed: " + err);
    case GK_CUDA_OUT_OF_MEMORY:
      throw EngineError(EngineError::Kind::kOutOfMemory, std::string("CUDA engine: ") + what + " failed: " + err +
                                                              " (use precision = \"single\", or backend = \"cpu\")");
    case GK_CUDA_INVALID:
      throw EngineError(EngineError::Kind::kInvalid, std::string("CUDA engine: ") + what + " failed: " + err);
    default:
      throw EngineError(EngineError::Kind::kDevice, std::string("CUDA engine: ") + what + " failed: " + err);
  }
}

// The observer as the C interface's callbacks.
int cb_interrupt(void* ctx) { return static_cast<IterationObserver*>(ctx)->keep_going() ? 0 : 1; }
int cb_iteration(void* ctx, int iter, int64_t changed, double tot) {
  return static_cast<IterationObserver*>(ctx)->iteration(iter, changed, tot) ? 0 : 1;
}
gk_cuda_callbacks callbacks(IterationObserver* observer, bool every_iteration) {
  gk_cuda_callbacks cb;
  cb.interrupt = observer ? cb_interrupt : nullptr;
  cb.on_iteration = observer && every_iteration ? cb_iteration : nullptr;
  cb.ctx = observer;
  return cb;
}

std::vector<std::uint64_t> words(std::size_t n) { return std::vector<std::uint64_t>(2 * n); }
std::vector<Fixed128> as_fixed(const std::vector<std::uint64_t>& w) {
  std::vector<Fixed128> out(w.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = Fixed128{w[2 * i], w[2 * i + 1]};
  return out;
}

class CudaEngine final : public Engine {
 public:
  CudaEngine(const HostData& data, Precision precision, int device, const double* shift, const CudaTuning& tuning)
      : Engine(data, precision), device_(device), host_x_(data.x), host_ld_(data.ld > 0 ? data.ld : data.n),
        host_threads_(tuning.host_threads) {
    const char* refused = cuda_use_refused();
    if (*refused) throw EngineError(EngineError::Kind::kNoDevice, refused);
    name_ = cuda_device_name(device);
    gk_cuda_options opts = {};
    opts.device = device;
    opts.single = precision == Precision::kSingle ? 1 : 0;
    opts.assign_kernel = tuning.assign_kernel;
    opts.init_filter = tuning.init_filter;
    opts.sample_room = tuning.sample_room;
    opts.bounds = tuning.bounds;
    opts.memory_cap = tuning.memory_cap;
    opts.staging = tuning.staging;
    opts.host_threads = tuning.host_threads;
    opts.stream = tuning.stream;
    opts.stream_rows = tuning.stream_rows;
    opts.stream_copy = tuning.stream_copy;
    opts.ld = host_ld_;
    opts_ = opts;
    if (data.reader) {
      if (w_) throw EngineError(EngineError::Kind::kInvalid, "a reader's rows take no weights");
      take_rows(*data.reader, data.finite, shift, data.reader_streams);
      return;
    }
    if (data.totss_early && !gk_cuda_upload_stages(data.n, data.d, &opts)) start_totss();
    int64_t bad = 0;
    const int up = gk_cuda_upload(data.x, data.n, data.d, &opts, shift, &D_, &seconds_upload_,
                                  data.finite ? nullptr : &bad, err_, kErrLen);
    if (up == GK_CUDA_NONFINITE) throw NonFiniteData(bad);
    check(up, "upload of x", err_);
    int64_t chunks = 0;
    gk_cuda_streamed(D_, nullptr, &chunks);
    chunks_ = chunks;
    if (streamed()) {
      name_ += streamed_suffix(chunks);
      if (w_) {
        gk_cuda_free(D_);
        D_ = nullptr;
        throw EngineError(EngineError::Kind::kUnsupported,
                          "observation weights are not supported yet when x is streamed from host memory (it does "
                          "not fit on the device): use precision = \"single\", or backend = \"cpu\"");
      }
    }
    if (w_) check(gk_cuda_set_weights(D_, w_, err_, kErrLen), "upload of the weights", err_);
  }
  // An engine over `data` (all the rows, on the host) whose copy D was
  // made already with `opts` (gathered()); it owns D.
  CudaEngine(const HostData& data, Precision precision, const gk_cuda_options& opts, gk_cuda_data* D, double seconds)
      : Engine(data, precision), device_(opts.device), host_x_(data.x), host_ld_(data.ld > 0 ? data.ld : data.n),
        host_threads_(opts.host_threads), D_(D), opts_(opts) {
    name_ = cuda_device_name(device_);
    seconds_upload_ = seconds;
  }
  ~CudaEngine() override {
    gk_cuda_free(D_);
    if (early_.valid()) early_.wait();  // (its task reads only the caller's x and w)
    if (early_seconds_ >= 0.0) stage_note("totss_early", early_seconds_);
  }

  const char* backend() const override { return "cuda"; }
  std::string device() const override { return name_; }
  std::int64_t streamed_chunks() const override { return chunks_; }

  // Weights: Lloyd's sums on the device (gk_cuda_set_weights); k-means++ on
  // the device with the sampling weights; totss and the k-means|| rounds on
  // the host (below).
  bool supports_weights() const override { return true; }

  // totss: the CPU engine's sum on the caller's double copy of x (one O(n d)
  // pass on the host, once per engine): the same bits as backend = "cpu",
  // and as several devices (src/multi_engine.h), whose parts cannot make the
  // device's sum (its rounding depends on how the rows meet the grid).
  // (gk_cuda_totss, computed at the upload, is no longer read.)  Host only
  // (x and the fields below): the fit driver computes it while the device
  // fits (totss_concurrent()).
  // (x from a reader: on this thread, which reads the rows again, from the
  // device in double precision, from the reader in single)
  bool totss_concurrent() const override { return reader_ == nullptr; }
  double totss() override {
    if (!have_totss_ && early_.valid()) {
      totss_ = early_.get();
      have_totss_ = true;
    }
    if (!have_totss_ && reader_) {
      totss_ = reader_totss();
      have_totss_ = true;
    }
    if (!have_totss_) {
      // (the column means, where the staged upload added them up: one pass less)
      std::vector<double> means(d_);
      const bool have_means = gk_cuda_column_means(D_, means.data()) == 1;
      totss_ = w_ ? cpu_weighted_totss(host_x(), n_, d_, w_, host_threads_)
                  : cpu_totss(host_x(), n_, d_, host_threads_, have_means ? means.data() : nullptr);
      have_totss_ = true;
    }
    return totss_;
  }

  LloydFit lloyd(const double* centers, int k, int max_iter, IterationObserver* observer, Labels into) override {
    // streamed x: step by step (each step one pass over the chunks), which
    // gives gk_cuda_lloyd's bits (fit_driver.h)
    if (streamed()) return lloyd_parts({this}, centers, k, max_iter, observer, CenterMap(), std::move(into));
    LloydFit r;
    r.centers.assign(centers, centers + static_cast<std::size_t>(k) * d_);
    r.cluster = std::move(into);
    r.cluster.resize(n_);
    r.size.resize(k);
    r.withinss.resize(k);
    stage_mark("lloyd_alloc");
    const gk_cuda_callbacks cb = callbacks(observer, observer && observer->wants_iterations());
    gk_cuda_fit_info info;
    check(gk_cuda_lloyd(D_, k, max_iter, r.centers.data(), &cb, r.cluster.data(), r.size.data(),
                        r.withinss.data(), &info, err_, kErrLen),
          "Lloyd iterations", err_);
    stage_mark("lloyd_cuda");
    fit_report(info, n_, &r);
    return r;
  }

  bool lloyd_together(const std::vector<Engine*>& parts, const double* centers, int k, int max_iter,
                      IterationObserver* observer, LloydFit* out) override {
    if (observer && observer->wants_iterations()) return false;
    std::vector<gk_cuda_data*> handles;
    std::int64_t rows = 0;
    if (!resident_handles(parts, &handles, &rows)) return false;
    LloydFit& r = *out;
    r.centers.assign(centers, centers + static_cast<std::size_t>(k) * d_);
    r.cluster.resize(rows);
    r.size.resize(k);
    r.withinss.resize(k);
    const gk_cuda_callbacks cb = callbacks(observer, false);
    gk_cuda_fit_info info;
    check(gk_cuda_lloyd_devices(handles.data(), static_cast<int>(handles.size()), k, max_iter, r.centers.data(), &cb,
                                r.cluster.data(), r.size.data(), r.withinss.data(), &info, err_, kErrLen),
          "Lloyd iterations on several devices", err_);
    fit_report(info, rows, &r);
    return true;
  }

  bool greedy_together(const std::vector<Engine*>& parts, std::int64_t first, int picks, const double* unif, int L,
                       IterationObserver* observer, std::vector<std::int64_t>* out) override {
    std::vector<gk_cuda_data*> handles;
    if (!resident_handles(parts, &handles)) return false;
    out->assign(picks, 0);
    const gk_cuda_callbacks cb = callbacks(observer, false);
    const int st = gk_cuda_greedy_devices(handles.data(), static_cast<int>(handles.size()), first, picks, unif, L, &cb,
                                          reinterpret_cast<int64_t*>(out->data()), err_, kErrLen);
    if (st == GK_CUDA_UNSUPPORTED) return false;
    check(st, "k-means++ initialisation on several devices", err_);
    return true;
  }

  std::unique_ptr<ParTogether> par_together(const std::vector<Engine*>& parts) override;

  std::unique_ptr<Engine> gathered(const std::vector<Engine*>& parts, const HostData& data,
                                   int host_threads) override {
    std::vector<gk_cuda_data*> handles;
    std::int64_t rows = 0;
    if (!resident_handles(parts, &handles, &rows)) return nullptr;
    if (rows != data.n || data.d != d_ || data.w) return nullptr;
    gk_cuda_options opts = opts_;  // (this engine's kernel choices and memory cap)
    opts.host_threads = host_threads;
    opts.ld = 0;
    opts.stream = 1;  // (never streamed: the gather fails where the rows do not fit)
    gk_cuda_data* D = nullptr;
    double seconds = 0.0;
    check(gk_cuda_gather(handles.data(), static_cast<int>(handles.size()), &opts, &D, &seconds, err_, kErrLen),
          "gathering the parts' rows on one device", err_);
    return std::unique_ptr<Engine>(new CudaEngine(data, precision_, opts, D, seconds));
  }

  void assign(const double* centers, int k, int* cluster) override {
    check(gk_cuda_assign(D_, k, centers, cluster, err_, kErrLen), "assignment", err_);
  }

  std::vector<double> column_maxabs() override {
    std::vector<double> m(d_);
    check(gk_cuda_column_stats(D_, m.data(), nullptr, err_, kErrLen), "column maxima", err_);
    return m;
  }
  std::vector<double> shift() override {
    std::vector<double> s(d_);
    check(gk_cuda_column_stats(D_, nullptr, s.data(), err_, kErrLen), "column shift", err_);
    return s;
  }

  StepSums step(const double* centers, int k, const std::vector<int>& scale, bool first) override {
    std::vector<std::uint64_t> w = words(static_cast<std::size_t>(k) * d_);
    StepSums out;
    out.count.resize(k);
    int64_t changed = 0;
    check(gk_cuda_step(D_, k, centers, scale.data(), first ? 1 : 0, w.data(), out.count.data(), &changed, err_,
                       kErrLen),
          "assignment step", err_);
    out.sum = as_fixed(w);
    out.changed = changed;
    return out;
  }
  std::vector<std::uint32_t> withinss_maxterm(const double* centers, int k) override {
    std::vector<std::uint32_t> m(k);
    check(gk_cuda_step_withinss(D_, k, centers, 1, m.data(), nullptr, err_, kErrLen), "within-SS", err_);
    return m;
  }
  std::vector<Fixed128> withinss_sums(const double* centers, int k,
                                      const std::vector<std::uint32_t>& maxterm) override {
    std::vector<std::uint32_t> m(maxterm);
    std::vector<std::uint64_t> w = words(k);
    check(gk_cuda_step_withinss(D_, k, centers, 2, m.data(), w.data(), err_, kErrLen), "within-SS", err_);
    return as_fixed(w);
  }
  std::vector<int> labels() override {
    std::vector<int> l(n_);
    check(gk_cuda_labels(D_, l.data(), err_, kErrLen), "labels", err_);
    return l;
  }

  std::vector<std::int64_t> greedy(const std::int64_t* rows, const double* weight, std::int64_t m,
                                   std::int64_t first, int picks, const double* unif, int L,
                                   IterationObserver* observer) override {
    if (streamed() && rows) {
      // the k-means|| reduction, over its m candidates only, as the device
      // stores them, on the host (x streamed from a reader: its candidates'
      // rows read from it)
      const std::vector<double> sh = shift();
      const double* s = precision_ == Precision::kSingle ? sh.data() : nullptr;
      if (!reader_)
        return cpu_greedy_stored(host_x(), n_, d_, s, rows, weight, m, first, picks, unif, L, host_threads_, observer);
      std::vector<double> cand(static_cast<std::size_t>(m) * d_);
      reader_->rows(rows, m, cand.data());
      std::vector<std::int64_t> own(static_cast<std::size_t>(m));
      for (std::int64_t r = 0; r < m; ++r) own[r] = r;
      return cpu_greedy_stored(cand.data(), m, d_, s, own.data(), weight, m, first, picks, unif, L, host_threads_,
                               observer);
    }
    std::vector<std::int64_t> out(picks);
    const gk_cuda_callbacks cb = callbacks(observer, false);
    if (streamed()) {
      // k-means++ on the device, each step a pass over the chunks (at the
      // link's rate: ~4x faster than the host's code on 2e7 x 16, k = 256,
      // bench_stream_pp.R); on the host where its D2 and trees (~9 bytes a
      // row) do not fit beside the chunks
      const int st = gk_cuda_greedy(D_, nullptr, weight, m, first, picks, unif, L, &cb,
                                    reinterpret_cast<int64_t*>(out.data()), err_, kErrLen);
      if (st != GK_CUDA_OUT_OF_MEMORY) {
        check(st, "k-means++ initialisation", err_);
        stage_mark("init_pp_streamed");
        return out;
      }
      out = host_engine().greedy(rows, weight, m, first, picks, unif, L, observer);  // the last use of its engine
      host_.reset();
      stage_mark("init_pp_host");
      return out;
    }
    check(gk_cuda_greedy(D_, reinterpret_cast<const int64_t*>(rows), weight, m, first, picks, unif, L, &cb,
                         reinterpret_cast<int64_t*>(out.data()), err_, kErrLen),
          rows ? "k-means|| reduction" : "k-means++ initialisation", err_);
    return out;
  }
  // Weighted k-means|| rounds run on the host, with the CPU engine's code on
  // the caller's double copy of x (as block_init below): the device rounds
  // have no weights yet; its picks are then the CPU engine's.  Streamed x
  // (no weights) runs them on the device, each round a pass over the chunks.
  double par_begin(std::int64_t first) override {
    if (w_) return host_engine().par_begin(first);
    double phi = 0.0;
    check(gk_cuda_par_begin(D_, first, &phi, err_, kErrLen), "k-means|| initialisation", err_);
    return phi;
  }
  std::vector<std::int64_t> par_round(std::uint64_t seed, int round, double l, double phi, double* phi_out,
                                      IterationObserver* observer) override {  // a round takes milliseconds
    if (w_) return host_engine().par_round(seed, round, l, phi, phi_out, observer);
    int64_t added = 0;
    check(gk_cuda_par_round(D_, seed, round, l, phi, &added, phi_out, err_, kErrLen), "k-means|| round", err_);
    std::vector<std::int64_t> rows(added);
    check(gk_cuda_par_added(D_, reinterpret_cast<int64_t*>(rows.data()), err_, kErrLen), "k-means|| round", err_);
    return rows;
  }
  std::vector<double> par_weights(std::int64_t m) override {
    if (w_) return host_engine().par_weights(m);
    std::vector<double> w(m);
    check(gk_cuda_par_weights(D_, m, w.data(), err_, kErrLen), "k-means|| weights", err_);
    return w;
  }
  void par_end() override {
    if (host_) host_->par_end();
    host_.reset();
    gk_cuda_par_end(D_);
  }

  // The initialisation of a block of a larger data set runs on the host for
  // now, on the caller's double copy of x (which outlives the engine,
  // HostData), with the CPU engine's code: the same bits as the device's
  // greedy() / par_*() in double precision (src/parity.h).  On the device it
  // would need the level-1 sums aligned to the block's global offset.
  std::unique_ptr<BlockInit> block_init(std::int64_t offset, std::int64_t total, int host_threads) override {
    return make_cpu_block_init(host_x(), n_, d_, offset, total, host_threads);
  }

  QualityPoints quality(const QualityRequest& req, IterationObserver* observer) override {
    if (streamed()) {
      QualityPoints out = host_engine().quality(req, observer);
      host_.reset();
      return out;
    }
    QualityPoints out;
    const ClusterOrder& o = *req.order;
    if (static_cast<std::int64_t>(o.order.size()) != n_ || static_cast<int>(o.start.size()) != req.k + 1)
      throw EngineError(EngineError::Kind::kInvalid, "quality: the cluster order does not match the data");
    const int sil = req.silhouette == QualityRequest::Silhouette::kExact        ? 1
                    : req.silhouette == QualityRequest::Silhouette::kSimplified ? 2
                                                                                : 0;
    const std::int64_t m = sil == 1 && req.rows ? req.m : n_;
    if (req.center_dist) out.center_dist.resize(n_);
    if (sil != 0) {
      out.width.resize(m);
      out.neighbor.resize(m);
    }
    const gk_cuda_callbacks cb = callbacks(observer, false);
    check(gk_cuda_quality(D_, req.k, o.order.data(), reinterpret_cast<const int64_t*>(o.start.data()), req.centers,
                          sil, sil == 1 ? reinterpret_cast<const int64_t*>(req.rows) : nullptr,
                          sil == 1 && req.rows ? req.m : 0, &cb, req.center_dist ? out.center_dist.data() : nullptr,
                          sil ? out.width.data() : nullptr, sil ? out.neighbor.data() : nullptr, err_, kErrLen),
          "quality pass", err_);
    return out;
  }

 private:
  // totss on a thread of its own from here on (HostData::totss_early),
  // beside an upload that does not add x's columns up (a small or mid-sized
  // x: one plain copy, or small pinned buffers; B's 16 MB on an H200 host
  // ~2 ms as one copy, 1.1-1.5 staged; the host's two passes over x 1.7-2.9
  // ms on 3 threads).  The
  // same function and chunks as totss() below: the same bits.  A thread
  // per 2^19 values at most: a large team gains nothing at this size and
  // waits on its slowest member on a busy host.  (No thread to be had:
  // totss() computes it later, as without the early start.)
  void start_totss() {
    if (host_ld_ != n_ || !host_x_) return;  // (parts of a larger x: not asked)
    const double* x = host_x_;
    const double* w = w_;
    const std::int64_t n = n_;
    const int d = d_;
    const int threads = threads_for(host_threads_, std::max<std::int64_t>(1, (n * d) >> 19));
    double* seconds = &early_seconds_;
    try {
      early_ = std::async(std::launch::async, [=] {
        const double t0 = wall_seconds();
        const double v = w ? cpu_weighted_totss(x, n, d, w, threads) : cpu_totss(x, n, d, threads);
        *seconds = wall_seconds() - t0;
        return v;
      });
    } catch (const std::system_error&) {
    }
  }

  // What the last fit says of itself (its handle's): iterations, times, the
  // share of distances computed per iteration and the filter's exact share
  // (of `rows` points).
  void fit_report(const gk_cuda_fit_info& info, std::int64_t rows, LloydFit* r) {
    r->iter = info.iter;
    r->seconds_compute = info.ms_compute / 1000.0;
    r->seconds_download = info.ms_download / 1000.0;
    int len = 0;
    check(gk_cuda_fit_profile(D_, nullptr, 0, &len, err_, kErrLen), "fit profile", err_);
    r->exact_fraction.resize(len);
    check(gk_cuda_fit_profile(D_, r->exact_fraction.data(), len, &len, err_, kErrLen), "fit profile", err_);
    std::int64_t exact_points = 0, every_points = 0, filtered = 0;
    int used = 0;
    if (gk_cuda_dfilter_stats(D_, &exact_points, &every_points, &filtered, &used) == GK_CUDA_OK && used &&
        filtered > 0) {
      const double all = static_cast<double>(filtered) * static_cast<double>(rows);
      r->screen_exact = static_cast<double>(exact_points) / all;
      r->screen_every = static_cast<double>(every_points) / all;
    }
    std::int64_t grid_seen = 0, grid_served = 0;
    if (gk_cuda_grid_stats(D_, &grid_seen, &grid_served) == GK_CUDA_OK && grid_seen > 0)
      r->grid_share = static_cast<double>(grid_served) / static_cast<double>(grid_seen);
    int ordered = 0;
    if (gk_cuda_order_stats(D_, &ordered) == GK_CUDA_OK) r->rows_ordered = ordered;
    std::int64_t sums_iters = 0, sums_added = 0;
    if (gk_cuda_sums_stats(D_, &sums_iters, &sums_added) == GK_CUDA_OK && sums_iters > 0)
      r->sums_share = static_cast<double>(sums_added) / (static_cast<double>(sums_iters) * static_cast<double>(rows));
  }
  // The CPU engine's code on the host, on the caller's x: the weighted
  // k-means|| rounds (in double precision, as the device's weighted rounds
  // would be), and for streamed x the initialisations and the quality pass,
  // on the values the device stores (single precision: float(x - shift),
  // the CPU engine's own copy, freed once the pass is done).  In double
  // precision its picks are the device's (src/parity.h).
  Engine& host_engine() {
    if (!host_) {
      HostData h;
      h.x = host_x();
      h.n = n_;
      h.d = d_;
      h.w = w_;
      const std::vector<double> s = shift();
      host_ = streamed() ? make_cpu_engine(h, precision_, host_threads_,
                                           precision_ == Precision::kSingle ? s.data() : nullptr)
                        : make_cpu_engine(h, Precision::kDouble, 0);
    }
    return *host_;
  }

  // x from a reader (HostData::reader), block by block: each block copied
  // to the device by gk_cuda_put_rows, which checks it (finite: the first
  // bad value in x's order is looked for in every block) and adds its
  // columns up for the means of totss in the same pass.  Nothing held on
  // the way out of an exception.
  void take_rows(RowReader& reader, bool finite, const double* given_shift, bool may_stream) {
    const double t0 = wall_seconds();
    std::vector<double> sh(d_, 0.0);
    if (precision_ == Precision::kSingle && given_shift) sh.assign(given_shift, given_shift + d_);
    if (precision_ == Precision::kSingle && !given_shift) reader_single_shift(reader, n_, d_, sh.data());
    const int st = gk_cuda_alloc_rows(n_, d_, &opts_, sh.data(), &D_, err_, kErrLen);
    // (streamed from the reader where the caller allows it and
    // options(gpukmeans.stream = FALSE) does not forbid streaming)
    if (st == GK_CUDA_OUT_OF_MEMORY && may_stream && reader.reads_again_cheaply() && opts_.stream != 1) {
      stream_from(reader, finite, sh);
      seconds_upload_ = wall_seconds() - t0;
      return;
    }
    if (st == GK_CUDA_OUT_OF_MEMORY) throw SourceNotResident(err_);
    check(st, "allocation of x", err_);
    // (GPUKMEANS_PUT_FUSED=0, internal, for measurements: each block checked
    // and added up on the host in passes of its own before it is copied, as
    // before the copies did both; with GPUKMEANS_STAGE_SUMS=0 the copies
    // then add nothing up)
    const char* fused_env = std::getenv("GPUKMEANS_PUT_FUSED");
    const bool fused = !(fused_env && fused_env[0] == '0');
    try {
      ColumnChunks host_sums(fused ? 0 : n_, d_);
      std::int64_t bad = -1;  // the first value that is not finite (x's column-major order)
      double t_read = 0.0, t_sums = 0.0, t_put = 0.0;  // (the stage log's: where the time goes)
      double t = wall_seconds();
      for_each_block(reader, n_, d_, [&](std::int64_t first, std::int64_t rows, const double* block) {
        t_read += wall_seconds() - t;
        t = wall_seconds();
        if (bad >= 0) {  // (nothing more to copy: reading on for an earlier bad value in x's order)
          bad = earlier_place(bad, block_first_nonfinite(block, first, rows, d_, n_, host_threads_));
        } else if (fused) {
          std::int64_t e = -1;
          const int put = gk_cuda_put_rows(D_, block, first, rows, finite ? nullptr : &e, err_, kErrLen);
          if (put == GK_CUDA_NONFINITE) bad = block_index_in_x(e, first, rows, n_);
          else check(put, "copy of x to the device", err_);
          t_put += wall_seconds() - t;
        } else {  // (the host's passes, then the copy)
          if (!finite) bad = block_first_nonfinite(block, first, rows, d_, n_, host_threads_);
          if (bad < 0) {
            host_sums.add_values(block, rows, host_threads_);
            t_sums += wall_seconds() - t;
            t = wall_seconds();
            check(gk_cuda_put_rows(D_, block, first, rows, nullptr, err_, kErrLen), "copy of x to the device", err_);
            t_put += wall_seconds() - t;
          }
        }
        t = wall_seconds();
      });
      if (bad >= 0) throw NonFiniteData(bad);
      check(gk_cuda_finish_rows(D_, err_, kErrLen), "copy of x to the device", err_);
      means_.assign(d_, 0.0);
      if (!fused) means_ = host_sums.means();
      else if (gk_cuda_column_means(D_, means_.data()) != 1)  // (the copies added nothing up)
        means_ = reader_column_means(reader, n_, d_, host_threads_);
      stage_note("source_read", t_read);
      stage_note("source_check_sums", t_sums);
      stage_note("source_put", t_put);
    } catch (...) {
      gk_cuda_free(D_);
      D_ = nullptr;
      throw;
    }
    reader_ = &reader;
    name_ += source_suffix(0);
    seconds_upload_ = wall_seconds() - t0;
  }

  // x from a reader that does not fit on the device (and reads its rows
  // again cheaply): streamed from it, every pass over the rows reading
  // them again chunk by chunk (gk_cuda_stream_rows), nothing of x held on
  // the host but a chunk's buffers.  First the column means of totss, in a
  // pass that also checks the values (finite false).
  void stream_from(RowReader& reader, bool finite, const std::vector<double>& sh) {
    std::int64_t bad = -1;
    means_ = reader_column_means(reader, n_, d_, host_threads_, finite ? nullptr : &bad);
    if (bad >= 0) throw NonFiniteData(bad);
    source_.reader = &reader;
    gk_cuda_row_source src;
    src.ctx = &source_;
    src.block = &SourceCall::block;
    src.rows = &SourceCall::rows;
    check(gk_cuda_stream_rows(n_, d_, &opts_, sh.data(), &src, &D_, err_, kErrLen), "streaming x from its source",
          err_);
    reader_ = &reader;
    int64_t chunks = 0;
    gk_cuda_streamed(D_, nullptr, &chunks);
    chunks_ = chunks;
    name_ += source_suffix(chunks);
  }

  // The row source of gk_cuda_stream_rows over a RowReader: an exception of
  // the reader is kept (the C interface then fails the call in progress)
  // and thrown again by check() below.
  struct SourceCall {
    RowReader* reader = nullptr;
    std::exception_ptr error;
    static int block(void* ctx, int64_t first, int64_t rows, double* out) {
      SourceCall* c = static_cast<SourceCall*>(ctx);
      try {
        c->reader->block(first, rows, out);
        return 0;
      } catch (...) {
        c->error = std::current_exception();
        return 1;
      }
    }
    static int rows(void* ctx, const int64_t* idx, int64_t m, double* out) {
      SourceCall* c = static_cast<SourceCall*>(ctx);
      try {
        c->reader->rows(reinterpret_cast<const std::int64_t*>(idx), m, out);
        return 0;
      } catch (...) {
        c->error = std::current_exception();
        return 1;
      }
    }
    void rethrow() {
      if (!error) return;
      std::exception_ptr e = error;
      error = nullptr;
      std::rethrow_exception(e);
    }
  };
  SourceCall source_;
  // The statuses of the C interface as exceptions (the free check()), the
  // row source's own exception first where a read failed.
  void check(int status, const char* what, const char* err) {
    if (status != GK_CUDA_OK) source_.rethrow();
    gk::check(status, what, err);
  }

  // The rows the device stores, in double precision x itself, read back
  // block by block (gk_cuda_get_rows) in the blocks of x's reader.
  class DeviceRows final : public RowReader {
   public:
    explicit DeviceRows(CudaEngine& e) : e_(e) {}
    std::int64_t block_rows() const override { return e_.reader_->block_rows(); }
    void block(std::int64_t first, std::int64_t rows, double* out) override {
      e_.check(gk_cuda_get_rows(e_.D_, first, rows, out, e_.err_, kErrLen), "copy of x to the host", e_.err_);
    }
    void rows(const std::int64_t* idx, std::int64_t m, double* out) override {  // (a row at a time)
      std::vector<double> row(e_.d_);
      for (std::int64_t r = 0; r < m; ++r) {
        block(idx[r], 1, row.data());
        for (int j = 0; j < e_.d_; ++j) out[r + m * j] = row[j];
      }
    }

   private:
    CudaEngine& e_;
  };

  // totss of x from a reader: its second pass, block by block (the rows
  // from the device in double precision, which stores x itself, unless the
  // reader reads them again as cheaply; from the reader again in single).
  // (1e7 x 50 doubles, H100: 0.59 s through the device's pageable copies,
  // 0.10 s from a dgCMatrix again: tools/cuda-dev/LOG.md)
  double reader_totss() {
    const double t0 = wall_seconds();
    double total;
    if (precision_ == Precision::kDouble && !reader_->reads_again_cheaply()) {
      DeviceRows rows_on_device(*this);
      total = reader_deviations_total(rows_on_device, n_, d_, means_.data(), host_threads_);
    } else {
      total = reader_deviations_total(*reader_, n_, d_, means_.data(), host_threads_);
    }
    stage_note("source_totss", wall_seconds() - t0);
    return total;
  }

  // The handles of `parts` (the joint runs over several engines) and their
  // rows, where every part is a CUDA engine of this precision holding its
  // rows resident, without weights; false otherwise.
  bool resident_handles(const std::vector<Engine*>& parts, std::vector<gk_cuda_data*>* handles,
                        std::int64_t* rows = nullptr) const {
    if (rows) *rows = 0;
    for (Engine* e : parts) {
      CudaEngine* c = dynamic_cast<CudaEngine*>(e);
      if (!c || c->streamed() || c->w_ || c->precision_ != precision_) return false;
      handles->push_back(c->D_);
      if (rows) *rows += c->n_;
    }
    return true;
  }

  int device_;
  // x stays in host memory, brought to the device in so many chunks at every
  // pass (gk_cuda_streamed); 0: x is resident
  std::int64_t chunks_ = 0;
  bool streamed() const { return chunks_ > 0; }
  std::unique_ptr<Engine> host_;  // host passes (host_engine())
  // The caller's x (n x d doubles, columns host_ld_ apart), for the host
  // passes: block_init(), totss(), host_engine(), which read contiguous
  // columns: host_x() copies a block of a larger matrix once, when one of
  // them first runs (the composite over several devices calls none).
  const double* host_x_;
  std::int64_t host_ld_;
  std::vector<double> host_copy_;
  const double* host_x() {
    if (!host_x_)  // (x from a reader: R sends no fit that needs it on the host)
      throw EngineError(EngineError::Kind::kUnsupported,
                        "this step needs x in host memory, and x was read block by block from its source");
    if (host_ld_ == n_) return host_x_;
    if (host_copy_.empty()) {
      host_copy_.resize(static_cast<std::size_t>(n_) * d_);
      copy_row_block(host_x_, host_ld_, d_, 0, n_, host_copy_.data(), host_threads_);
    }
    return host_copy_.data();
  }
  int host_threads_;      // threads of the host passes (0: all)
  RowReader* reader_ = nullptr;  // where x came from, when not from host memory (take_rows)
  std::vector<double> means_;    // ... and its column means (totss)
  double totss_ = 0.0;
  bool have_totss_ = false;
  double early_seconds_ = -1.0;  // the early totss task's own seconds (the stage log)
  std::future<double> early_;    // totss, started beside the upload (start_totss; declared
                                 // after what its task writes, so destroyed first: it waits)
  std::string name_;
  gk_cuda_data* D_ = nullptr;
  gk_cuda_options opts_ = {};  // as given to the upload (gathered() makes its engine with them)
  char err_[kErrLen] = {0};
};

// The k-means|| rounds of CUDA parts together (gk_cuda_par_team_*).
class CudaParTeam final : public ParTogether {
 public:
  explicit CudaParTeam(std::vector<gk_cuda_data*> parts) : parts_(std::move(parts)) {}
  ~CudaParTeam() override { gk_cuda_par_team_free(team_); }
  bool begin(std::int64_t first, double* phi) override {
    const int st = gk_cuda_par_team_begin(parts_.data(), static_cast<int>(parts_.size()), first, &team_, phi, err_,
                                          kErrLen);
    if (st == GK_CUDA_UNSUPPORTED) return false;
    check(st, "k-means|| initialisation on several devices", err_);
    return true;
  }
  std::vector<std::int64_t> round(std::uint64_t seed, int round, double l, double phi, double* phi_out) override {
    int64_t added = 0;
    check(gk_cuda_par_team_round(team_, seed, round, l, phi, &added, phi_out, err_, kErrLen),
          "k-means|| round on several devices", err_);
    std::vector<std::int64_t> rows(added);
    check(gk_cuda_par_team_added(team_, reinterpret_cast<int64_t*>(rows.data()), err_, kErrLen),
          "k-means|| round on several devices", err_);
    return rows;
  }
  std::vector<double> weights(std::int64_t m) override {
    std::vector<double> w(m);
    check(gk_cuda_par_team_weights(team_, m, w.data(), err_, kErrLen), "k-means|| weights on several devices", err_);
    return w;
  }

 private:
  std::vector<gk_cuda_data*> parts_;
  gk_cuda_par_team* team_ = nullptr;
  char err_[kErrLen] = {0};
};

std::unique_ptr<ParTogether> CudaEngine::par_together(const std::vector<Engine*>& parts) {
  std::vector<gk_cuda_data*> handles;
  if (!resident_handles(parts, &handles)) return nullptr;
  return std::unique_ptr<ParTogether>(new CudaParTeam(std::move(handles)));
}

}  // namespace

std::unique_ptr<Engine> make_cuda_engine(const HostData& data, Precision precision, int device, const double* shift,
                                         const CudaTuning& tuning) {
  return std::unique_ptr<Engine>(new CudaEngine(data, precision, device, shift, tuning));
}

CudaInfo cuda_info() {
  CudaInfo out;
  out.built = true;
  const char* refused = cuda_use_refused();
  if (*refused) {
    out.message = refused;
    return out;
  }
  gk_cuda_info info;
  gk_cuda_get_info(&info);
  out.runtime_version = info.runtime_version;
  out.driver_version = info.driver_version;
  out.device_count = info.device_count > 0 ? info.device_count : 0;
  out.message = info.message;
  char err[512];
  for (int i = 0; i < out.device_count; ++i) {
    gk_cuda_device dev;
    CudaDevice d;
    if (gk_cuda_get_device(i, &dev, err, sizeof err) == GK_CUDA_OK) {
      d.ok = true;
      d.name = dev.name;
      d.major = dev.major;
      d.minor = dev.minor;
      d.total_memory = dev.total_memory;
      d.free_memory = dev.free_memory;
      d.multiprocessors = dev.multiprocessors;
      d.usable = dev.usable != 0;
      d.why = dev.why;
    } else {
      d.why = err;
    }
    out.devices.push_back(d);
  }
  return out;
}

void cuda_release_kept() { gk_cuda_release_kept(); }

void cuda_fault_test(int device) {
  char err[kErrLen];
  check(gk_cuda_fault_test(device, err, sizeof err), "fault test", err);
}

std::string cuda_device_name(int device) {
  static std::mutex mu;
  static std::map<int, std::string> names;  // usable devices only
  std::lock_guard<std::mutex> lock(mu);
  auto it = names.find(device);
  if (it == names.end()) {
    gk_cuda_device dev;
    char err[kErrLen];
    check(gk_cuda_get_device(device, &dev, err, sizeof err), "device query", err);
    if (!dev.usable)
      throw EngineError(EngineError::Kind::kNoDevice, std::string("CUDA device ") + std::to_string(device) + " (" +
                                                          dev.name + "): " + dev.why);
    it = names.emplace(device, dev.name).first;
  }
  return it->second;
}

#else  // no CUDA in this build

namespace {
const char* kNotBuilt = "gpukmeans was built without CUDA";
}

std::unique_ptr<Engine> make_cuda_engine(const HostData&, Precision, int, const double*, const CudaTuning&) {
  throw EngineError(EngineError::Kind::kNotBuilt, kNotBuilt);
}

CudaInfo cuda_info() {
  CudaInfo out;
  out.message = kNotBuilt;
  return out;
}

std::string cuda_device_name(int) { throw EngineError(EngineError::Kind::kNotBuilt, kNotBuilt); }

void cuda_fault_test(int) { throw EngineError(EngineError::Kind::kNotBuilt, kNotBuilt); }

void cuda_release_kept() {}

#endif

// The CUDA engine fits observation weights (CudaEngine::supports_weights()).
// In a build without CUDA, backend = "cuda" then fails as without weights
// (not built), not for the weights.
bool cuda_supports_weights() { return true; }

}  // namespace gk
