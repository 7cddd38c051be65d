// detail/fit.hpp: one fit's kernels on one device (Fit), how a fit starts
// (begin_fit) and when its iterations keep distance bounds (BoundsPolicy,
// BoundsSwitch): shared by the Lloyd loop on one device (lloyd.cu) and the
// loop over the devices that each hold a part of the rows (lloyd_devices.cu).
#ifndef GPUKMEANS_CUDA_DETAIL_FIT_HPP
#define GPUKMEANS_CUDA_DETAIL_FIT_HPP

#include <algorithm>
#include <vector>

#include "engine.hpp"

namespace gk {

// One fit's kernels: an iteration is assign_and_sum() then finalize().
// scale: the fixed-point scales of the sums (D->d_scale on one device; on
// several, the scales of all the parts' rows, the same on each).
struct Fit {
  const gk_cuda_data *D;
  Plan plan;
  int k, max_iter;
  Workspace w;
  DFilter df;  // double precision, tiled path: the certified filter (assign.cu)
  const int *scale;
  cudaStream_t s;
  // Rows ordered in space: the next iteration is the fit's first, whose
  // labels start unset: its kernel does not read them (nor, where the
  // ordered copy is not made yet, the copy: launch_assign_ordered).  Set
  // by the fit's start, cleared by the first launch.
  mutable bool ord_first = false;

