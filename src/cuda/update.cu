// update.cu: centroid update (sums, finalize) and within-cluster sums of squares.
#include <algorithm>
#include <cstdlib>

#include "detail/engine.hpp"
#include "detail/update_kernels.cuh"

namespace gk {

namespace {
const size_t kAccSmemLimit = 96 * 1024;
// Blocks of 256 threads over D's n points, `step` points a block a round (at
// most 8 blocks an SM: the kernels loop).
int item_grid(const gk_cuda_data *D, long long step) {
  return (int)std::min<long long>(std::max<long long>(1, (D->n + step - 1) / step), 8LL * D->sms);
}
// Points a thread of the within-SS passes takes a step.  A point's term is
// a chain of d dependent double operations whose loads include its
// center's coordinate j (column-major: the k centers' coordinate j is a
// block of k doubles, shared by every warp of an SM).  Where the centers
// are large (k d >= 2^18, 2 MiB and more, far beyond L1) those loads come
// from L2, and four points a thread keep four chains' loads in flight;
// where they are smaller, the four points' loads only crowd each other.
// Measured at base clocks on an H100 (ncu, tools/gpu/prof-wss.R,
// 2026-11-27; pass 0, single, 1 / 4 points): d = 128, k = 4096 (E) 507 /
// 327 us; d = 128, k = 1024 389 / 508; d = 64, k = 1024 204 / 261; d =
// 2 .. 32 within 10% either way.  GPUKMEANS_WSS_POINTS = 1 or 4 sets it
// (tools/cuda-dev).
int wss_points(int k, int d) {
  const char *env = std::getenv("GPUKMEANS_WSS_POINTS");
  if (env && (env[0] == '1' || env[0] == '4') && !env[1]) return env[0] - '0';
  return (double)k * d >= 262144.0 ? 4 : 1;
}
}

cudaError_t plan_update(const gk_cuda_data *D, int k, Plan &p) {
  const int d = D->d;
  const long long n = D->n;
  // accumulate (tiled path): coordinate groups of jb columns in shared memory
  size_t per_col = 2 * (size_t)k * sizeof(u64);
  size_t cnt = (size_t)k * sizeof(unsigned int);
  int jb = 0;
  const size_t lim = std::min(kAccSmemLimit, smem_limit(D));
  if (per_col + cnt <= lim) jb = (int)std::min<size_t>((size_t)d, (lim - cnt) / per_col);
  if (jb >= 1) {
    p.acc_shared = true;
    p.acc_jb = jb;
    p.acc_smem = per_col * jb + cnt;
  } else {
    p.acc_shared = false;
    p.acc_jb = std::min(d, 8);
    p.acc_smem = 0;
  }
  p.acc_gy = (d + p.acc_jb - 1) / p.acc_jb;
  // about 4 blocks an SM in all, rounded down: E's 128 column groups made
  // 640 blocks, 2.4 waves of two an SM (measured only together with
  // k_accumulate's 8 points a step: E's sums 1.02 -> 0.74 ms, H100)
  long long gx = std::max<long long>(1, (4LL * D->sms) / p.acc_gy);
  gx = std::min<long long>(gx, std::max<long long>(1, (n + 2047) / 2048));
  p.acc_gx = (int)gx;
  if (p.acc_smem > 48 * 1024) {
    const cudaError_t e = allow_dynamic_smem(D, {(const void *)k_accumulate<float, false>, (const void *)k_accumulate<float, true>,
                                      (const void *)k_accumulate<double, false>,
                                      (const void *)k_accumulate<double, true>},
                                     p.acc_smem);
    if (e != cudaSuccess) return e;
  }
  // within-SS
  size_t ws = 2 * (size_t)k * sizeof(u64) + cnt + 8 * (size_t)k + 8;
  p.w_shared = ws <= lim;
  p.w_smem = p.w_shared ? ws : 0;
  if (p.w_smem > 48 * 1024) {  // (pass 1's: pass 0 needs 4 k bytes)
    const cudaError_t e = allow_dynamic_smem(
        D, {(const void *)k_withinss<float, 1, false, 1>, (const void *)k_withinss<float, 1, true, 1>,
            (const void *)k_withinss<double, 1, false, 1>, (const void *)k_withinss<double, 1, true, 1>,
            (const void *)k_withinss<float, 1, false, 4>, (const void *)k_withinss<float, 1, true, 4>,
            (const void *)k_withinss<double, 1, false, 4>, (const void *)k_withinss<double, 1, true, 4>},
        p.w_smem);
    if (e != cudaSuccess) return e;
  }
  p.w_points = wss_points(k, d);
  // As many blocks as the SMs hold at once: a point's within-SS is one chain
  // of d dependent double operations (stats' order), so the pass lives on
  // the number of points in flight (two blocks an SM: D 1.55 ms, E 1.8 ms).
  int per_sm = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k_withinss<float, 1, false, 1>, 256, p.w_smem) != cudaSuccess ||
      per_sm < 2) {
    (void)cudaGetLastError();
    per_sm = 2;
  }
  p.w_grid = (int)std::min<long long>(std::max<long long>(1, (n + 255) / 256), (long long)per_sm * D->sms);
  // finalize
  long long kd = (long long)k * d;
  p.fin_grid = (int)std::min<long long>(std::max<long long>(1, (kd + 255) / 256), 4LL * D->sms);
  return cudaSuccess;
}

