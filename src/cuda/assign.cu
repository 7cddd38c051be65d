// assign.cu: the assignment step (nearest center) and gk_cuda_assign (predict).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "detail/assign_kernels.cuh"
#include "detail/cell_grid.cuh"
#include "detail/df_candidates.cuh"
#include "detail/df_settle.cuh"
#include "detail/engine.hpp"
#include "detail/wbox_kernels.cuh"

namespace gk {

namespace {

const size_t kSmallSmemLimit = 100 * 1024;  // keeps >= 2 blocks per SM

template <typename T>
size_t small_smem(int k, int d, int dm, bool update) {
  switch (dm) {
    case 1: return small_smem_bytes<T, 1>(k, d, update);
    case 2: return small_smem_bytes<T, 2>(k, d, update);
    case 4: return small_smem_bytes<T, 4>(k, d, update);
    default: return small_smem_bytes<T, 8>(k, d, update);
  }
}
size_t small_df_smem(int k, int d, int dm, bool update) {
  switch (dm) {
    case 1: return small_df_smem_bytes<1>(k, d, update);
    case 2: return small_df_smem_bytes<2>(k, d, update);
    case 4: return small_df_smem_bytes<4>(k, d, update);
    default: return small_df_smem_bytes<8>(k, d, update);
  }
}

// Blocks of a small-d kernel (ppt points a thread): as many as fit the
// device at once, at most one per 256 ppt points.
template <typename Kernel>
cudaError_t small_grid(const gk_cuda_data *D, Kernel kern, int ppt, size_t smem, int &grid) {
  cudaError_t e = allow_dynamic_smem(D, (const void *)kern, smem);
  if (e != cudaSuccess) return e;
  int per_sm = 0;
  e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, 256, smem);
  if (e != cudaSuccess) return e;
  if (per_sm < 1) per_sm = 1;
  long long need = (D->n + 256LL * ppt - 1) / (256LL * ppt);
  grid = (int)std::min<long long>(need, (long long)per_sm * D->sms);
  if (grid < 1) grid = 1;
  return cudaSuccess;
}

template <typename T, bool U>
cudaError_t small_grid_dm(const gk_cuda_data *D, int dm, size_t smem, int &grid) {
  switch (dm) {
    case 1: return small_grid(D, k_assign_small<T, 1, U>, Small<T, 1>::PPT, smem, grid);
    case 2: return small_grid(D, k_assign_small<T, 2, U>, Small<T, 2>::PPT, smem, grid);
    case 4: return small_grid(D, k_assign_small<T, 4, U>, Small<T, 4>::PPT, smem, grid);
    default: return small_grid(D, k_assign_small<T, 8, U>, Small<T, 8>::PPT, smem, grid);
  }
}
template <bool U>
cudaError_t small_df_grid_dm(const gk_cuda_data *D, int dm, size_t smem, int &grid) {
  switch (dm) {
    case 1: return small_grid(D, k_assign_small_df<1, U>, SmallDF<1>::PPT, smem, grid);
    case 2: return small_grid(D, k_assign_small_df<2, U>, SmallDF<2>::PPT, smem, grid);
    case 4: return small_grid(D, k_assign_small_df<4, U>, SmallDF<4>::PPT, smem, grid);
    default: return small_grid(D, k_assign_small_df<8, U>, SmallDF<8>::PPT, smem, grid);
  }
}

// The small-d kernels' launch for the plan's (the grid of cells, the
// double filter or the scan).
template <typename T, int DM, bool U>
void run_small(const gk_cuda_data *D, const Plan &p, const T *cen, int k, int *labels, State *st,
               int max_iter, u64 *acc, unsigned int *counts, const int *scale, cudaStream_t s) {
  if constexpr (DM <= 4) {  // (the grid: d <= kGridMaxD)
    if (p.gbuf) {
      const GridBufs g = grid_bufs(p.gbuf, p.gcells);
      k_grid_build<T><<<p.gblocks, 256, (size_t)D->d * k * sizeof(float), s>>>(cen, k, D->d, g, D->single, st,
                                                                               max_iter);
      k_assign_small_grid<T, DM, U><<<p.grid, 256, p.smem, s>>>((const T *)D->x, D->n, D->d, cen, k, labels, st,
                                                                max_iter, acc, counts, scale, g);
      return;
    }
  }
  if constexpr (std::is_same<T, double>::value) {
    if (p.sdf) {
      k_assign_small_df<DM, U><<<p.grid, 256, p.smem, s>>>((const double *)D->x, D->n, D->d, cen, k, labels, st,
                                                           max_iter, acc, counts, scale,
                                                           SmallDFArgs{p.sdf_im, p.sdf_absd});
      return;
    }
  }
  k_assign_small<T, DM, U><<<p.grid, 256, p.smem, s>>>(
      (const T *)D->x, D->n, D->d, cen, k, labels, st, max_iter, acc, counts, scale);
}

template <typename T, bool U>
void run_small_dm(const gk_cuda_data *D, const Plan &p, const T *cen, int k, int *labels,
                  State *st, int max_iter, u64 *acc, unsigned int *counts, const int *scale, cudaStream_t s) {
  switch (p.dm) {
    case 1: run_small<T, 1, U>(D, p, cen, k, labels, st, max_iter, acc, counts, scale, s); break;
    case 2: run_small<T, 2, U>(D, p, cen, k, labels, st, max_iter, acc, counts, scale, s); break;
    case 4: run_small<T, 4, U>(D, p, cen, k, labels, st, max_iter, acc, counts, scale, s); break;
    default: run_small<T, 8, U>(D, p, cen, k, labels, st, max_iter, acc, counts, scale, s); break;
  }
}

// The grid's kernel for plan_assign (its blocks by occupancy).
template <typename T, bool U>
cudaError_t small_grid_kernel_dm(const gk_cuda_data *D, int dm, size_t smem, int &grid) {
  switch (dm) {
    case 1: return small_grid(D, k_assign_small_grid<T, 1, U>, Small<T, 1>::PPT, smem, grid);
    case 2: return small_grid(D, k_assign_small_grid<T, 2, U>, Small<T, 2>::PPT, smem, grid);
    default: return small_grid(D, k_assign_small_grid<T, 4, U>, Small<T, 4>::PPT, smem, grid);
  }
}

// The double filters' switch GPUKMEANS_DFILTER (read at each fit): 0, 1 or
// 2, or -1 when unset (by shape).
int dfilter_env_mode() {
  const char *env = std::getenv("GPUKMEANS_DFILTER");
  return env && env[0] >= '0' && env[0] <= '2' ? env[0] - '0' : -1;
}
// The largest |stored x| of D where the filters' bound holds (finite s^2
// and absd, no exact distance overflowing: 2^-400 .. 2^400), else 0.
double dfilter_range(const gk_cuda_data *D) {
  double M = 0;
  for (double v : D->maxabs) M = std::max(M, v);
  return M >= std::ldexp(1.0, -400) && M <= std::ldexp(1.0, 400) ? M : 0.0;
}
// absd of the bound for an image of scale 2^-e: (d + 1) 2^-1074 s^2 and one
// subnormal more.
double dfilter_absd(int d, double scale) {
  const int e = -std::ilogb(scale);
  return std::ldexp(d + 1.0, -1074 - 2 * e) + 4.9406564584124654e-324;
}

// The small-d filter in double precision (detail/small_dfilter.cuh): by
// shape, or as GPUKMEANS_DFILTER says (0 never, 1 or 2 wherever it is
// sound: the tiled filter's switch), for data within the bound's range.
// Fills the image and absd of the plan.  By shape: where the exact
// arithmetic it saves, about (5d - 1.6) / 128 cycles a center, outweighs
// its cost per point (the image, the bound, the rescan), k (5d - 1.6) >=
// 800: d = 1 from 236 centers, d = 2 from 96, d = 4 from 44, d = 8 from 21.
// (Kernel times on an H100, 2026-11-26, 1e6 uniform points, filter / exact:
// d = 2, k = 32: 0.038 / 0.032 ms; k = 100: 0.060 / 0.066; k = 1000: 0.229 /
// 0.592; d = 1, k = 64: 0.047 / 0.034; d = 4, k = 256: 0.147 / 0.285.)
bool small_df_by_shape(int k, int d) { return (double)k * (5.0 * d - 1.6) >= 800.0; }
bool small_df_wanted(const gk_cuda_data *D, int k, Plan &plan) {
  if (D->single || D->d > 8) return false;
  const int mode = dfilter_env_mode();
  if (mode == 0 || (mode < 0 && !small_df_by_shape(k, D->d))) return false;
  const double M = dfilter_range(D);
  if (M == 0) return false;
  plan.sdf_im = init::float_image(M, false, D->d_mean, D->d, false);
  plan.sdf_absd = dfilter_absd(D->d, plan.sdf_im.scale);
  return true;
}

// The persistent grid of the packed kernels: as many blocks as the device
// holds at once (per_sm a multiprocessor), at most one a point tile.
int tc_grid(const gk_cuda_data *D, int per_sm) {
  const long long tiles = (D->n + kTcBM - 1) / kTcBM;
  return (int)std::max(1LL, std::min(tiles, (long long)std::max(per_sm, 1) * D->sms));
}

// Single precision, d > 8: the tensor-core kernel (by shape from k = 32, or
// as options.assign_kernel asks: 0 by shape, 1 SIMT, 2 tensor cores).
bool tf32_wanted(const gk_cuda_data *D, int k) {
  const int kernel = D->opts.assign_kernel;
  return D->single && D->d > 8 && (kernel == 2 || (kernel == 0 && k >= 32));
}

// The packed kernels unless GPUKMEANS_TC=0 (the tests compare both).
bool tc_wanted() { return env_switch("GPUKMEANS_TC") != 0; }

// The grid of cells for resident x: at d <= 2 from k = 160 centers in
// single precision and k = 96 in double (where it replaces the small-d
// filter) to kGridMaxK, unless GPUKMEANS_GRID says 0 (never) or 1 (at d <= 3
// from k = 2).  About 4 cells a center (tools/cuda-dev/grid_emu: B's lists 3-8
// centers, C's 6-10).  Measured on an H100 (2026-11-26, 1e6 blobs, ms an
// iteration, scan / grid, single and double): d = 2, k = 1000: 0.221 /
// 0.095 and 0.231 / 0.106; k = 300: 0.087 / 0.061, 0.099 / 0.063; k = 100:
// 0.047 / 0.054, 0.061 / 0.058 (the fused sums set that kernel's pace);
// d = 1, k = 300: 0.069 / 0.046, 0.137 / 0.050; but d = 3, k = 500: 0.178 /
// 0.245, 0.196 / 0.292 (lists of ~23 centers, and 2% of points scanning).
bool grid_wanted(const gk_cuda_data *D, int k) {
  const int mode = env_switch("GPUKMEANS_GRID");
  if (mode == 0 || D->src || D->d > (mode == 1 ? kGridMaxD : 2) || k > kGridMaxK ||
      k < (mode == 1 ? 2 : D->single ? 160 : 96))
    return false;
  return (size_t)D->d * k * sizeof(float) <= 40 * 1024;  // (the build's centers, within 48 KB a block)
}
int grid_cells(int k) { return std::min(8192, std::max(64, 4 * k)); }

// x's n points (read from src: floats, or the filter's image of doubles)
// as packed tiles into dst (tc_points_floats(n, d) floats).
template <typename Src>
cudaError_t pack_points(const Src &src, long long n, int d, float *dst, cudaStream_t s) {
  const long long groups = (long long)(tc_points_floats(n, d) / 4);  // a thread: one float4
  k_tc_pack_points<<<(unsigned int)((groups + 255) / 256), 256, 0, s>>>(src, n, d, dst, groups);
  return cudaGetLastError();
}

// A per-centers buffer of at least `bytes` in *buf (*have bytes now): grown
// when smaller, dropping the graphs that point at the old one.  false when
// the device has no room (*buf is then null: the caller plans without it).
bool grow_buffer(gk_cuda_data *D, void **buf, size_t *have, size_t bytes) {
  if (*have >= bytes) return true;
  drop_graphs(D);
  if (*buf) cudaFree(*buf);
  *buf = nullptr;
  *have = 0;
  if (cudaMalloc(buf, bytes) != cudaSuccess) {
    cudaGetLastError();
    *buf = nullptr;
    return false;
  }
  *have = bytes;
  return true;
}

// Whether the wgmma kernels (detail/wgmma.cuh) are to run: a build with
// sm_90a code (GK_SM90A, configure), a device of compute capability 9.0
// (sm_90a code runs there only), and not GPUKMEANS_TC_WGMMA=0 (the tests
// compare both).
bool wgmma_device(const gk_cuda_data *D) {
#if defined(GK_SM90A)
  // (the capability as new_handle read it; the switch read at every call)
  return D->cc_major == 9 && D->cc_minor == 0 && env_switch("GPUKMEANS_TC_WGMMA") != 0;
#else
  (void)D;
  return false;
#endif
}

// Blocks a multiprocessor holds of a packed-tile kernel with smem bytes of
// dynamic shared memory (0: it cannot run here).
int tc_blocks_per_sm(const gk_cuda_data *D, const void *kernel, size_t smem) {
  int per_sm = 0;
  if (allow_dynamic_smem(D, kernel, smem) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kTcThreads, smem) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return per_sm;
}

cudaError_t prepare_tc(gk_cuda_data *D, int k, cudaStream_t s) {
  const int d = D->d;
  if (D->src || !tf32_wanted(D, k) || !tc_wanted()) return cudaSuccess;
  if (D->n > 0x7fffffffLL * kTcBM) return cudaSuccess;  // (the grid)
  if (D->tc_state == 0) {
    D->tc_state = -1;
    // a device that cannot hold the kernel's shared memory keeps the unpacked kernel
    D->tc_per_sm = tc_blocks_per_sm(D, (const void *)k_assign_tc<false>, kTcSmem);
    if (D->tc_per_sm < 1) return cudaSuccess;
    D->tc_wg_per_sm = wgmma_device(D) ? tc_blocks_per_sm(D, (const void *)k_assign_tc<true>, kTcSmem) : 0;
    const size_t bytes = tc_points_floats(D->n, d) * sizeof(float);
    if (!optional_fits(D, bytes)) return cudaSuccess;
    if (cudaMalloc(&D->tc_x, bytes) != cudaSuccess) {
      cudaGetLastError();
      D->tc_x = nullptr;
      return cudaSuccess;
    }
    const cudaError_t e = pack_points(TcFloatSource{(const float *)D->x, D->n}, D->n, d, (float *)D->tc_x, s);
    if (e != cudaSuccess) return e;
    D->tc_state = 1;
  }
  if (D->tc_state != 1) return cudaSuccess;
  // (no room: plan_assign then plans the unpacked kernel)
  grow_buffer(D, &D->tc_cen, &D->tc_cen_bytes, tc_centers_floats(k, d) * sizeof(float));
  return cudaSuccess;
}

}  // namespace

