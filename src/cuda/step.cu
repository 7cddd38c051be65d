// step.cu: one Lloyd step at a time with exact partial results, for drivers
// that run one fit over several devices, and Lloyd on streamed x
// (gk_cuda_step, gk_cuda_step_withinss, gk_cuda_labels).  The kernels are
// those of a fit (assign.cu, update.cu), run over the chunks of streamed x
// (for_each_chunk; resident x is one chunk); only the scales of the sums come
// from the caller, and nothing is finalised on the device.
#include <vector>

#include "detail/engine.hpp"

using namespace gk;

namespace {

// Centers given in stored coordinates into the workspace (and its float copy).
cudaError_t put_centers(const gk_cuda_data *D, const double *centers, int k, const Workspace &w) {
  const size_t kd = (size_t)k * D->d;
  cudaError_t e = cudaMemcpyAsync(w.cen_d, centers, kd * sizeof(double), cudaMemcpyHostToDevice, D->stream);
  if (e == cudaSuccess && D->single) e = launch_to_float(w.cen_d, w.cen_f, (long long)kd, D->stream);
  return e;
}

int check_args(const gk_cuda_data *D, int k, const double *centers, const char *what, char *err, size_t errlen) {
  if (!D || !centers || k < 1) {
    set_msg(err, errlen, "%s: invalid arguments (k = %d)", what, k);
    return GK_CUDA_INVALID;
  }
  return GK_CUDA_OK;
}

}  // namespace

extern "C" int gk_cuda_step(gk_cuda_data *D, int k, const double *centers, const int *scale, int first,
                            uint64_t *sums, int64_t *counts, int64_t *changed, char *err, size_t errlen) {
  int st = check_args(D, k, centers, "gk_cuda_step", err, errlen);
  if (st != GK_CUDA_OK) return st;
  if (!scale || !sums || !counts || !changed) {
    set_msg(err, errlen, "gk_cuda_step: NULL output");
    return GK_CUDA_INVALID;
  }
  GK_CHECK(cudaSetDevice(D->device), "selecting the CUDA device");
  const int d = D->d;
  const size_t kd = (size_t)k * d;
  cudaStream_t s = D->stream;
  Workspace w;
  st = ensure_workspace(D, k, w, err, errlen);
  if (st != GK_CUDA_OK) return st;
  // (in the workspace: an allocation per step would synchronise the device)
  GK_CHECK(cudaMemcpyAsync(w.scale, scale, d * sizeof(int), cudaMemcpyHostToDevice, s), "copying scales");
  GK_CHECK(put_centers(D, centers, k, w), "copying centers");
  if (first) GK_CHECK(cudaMemsetAsync(D->labels, 0xff, (size_t)D->n * sizeof(int), s), "initialising labels");
  GK_CHECK(cudaMemsetAsync(w.acc, 0, 2 * kd * sizeof(u64), s), "clearing sums");
  GK_CHECK(cudaMemsetAsync(w.counts, 0, (size_t)k * sizeof(unsigned int), s), "clearing counts");
  GK_CHECK(cudaMemsetAsync(w.st, 0, sizeof(State), s), "clearing the state");
  const void *cen = D->single ? (const void *)w.cen_f : (const void *)w.cen_d;
  // resident x in double precision: the certified filter where the fit's
  // loop would run it (the exact kernel's labels, bit for bit)
  Plan full;
  DFilter df;
  if (!D->src) {
    GK_CHECK(prepare_assign(D, k, s), "preparing the assignment");
    GK_CHECK(plan_assign(D, k, true, full), "planning the assignment");
    GK_CHECK(plan_update(D, k, full), "planning the update");
    GK_CHECK(prepare_dfilter(D, k, full, df, s), "preparing the filter");
  }
  if (df.on) {
    GK_CHECK(launch_assign_df(D, full, df, w.cen_d, k, D->labels, w.st, 1, s), "assignment step");
    GK_CHECK(launch_accumulate(D, full, D->labels, k, w.st, 1, w.acc, w.counts, w.scale, s), "cluster sums");
  } else {
    st = for_each_chunk(D, D->labels, [&](const gk_cuda_data &V) -> cudaError_t {
      Plan plan;
      cudaError_t e = plan_assign(&V, k, true, plan);
      if (e == cudaSuccess) e = plan_update(&V, k, plan);
      if (e == cudaSuccess)
        e = launch_assign(&V, plan, cen, k, V.labels, w.st, 1, plan.path == 0, w.acc, w.counts, w.scale, s);
      if (e == cudaSuccess && plan.path == 1)
        e = launch_accumulate(&V, plan, V.labels, k, w.st, 1, w.acc, w.counts, w.scale, s);
      return e;
    }, err, errlen);
    if (st != GK_CUDA_OK) return st;
  }
  std::vector<unsigned int> cnt(k);
  State hs;
  GK_CHECK(cudaMemcpyAsync(sums, w.acc, 2 * kd * sizeof(u64), cudaMemcpyDeviceToHost, s), "copying sums");
  GK_CHECK(cudaMemcpyAsync(cnt.data(), w.counts, (size_t)k * sizeof(unsigned int), cudaMemcpyDeviceToHost, s),
           "copying counts");
  GK_CHECK(cudaMemcpyAsync(&hs, w.st, sizeof(State), cudaMemcpyDeviceToHost, s), "copying the state");
  GK_CHECK(cudaStreamSynchronize(s), "assignment step");
  for (int c = 0; c < k; ++c) counts[c] = (int64_t)cnt[c];
  *changed = (int64_t)hs.changed;
  return GK_CUDA_OK;
}

