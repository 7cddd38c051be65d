// streamed.cu: x that stays in host memory.  When x does not fit on the
// device (or options.stream says so), the upload keeps only the labels, the
// per-column scales and a few chunk buffers on the device, and every pass
// over the rows (a step, a within-SS pass, predict) brings x there chunk by
// chunk, each chunk's copy overlapped with the kernels of the one before.
// (Or x never whole in host memory, gk_cuda_stream_rows: every pass reads
// its rows from the caller's row source into the staged buffers.)
// Three ways to copy:
//   image       single precision, where host memory allows (a quarter of
//               it at most): a pinned float image of x, float(x - shift)
//               made once by host threads (the resident upload's rounding),
//               and each chunk's rows one strided copy of floats;
//   registered  x itself is page-locked once (cudaHostRegister) and each
//               chunk's rows are one strided copy (cudaMemcpy2DAsync) at the
//               link's speed, no host work; in single precision the
//               doubles are converted on the device to float(x - shift);
//   staged      where x cannot be registered (or options.stream_copy = 1):
//               host threads fill pinned buffers with the chunk's rows
//               (converted on the host in single precision: half the bytes
//               cross the link), as the resident staged upload does.
// The kernels are those of resident data, run on a view of the handle whose
// x, n and labels are the chunk's; the sums are exact fixed-point integers,
// so any split into chunks gives the resident bits.
#include <unistd.h>

#include <algorithm>
#include <limits>
#include <new>
#include <vector>

#include "../single_shift.h"
#include "detail/data_kernels.cuh"
#include "detail/engine.hpp"
#include "detail/host_team.hpp"

namespace gk {

namespace {

const int kBuf = 3;                              // chunk buffers (device and pinned host)
const double kChunkBytes = 256.0 * 1048576;      // a chunk's stored bytes, by default
const double kReserveBytes = 256.0 * 1048576;    // device memory left for a fit's workspace (at most a tenth
                                                 // of what the handle may take)
const long long kMinChunkRows = 1024;

size_t align256(size_t b) { return (b + 255) / 256 * 256; }

}  // namespace

struct StreamSource {
  const double *hx = nullptr;  // the caller's x (n x d doubles, column-major), or nullptr:
  gk_cuda_row_source source = {};  // x read from here at every pass (gk_cuda_stream_rows)
  std::vector<double> rbuf;    // ... in single precision, a piece of a chunk read before its conversion
  long long rows = 0;          // rows per chunk (the last may have fewer)
  long long chunks = 0;
  bool registered = false;     // hx page-locked (cudaHostRegister)
  float *image = nullptr;      // the pinned float image of x (single precision), or nullptr
  const void *direct = nullptr;  // what chunks are copied from without host work: image, or hx when
  size_t direct_esz = 0;         // registered (column-major n x d, elements of direct_esz bytes)
  void *dev[kBuf] = {};        // rows x d: the stored precision, or doubles when registered
  void *host[kBuf] = {};       // staged: the same size, pinned (or pageable where pinned memory is refused)
  bool pinned = false;
  float *conv = nullptr;       // registered, single precision: the converted chunk (rows x d)
  double *dshift = nullptr;    // registered, single precision: the shift on the device
  double max_pitch = 0;        // the largest pitch of a strided copy (cudaDevAttrMaxPitch)
  cudaEvent_t copied[kBuf] = {}, used[kBuf] = {};
  cudaStream_t copy = nullptr;  // the chunks' copies
};

void destroy_stream_source(StreamSource *S) {
  if (!S) return;
  if (S->copy) cudaStreamSynchronize(S->copy);
  if (S->registered) cudaHostUnregister((void *)S->hx);
  if (S->image) cudaFreeHost(S->image);
  if (S->conv) cudaFree(S->conv);
  if (S->dshift) cudaFree(S->dshift);
  for (int b = 0; b < kBuf; ++b) {
    if (S->copied[b]) cudaEventDestroy(S->copied[b]);
    if (S->used[b]) cudaEventDestroy(S->used[b]);
    if (S->dev[b]) cudaFree(S->dev[b]);
    if (S->host[b]) {
      if (S->pinned) cudaFreeHost(S->host[b]);
      else delete[] (char *)S->host[b];
    }
  }
  if (S->copy) cudaStreamDestroy(S->copy);
  delete S;
}

namespace {

size_t stored_size(const gk_cuda_data *D) { return D->single ? sizeof(float) : sizeof(double); }

// Device bytes of streamed data besides its chunk buffers, within `avail`:
// labels, scales, scratch (column maxima) and the reserve for a fit's
// workspace.
double fixed_bytes(const gk_cuda_data *D, double avail) {
  return (double)align256((size_t)D->n * sizeof(int)) + (double)align256((size_t)D->d * sizeof(int)) +
         (double)align256((3 * (size_t)D->d + 2) * sizeof(u64)) + std::min(kReserveBytes, 0.1 * avail);
}

// The device memory the handle may take: options.memory_cap, within the free memory.
int room(const gk_cuda_data *D, double *bytes, char *err, size_t errlen) {
  size_t free_b = 0, total_b = 0;
  GK_CHECK(cudaMemGetInfo(&free_b, &total_b), "querying device memory");
  double r = 0.95 * (double)free_b;
  const double cap = D->opts.memory_cap;
  if (cap > 0 && cap < r) r = cap;
  *bytes = r;
  return GK_CUDA_OK;
}

}  // namespace

bool stream_wanted(const gk_cuda_data *D, double need) {
  if (D->opts.stream == 1) return false;
  if (D->opts.stream == 2) return true;
  const double cap = D->opts.memory_cap;
  if (cap > 0 && need > cap) return true;
  if (need < 1073741824.0) return false;  // small uploads skip the query (per-fit overhead)
  size_t free_b = 0, total_b = 0;
  if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
    cudaGetLastError();
    return false;  // the resident upload reports the error
  }
  return need > (double)free_b;
}

