// device_data.cu: data resident on the device (upload once, free, totss,
// column maxima).
//
// An upload is: one allocation (alloc_block: x | labels | scales | scratch |
// means), the copy of x (large data: staged_upload, through pinned buffers;
// else copy_double, or copy_single: staged doubles converted on the device
// to float(x - shift)), the per-column maxima and
// fixed-point scales (column_scales), then the total sum of squares
// (compute_totss), all on the device.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <new>
#include <vector>

#include "../nonfinite.h"
#include "../row_block.h"
#include "../single_shift.h"
#include "detail/data_kernels.cuh"
#include "detail/engine.hpp"

using namespace gk;

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
  drop_graphs(D);
  init::destroy_par_state(D->par);
  destroy_stream_source(D->src);
  release_staging(D->staging, D->device);
  release_put_rows(D);
  if (D->ev0) cudaEventDestroy(D->ev0);
  if (D->ev1) cudaEventDestroy(D->ev1);
  if (D->stream) cudaStreamDestroy(D->stream);
  if (D->ws) cudaFree(D->ws);
  if (D->bounds) cudaFree(D->bounds);
  if (D->df_block) cudaFree(D->df_block);
  if (D->df_cand) cudaFree(D->df_cand);
  if (D->df_cen) cudaFree(D->df_cen);
  if (D->tc_x) cudaFree(D->tc_x);
  if (D->tc_cen) cudaFree(D->tc_cen);
  if (D->grid_buf) cudaFree(D->grid_buf);
  if (D->ord_block) cudaFree(D->ord_block);
  if (D->prev_labels) cudaFree(D->prev_labels);
  if (D->wspec.w) cudaFree((void *)D->wspec.w);
  if (D->block) cudaFree(D->block);
  delete D;
}

// Host -> device copy of nbytes from pageable memory (measured as fast as
// pinning it with cudaHostRegister for one copy: tools/cuda-dev/LOG.md v9).
int copy_double(gk_cuda_data *D, const double *x, char *err, size_t errlen) {
  const size_t nbytes = (size_t)D->n * D->d * sizeof(double);
  GK_CHECK(cudaMemcpyAsync(D->x, x, nbytes, cudaMemcpyHostToDevice, D->stream), "copying x to the device");
  GK_CHECK(cudaStreamSynchronize(D->stream), "copying x to the device");
  return GK_CUDA_OK;
}

// Single precision: x in chunks of staged doubles, converted on the device
// to float(x - shift).
int copy_single(gk_cuda_data *D, const double *x, size_t chunk, char *err, size_t errlen) {
  const long long n = D->n;
  const int d = D->d;
  const size_t nd = (size_t)n * d;
  cudaStream_t s = D->stream;
  DevBuf<double> stage, shift;
  GK_CHECK(stage.alloc(chunk), "allocating the staging buffer");
  GK_CHECK(shift.alloc(d), "allocating the shift");
  GK_CHECK(cudaMemcpyAsync(shift.p, D->shift.data(), d * sizeof(double), cudaMemcpyHostToDevice, s),
           "copying the shift");
  for (size_t off = 0; off < nd; off += chunk) {
    size_t len = std::min(chunk, nd - off);
    GK_CHECK(cudaMemcpyAsync(stage.p, x + off, len * sizeof(double), cudaMemcpyHostToDevice, s),
             "copying x to the device");
    int g = (int)std::min<size_t>((len + 255) / 256, 4096);
    k_convert_chunk<<<g, 256, 0, s>>>(stage.p, (long long)len, (long long)off, n, shift.p, (float *)D->x);
    GK_CHECK(cudaGetLastError(), "converting x to single precision");
  }
  GK_CHECK(cudaStreamSynchronize(s), "converting x to single precision");
  return GK_CUDA_OK;
}

