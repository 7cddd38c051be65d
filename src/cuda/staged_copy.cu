// staged_copy.cu: the upload of x through pinned staging buffers (and the
// download of labels the same way, staged_download).
//
// A copy from pageable memory runs far below the link's speed (the driver
// stages it through small pinned buffers of its own, one at a time: 8.3 GB/s
// on an H200 whose pinned copies reach 55 GB/s).  Here host threads fill
// kBuffers pinned buffers in turn while the copy engine drains the ones
// filled before; an event per buffer says when it may be filled again.  In
// single precision the threads also convert (float(x - shift), the
// rounding of the device's own conversion), so half the bytes cross the
// link.  The device receives the same bits as from the plain copy.
#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

#include "detail/engine.hpp"

namespace gk {
namespace {

const int kBuffers = 3;
const size_t kBufferBytes = (size_t)32 << 20;      // each buffer, large uploads
const size_t kTestBufferBytes = (size_t)64 << 10;  // staging = 2: many small chunks
const double kStagingMinBytes = 256.0 * 1048576;   // below: one pageable copy

struct PinnedBuffers {
  void *p[kBuffers] = {};
  cudaEvent_t ev[kBuffers] = {};
  ~PinnedBuffers() {
    for (int i = 0; i < kBuffers; ++i) {
      if (ev[i]) cudaEventDestroy(ev[i]);
      if (p[i]) cudaFreeHost(p[i]);
    }
  }
};

// run(a, b) over [0, total) in up to `threads` parts of at least min_part
// elements, each in a host thread of its own (this one runs the first); a
// part whose thread cannot be started runs here.
template <typename Run>
void in_parts(size_t total, size_t min_part, int threads, const Run &run) {
  const int parts = (int)std::max<size_t>(1, std::min<size_t>((size_t)std::max(threads, 1), total / min_part));
  const size_t step = (total + parts - 1) / parts;
  std::vector<std::thread> pool;
  for (int p = 1; p < parts; ++p) {
    const size_t a = std::min(total, p * step), b = std::min(total, a + step);
    try {
      pool.emplace_back(run, a, b);
    } catch (...) {
      run(a, b);
    }
  }
  run(0, std::min(total, step));
  for (auto &t : pool) t.join();
}

// dst[t] = element off + t of x, t in [a, b): a copy, or in single precision
// float(x - shift[column]) column run by column run.
void fill_range(void *dst, const double *x, size_t off, size_t a, size_t b, long long n, const double *shift) {
  if (!shift) {
    std::memcpy((double *)dst + a, x + off + a, (b - a) * sizeof(double));
    return;
  }
  float *out = (float *)dst;
  for (size_t t = a; t < b;) {
    const size_t e = off + t;
    const size_t j = e / (size_t)n;
    const size_t end = std::min(b, (j + 1) * (size_t)n - off);
    const double s = shift[j];
    const double *src = x + off;
    for (; t < end; ++t) out[t] = (float)(src[t] - s);
  }
}

// The chunk [off, off + len) into dst with up to `threads` threads.
void fill_chunk(void *dst, const double *x, size_t off, size_t len, long long n, const double *shift,
                int threads) {
  in_parts(len, (size_t)1 << 18, threads,
           [=](size_t a, size_t b) { fill_range(dst, x, off, a, b, n, shift); });
}

}  // namespace

int staging_threads(const gk_cuda_data *D) {
  int t = D->opts.host_threads;
  if (t <= 0) t = (int)std::max(1u, std::thread::hardware_concurrency());
  return std::min(t, 16);  // a 2026-11-23 H200 host filled ~26 GB/s with 8 (link: 55)
}

namespace {

// Elements [t0, t1) of the len x d block of rows [a, a + len) of x (element
// t is row a + t % len of column t / len) into dst, column run by column run.
void fill_block_range(void *dst, const double *x, long long n, long long a, long long len, size_t t0, size_t t1,
                      const double *shift) {
  for (size_t t = t0; t < t1;) {
    const size_t j = t / (size_t)len, i = t % (size_t)len;
    const size_t run = std::min(t1 - t, (size_t)len - i);
    const double *src = x + j * (size_t)n + (size_t)a + i;
    if (!shift) {
      std::memcpy((double *)dst + t, src, run * sizeof(double));
    } else {
      float *out = (float *)dst + t;
      const double sh = shift[j];
      for (size_t r = 0; r < run; ++r) out[r] = (float)(src[r] - sh);
    }
    t += run;
  }
}

}  // namespace

void fill_rows(void *dst, const double *x, long long n, int d, long long a, long long len, const double *shift,
               int threads) {
  in_parts((size_t)len * d, (size_t)1 << 18, threads,
           [=](size_t t0, size_t t1) { fill_block_range(dst, x, n, a, len, t0, t1, shift); });
}

bool staging_wanted(const gk_cuda_data *D) {
  if (D->opts.staging == 1) return false;
  if (D->opts.staging == 2) return true;
  return (double)D->n * D->d * sizeof(double) >= kStagingMinBytes;
}

int staged_upload(gk_cuda_data *D, const double *x, bool *used, char *err, size_t errlen) {
  *used = false;
  const size_t nd = (size_t)D->n * D->d;
  const size_t esz = D->single ? sizeof(float) : sizeof(double);
  const size_t per = (D->opts.staging == 2 ? kTestBufferBytes : kBufferBytes) / esz;  // elements per chunk
  const size_t bytes = std::min(per, nd) * esz;
  PinnedBuffers B;
  for (int i = 0; i < kBuffers; ++i) {
    if (cudaHostAlloc(&B.p[i], bytes, cudaHostAllocDefault) != cudaSuccess ||
        cudaEventCreateWithFlags(&B.ev[i], cudaEventDisableTiming) != cudaSuccess) {
      cudaGetLastError();  // no pinned memory here (limits, containers): the plain copy
      return GK_CUDA_OK;
    }
  }
  *used = true;
  const int threads = staging_threads(D);
  const double *shift = D->single ? D->shift.data() : nullptr;
  cudaStream_t s = D->stream;
  size_t c = 0;
  for (size_t off = 0; off < nd; off += per, ++c) {
    const int b = (int)(c % kBuffers);
    const size_t len = std::min(per, nd - off);
    if (c >= (size_t)kBuffers) GK_CHECK(cudaEventSynchronize(B.ev[b]), "copying x to the device");
    fill_chunk(B.p[b], x, off, len, D->n, shift, threads);
    GK_CHECK(cudaMemcpyAsync((char *)D->x + off * esz, B.p[b], len * esz, cudaMemcpyHostToDevice, s),
             "copying x to the device");
    GK_CHECK(cudaEventRecord(B.ev[b], s), "copying x to the device");
  }
  GK_CHECK(cudaStreamSynchronize(s), "copying x to the device");
  return GK_CUDA_OK;
}

namespace {

// out[t] = in[t] + add for t in [0, len), by up to `threads` host threads
// (the first touch of fresh pages of the destination is shared too).
void copy_out(int *out, const int *in, size_t len, int add, int threads) {
  in_parts(len, (size_t)1 << 20, threads, [=](size_t a, size_t b) {
    if (add == 0) std::memcpy(out + a, in + a, (b - a) * sizeof(int));
    else
      for (size_t t = a; t < b; ++t) out[t] = in[t] + add;
  });
}

}  // namespace

int staged_download(const gk_cuda_data *D, const int *dev, int *host, long long n, int add, cudaStream_t s,
                    char *err, size_t errlen) {
  const size_t per = kBufferBytes / sizeof(int);
  const size_t total = (size_t)n;
  PinnedBuffers B;
  bool pinned = total > per;  // a single buffer's worth: the plain copy
  for (int i = 0; i < kBuffers && pinned; ++i)
    if (cudaHostAlloc(&B.p[i], kBufferBytes, cudaHostAllocDefault) != cudaSuccess ||
        cudaEventCreateWithFlags(&B.ev[i], cudaEventDisableTiming) != cudaSuccess) {
      cudaGetLastError();  // no pinned memory here: the plain copy
      pinned = false;
    }
  if (!pinned) {
    GK_CHECK(cudaMemcpyAsync(host, dev, total * sizeof(int), cudaMemcpyDeviceToHost, s), "copying labels");
    GK_CHECK(cudaStreamSynchronize(s), "copying labels");
    if (add)
      for (size_t t = 0; t < total; ++t) host[t] += add;
    return GK_CUDA_OK;
  }
  // up to kBuffers copies in flight; chunk c is copied out of its buffer
  // once its copy has landed, and its buffer then takes chunk c + kBuffers
  const int threads = staging_threads(D);
  const size_t chunks = (total + per - 1) / per;
  size_t issued = 0;
  for (size_t c = 0; c < chunks; ++c) {
    for (; issued < chunks && issued < c + kBuffers; ++issued) {
      const int b = (int)(issued % kBuffers);
      const size_t off = issued * per, len = std::min(per, total - off);
      GK_CHECK(cudaMemcpyAsync(B.p[b], dev + off, len * sizeof(int), cudaMemcpyDeviceToHost, s), "copying labels");
      GK_CHECK(cudaEventRecord(B.ev[b], s), "copying labels");
    }
    const int b = (int)(c % kBuffers);
    const size_t off = c * per, len = std::min(per, total - off);
    GK_CHECK(cudaEventSynchronize(B.ev[b]), "copying labels");
    copy_out(host + off, (const int *)B.p[b], len, add, threads);
  }
  return GK_CUDA_OK;
}

}  // namespace gk
