// bproto.cu: a probe of problem B's step (issue 15; dev tool, not the engine).
//   bproto [n] [k]        (blobs as bench.R's B: d = 2, centers U(0, 100),
//                          noise N(0, 1); single precision; CUDA events,
//                          median of 15)
// What the small-d step's parts cost, from the engine's own kernels and
// pieces (small_pass, the limbs, the grid's build):
//   - the engine's scan and grid steps (launch_assign), fused sums and not;
//   - small_pass with a near() that costs nothing (a label from x's integer
//     part): the x loads, labels and sums alone;
//   - a grid whose lists carry the centers' values (float4: -2c0, -2c1,
//     |c|^2, index) instead of their indices, so that a candidate costs one
//     16-byte load and no index arithmetic; its cell in float.
// Each variant's labels are checked against the scan's.
#include <algorithm>
#include <stdio.h>
#include <stdlib.h>
#include <vector>
#include <random>

#include "detail/engine.hpp"
#include "detail/assign_kernels.cuh"
#include "detail/cell_grid.cuh"

#define OK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

namespace gk {
namespace {

// small_pass with a label from x alone (no distances).
template <bool UPDATE>
__global__ void __launch_bounds__(256)
k_trivial(const float *__restrict__ x, long long n, int d, int k, int *__restrict__ labels, u64 *acc,
          unsigned int *counts, const int *__restrict__ scale) {
  constexpr int P = 4;
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ unsigned int sh_changed;
  unsigned int *slimb = reinterpret_cast<unsigned int *>(smem);
  unsigned int *scnt = slimb + (UPDATE ? 4 * (size_t)k * d : 0);
  if (threadIdx.x == 0) sh_changed = 0;
  double pw[2];
  small_sums_begin<2, UPDATE>(slimb, scnt, k, d, scale, pw);
  __syncthreads();
  small_pass<float, 2, UPDATE, P>(x, n, d, k, labels, slimb, scnt, pw, acc, counts, &sh_changed,
                                  [&](const float (&xr)[P][2], unsigned int valid, int (&bi)[P]) {
#pragma unroll
                                    for (int r = 0; r < P; ++r)
                                      bi[r] = (int)(fabsf(xr[r][0]) * 1.7f + fabsf(xr[r][1]) * 2.3f) % k;
                                  });
}

// The float4 lists: cell c's entries at flist[c * cap ...], fcount[c] of
// them (-1: scan).  Made from the engine's build (index lists).
__global__ void k_expand(const float *__restrict__ cen, int k, GridBufs g, int cells, int cap, float4 *flist,
                         int *fcount, float4 *fbox) {
  const int cell = blockIdx.x * blockDim.x + threadIdx.x;
  if (cell == 0) {
    const GridBox &b = *g.box;
    *fbox = make_float4(b.usable ? (float)b.lo[0] : 0.f, (float)b.lo[1], (float)b.inv[0], (float)b.inv[1]);
    fbox[1] = make_float4(__int_as_float(b.usable ? b.g[0] : 0), __int_as_float(b.g[1]), 0.f, 0.f);
  }
  if (cell >= cells) return;
  int c = g.counts[cell];
  if (c > cap) c = -1;
  fcount[cell] = c;
  for (int t = 0; t < (c < 0 ? 0 : c); ++t) {
    const int i = g.lists[(size_t)cell * kGridCap + t];
    const float v0 = cen[i], v1 = cen[i + k];
    float cc = fmaf(v0, v0, 0.f);
    cc = fmaf(v1, v1, cc);
    flist[(size_t)cell * cap + t] = make_float4(-2.0f * v0, -2.0f * v1, cc, __int_as_float(i));
  }
}

// The step through the float4 lists (cells the engine's, so the lists are
// complete for a point of the cell: the cell from x in float lies within
// 1/16 of a cell of the true one, inside the build's widened box).
template <bool UPDATE>
__global__ void __launch_bounds__(256)
k_fgrid(const float *__restrict__ x, long long n, int d, const float *__restrict__ cen, int k,
        int *__restrict__ labels, u64 *acc, unsigned int *counts, const int *__restrict__ scale,
        const float4 *__restrict__ flist, const int *__restrict__ fcount, const float4 *__restrict__ fbox, int cap) {
  constexpr int P = 4;
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ unsigned int sh_changed;
  unsigned int *slimb = reinterpret_cast<unsigned int *>(smem);
  float *sc = reinterpret_cast<float *>(slimb + (UPDATE ? 4 * (size_t)k * d : 0));
  unsigned int *scnt = reinterpret_cast<unsigned int *>(sc + Small<float, 2>::values(k));
  if (threadIdx.x == 0) sh_changed = 0;
  Small<float, 2>::load(sc, cen, k, d, false);
  double pw[2];
  small_sums_begin<2, UPDATE>(slimb, scnt, k, d, scale, pw);
  const float4 b0 = fbox[0], b1 = fbox[1];
  const int g0 = __float_as_int(b1.x), g1 = __float_as_int(b1.y);
  __syncthreads();
  small_pass<float, 2, UPDATE, P>(
      x, n, d, k, labels, slimb, scnt, pw, acc, counts, &sh_changed,
      [&](const float (&xr)[P][2], unsigned int valid, int (&bi)[P]) {
        int cell[P], cnt[P], cmax = 0;
        float best[P];
#pragma unroll
        for (int r = 0; r < P; ++r) {
          bi[r] = -1;
          best[r] = pos_inf<float>();
          const float t0 = (xr[r][0] - b0.x) * b0.z, t1 = (xr[r][1] - b0.y) * b0.w;
          const bool in = ((valid >> r) & 1u) && g0 > 0 && t0 >= 0 && t1 >= 0 && t0 < g0 && t1 < g1;
          cell[r] = in ? min((int)t0, g0 - 1) + g0 * min((int)t1, g1 - 1) : 0;
          cnt[r] = in ? __ldg(&fcount[cell[r]]) : -1;
          cmax = max(cmax, cnt[r]);
        }
        for (int u = 0; u < cmax; ++u) {
#pragma unroll
          for (int r = 0; r < P; ++r) {
            if (u >= cnt[r]) continue;
            const float4 e = __ldg(&flist[(size_t)cell[r] * cap + u]);
            const float dd = fmaf(xr[r][1], e.y, fmaf(xr[r][0], e.x, e.z));
            if (dd < best[r]) { best[r] = dd; bi[r] = __float_as_int(e.w); }
          }
        }
#pragma unroll
        for (int r = 0; r < P; ++r) {
          if (!((valid >> r) & 1u) || cnt[r] >= 0) continue;
          for (int c = 0; c < k; ++c) {
            const float dd = grid_dist<float, 2>(xr[r], sc, c);
            if (dd < best[r]) { best[r] = dd; bi[r] = c; }
          }
        }
      });
}

// k_assign_small's body with a chosen occupancy (MINB blocks of 256 an SM)
// and P points a thread.
template <bool UPDATE, int MINB, int P>
__global__ void __launch_bounds__(256, MINB)
k_scan_occ(const float *__restrict__ x, long long n, int d, const float *__restrict__ cen, int k,
           int *__restrict__ labels, u64 *__restrict__ acc, unsigned int *__restrict__ counts,
           const int *__restrict__ scale) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ unsigned int sh_changed;
  unsigned int *slimb = reinterpret_cast<unsigned int *>(smem);
  float *sc = reinterpret_cast<float *>(slimb + (UPDATE ? 4 * (size_t)k * d : 0));
  unsigned int *scnt = reinterpret_cast<unsigned int *>(sc + Small<float, 2>::values(k));
  if (threadIdx.x == 0) sh_changed = 0;
  Small<float, 2>::load(sc, cen, k, d, false);
  double pw[2];
  small_sums_begin<2, UPDATE>(slimb, scnt, k, d, scale, pw);
  __syncthreads();
  small_pass<float, 2, UPDATE, P>(x, n, d, k, sc, labels, slimb, scnt, pw, acc, counts, &sh_changed);
}

template <typename Kernel>
int blocks_for(Kernel kern, size_t smem, long long n, int sms, int ppt = 4) {
  OK(cudaFuncSetAttribute((const void *)kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  int per_sm = 0;
  OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, 256, smem));
  return (int)std::min<long long>((n + 256LL * ppt - 1) / (256LL * ppt), (long long)std::max(per_sm, 1) * sms);
}

}  // namespace
}  // namespace gk

