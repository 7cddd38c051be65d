// lloyd.cu: gk_cuda_lloyd, the Lloyd loop.
//
// Per iteration, all on the device: assign (+ fused sums on the small-d path),
// accumulate (tiled path), finalize (new centers or convergence).  Labels,
// centers and the state (changed count, converged flag, iteration count) stay
// on the device.  Without a trace callback the iterations run in batches
// captured once in a CUDA graph; kernels of a batch exit at once when the fit
// has converged or reached max_iter, and the host reads the small state once
// per batch (and calls interrupt()).  With on_iteration the host syncs every
// iteration and also computes the iteration's total within-SS.
#include <algorithm>
#include <chrono>
#include <vector>

#include "detail/engine.hpp"

using namespace gk;

namespace {

struct Stream {
  cudaStream_t s = nullptr;
  ~Stream() { if (s) cudaStreamDestroy(s); }
};
struct Event {
  cudaEvent_t e = nullptr;
  ~Event() { if (e) cudaEventDestroy(e); }
};
struct Graph {
  cudaGraph_t g = nullptr;
  cudaGraphExec_t x = nullptr;
  int iters = 0;
  ~Graph() {
    if (x) cudaGraphExecDestroy(x);
    if (g) cudaGraphDestroy(g);
  }
};

struct Fit {
  const gk_cuda_data *D;
  Plan plan;
  int k, max_iter;
  int *labels;
  double *cen_d;
  float *cen_f;
  u64 *acc;
  unsigned int *counts;
  State *st;
  cudaStream_t s;

  cudaError_t assign_and_sum() const {
    const void *cen = D->single ? (const void *)cen_f : (const void *)cen_d;
    cudaError_t e = launch_assign(D, plan, cen, k, labels, st, max_iter, plan.path == 0, acc, counts, s);
    if (e != cudaSuccess || plan.path == 0) return e;
    return launch_accumulate(D, plan, labels, k, st, max_iter, acc, counts, s);
  }
  cudaError_t finalize() const {
    return launch_finalize(D, plan, k, st, max_iter, acc, counts, cen_d, D->single ? cen_f : nullptr, s);
  }
  cudaError_t iteration() const {
    cudaError_t e = assign_and_sum();
    return e != cudaSuccess ? e : finalize();
  }
};

cudaError_t build_graph(const Fit &f, int iters, Graph &g) {
  cudaError_t e = cudaStreamBeginCapture(f.s, cudaStreamCaptureModeThreadLocal);
  if (e != cudaSuccess) return e;
  cudaError_t e1 = cudaSuccess;
  for (int b = 0; b < iters && e1 == cudaSuccess; ++b) e1 = f.iteration();
  cudaError_t e2 = cudaStreamEndCapture(f.s, &g.g);
  if (e1 != cudaSuccess) return e1;
  if (e2 != cudaSuccess) return e2;
  g.iters = iters;
  return cudaGraphInstantiate(&g.x, g.g, 0);
}

// Batch size from a rough cost model: ~20 ms of device work per batch.
int batch_size(const gk_cuda_data *D, int k, int max_iter) {
  double work = (double)D->n * k * std::max(D->d, 1) * (D->single ? 1.0 : 3.0);
  double ms = work / 2e10 + 0.005;
  int b = (int)std::max(1.0, std::min(64.0, 20.0 / ms));
  return std::min(b, max_iter);
}

}  // namespace

