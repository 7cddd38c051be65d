// device_data.cu: data resident on the device (upload once, free, totss).
#include <algorithm>
#include <chrono>
#include <new>
#include <vector>

#include "detail/data_kernels.cuh"
#include "detail/engine.hpp"

using namespace gk;

namespace gk {
int g_copy_mode = 0;  // upload: pageable (cudaHostRegister: no steady gain on H100, NOTES v9)
int g_tf32 = -1;
}  // namespace gk

extern "C" void gk_cuda_dev_knobs(int copy_mode, int tf32) {
  gk::g_copy_mode = copy_mode;
  gk::g_tf32 = tf32;
}

namespace {

int col_grid(long long n, int sms) {
  long long g = (n + 255) / 256;
  return (int)std::max<long long>(1, std::min<long long>(g, 4LL * sms));
}

size_t align256(size_t b) { return (b + 255) / 256 * 256; }

void destroy(gk_cuda_data *D) {
  if (!D) return;
  cudaSetDevice(D->device);
  if (D->stream) cudaStreamSynchronize(D->stream);
  for (int i = 0; i < 2; ++i)
    if (D->gx[i]) cudaGraphExecDestroy(D->gx[i]);
  if (D->ev0) cudaEventDestroy(D->ev0);
  if (D->ev1) cudaEventDestroy(D->ev1);
  if (D->stream) cudaStreamDestroy(D->stream);
  if (D->ws) cudaFree(D->ws);
  if (D->block) cudaFree(D->block);
  delete D;
}

// Host -> device copy of nbytes from pageable src.  Copy mode 1 pins src for
// the copy (cudaHostRegister: full-speed DMA, no driver staging), falling back
// to the pageable copy when registering fails.  Synchronous.
int copy_in(void *dst, const void *src, size_t nbytes, cudaStream_t s, char *err, size_t errlen) {
  bool reg = false;
  if (gk::g_copy_mode == 1 && nbytes >= ((size_t)1 << 20)) {
    reg = cudaHostRegister(const_cast<void *>(src), nbytes, cudaHostRegisterDefault) == cudaSuccess;
    if (!reg) cudaGetLastError();
  }
  cudaError_t e = cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyHostToDevice, s);
  cudaError_t e2 = cudaStreamSynchronize(s);
  if (reg) cudaHostUnregister(const_cast<void *>(src));
  GK_CHECK(e, "copying x to the device");
  GK_CHECK(e2, "copying x to the device");
  return GK_CUDA_OK;
}