// Bytes of the one allocation (x | labels | scales | scratch | means) and
// where each part starts.
struct BlockLayout {
  size_t lab, scale, scr, mean, total;
  BlockLayout(long long n, int d, size_t esz) {
    lab = align256((size_t)n * d * esz);
    scale = lab + align256((size_t)n * sizeof(int));
    scr = scale + align256((size_t)d * sizeof(int));
    mean = scr + align256((3 * (size_t)d + 2) * sizeof(u64));
    total = mean + align256((size_t)d * sizeof(double));
  }
};

int out_of_memory(const gk_cuda_data *D, double need, char *err, size_t errlen) {
  size_t free_b = 0, total_b = 0;
  cudaMemGetInfo(&free_b, &total_b);
  const double cap = D->opts.memory_cap;
  if (cap > 0 && cap < (double)free_b)
    set_msg(err, errlen,
            "x needs %.2f GiB in %s on device %d (with labels and staging) but options(gpukmeans.device_memory) "
            "allows %.2f GiB (%.2f GiB is free)", gib(need), D->single ? "single" : "double", D->device, gib(cap),
            gib((double)free_b));
  else
    set_msg(err, errlen, "x needs %.2f GiB in %s on device %d (with labels and staging) but only %.2f GiB is free",
            gib(need), D->single ? "single" : "double", D->device, gib((double)free_b));
  return GK_CUDA_OUT_OF_MEMORY;
}

}  // namespace

int gk::scales_from_maxima(gk_cuda_data *D, const u64 *mx, char *err, size_t errlen) {
  const int d = D->d;
  cudaStream_t s = D->stream;
  std::vector<u64> h(d);
  GK_CHECK(cudaMemcpyAsync(h.data(), mx, d * sizeof(u64), cudaMemcpyDeviceToHost, s), "copying column maxima");
  GK_CHECK(cudaStreamSynchronize(s), "copying column maxima");
  D->maxabs.resize(d);
  D->scale.resize(d);
  for (int j = 0; j < d; ++j) {
    double v;
    memcpy(&v, &h[j], 8);
    D->maxabs[j] = v;
    D->scale[j] = limb_scale(v);  // |sum| * 2^scale < n * 2^59
  }
  GK_CHECK(cudaMemcpyAsync(D->d_scale, D->scale.data(), d * sizeof(int), cudaMemcpyHostToDevice, s),
           "copying scales");
  return GK_CUDA_OK;
}

bool gk::optional_fits(const gk_cuda_data *D, size_t extra) {
  if (D->src) return false;  // streamed data: only its chunk buffers
  const double cap = D->opts.memory_cap;
  if (cap > 0 && cap < 1e300) {
    const BlockLayout L(D->n, D->d, D->single ? sizeof(float) : sizeof(double));
    if ((double)L.total + (double)extra > cap) return false;
  }
  size_t free_b = 0, total_b = 0;
  if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return (double)extra <= 0.9 * (double)free_b;
}

size_t gk::smem_limit(const gk_cuda_data *D) {
  size_t lim = D->smem_optin;
  const char *cap = std::getenv("GPUKMEANS_SMEM_CAP");
  if (cap && cap[0]) {
    const unsigned long long c = std::strtoull(cap, nullptr, 10);
    if (c > 0 && c < lim) lim = (size_t)c;
  }
  return lim;
}

cudaError_t gk::allow_dynamic_smem(const gk_cuda_data *D, const void *kernel, size_t bytes) {
  if (bytes > smem_limit(D)) return cudaErrorInvalidValue;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
}