extern "C" int gk_cuda_lloyd(gk_cuda_data *D, int k, double *centers, const gk_cuda_options *opts,
                             const gk_cuda_callbacks *cb, int *cluster, int *size,
                             double *withinss, gk_cuda_fit_info *info, char *err, size_t errlen) {
  if (!D || !centers || !opts || k < 1 || opts->max_iter < 1) {
    set_msg(err, errlen, "gk_cuda_lloyd: invalid arguments (k = %d, max_iter = %d)", k,
            opts ? opts->max_iter : 0);
    return GK_CUDA_INVALID;
  }
  if ((opts->single ? 1 : 0) != D->single) {
    set_msg(err, errlen, "gk_cuda_lloyd: the data were uploaded in %s precision but the fit asks for %s",
            D->single ? "single" : "double", opts->single ? "single" : "double");
    return GK_CUDA_INVALID;
  }
  if (info) memset(info, 0, sizeof(*info));
  const long long n = D->n;
  const int d = D->d;
  const int max_iter = opts->max_iter;
  const size_t kd = (size_t)k * d;
  GK_CHECK(cudaSetDevice(D->device), "selecting the CUDA device");

  size_t free_b = 0, total_b = 0;
  GK_CHECK(cudaMemGetInfo(&free_b, &total_b), "querying device memory");
  double need = (double)n * sizeof(int) + (double)kd * (8 + 4 + 16) + (double)k * 24 + 4096;
  if (need > (double)free_b) {
    set_msg(err, errlen, "the fit needs %.2f GiB on device %d (labels and centers) but only %.2f GiB is free",
            gib(need), D->device, gib((double)free_b));
    return GK_CUDA_OUT_OF_MEMORY;
  }

  DevBuf<int> labels;
  DevBuf<double> cen_d;
  DevBuf<float> cen_f;
  DevBuf<u64> acc, wacc;
  DevBuf<unsigned int> counts, wcnt;
  DevBuf<State> st;
  GK_CHECK(labels.alloc((size_t)n), "allocating labels");
  GK_CHECK(cen_d.alloc(kd), "allocating centers");
  if (D->single) GK_CHECK(cen_f.alloc(kd), "allocating centers");
  GK_CHECK(acc.alloc(2 * kd), "allocating centroid sums");
  GK_CHECK(counts.alloc(2 * (size_t)k), "allocating counts");  // 2k: persistent path's parity
  GK_CHECK(wacc.alloc(2 * (size_t)k), "allocating within-SS sums");
  GK_CHECK(wcnt.alloc(k), "allocating sizes");
  DevBuf<unsigned int> wmaxb;
  GK_CHECK(wmaxb.alloc(k), "allocating within-SS maxima");
  GK_CHECK(st.alloc(1), "allocating the state");

  Stream stream;
  GK_CHECK(cudaStreamCreateWithFlags(&stream.s, cudaStreamNonBlocking), "creating a stream");
  cudaStream_t s = stream.s;

  // initial centers in stored coordinates
  std::vector<double> c0(kd);
  for (int j = 0; j < d; ++j)
    for (int c = 0; c < k; ++c) c0[c + (size_t)k * j] = centers[c + (size_t)k * j] - D->shift[j];

  GK_CHECK(cudaMemcpyAsync(cen_d.p, c0.data(), kd * sizeof(double), cudaMemcpyHostToDevice, s), "copying centers");
  if (D->single) GK_CHECK(launch_to_float(cen_d.p, cen_f.p, (long long)kd, s), "converting centers");
  GK_CHECK(cudaMemsetAsync(labels.p, 0xff, (size_t)n * sizeof(int), s), "initialising labels");
  GK_CHECK(cudaMemsetAsync(acc.p, 0, acc.bytes(), s), "clearing sums");
  GK_CHECK(cudaMemsetAsync(counts.p, 0, counts.bytes(), s), "clearing counts");
  GK_CHECK(cudaMemsetAsync(st.p, 0, sizeof(State), s), "clearing the state");

  Fit f;
  f.D = D;
  f.k = k;
  f.max_iter = max_iter;
  f.labels = labels.p;
  f.cen_d = cen_d.p;
  f.cen_f = cen_f.p;
  f.acc = acc.p;
  f.counts = counts.p;
  f.st = st.p;
  f.s = s;
  GK_CHECK(plan_assign(D, k, true, f.plan), "planning the assignment");
  GK_CHECK(plan_update(D, k, f.plan), "planning the update");

  const bool trace = cb && cb->on_iteration;
  PersistentPlan pp;
  if (!trace) GK_CHECK(plan_persistent(D, k, pp), "planning the persistent kernel");
  Graph g_full, g_rest;
  int bsz = batch_size(D, k, max_iter), rest = 0;
  if (!trace && !pp.ok) {
    rest = max_iter % bsz;
    GK_CHECK(build_graph(f, bsz, g_full), "capturing the iteration graph");
    if (rest) GK_CHECK(build_graph(f, rest, g_rest), "capturing the iteration graph");
  }

  Event ev0, ev1;
  GK_CHECK(cudaEventCreate(&ev0.e), "creating events");
  GK_CHECK(cudaEventCreate(&ev1.e), "creating events");
  GK_CHECK(cudaEventRecord(ev0.e, s), "recording an event");

  State hs;
  memset(&hs, 0, sizeof(hs));
  std::vector<u64> wh(2 * (size_t)k);
  std::vector<unsigned int> wm(k);
  if (trace) {
    for (int it = 0; it < max_iter; ++it) {
      GK_CHECK(f.assign_and_sum(), "assignment step");
      GK_CHECK(launch_withinss(D, f.plan, labels.p, cen_d.p, k, wmaxb.p, wacc.p, wcnt.p, s), "within-SS");
      GK_CHECK(f.finalize(), "update step");
      GK_CHECK(cudaMemcpyAsync(&hs, st.p, sizeof(State), cudaMemcpyDeviceToHost, s), "reading the state");
      GK_CHECK(cudaMemcpyAsync(wh.data(), wacc.p, wacc.bytes(), cudaMemcpyDeviceToHost, s), "reading within-SS");
      GK_CHECK(cudaMemcpyAsync(wm.data(), wmaxb.p, wmaxb.bytes(), cudaMemcpyDeviceToHost, s), "reading within-SS");
      GK_CHECK(cudaStreamSynchronize(s), "iteration");
      double tot = 0;
      for (int c = 0; c < k; ++c) tot += from_fixed(wh[2 * c], wh[2 * c + 1], wss_scale(wm[c]));
      if (cb->on_iteration(cb->ctx, it + 1, (int64_t)hs.last_changed, tot)) {
        set_msg(err, errlen, "interrupted");
        return GK_CUDA_INTERRUPTED;
      }
      if (cb->interrupt && cb->interrupt(cb->ctx)) {
        set_msg(err, errlen, "interrupted");
        return GK_CUDA_INTERRUPTED;
      }
      if (hs.flag) break;
    }
  } else if (pp.ok) {
    void *cen = D->single ? (void *)cen_f.p : (void *)cen_d.p;
    int launched = 0;
    while (launched < max_iter) {
      int b = std::min(bsz, max_iter - launched);
      GK_CHECK(launch_persistent(D, pp, cen, cen_d.p, k, labels.p, st.p, max_iter, b, acc.p, counts.p, s),
               "launching iterations");
      launched += b;
      GK_CHECK(cudaMemcpyAsync(&hs, st.p, sizeof(State), cudaMemcpyDeviceToHost, s), "reading the state");
      GK_CHECK(cudaStreamSynchronize(s), "iterations");
      if (cb && cb->interrupt && cb->interrupt(cb->ctx)) {
        set_msg(err, errlen, "interrupted");
        return GK_CUDA_INTERRUPTED;
      }
      if (hs.flag) break;
    }
  } else {
    int launched = 0;
    while (launched < max_iter) {
      const Graph &g = (max_iter - launched >= bsz) ? g_full : g_rest;
      GK_CHECK(cudaGraphLaunch(g.x, s), "launching iterations");
      launched += g.iters;
      GK_CHECK(cudaMemcpyAsync(&hs, st.p, sizeof(State), cudaMemcpyDeviceToHost, s), "reading the state");
      GK_CHECK(cudaStreamSynchronize(s), "iterations");
      if (cb && cb->interrupt && cb->interrupt(cb->ctx)) {
        set_msg(err, errlen, "interrupted");
        return GK_CUDA_INTERRUPTED;
      }
      if (hs.flag) break;
    }
  }
  // final within-SS with the final centers and labels
  GK_CHECK(launch_withinss(D, f.plan, labels.p, cen_d.p, k, wmaxb.p, wacc.p, wcnt.p, s), "within-SS");
  GK_CHECK(cudaEventRecord(ev1.e, s), "recording an event");
  GK_CHECK(cudaEventSynchronize(ev1.e), "iterations");
  float ms = 0;
  GK_CHECK(cudaEventElapsedTime(&ms, ev0.e, ev1.e), "timing");

  // results
  auto t0 = std::chrono::steady_clock::now();
  std::vector<double> cres(kd);
  std::vector<unsigned int> sz(k);
  GK_CHECK(cudaMemcpyAsync(&hs, st.p, sizeof(State), cudaMemcpyDeviceToHost, s), "reading the state");
  GK_CHECK(cudaMemcpyAsync(cres.data(), cen_d.p, kd * sizeof(double), cudaMemcpyDeviceToHost, s), "copying centers");
  GK_CHECK(cudaMemcpyAsync(wh.data(), wacc.p, wacc.bytes(), cudaMemcpyDeviceToHost, s), "copying within-SS");
  GK_CHECK(cudaMemcpyAsync(sz.data(), wcnt.p, wcnt.bytes(), cudaMemcpyDeviceToHost, s), "copying sizes");
  GK_CHECK(cudaMemcpyAsync(wm.data(), wmaxb.p, wmaxb.bytes(), cudaMemcpyDeviceToHost, s), "copying within-SS");
  if (cluster)
    GK_CHECK(cudaMemcpyAsync(cluster, labels.p, (size_t)n * sizeof(int), cudaMemcpyDeviceToHost, s), "copying labels");
  GK_CHECK(cudaStreamSynchronize(s), "copying results");
  auto t1 = std::chrono::steady_clock::now();

  if (cluster)
    for (long long i = 0; i < n; ++i) cluster[i] += 1;
  for (int j = 0; j < d; ++j)
    for (int c = 0; c < k; ++c) centers[c + (size_t)k * j] = cres[c + (size_t)k * j] + D->shift[j];
  for (int c = 0; c < k; ++c) {
    if (size) size[c] = (int)sz[c];
    if (withinss) withinss[c] = from_fixed(wh[2 * c], wh[2 * c + 1], wss_scale(wm[c]));
  }
  if (info) {
    info->converged = hs.flag ? 1 : 0;
    info->iter = hs.flag ? hs.conv_iter : max_iter + 1;
    info->ms_compute = ms;
    info->ms_download = std::chrono::duration<double, std::milli>(t1 - t0).count();
  }
  return GK_CUDA_OK;
}
