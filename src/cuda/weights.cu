// weights.cu: observation weights in the CUDA engine: gk_cuda_set_weights
// (the weights on the device, the scales of the weighted sums) and the
// launches of the weighted Lloyd kernels (detail/weighted_kernels.cuh).
//
// Scales (detail/weight_fixed.cuh has the terms).  Whole weights: the
// unweighted scales, limb_scale of the column maxima over the rows of
// positive weight, so that the integers are those of the replicated rows;
// a term is <= 2^53 * 2^59 and the sum of W = sum(w) terms <= W 2^59, which
// stays below 2^125 while W < 2^66; beyond, every scale drops by the excess
// bits (no replicated data of that size could be fitted anyway).  Other
// weights: w' = w 2^-a with the largest in [0.5, 1) (W' = sum w' <= n); the
// sums take 53 more bits than the unweighted scales (terms <= 2^112,
// relative accuracy near 2^-112 of the largest weight's term), less the bits
// by which W' exceeds 2^13, and the weighted counts the scale 112 less the
// same; the within-SS keys are w' times the squared distances (their
// largest sets each cluster's scale, as without weights).
#include <algorithm>
#include <cmath>
#include <vector>

#include "detail/engine.hpp"
#include "detail/weighted_kernels.cuh"

namespace gk {

namespace {
const size_t kWSmemLimit = 96 * 1024;

int clamp_scale(int s) { return s < -1022 ? -1022 : (s > 1023 ? 1023 : s); }
}  // namespace

cudaError_t plan_weighted(const gk_cuda_data *D, int k, Plan &p) {
  const int d = D->d;
  const size_t per_col = kWLimbs * (size_t)k * sizeof(unsigned int);
  const size_t fixed = per_col + (size_t)k * sizeof(unsigned int);  // the count entries, additions per cluster
  int jb = 0;
  const size_t lim = std::min(kWSmemLimit, smem_limit(D));
  if (per_col + fixed <= lim) jb = (int)std::min<size_t>((size_t)d, (lim - fixed) / per_col);
  p.wacc_shared = jb >= 1;
  p.wacc_jb = jb >= 1 ? jb : std::min(d, 8);
  p.wacc_smem = jb >= 1 ? per_col * jb + fixed : 0;
  p.wacc_gy = (d + p.wacc_jb - 1) / p.wacc_jb;
  long long gx = std::max<long long>(1, (4LL * D->sms + p.wacc_gy - 1) / p.wacc_gy);
  gx = std::min<long long>(gx, std::max<long long>(1, (D->n + 2047) / 2048));
  p.wacc_gx = (int)gx;
  if (p.wacc_smem > 48 * 1024) {
    const cudaError_t e = allow_dynamic_smem(
        D, {(const void *)k_accumulate_w<float>, (const void *)k_accumulate_w<double>}, p.wacc_smem);
    if (e != cudaSuccess) return e;
  }
  const size_t ws = (kWLimbs * (size_t)k + k + (k & 1)) * sizeof(unsigned int) + (size_t)k * sizeof(double);
  p.ww_shared = ws <= lim;
  p.ww_smem = p.ww_shared ? ws : 0;
  if (p.ww_smem > 48 * 1024) {
    const cudaError_t e = allow_dynamic_smem(
        D, {(const void *)k_withinss_w<float, 1>, (const void *)k_withinss_w<double, 1>}, p.ww_smem);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

cudaError_t launch_accumulate_w(const gk_cuda_data *D, const Plan &p, int k, const Workspace &w, int max_iter,
                                cudaStream_t s) {
  const dim3 grid(p.wacc_gx, p.wacc_gy);
  const int sh = p.wacc_shared ? 1 : 0;
  if (D->single)
    k_accumulate_w<float><<<grid, 256, p.wacc_smem, s>>>((const float *)D->x, D->n, D->d, D->labels, k, p.wacc_jb,
                                                         sh, w.st, max_iter, w.acc, w.wsum, D->d_scale, D->wspec);
  else
    k_accumulate_w<double><<<grid, 256, p.wacc_smem, s>>>((const double *)D->x, D->n, D->d, D->labels, k,
                                                          p.wacc_jb, sh, w.st, max_iter, w.acc, w.wsum, D->d_scale,
                                                          D->wspec);
  return cudaGetLastError();
}

cudaError_t launch_finalize_w(const gk_cuda_data *D, const Plan &p, int k, const Workspace &w, int max_iter,
                              cudaStream_t s) {
  k_finalize_w<<<p.fin_grid, 256, 0, s>>>(w.st, max_iter, w.acc, w.wsum, w.cen_d, w.cen_f, k, D->d, D->d_scale,
                                          D->wspec.cscale);
  return cudaGetLastError();
}

cudaError_t launch_withinss_w(const gk_cuda_data *D, const Plan &p, int k, const Workspace &w, cudaStream_t s) {
  cudaError_t e = cudaMemsetAsync(w.wmax, 0, (size_t)k * sizeof(unsigned int), s);
  if (e == cudaSuccess) e = cudaMemsetAsync(w.wacc, 0, 2 * (size_t)k * sizeof(u64), s);
  if (e == cudaSuccess) e = cudaMemsetAsync(w.wcnt, 0, (size_t)k * sizeof(unsigned int), s);
  if (e != cudaSuccess) return e;
  const int sh = p.ww_shared ? 1 : 0;
  const size_t smem0 = p.ww_shared ? (size_t)k * sizeof(unsigned int) : 0;
  if (D->single) {
    const float *x = (const float *)D->x;
    k_withinss_w<float, 0><<<p.w_grid, 256, smem0, s>>>(x, D->n, D->d, D->labels, w.cen_d, k, sh, w.wmax, w.wacc,
                                                        w.wcnt, D->wspec);
    k_withinss_w<float, 1><<<p.w_grid, 256, p.ww_smem, s>>>(x, D->n, D->d, D->labels, w.cen_d, k, sh, w.wmax,
                                                            w.wacc, w.wcnt, D->wspec);
  } else {
    const double *x = (const double *)D->x;
    k_withinss_w<double, 0><<<p.w_grid, 256, smem0, s>>>(x, D->n, D->d, D->labels, w.cen_d, k, sh, w.wmax, w.wacc,
                                                         w.wcnt, D->wspec);
    k_withinss_w<double, 1><<<p.w_grid, 256, p.ww_smem, s>>>(x, D->n, D->d, D->labels, w.cen_d, k, sh, w.wmax,
                                                             w.wacc, w.wcnt, D->wspec);
  }
  return cudaGetLastError();
}

double weighted_wss_value(const gk_cuda_data *D, u64 lo, u64 hi, unsigned int maxterm) {
  return wss_value(D->wspec, lo, hi, maxterm);
}

}  // namespace gk

using namespace gk;

extern "C" int gk_cuda_set_weights(gk_cuda_data *D, const double *w, char *err, size_t errlen) {
  if (int rs = refuse_streamed(D, "observation weights on the device", err, errlen)) return rs;
  if (!D || !w || D->weighted) {
    set_msg(err, errlen, "gk_cuda_set_weights: invalid arguments");
    return GK_CUDA_INVALID;
  }
  const long long n = D->n;
  const int d = D->d;
  bool whole = true;
  double wmax = 0, W = 0;
  for (long long i = 0; i < n; ++i) {
    const double v = w[i];
    if (!(v >= 0) || !std::isfinite(v)) {
      set_msg(err, errlen, "gk_cuda_set_weights: weight %lld is negative or not finite", i + 1);
      return GK_CUDA_INVALID;
    }
    whole = whole && v == std::floor(v) && v <= 9007199254740992.0;
    wmax = std::max(wmax, v);
    W += v;
  }
  if (!(wmax > 0)) {
    set_msg(err, errlen, "gk_cuda_set_weights: every weight is 0");
    return GK_CUDA_INVALID;
  }
  GK_CHECK(cudaSetDevice(D->device), "selecting the CUDA device");
  cudaStream_t s = D->stream;
  double *dw = nullptr;
  cudaError_t e = cudaMalloc((void **)&dw, (size_t)n * sizeof(double));
  if (e != cudaSuccess) return fail(e, "allocating the weights", err, errlen);
  D->wspec.w = dw;  // freed with the handle
  GK_CHECK(cudaMemcpyAsync(dw, w, (size_t)n * sizeof(double), cudaMemcpyHostToDevice, s), "copying the weights");
  DevBuf<u64> mx;
  GK_CHECK(mx.alloc(d), "allocating column maxima");
  GK_CHECK(cudaMemsetAsync(mx.p, 0, d * sizeof(u64), s), "clearing column maxima");
  const dim3 grid((unsigned)std::max<long long>(1, std::min<long long>((n + 255) / 256, 4LL * D->sms)), d);
  if (D->single) k_col_maxabs_w<float><<<grid, 256, 0, s>>>((const float *)D->x, n, dw, mx.p);
  else k_col_maxabs_w<double><<<grid, 256, 0, s>>>((const double *)D->x, n, dw, mx.p);
  GK_CHECK(cudaGetLastError(), "column maxima of the weighted rows");
  std::vector<u64> h(d);
  GK_CHECK(cudaMemcpyAsync(h.data(), mx.p, d * sizeof(u64), cudaMemcpyDeviceToHost, s), "copying column maxima");
  GK_CHECK(cudaStreamSynchronize(s), "copying column maxima");

  WeightSpec ws;
  ws.w = dw;
  const int more = weight_scales(whole, wmax, W, ws);  // bits added to the unweighted scales
  for (int j = 0; j < d; ++j) {
    double v;
    memcpy(&v, &h[j], 8);
    D->scale[j] = clamp_scale(limb_scale(v) + more);
  }
  GK_CHECK(cudaMemcpyAsync(D->d_scale, D->scale.data(), d * sizeof(int), cudaMemcpyHostToDevice, s),
           "copying scales");
  GK_CHECK(cudaStreamSynchronize(s), "copying scales");
  drop_graphs(D);  // captured with the unweighted kernels
  D->wspec = ws;
  D->weighted = 1;
  return GK_CUDA_OK;
}