cudaError_t gk::allow_dynamic_smem(const gk_cuda_data *D, std::initializer_list<const void *> kernels, size_t bytes) {
  for (const void *f : kernels) {
    const cudaError_t e = allow_dynamic_smem(D, f, bytes);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

namespace {

// The allocation, after a free-memory check for large data (>= 1 GiB;
// small uploads skip the query: per-fit overhead), and the stream and events.
int alloc_block(gk_cuda_data *D, size_t staging_bytes, char *err, size_t errlen) {
  const BlockLayout L(D->n, D->d, D->single ? sizeof(float) : sizeof(double));
  const double need = (double)L.total + (double)staging_bytes;
  const double cap = D->opts.memory_cap;
  if (cap > 0 && need > cap) return out_of_memory(D, need, err, errlen);
  if (need >= 1073741824.0) {
    size_t free_b = 0, total_b = 0;
    GK_CHECK(cudaMemGetInfo(&free_b, &total_b), "querying device memory");
    if (need > (double)free_b) return out_of_memory(D, need, err, errlen);
  }
  // room for the rows ordered in space (ordered.cu) in the same allocation,
  // where the shape may use them and the device has the memory to spare
  // (half of what is free, for large data): a fit then orders the rows
  // without an allocation of its own (which costs as much as the
  // ordering's work at 1e6 rows)
  // (GPUKMEANS_ORDER_ROOM=0: none kept, for the tests of the fit's own)
  size_t range_at = 0;
  const size_t ord = env_switch("GPUKMEANS_ORDER_ROOM") == 0 ? 0 : ordered_room(D, &range_at);
  bool room = ord && !(cap > 0 && need + (double)ord > cap);
  if (room && need + (double)ord >= 67108864.0) {
    size_t free_b = 0, total_b = 0;
    room = cudaMemGetInfo(&free_b, &total_b) == cudaSuccess && need + (double)ord <= 0.5 * (double)free_b;
    cudaGetLastError();
  }
  cudaError_t ea = cudaErrorMemoryAllocation;
  if (room) {
    ea = cudaMalloc(&D->block, L.total + ord);
    if (ea == cudaSuccess) {
      D->ord_room = (char *)D->block + L.total;
      D->ord_room_bytes = ord;
      D->ord_range = (unsigned int *)((char *)D->ord_room + range_at);
    } else {
      cudaGetLastError();
    }
  }
  if (ea != cudaSuccess) ea = cudaMalloc(&D->block, L.total);
  if (ea == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    D->block = nullptr;
    return out_of_memory(D, need, err, errlen);
  }
  GK_CHECK(ea, "allocating x on the device");
  char *b = (char *)D->block;
  D->x = b;
  D->labels = (int *)(b + L.lab);
  D->d_scale = (int *)(b + L.scale);
  D->scratch = (u64 *)(b + L.scr);
  D->d_mean = (double *)(b + L.mean);
  GK_CHECK(cudaStreamCreateWithFlags(&D->stream, cudaStreamNonBlocking), "creating a stream");
  GK_CHECK(cudaEventCreate(&D->ev0), "creating events");
  GK_CHECK(cudaEventCreate(&D->ev1), "creating events");
  return GK_CUDA_OK;
}

dim3 column_grid(const gk_cuda_data *D) { return dim3(col_grid(D->n, D->sms), D->d); }

// Column maxima of the stored values -> fixed-point scales of the sums.
int column_scales(gk_cuda_data *D, char *err, size_t errlen) {
  const int d = D->d;
  cudaStream_t s = D->stream;
  u64 *mx = D->scratch + 2 * (size_t)d + 2;  // scratch[0, 2d + 2): totss sums
  const dim3 grid = column_grid(D);
  // (and the columns' ranges of the ordering, where the upload kept its
  // room: ordered.cu's prepare_ordered then need not read x for them)
  unsigned int *range = D->ord_range;
  if (range) {
    GK_CHECK(cudaMemsetAsync(range, 0xff, d * sizeof(unsigned int), s), "clearing the columns' ranges");
    GK_CHECK(cudaMemsetAsync(range + d, 0, d * sizeof(unsigned int), s), "clearing the columns' ranges");
  }
  if (D->single) k_col_maxabs<float><<<grid, 256, 0, s>>>((const float *)D->x, D->n, mx, range);
  else k_col_maxabs<double><<<grid, 256, 0, s>>>((const double *)D->x, D->n, mx, range);
  GK_CHECK(cudaGetLastError(), "computing column maxima");
  return scales_from_maxima(D, mx, err, errlen);
}

// Total sum of squares on the device with no host round trip: column sums ->
// means (k_col_mean) -> squared deviations.
int compute_totss(gk_cuda_data *D, char *err, size_t errlen) {
  const long long n = D->n;
  const int d = D->d;
  cudaStream_t s = D->stream;
  const dim3 grid = column_grid(D);
  double mmax = 0;
  for (double v : D->maxabs) mmax = std::max(mmax, v);
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

// A new, empty handle on opts->device (no memory on the device yet): *out.
int new_handle(const gk_cuda_options *opts, int64_t n, int d, bool single, gk_cuda_data **out, char *err,
               size_t errlen) {
  GK_CHECK(cudaSetDevice(opts->device), "selecting the CUDA device");
  int sms = 1, optin = 48 * 1024;
  GK_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, opts->device), "querying the device");
  GK_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, opts->device),
           "querying the device");
  gk_cuda_data *D = new (std::nothrow) gk_cuda_data;
  if (!D) {
    set_msg(err, errlen, "out of host memory");
    return GK_CUDA_ERROR;
  }
  D->device = opts->device;
  D->n = n;
  D->d = d;
  D->single = single ? 1 : 0;
  D->opts = *opts;
  D->sms = sms;
  D->smem_optin = (size_t)optin;
  GK_CHECK(cudaDeviceGetAttribute(&D->cc_major, cudaDevAttrComputeCapabilityMajor, opts->device),
           "querying the device");
  GK_CHECK(cudaDeviceGetAttribute(&D->cc_minor, cudaDevAttrComputeCapabilityMinor, opts->device),
           "querying the device");
  D->pdl = D->cc_major >= 9 && env_switch("GPUKMEANS_PDL") != 0;
  *out = D;
  return GK_CUDA_OK;
}