// (engine.hpp)
int env_switch(const char *name) {
  const char *env = std::getenv(name);
  return env && env[0] ? (env[0] == '0' ? 0 : 1) : -1;
}

cudaError_t prepare_assign(gk_cuda_data *D, int k, cudaStream_t s) {
  // (no room for the grid: plan_assign plans the scan)
  if (grid_wanted(D, k)) grow_buffer(D, &D->grid_buf, &D->grid_bytes, grid_bytes(grid_cells(k)));
  return prepare_tc(D, k, s);
}

namespace {
// The small-d kernels' column width (DM) and their shared memory a block.
int small_dm(int d) { return d <= 1 ? 1 : d <= 2 ? 2 : d <= 4 ? 4 : 8; }
size_t small_path_smem(const gk_cuda_data *D, int k, bool update) {
  const int dm = small_dm(D->d);
  return D->single ? small_smem<float>(k, D->d, dm, update) : small_smem<double>(k, D->d, dm, update);
}
bool small_smem_fits(int d, size_t smem) { return d <= 8 && smem <= kSmallSmemLimit; }
}  // namespace

bool small_path_shape(const gk_cuda_data *D, int k, bool update) {
  return small_smem_fits(D->d, small_path_smem(D, k, update));
}

cudaError_t plan_assign(const gk_cuda_data *D, int k, bool update, Plan &plan) {
  const int d = D->d;
  plan.sdf = false;
  plan.gbuf = nullptr;
  const int dm = small_dm(d);
  const size_t smem = small_path_smem(D, k, update);
  if (small_smem_fits(d, smem)) {
    plan.path = 0;
    plan.dm = dm;
    plan.smem = smem;
    const int cells = grid_cells(k);
    if (grid_wanted(D, k) && D->grid_buf && D->grid_bytes >= grid_bytes(cells)) {
      const cudaError_t e = D->single ? (update ? small_grid_kernel_dm<float, true>(D, dm, smem, plan.grid)
                                                : small_grid_kernel_dm<float, false>(D, dm, smem, plan.grid))
                                      : (update ? small_grid_kernel_dm<double, true>(D, dm, smem, plan.grid)
                                                : small_grid_kernel_dm<double, false>(D, dm, smem, plan.grid));
      if (e == cudaSuccess) {
        plan.gbuf = D->grid_buf;
        plan.gcells = cells;
        plan.gblocks = grid_build_blocks(cells, d, D->sms);
        return e;
      }
      cudaGetLastError();  // (the scan below)
    }
    const size_t df_smem = small_df_smem(k, d, dm, update);
    if (df_smem <= kSmallSmemLimit && small_df_wanted(D, k, plan)) {
      const cudaError_t e = update ? small_df_grid_dm<true>(D, dm, df_smem, plan.grid)
                                   : small_df_grid_dm<false>(D, dm, df_smem, plan.grid);
      if (e == cudaSuccess) {
        plan.sdf = true;
        plan.smem = df_smem;
        return e;
      }
      cudaGetLastError();  // (a device without that much shared memory a block: the exact kernel)
    }
    const cudaError_t e = D->single ? (update ? small_grid_dm<float, true>(D, dm, smem, plan.grid)
                                              : small_grid_dm<float, false>(D, dm, smem, plan.grid))
                                    : (update ? small_grid_dm<double, true>(D, dm, smem, plan.grid)
                                              : small_grid_dm<double, false>(D, dm, smem, plan.grid));
    if (e == cudaSuccess) return e;
    cudaGetLastError();  // (nor for the exact one, 99 KB a block on sm_86 and sm_89: the tiled path below)
  }
  plan.path = 1;
  plan.dm = 0;
  plan.tf32 = tf32_wanted(D, k);
  plan.tc_x = nullptr;
  plan.tc_cen = nullptr;
  plan.tc_wg = false;
  if (plan.tf32 && D->tc_state == 1 && tc_wanted() && D->tc_cen_bytes >= tc_centers_floats(k, d) * sizeof(float)) {
    plan.tc_x = (const float *)D->tc_x;
    plan.tc_cen = (float *)D->tc_cen;
    plan.tc_wg = D->tc_wg_per_sm > 0;
  }
  plan.smem = 0;
  long long g = (D->n + 127) / 128;  // BM = 128 for both precisions
  if (g > 0x7fffffffLL) return cudaErrorInvalidValue;
  plan.grid = (int)std::max<long long>(g, 1);
  return cudaSuccess;
}

