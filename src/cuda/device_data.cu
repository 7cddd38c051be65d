// device_data.cu: data resident on the device (upload once, free, totss).
#include <algorithm>
#include <chrono>
#include <new>
#include <vector>

#include "detail/data_kernels.cuh"
#include "detail/engine.hpp"

using namespace gk;

namespace {

int col_grid(long long n, int sms) {
  long long g = (n + 255) / 256;
  return (int)std::max<long long>(1, std::min<long long>(g, 4LL * sms));
}

void destroy(gk_cuda_data *D) {
  if (!D) return;
  cudaSetDevice(D->device);
  if (D->x) cudaFree(D->x);
  if (D->d_scale) cudaFree(D->d_scale);
  delete D;
}

// Everything after the handle exists; on failure the caller destroys it.
int upload_into(gk_cuda_data *D, const double *x, char *err, size_t errlen) {
  const long long n = D->n;
  const int d = D->d;
  const size_t nd = (size_t)n * d;
  const size_t esz = D->single ? sizeof(float) : sizeof(double);
  size_t chunk = D->single ? std::min<size_t>(nd, (size_t)8 << 20) : 0;  // doubles staged
  size_t free_b = 0, total_b = 0;
  GK_CHECK(cudaMemGetInfo(&free_b, &total_b), "querying device memory");
  double need = (double)nd * esz + (double)chunk * sizeof(double) + (double)n * sizeof(int);
  if (need > (double)free_b) {
    set_msg(err, errlen,
            "x needs %.2f GiB in %s on device %d (with labels and staging) but only %.2f GiB is free",
            gib(need), D->single ? "single" : "double", D->device, gib((double)free_b));
    return GK_CUDA_OUT_OF_MEMORY;
  }
  GK_CHECK(cudaMalloc(&D->x, nd * esz), "allocating x on the device");
  D->shift.assign(d, 0.0);
  if (!D->single) {
    GK_CHECK(cudaMemcpy(D->x, x, nd * sizeof(double), cudaMemcpyHostToDevice), "copying x to the device");
  } else {
    // shift = mean of up to 4096 evenly spaced rows: keeps float values small
    long long m = std::min<long long>(n, 4096);
    for (int j = 0; j < d; ++j) {
      double s = 0;
      for (long long r = 0; r < m; ++r) s += x[(r * n) / m + n * (long long)j];
      D->shift[j] = s / (double)m;
    }
    DevBuf<double> stage, shift;
    GK_CHECK(stage.alloc(chunk), "allocating the staging buffer");
    GK_CHECK(shift.alloc(d), "allocating the shift");
    GK_CHECK(cudaMemcpy(shift.p, D->shift.data(), d * sizeof(double), cudaMemcpyHostToDevice), "copying the shift");
    for (size_t off = 0; off < nd; off += chunk) {
      size_t len = std::min(chunk, nd - off);
      GK_CHECK(cudaMemcpy(stage.p, x + off, len * sizeof(double), cudaMemcpyHostToDevice), "copying x to the device");
      int g = (int)std::min<size_t>((len + 255) / 256, 4096);
      k_convert_chunk<<<g, 256>>>(stage.p, (long long)len, (long long)off, n, shift.p, (float *)D->x);
      GK_CHECK(cudaGetLastError(), "converting x to single precision");
    }
    GK_CHECK(cudaDeviceSynchronize(), "converting x to single precision");
  }
  // column maxima -> fixed-point scales of the per-column sums
  DevBuf<u64> mx;
  GK_CHECK(mx.alloc(d), "allocating column maxima");
  GK_CHECK(cudaMemset(mx.p, 0, d * sizeof(u64)), "clearing column maxima");
  dim3 grid(col_grid(n, D->sms), d);
  if (D->single) k_col_maxabs<float><<<grid, 256>>>((const float *)D->x, n, mx.p);
  else k_col_maxabs<double><<<grid, 256>>>((const double *)D->x, n, mx.p);
  GK_CHECK(cudaGetLastError(), "computing column maxima");
  std::vector<u64> h(d);
  GK_CHECK(cudaMemcpy(h.data(), mx.p, d * sizeof(u64), cudaMemcpyDeviceToHost), "copying column maxima");
  D->maxabs.resize(d);
  D->scale.resize(d);
  for (int j = 0; j < d; ++j) {
    double v;
    memcpy(&v, &h[j], 8);
    D->maxabs[j] = v;
    D->scale[j] = limb_scale(v);  // |sum| * 2^scale < n * 2^59
  }
  GK_CHECK(cudaMalloc(&D->d_scale, d * sizeof(int)), "allocating scales");
  GK_CHECK(cudaMemcpy(D->d_scale, D->scale.data(), d * sizeof(int), cudaMemcpyHostToDevice), "copying scales");
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
  GK_CHECK(cudaSetDevice(D->device), "selecting the CUDA device");
  const long long n = D->n;
  const int d = D->d;
  DevBuf<u64> acc;
  DevBuf<double> mean;
  GK_CHECK(acc.alloc(2 * (size_t)d + 2), "allocating totss accumulators");
  GK_CHECK(mean.alloc(d), "allocating column means");
  GK_CHECK(cudaMemset(acc.p, 0, (2 * (size_t)d + 2) * sizeof(u64)), "clearing accumulators");
  dim3 grid(col_grid(n, D->sms), d);
  if (D->single) k_col_sum<float><<<grid, 256>>>((const float *)D->x, n, D->d_scale, acc.p);
  else k_col_sum<double><<<grid, 256>>>((const double *)D->x, n, D->d_scale, acc.p);
  GK_CHECK(cudaGetLastError(), "column sums");
  std::vector<u64> h(2 * (size_t)d);
  GK_CHECK(cudaMemcpy(h.data(), acc.p, 2 * (size_t)d * sizeof(u64), cudaMemcpyDeviceToHost), "copying column sums");
  std::vector<double> mu(d);
  double mmax = 0;
  for (int j = 0; j < d; ++j) {
    mu[j] = from_fixed(h[2 * j], h[2 * j + 1], D->scale[j]) / (double)n;
    mmax = std::max(mmax, D->maxabs[j]);
  }
  GK_CHECK(cudaMemcpy(mean.p, mu.data(), d * sizeof(double), cudaMemcpyHostToDevice), "copying column means");
  int tscale = fixed_scale(4.0 * mmax * mmax, n * (long long)d);
  u64 *tot = acc.p + 2 * (size_t)d;
  if (D->single) k_sq_dev<float><<<grid, 256>>>((const float *)D->x, n, mean.p, tscale, tot);
  else k_sq_dev<double><<<grid, 256>>>((const double *)D->x, n, mean.p, tscale, tot);
  GK_CHECK(cudaGetLastError(), "squared deviations");
  u64 t[2];
  GK_CHECK(cudaMemcpy(t, tot, 2 * sizeof(u64), cudaMemcpyDeviceToHost), "copying totss");
  *totss = from_fixed(t[0], t[1], tscale);
  return GK_CUDA_OK;
}