cudaError_t plan_delta(gk_cuda_data *D, Plan &p, cudaStream_t s) {
  p.delta = false;
  p.prev = p.moves = nullptr;
  // The fused small-d kernels make their sums afresh: a warp adds its 32
  // points' values side by side, while the moves' adds and subtractions,
  // a few lanes' in most warps, cost about as much or more (H100,
  // 2026-11-26: B single 0.047 -> 0.054 ms an iteration carried).  (The
  // list holds int indices.)
  if (env_switch("GPUKMEANS_DELTA_SUMS") == 0 || D->weighted || p.path == 0 || D->n >= (1LL << 31))
    return cudaSuccess;
  if (D->prev_state == 0) {  // prev and the list: 2 n ints, where there is room (else fresh sums)
    D->prev_state = -1;
    const size_t bytes = 2 * (size_t)D->n * sizeof(int);
    if (!optional_fits(D, bytes)) return cudaSuccess;
    if (cudaMalloc(&D->prev_labels, bytes) != cudaSuccess) {
      cudaGetLastError();
      D->prev_labels = nullptr;
      return cudaSuccess;
    }
    D->prev_state = 1;
  }
  if (D->prev_state != 1) return cudaSuccess;
  p.delta = true;
  p.prev = D->prev_labels;
  p.moves = D->prev_labels + D->n;
  return cudaMemsetAsync(p.prev, 0xff, (size_t)D->n * sizeof(int), s);  // (no cluster, as the labels)
}

template <typename T, bool LIST>
void accumulate(const gk_cuda_data *D, const Plan &p, const int *labels, int k, State *st, int max_iter, u64 *acc,
                unsigned int *counts, const int *scale, cudaStream_t s) {
  k_accumulate<T, LIST><<<dim3(p.acc_gx, p.acc_gy), 256, p.acc_smem, s>>>(
      (const T *)D->x, D->n, D->d, labels, k, p.acc_jb, p.acc_shared ? 1 : 0, st, max_iter, acc, counts, scale,
      p.moves, p.prev);
}

cudaError_t launch_accumulate(const gk_cuda_data *D, const Plan &p, const int *labels, int k,
                              State *st, int max_iter, u64 *acc, unsigned int *counts,
                              const int *scale, cudaStream_t s, bool carried) {
  if (!carried) {
    if (D->single) accumulate<float, false>(D, p, labels, k, st, max_iter, acc, counts, scale, s);
    else accumulate<double, false>(D, p, labels, k, st, max_iter, acc, counts, scale, s);
    return cudaGetLastError();
  }
  // the moved points listed, their sums (or every point's, where most
  // moved), prev brought up to date
  k_moves_list<<<item_grid(D, kMovesStep), 256, 0, s>>>(labels, p.prev, D->n, p.moves, st, max_iter);
  k_moves_plan<<<p.fin_grid, 256, 0, s>>>(st, max_iter, D->n, D->single ? 4 : 8, acc, counts, (size_t)k * D->d, k);
  if (D->single) accumulate<float, true>(D, p, labels, k, st, max_iter, acc, counts, scale, s);
  else accumulate<double, true>(D, p, labels, k, st, max_iter, acc, counts, scale, s);
  k_moves_commit<<<item_grid(D, 256), 256, 0, s>>>(labels, p.prev, p.moves, D->n, st, max_iter);
  return cudaGetLastError();
}

cudaError_t launch_finalize(const gk_cuda_data *D, const Plan &p, int k, State *st, int max_iter,
                            u64 *acc, unsigned int *counts, double *cen_d, float *cen_f,
                            const int *scale, cudaStream_t s) {
  k_finalize<<<p.fin_grid, 256, 0, s>>>(st, max_iter, acc, counts, cen_d, cen_f, k, D->d, scale,
                                         p.sums_carried());
  return cudaGetLastError();
}