cudaError_t launch_assign(const gk_cuda_data *D, const Plan &plan, const void *cen, int k,
                          int *labels, State *st, int max_iter, bool update, u64 *acc,
                          unsigned int *counts, const int *scale, cudaStream_t s) {
  if (plan.path == 0) {
    if (D->single) {
      if (update) run_small_dm<float, true>(D, plan, (const float *)cen, k, labels, st, max_iter, acc, counts, scale, s);
      else run_small_dm<float, false>(D, plan, (const float *)cen, k, labels, st, max_iter, acc, counts, scale, s);
    } else {
      if (update) run_small_dm<double, true>(D, plan, (const double *)cen, k, labels, st, max_iter, acc, counts, scale, s);
      else run_small_dm<double, false>(D, plan, (const double *)cen, k, labels, st, max_iter, acc, counts, scale, s);
    }
  } else {
    if (plan.tc_x && ((uintptr_t)labels & 15) == 0) {  // (the kernel stages labels by 16 B)
      const int kp = tc_kp(k);
      k_tc_pack_centers<<<kp / 128, 128, 0, s>>>((const float *)cen, k, k, kp, D->d, 0.f,
                                                 plan.tc_wg ? TcPack::argmin_wg : TcPack::argmin, plan.tc_cen, st, max_iter);
      if (plan.tc_wg)
        k_assign_tc<true><<<tc_grid(D, D->tc_wg_per_sm), kTcThreads, kTcSmem, s>>>(plan.tc_x, D->n, D->d, plan.tc_cen, k,
                                                                              labels, st, max_iter);
      else
        k_assign_tc<false><<<tc_grid(D, D->tc_per_sm), kTcThreads, kTcSmem, s>>>(plan.tc_x, D->n, D->d, plan.tc_cen, k, labels,
                                                                         st, max_iter);
    } else if (D->single && D->d > 8 && plan.tf32)
      k_assign_tf32<<<plan.grid, 256, 0, s>>>((const float *)D->x, D->n, D->d, (const float *)cen, k,
                                              labels, st, max_iter);
    else if (D->single && D->d > 8)
      k_assign_tiled<float, true><<<plan.grid, 256, 0, s>>>((const float *)D->x, D->n, D->d,
                                                            (const float *)cen, k, labels, st, max_iter);
    else if (D->single)
      k_assign_tiled<float, false><<<plan.grid, 256, 0, s>>>((const float *)D->x, D->n, D->d,
                                                             (const float *)cen, k, labels, st, max_iter);
    else
      k_assign_tiled<double, false><<<plan.grid, 256, 0, s>>>((const double *)D->x, D->n, D->d,
                                                       (const double *)cen, k, labels, st, max_iter);
  }
  return cudaGetLastError();
}

