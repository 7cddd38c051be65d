// bounds.cu: exact accelerated Lloyd iterations (distance bounds, Hamerly)
// for gk_cuda_lloyd: buffers, margins and launches.  The kernels and the
// argument that the labels are those of plain Lloyd, bit for bit, are in
// detail/bounds_kernels.cuh; lloyd.cu decides when bounded iterations run.
#include <algorithm>
#include <cmath>

#include "detail/bounds_kernels.cuh"
#include "detail/engine.hpp"

namespace gk {

namespace {

size_t al256(size_t b) { return (b + 255) / 256 * 256; }

BoundsMargin margin(int d) {
  const double gamma = (d + 4.0) * 0x1p-53 * 1.1;
  BoundsMargin m;
  // host arithmetic to nearest, then one ulp outward
  m.g_up = std::nextafter(1.0 + gamma, 2.0);
  m.g_dn = std::nextafter(1.0 - gamma, 0.0);
  m.inv_dn = std::nextafter(1.0 / (1.0 - gamma), 2.0);
  m.inv_up = std::nextafter(1.0 / (1.0 + gamma), 0.0);
  m.eta = (d + 2.0) * 0x1p-1070;
  m.eta2 = 2.0 * m.eta;
  return m;
}

unsigned int grid_for(const gk_cuda_data *D, long long work, int per_sm) {
  const long long g = std::min<long long>((work + kBoundsThreads - 1) / kBoundsThreads, (long long)per_sm * D->sms);
  return (unsigned int)std::max<long long>(1, g);
}

// The assignment half of a bounded iteration: the first (a full exact
// assignment that sets the bounds, its sums from scratch into the zeroed
// acc/counts) or a later one (the bounds' filter, then the active points,
// their moves added to acc/counts).
template <typename T>
cudaError_t assign(const gk_cuda_data *D, const Plan &plan, int k, const Workspace &w, const BoundsBufs &b,
                   bool first, int max_iter, const int *scale, cudaStream_t s) {
  const T *x = (const T *)D->x;
  const T *cen = D->single ? (const T *)w.cen_f : (const T *)w.cen_d;
  const BoundsMargin m = margin(D->d);
  if (first) {
    k_bounds_init<T><<<grid_for(D, D->n, 8), kBoundsThreads, 0, s>>>(x, D->n, D->d, cen, k, D->labels, b.u, b.l, m,
                                                                     w.st, max_iter);
    cudaError_t e = cudaGetLastError();
    return e != cudaSuccess ? e : launch_accumulate(D, plan, D->labels, k, w.st, max_iter, w.acc, w.counts, scale, s);
  }
  k_bounds_filter<T><<<grid_for(D, D->n, 16), kBoundsThreads, 0, s>>>(x, D->n, D->d, cen, k, D->labels, b.u, b.l,
                                                                      b.move, b.top, m, b.active, w.st, max_iter);
  k_bounds_assign<T><<<grid_for(D, D->n, 4), kBoundsThreads, 0, s>>>(x, D->n, D->d, cen, k, D->labels, b.u, b.l, m,
                                                                     b.active, w.acc, w.counts, scale, w.st,
                                                                     max_iter);
  return cudaGetLastError();
}

// The update half: new centers from the sums (acc, counts), the centers'
// movements for the next filter.
template <typename T>
cudaError_t update(const gk_cuda_data *D, const Plan &plan, int k, const Workspace &w, const BoundsBufs &b,
                   const u64 *acc, const unsigned int *counts, int max_iter, const int *scale, cudaStream_t s) {
  const T *cen = D->single ? (const T *)w.cen_f : (const T *)w.cen_d;
  k_bounds_finalize<T><<<plan.fin_grid, 256, 0, s>>>(w.st, max_iter, acc, counts, w.cen_d, w.cen_f, (T *)b.prev, k,
                                                     D->d, scale, b.hist, kBoundsHist);
  k_bounds_moves<T><<<1, 1024, 0, s>>>((const T *)b.prev, cen, k, D->d, b.move, b.top, w.st, max_iter);
  return cudaGetLastError();
}

}  // namespace

bool bounds_wanted(const gk_cuda_data *D, int k, long long rows) {
  // The default (0) is "where they pay" (3): on an H100 (2026-11-23) the GPU
  // suite passed with bounds forced from the second iteration, and bounded
  // fits to convergence took 1.0-22x less compute than plain ones in double
  // (inst/bench/results/convergence-2026-11-23-H100.txt).
  if (D->opts.bounds == 1 || k < 2) return false;
  if (D->opts.bounds == 2) return true;
  // below ~4 million point-center pairs an iteration is a few microseconds
  return (double)(rows > 0 ? rows : D->n) * k >= 4194304.0;
}

bool bounds_buffers(gk_cuda_data *D, int k, cudaStream_t s, BoundsBufs &b) {
  const size_t n = (size_t)D->n, esz = D->single ? sizeof(float) : sizeof(double);
  const size_t o_l = al256(n * sizeof(float)), o_act = o_l + al256(n * sizeof(float));
  const size_t o_move = o_act + al256(n * sizeof(unsigned int)), o_top = o_move + al256((size_t)k * sizeof(double));
  const size_t o_prev = o_top + 256, o_hist = o_prev + al256((size_t)k * D->d * esz);
  const size_t total = o_hist + kBoundsHist * sizeof(u64);
  if (D->bounds_bytes < total) {
    if (D->bounds) cudaFree(D->bounds);
    D->bounds = nullptr;
    D->bounds_bytes = 0;
    if (!optional_fits(D, total)) {
      return false;
    }
    if (cudaMalloc(&D->bounds, total) != cudaSuccess) {
      cudaGetLastError();
      D->bounds = nullptr;
      return false;
    }
    D->bounds_bytes = total;
  }
  char *p = (char *)D->bounds;
  b.u = (float *)p;
  b.l = (float *)(p + o_l);
  b.active = (unsigned int *)(p + o_act);
  b.move = (double *)(p + o_move);
  b.top = (double *)(p + o_top);
  b.prev = p + o_prev;
  b.hist = (u64 *)(p + o_hist);
  if (cudaMemsetAsync(b.hist, 0, kBoundsHist * sizeof(u64), s) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return true;
}

cudaError_t launch_bounds_assign(const gk_cuda_data *D, const Plan &plan, int k, const Workspace &w,
                                 const BoundsBufs &b, bool first, int max_iter, const int *scale, cudaStream_t s) {
  return D->single ? assign<float>(D, plan, k, w, b, first, max_iter, scale, s)
                   : assign<double>(D, plan, k, w, b, first, max_iter, scale, s);
}

cudaError_t launch_bounds_update(const gk_cuda_data *D, const Plan &plan, int k, const Workspace &w,
                                 const BoundsBufs &b, const u64 *acc, const unsigned int *counts, int max_iter,
                                 const int *scale, cudaStream_t s) {
  return D->single ? update<float>(D, plan, k, w, b, acc, counts, max_iter, scale, s)
                   : update<double>(D, plan, k, w, b, acc, counts, max_iter, scale, s);
}

}  // namespace gk
