// detail/engine.hpp: the engine's internal host API shared by the .cu files.
//
// The public C interface (gk_cuda.h) is implemented on top of these pieces:
//   device_data.cu  upload, free, totss         (owns gk_cuda_data)
//   assign.cu       assignment kernels + predict (gk_cuda_assign)
//   update.cu       centroid sums, finalize, within-SS
//   lloyd.cu        the Lloyd loop (batches in CUDA graphs), gk_cuda_lloyd
//   device_info.cu  gk_cuda_get_info, gk_cuda_get_device
// Each kernel is launched from the translation unit that defines it; the
// others call the host wrappers declared here.
#ifndef GPUKMEANS_DETAIL_ENGINE_HPP
#define GPUKMEANS_DETAIL_ENGINE_HPP

#include <vector>

#include "common.cuh"

// The opaque handle of gk_cuda.h.
struct gk_cuda_data {
  int device = 0;
  long long n = 0;
  int d = 0;
  int single = 0;
  void *x = nullptr;            // n x d column-major, double or float (inside block)
  int sms = 1;                  // multiprocessors of the device
  // One device allocation made at upload: x | labels (n ints, the fits'
  // labels) | d_scale | small scratch.  Freed by gk_cuda_free.
  void *block = nullptr;
  int *labels = nullptr;
  unsigned long long *scratch = nullptr;  // 2d + 2 words (totss) + d (column maxima)
  double *d_mean = nullptr;               // d column means (totss)
  double totss = 0;                       // computed at upload
  // Per-handle stream and timing events (created at upload).
  cudaStream_t stream = nullptr;
  cudaEvent_t ev0 = nullptr, ev1 = nullptr;
  // Fit workspace, O(k d), grown on demand, reused across fits (nstart).
  void *ws = nullptr;
  size_t ws_bytes = 0;
  // Instantiated iteration graphs, reused by later fits with the same key.
  cudaGraphExec_t gx[2] = {nullptr, nullptr};  // full batch, remainder
  int gx_iters[2] = {0, 0};
  int gx_k = 0, gx_max_iter = 0, gx_bsz = 0;
  void *gx_ws = nullptr;
  // single precision stores x - shift (per column) to keep float distances
  // accurate for data far from the origin; zero in double precision.
  std::vector<double> shift;
  std::vector<double> maxabs;   // max |stored x| per column
  std::vector<int> scale;       // fixed-point scale of the per-column sums
  int *d_scale = nullptr;       // the same on the device
};

namespace gk {

// How one fit runs its iterations, chosen by shape.
struct Plan {
  int path = 0;          // 0: fused small-d kernel (assign + sums); 1: tiled assign + accumulate
  int dm = 0;            // small path: padded dimension (1, 2, 4, 8)
  size_t smem = 0;       // small path: dynamic shared bytes
  int grid = 0;          // small path: blocks; tiled: blocks
  // accumulate kernel (tiled path)
  int acc_gx = 0, acc_gy = 0, acc_jb = 0;
  size_t acc_smem = 0;
  bool acc_shared = true;
  // within-SS kernel
  int w_grid = 0;
  size_t w_smem = 0;
  bool w_shared = true;
  int fin_grid = 0;      // finalize kernel
  int tf32 = 0;          // tiled single (d > 8): tensor-core 3xTF32 kernel instead of SIMT
};

// Dev-tool knobs (tools/cuda-dev), not part of the C interface:
// upload copy mode (0 pageable: default, 1 cudaHostRegister) and the
// tiled single kernel (-1 by shape, 0 SIMT, 1 TF32).
extern "C" void gk_cuda_dev_knobs(int copy_mode, int tf32);
// k-means|| (init_par.cu): 1 = float lower bounds rule out pairs (default),
// 0 = exact distance for every pair (same result, slower).
extern "C" void gk_cuda_dev_init_knobs(int filter);
extern int g_init_filter;
extern int g_copy_mode;
extern int g_tf32;

// assign.cu --------------------------------------------------------------
// Fills the assignment part of plan (path, dm, smem, grid) for k centers.
cudaError_t plan_assign(const gk_cuda_data *D, int k, bool update, Plan &plan);
// One assignment step: labels (0-based, -1 = none yet) and st->changed; with
// plan.path == 0 and update, also adds the centroid sums into acc/counts.
cudaError_t launch_assign(const gk_cuda_data *D, const Plan &plan, const void *cen, int k,
                          int *labels, State *st, int max_iter, bool update,
                          u64 *acc, unsigned int *counts, cudaStream_t s);

// update.cu --------------------------------------------------------------
cudaError_t plan_update(const gk_cuda_data *D, int k, Plan &plan);
// Sums of x per cluster and coordinate (tiled path only).
cudaError_t launch_accumulate(const gk_cuda_data *D, const Plan &plan, const int *labels, int k,
                              State *st, int max_iter, u64 *acc, unsigned int *counts,
                              cudaStream_t s);
// New centers from the sums (or convergence), zeroes the sums, advances st.
cudaError_t launch_finalize(const gk_cuda_data *D, const Plan &plan, int k, State *st,
                            int max_iter, u64 *acc, unsigned int *counts, double *cen_d,
                            float *cen_f, cudaStream_t s);
// Within-cluster sums of squares and sizes (zeroes its outputs first); cluster
// c's sum is fixed point with scale wss_scale(wmax[c]).
cudaError_t launch_withinss(const gk_cuda_data *D, const Plan &plan, const int *labels,
                            const double *cen_d, int k, unsigned int *wmax, u64 *wacc,
                            unsigned int *wcnt, cudaStream_t s);
// persistent.cu ------------------------------------------------------------
struct PersistentPlan {
  bool ok = false;  // false: use the per-kernel path
  int dm = 0, grid = 0;
  size_t smem = 0;
};
cudaError_t plan_persistent(const gk_cuda_data *D, int k, PersistentPlan &p);
// Up to batch iterations in one cooperative launch; counts must hold 2k
// zeroed entries, acc 2kd zeroed words, st zeroed before the first batch.
// cen is the working-precision copy (float or the same as cen_d in double).
cudaError_t launch_persistent(const gk_cuda_data *D, const PersistentPlan &p, void *cen, double *cen_d,
                              int k, int *labels, State *st, int max_iter, int batch, u64 *acc,
                              unsigned int *counts, cudaStream_t s);

// labels[i] += 1 (1-based labels for the caller).
cudaError_t launch_plus_one(int *labels, long long n, cudaStream_t s);
// float copy of double centers (single precision).
cudaError_t launch_to_float(const double *src, float *dst, long long m, cudaStream_t s);

}  // namespace gk

#endif
