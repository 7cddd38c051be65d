// detail/fit.hpp: one fit's kernels on one device (Fit), how a fit starts
// (begin_fit) and when its iterations keep distance bounds (BoundsPolicy):
// shared by the Lloyd loop on one device (lloyd.cu) and the loop over the
// devices that each hold a part of the rows (lloyd_parts.cu).
#ifndef GPUKMEANS_CUDA_DETAIL_FIT_HPP
#define GPUKMEANS_CUDA_DETAIL_FIT_HPP

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

  cudaError_t assign_and_sum() const {
    const void *cen = D->single ? (const void *)w.cen_f : (const void *)w.cen_d;
    if (df.on) {  // labels only (the tiled path), then the sums
      cudaError_t e = launch_assign_df(D, plan, df, w.cen_d, k, D->labels, w.st, max_iter, s);
      if (e != cudaSuccess) return e;
      return D->weighted ? launch_accumulate_w(D, plan, k, w, max_iter, s)
                         : launch_accumulate(D, plan, D->labels, k, w.st, max_iter, w.acc, w.counts, scale, s);
    }
    if (D->weighted) {  // labels only (planned without sums), then the weighted sums
      cudaError_t e = launch_assign(D, plan, cen, k, D->labels, w.st, max_iter, false, nullptr, nullptr, nullptr, s);
      return e != cudaSuccess ? e : launch_accumulate_w(D, plan, k, w, max_iter, s);
    }
    cudaError_t e = launch_assign(D, plan, cen, k, D->labels, w.st, max_iter, plan.path == 0, w.acc, w.counts,
                                  scale, s);
    if (e != cudaSuccess || plan.path == 0) return e;
    return launch_accumulate(D, plan, D->labels, k, w.st, max_iter, w.acc, w.counts, scale, s);
  }
  // The update from the sums acc/counts (the workspace's, or those of all
  // the parts), which it zeroes.
  cudaError_t finalize_from(u64 *acc, unsigned int *counts) const {
    if (D->weighted) return launch_finalize_w(D, plan, k, w, max_iter, s);
    return launch_finalize(D, plan, k, w.st, max_iter, acc, counts, w.cen_d, w.cen_f, scale, s);
  }
  cudaError_t finalize() const { return finalize_from(w.acc, w.counts); }
  cudaError_t iteration() const {
    cudaError_t e = assign_and_sum();
    return e != cudaSuccess ? e : finalize();
  }
  cudaError_t withinss() const {
    if (D->weighted) return launch_withinss_w(D, plan, k, w, s);
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
  BoundsPolicy(const gk_cuda_data *D, const Fit &f) {
    // double arithmetic on active points costs more against float plain kernels
    // (the certified filter makes plain double iterations about as cheap as single ones)
    const bool cheap = D->single || f.df.on;
    enter = D->opts.bounds == 2 ? 2.0 : cheap ? 0.02 : 0.05;
    leave = cheap ? 0.25 : 0.5;
  }
};

// Iterations per batch of plain ones (between two reads of the state by the
// host): about 20 ms of device work.
int batch_size(const gk_cuda_data *D, int k, int max_iter);

}  // namespace gk

#endif