// Everything after the handle exists; on failure the caller destroys it.
int upload_into(gk_cuda_data *D, const double *x, char *err, size_t errlen) {
  const long long n = D->n;
  const int d = D->d;
  const size_t nd = (size_t)n * d;
  const size_t esz = D->single ? sizeof(float) : sizeof(double);
  size_t chunk = D->single ? std::min<size_t>(nd, (size_t)8 << 20) : 0;  // doubles staged
  // one allocation: x | labels | scales | scratch (3d + 2 words) | means
  const size_t off_lab = align256(nd * esz);
  const size_t off_scale = off_lab + align256((size_t)n * sizeof(int));
  const size_t off_scr = off_scale + align256((size_t)d * sizeof(int));
  const size_t off_mean = off_scr + align256((3 * (size_t)d + 2) * sizeof(u64));
  const size_t total = off_mean + align256((size_t)d * sizeof(double));
  // Free-memory check before allocating large data (>= 1 GiB; small uploads
  // skip the query: per-fit overhead), else an allocation failure says the same.
  const double need = (double)total + (double)chunk * sizeof(double);
  size_t free_b = 0, total_b = 0;
  if (need >= 1073741824.0) {
    GK_CHECK(cudaMemGetInfo(&free_b, &total_b), "querying device memory");
    if (need > (double)free_b) {
      set_msg(err, errlen,
              "x needs %.2f GiB in %s on device %d (with labels and staging) but only %.2f GiB is free",
              gib(need), D->single ? "single" : "double", D->device, gib((double)free_b));
      return GK_CUDA_OUT_OF_MEMORY;
    }
  }
  cudaError_t ea = cudaMalloc(&D->block, total);
  if (ea == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    D->block = nullptr;
    cudaMemGetInfo(&free_b, &total_b);
    set_msg(err, errlen,
            "x needs %.2f GiB in %s on device %d (with labels and staging) but only %.2f GiB is free",
            gib(need), D->single ? "single" : "double", D->device, gib((double)free_b));
    return GK_CUDA_OUT_OF_MEMORY;
  }
  GK_CHECK(ea, "allocating x on the device");
  char *b = (char *)D->block;
  D->x = b;
  D->labels = (int *)(b + off_lab);
  D->d_scale = (int *)(b + off_scale);
  D->scratch = (u64 *)(b + off_scr);
  D->d_mean = (double *)(b + off_mean);
  GK_CHECK(cudaStreamCreateWithFlags(&D->stream, cudaStreamNonBlocking), "creating a stream");
  GK_CHECK(cudaEventCreate(&D->ev0), "creating events");
  GK_CHECK(cudaEventCreate(&D->ev1), "creating events");
  cudaStream_t s = D->stream;
  u64 *mx = D->scratch + 2 * (size_t)d + 2;  // column maxima; scratch[0, 2d + 2): totss sums
  GK_CHECK(cudaMemsetAsync(D->scratch, 0, (3 * (size_t)d + 2) * sizeof(u64), s), "clearing scratch");
  D->shift.assign(d, 0.0);
  if (!D->single) {
    int st = copy_in(D->x, x, nd * sizeof(double), s, err, errlen);
    if (st != GK_CUDA_OK) return st;
  } else {
    // shift = mean of up to 4096 evenly spaced rows: keeps float values small
    long long m = std::min<long long>(n, 4096);
    for (int j = 0; j < d; ++j) {
      double sum = 0;
      for (long long r = 0; r < m; ++r) sum += x[(r * n) / m + n * (long long)j];
      D->shift[j] = sum / (double)m;
    }
    DevBuf<double> stage, shift;
    GK_CHECK(stage.alloc(chunk), "allocating the staging buffer");
    GK_CHECK(shift.alloc(d), "allocating the shift");
    GK_CHECK(cudaMemcpyAsync(shift.p, D->shift.data(), d * sizeof(double), cudaMemcpyHostToDevice, s), "copying the shift");
    bool reg = false;
    if (gk::g_copy_mode == 1) {
      reg = cudaHostRegister(const_cast<double *>(x), nd * sizeof(double), cudaHostRegisterDefault) == cudaSuccess;
      if (!reg) cudaGetLastError();
    }
    cudaError_t e = cudaSuccess;
    for (size_t off = 0; off < nd && e == cudaSuccess; off += chunk) {
      size_t len = std::min(chunk, nd - off);
      e = cudaMemcpyAsync(stage.p, x + off, len * sizeof(double), cudaMemcpyHostToDevice, s);
      if (e != cudaSuccess) break;
      int g = (int)std::min<size_t>((len + 255) / 256, 4096);
      k_convert_chunk<<<g, 256, 0, s>>>(stage.p, (long long)len, (long long)off, n, shift.p, (float *)D->x);
      e = cudaGetLastError();
    }
    cudaError_t e2 = cudaStreamSynchronize(s);
    if (reg) cudaHostUnregister(const_cast<double *>(x));
    GK_CHECK(e, "copying x to the device");
    GK_CHECK(e2, "converting x to single precision");
  }
  // column maxima -> fixed-point scales of the per-column sums
  dim3 grid(col_grid(n, D->sms), d);
  if (D->single) k_col_maxabs<float><<<grid, 256, 0, s>>>((const float *)D->x, n, mx);
  else k_col_maxabs<double><<<grid, 256, 0, s>>>((const double *)D->x, n, mx);
  GK_CHECK(cudaGetLastError(), "computing column maxima");
  std::vector<u64> h(d);
  GK_CHECK(cudaMemcpyAsync(h.data(), mx, d * sizeof(u64), cudaMemcpyDeviceToHost, s), "copying column maxima");
  GK_CHECK(cudaStreamSynchronize(s), "copying column maxima");
  D->maxabs.resize(d);
  D->scale.resize(d);
  double mmax = 0;
  for (int j = 0; j < d; ++j) {
    double v;
    memcpy(&v, &h[j], 8);
    D->maxabs[j] = v;
    D->scale[j] = limb_scale(v);  // |sum| * 2^scale < n * 2^59
    mmax = std::max(mmax, v);
  }
  GK_CHECK(cudaMemcpyAsync(D->d_scale, D->scale.data(), d * sizeof(int), cudaMemcpyHostToDevice, s), "copying scales");
  // total sum of squares, on the device with no host round trip:
  // column sums -> means (k_col_mean) -> squared deviations
  u64 *acc = D->scratch;
  if (D->single) k_col_sum<float><<<grid, 256, 0, s>>>((const float *)D->x, n, D->d_scale, acc);
  else k_col_sum<double><<<grid, 256, 0, s>>>((const double *)D->x, n, D->d_scale, acc);
  GK_CHECK(cudaGetLastError(), "column sums");
  k_col_mean<<<(d + 127) / 128, 128, 0, s>>>(acc, D->d_scale, d, n, D->d_mean);
  GK_CHECK(cudaGetLastError(), "column means");
  const int tscale = fixed_scale(4.0 * mmax * mmax, n * (long long)d);
  u64 *tot = acc + 2 * (size_t)d;
  if (D->single) k_sq_dev<float><<<grid, 256, 0, s>>>((const float *)D->x, n, D->d_mean, tscale, tot);
  else k_sq_dev<double><<<grid, 256, 0, s>>>((const double *)D->x, n, D->d_mean, tscale, tot);
  GK_CHECK(cudaGetLastError(), "squared deviations");
  u64 t[2];
  GK_CHECK(cudaMemcpyAsync(t, tot, 2 * sizeof(u64), cudaMemcpyDeviceToHost, s), "copying totss");
  GK_CHECK(cudaStreamSynchronize(s), "computing totss");
  D->totss = from_fixed(t[0], t[1], tscale);
  return GK_CUDA_OK;
}

}  // namespace

