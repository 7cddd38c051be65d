// cub_dispatch_probe.cu: host enqueue time against device time of cub's radix
// sort of 1e6 (16-bit key, int row) pairs, as ordered.cu sorts them, launched
// directly and through a graph captured once (tools/cuda-dev/LOG.md, 2026-12-03).
//   nvcc -O2 -std=c++17 -gencode=arch=compute_90,code=sm_90 cub_dispatch_probe.cu -o cub_dispatch_probe
#include <cub/device/device_radix_sort.cuh>
#include <chrono>
#include <cstdio>
#include <vector>
#include <algorithm>
__global__ void keys(unsigned int *k, int *r, int n, unsigned s) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { unsigned h = (i * 2654435761u) ^ s; k[i] = (h >> 7) & 0xffff; r[i] = i; }
}
int main() {
  const int n = 1000000;
  unsigned int *k; int *r;
  cudaMalloc(&k, 2 * n * 4); cudaMalloc(&r, 2 * n * 4);
  cub::DoubleBuffer<unsigned int> kb(k, k + n); cub::DoubleBuffer<int> rb(r, r + n);
  size_t tb = 0; cub::DeviceRadixSort::SortPairs(nullptr, tb, kb, rb, n, 0, 16);
  void *tmp; cudaMalloc(&tmp, tb);
  cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  // the keys and their sort, as ordered.cu enqueues them (launched, or captured)
  auto enqueue = [&] {
    keys<<<(n + 255) / 256, 256, 0, s>>>(k, r, n, 1);
    cub::DoubleBuffer<unsigned int> kb2(k, k + n); cub::DoubleBuffer<int> rb2(r, r + n);
    cub::DeviceRadixSort::SortPairs(tmp, tb, kb2, rb2, n, 0, 16, s);
  };
  for (int mode = 0; mode < 2; ++mode) {
    cudaGraphExec_t ge = nullptr;
    if (mode == 1) {
      cudaGraph_t g;
      cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
      enqueue();
      cudaStreamEndCapture(s, &g);
      cudaGraphInstantiate(&ge, g, 0);
    }
    std::vector<double> host, dev, tot;
    for (int it = 0; it < 40; ++it) {
      cudaStreamSynchronize(s);
      auto t0 = std::chrono::steady_clock::now();
      cudaEventRecord(e0, s);
      if (mode == 0) enqueue();
      else cudaGraphLaunch(ge, s);
      cudaEventRecord(e1, s);
      auto t1 = std::chrono::steady_clock::now();
      cudaEventSynchronize(e1);
      auto t2 = std::chrono::steady_clock::now();
      float ms; cudaEventElapsedTime(&ms, e0, e1);
      host.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      dev.push_back(ms * 1000.0);
      tot.push_back(std::chrono::duration<double, std::micro>(t2 - t0).count());
    }
    auto med = [](std::vector<double> v) { std::sort(v.begin() + 5, v.end()); return v[5 + (v.size() - 5) / 2]; };
    printf("%s: host enqueue %.1f us, device (events) %.1f us, host until done %.1f us (medians of 35)\n",
           mode ? "graph" : "direct", med(host), med(dev), med(tot));
  }
  printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
