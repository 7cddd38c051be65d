// lloyd.cu: gk_cuda_lloyd, the Lloyd loop, and the fit workspace.
//
// Per iteration, all on the device: assign (+ fused sums on the small-d path),
// accumulate (tiled path), finalize (new centers or convergence).  Labels,
// centers and the state (changed count, converged flag, iteration count) stay
// on the device.  The iterations run in batches (run_batches); after each
// batch the host reads the small state once and polls for interrupts.  A
// batch is one of three things, chosen by shape:
//   traced      one iteration plus its within-SS, when the caller wants every
//               iteration reported (trace or progress);
//   persistent  one cooperative kernel for the whole batch (small n, d <= 8),
//               where launch latency would dominate;
//   graph       a CUDA graph of the batch's kernels, captured once while the
//               first batch runs (launched directly) and kept in the handle
//               for later fits of the same shape;
//   bounded     once few points change cluster, iterations that keep
//               distance bounds per point and compute distances only where
//               the bounds do not prove the label (bounds.cu): the same
//               labels, centers and iterations as plain ones, bit for bit.
// A weighted fit (gk_cuda_set_weights) runs graph or traced batches of
// plain iterations whose sums, update and within-SS are the weighted
// kernels (weights.cu); it has no persistent or bounded batches yet.
#include <algorithm>
#include <chrono>
#include <vector>

#include "detail/fit.hpp"

using namespace gk;