// ---- the certified filter (double precision, detail/dfilter.cuh) -----------

namespace {
// by shape: the filter from this many centers on (H200: 1.2-2.6x faster from
// k = 256, slower below k = 64 at small n: tools/cuda-dev/LOG.md)
const int kDfMinK = 128;
const int kDfDefault = 1;  // by shape: 1 (3xTF32) or 2 (TF32 images)
size_t al256(size_t b) { return (b + 255) / 256 * 256; }
}  // namespace

cudaError_t prepare_dfilter(gk_cuda_data *D, int k, const Plan &plan, DFilter &f, cudaStream_t s) {
  f = DFilter();
  D->df_used = 0;
  D->df_exact = D->df_iters = D->df_every = 0;
  if (D->single || plan.path != 1) return cudaSuccess;
  int mode = dfilter_env_mode();
  if (mode < 0) mode = k >= kDfMinK ? kDfDefault : 0;
  if (mode == 0) return cudaSuccess;
  const bool tc1 = mode == 2;
  const double M = dfilter_range(D);
  if (M == 0) return cudaSuccess;
  const long long n = D->n;
  const int d = D->d;
  if (n > 0x7fffffffLL || d > 4096) return cudaSuccess;  // the list holds int rows; kappa stays small
  // x's image: packed tiles (3xTF32) or n x d floats (TF32 images); room for either
  const size_t o_na = al256(tc_points_floats(n, d) * sizeof(float)), o_list = o_na + al256((size_t)n * sizeof(float));
  // (what the filter knew of the first lcap listed points, for k_df_pair and
  // the candidate pass: a quarter of the rows, at least 2^20; the points
  // past it go to the full exact pass)
  const long long lcap = std::min<long long>(n, std::max<long long>(1LL << 20, n / 4));
  const size_t o_rest = o_list + al256((size_t)n * sizeof(int)), o_known = o_rest + al256((size_t)n * sizeof(int));
  const size_t o_cnt = o_known + 4 * al256((size_t)lcap * sizeof(int)), total = o_cnt + 512;
  if (D->df_state == 0) {
    D->df_state = -1;
    D->df_tc = -1;
    if (!optional_fits(D, total)) {
      return cudaSuccess;
    }
    if (cudaMalloc(&D->df_block, total) != cudaSuccess) {
      cudaGetLastError();
      D->df_block = nullptr;
      return cudaSuccess;
    }
    D->df_im = init::float_image(M, false, D->d_mean, d, false);
    D->df_state = 1;
  }
  if (D->df_state != 1) return cudaSuccess;
  if (D->df_tc != (tc1 ? 1 : 2)) {  // the image of x (again, when the kind changes)
    char *b = (char *)D->df_block;
    k_df_data_image<<<(unsigned int)((n + 255) / 256), 256, 0, s>>>((const double *)D->x, n, d, D->df_im, tc1,
                                                                   tc1 ? (float *)b : nullptr, (float *)(b + o_na));
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess && !tc1) e = pack_points(TcImageSource{(const double *)D->x, n, D->df_im}, n, d, (float *)b, s);
    if (e != cudaSuccess) return e;
    D->df_tc = tc1 ? 1 : 2;
  }
  const int kp = (k + kDfBN - 1) / kDfBN * kDfBN;  // the tiles' padding
  // (and the settle pass's lists, k x k ints and floats, where k allows them)
  const size_t o_lists = al256((size_t)kp * d * sizeof(float)) + al256((size_t)k * sizeof(float)) +
                         al256(tc_centers_floats(k, d) * sizeof(float)),
               lbytes = k <= kDfSettleMaxK ? al256((size_t)k * k * sizeof(int)) : 0,
               cbytes = o_lists + 2 * lbytes;
  if (!grow_buffer(D, &D->df_cen, &D->df_cen_bytes, cbytes)) return cudaSuccess;
  char *b = (char *)D->df_block;
  f.xi = (float *)b;
  f.na = (float *)(b + o_na);
  f.list = (int *)(b + o_list);
  f.rest = (int *)(b + o_rest);
  f.w1 = (float *)(b + o_known);
  f.w3 = (float *)(b + o_known + al256((size_t)lcap * sizeof(int)));
  f.c1 = (int *)(b + o_known + 2 * al256((size_t)lcap * sizeof(int)));
  f.c2 = (int *)(b + o_known + 3 * al256((size_t)lcap * sizeof(int)));
  f.lcap = lcap;
  f.cnt = (unsigned int *)(b + o_cnt);
  f.tot = (unsigned long long *)(b + o_cnt + 256);
  f.ci = (float *)D->df_cen;
  f.nb = (float *)((char *)D->df_cen + al256((size_t)kp * d * sizeof(float)));
  f.cpk = (float *)((char *)f.nb + al256((size_t)k * sizeof(float)));
  f.nbr = lbytes ? (int *)((char *)D->df_cen + o_lists) : nullptr;
  f.nbf = lbytes ? (float *)((char *)D->df_cen + o_lists + lbytes) : nullptr;
  // the candidate pass for the rest (3xTF32, where its buffers fit): by
  // shape (GPUKMEANS_DF_CAND: 0 never, 1 wherever it can)
  const int cand_env = env_switch("GPUKMEANS_DF_CAND");
  if ((cand_env == 1 || (cand_env < 0 && (double)k * d >= kDfCandMinKD)) && !tc1) {
    // its buffers for as many rest points as lcap (threshold, count,
    // candidates, packed image): once per handle, at the first fit that
    // runs the pass, where they fit
    const long long ccap = lcap;
    const size_t o_ccount = al256((size_t)ccap * sizeof(float)), o_clist = o_ccount + al256((size_t)ccap * sizeof(int)),
                 o_rp = o_clist + al256((size_t)ccap * kDfCand * sizeof(int)),
                 cbytes_all = o_rp + al256(tc_points_floats(ccap, d) * sizeof(float));
    if (!D->df_cand && !D->df_cand_tried) {
      D->df_cand_tried = 1;
      if (optional_fits(D, cbytes_all) && cudaMalloc(&D->df_cand, cbytes_all) != cudaSuccess) {
        cudaGetLastError();
        D->df_cand = nullptr;
      }
    }
    if (D->df_cand) {
      char *c = (char *)D->df_cand;
      f.ccap = ccap;
      f.thr = (float *)c;
      f.ccount = (int *)(c + o_ccount);
      f.cand = (int *)(c + o_clist);
      f.rp = (float *)(c + o_rp);
    }
  }
  // the two nearest centers of the points not certified, kept for k_df_pair
  // from d = kDfPairMinD on (3xTF32 only) where there is no candidate pass
  // (GPUKMEANS_DF_PAIR: 0 never, 1 even with one).  With one the filter
  // runs without the pair on split centers: its epilogue leaves registers
  // for them (E of bench.R 21.1 -> 16.7 ms, the candidate pass settling
  // the points the pair did; H100, tools/cuda-dev/LOG.md).
  const int pair_env = env_switch("GPUKMEANS_DF_PAIR");
  f.pair = !tc1 && d >= kDfPairMinD && (pair_env == 1 || (pair_env < 0 && !f.ccap));
  // Without the pair, up to 4 center tiles a row (k <= 512), the filter
  // takes each tile's two least values by a tree (TcEpiBase::tree_min;
  // first a tournament: D of bench.R 3.63 -> 3.10 ms an iteration, the tree
  // then 3.58 -> 3.36, H100) instead of the sequential update, which runs
  // on most such tiles; GPUKMEANS_DF_TOP2=0: never (the tests compare
  // both).
  f.top2 = !f.pair && k <= 4 * kTcBN && env_switch("GPUKMEANS_DF_TOP2") != 0;
  // Without the pair and the candidate pass, the listed points get exact
  // distances to the few centers near their lowest that float distances
  // do not rule out (df_settle.cuh: D of bench.R, 4.5% of the points, two
  // close centers in a blob), up to kDfSettleMaxK centers;
  // GPUKMEANS_DF_SETTLE=0: every center's (the tests compare both).  Not on
  // TF32 images, whose centers' image is rounded to TF32.
  f.settle = !tc1 && !f.pair && !f.ccap && k <= kDfSettleMaxK && env_switch("GPUKMEANS_DF_SETTLE") != 0;
  // Without the pair, on an H100 / H200, the products through wgmma
  // (wgmma.cuh; the same bits, so the same certificates).
  f.wg = !tc1 && !f.pair && wgmma_device(D);
  const void *tc_kernel = f.pair   ? (const void *)k_assign_tc_filter<true>
                          : f.wg   ? (f.top2 ? (const void *)k_assign_tc_filter<false, true, true>
                                             : (const void *)k_assign_tc_filter<false, false, true>)
                          : f.top2 ? (const void *)k_assign_tc_filter<false, true>
                                   : (const void *)k_assign_tc_filter<false>;
  // (a device that cannot hold it: the exact kernel)
  if (tc1) {
    if (allow_dynamic_smem(D, (const void *)k_assign_tf32_filter, df_tc_smem) != cudaSuccess) {
      cudaGetLastError();
      return cudaSuccess;
    }
  } else {
    D->tc_filter_per_sm = tc_blocks_per_sm(D, tc_kernel, kTcSmem);
    if (D->tc_filter_per_sm < 1) return cudaSuccess;
  }
  const void *cand_kernel = f.pair ? (const void *)k_assign_tc_cand<false>
                            : f.wg ? (const void *)k_assign_tc_cand<true, true>
                                   : (const void *)k_assign_tc_cand<true>;
  if (f.ccap &&
      allow_dynamic_smem(D, cand_kernel, kTcSmem) != cudaSuccess) {
    cudaGetLastError();
    f.ccap = 0;  // (the rest to k_df_exact)
  }
  f.im = D->df_im;
  f.tc1 = tc1;
  // the bound of dfilter.cuh: products on the tensor cores (TF32 images: the
  // products exact, the images' rounding in uprime)
  if (tc1) f.im = init::float_image(M, false, D->d_mean, d, true);
  f.im.kappa = (float)((8.0 * (2.0 * d + 8.0) + (tc1 ? 0.0 : 32.0)) * std::ldexp(1.0, -24));
  f.absd = dfilter_absd(d, f.im.scale);
  const cudaError_t err = cudaMemsetAsync(f.tot, 0, 3 * sizeof(unsigned long long), s);
  if (err != cudaSuccess) return err;
  f.on = true;
  D->df_used = 1;
  return cudaSuccess;
}