int refuse_streamed(const gk_cuda_data *D, const char *what, char *err, size_t errlen) {
  if (!D || !D->src) return GK_CUDA_OK;
  set_msg(err, errlen, "%s needs x resident on the device, but x is streamed from host memory", what);
  return GK_CUDA_INVALID;
}

namespace {

int read_failed(char *err, size_t errlen) {
  set_msg(err, errlen, "reading rows of x from its source failed");
  return GK_CUDA_ERROR;
}

// Rows [a, a + len) of x read from the row source into dst, a chunk's
// buffer in stored precision (len x d): doubles read straight into it;
// single precision read in pieces of about 32 MiB, each converted to
// float(x - shift) by OpenMP threads (the reader's: staged_copy.cu, omp_parts).
int read_chunk(const gk_cuda_data *D, StreamSource *S, long long a, long long len, void *dst, char *err,
               size_t errlen) {
  if (!D->single)
    return S->source.block(S->source.ctx, a, len, (double *)dst) != 0 ? read_failed(err, errlen) : GK_CUDA_OK;
  const int d = D->d;
  const long long piece = std::max<long long>(1, (long long)(S->rbuf.size() / (size_t)d));
  const int threads = staging_threads(D);
  for (long long r = 0; r < len; r += piece) {
    const long long m = std::min(piece, len - r);
    if (S->source.block(S->source.ctx, a + r, m, S->rbuf.data()) != 0) return read_failed(err, errlen);
    const double *in = S->rbuf.data(), *shift = D->shift.data();
    float *out = (float *)dst + r;
#pragma omp parallel for collapse(2) num_threads(threads) schedule(static)
    for (int j = 0; j < d; ++j)
      for (long long i = 0; i < m; ++i) out[(size_t)j * len + i] = single_stored(in[(size_t)j * m + i], shift[j]);
  }
  return GK_CUDA_OK;
}

}  // namespace

int streamed_rows(const gk_cuda_data *D, const long long *idx, long long m, double *out, char *err, size_t errlen) {
  const StreamSource *S = D->src;
  const double *x = S->hx;
  long long ld = D->n;
  std::vector<double> read;  // (a row source: the rows, m x d column-major)
  if (!x) {
    read.resize((size_t)m * D->d);
    if (m > 0 && S->source.rows(S->source.ctx, reinterpret_cast<const int64_t *>(idx), m, read.data()) != 0)
      return read_failed(err, errlen);
    x = read.data();
    ld = m;
  }
  for (long long r = 0; r < m; ++r)
    for (int j = 0; j < D->d; ++j) {
      const double v = x[(S->hx ? idx[r] : r) + ld * (long long)j];
      out[r * D->d + j] = D->single ? (double)single_stored(v, D->shift[j]) : v;
    }
  return GK_CUDA_OK;
}