// Everything after the handle exists; on failure the caller destroys it.
// nonfinite: as gk_cuda_upload's.
int upload_into(gk_cuda_data *D, const double *x, const double *shift, int64_t *nonfinite, char *err,
                size_t errlen) {
  const size_t nd = (size_t)D->n * D->d;
  // x, a block of the rows of a larger matrix (opts.ld): read in place by
  // the staged copy; every other way reads contiguous columns, copied here
  long long ld = D->opts.ld > 0 ? (long long)D->opts.ld : (long long)D->n;
  auto contiguous = [&] {
    if (ld == D->n) return;
    D->host_x.resize(nd);
    copy_row_block(x, ld, D->d, 0, D->n, D->host_x.data(), staging_threads(D));
    x = D->host_x.data();
    ld = D->n;
  };
  if (ld < D->n) {
    set_msg(err, errlen, "gk_cuda_upload: ld (%lld) < n (%lld)", ld, (long long)D->n);
    return GK_CUDA_INVALID;
  }
  if (nonfinite || (D->single && !shift)) contiguous();
  const size_t chunk = D->single ? std::min<size_t>(nd, (size_t)8 << 20) : 0;  // doubles staged
  D->shift.assign(D->d, 0.0);
  if (D->single) {
    if (shift) D->shift.assign(shift, shift + D->d);
    else single_shift(x, D->n, D->d, D->shift.data());
  }
  const BlockLayout L(D->n, D->d, D->single ? sizeof(float) : sizeof(double));
  // the check of x (when asked) where no staged copy makes it as it copies
  auto checked_on_host = [&] {
    if (!nonfinite) return GK_CUDA_OK;
    *nonfinite = (int64_t)first_nonfinite(x, (std::int64_t)nd, staging_threads(D));
    return *nonfinite < (int64_t)nd ? GK_CUDA_NONFINITE : GK_CUDA_OK;
  };
  if (stream_wanted(D, (double)L.total + (double)chunk * sizeof(double))) {
    contiguous();
    const int st = checked_on_host();
    return st != GK_CUDA_OK ? st : stream_upload(D, x, err, errlen);
  }
  const bool staging = staging_wanted(D);
  if (!staging) contiguous();
  int st = staging ? GK_CUDA_OK : checked_on_host();  // (small x: before anything is held)
  if (st == GK_CUDA_OK) st = alloc_block(D, chunk * sizeof(double), err, errlen);
  if (st != GK_CUDA_OK) return st;
  GK_CHECK(cudaMemsetAsync(D->scratch, 0, (3 * (size_t)D->d + 2) * sizeof(u64), D->stream), "clearing scratch");
  bool staged = false;
  if (staging) st = staged_upload(D, x, ld, &staged, nonfinite, err, errlen);
  if (st == GK_CUDA_OK && staging && !staged) {  // (no pinned memory here)
    contiguous();
    st = checked_on_host();
  }
  if (st == GK_CUDA_OK && !staged) st = D->single ? copy_single(D, x, chunk, err, errlen) : copy_double(D, x, err, errlen);
  if (st == GK_CUDA_OK) st = column_scales(D, err, errlen);
  if (st == GK_CUDA_OK) st = compute_totss(D, err, errlen);
  return st;
}

}  // namespace