extern "C" int gk_cuda_step_withinss(gk_cuda_data *D, int k, const double *centers, int pass, uint32_t *maxterm,
                                     uint64_t *sums, char *err, size_t errlen) {
  int st = check_args(D, k, centers, "gk_cuda_step_withinss", err, errlen);
  if (st != GK_CUDA_OK) return st;
  if (!maxterm || (pass != 1 && pass != 2) || (pass == 2 && !sums)) {
    set_msg(err, errlen, "gk_cuda_step_withinss: invalid arguments");
    return GK_CUDA_INVALID;
  }
  GK_CHECK(cudaSetDevice(D->device), "selecting the CUDA device");
  cudaStream_t s = D->stream;
  Workspace w;
  st = ensure_workspace(D, k, w, err, errlen);
  if (st != GK_CUDA_OK) return st;
  GK_CHECK(put_centers(D, centers, k, w), "copying centers");
  static_assert(sizeof(uint32_t) == sizeof(unsigned int), "32-bit maxima");
  // the outputs cleared once, then every chunk's terms added to them
  if (pass == 1) {
    GK_CHECK(cudaMemsetAsync(w.wmax, 0, (size_t)k * sizeof(unsigned int), s), "clearing within-SS maxima");
  } else {
    GK_CHECK(cudaMemcpyAsync(w.wmax, maxterm, (size_t)k * sizeof(unsigned int), cudaMemcpyHostToDevice, s),
             "copying within-SS maxima");
    GK_CHECK(cudaMemsetAsync(w.wacc, 0, 2 * (size_t)k * sizeof(u64), s), "clearing within-SS");
    GK_CHECK(cudaMemsetAsync(w.wcnt, 0, (size_t)k * sizeof(unsigned int), s), "clearing sizes");
  }
  st = for_each_chunk(D, D->labels, [&](const gk_cuda_data &V) -> cudaError_t {
    Plan plan;
    cudaError_t e = plan_assign(&V, k, true, plan);
    if (e == cudaSuccess) e = plan_update(&V, k, plan);
    if (e == cudaSuccess)
      e = launch_withinss_pass(&V, plan, pass - 1, V.labels, w.cen_d, k, w.wmax, w.wacc, w.wcnt, s, false);
    return e;
  }, err, errlen);
  if (st != GK_CUDA_OK) return st;
  if (pass == 1)
    GK_CHECK(cudaMemcpyAsync(maxterm, w.wmax, (size_t)k * sizeof(unsigned int), cudaMemcpyDeviceToHost, s),
             "copying within-SS maxima");
  else
    GK_CHECK(cudaMemcpyAsync(sums, w.wacc, 2 * (size_t)k * sizeof(u64), cudaMemcpyDeviceToHost, s),
             "copying within-SS");
  GK_CHECK(cudaStreamSynchronize(s), "within-SS");
  return GK_CUDA_OK;
}

extern "C" int gk_cuda_labels(gk_cuda_data *D, int *cluster, char *err, size_t errlen) {
  if (!D || !cluster) {
    set_msg(err, errlen, "gk_cuda_labels: invalid arguments");
    return GK_CUDA_INVALID;
  }
  GK_CHECK(cudaSetDevice(D->device), "selecting the CUDA device");
  return staged_download(D, D->labels, cluster, D->n, 1, D->stream, err, errlen);
}