cudaError_t launch_assign_df(const gk_cuda_data *D, const Plan &plan, const DFilter &f, const double *cen_d, int k,
                             int *labels, State *st, int max_iter, cudaStream_t s) {
  cudaError_t e = cudaMemsetAsync(f.cnt, 0, 5 * sizeof(unsigned int), s);
  if (e != cudaSuccess) return e;
  const int kp = (k + kDfBN - 1) / kDfBN * kDfBN;
  k_df_center_image<<<(kp + 127) / 128, 128, 0, s>>>(cen_d, k, kp, D->d, f.im, f.tc1, f.ci, f.nb, f.cnt, st, max_iter);
  DFArgs a;
  a.im = f.im;
  a.absd = f.absd;
  a.na = f.na;
  a.nb = f.nb;
  a.list = f.list;
  a.w1 = f.w1;
  a.w3 = f.w3;
  a.c1 = f.c1;
  a.c2 = f.c2;
  a.lcap = f.pair || f.ccap || f.settle ? f.lcap : 0;  // (0: every listed point to k_df_exact)
  a.rest = f.rest;
  a.thr = f.thr;
  a.ccount = f.ccount;
  a.cand = f.cand;
  a.rp = f.rp;
  a.ccap = f.ccap;
  a.cnt = f.cnt;
  a.tot = f.tot;
  if (f.tc1) {
    k_assign_tf32_filter<<<plan.grid, 256, df_tc_smem, s>>>(f.xi, D->n, D->d, f.ci, k, kp, labels, st, max_iter, a);
  } else {  // the image's packed tiles, 3xTF32
    // (split, as the filter without the pair reads them; the pair's epilogue
    // leaves no registers for split centers)
    k_tc_pack_centers<<<kp / 128, 128, 0, s>>>(f.ci, kp, kp, kp, D->d, f.im.kappa,
                                               f.pair ? TcPack::whole : f.wg ? TcPack::split_wg : TcPack::split, f.cpk, st,
                                               max_iter);
    if (f.wg && f.top2)
      k_assign_tc_filter<false, true, true><<<tc_grid(D, D->tc_filter_per_sm), kTcThreads, kTcSmem, s>>>(
          f.xi, D->n, D->d, f.cpk, k, labels, st, max_iter, a);
    else if (f.wg)
      k_assign_tc_filter<false, false, true><<<tc_grid(D, D->tc_filter_per_sm), kTcThreads, kTcSmem, s>>>(
          f.xi, D->n, D->d, f.cpk, k, labels, st, max_iter, a);
    else if (f.pair)
      k_assign_tc_filter<true><<<tc_grid(D, D->tc_filter_per_sm), kTcThreads, kTcSmem, s>>>(f.xi, D->n, D->d, f.cpk, k,
                                                                                           labels, st, max_iter, a);
    else if (f.top2)
      k_assign_tc_filter<false, true><<<tc_grid(D, D->tc_filter_per_sm), kTcThreads, kTcSmem, s>>>(
          f.xi, D->n, D->d, f.cpk, k, labels, st, max_iter, a);
    else
      k_assign_tc_filter<false><<<tc_grid(D, D->tc_filter_per_sm), kTcThreads, kTcSmem, s>>>(f.xi, D->n, D->d, f.cpk, k,
                                                                                            labels, st, max_iter, a);
  }
  const double *x = (const double *)D->x;
  const int sms4 = std::max(1, D->sms * 4);
  if (f.settle) {  // (blocks of a power of two >= k threads for the lists' sort)
    int lt = 32;
    while (lt < k) lt *= 2;
    k_df_center_lists<<<k, lt, 0, s>>>(f.ci, k, kp, D->d, f.nbr, f.nbf, st, max_iter);
    // (each point's image held in registers up to 32 columns)
    const auto settle = D->d <= 16 ? k_df_settle<16> : D->d <= 32 ? k_df_settle<32> : k_df_settle<0>;
    settle<<<std::max(1, D->sms * 8), 256, 0, s>>>(x, f.xi, D->n, D->d, cen_d, k, f.ci, kp, f.nbr, f.nbf, labels, st,
                                                   max_iter, a);
  } else {
    k_df_pair<<<sms4, 256, 0, s>>>(x, D->n, D->d, cen_d, k, labels, st, max_iter, a);
  }
  // the rest: the candidate pass (df_candidates.cuh), then every center's
  // exact distance for the points it leaves (in list), P points a block
  const int *rest = f.rest;
  const unsigned int *rest_count = f.cnt + 3;
  if (f.ccap) {
    k_df_pack_rest<<<std::max(1, D->sms * 8), 256, 0, s>>>(f.xi, D->d, st, max_iter, a);
    if (f.pair)
      k_assign_tc_cand<false><<<tc_grid(D, D->tc_filter_per_sm), kTcThreads, kTcSmem, s>>>(f.rp, D->d, f.cpk, k, st,
                                                                                         max_iter, a);
    else if (f.wg)
      k_assign_tc_cand<true, true><<<tc_grid(D, D->tc_filter_per_sm), kTcThreads, kTcSmem, s>>>(f.rp, D->d, f.cpk, k,
                                                                                              st, max_iter, a);
    else
      k_assign_tc_cand<true><<<tc_grid(D, D->tc_filter_per_sm), kTcThreads, kTcSmem, s>>>(f.rp, D->d, f.cpk, k, st,
                                                                                        max_iter, a);
    // (a full device of threads: each group of lanes waits on its loads)
    k_df_cand_exact<<<std::max(1, D->sms * 8), 256, 0, s>>>(x, D->n, D->d, cen_d, k, labels, st, max_iter, a);
    rest = f.list;
    rest_count = f.cnt + 4;
  }
  const int P = df_exact_points(D->d);  // (0: the rows read from x, 4 points a block)
  const size_t smem = (size_t)P * D->d * sizeof(double);
  const unsigned int grid = (unsigned int)std::max(1, D->sms * 8);
  if (P == 16 && k <= 64 * kDfNarrowCenters)  // (blocks of 64 threads, a few centers each)
    k_df_exact<16, 4, 64><<<2 * grid, 64, smem, s>>>(x, D->n, D->d, cen_d, k, labels, st, max_iter, rest, rest_count,
                                                       true, f.tot + 2);
  else if (P == 16)
    k_df_exact<16, 1><<<grid, kDfExactThreads, smem, s>>>(x, D->n, D->d, cen_d, k, labels, st, max_iter, rest, rest_count, true, f.tot + 2);
  else if (P == 8)
    k_df_exact<8, 1><<<grid, kDfExactThreads, smem, s>>>(x, D->n, D->d, cen_d, k, labels, st, max_iter, rest, rest_count, true, f.tot + 2);
  else
    k_df_exact<4, 2><<<grid, kDfExactThreads, smem, s>>>(x, D->n, D->d, cen_d, k, labels, st, max_iter, rest, rest_count, P == 4, f.tot + 2);
  return cudaGetLastError();
}

}  // namespace gk