extern "C" int gk_cuda_upload(const double *x, int64_t n, int d, const gk_cuda_options *opts,
                              gk_cuda_data **out, gk_cuda_upload_timing *timing, char *err,
                              size_t errlen) {
  if (out) *out = nullptr;
  if (!x || n < 1 || d < 1 || !opts || !out) {
    set_msg(err, errlen, "gk_cuda_upload: invalid arguments (n = %lld, d = %d)", (long long)n, d);
    return GK_CUDA_INVALID;
  }
  auto t0 = std::chrono::steady_clock::now();
  GK_CHECK(cudaSetDevice(opts->device), "selecting the CUDA device");
  int sms = 1;
  GK_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, opts->device),
           "querying the device");
  gk_cuda_data *D = new (std::nothrow) gk_cuda_data;
  if (!D) {
    set_msg(err, errlen, "out of host memory");
    return GK_CUDA_ERROR;
  }
  D->device = opts->device;
  D->n = n;
  D->d = d;
  D->single = opts->single ? 1 : 0;
  D->sms = sms;
  int st = upload_into(D, x, err, errlen);
  if (st != GK_CUDA_OK) {
    destroy(D);
    return st;
  }
  if (timing)
    timing->ms_upload =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  *out = D;
  return GK_CUDA_OK;
}

extern "C" void gk_cuda_free(gk_cuda_data *data) { destroy(data); }

extern "C" int gk_cuda_totss(gk_cuda_data *D, double *totss, char *err, size_t errlen) {
  if (!D || !totss) {
    set_msg(err, errlen, "gk_cuda_totss: invalid arguments");
    return GK_CUDA_INVALID;
  }
  *totss = D->totss;  // computed on the device at upload
  return GK_CUDA_OK;
}