extern "C" int gk_cuda_upload(const double *x, int64_t n, int d, const gk_cuda_options *opts,
                              const double *shift, gk_cuda_data **out, double *seconds, int64_t *nonfinite,
                              char *err, size_t errlen) {
  if (out) *out = nullptr;
  if (!x || n < 1 || d < 1 || !opts || !out) {
    set_msg(err, errlen, "gk_cuda_upload: invalid arguments (n = %lld, d = %d)", (long long)n, d);
    return GK_CUDA_INVALID;
  }
  auto t0 = std::chrono::steady_clock::now();
  gk_cuda_data *D = nullptr;
  int st = new_handle(opts, n, d, opts->single != 0, &D, err, errlen);
  if (st != GK_CUDA_OK) return st;
  st = upload_into(D, x, shift, nonfinite, err, errlen);
  if (st != GK_CUDA_OK) {
    destroy(D);
    return st;
  }
  if (seconds) *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  *out = D;
  return GK_CUDA_OK;
}

// The new handle's x from the parts' stored rows, part after part: one
// strided copy per part (its d columns into the columns of x), device to
// device (peer copies where the devices allow them), then what an upload
// computes from the stored values.
extern "C" int gk_cuda_gather(gk_cuda_data *const *parts, int count, const gk_cuda_options *opts,
                              gk_cuda_data **out, double *seconds, char *err, size_t errlen) {
  if (out) *out = nullptr;
  if (!parts || count < 1 || !opts || !out || !parts[0]) {
    set_msg(err, errlen, "gk_cuda_gather: invalid arguments");
    return GK_CUDA_INVALID;
  }
  int64_t n = 0;
  const gk_cuda_data *P0 = parts[0];
  for (int p = 0; p < count; ++p) {
    const gk_cuda_data *A = parts[p];
    if (!A || !A->x || A->src || A->d != P0->d || A->single != P0->single || A->shift != P0->shift) {
      set_msg(err, errlen, "gk_cuda_gather: part %d is not resident data of the same kind", p);
      return GK_CUDA_INVALID;
    }
    n += A->n;
  }
  auto t0 = std::chrono::steady_clock::now();
  gk_cuda_data *D = nullptr;
  gk_cuda_options o = *opts;
  o.single = P0->single;
  o.ld = 0;
  const int made = new_handle(&o, n, P0->d, P0->single != 0, &D, err, errlen);
  if (made != GK_CUDA_OK) return made;
  D->shift = P0->shift;
  auto gather = [&]() -> int {
    const int st = alloc_block(D, 0, err, errlen);
    if (st != GK_CUDA_OK) return st;
    GK_CHECK(cudaMemsetAsync(D->scratch, 0, (3 * (size_t)D->d + 2) * sizeof(u64), D->stream), "clearing scratch");
    // the parts' last kernels (a fit, an upload) before their rows are read
    for (int p = 0; p < count; ++p) {
      GK_CHECK(cudaSetDevice(parts[p]->device), "selecting the CUDA device");
      GK_CHECK(cudaStreamSynchronize(parts[p]->stream), "waiting for a part");
    }
    GK_CHECK(cudaSetDevice(D->device), "selecting the CUDA device");
    const size_t esz = D->single ? sizeof(float) : sizeof(double);
    long long lo = 0;
    for (int p = 0; p < count; ++p) {
      const gk_cuda_data *A = parts[p];
      GK_CHECK(cudaMemcpy2DAsync((char *)D->x + lo * esz, (size_t)n * esz, A->x, (size_t)A->n * esz,
                                 (size_t)A->n * esz, (size_t)D->d, cudaMemcpyDefault, D->stream),
               "copying a part's rows");
      lo += A->n;
    }
    int r = column_scales(D, err, errlen);
    if (r == GK_CUDA_OK) r = compute_totss(D, err, errlen);
    return r;
  };
  const int st = gather();
  if (st != GK_CUDA_OK) {
    destroy(D);
    return st;
  }
  if (seconds) *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  *out = D;
  return GK_CUDA_OK;
}

