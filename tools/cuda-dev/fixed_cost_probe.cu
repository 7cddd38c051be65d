// fixed_cost_probe.cu: what the CUDA runtime calls of a small fit cost the
// host, one by one (problem A, 21 600 x 2 doubles: its upload, fit and
// release are nearly all fixed cost; tools/cuda-dev/LOG.md, 2026-12-03).
// Each call timed alone by the host clock, 25 times after 5 warm-ups,
// medians; the process's context made first.
//   nvcc -O2 -std=c++17 -gencode=arch=compute_90,code=sm_90 fixed_cost_probe.cu -o fixed_cost_probe
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

__global__ void empty_kernel(int *p) {
  if (p && threadIdx.x == 1234567) *p = 1;
}

namespace {

double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// median of reps timings of body(); before() and after() (untimed) set up
// and tear down each repetition
double timed(const std::function<void()> &before, const std::function<void()> &body,
             const std::function<void()> &after, int reps = 25) {
  std::vector<double> t;
  for (int r = 0; r < reps + 5; ++r) {
    before();
    const double t0 = now_us();
    body();
    const double t1 = now_us();
    after();
    if (r >= 5) t.push_back(t1 - t0);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void row(const char *what, double us) { printf("%-52s %9.1f us\n", what, us); }

}  // namespace

int main() {
  cudaFree(nullptr);  // (the context)
  auto none = [] {};
  const size_t a_bytes = 21600 * 2 * sizeof(double);
  std::vector<double> host(21600 * 2, 1.5);
  std::vector<int> lab(21600);
  for (size_t bytes : {(size_t)64 << 10, a_bytes + (1u << 16), (size_t)16 << 20, (size_t)48 << 20}) {
    void *p = nullptr;
    char what[80];
    snprintf(what, sizeof what, "cudaMalloc %zu KiB", bytes >> 10);
    row(what, timed(none, [&] { cudaMalloc(&p, bytes); }, [&] { cudaFree(p); }));
    snprintf(what, sizeof what, "cudaFree %zu KiB (idle device)", bytes >> 10);
    row(what, timed([&] { cudaMalloc(&p, bytes); cudaDeviceSynchronize(); }, [&] { cudaFree(p); }, none));
  }
  cudaStream_t s = nullptr;
  row("cudaStreamCreateWithFlags (non-blocking)",
      timed(none, [&] { cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking); }, [&] { cudaStreamDestroy(s); }));
  row("cudaStreamDestroy",
      timed([&] { cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking); }, [&] { cudaStreamDestroy(s); }, none));
  cudaEvent_t e[2];
  row("cudaEventCreate x 2", timed(none, [&] { cudaEventCreate(&e[0]); cudaEventCreate(&e[1]); },
                                   [&] { cudaEventDestroy(e[0]); cudaEventDestroy(e[1]); }));
  row("cudaEventDestroy x 2", timed([&] { cudaEventCreate(&e[0]); cudaEventCreate(&e[1]); },
                                    [&] { cudaEventDestroy(e[0]); cudaEventDestroy(e[1]); }, none));
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  void *dx = nullptr;
  cudaMalloc(&dx, 16 << 20);
  row("cudaMemcpyAsync H2D 338 KiB pageable + sync",
      timed(none, [&] { cudaMemcpyAsync(dx, host.data(), a_bytes, cudaMemcpyHostToDevice, s); cudaStreamSynchronize(s); }, none));
  row("cudaMemcpyAsync D2H 84 KiB pageable + sync",
      timed(none, [&] { cudaMemcpyAsync(lab.data(), dx, lab.size() * sizeof(int), cudaMemcpyDeviceToHost, s); cudaStreamSynchronize(s); }, none));
  unsigned long long small[4];
  row("cudaMemcpyAsync D2H 32 B + sync (a round trip)",
      timed(none, [&] { cudaMemcpyAsync(small, dx, sizeof small, cudaMemcpyDeviceToHost, s); cudaStreamSynchronize(s); }, none));
  row("empty kernel launch (enqueue only)", timed(none, [&] { empty_kernel<<<1, 32, 0, s>>>(nullptr); }, [&] { cudaStreamSynchronize(s); }));
  row("empty kernel launch + sync", timed(none, [&] { empty_kernel<<<1, 32, 0, s>>>(nullptr); cudaStreamSynchronize(s); }, none));
  row("cudaMemsetAsync 84 KiB (enqueue only)", timed(none, [&] { cudaMemsetAsync(dx, 0xff, 84 << 10, s); }, [&] { cudaStreamSynchronize(s); }));
  size_t fr = 0, tot = 0;
  row("cudaMemGetInfo", timed(none, [&] { cudaMemGetInfo(&fr, &tot); }, none));
  int v = 0;
  row("cudaDeviceGetAttribute x 4", timed(none, [&] {
        for (int q = 0; q < 4; ++q) cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, 0);
      }, none));
  row("cudaFuncSetAttribute (max dynamic smem)", timed(none, [&] {
        cudaFuncSetAttribute((const void *)empty_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);
      }, none));
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  float ms = 0;
  row("two events recorded around nothing + elapsed", timed(none, [&] {
        cudaEventRecord(e0, s); cudaEventRecord(e1, s); cudaEventSynchronize(e1); cudaEventElapsedTime(&ms, e0, e1);
      }, none));
  printf("last error: %s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