  // The centers as the assignment kernels read them (single precision: the
  // float copy).
  const void *centers() const { return D->single ? (const void *)w.cen_f : (const void *)w.cen_d; }
  cudaError_t assign_and_sum() const {
    const void *cen = centers();
    if (plan.ordered)  // rows ordered in space: the warp boxes (labels in D->ord_labels)
      return ordered_launch(cen, nullptr, nullptr);
    if (df.on) {  // labels only (the tiled path), then the sums
      cudaError_t e = launch_assign_df(D, plan, df, w.cen_d, k, D->labels, w.st, max_iter, s);
      if (e != cudaSuccess) return e;
      return D->weighted ? launch_accumulate_w(D, plan, k, w, max_iter, s)
                         : launch_accumulate(D, plan, D->labels, k, w.st, max_iter, w.acc, w.counts, scale, s,
                                             plan.delta);
    }
    if (D->weighted) {  // labels only (planned without sums), then the weighted sums
      cudaError_t e = launch_assign(D, plan, cen, k, D->labels, w.st, max_iter, false, nullptr, nullptr, nullptr, s);
      return e != cudaSuccess ? e : launch_accumulate_w(D, plan, k, w, max_iter, s);
    }
    cudaError_t e = launch_assign(D, plan, cen, k, D->labels, w.st, max_iter, plan.path == 0, w.acc, w.counts,
                                  scale, s);
    if (e != cudaSuccess || plan.path == 0) return e;
    return launch_accumulate(D, plan, D->labels, k, w.st, max_iter, w.acc, w.counts, scale, s, plan.delta);
  }
  // The update from the sums acc/counts (the workspace's, or those of all
  // the parts), which it zeroes unless the sums are carried
  // (plan.sums_carried()).
  cudaError_t finalize_from(u64 *acc, unsigned int *counts) const {
    if (D->weighted) return launch_finalize_w(D, plan, k, w, max_iter, s);
    return launch_finalize(D, plan, k, w.st, max_iter, acc, counts, w.cen_d, w.cen_f, scale, s);
  }
  cudaError_t finalize() const { return finalize_from(w.acc, w.counts); }
  // The running sums and counts zeroed (a fit's start; plain iterations
  // again after bounded ones, which add moves to what the sums hold).
  cudaError_t clear_sums() const {
    cudaError_t e = cudaMemsetAsync(w.acc, 0, 2 * (size_t)k * D->d * sizeof(u64), s);
    return e != cudaSuccess ? e : cudaMemsetAsync(w.counts, 0, 2 * (size_t)k * sizeof(unsigned int), s);
  }
  // The sums where bounded iterations begin (their first sums every point
  // afresh: carried sums are cleared) and where plain ones take over again
  // (those summing afresh start from zero; carried ones go on from the
  // bounded ones', which hold the labels' sums, so prev takes the labels).
  cudaError_t sums_entering_bounds() const { return plan.delta ? clear_sums() : cudaSuccess; }
  cudaError_t sums_leaving_bounds() const {
    if (!plan.delta) return clear_sums();
    return cudaMemcpyAsync(plan.prev, D->labels, (size_t)D->n * sizeof(int), cudaMemcpyDeviceToDevice, s);
  }
  cudaError_t iteration() const {
    if (plan.ordered && plan.ord_fused)  // one kernel: the warp boxes' last block runs the update
      return ordered_launch(centers(), w.cen_d, w.cen_f);
    cudaError_t e = assign_and_sum();
    return e != cudaSuccess ? e : finalize();
  }
  cudaError_t ordered_launch(const void *cen, double *upd_cen_d, float *upd_cen_f) const {
    const cudaError_t e = launch_assign_ordered(D, plan, cen, k, w.st, max_iter, w.acc, w.counts, scale, upd_cen_d,
                                                upd_cen_f, ord_first, s);
    if (e == cudaSuccess) ord_first = false;
    return e;
  }
  // Before a captured batch of iterations (whose kernels read the labels):
  // the fit's unset labels written (-1) where its first iteration is in it.
  cudaError_t labels_unset() const {
    if (!plan.ordered || !ord_first) return cudaSuccess;
    const cudaError_t e = cudaMemsetAsync(D->ord_labels, 0xff, (size_t)D->n * sizeof(int), s);
    if (e == cudaSuccess) ord_first = false;
    return e;
  }
  cudaError_t withinss() const {
    if (D->weighted) return launch_withinss_w(D, plan, k, w, s);
    if (plan.ordered)  // on the ordered rows (their labels' clusters lie in runs), the labels put back in row order
      return launch_withinss(D, plan, D->ord_labels, w.cen_d, k, w.wmax, w.wacc, w.wcnt, s, D->ord_x, D->ord_perm);
    return launch_withinss(D, plan, D->labels, w.cen_d, k, w.wmax, w.wacc, w.wcnt, s);
  }
};

// Starts a fit on D's stream: the workspace, the centers (host, k x d,
// original coordinates), labels, sums and state cleared, the start event
// (D->ev0), the kernels planned (the packed tiles and the filter's image of
// x made where they are used).  scale: the sums' scales (d values, host),
// into the workspace; nullptr: D's own (D->d_scale).
int begin_fit(gk_cuda_data *D, int k, int max_iter, const double *centers, const int *scale, Fit &f, char *err,
              size_t errlen);
// begin_fit in its two parts, for a caller with device work to queue
// between them (gk_cuda_lloyd: the rows' sort): start_fit up to the start
// event, plan_fit the plans after it.
int start_fit(gk_cuda_data *D, int k, int max_iter, const double *centers, const int *scale, Fit &f, char *err,
              size_t errlen);
int plan_fit(gk_cuda_data *D, int k, Fit &f, char *err, size_t errlen);

// When a fit's iterations keep distance bounds (bounds.cu): once an
// iteration changes at most `enter` of the points, bounded iterations run
// in batches of `batch`; they give way to plain ones when more than `leave`
// of the points are computed exactly per iteration, at most `max_leaves`
// times (data whose points keep moving would otherwise pay the bounds'
// setup again and again for nothing).
struct BoundsPolicy {
  double enter, leave;
  int batch = 16;
  int max_leaves = 2;
  bool worth = true;  // false: plain iterations only, whatever the mode "where they pay" says
  BoundsPolicy(const gk_cuda_data *D, const Fit &f) {
    // double arithmetic on active points costs more against float plain kernels
    // (the certified filter makes plain double iterations about as cheap as single ones)
    const bool cheap = D->single || f.df.on;
    enter = D->opts.bounds == 2 ? 2.0 : cheap ? 0.02 : 0.05;
    leave = cheap ? 0.25 : 0.5;
    // Where the plain iterations run on the tensor cores (single precision's
    // packed kernel, double's certified filter) from d = 96 with k d >=
    // 32768, bounded ones lose: they compute their active points on the
    // SIMT cores.  To convergence on an H100 (2026-11-26, blobs, random and
    // k-means|| starts; tools/cuda-dev/LOG.md): bounded / plain compute
    // 0.46-0.67x at d = 128 and 256, 0.5-1.0x on bench.R's E; 0.8-1.3x at
    // d = 64, k = 1024; 1.1-2.3x at d = 32, or k d = 16384, and 4-8x on D.
    const bool tensor = f.plan.tc_x || (f.df.on && !f.df.tc1);
    worth = D->opts.bounds == 2 || !(tensor && D->d >= 96 && (double)f.k * D->d >= 32768.0);
  }
};

// The plain/bounded state of a fit's iterations as BoundsPolicy rules it,
// batch by batch: the one copy of the rules for the loop on one device
// (lloyd.cu, run_graphs) and the loop over several (lloyd_devices.cu,
// run_iterations).  The caller launches batch(plain) iterations, calling
// launched() for each (true: the first bounded one, which sets the bounds
// up), then reads the state and asks next(); it makes the bounds' buffers
// at kEnter (then enter(), or refuse() where there is no room: plain
// iterations for the rest of the fit), clears the sums at kLeave (after
// leave()).  rows: the points of the fit (all the parts').
class BoundsSwitch {
 public:
  enum class Move { kStay, kEnter, kLeave };
  BoundsSwitch(const BoundsPolicy &policy, double rows, int max_iter, bool may_bound)
      : policy_(policy), rows_(rows), may_bound_(may_bound && policy.worth), kind_(std::min(max_iter, kBoundsHist), 0) {}