namespace gk {

namespace {

size_t al256(size_t b) { return (b + 255) / 256 * 256; }

// Fit workspace layout (offsets into D->ws); [0, pack) is downloaded at the end.
struct Layout {
  size_t st, cen_d, wacc, wcnt, wmax, pack, acc, counts, wsum, cen_f, scale, total;
  Layout(int k, int d) {
    const size_t kd = (size_t)k * d;
    st = 0;
    cen_d = al256(sizeof(State));
    wacc = cen_d + al256(kd * sizeof(double));
    wcnt = wacc + 2 * (size_t)k * sizeof(u64);
    wmax = wcnt + (size_t)k * sizeof(unsigned int);
    pack = wmax + (size_t)k * sizeof(unsigned int);
    acc = al256(pack);
    counts = acc + al256(2 * kd * sizeof(u64));
    wsum = counts + al256(2 * (size_t)k * sizeof(unsigned int));
    cen_f = wsum + al256(2 * (size_t)k * sizeof(u64));
    scale = cen_f + al256(kd * sizeof(float));
    total = scale + al256((size_t)d * sizeof(int));
  }
};

}  // namespace

// Destroys the graphs kept in the handle (they point into the workspace).
void drop_graphs(gk_cuda_data *D) {
  for (int i = 0; i < 2; ++i) {
    if (D->gx[i]) cudaGraphExecDestroy(D->gx[i]);
    D->gx[i] = nullptr;
    D->gx_iters[i] = 0;
  }
  D->gx_k = D->gx_max_iter = D->gx_bsz = 0;
  D->gx_ws = nullptr;
  D->gx_df = 0;
}


int ensure_workspace(gk_cuda_data *D, int k, Workspace &w, char *err, size_t errlen) {
  const Layout L(k, D->d);
  if (D->ws_bytes < L.total) {
    drop_graphs(D);  // they point into the old workspace
    if (D->ws) cudaFree(D->ws);
    D->ws = nullptr;
    D->ws_bytes = 0;
    size_t free_b = 0, total_b = 0;
    bool fits = true;
    if (L.total >= ((size_t)1 << 30)) {  // large: check first (small ones skip the query)
      GK_CHECK(cudaMemGetInfo(&free_b, &total_b), "querying device memory");
      fits = (double)L.total <= (double)free_b;
    }
    cudaError_t e = fits ? cudaMalloc(&D->ws, L.total) : cudaErrorMemoryAllocation;
    if (e == cudaErrorMemoryAllocation) {
      if (fits) cudaGetLastError();
      D->ws = nullptr;
      cudaMemGetInfo(&free_b, &total_b);
      set_msg(err, errlen, "the fit needs %.2f GiB on device %d (centers and sums) but only %.2f GiB is free",
              gib((double)L.total), D->device, gib((double)free_b));
      return GK_CUDA_OUT_OF_MEMORY;
    }
    GK_CHECK(e, "allocating the fit workspace");
    // zeroed once: the results are downloaded as one block [0, pack), and
    // its gaps (alignment, the float centers in double) must not be
    // uninitialized memory (compute-sanitizer initcheck)
    GK_CHECK(cudaMemsetAsync(D->ws, 0, L.pack, D->stream), "clearing the fit workspace");
    D->ws_bytes = L.total;
  }
  char *b = (char *)D->ws;
  w.st = (State *)(b + L.st);
  w.cen_d = (double *)(b + L.cen_d);
  w.cen_f = D->single ? (float *)(b + L.cen_f) : nullptr;
  w.acc = (u64 *)(b + L.acc);
  w.wacc = (u64 *)(b + L.wacc);
  w.counts = (unsigned int *)(b + L.counts);
  w.wsum = (u64 *)(b + L.wsum);
  w.wcnt = (unsigned int *)(b + L.wcnt);
  w.wmax = (unsigned int *)(b + L.wmax);
  w.scale = (int *)(b + L.scale);
  w.pack = L.pack;
  return GK_CUDA_OK;
}

cudaError_t upload_centers(const gk_cuda_data *D, const double *centers, int k, const Workspace &w,
                           cudaStream_t s) {
  const int d = D->d;
  const size_t kd = (size_t)k * d;
  std::vector<double> c0(kd);
  for (int j = 0; j < d; ++j)
    for (int c = 0; c < k; ++c) c0[c + (size_t)k * j] = centers[c + (size_t)k * j] - D->shift[j];
  cudaError_t e = cudaMemcpyAsync(w.cen_d, c0.data(), kd * sizeof(double), cudaMemcpyHostToDevice, s);
  // (the copy reads pageable memory: it has completed when cudaMemcpyAsync returns)
  if (e == cudaSuccess && D->single) e = launch_to_float(w.cen_d, w.cen_f, (long long)kd, s);
  return e;
}

// (a rough cost model)
int batch_size(const gk_cuda_data *D, int k, int max_iter) {
  double work = (double)D->n * k * std::max(D->d, 1) * (D->single ? 1.0 : 3.0);
  double ms = work / 2e10 + 0.005;
  int b = (int)std::max(1.0, std::min(64.0, 20.0 / ms));
  return std::min(b, max_iter);
}

int start_fit(gk_cuda_data *D, int k, int max_iter, const double *centers, const int *scale, Fit &f, char *err,
              size_t errlen) {
  f.D = D;
  f.k = k;
  f.max_iter = max_iter;
  f.s = D->stream;
  D->ord_used = 0;
  D->sums_iters = D->sums_added = 0;
  int st = ensure_workspace(D, k, f.w, err, errlen);
  if (st != GK_CUDA_OK) return st;
  f.scale = D->d_scale;
  if (scale) {  // (a copy from pageable memory: done when the call returns)
    GK_CHECK(cudaMemcpyAsync(f.w.scale, scale, D->d * sizeof(int), cudaMemcpyHostToDevice, f.s), "copying scales");
    f.scale = f.w.scale;
  }
  GK_CHECK(upload_centers(D, centers, k, f.w, f.s), "copying centers");
  GK_CHECK(cudaMemsetAsync(D->labels, 0xff, (size_t)D->n * sizeof(int), f.s), "initialising labels");
  GK_CHECK(f.clear_sums(), "clearing sums");
  if (D->weighted) GK_CHECK(cudaMemsetAsync(f.w.wsum, 0, 2 * (size_t)k * sizeof(u64), f.s), "clearing counts");
  GK_CHECK(cudaMemsetAsync(f.w.st, 0, sizeof(State), f.s), "clearing the state");
  GK_CHECK(cudaEventRecord(D->ev0, f.s), "recording an event");
  return GK_CUDA_OK;
}

int plan_fit(gk_cuda_data *D, int k, Fit &f, char *err, size_t errlen) {
  GK_CHECK(prepare_assign(D, k, f.s), "preparing the assignment");
  GK_CHECK(plan_assign(D, k, !D->weighted, f.plan), "planning the assignment");
  GK_CHECK(plan_update(D, k, f.plan), "planning the update");
  if (D->weighted) GK_CHECK(plan_weighted(D, k, f.plan), "planning the weighted update");
  GK_CHECK(prepare_dfilter(D, k, f.plan, f.df, f.s), "preparing the filter");
  return GK_CUDA_OK;
}

int begin_fit(gk_cuda_data *D, int k, int max_iter, const double *centers, const int *scale, Fit &f, char *err,
              size_t errlen) {
  const int st = start_fit(D, k, max_iter, centers, scale, f, err, errlen);
  return st != GK_CUDA_OK ? st : plan_fit(D, k, f, err, errlen);
}

}  // namespace gk