int for_each_chunk(gk_cuda_data *D, int *labels, const ChunkFn &fn, char *err, size_t errlen) {
  gk_cuda_data V = *D;  // (a view: destroy() is never called on it)
  V.labels = labels;
  StreamSource *S = D->src;
  if (!S) {
    GK_CHECK(fn(V), "launching kernels");
    return GK_CUDA_OK;
  }
  const long long n = D->n;
  const int d = D->d;
  const size_t esz = stored_size(D);
  const double *shift = D->single ? D->shift.data() : nullptr;
  // host threads for the staged copies, for this pass only (no threads
  // outlive a call: a forked process would wait on them; direct copies
  // start none)
  HostTeam team(staging_threads(D));
  for (long long c = 0; c < S->chunks; ++c) {
    const int b = (int)(c % kBuf);
    const long long a = c * S->rows, len = std::min(S->rows, n - a);
    if (S->direct) {
      // the device buffer is free once its last use has run (events never
      // recorded count as done); then rows [a, a + len) of each column: one
      // strided copy, or a copy per column where x's column is longer than
      // the largest pitch the device takes
      GK_CHECK(cudaStreamWaitEvent(S->copy, S->used[b], 0), "copying a chunk of x");
      const size_t e = S->direct_esz, w = (size_t)len * e;
      const char *src = (const char *)S->direct + (size_t)a * e;
      if ((double)n * e <= S->max_pitch) {
        GK_CHECK(cudaMemcpy2DAsync(S->dev[b], w, src, (size_t)n * e, w, (size_t)d, cudaMemcpyHostToDevice, S->copy),
                 "copying a chunk of x");
      } else {
        for (int j = 0; j < d; ++j)
          GK_CHECK(cudaMemcpyAsync((char *)S->dev[b] + (size_t)j * w, src + (size_t)j * n * e, w,
                                   cudaMemcpyHostToDevice, S->copy),
                   "copying a chunk of x");
      }
    } else {
      // the host buffer is free once its last copy has run
      GK_CHECK(cudaEventSynchronize(S->copied[b]), "copying a chunk of x");
      if (S->hx) {
        fill_rows(S->host[b], S->hx, n, d, a, len, shift, team);
      } else {
        const int st = read_chunk(D, S, a, len, S->host[b], err, errlen);
        if (st != GK_CUDA_OK) return st;
      }
      GK_CHECK(cudaStreamWaitEvent(S->copy, S->used[b], 0), "copying a chunk of x");
      GK_CHECK(cudaMemcpyAsync(S->dev[b], S->host[b], (size_t)len * d * esz, cudaMemcpyHostToDevice, S->copy),
               "copying a chunk of x");
    }
    GK_CHECK(cudaEventRecord(S->copied[b], S->copy), "copying a chunk of x");
    GK_CHECK(cudaStreamWaitEvent(D->stream, S->copied[b], 0), "copying a chunk of x");
    V.n = len;
    V.labels = labels + a;
    if (S->conv) {  // registered doubles -> the stored floats (conv is reused in stream order)
      const long long m = len * d;
      const int g = (int)std::min<long long>((m + 255) / 256, 4096);
      k_convert_chunk<<<g, 256, 0, D->stream>>>((const double *)S->dev[b], m, 0, len, S->dshift, S->conv);
      GK_CHECK(cudaGetLastError(), "converting a chunk of x to single precision");
      GK_CHECK(cudaEventRecord(S->used[b], D->stream), "converting a chunk of x");
      V.x = S->conv;
      GK_CHECK(fn(V), "launching kernels on a chunk of x");
    } else {
      V.x = S->dev[b];
      GK_CHECK(fn(V), "launching kernels on a chunk of x");
      GK_CHECK(cudaEventRecord(S->used[b], D->stream), "launching kernels on a chunk of x");
    }
  }
  return GK_CUDA_OK;
}