// ---- x block by block (a source that is never whole in host memory) ----

extern "C" int gk_cuda_alloc_rows(int64_t n, int d, const gk_cuda_options *opts, const double *shift,
                                  gk_cuda_data **out, char *err, size_t errlen) {
  if (out) *out = nullptr;
  if (n < 1 || d < 1 || !opts || !out || (opts->single && !shift)) {
    set_msg(err, errlen, "gk_cuda_alloc_rows: invalid arguments (n = %lld, d = %d)", (long long)n, d);
    return GK_CUDA_INVALID;
  }
  gk_cuda_data *D = nullptr;
  int st = new_handle(opts, n, d, opts->single != 0, &D, err, errlen);
  if (st != GK_CUDA_OK) return st;
  auto alloc = [&]() -> int {
    D->shift.assign(d, 0.0);
    if (D->single) D->shift.assign(shift, shift + d);
    const BlockLayout L(D->n, D->d, D->single ? sizeof(float) : sizeof(double));
    // (streamed data reads the whole x from host memory at every pass)
    if (stream_wanted(D, (double)L.total)) return out_of_memory(D, (double)L.total, err, errlen);
    const int r = alloc_block(D, 0, err, errlen);
    if (r != GK_CUDA_OK) return r;
    GK_CHECK(cudaMemsetAsync(D->scratch, 0, (3 * (size_t)D->d + 2) * sizeof(u64), D->stream), "clearing scratch");
    return GK_CUDA_OK;
  };
  st = alloc();
  if (st != GK_CUDA_OK) {
    destroy(D);
    return st;
  }
  *out = D;
  return GK_CUDA_OK;
}

extern "C" int gk_cuda_stream_rows(int64_t n, int d, const gk_cuda_options *opts, const double *shift,
                                   const gk_cuda_row_source *source, gk_cuda_data **out, char *err, size_t errlen) {
  if (out) *out = nullptr;
  if (n < 1 || d < 1 || !opts || !out || !source || !source->block || !source->rows || (opts->single && !shift)) {
    set_msg(err, errlen, "gk_cuda_stream_rows: invalid arguments (n = %lld, d = %d)", (long long)n, d);
    return GK_CUDA_INVALID;
  }
  gk_cuda_data *D = nullptr;
  int st = new_handle(opts, n, d, opts->single != 0, &D, err, errlen);
  if (st != GK_CUDA_OK) return st;
  D->shift.assign(d, 0.0);
  if (D->single) D->shift.assign(shift, shift + d);
  st = stream_upload(D, nullptr, err, errlen, source);
  if (st != GK_CUDA_OK) {
    destroy(D);
    return st;
  }
  *out = D;
  return GK_CUDA_OK;
}