namespace {

struct Stream {
  cudaStream_t s = nullptr;
  ~Stream() { if (s) cudaStreamDestroy(s); }
};
struct Graph {
  cudaGraph_t g = nullptr;
  ~Graph() { if (g) cudaGraphDestroy(g); }
};

// Captures iters iterations (on a private stream, so the fit's stream may
// still be running the first batch) and instantiates them into *x.
cudaError_t build_graph(Fit f, int iters, cudaGraphExec_t *x) {
  Stream cs;
  cudaError_t e = cudaStreamCreateWithFlags(&cs.s, cudaStreamNonBlocking);
  if (e != cudaSuccess) return e;
  f.s = cs.s;
  e = cudaStreamBeginCapture(f.s, cudaStreamCaptureModeThreadLocal);
  if (e != cudaSuccess) return e;
  cudaError_t e1 = cudaSuccess;
  for (int b = 0; b < iters && e1 == cudaSuccess; ++b) e1 = f.iteration();
  Graph g;
  cudaError_t e2 = cudaStreamEndCapture(f.s, &g.g);
  if (e1 != cudaSuccess) return e1;
  if (e2 != cudaSuccess) return e2;
  return cudaGraphInstantiate(x, g.g, 0);
}

// Which assignment kernels a fit's graphs run (their key, beside the shape):
// the filter's mode, whether single precision runs on packed tiles, and
// whether the small-d kernel runs on the grid of cells or on ordered rows
// (and whether it carries its sums and runs the update itself).
int graph_variant(const Fit &f) {
  return (f.df.on ? (f.df.tc1 ? 2 : 1) : 0) + (f.plan.tc_x ? 4 : 0) + (f.df.pair ? 8 : 0) + (f.df.ccap ? 16 : 0) +
         (f.df.top2 ? 32 : 0) + (f.plan.gbuf ? 64 : 0) + (f.plan.delta ? 128 : 0) + (f.plan.ordered ? 256 : 0) +
         (f.plan.ordered && f.plan.ord_carry ? 512 : 0) + (f.plan.ordered && f.plan.ord_fused ? 1024 : 0);
}

// The graphs of a fit of max_iter iterations in batches of bsz: [0] bsz
// iterations, [1] the remainder max_iter % bsz (if any).
cudaError_t build_graphs(gk_cuda_data *D, const Fit &f, int bsz, int max_iter) {
  drop_graphs(D);
  cudaError_t e = build_graph(f, bsz, &D->gx[0]);
  if (e == cudaSuccess && max_iter % bsz) e = build_graph(f, max_iter % bsz, &D->gx[1]);
  if (e != cudaSuccess) {
    drop_graphs(D);
    return e;
  }
  D->gx_iters[0] = bsz;
  D->gx_iters[1] = max_iter % bsz;
  D->gx_k = f.k;
  D->gx_max_iter = max_iter;
  D->gx_bsz = bsz;
  D->gx_ws = D->ws;
  D->gx_df = graph_variant(f);
  return cudaSuccess;
}

bool have_graphs(const gk_cuda_data *D, int k, int max_iter, int bsz, int df) {
  return D->gx[0] && D->gx_k == k && D->gx_max_iter == max_iter && D->gx_bsz == bsz && D->gx_ws == D->ws &&
         D->gx_df == df && (max_iter % bsz == 0 || D->gx[1]);
}


int interrupted(char *err, size_t errlen) {
  set_msg(err, errlen, "interrupted");
  return GK_CUDA_INTERRUPTED;
}

// The loop shared by every strategy: launch(b, done) enqueues b iterations
// (done were launched before; b = size() at most); after each batch the host
// reads the state into *hs, calls after(iterations launched) (nonzero: stop
// with that status) and polls for an interrupt; it stops once the fit has
// converged or max_iter iterations were launched.  read_last() false (asked
// once the last batch, max_iter reached, is launched): that batch is left
// running, for a caller that neither reports nor reads *hs afterwards:
// finish() queues behind it at once instead of after a round trip through
// the host (problem A: 0.0094 -> 0.0080 ms an iteration in one run on an
// H100, 2026-11-26).
template <typename Size, typename Launch, typename After, typename ReadLast>
int run_batches(const Fit &f, Size size, const gk_cuda_callbacks *cb, State *hs, Launch launch, After after,
                ReadLast read_last, char *err, size_t errlen) {
  // an interrupt that came before the first batch (a fit of one batch,
  // left running, would otherwise never poll)
  if (cb && cb->interrupt && cb->interrupt(cb->ctx)) return interrupted(err, errlen);
  int launched = 0;
  while (launched < f.max_iter) {
    const int b = std::min(size(), f.max_iter - launched);
    int rc = launch(b, launched);
    if (rc != GK_CUDA_OK) return rc;
    launched += b;
    if (launched >= f.max_iter && !read_last()) break;
    GK_CHECK(cudaMemcpyAsync(hs, f.w.st, sizeof(State), cudaMemcpyDeviceToHost, f.s), "reading the state");
    GK_CHECK(cudaStreamSynchronize(f.s), "iterations");
    rc = after(launched);
    if (rc != GK_CUDA_OK) return rc;
    if (cb && cb->interrupt && cb->interrupt(cb->ctx)) return interrupted(err, errlen);
    if (hs->flag) break;
  }
  return GK_CUDA_OK;
}

int no_report(int) { return GK_CUDA_OK; }

// Traced: one iteration per batch with its within-SS, reported to the caller.
int run_traced(const Fit &f, const gk_cuda_callbacks *cb, State *hs, char *err, size_t errlen) {
  const int k = f.k;
  std::vector<u64> wh(2 * (size_t)k);
  std::vector<unsigned int> wm(k);
  auto launch = [&](int, int) -> int {
    GK_CHECK(f.assign_and_sum(), "assignment step");
    GK_CHECK(f.withinss(), "within-SS");
    GK_CHECK(f.finalize(), "update step");
    GK_CHECK(cudaMemcpyAsync(wh.data(), f.w.wacc, 2 * (size_t)k * sizeof(u64), cudaMemcpyDeviceToHost, f.s),
             "reading within-SS");
    GK_CHECK(cudaMemcpyAsync(wm.data(), f.w.wmax, (size_t)k * sizeof(unsigned int), cudaMemcpyDeviceToHost, f.s),
             "reading within-SS");
    return GK_CUDA_OK;
  };
  auto report = [&](int it) -> int {
    double tot = 0;
    for (int c = 0; c < k; ++c)
      tot += f.D->weighted ? weighted_wss_value(f.D, wh[2 * c], wh[2 * c + 1], wm[c])
                           : from_fixed(wh[2 * c], wh[2 * c + 1], wss_scale(wm[c]));
    if (cb->on_iteration(cb->ctx, it, (int64_t)hs->last_changed, tot)) return interrupted(err, errlen);
    return GK_CUDA_OK;
  };
  return run_batches(f, [] { return 1; }, cb, hs, launch, report, [] { return true; }, err, errlen);
}

// Persistent: each batch is one cooperative launch.
int run_persistent(const Fit &f, const PersistentPlan &pp, const gk_cuda_callbacks *cb, State *hs, char *err,
                   size_t errlen) {
  void *cen = f.D->single ? (void *)f.w.cen_f : (void *)f.w.cen_d;
  auto launch = [&](int b, int) -> int {
    GK_CHECK(launch_persistent(f.D, pp, cen, f.w.cen_d, f.k, f.D->labels, f.w.st, f.max_iter, b, f.w.acc,
                               f.w.counts, f.s),
             "launching iterations");
    return GK_CUDA_OK;
  };
  const int bsz = batch_size(f.D, f.k, f.max_iter);
  return run_batches(f, [bsz] { return bsz; }, cb, hs, launch, no_report, [] { return false; }, err, errlen);
}

// Graph: the first batch is launched kernel by kernel (no capture cost
// before the GPU starts); while it runs, the graphs of the later batches are
// captured (and kept in the handle for later fits of this shape).  Once an
// iteration changes few labels, bounded iterations take over (bounds.cu)
// and may give way to plain ones again, as BoundsPolicy (detail/fit.hpp)
// says.
// *plain: no iteration was bounded and the last batch was left running (the
// fit's profile, one for each iteration run, then comes from finish()'s
// copy of the state).
int run_graphs(gk_cuda_data *D, const Fit &f, const gk_cuda_callbacks *cb, State *hs, bool *plain, char *err,
               size_t errlen) {
  // (bounds from the second iteration on: plain batches of one iteration)
  const int bsz = D->opts.bounds == 2 ? 1 : batch_size(D, f.k, f.max_iter);
  const double n = (double)D->n;
  bool have = have_graphs(D, f.k, f.max_iter, bsz, graph_variant(f));
  // (rows ordered in space: plain iterations throughout, faster there than
  // bounded ones, which read x and the labels in row order)
  BoundsSwitch sw(BoundsPolicy(D, f), n, f.max_iter, !D->weighted && !f.plan.ordered && bounds_wanted(D, f.k));
  BoundsBufs bb;
  auto launch = [&](int b, int done) -> int {
    if (sw.bounded()) {
      for (int it = 0; it < b; ++it) {
        const bool first = sw.launched(done + it, b);
        GK_CHECK(launch_bounds_assign(D, f.plan, f.k, f.w, bb, first, f.max_iter, f.scale, f.s), "bounded iterations");
        GK_CHECK(launch_bounds_update(D, f.plan, f.k, f.w, bb, f.w.acc, f.w.counts, f.max_iter, f.scale, f.s),
                 "bounded iterations");
      }
      return GK_CUDA_OK;
    }
    // (a graph's kernels read the ordered copy: the first iteration makes it)
    if (have && !(f.plan.ordered && D->ord_state == 2)) {
      GK_CHECK(f.labels_unset(), "initialising labels");
      // a batch of fewer than bsz iterations after bounded ones may match no
      // graph: the full one then runs, its extra iterations exit at once
      // (they see max_iter reached)
      const bool rest = b != bsz && D->gx[1] && D->gx_iters[1] == b;
      GK_CHECK(cudaGraphLaunch(D->gx[rest ? 1 : 0], f.s), "launching iterations");
      return GK_CUDA_OK;
    }
    for (int it = 0; it < b; ++it) GK_CHECK(f.iteration(), "launching iterations");
    if (done + b < f.max_iter) {
      GK_CHECK(build_graphs(D, f, bsz, f.max_iter), "capturing the iteration graph");
      have = true;
    }
    return GK_CUDA_OK;
  };
  auto after = [&](int) -> int {
    if (hs->flag) return GK_CUDA_OK;
    switch (sw.next((double)hs->last_changed, (double)hs->active_sum)) {
      case BoundsSwitch::Move::kEnter:
        if (!sw.has_buffers()) {
          if (!bounds_buffers(D, f.k, f.s, bb)) {
            sw.refuse();
            return GK_CUDA_OK;
          }
        }
        sw.enter();
        GK_CHECK(f.sums_entering_bounds(), "clearing sums");
        return GK_CUDA_OK;
      case BoundsSwitch::Move::kLeave:
        sw.leave();
        GK_CHECK(f.sums_leaving_bounds(), "back to plain iterations");
        return GK_CUDA_OK;
      case BoundsSwitch::Move::kStay:
        if (sw.bounded()) GK_CHECK(cudaMemsetAsync(&f.w.st->active_sum, 0, sizeof(u64), f.s), "clearing a counter");
        return GK_CUDA_OK;
    }
    return GK_CUDA_OK;
  };
  // (the bounded iterations' counts are read after the last batch; plain
  // ones need nothing of it: problem B, 10 iterations in one batch, saves a
  // round trip through the host before the within-SS)
  *plain = false;
  auto read_last = [&] { return sw.any_bounded(f.max_iter); };
  const int st = run_batches(f, [&] { return sw.batch(bsz); }, cb, hs, launch, after, read_last, err, errlen);
  if (st != GK_CUDA_OK) return st;
  if (!read_last()) {
    *plain = true;
    return GK_CUDA_OK;
  }
  // the share of points computed in each iteration run
  const int done = hs->iter_done, iters = std::min<int>(done, kBoundsHist);
  std::vector<u64> h;
  if (sw.any_bounded(iters)) {
    h.resize(iters);
    GK_CHECK(cudaMemcpyAsync(h.data(), bb.hist, iters * sizeof(u64), cudaMemcpyDeviceToHost, f.s), "reading counts");
    GK_CHECK(cudaStreamSynchronize(f.s), "reading counts");
  }
  D->profile = sw.profile(done, h);
  return GK_CUDA_OK;
}

// Final within-SS, 1-based labels, then the results to the host: the packed
// small ones in one copy, then the labels.
// plain_profile: the fit's profile is one for each iteration run
// (run_graphs' *plain).
int finish(gk_cuda_data *D, const Fit &f, bool plain_profile, double *centers, int *cluster, int *size,
           double *withinss, gk_cuda_fit_info *info, char *err, size_t errlen) {
  const long long n = D->n;
  const int k = f.k, d = D->d;
  GK_CHECK(f.withinss(), "within-SS");
  GK_CHECK(cudaEventRecord(D->ev1, f.s), "recording an event");
  if (cluster) GK_CHECK(launch_plus_one(D->labels, n, f.s), "1-based labels");
  // (the download's time starts once the device has computed what it copies)
  GK_CHECK(cudaEventSynchronize(D->ev1), "within-SS");
  auto t0 = std::chrono::steady_clock::now();
  std::vector<unsigned char> pk(f.w.pack);
  GK_CHECK(cudaMemcpyAsync(pk.data(), D->ws, f.w.pack, cudaMemcpyDeviceToHost, f.s), "copying results");
  unsigned long long dft[3] = {0, 0, 0};
  if (f.df.on)
    GK_CHECK(cudaMemcpyAsync(dft, f.df.tot, sizeof dft, cudaMemcpyDeviceToHost, f.s), "copying the filter's counts");
  // the labels into the caller's memory through pinned buffers (a pageable
  // copy crawled; pinning the caller's memory for each fit was slower still:
  // H100, tools/cuda-dev/LOG.md v9)
  if (cluster) {
    const int st = staged_download(D, D->labels, cluster, n, 0, f.s, err, errlen);
    if (st != GK_CUDA_OK) return st;
  }
  GK_CHECK(cudaStreamSynchronize(f.s), "copying results");
  auto t1 = std::chrono::steady_clock::now();
  D->df_exact = (long long)dft[0];
  D->df_iters = (long long)dft[1];
  D->df_every = (long long)dft[2];
  float ms = 0;
  GK_CHECK(cudaEventElapsedTime(&ms, D->ev0, D->ev1), "timing");

  const char *base = (const char *)D->ws;
  State hs;
  memcpy(&hs, pk.data() + ((const char *)f.w.st - base), sizeof(State));
  if (plain_profile) D->profile.assign(hs.iter_done, 1.0);
  if (hs.df_points) {  // the small-d filter's counts (each of its iterations ran all n points)
    D->df_exact = D->df_every = (long long)hs.df_exact;  // (every center's exact distance, small_dfilter.cuh)
    D->df_iters = (long long)(hs.df_points / (u64)n);
    D->df_used = 1;
  }
  D->grid_seen = (long long)hs.grid_seen;
  D->grid_served = (long long)hs.grid_served;
  D->sums_iters = (long long)hs.sums_iters;
  D->sums_added = (long long)hs.sums_added;
  const double *cres = (const double *)(pk.data() + ((const char *)f.w.cen_d - base));
  const u64 *whp = (const u64 *)(pk.data() + ((const char *)f.w.wacc - base));
  const unsigned int *sz = (const unsigned int *)(pk.data() + ((const char *)f.w.wcnt - base));
  const unsigned int *wmp = (const unsigned int *)(pk.data() + ((const char *)f.w.wmax - base));
  for (int j = 0; j < d; ++j)
    for (int c = 0; c < k; ++c) centers[c + (size_t)k * j] = cres[c + (size_t)k * j] + D->shift[j];
  for (int c = 0; c < k; ++c) {
    if (size) size[c] = (int)sz[c];
    if (withinss)
      withinss[c] = D->weighted ? weighted_wss_value(D, whp[2 * c], whp[2 * c + 1], wmp[c])
                                : from_fixed(whp[2 * c], whp[2 * c + 1], wss_scale(wmp[c]));
  }
  if (info) {
    info->iter = hs.flag ? hs.conv_iter : f.max_iter + 1;
    info->ms_compute = ms;
    info->ms_download = std::chrono::duration<double, std::milli>(t1 - t0).count();
  }
  return GK_CUDA_OK;
}

}  // namespace