using namespace gk;

extern "C" int gk_cuda_dfilter_stats(gk_cuda_data *D, int64_t *exact_points, int64_t *every_points, int64_t *iters,
                                     int *used) {
  if (!D) return GK_CUDA_INVALID;
  if (exact_points) *exact_points = D->df_exact;
  if (every_points) *every_points = D->df_every;
  if (iters) *iters = D->df_iters;
  if (used) *used = D->df_used;
  return GK_CUDA_OK;
}

namespace gk {

namespace {

// The warp boxes' kernel of one precision and dm (its sums carried or
// not, plan.ord_carry; first: a fit's first iteration, whose labels are
// unset), its blocks (small_grid: the later iterations' kernel; the
// first's made launchable too), and its launch on D's ordered copy (gather,
// a first iteration's: on the rows as given through the permutation, the
// copy made on the way).
template <typename T, int DM>
auto wbox_kernel(const Plan &plan, bool first) -> decltype(&k_assign_wbox<T, DM, true, true, false>) {
  if (first) return plan.ord_carry ? k_assign_wbox<T, DM, true, true, true> : k_assign_wbox<T, DM, true, false, true>;
  return plan.ord_carry ? k_assign_wbox<T, DM, true, true, false> : k_assign_wbox<T, DM, true, false, false>;
}
template <typename T, int DM>
cudaError_t wbox_blocks(const gk_cuda_data *D, const Plan &plan, int &grid) {
  int first_grid = 0;
  const cudaError_t e = small_grid(D, wbox_kernel<T, DM>(plan, true), Small<T, DM>::PPT, plan.ord_smem, first_grid);
  if (e != cudaSuccess) return e;
  return small_grid(D, wbox_kernel<T, DM>(plan, false), Small<T, DM>::PPT, plan.ord_smem, grid);
}
template <typename T, int DM>
cudaError_t wbox_launch(const gk_cuda_data *D, const Plan &plan, const void *cen, int k, State *st, int max_iter,
                        u64 *acc, unsigned int *counts, const int *scale, double *upd_cen_d, float *upd_cen_f,
                        bool first, bool gather, cudaStream_t s) {
  // (each iteration's kernel a programmatic dependent of the last one's)
  return launch_kernel(wbox_kernel<T, DM>(plan, first), (unsigned int)plan.ord_grid, plan.ord_smem, s, D->pdl,
                       (const T *)(gather ? D->x : D->ord_x), D->n, D->d, (const T *)cen, k, D->ord_labels, st,
                       max_iter, acc, counts, scale, upd_cen_d, upd_cen_f, plan.sums_carried(),
                       gather ? (const int *)D->ord_perm : nullptr, gather ? (T *)D->ord_x : nullptr);
}

}  // namespace

cudaError_t plan_ordered(const gk_cuda_data *D, int k, Plan &plan) {
  plan.ordered = false;
  // the sums carried (the ordered labels start at -1 and the sums at 0, as
  // every fit's); GPUKMEANS_DELTA_SUMS=0 makes them afresh
  plan.ord_carry = env_switch("GPUKMEANS_DELTA_SUMS") != 0;
  // the update in the kernel's last block (GPUKMEANS_ORDER_FUSED=0: a
  // kernel of its own, as the other paths)
  plan.ord_fused = env_switch("GPUKMEANS_ORDER_FUSED") != 0;
  if (!ordered_sorted(D) || plan.path != 0 || (plan.dm != 1 && plan.dm != 2)) return cudaSuccess;
  const bool two = plan.dm == 2;
  plan.ord_smem = D->single ? (two ? wbox_smem_bytes<float, 2>(k, D->d) : wbox_smem_bytes<float, 1>(k, D->d))
                            : (two ? wbox_smem_bytes<double, 2>(k, D->d) : wbox_smem_bytes<double, 1>(k, D->d));
  const cudaError_t e = D->single ? (two ? wbox_blocks<float, 2>(D, plan, plan.ord_grid)
                                         : wbox_blocks<float, 1>(D, plan, plan.ord_grid))
                                  : (two ? wbox_blocks<double, 2>(D, plan, plan.ord_grid)
                                         : wbox_blocks<double, 1>(D, plan, plan.ord_grid));
  if (e != cudaSuccess) {
    cudaGetLastError();  // (the kernel cannot run here: the plan as it was)
    return cudaSuccess;
  }
  plan.ordered = true;
  return cudaSuccess;
}

cudaError_t launch_assign_ordered(const gk_cuda_data *D, const Plan &plan, const void *cen, int k, State *st,
                                  int max_iter, u64 *acc, unsigned int *counts, const int *scale, double *upd_cen_d,
                                  float *upd_cen_f, bool first, cudaStream_t s) {
  const bool two = plan.dm == 2;
  const bool gather = D->ord_state == 2;  // (the copy not made yet: a first iteration makes it)
  if (gather && !first) return cudaErrorInvalidValue;
  const cudaError_t e =
      D->single ? (two ? wbox_launch<float, 2>(D, plan, cen, k, st, max_iter, acc, counts, scale, upd_cen_d,
                                               upd_cen_f, first, gather, s)
                       : wbox_launch<float, 1>(D, plan, cen, k, st, max_iter, acc, counts, scale, upd_cen_d,
                                               upd_cen_f, first, gather, s))
                : (two ? wbox_launch<double, 2>(D, plan, cen, k, st, max_iter, acc, counts, scale, upd_cen_d,
                                                upd_cen_f, first, gather, s)
                       : wbox_launch<double, 1>(D, plan, cen, k, st, max_iter, acc, counts, scale, upd_cen_d,
                                                upd_cen_f, first, gather, s));
  if (e == cudaSuccess && gather) D->ord_state = 1;  // (queued: every later kernel on the stream sees the copy)
  return e;
}

}  // namespace gk

