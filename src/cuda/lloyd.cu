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
struct Graph {
  cudaGraph_t g = nullptr;
  ~Graph() { if (g) cudaGraphDestroy(g); }
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

void drop_graphs(gk_cuda_data *D) {
  for (int i = 0; i < 2; ++i) {
    if (D->gx[i]) cudaGraphExecDestroy(D->gx[i]);
    D->gx[i] = nullptr;
    D->gx_iters[i] = 0;
  }
  D->gx_k = D->gx_max_iter = D->gx_bsz = 0;
  D->gx_ws = nullptr;
}

// The graphs a fit of max_iter iterations in batches of bsz launches: [0] bsz
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
  return cudaSuccess;
}

size_t al256(size_t b) { return (b + 255) / 256 * 256; }

// Fit workspace layout (offsets into D->ws); [0, pack) is downloaded at the end.
struct Layout {
  size_t st, cen_d, wacc, wcnt, wmax, pack, acc, counts, cen_f, total;
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
    cen_f = counts + al256(2 * (size_t)k * sizeof(unsigned int));
    total = cen_f + al256(kd * sizeof(float));
  }
};

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
  cudaStream_t s = D->stream;

  // workspace: grown on demand, kept in the handle (labels live there already)
  const Layout L(k, d);
  if (D->ws_bytes < L.total) {
    drop_graphs(D);
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
    D->ws_bytes = L.total;
  }
  char *w = (char *)D->ws;
  State *st = (State *)(w + L.st);
  double *cen_d = (double *)(w + L.cen_d);
  float *cen_f = D->single ? (float *)(w + L.cen_f) : nullptr;
  u64 *acc = (u64 *)(w + L.acc), *wacc = (u64 *)(w + L.wacc);
  unsigned int *counts = (unsigned int *)(w + L.counts);
  unsigned int *wcnt = (unsigned int *)(w + L.wcnt), *wmaxb = (unsigned int *)(w + L.wmax);
  int *labels = D->labels;

  // initial centers in stored coordinates
  std::vector<double> c0(kd);
  for (int j = 0; j < d; ++j)
    for (int c = 0; c < k; ++c) c0[c + (size_t)k * j] = centers[c + (size_t)k * j] - D->shift[j];

  GK_CHECK(cudaMemcpyAsync(cen_d, c0.data(), kd * sizeof(double), cudaMemcpyHostToDevice, s), "copying centers");
  if (D->single) GK_CHECK(launch_to_float(cen_d, cen_f, (long long)kd, s), "converting centers");
  GK_CHECK(cudaMemsetAsync(labels, 0xff, (size_t)n * sizeof(int), s), "initialising labels");
  GK_CHECK(cudaMemsetAsync(acc, 0, 2 * kd * sizeof(u64), s), "clearing sums");
  GK_CHECK(cudaMemsetAsync(counts, 0, 2 * (size_t)k * sizeof(unsigned int), s), "clearing counts");
  GK_CHECK(cudaMemsetAsync(st, 0, sizeof(State), s), "clearing the state");
  GK_CHECK(cudaEventRecord(D->ev0, s), "recording an event");

  Fit f;
  f.D = D;
  f.k = k;
  f.max_iter = max_iter;
  f.labels = labels;
  f.cen_d = cen_d;
  f.cen_f = cen_f;
  f.acc = acc;
  f.counts = counts;
  f.st = st;
  f.s = s;
  GK_CHECK(plan_assign(D, k, true, f.plan), "planning the assignment");
  GK_CHECK(plan_update(D, k, f.plan), "planning the update");

  const bool trace = cb && cb->on_iteration;
  PersistentPlan pp;
  if (!trace) GK_CHECK(plan_persistent(D, k, pp), "planning the persistent kernel");
  const int bsz = batch_size(D, k, max_iter);

  State hs;
  memset(&hs, 0, sizeof(hs));
  std::vector<u64> wh(2 * (size_t)k);
  std::vector<unsigned int> wm(k);
  if (trace) {
    for (int it = 0; it < max_iter; ++it) {
      GK_CHECK(f.assign_and_sum(), "assignment step");
      GK_CHECK(launch_withinss(D, f.plan, labels, cen_d, k, wmaxb, wacc, wcnt, s), "within-SS");
      GK_CHECK(f.finalize(), "update step");
      GK_CHECK(cudaMemcpyAsync(&hs, st, sizeof(State), cudaMemcpyDeviceToHost, s), "reading the state");
      GK_CHECK(cudaMemcpyAsync(wh.data(), wacc, 2 * (size_t)k * sizeof(u64), cudaMemcpyDeviceToHost, s), "reading within-SS");
      GK_CHECK(cudaMemcpyAsync(wm.data(), wmaxb, (size_t)k * sizeof(unsigned int), cudaMemcpyDeviceToHost, s), "reading within-SS");
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
    void *cen = D->single ? (void *)cen_f : (void *)cen_d;
    int launched = 0;
    while (launched < max_iter) {
      int b = std::min(bsz, max_iter - launched);
      GK_CHECK(launch_persistent(D, pp, cen, cen_d, k, labels, st, max_iter, b, acc, counts, s),
               "launching iterations");
      launched += b;
      GK_CHECK(cudaMemcpyAsync(&hs, st, sizeof(State), cudaMemcpyDeviceToHost, s), "reading the state");
      GK_CHECK(cudaStreamSynchronize(s), "iterations");
      if (cb && cb->interrupt && cb->interrupt(cb->ctx)) {
        set_msg(err, errlen, "interrupted");
        return GK_CUDA_INTERRUPTED;
      }
      if (hs.flag) break;
    }
  } else {
    // Batches of iterations: the first is launched directly (no capture cost
    // before the GPU starts); while it runs, the graphs of the later batches
    // are captured once (and kept in the handle for later fits of this shape).
    bool have = D->gx[0] && D->gx_k == k && D->gx_max_iter == max_iter && D->gx_bsz == bsz &&
                D->gx_ws == D->ws && (max_iter % bsz == 0 || D->gx[1]);
    int launched = 0;
    while (launched < max_iter) {
      const int b = std::min(bsz, max_iter - launched);
      if (have) {
        GK_CHECK(cudaGraphLaunch(D->gx[b == bsz ? 0 : 1], s), "launching iterations");
      } else {
        for (int it = 0; it < b; ++it) GK_CHECK(f.iteration(), "launching iterations");
      }
      launched += b;
      if (!have && launched < max_iter) {
        GK_CHECK(build_graphs(D, f, bsz, max_iter), "capturing the iteration graph");
        have = true;
      }
      GK_CHECK(cudaMemcpyAsync(&hs, st, sizeof(State), cudaMemcpyDeviceToHost, s), "reading the state");
      GK_CHECK(cudaStreamSynchronize(s), "iterations");
      if (cb && cb->interrupt && cb->interrupt(cb->ctx)) {
        set_msg(err, errlen, "interrupted");
        return GK_CUDA_INTERRUPTED;
      }
      if (hs.flag) break;
    }
  }
  // final within-SS with the final centers and labels
  GK_CHECK(launch_withinss(D, f.plan, labels, cen_d, k, wmaxb, wacc, wcnt, s), "within-SS");
  GK_CHECK(cudaEventRecord(D->ev1, s), "recording an event");
  if (cluster) GK_CHECK(launch_plus_one(labels, n, s), "1-based labels");

  // results: the packed small ones in one copy, then the labels
  auto t0 = std::chrono::steady_clock::now();
  std::vector<unsigned char> pk(L.pack);
  GK_CHECK(cudaMemcpyAsync(pk.data(), w, L.pack, cudaMemcpyDeviceToHost, s), "copying results");
  // labels into the caller's pageable memory: measured faster than pinning it
  // with cudaHostRegister for each fit (H100, NOTES v9)
  if (cluster)
    GK_CHECK(cudaMemcpyAsync(cluster, labels, (size_t)n * sizeof(int), cudaMemcpyDeviceToHost, s), "copying labels");
  GK_CHECK(cudaStreamSynchronize(s), "copying results");
  auto t1 = std::chrono::steady_clock::now();
  float ms = 0;
  GK_CHECK(cudaEventElapsedTime(&ms, D->ev0, D->ev1), "timing");

  memcpy(&hs, pk.data() + L.st, sizeof(State));
  const double *cres = (const double *)(pk.data() + L.cen_d);
  const u64 *whp = (const u64 *)(pk.data() + L.wacc);
  const unsigned int *sz = (const unsigned int *)(pk.data() + L.wcnt);
  const unsigned int *wmp = (const unsigned int *)(pk.data() + L.wmax);
  for (int j = 0; j < d; ++j)
    for (int c = 0; c < k; ++c) centers[c + (size_t)k * j] = cres[c + (size_t)k * j] + D->shift[j];
  for (int c = 0; c < k; ++c) {
    if (size) size[c] = (int)sz[c];
    if (withinss) withinss[c] = from_fixed(whp[2 * c], whp[2 * c + 1], wss_scale(wmp[c]));
  }
  if (info) {
    info->converged = hs.flag ? 1 : 0;
    info->iter = hs.flag ? hs.conv_iter : max_iter + 1;
    info->ms_compute = ms;
    info->ms_download = std::chrono::duration<double, std::milli>(t1 - t0).count();
  }
  return GK_CUDA_OK;
}
