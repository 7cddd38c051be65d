// kbench.cu: per-kernel timings of one Lloyd iteration's pieces (dev tool).
//   kbench n d k single      (uniform data; CUDA events; median of 5)
#include <algorithm>
#include <stdio.h>
#include <stdlib.h>
#include <vector>

#include "detail/engine.hpp"
#include "detail/tc_tiles.cuh"

using namespace gk;

#define OK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

int main(int argc, char **argv) {
  long long n = argc > 1 ? atoll(argv[1]) : 1000000;
  int d = argc > 2 ? atoi(argv[2]) : 16, k = argc > 3 ? atoi(argv[3]) : 256;
  int single = argc > 4 ? atoi(argv[4]) : 1;
  std::vector<double> x((size_t)n * d);
  unsigned long long r = 88172645463325252ULL;
  for (auto &v : x) { r ^= r << 13; r ^= r >> 7; r ^= r << 17; v = (r >> 11) * (1.0 / 9007199254740992.0); }
  gk_cuda_options o = {0, single, 0, 0, 0, 0.0, 0};
  gk_cuda_data *D;
  char err[256];
  if (gk_cuda_upload(x.data(), n, d, &o, nullptr, &D, nullptr, nullptr, err, sizeof err)) { printf("%s\n", err); return 1; }
  size_t kd = (size_t)k * d;
  std::vector<double> c(kd);
  // centers in the stored coordinates (single precision stores x - shift: without
  // it, v8's kbench put all centers off the data and the labels on few clusters)
  for (int cc = 0; cc < k; ++cc) for (int j = 0; j < d; ++j) c[cc + (size_t)k * j] = x[((long long)cc * 7919 + 13) % n + n * j] - D->shift[j];
  double *cen_d; float *cen_f; int *labels; u64 *acc, *wacc; unsigned *counts, *wcnt; State *st;
  OK(cudaMalloc(&cen_d, kd * 8)); OK(cudaMalloc(&cen_f, kd * 4)); OK(cudaMalloc(&labels, n * 4));
  OK(cudaMalloc(&acc, kd * 16)); OK(cudaMalloc(&counts, k * 8)); OK(cudaMalloc(&wacc, k * 16)); OK(cudaMalloc(&wcnt, k * 4));
  OK(cudaMalloc(&st, sizeof(State)));
  OK(cudaMemcpy(cen_d, c.data(), kd * 8, cudaMemcpyHostToDevice));
  OK(launch_to_float(cen_d, cen_f, kd, 0));
  OK(cudaMemset(labels, 0xff, n * 4)); OK(cudaMemset(acc, 0, kd * 16)); OK(cudaMemset(counts, 0, k * 8));
  OK(cudaMemset(st, 0, sizeof(State)));
  OK(prepare_assign(D, k, 0));
  Plan p;
  OK(plan_assign(D, k, true, p)); OK(plan_update(D, k, p));
  Plan pa;
  OK(plan_assign(D, k, false, pa));
  const void *cen = single ? (const void *)cen_f : (const void *)cen_d;
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  auto tm = [&](const char *name, auto fn) {
    std::vector<float> v;
    for (int rep = 0; rep < 6; ++rep) {
      cudaEventRecord(a); fn(); cudaEventRecord(b); OK(cudaEventSynchronize(b));
      float ms; cudaEventElapsedTime(&ms, a, b); if (rep) v.push_back(ms);
    }
    OK(cudaGetLastError());
    std::sort(v.begin(), v.end());
    printf("  %-28s %9.4f ms\n", name, v[v.size() / 2]);
  };
  printf("n=%lld d=%d k=%d %s path=%d tf32=%d packed=%d wgmma=%d grid=%d acc(gx=%d gy=%d jb=%d smem=%zu shared=%d)\n", n, d, k, single ? "single" : "double",
         p.path, pa.tf32, pa.tc_x != nullptr, (int)pa.tc_wg, p.grid, p.acc_gx, p.acc_gy, p.acc_jb, p.acc_smem, (int)p.acc_shared);
  tm("assign (labels only)", [&] { OK(launch_assign(D, pa, cen, k, labels, st, 1000, false, nullptr, nullptr, nullptr, 0)); });
  if (pa.tc_x) {
    Plan q = pa;
    q.tc_x = nullptr;
    tm("assign TF32 unpacked (before)", [&] { OK(launch_assign(D, q, cen, k, labels, st, 1000, false, nullptr, nullptr, nullptr, 0)); });
    OK(launch_assign(D, pa, cen, k, labels, st, 1000, false, nullptr, nullptr, nullptr, 0));
  }
  if (pa.tc_wg) {  // the wgmma argmin against the mma.sync one: time, and the same labels from labels -1
    Plan q = pa;
    q.tc_wg = false;
    tm("assign mma.sync (not wgmma)", [&] { OK(launch_assign(D, q, cen, k, labels, st, 1000, false, nullptr, nullptr, nullptr, 0)); });
    std::vector<int> la(n), lb(n);
    OK(cudaMemset(labels, 0xff, n * 4));
    OK(launch_assign(D, q, cen, k, labels, st, 1000, false, nullptr, nullptr, nullptr, 0));
    OK(cudaMemcpy(la.data(), labels, n * 4, cudaMemcpyDeviceToHost));
    OK(cudaMemset(labels, 0xff, n * 4));
    OK(launch_assign(D, pa, cen, k, labels, st, 1000, false, nullptr, nullptr, nullptr, 0));
    OK(cudaMemcpy(lb.data(), labels, n * 4, cudaMemcpyDeviceToHost));
    long long diff = 0, first = -1;
    for (long long i = 0; i < n; ++i)
      if (la[i] != lb[i]) { if (first < 0) first = i; ++diff; }
    printf("  wgmma labels vs mma.sync: %lld of %lld differ", diff, n);
    if (first >= 0) printf(" (first row %lld: %d against %d)", first, lb[first], la[first]);
    printf("\n");
  }
  if (pa.path == 1 && single && d > 8) {
    Plan q = pa;
    q.tf32 = 1 - pa.tf32;
    q.tc_x = nullptr;  // (the packed kernel is a tensor-core kernel: not the alternative)
    tm(q.tf32 ? "assign TF32 (alternative)" : "assign SIMT (alternative)",
       [&] { OK(launch_assign(D, q, cen, k, labels, st, 1000, false, nullptr, nullptr, nullptr, 0)); });
    OK(launch_assign(D, pa, cen, k, labels, st, 1000, false, nullptr, nullptr, nullptr, 0));
  }
  if (pa.tc_x && single) {
    const int kp = tc_kp(k);
    tm("pack centers (in assign)", [&] {
      k_tc_pack_centers<<<kp / 128, 128>>>(cen_f, k, k, kp, d, 0.f, TcPack::argmin, pa.tc_cen, st, 1000);
    });
  }
  if (p.path == 0)
    tm("assign+sums (fused)", [&] { OK(launch_assign(D, p, cen, k, labels, st, 1000, true, acc, counts, D->d_scale, 0)); });
  else
    tm("accumulate", [&] { OK(launch_accumulate(D, p, labels, k, st, 1000, acc, counts, D->d_scale, 0)); });
  {  // the small-d filter's exact share over the runs above (double)
    State hs;
    OK(cudaMemcpy(&hs, st, sizeof hs, cudaMemcpyDeviceToHost));
    if (hs.df_points)
      printf("  small-d filter: %.4f%% of points exact (%llu of %llu)\n", 100.0 * hs.df_exact / hs.df_points,
             (unsigned long long)hs.df_exact, (unsigned long long)hs.df_points);
  }
  tm("finalize", [&] { OK(launch_finalize(D, p, k, st, 1000, acc, counts, cen_d, cen_f, D->d_scale, 0)); });
  tm("withinss", [&] { OK(launch_withinss(D, p, labels, cen_d, k, (unsigned *)counts, wacc, wcnt, 0)); });
  {  // as a fit that carries its sums runs it (plan_delta's buffer free for the terms)
    Plan q = p;
    OK(plan_delta(D, q, 0));
    if (q.delta) tm("withinss (fit, carried sums)", [&] { OK(launch_withinss(D, q, labels, cen_d, k, (unsigned *)counts, wacc, wcnt, 0)); });
  }
  gk_cuda_free(D);
  return 0;
}