extern "C" int gk_cuda_lloyd(gk_cuda_data *D, int k, int max_iter, double *centers, const gk_cuda_callbacks *cb,
                             int *cluster, int *size, double *withinss, gk_cuda_fit_info *info, char *err,
                             size_t errlen) {
  if (int rs = refuse_streamed(D, "gk_cuda_lloyd", err, errlen)) return rs;
  if (!D || !centers || k < 1 || max_iter < 1) {
    set_msg(err, errlen, "gk_cuda_lloyd: invalid arguments (k = %d, max_iter = %d)", k, max_iter);
    return GK_CUDA_INVALID;
  }
  if (info) memset(info, 0, sizeof(*info));
  GK_CHECK(cudaSetDevice(D->device), "selecting the CUDA device");
  Fit f;
  int st = start_fit(D, k, max_iter, centers, nullptr, f, err, errlen);
  if (st != GK_CUDA_OK) return st;
  const bool traced = cb && cb->on_iteration;
  // The rows' sort first where the fit will order them whatever it plans:
  // cub's launches keep the host busy about as long as the sort keeps the
  // device, and the plans' host work then runs while the device sorts
  // instead of before (B on an H100, 2026-12-07: the device sat idle for
  // the plans' 8-13 us first).
  if (!traced && ordered_early(D, k, max_iter)) GK_CHECK(prepare_ordered(D, f.s), "ordering the rows");
  st = plan_fit(D, k, f, err, errlen);
  if (st != GK_CUDA_OK) return st;

  State hs;
  memset(&hs, 0, sizeof(hs));
  D->profile.clear();
  bool plain = false;
  if (traced) {
    GK_CHECK(plan_delta(D, f.plan, f.s), "planning the sums");
    st = run_traced(f, cb, &hs, err, errlen);
  } else {
    PersistentPlan pp;
    if (D->opts.bounds != 2 && !D->weighted) GK_CHECK(plan_persistent(D, k, pp), "planning the persistent kernel");
    if (!pp.ok) GK_CHECK(plan_delta(D, f.plan, f.s), "planning the sums");
    if (!pp.ok && ordered_wanted(D, k, max_iter, f.plan)) {  // rows ordered in space (ordered.cu)
      GK_CHECK(prepare_ordered(D, f.s), "ordering the rows");
      GK_CHECK(plan_ordered(D, k, f.plan), "planning the assignment");
      f.ord_first = f.plan.ordered;  // (its labels start unset: the first iteration's kernel knows)
      D->ord_used = f.plan.ordered ? 1 : 0;
    }
    st = pp.ok ? run_persistent(f, pp, cb, &hs, err, errlen) : run_graphs(D, f, cb, &hs, &plain, err, errlen);
    // (ordered rows: finish's within-SS puts the labels back in row order)
  }
  if (st != GK_CUDA_OK) return st;
  return finish(D, f, plain, centers, cluster, size, withinss, info, err, errlen);
}

extern "C" int gk_cuda_fit_profile(gk_cuda_data *D, double *out, int max, int *len, char *err, size_t errlen) {
  if (!D || !len || (max > 0 && !out)) {
    set_msg(err, errlen, "gk_cuda_fit_profile: invalid arguments");
    return GK_CUDA_INVALID;
  }
  *len = (int)D->profile.size();
  for (int i = 0; i < max && i < *len; ++i) out[i] = D->profile[i];
  return GK_CUDA_OK;
}