int stream_upload(gk_cuda_data *D, const double *x, char *err, size_t errlen, const gk_cuda_row_source *source) {
  const long long n = D->n;
  const int d = D->d;
  const size_t esz = stored_size(D);
  double avail = 0;
  int st = room(D, &avail, err, errlen);
  if (st != GK_CUDA_OK) return st;
  // rows per chunk: ~kChunkBytes each, kBuf of them within the room left
  // beside the labels (options.stream_rows: tests)
  StreamSource *S = new (std::nothrow) StreamSource;
  if (!S) {
    set_msg(err, errlen, "out of host memory");
    return GK_CUDA_ERROR;
  }
  D->src = S;  // freed by destroy() from here on
  S->hx = x;
  if (!x) S->source = *source;  // (rows read at every pass: staged, no image, nothing registered)
  int pitch = 0;
  GK_CHECK(cudaDeviceGetAttribute(&pitch, cudaDevAttrMaxPitch, D->device), "querying the device");
  S->max_pitch = (double)pitch;
  // single precision: a pinned float image where a quarter of the host's
  // memory holds it, and half of what is free now (pinned memory cannot be
  // swapped out: on a busy host, or with many workers streaming at once,
  // the others fall back to x page-locked in place)
  if (D->opts.stream_copy == 0 && D->single && x) {
    const double ibytes = (double)n * d * sizeof(float);
    const double page = (double)sysconf(_SC_PAGE_SIZE);
    const double phys = (double)sysconf(_SC_PHYS_PAGES) * page, avail = (double)sysconf(_SC_AVPHYS_PAGES) * page;
    if (phys > 0 && ibytes <= 0.25 * phys && ibytes <= 0.5 * avail) {
      if (cudaHostAlloc((void **)&S->image, (size_t)ibytes, cudaHostAllocDefault) == cudaSuccess) {
        HostTeam team(staging_threads(D));
        fill_rows(S->image, x, n, d, 0, n, D->shift.data(), team);
        S->direct = S->image;
        S->direct_esz = sizeof(float);
      } else {
        cudaGetLastError();
        S->image = nullptr;
      }
    }
  }
  // x page-locked in place where the driver allows (not in containers that
  // limit locked memory, nor twice): then no host buffers at all
  if (D->opts.stream_copy != 1 && !S->image && x) {
    const size_t xbytes = (size_t)n * d * sizeof(double);
    S->registered = cudaHostRegister((void *)x, xbytes, cudaHostRegisterReadOnly) == cudaSuccess;
    if (!S->registered) {
      cudaGetLastError();
      S->registered = cudaHostRegister((void *)x, xbytes, cudaHostRegisterDefault) == cudaSuccess;
      if (!S->registered) cudaGetLastError();
    }
    if (S->registered) {
      S->direct = x;
      S->direct_esz = sizeof(double);
    }
  }
  // rows per chunk: ~kChunkBytes each, kBuf of them (and, registered in
  // single precision, the converted chunk) within the room left beside the
  // labels (options.stream_rows: tests)
  const bool convert = S->registered && D->single;
  const double row_bytes = (double)d * (S->registered ? sizeof(double) : esz);  // (an image: esz)
  const double per_row = kBuf * row_bytes + (convert ? (double)d * sizeof(float) : 0.0);
  const bool forced = D->opts.stream_rows > 0;
  long long rows = forced ? (long long)D->opts.stream_rows : std::max(kMinChunkRows, (long long)(kChunkBytes / row_bytes));
  const double left = avail - fixed_bytes(D, avail);
  if (!forced) rows = std::min(rows, (long long)(left / per_row));
  rows = std::min(rows, n);
  if (rows < (forced ? 1 : std::min(n, kMinChunkRows)) || left < rows * per_row) {
    set_msg(err, errlen,
            "streaming x from host memory needs %.2f GiB on device %d (labels and chunk buffers) but %.2f GiB is "
            "available%s",
            gib(fixed_bytes(D, avail) + (double)std::min(n, kMinChunkRows) * per_row), D->device, gib(avail),
            D->opts.memory_cap > 0 && D->opts.memory_cap < 1e300 ? " under options(gpukmeans.device_memory)" : "");
    return GK_CUDA_OUT_OF_MEMORY;
  }
  S->rows = rows;
  S->chunks = (n + rows - 1) / rows;
  if (!x && D->single) {  // (the pieces read before their conversion: about 32 MiB of doubles)
    try {
      S->rbuf.resize((size_t)std::min<long long>(rows, std::max<long long>(1, (32LL << 20) / 8 / d)) * d);
    } catch (const std::bad_alloc &) {
      set_msg(err, errlen, "out of host memory (a piece of a chunk of x)");
      return GK_CUDA_ERROR;
    }
  }
  // one device allocation: labels | scales | scratch, as the resident block less x
  const size_t lab = align256((size_t)n * sizeof(int)), scr = lab + align256((size_t)d * sizeof(int));
  const size_t total = scr + align256((3 * (size_t)d + 2) * sizeof(u64)) + align256((size_t)d * sizeof(double));
  GK_CHECK(cudaMalloc(&D->block, total), "allocating the labels of streamed x");
  char *blk = (char *)D->block;
  D->x = nullptr;
  D->labels = (int *)blk;
  D->d_scale = (int *)(blk + lab);
  D->scratch = (u64 *)(blk + scr);
  D->d_mean = (double *)(blk + total - align256((size_t)d * sizeof(double)));
  GK_CHECK(cudaStreamCreateWithFlags(&D->stream, cudaStreamNonBlocking), "creating a stream");
  // Streamed x has no column means on the device (totss is the host's): the
  // images of the k-means|| filters centre it on 0 instead, which their
  // bound allows, |x - 0| <= 2 max |x| (detail/init_bound.cuh).
  GK_CHECK(cudaMemsetAsync(D->d_mean, 0, (size_t)d * sizeof(double), D->stream), "clearing the means");
  GK_CHECK(cudaStreamCreateWithFlags(&S->copy, cudaStreamNonBlocking), "creating a stream");
  GK_CHECK(cudaEventCreate(&D->ev0), "creating events");
  GK_CHECK(cudaEventCreate(&D->ev1), "creating events");
  const size_t chunk_bytes = (size_t)rows * d * (S->registered ? sizeof(double) : esz);
  if (convert) {
    GK_CHECK(cudaMalloc(&S->conv, (size_t)rows * d * sizeof(float)), "allocating the chunk buffers of streamed x");
    GK_CHECK(cudaMalloc(&S->dshift, (size_t)d * sizeof(double)), "allocating the shift");
    GK_CHECK(cudaMemcpyAsync(S->dshift, D->shift.data(), (size_t)d * sizeof(double), cudaMemcpyHostToDevice, D->stream),
             "copying the shift");
  }
  S->pinned = !S->direct;
  for (int b = 0; b < kBuf && S->pinned; ++b)
    if (cudaHostAlloc(&S->host[b], chunk_bytes, cudaHostAllocDefault) != cudaSuccess) {
      cudaGetLastError();  // no pinned memory here (limits, containers): pageable buffers
      for (int c = 0; c < b; ++c) cudaFreeHost(S->host[c]);
      for (int c = 0; c < kBuf; ++c) S->host[c] = nullptr;
      S->pinned = false;
    }
  for (int b = 0; b < kBuf; ++b) {
    if (!S->pinned && !S->direct) {
      S->host[b] = new (std::nothrow) char[chunk_bytes];
      if (!S->host[b]) {
        set_msg(err, errlen, "out of host memory (%.2f GiB for the chunk buffers of streamed x)",
                gib((double)kBuf * chunk_bytes));
        return GK_CUDA_ERROR;
      }
    }
    GK_CHECK(cudaMalloc(&S->dev[b], chunk_bytes), "allocating the chunk buffers of streamed x");
    GK_CHECK(cudaEventCreateWithFlags(&S->copied[b], cudaEventDisableTiming), "creating events");
    GK_CHECK(cudaEventCreateWithFlags(&S->used[b], cudaEventDisableTiming), "creating events");
  }
  // the column maxima of the stored values (one pass over the chunks) and
  // the scales of the sums, as for resident data
  u64 *mx = D->scratch + 2 * (size_t)d + 2;
  GK_CHECK(cudaMemsetAsync(D->scratch, 0, (3 * (size_t)d + 2) * sizeof(u64), D->stream), "clearing scratch");
  st = for_each_chunk(D, D->labels, [&](const gk_cuda_data &V) -> cudaError_t {
    const long long g = std::max<long long>(1, std::min<long long>((V.n + 255) / 256, 4LL * V.sms));
    const dim3 grid((unsigned int)g, V.d);
    if (V.single) k_col_maxabs<float><<<grid, 256, 0, D->stream>>>((const float *)V.x, V.n, mx, nullptr);
    else k_col_maxabs<double><<<grid, 256, 0, D->stream>>>((const double *)V.x, V.n, mx, nullptr);
    return cudaGetLastError();
  }, err, errlen);
  if (st != GK_CUDA_OK) return st;
  st = scales_from_maxima(D, mx, err, errlen);
  if (st != GK_CUDA_OK) return st;
  GK_CHECK(cudaStreamSynchronize(D->stream), "copying scales");
  D->totss = std::numeric_limits<double>::quiet_NaN();  // not computed on the device (the engine sums x on the host)
  return GK_CUDA_OK;
}

}  // namespace gk

extern "C" int gk_cuda_streamed(const gk_cuda_data *D, int64_t *chunk_rows, int64_t *chunks) {
  if (!D || !D->src) {
    if (chunk_rows) *chunk_rows = 0;
    if (chunks) *chunks = 0;
    return 0;
  }
  if (chunk_rows) *chunk_rows = D->src->rows;
  if (chunks) *chunks = D->src->chunks;
  return 1;
}