using namespace gk;

int main(int argc, char **argv) {
  const long long n = argc > 1 ? atoll(argv[1]) : 1000000;
  const int d = 2, k = argc > 2 ? atoi(argv[2]) : 100;
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> U(0, 100);
  std::normal_distribution<double> N01(0, 1);
  std::vector<double> mu((size_t)k * d), x((size_t)n * d);
  for (auto &v : mu) v = U(rng);
  for (long long i = 0; i < n; ++i) {
    const int c = (int)(rng() % k);
    for (int j = 0; j < d; ++j) x[i + n * j] = mu[c + (size_t)k * j] + N01(rng);
  }
  gk_cuda_options o = {0, 1, 0, 0, 0, 0.0, 0};
  gk_cuda_data *D;
  char err[256];
  setenv("GPUKMEANS_GRID", "1", 1);
  if (gk_cuda_upload(x.data(), n, d, &o, nullptr, &D, nullptr, nullptr, err, sizeof err)) { printf("%s\n", err); return 1; }
  int sms = 0;
  OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop;
  OK(cudaGetDeviceProperties(&prop, 0));
  const size_t kd = (size_t)k * d;
  std::vector<double> c(kd);
  for (int cc = 0; cc < k; ++cc) {
    const long long i = (long long)(rng() % n);
    for (int j = 0; j < d; ++j) c[cc + (size_t)k * j] = x[i + n * j] - D->shift[j];
  }
  double *cen_d; float *cen_f; int *labels, *ref; u64 *acc; unsigned *counts; State *st;
  OK(cudaMalloc(&cen_d, kd * 8)); OK(cudaMalloc(&cen_f, kd * 4)); OK(cudaMalloc(&labels, n * 4)); OK(cudaMalloc(&ref, n * 4));
  OK(cudaMalloc(&acc, kd * 16)); OK(cudaMalloc(&counts, (k + 1) * 8));
  OK(cudaMalloc(&st, sizeof(State)));
  OK(cudaMemcpy(cen_d, c.data(), kd * 8, cudaMemcpyHostToDevice));
  OK(launch_to_float(cen_d, cen_f, kd, 0));
  OK(cudaMemset(acc, 0, kd * 16)); OK(cudaMemset(counts, 0, (k + 1) * 8));
  OK(cudaMemset(st, 0, sizeof(State)));
  OK(prepare_assign(D, k, 0));
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  auto tm = [&](const char *name, auto fn) {
    std::vector<float> v;
    for (int rep = 0; rep < 16; ++rep) {
      cudaEventRecord(a); fn(); cudaEventRecord(b); OK(cudaEventSynchronize(b));
      float ms; cudaEventElapsedTime(&ms, a, b); if (rep) v.push_back(ms);
    }
    OK(cudaGetLastError());
    std::sort(v.begin(), v.end());
    printf("  %-40s %8.2f us\n", name, 1000 * v[v.size() / 2]);
  };
  auto same = [&](const char *name) {
    std::vector<int> h1(n), h2(n);
    OK(cudaMemcpy(h1.data(), labels, n * 4, cudaMemcpyDeviceToHost));
    OK(cudaMemcpy(h2.data(), ref, n * 4, cudaMemcpyDeviceToHost));
    long long diff = 0;
    for (long long i = 0; i < n; ++i) diff += h1[i] != h2[i];
    printf("  %-40s %lld labels differ from the scan's\n", name, diff);
  };
  printf("bproto | %s | n=%lld d=2 k=%d single | %d SMs\n", prop.name, n, k, sms);
  Plan scan, scanu, grid, gridu, fin;
  setenv("GPUKMEANS_GRID", "0", 1);
  OK(plan_assign(D, k, false, scan)); OK(plan_assign(D, k, true, scanu)); OK(plan_update(D, k, scanu));
  setenv("GPUKMEANS_GRID", "1", 1);
  OK(plan_assign(D, k, false, grid)); OK(plan_assign(D, k, true, gridu)); OK(plan_update(D, k, gridu));
  fin = scanu;
  printf("  plans: scan grid=%d blocks; grid %s, %d cells, %d blocks\n", scanu.grid, gridu.gbuf ? "on" : "OFF",
         gridu.gcells, gridu.grid);
  OK(cudaMemset(ref, 0xff, n * 4));
  OK(launch_assign(D, scan, cen_f, k, ref, nullptr, 1000, false, nullptr, nullptr, nullptr, 0));
  tm("engine scan, labels only", [&] { OK(launch_assign(D, scan, cen_f, k, labels, nullptr, 1000, false, nullptr, nullptr, nullptr, 0)); });
  same("engine scan");
  tm("engine scan + sums (B's step)", [&] { OK(launch_assign(D, scanu, cen_f, k, labels, nullptr, 1000, true, acc, counts, D->d_scale, 0)); });
  tm("engine grid build + step, labels only", [&] { OK(launch_assign(D, grid, cen_f, k, labels, nullptr, 1000, false, nullptr, nullptr, nullptr, 0)); });
  same("engine grid");
  tm("engine grid build + step + sums", [&] { OK(launch_assign(D, gridu, cen_f, k, labels, nullptr, 1000, true, acc, counts, D->d_scale, 0)); });
  const GridBufs g = grid_bufs(gridu.gbuf, gridu.gcells);
  tm("engine grid build alone", [&] {
    k_grid_build<float><<<gridu.gblocks, 256, (size_t)d * k * sizeof(float)>>>(cen_f, k, d, g, true, nullptr, 1000);
  });
  tm("state reset (memset)", [&] { OK(cudaMemsetAsync(st, 0, sizeof(State), 0)); });
  tm("state reset + finalize (engine)", [&] {
    OK(cudaMemsetAsync(st, 0, sizeof(State), 0));
    OK(launch_finalize(D, fin, k, st, 1000, acc, counts, cen_d, cen_f, D->d_scale, 0));
  });
  OK(launch_to_float(cen_d, cen_f, kd, 0));  // (finalize made centers from repeated sums: restore)
  OK(cudaMemcpy(cen_d, c.data(), kd * 8, cudaMemcpyHostToDevice));
  OK(launch_to_float(cen_d, cen_f, kd, 0));
  {
    const size_t sm1 = small_smem_bytes<float, 2>(k, d, true), sm0 = small_smem_bytes<float, 2>(k, d, false);
    auto occ = [&](const char *name, auto k0, auto k1, int ppt) {
      int r0 = 0, r1 = 0;
      cudaFuncAttributes fa;
      OK(cudaFuncGetAttributes(&fa, (const void *)k0)); r0 = fa.numRegs;
      OK(cudaFuncGetAttributes(&fa, (const void *)k1)); r1 = fa.numRegs;
      const int b0 = blocks_for(k0, sm0, n, sms, ppt), b1 = blocks_for(k1, sm1, n, sms, ppt);
      char lab[128];
      snprintf(lab, sizeof lab, "%s labels (%d regs, %d blocks)", name, r0, b0);
      tm(lab, [&] { k0<<<b0, 256, sm0>>>((const float *)D->x, n, d, cen_f, k, labels, acc, counts, D->d_scale); });
      same(name);
      snprintf(lab, sizeof lab, "%s + sums (%d regs, %d blocks)", name, r1, b1);
      tm(lab, [&] { k1<<<b1, 256, sm1>>>((const float *)D->x, n, d, cen_f, k, labels, acc, counts, D->d_scale); });
    };
    occ("scan P4 min1", k_scan_occ<false, 1, 4>, k_scan_occ<true, 1, 4>, 4);
    occ("scan P4 min5", k_scan_occ<false, 5, 4>, k_scan_occ<true, 5, 4>, 4);
    occ("scan P4 min6", k_scan_occ<false, 6, 4>, k_scan_occ<true, 6, 4>, 4);
    occ("scan P4 min8", k_scan_occ<false, 8, 4>, k_scan_occ<true, 8, 4>, 4);
    occ("scan P2 min1", k_scan_occ<false, 1, 2>, k_scan_occ<true, 1, 2>, 2);
    occ("scan P2 min6", k_scan_occ<false, 6, 2>, k_scan_occ<true, 6, 2>, 2);
    occ("scan P2 min8", k_scan_occ<false, 8, 2>, k_scan_occ<true, 8, 2>, 2);
    occ("scan P3 min6", k_scan_occ<false, 6, 3>, k_scan_occ<true, 6, 3>, 3);
  }
  {
    const size_t sm1 = 16 * kd + 4 * (size_t)k + 64, sm0 = 64;
    const int b1 = blocks_for(k_trivial<true>, sm1, n, sms), b0 = blocks_for(k_trivial<false>, sm0, n, sms);
    tm("small_pass, no distances, labels only", [&] { k_trivial<false><<<b0, 256, sm0>>>((const float *)D->x, n, d, k, labels, acc, counts, D->d_scale); });
    tm("small_pass, no distances, + sums", [&] { k_trivial<true><<<b1, 256, sm1>>>((const float *)D->x, n, d, k, labels, acc, counts, D->d_scale); });
  }
  for (int cap : {8, 12, 16}) {
    float4 *flist, *fbox; int *fcount;
    OK(cudaMalloc(&flist, (size_t)gridu.gcells * cap * 16)); OK(cudaMalloc(&fcount, gridu.gcells * 4)); OK(cudaMalloc(&fbox, 32));
    k_grid_build<float><<<gridu.gblocks, 256, (size_t)d * k * sizeof(float)>>>(cen_f, k, d, g, true, nullptr, 1000);
    k_expand<<<(gridu.gcells + 127) / 128, 128>>>(cen_f, k, g, gridu.gcells, cap, flist, fcount, fbox);
    OK(cudaDeviceSynchronize());
    std::vector<int> hc(gridu.gcells);
    OK(cudaMemcpy(hc.data(), fcount, hc.size() * 4, cudaMemcpyDeviceToHost));
    int over = 0, mx = 0; double mean = 0;
    for (int v : hc) { if (v < 0) ++over; else { mx = std::max(mx, v); mean += v; } }
    printf("  cap %d: cells %d, over cap %d, longest %d, mean %.2f\n", cap, (int)hc.size(), over, mx, mean / std::max<int>(1, hc.size() - over));
    const size_t sm1 = small_smem_bytes<float, 2>(k, d, true), sm0 = small_smem_bytes<float, 2>(k, d, false);
    const int b1 = blocks_for(k_fgrid<true>, sm1, n, sms), b0 = blocks_for(k_fgrid<false>, sm0, n, sms);
    tm("float4 lists: expand", [&] { k_expand<<<(gridu.gcells + 127) / 128, 128>>>(cen_f, k, g, gridu.gcells, cap, flist, fcount, fbox); });
    tm("float4 lists: step, labels only", [&] {
      k_fgrid<false><<<b0, 256, sm0>>>((const float *)D->x, n, d, cen_f, k, labels, acc, counts, D->d_scale, flist, fcount, fbox, cap);
    });
    same("float4 lists");
    tm("float4 lists: step + sums", [&] {
      k_fgrid<true><<<b1, 256, sm1>>>((const float *)D->x, n, d, cen_f, k, labels, acc, counts, D->d_scale, flist, fcount, fbox, cap);
    });
    cudaFree(flist); cudaFree(fcount); cudaFree(fbox);
  }
  gk_cuda_free(D);
  return 0;
}