extern "C" int gk_cuda_grid_stats(gk_cuda_data *D, int64_t *seen, int64_t *served) {
  if (!D) return GK_CUDA_INVALID;
  if (seen) *seen = D->grid_seen;
  if (served) *served = D->grid_served;
  return GK_CUDA_OK;
}

extern "C" int gk_cuda_assign(gk_cuda_data *data, int k, const double *centers, int *cluster,
                              char *err, size_t errlen) {
  if (!data || !centers || !cluster || k < 1) {
    set_msg(err, errlen, "gk_cuda_assign: invalid arguments");
    return GK_CUDA_INVALID;
  }
  GK_CHECK(cudaSetDevice(data->device), "selecting the CUDA device");
  const long long n = data->n;
  const int d = data->d;
  const size_t kd = (size_t)k * d;
  size_t free_b = 0, total_b = 0;
  GK_CHECK(cudaMemGetInfo(&free_b, &total_b), "querying device memory");
  double need = (double)n * sizeof(int) + (double)kd * 12.0;
  if (need > (double)free_b) {
    set_msg(err, errlen, "labels need %.2f GiB on device %d but only %.2f GiB is free", gib(need),
            data->device, gib((double)free_b));
    return GK_CUDA_OUT_OF_MEMORY;
  }
  // centers in the stored coordinates (shifted in single precision)
  std::vector<double> c(kd);
  for (int j = 0; j < d; ++j)
    for (int cc = 0; cc < k; ++cc)
      c[cc + (size_t)k * j] = centers[cc + (size_t)k * j] - (data->single ? data->shift[j] : 0.0);
  DevBuf<double> cen_d;
  DevBuf<float> cen_f;
  DevBuf<int> labels;
  GK_CHECK(cen_d.alloc(kd), "allocating centers");
  GK_CHECK(labels.alloc((size_t)n), "allocating labels");
  cudaStream_t s = data->stream;
  GK_CHECK(cudaMemcpyAsync(cen_d.p, c.data(), kd * sizeof(double), cudaMemcpyHostToDevice, s), "copying centers");
  GK_CHECK(cudaMemsetAsync(labels.p, 0xff, (size_t)n * sizeof(int), s), "initialising labels");
  const void *cen = cen_d.p;
  if (data->single) {
    GK_CHECK(cen_f.alloc(kd), "allocating centers");
    GK_CHECK(launch_to_float(cen_d.p, cen_f.p, (long long)kd, s), "converting centers");
    cen = cen_f.p;
  }
  GK_CHECK(prepare_assign(data, k, s), "preparing the assignment");
  // over the chunks of streamed x (resident x is one chunk)
  int st = for_each_chunk(data, labels.p, [&](const gk_cuda_data &V) -> cudaError_t {
    Plan plan;
    cudaError_t e = plan_assign(&V, k, false, plan);
    return e != cudaSuccess ? e : launch_assign(&V, plan, cen, k, V.labels, nullptr, 1, false, nullptr, nullptr, nullptr, s);
  }, err, errlen);
  if (st != GK_CUDA_OK) return st;
  return staged_download(data, labels.p, cluster, n, 1, s, err, errlen);
}