extern "C" int gk_cuda_put_rows(gk_cuda_data *D, const double *block, int64_t first, int64_t rows,
                                int64_t *nonfinite, char *err, size_t errlen) {
  if (!D || (!block && rows > 0)) {
    set_msg(err, errlen, "gk_cuda_put_rows: invalid arguments");
    return GK_CUDA_INVALID;
  }
  GK_CHECK(cudaSetDevice(D->device), "selecting the CUDA device");
  return staged_put_rows(D, block, (long long)first, (long long)rows, nonfinite, err, errlen);
}

extern "C" int gk_cuda_finish_rows(gk_cuda_data *D, char *err, size_t errlen) {
  if (!D || !D->x) {
    set_msg(err, errlen, "gk_cuda_finish_rows: invalid arguments");
    return GK_CUDA_INVALID;
  }
  end_put_rows(D);
  GK_CHECK(cudaSetDevice(D->device), "selecting the CUDA device");
  GK_CHECK(cudaStreamSynchronize(D->stream), "copying x to the device");
  const int st = column_scales(D, err, errlen);
  return st != GK_CUDA_OK ? st : compute_totss(D, err, errlen);
}

extern "C" int gk_cuda_get_rows(gk_cuda_data *D, int64_t first, int64_t rows, double *block, char *err,
                                size_t errlen) {
  if (!D || !D->x || D->single || first < 0 || rows < 0 || first + rows > D->n || (!block && rows > 0)) {
    set_msg(err, errlen, "gk_cuda_get_rows: invalid arguments");
    return GK_CUDA_INVALID;
  }
  if (rows == 0) return GK_CUDA_OK;
  GK_CHECK(cudaSetDevice(D->device), "selecting the CUDA device");
  int pitch = 0;
  GK_CHECK(cudaDeviceGetAttribute(&pitch, cudaDevAttrMaxPitch, D->device), "querying the device");
  const size_t w = (size_t)rows * sizeof(double), dpitch = (size_t)D->n * sizeof(double);
  const char *src = (const char *)D->x + (size_t)first * sizeof(double);
  if ((double)dpitch <= (double)pitch) {
    GK_CHECK(cudaMemcpy2DAsync(block, w, src, dpitch, w, (size_t)D->d, cudaMemcpyDeviceToHost, D->stream),
             "copying rows of x to the host");
  } else {
    for (int j = 0; j < D->d; ++j)
      GK_CHECK(cudaMemcpyAsync((char *)block + (size_t)j * w, src + (size_t)j * dpitch, w, cudaMemcpyDeviceToHost,
                               D->stream),
               "copying rows of x to the host");
  }
  GK_CHECK(cudaStreamSynchronize(D->stream), "copying rows of x to the host");
  return GK_CUDA_OK;
}

extern "C" void gk_cuda_free(gk_cuda_data *data) { destroy(data); }

extern "C" int gk_cuda_column_means(const gk_cuda_data *D, double *means) {
  if (!D || D->host_means.empty() || (int)D->host_means.size() != D->d) return 0;
  std::copy(D->host_means.begin(), D->host_means.end(), means);
  return 1;
}

extern "C" int gk_cuda_totss(gk_cuda_data *D, double *totss, char *err, size_t errlen) {
  if (!D || !totss) {
    set_msg(err, errlen, "gk_cuda_totss: invalid arguments");
    return GK_CUDA_INVALID;
  }
  *totss = D->totss;  // computed on the device at upload
  return GK_CUDA_OK;
}

extern "C" int gk_cuda_column_stats(gk_cuda_data *D, double *maxabs, double *shift, char *err, size_t errlen) {
  if (!D) {
    set_msg(err, errlen, "gk_cuda_column_stats: invalid arguments");
    return GK_CUDA_INVALID;
  }
  for (int j = 0; j < D->d; ++j) {
    if (maxabs) maxabs[j] = D->maxabs[j];
    if (shift) shift[j] = D->shift[j];
  }
  return GK_CUDA_OK;
}