  bool bounded() const { return bounded_; }
  bool has_buffers() const { return buffers_; }
  int batch(int plain) const { return bounded_ ? policy_.batch : plain; }
  bool launched(int iter, int batch) {
    if (!bounded_) return false;
    const bool first = first_;
    if (!first && iter < (int)kind_.size()) kind_[iter] = 1;
    first_ = false;
    bounded_iters_ = batch;
    return first;
  }
  // After a batch: last_changed, the points whose label the last iteration
  // changed; active, the points computed exactly in the batch (bounded).
  Move next(double last_changed, double active) const {
    if (!bounded_ && may_bound_ && leaves_ < policy_.max_leaves && last_changed <= policy_.enter * rows_)
      return Move::kEnter;
    if (bounded_ && active > policy_.leave * rows_ * bounded_iters_) return Move::kLeave;
    return Move::kStay;
  }
  void enter() { buffers_ = bounded_ = first_ = true; }
  void refuse() { may_bound_ = false; }
  void leave() {
    bounded_ = false;
    ++leaves_;
  }
  // Iterations [0, iters) of which some were bounded (their exact counts
  // are worth reading).
  bool any_bounded(int iters) const {
    iters = std::min(iters, (int)kind_.size());
    return std::find(kind_.begin(), kind_.begin() + iters, 1) != kind_.begin() + iters;
  }
  // The share of the points computed in each of `done` iterations: 1 for
  // plain ones, hist[it] / rows for bounded ones (hist: exact counts per
  // iteration, all parts added up; any_bounded(done) values).
  std::vector<double> profile(int done, const std::vector<u64> &hist) const {
    std::vector<double> out(done, 1.0);
    const int iters = std::min(done, (int)kind_.size());
    for (int it = 0; it < iters && it < (int)hist.size(); ++it)
      if (kind_[it]) out[it] = (double)hist[it] / rows_;
    return out;
  }

 private:
  BoundsPolicy policy_;
  double rows_;
  bool may_bound_;
  bool bounded_ = false, first_ = false, buffers_ = false;
  int leaves_ = 0, bounded_iters_ = 0;
  std::vector<char> kind_;  // 1: a bounded iteration after the first
};

// Iterations per batch of plain ones (between two reads of the state by the
// host): about 20 ms of device work.
int batch_size(const gk_cuda_data *D, int k, int max_iter);

}  // namespace gk

#endif
