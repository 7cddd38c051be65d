// kept_memory.cu: the small device allocations of freed handles (their x
// block and fit workspace), kept per device for the next handle there.
//
// Every fit makes a handle and frees it: a cudaMalloc costs ~31 us and a
// cudaFree 27-45 us on an H200 host (tools/cuda-dev/fixed_cost_probe.cu,
// 2026-12-03), so a fit of 21 600 x 2 points, whose call takes ~1.1 ms,
// spent ~0.12 ms on its two allocations.  Blocks of at most kKeepBytes are
// kept, at most kKeepTotal a device; a request takes the smallest kept
// block that holds it and is at most twice its size (plus 1 MiB), so that a
// small fit never pins a large block.  Where cudaMalloc runs out of memory,
// the device's kept blocks are freed and it is tried again.  They are
// freed at the end of R's session (gk_cuda_release_kept), or with the
// process.  GPUKMEANS_KEEP_DEVICE=0 frees every block at once (tests,
// compute-sanitizer's initcheck: a kept block holds an earlier handle's
// values).
#include <unistd.h>

#include <mutex>
#include <vector>

#include "detail/engine.hpp"

namespace gk {

namespace {

constexpr size_t kKeepBytes = (size_t)64 << 20;
constexpr size_t kKeepTotal = (size_t)128 << 20;

struct KeptBlock {
  void *p;
  size_t bytes;
};

std::mutex keep_mutex;
// (never destroyed: released at R's exit while the CUDA runtime is there)
std::vector<std::vector<KeptBlock>> &kept_blocks() {
  static std::vector<std::vector<KeptBlock>> *k = new std::vector<std::vector<KeptBlock>>;
  return *k;
}
long keep_pid = 0;  // the process that kept them (a forked child must not use them)

bool keeping() { return env_switch("GPUKMEANS_KEEP_DEVICE") != 0; }

// The device's kept blocks, freed (the caller holds the lock; `device` current).
void free_kept(std::vector<KeptBlock> &list) {
  for (const KeptBlock &b : list) cudaFree(b.p);
  list.clear();
}

}  // namespace

cudaError_t device_alloc(int device, void **p, size_t bytes, size_t *got) {
  *p = nullptr;
  if (got) *got = 0;
  if (keeping() && device >= 0) {
    std::lock_guard<std::mutex> lock(keep_mutex);
    std::vector<std::vector<KeptBlock>> &k = kept_blocks();
    if (keep_pid == (long)getpid() && (size_t)device < k.size()) {
      std::vector<KeptBlock> &list = k[device];
      size_t best = list.size();
      for (size_t i = 0; i < list.size(); ++i)
        if (list[i].bytes >= bytes && list[i].bytes <= 2 * bytes + ((size_t)1 << 20) &&
            (best == list.size() || list[i].bytes < list[best].bytes))
          best = i;
      if (best < list.size()) {
        *p = list[best].p;
        if (got) *got = list[best].bytes;
        list.erase(list.begin() + (long)best);
        return cudaSuccess;
      }
    }
  }
  cudaError_t e = cudaMalloc(p, bytes);
  if (e == cudaErrorMemoryAllocation && device >= 0) {  // (the kept blocks given back, then once more)
    std::lock_guard<std::mutex> lock(keep_mutex);
    std::vector<std::vector<KeptBlock>> &k = kept_blocks();
    if (keep_pid == (long)getpid() && (size_t)device < k.size() && !k[device].empty()) {
      cudaGetLastError();
      free_kept(k[device]);
      e = cudaMalloc(p, bytes);
    }
  }
  if (e != cudaSuccess) {
    *p = nullptr;
    return e;
  }
  if (got) *got = bytes;
  return cudaSuccess;
}

void device_release(int device, void *p, size_t bytes) {
  if (!p) return;
  if (bytes > 0 && bytes <= kKeepBytes && device >= 0 && keeping()) {
    std::lock_guard<std::mutex> lock(keep_mutex);
    std::vector<std::vector<KeptBlock>> &k = kept_blocks();
    if (keep_pid != (long)getpid()) {  // (a forked child's copy of the parent's list: not its memory)
      for (std::vector<KeptBlock> &list : k) list.clear();
      keep_pid = (long)getpid();
    }
    if ((size_t)device >= k.size()) k.resize((size_t)device + 1);
    std::vector<KeptBlock> &list = k[device];
    size_t total = bytes;
    for (const KeptBlock &b : list) total += b.bytes;
    // (over the total: the oldest blocks freed first)
    while (total > kKeepTotal && !list.empty()) {
      total -= list.front().bytes;
      cudaFree(list.front().p);
      list.erase(list.begin());
    }
    list.push_back(KeptBlock{p, bytes});
    return;
  }
  cudaFree(p);
}

double release_kept_blocks() {
  std::lock_guard<std::mutex> lock(keep_mutex);
  std::vector<std::vector<KeptBlock>> &k = kept_blocks();
  if (keep_pid != (long)getpid()) return 0;  // (none here, or a forked child's copy of the parent's)
  double freed = 0;
  int current = -1;
  if (cudaGetDevice(&current) != cudaSuccess) current = -1;
  for (size_t dev = 0; dev < k.size(); ++dev) {
    if (k[dev].empty()) continue;
    cudaSetDevice((int)dev);
    for (const KeptBlock &b : k[dev]) freed += (double)b.bytes;
    free_kept(k[dev]);
  }
  if (current >= 0) cudaSetDevice(current);
  cudaGetLastError();
  return freed;
}

}  // namespace gk