// The within-SS kernel of a pass, with or without the per-point terms, P
// points a thread a step.
template <typename T, int P>
auto withinss_kernel(int pass, bool terms) -> decltype(&k_withinss<T, 0, false, P>) {
  return pass == 0 ? (terms ? k_withinss<T, 0, true, P> : k_withinss<T, 0, false, P>)
                   : (terms ? k_withinss<T, 1, true, P> : k_withinss<T, 1, false, P>);
}
template <typename T>
auto withinss_kernel(int pass, bool terms, int points) -> decltype(&k_withinss<T, 0, false, 1>) {
  return points == 4 ? withinss_kernel<T, 4>(pass, terms) : withinss_kernel<T, 1>(pass, terms);
}

cudaError_t launch_withinss_pass(const gk_cuda_data *D, const Plan &p, int pass, const int *labels,
                                 const double *cen_d, int k, unsigned int *wmax, u64 *wacc, unsigned int *wcnt,
                                 cudaStream_t s, bool clear, double *terms, const void *x, const int *perm) {
  cudaError_t e = cudaSuccess;
  if (clear) {
    e = pass == 0 ? cudaMemsetAsync(wmax, 0, (size_t)k * sizeof(unsigned int), s)
                  : cudaMemsetAsync(wacc, 0, 2 * (size_t)k * sizeof(u64), s);
    if (e == cudaSuccess && pass == 1) e = cudaMemsetAsync(wcnt, 0, (size_t)k * sizeof(unsigned int), s);
  }
  if (e != cudaSuccess) return e;
  const int sh = p.w_shared ? 1 : 0;
  const size_t smem = pass == 0 ? (p.w_shared ? 4 * (size_t)k : 0) : p.w_smem;
  if (!x) x = D->x;
  int *back = pass == 1 && perm ? D->labels : nullptr;
  const unsigned int g = (unsigned int)p.w_grid;
  if (D->single)
    return launch_kernel(withinss_kernel<float>(pass, terms != nullptr, p.w_points), g, smem, s, D->pdl,
                         (const float *)x, D->n, D->d, labels, cen_d, k, sh, wmax, wacc, wcnt, terms, perm, back);
  return launch_kernel(withinss_kernel<double>(pass, terms != nullptr, p.w_points), g, smem, s, D->pdl,
                       (const double *)x, D->n, D->d, labels, cen_d, k, sh, wmax, wacc, wcnt, terms, perm, back);
}

cudaError_t launch_withinss(const gk_cuda_data *D, const Plan &p, const int *labels,
                            const double *cen_d, int k, unsigned int *wmax, u64 *wacc, unsigned int *wcnt,
                            cudaStream_t s, const void *x, const int *perm) {
  double *terms = p.withinss_terms();
  // the outputs cleared by one memset where they lie side by side (the fit
  // workspace's layout: wacc, wcnt, wmax), else each pass clears its own
  const bool side = (void *)wcnt == (void *)(wacc + 2 * (size_t)k) && wmax == wcnt + k;
  cudaError_t e = side ? cudaMemsetAsync(wacc, 0, 2 * (size_t)k * sizeof(u64) + 2 * (size_t)k * sizeof(unsigned int), s)
                       : cudaSuccess;
  if (e == cudaSuccess) e = launch_withinss_pass(D, p, 0, labels, cen_d, k, wmax, wacc, wcnt, s, !side, terms, x);
  return e != cudaSuccess ? e
                          : launch_withinss_pass(D, p, 1, labels, cen_d, k, wmax, wacc, wcnt, s, !side, terms, x, perm);
}

cudaError_t launch_plus_one(int *labels, long long n, cudaStream_t s) {
  long long g = std::min<long long>(std::max<long long>(1, (n + 255) / 256), 2048);
  k_plus_one<<<(int)g, 256, 0, s>>>(labels, n);
  return cudaGetLastError();
}

cudaError_t launch_to_float(const double *src, float *dst, long long m, cudaStream_t s) {
  long long g = std::min<long long>(std::max<long long>(1, (m + 255) / 256), 4096);
  k_to_float<<<(int)g, 256, 0, s>>>(src, dst, m);
  return cudaGetLastError();
}

}  // namespace gk

extern "C" int gk_cuda_sums_stats(gk_cuda_data *D, int64_t *iters, int64_t *added) {
  if (!D) return GK_CUDA_INVALID;
  if (iters) *iters = D->sums_iters;
  if (added) *added = D->sums_added;
  return GK_CUDA_OK;
}
