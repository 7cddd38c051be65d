// persistent.cu: batches of Lloyd iterations in one cooperative kernel
// (d <= 8, n < kSmallN: one point per thread, where launch latency dominates).
#include <algorithm>

#include "detail/engine.hpp"
#include "detail/persistent_kernel.cuh"

namespace gk {

namespace {

const long long kSmallN = 262144;  // below: one point per thread

template <typename T, int DM>
cudaError_t plan_t(const gk_cuda_data *D, int k, PersistentPlan &p) {
  const int d = D->d;
  size_t smem = small_smem_bytes<T, DM>(k, d, true);
  p.ok = false;
  if (smem > 100 * 1024) return cudaSuccess;
  int coop = 0;
  cudaError_t e = cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, D->device);
  if (e != cudaSuccess) return e;
  if (!coop) return cudaSuccess;
  auto kern = k_lloyd_persistent<T, DM>;
  e = allow_dynamic_smem(D, (const void *)kern, smem);
  if (e != cudaSuccess) {  // (a device with less shared memory a block, 99 KB on sm_86 and sm_89: graph batches)
    cudaGetLastError();
    return cudaSuccess;
  }
  int per_sm = 0;
  e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, 256, smem);
  if (e != cudaSuccess) return e;
  if (per_sm < 1) return cudaSuccess;
  long long need = (D->n + 255) / 256;
  p.grid = (int)std::max<long long>(1, std::min<long long>(need, (long long)per_sm * D->sms));
  p.smem = smem;
  p.dm = DM;
  p.ok = true;
  return cudaSuccess;
}

template <typename T>
cudaError_t plan_dm(const gk_cuda_data *D, int k, PersistentPlan &p) {
  const int d = D->d;
  if (d <= 1) return plan_t<T, 1>(D, k, p);
  if (d <= 2) return plan_t<T, 2>(D, k, p);
  if (d <= 4) return plan_t<T, 4>(D, k, p);
  return plan_t<T, 8>(D, k, p);
}

template <typename T, int DM>
cudaError_t launch_t(const gk_cuda_data *D, const PersistentPlan &p, T *cen, double *cen_d, int k,
                     int *labels, State *st, int max_iter, int batch, u64 *acc, unsigned int *counts,
                     cudaStream_t s) {
  const T *x = (const T *)D->x;
  long long n = D->n;
  int d = D->d;
  const int *scale = D->d_scale;
  void *args[] = {(void *)&x, &n, &d, &cen, &cen_d, &k, &labels, &st, &max_iter, &batch, &acc, &counts,
                  (void *)&scale};
  return cudaLaunchCooperativeKernel((const void *)k_lloyd_persistent<T, DM>, p.grid, 256, args, p.smem, s);
}

template <typename T>
cudaError_t launch_dm(const gk_cuda_data *D, const PersistentPlan &p, T *cen, double *cen_d, int k,
                      int *labels, State *st, int max_iter, int batch, u64 *acc, unsigned int *counts,
                      cudaStream_t s) {
  switch (p.dm) {
    case 1: return launch_t<T, 1>(D, p, cen, cen_d, k, labels, st, max_iter, batch, acc, counts, s);
    case 2: return launch_t<T, 2>(D, p, cen, cen_d, k, labels, st, max_iter, batch, acc, counts, s);
    case 4: return launch_t<T, 4>(D, p, cen, cen_d, k, labels, st, max_iter, batch, acc, counts, s);
    default: return launch_t<T, 8>(D, p, cen, cen_d, k, labels, st, max_iter, batch, acc, counts, s);
  }
}

}  // namespace

// Only where launch latency dominates: measured on an H100 (2026-11-22) the
// graph of (fused assign, finalize) kernels is faster from n = 1e6 (B, C).
bool persistent_shape(const gk_cuda_data *D) { return D->d <= 8 && D->n < kSmallN; }

cudaError_t plan_persistent(const gk_cuda_data *D, int k, PersistentPlan &p) {
  p.ok = false;
  if (!persistent_shape(D)) return cudaSuccess;
  return D->single ? plan_dm<float>(D, k, p) : plan_dm<double>(D, k, p);
}

cudaError_t launch_persistent(const gk_cuda_data *D, const PersistentPlan &p, void *cen, double *cen_d,
                              int k, int *labels, State *st, int max_iter, int batch, u64 *acc,
                              unsigned int *counts, cudaStream_t s) {
  if (D->single)
    return launch_dm<float>(D, p, (float *)cen, cen_d, k, labels, st, max_iter, batch, acc, counts, s);
  return launch_dm<double>(D, p, (double *)cen, cen_d, k, labels, st, max_iter, batch, acc, counts, s);
}

}  // namespace gk
