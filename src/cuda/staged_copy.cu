// staged_copy.cu: the upload of x through pinned staging buffers (and the
// download of labels the same way, staged_download).
//
// A copy from pageable memory runs far below the link's speed (the driver
// stages it through small pinned buffers of its own, one at a time: 8.3 GB/s
// on an H200 whose pinned copies reach 55 GB/s).  Here a team of host
// threads (detail/host_team.hpp) fills kBuffers pinned buffers in turn, each
// with a block of rows of every column, while the copy engine drains the
// ones filled before; an event per buffer says when it may be filled again.
// In single precision the threads also convert (float(x - shift), the
// rounding of the device's own conversion), so half the bytes cross the
// link.  The device receives the same bits as from the plain copy.  As they
// read x the threads also check that it is finite (when asked) and, for a
// large x, add the columns up in totss' chunks (column_sum.h), so that x is
// read once for the column means.  A mid-sized x (8 to 256 MiB) goes
// through smaller buffers without the sums: the caller's totss then runs
// on threads of its own beside the upload (src/cuda_engine.cpp).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <unistd.h>
#include <vector>

#include "../column_sum.h"
#include "../nonfinite.h"
#include "../single_shift.h"
#include "../stage_log.h"
#include "detail/engine.hpp"
#include "detail/host_team.hpp"

namespace gk {

// The pinned buffers of a handle's staged copies (uploads and downloads),
// had at its first staged copy (made, or the set kept on the device) and
// held until it is freed: making and freeing 96 MiB of pinned memory costs
// tens of milliseconds, every fit of a large x downloads its labels, and
// fits with several starts do so for each start.
struct StagingBuffers {
  static const int kCount = 3;
  void *p[kCount] = {};
  cudaEvent_t ev[kCount] = {};
  size_t bytes = 0;  // each
  ~StagingBuffers() {
    for (int i = 0; i < kCount; ++i) {
      if (ev[i]) cudaEventDestroy(ev[i]);
      if (p[i]) cudaFreeHost(p[i]);
    }
  }
};

namespace {

const int kBuffers = StagingBuffers::kCount;
const size_t kBufferBytes = (size_t)32 << 20;      // each buffer, large uploads
const size_t kTestBufferBytes = (size_t)64 << 10;  // staging = 2: many small chunks
const double kStagingMinBytes = 256.0 * 1048576;   // from here: kBufferBytes buffers, the columns added up
// x of kMidMinBytes up to kStagingMinBytes (as doubles) is staged too, in
// buffers of kMidBufferBytes (12 MiB pinned, made at the first such upload
// and kept; their making did not show beside a process's first fit, 21-26
// ms with its kernels' loading on an H200 host), without the column sums
// (the caller's totss runs beside it: gk_cuda_upload_stages).  B's 16 MB
// crossed at 8 GB/s as one pageable copy.  Below: one pageable copy.
const double kMidMinBytes = 8.0 * 1048576;
const size_t kMidBufferBytes = (size_t)4 << 20;
const size_t kMinPart = (size_t)1 << 18;           // elements a thread takes at least
// ... of a mid-sized x's smaller buffers (B on an H200 host: 2^17, 4
// threads a double buffer, staged in 1.1-1.5 ms; 2^15, 16 threads, 1.4-2.0)
const size_t kMidMinPart = (size_t)1 << 17;
const size_t kAlign = 16;                          // parts start on 64-byte lines

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Bytes of an n x d x as R holds it (doubles), which the upload's way is chosen by.
double x_bytes(long long n, int d) { return (double)n * d * sizeof(double); }

// A freed handle's buffers are kept, one set per device (the larger, at
// most kBuffers x kBufferBytes), for the next handle there: each fit makes
// a handle, and pinning 96 MiB and unpinning it again would otherwise cost
// every large fit tens of milliseconds outside its upload and compute.
// The sets live until R's session ends (gk_cuda_release_kept, from an exit
// finalizer, while the CUDA runtime is still there), or else as long as
// the process.
std::mutex kept_mutex;
std::vector<StagingBuffers *> &kept() {
  static std::vector<StagingBuffers *> *sets = new std::vector<StagingBuffers *>;
  return *sets;
}
long kept_pid = 0;  // the process that kept them (a forked child must not free them)

// The set kept for `device` if it holds buffers of at least `bytes` each
// (taken: the caller owns it now), else nullptr.
StagingBuffers *take_kept(int device, size_t bytes) {
  std::lock_guard<std::mutex> lock(kept_mutex);
  std::vector<StagingBuffers *> &k = kept();
  if (device < 0 || (size_t)device >= k.size() || !k[device] || k[device]->bytes < bytes) return nullptr;
  StagingBuffers *b = k[device];
  k[device] = nullptr;
  return b;
}

}  // namespace

void release_staging(StagingBuffers *b, int device) {
  if (!b) return;
  if (device >= 0) {  // (the larger of this set and the one kept stays)
    std::lock_guard<std::mutex> lock(kept_mutex);
    std::vector<StagingBuffers *> &k = kept();
    if ((size_t)device >= k.size()) k.resize((size_t)device + 1, nullptr);
    if (!k[device] || k[device]->bytes < b->bytes) std::swap(k[device], b);  // (b: the one deleted below)
    kept_pid = (long)getpid();
  }
  delete b;
}

namespace {

// The handle's staging buffers, each of at least `bytes` (made, or made
// again larger); nullptr where pinned memory cannot be had (limits,
// containers): the caller copies the plain way.
StagingBuffers *staging_buffers(gk_cuda_data *D, size_t bytes) {
  if (D->staging && D->staging->bytes >= bytes) return D->staging;
  release_staging(D->staging, D->device);
  D->staging = take_kept(D->device, bytes);
  if (D->staging) return D->staging;
  // (uploads ask for at most kBufferBytes: made that size, or for a
  // mid-sized x kMidBufferBytes, so that the set is kept for later handles)
  if (bytes <= kBufferBytes && bytes > kMidBufferBytes) bytes = kBufferBytes;
  else if (bytes <= kMidBufferBytes && bytes > kTestBufferBytes) bytes = kMidBufferBytes;
  StagingBuffers *b = new (std::nothrow) StagingBuffers;
  if (!b) return nullptr;
  for (int i = 0; i < kBuffers; ++i) {
    if (cudaHostAlloc(&b->p[i], bytes, cudaHostAllocDefault) != cudaSuccess ||
        cudaEventCreateWithFlags(&b->ev[i], cudaEventDisableTiming) != cudaSuccess) {
      cudaGetLastError();
      delete b;
      return nullptr;
    }
  }
  b->bytes = bytes;
  D->staging = b;
  return b;
}

// One team per copy, or (GPUKMEANS_STAGE_TEAM=0, benchmarks) fresh threads
// for every buffer, as before the team.
bool team_per_copy() { return env_switch("GPUKMEANS_STAGE_TEAM") != 0; }

// The team's threads over [0, total) (HostTeam::run), or fresh threads
// where team_per_copy() is off.
void run_parts(HostTeam &team, bool reuse, size_t total, const HostTeam::Part &part, size_t min_part = kMinPart,
               size_t align = kAlign) {
  if (reuse) {
    team.run(total, min_part, align, part);
  } else {
    HostTeam fresh(team.size());
    fresh.run(total, min_part, align, part);
  }
}

// f(a, b) over [0, total) in parts of `per` (the last shorter), by up to
// `threads` OpenMP threads.  A source's blocks are read by OpenMP threads
// (src/csc_reader.h), which spin for a while after each loop: a team of
// other threads filling the staging buffers then shares the cores with
// them (4 GB of doubles on an H200 host, 2026-11-28: 0.43 s against
// 0.06 s with OMP_WAIT_POLICY=passive), where the same OpenMP threads pick
// the fill up at once.  (Built without OpenMP: on this thread.)
template <typename F>
void omp_parts(size_t total, size_t per, int threads, F f) {
  const long long parts = (long long)((total + per - 1) / per);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (long long p = 0; p < parts; ++p) f((size_t)p * per, std::min(total, (size_t)(p + 1) * per));
}

// The copies below, with Check: also whether a value copied is not finite
// (x - x is NaN exactly for NA, NaN and +-Inf), in a loop bound by memory;
// they return whether one was.  sum (not NULL): the values are also added
// to it in order (a chunk's sum, column_sum.h).  (Streaming stores into
// the pinned buffers were tried: no faster with the element-wise split of
// the threads, 0.33 s slower on 1e8 x 16 doubles with whole columns per
// thread: H100 host, 2026-11-25.)

// src[t] for t in [0, len) through store(t, value), with Check whether one
// is not finite and, sum not NULL, each added to it in order.  The running
// sum is a local long double: added through `sum` itself, g++ sends the
// x87 value to memory and back at every element (fstpt / fldt), 7.7 ns an
// element against 2.05 on the development machine's EPYC.  The same
// additions in the same order: the same bits.
template <bool Check, typename Store>
bool copy_values(const double *src, size_t len, long double *sum, Store store) {
  bool bad = false;
  if (!sum) {
    for (size_t t = 0; t < len; ++t) {
      store(t, src[t]);
      if (Check) bad |= is_nonfinite(src[t]);
    }
    return bad;
  }
  long double s = *sum;
  for (size_t t = 0; t < len; ++t) {
    store(t, src[t]);
    if (Check) bad |= is_nonfinite(src[t]);
    s += src[t];
  }
  *sum = s;
  return bad;
}

// A value as the device stores it: v itself in double precision,
// float(v - shift) in single (single_stored: the device's conversion's
// rounding, a double subtraction, then round to nearest).
template <typename T>
T stored_as(double v, double shift);
template <>
inline double stored_as<double>(double v, double) {
  return v;
}
template <>
inline float stored_as<float>(double v, double shift) {
  return single_stored(v, shift);
}

// dst[t] = src[t] as stored (stored_as), t in [0, len).
template <bool Check, typename T>
bool copy_stored(T *dst, const double *src, size_t len, double shift, long double *sum) {
  return copy_values<Check>(src, len, sum, [dst, shift](size_t t, double v) { dst[t] = stored_as<T>(v, shift); });
}

// Rows [r0, r1) of column j of x (leading dimension n; x points at its
// row x0: a block of rows of a larger x, else x0 = 0) into the len x d
// block of rows [a, a + len) at dst, in stored precision (float(x -
// shift[j]) when shift is not NULL); sum (not NULL) takes the values in
// order.  Returns whether a value was not finite (checked with Check only).
template <bool Check>
bool fill_run(void *dst, const double *x, long long n, long long a, long long len, int j, long long r0, long long r1,
              const double *shift, long double *sum, long long x0 = 0) {
  const size_t t = (size_t)j * (size_t)len + (size_t)(r0 - a), run = (size_t)(r1 - r0);
  const double *src = x + (size_t)j * (size_t)n + (size_t)(r0 - x0);
  if (!shift) return copy_stored<Check>((double *)dst + t, src, run, 0.0, sum);
  return copy_stored<Check>((float *)dst + t, src, run, shift[j], sum);
}

// Elements [t0, t1) of the len x d block of rows [a, a + len) of x (element
// t is row a + t % len of column t / len), column run by column run.
template <bool Check>
bool fill_block_range(void *dst, const double *x, long long n, long long a, long long len, size_t t0, size_t t1,
                      const double *shift) {
  bool bad = false;
  for (size_t t = t0; t < t1;) {
    const size_t j = t / (size_t)len, i = t % (size_t)len;
    const size_t run = std::min(t1 - t, (size_t)len - i);
    bad |= fill_run<Check>(dst, x, n, a, len, (int)j, a + (long long)i, a + (long long)(i + run), shift, nullptr);
    t += run;
  }
  return bad;
}

// The column sums of a staged upload in totss' chunks (column_sum.h): the
// block of rows [a, a + len) is cut, column by column, into pieces at the
// chunks' boundaries (global rows), a piece one thread's; a chunk that
// crosses into the next block goes on there from its open sum.  Blocks are
// filled one after the other, so a chunk's values are added in row order
// whatever the threads: the bits of cpu_totss' own first pass.  (A
// column's first and last pieces of a block may be two threads': the
// first reads the open sum the block before left (from), the last leaves
// its own for the next block (to); next_block() swaps them.)
struct ChunkSums {
  long long n = 0, chunks = 0;
  int group = 4;                    // whole chunks a thread takes at once (1..4)
  std::vector<long double> sum;     // d x chunks, column-major
  std::vector<long double> from, to;  // per column: the sum of a chunk that crosses into the next block
  ChunkSums(long long n_, int d)
      : n(n_), chunks(totss_chunks(n_)), sum((size_t)d * chunks, 0.0L), from(d, 0.0L), to(d, 0.0L) {}
  void next_block() { from.swap(to); }
  // pieces of a column in the block of rows [a, a + len)
  static long long pieces(long long a, long long len) { return (a + len - 1) / kTotssChunkRows - a / kTotssChunkRows + 1; }
  // Piece q of column j of that block: rows [r0, r1), filled and added up.
  // (x0: the row of x that x points at, as fill_run's)
  template <bool Check>
  bool fill(void *dst, const double *x, long long ld, long long a, long long len, int j, long long q,
            const double *shift, long long x0) {
    const long long chunk = a / kTotssChunkRows + q, c0 = chunk * kTotssChunkRows;
    const long long r0 = std::max(a, c0), r1 = std::min(a + len, c0 + kTotssChunkRows);
    long double s = r0 == c0 ? 0.0L : from[j];
    const bool bad = fill_run<Check>(dst, x, ld, a, len, j, r0, r1, shift, &s, x0);
    if (r1 == std::min(n, c0 + kTotssChunkRows)) sum[(size_t)j * chunks + chunk] = s;  // the chunk's end
    else to[j] = s;
    return bad;
  }
  double mean(int j) const { return chunked_mean(sum.data() + (size_t)j * chunks, chunks, n); }
  // Pieces [p0, p1) of the block (m a column), in order; runs of pieces that
  // are whole chunks go up to four at a time: their chains interleaved in
  // one loop, as cpu_totss' passes (one chain, latency-bound at about 2 ns a
  // value, held a 32-thread host's single-precision upload at 0.28 s
  // against 0.19 s without the sums).
  // (x0: the row of x that x points at, as fill_run's)
  template <bool Check>
  bool fill_range(void *dst, const double *x, long long ld, long long a, long long len, long long m, size_t p0,
                  size_t p1, const double *shift, long long x0 = 0) {
    bool bad = false;
    for (size_t p = p0; p < p1;) {
      int js[4];
      long long cs[4];
      int g = 0;
      for (; p < p1 && g < group; ++p, ++g) {
        const int j = (int)(p / (size_t)m);
        const long long chunk = a / kTotssChunkRows + (long long)(p % (size_t)m), c0 = chunk * kTotssChunkRows;
        if (c0 < a || c0 + kTotssChunkRows > a + len) break;  // not a whole chunk of this block
        js[g] = j;
        cs[g] = chunk;
      }
      if (g == 0) {  // a chunk's start or end: one chain, from or to the next block
        bad |= fill<Check>(dst, x, ld, a, len, (int)(p / (size_t)m), (long long)(p % (size_t)m), shift, x0);
        ++p;
        continue;
      }
      const double *in[4] = {nullptr, nullptr, nullptr, nullptr};
      double sh[4] = {0, 0, 0, 0};
      long double out_s[4];
      void *out[4] = {nullptr, nullptr, nullptr, nullptr};
      for (int r = 0; r < g; ++r) {
        const long long c0 = cs[r] * kTotssChunkRows;
        in[r] = x + (size_t)js[r] * (size_t)ld + (size_t)(c0 - x0);
        const size_t t = (size_t)js[r] * (size_t)len + (size_t)(c0 - a);
        out[r] = shift ? (void *)((float *)dst + t) : (void *)((double *)dst + t);
        if (shift) sh[r] = shift[js[r]];
      }
      if (shift) bad |= fill_chunks<Check, float>(g, out, in, sh, out_s);
      else bad |= fill_chunks<Check, double>(g, out, in, sh, out_s);
      for (int r = 0; r < g; ++r) sum[(size_t)js[r] * chunks + cs[r]] = out_s[r];
    }
    return bad;
  }

 private:
  // g (1..4) whole chunks: out[r][t] = the stored in[r][t] (float(v -
  // sh[r]) in single precision), sums[r] their values added in order.
  template <bool Check, typename T>
  static bool fill_chunks(int g, void *const *out, const double *const *in, const double *sh, long double *sums) {
    switch (g) {
      case 1: return chunks_n<Check, T, 1>(out, in, sh, sums);
      case 2: return chunks_n<Check, T, 2>(out, in, sh, sums);
      case 3: return chunks_n<Check, T, 3>(out, in, sh, sums);
      default: return chunks_n<Check, T, 4>(out, in, sh, sums);
    }
  }
  // (four scalar long doubles: an array of them went through memory at every value)
  template <bool Check, typename T, int N>
  static bool chunks_n(void *const *out, const double *const *in, const double *sh, long double *sums) {
    T *o0 = (T *)out[0], *o1 = (T *)out[1], *o2 = (T *)out[2], *o3 = (T *)out[3];
    const double *i0 = in[0], *i1 = in[1], *i2 = in[2], *i3 = in[3];
    const double h0 = sh[0], h1 = sh[1], h2 = sh[2], h3 = sh[3];
    long double s0 = 0.0L, s1 = 0.0L, s2 = 0.0L, s3 = 0.0L;
    bool bad = false;
    for (long long t = 0; t < kTotssChunkRows; ++t) {
      const double v0 = i0[t];
      o0[t] = stored_as<T>(v0, h0);
      s0 += v0;
      if (Check) bad |= is_nonfinite(v0);
      if (N > 1) {
        const double v1 = i1[t];
        o1[t] = stored_as<T>(v1, h1);
        s1 += v1;
        if (Check) bad |= is_nonfinite(v1);
      }
      if (N > 2) {
        const double v2 = i2[t];
        o2[t] = stored_as<T>(v2, h2);
        s2 += v2;
        if (Check) bad |= is_nonfinite(v2);
      }
      if (N > 3) {
        const double v3 = i3[t];
        o3[t] = stored_as<T>(v3, h3);
        s3 += v3;
        if (Check) bad |= is_nonfinite(v3);
      }
    }
    sums[0] = s0;
    if (N > 1) sums[1] = s1;
    if (N > 2) sums[2] = s2;
    if (N > 3) sums[3] = s3;
    return bad;
  }
};
}  // namespace

int staging_threads(const gk_cuda_data *D) {
  int t = D->opts.host_threads;
  if (t <= 0) t = (int)std::max(1u, std::thread::hardware_concurrency());
  // (up to 32: an H200 host, 2026-11-26, 1e8 x 16: single 0.35 s with 16
  // threads, 0.20-0.21 s with 32; double 0.30-0.38 s, 0.28-0.34 s)
  return std::min(t, 32);
}

void fill_rows(void *dst, const double *x, long long n, int d, long long a, long long len, const double *shift,
               HostTeam &team) {
  run_parts(team, team_per_copy(), (size_t)len * d,
            [=](size_t t0, size_t t1) { fill_block_range<false>(dst, x, n, a, len, t0, t1, shift); });
}

namespace {

// x of mid size (kMidMinBytes to kStagingMinBytes), staged by size
// (staging 0), unless the internal GPUKMEANS_MID_STAGING=0 (one pageable
// copy, as before: tools/gpu/b-rest.R compares the two).
bool mid_sized(long long n, int d, int staging) {
  if (staging != 0 || env_switch("GPUKMEANS_MID_STAGING") == 0) return false;
  const double bytes = x_bytes(n, d);
  return bytes >= kMidMinBytes && bytes < kStagingMinBytes;
}

// The staged upload adds the columns up (ChunkSums) for totss' means.
bool adds_columns(long long n, int d, int staging) {
  if (staging == 1 || mid_sized(n, d, staging)) return false;
  return staging == 2 || x_bytes(n, d) >= kStagingMinBytes;
}

}  // namespace

bool staging_wanted(long long n, int d, int staging) {
  if (staging == 1) return false;
  if (staging == 2) return true;
  return x_bytes(n, d) >= kStagingMinBytes || mid_sized(n, d, staging);
}

bool staging_wanted(const gk_cuda_data *D) { return staging_wanted(D->n, D->d, D->opts.staging); }

namespace {

// The rows of a staging buffer (of every column, in stored precision; at
// least 1), at most `cap`.
long long buffer_rows(const gk_cuda_data *D, long long cap) {
  const size_t esz = D->single ? sizeof(float) : sizeof(double);
  const size_t per = (D->opts.staging == 2                    ? kTestBufferBytes
                      : mid_sized(D->n, D->d, D->opts.staging) ? kMidBufferBytes
                                                               : kBufferBytes) /
                     esz;  // elements per buffer
  return std::min<long long>(cap, std::max<long long>(1, (long long)(per / D->d)));
}

// Rows [a, a + len) of every column from the pinned block src (len x d) to
// x on the device (n rows): one strided copy, or one per column where a
// column is longer than the largest pitch the device takes.
cudaError_t copy_rows_to_device(gk_cuda_data *D, const void *src, long long a, long long len, size_t esz,
                                double max_pitch, cudaStream_t s) {
  const size_t w = (size_t)len * esz, pitch = (size_t)D->n * esz;
  char *dst = (char *)D->x + (size_t)a * esz;
  if ((double)pitch <= max_pitch)
    return cudaMemcpy2DAsync(dst, pitch, src, w, w, (size_t)D->d, cudaMemcpyHostToDevice, s);
  for (int j = 0; j < D->d; ++j) {
    const cudaError_t e =
        cudaMemcpyAsync(dst + (size_t)j * pitch, (const char *)src + (size_t)j * w, w, cudaMemcpyHostToDevice, s);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

}  // namespace

// Blocks of rows: each buffer holds rows [a, a + len) of every column, cut
// into pieces at totss' chunks, so that the threads add the columns up as
// they copy them (the column means: one pass over x less on the host).
int staged_upload(gk_cuda_data *D, const double *x, long long ld, bool *used, int64_t *nonfinite, char *err,
                  size_t errlen) {
  *used = false;
  const auto t_start = std::chrono::steady_clock::now();
  const long long n = D->n;
  if (ld != n && nonfinite) {
    set_msg(err, errlen, "staged_upload: a check of x needs contiguous columns");
    return GK_CUDA_INVALID;
  }
  const int d = D->d;
  const size_t esz = D->single ? sizeof(float) : sizeof(double);
  const long long rows = buffer_rows(D, n);
  int pitch = 0;
  GK_CHECK(cudaDeviceGetAttribute(&pitch, cudaDevAttrMaxPitch, D->device), "querying the device");
  StagingBuffers *sb = staging_buffers(D, (size_t)rows * d * esz);
  if (!sb) return GK_CUDA_OK;  // no pinned memory here: the plain copy
  StagingBuffers &B = *sb;
  *used = true;
  HostTeam team(staging_threads(D));
  const bool reuse = team_per_copy();
  const double *shift = D->single ? D->shift.data() : nullptr;
  ChunkSums sums(n, d);
  // (GPUKMEANS_STAGE_SUMS, tools/cuda-dev: 0 no column sums here, the host
  // then makes the means; 1 one chunk a thread at a time; else up to 4)
  const char *mode = std::getenv("GPUKMEANS_STAGE_SUMS");
  const bool add_up = !(mode && mode[0] == '0') && adds_columns(n, d, D->opts.staging);
  if (mode && mode[0] == '1') sums.group = 1;
  const size_t min_part = mid_sized(n, d, D->opts.staging) ? kMidMinPart : kMinPart;
  std::atomic<bool> bad(false);
  cudaStream_t s = D->stream;
  long long c = 0;
  for (long long a = 0; a < n; a += rows, ++c) {
    const int b = (int)(c % kBuffers);
    const long long len = std::min(rows, n - a);
    if (c >= kBuffers) GK_CHECK(cudaEventSynchronize(B.ev[b]), "copying x to the device");
    void *dst = B.p[b];
    if (add_up) {
      const long long m = ChunkSums::pieces(a, len);  // pieces a column
      const HostTeam::Part part = [=, &bad, &sums](size_t p0, size_t p1) {
        const bool found = nonfinite ? sums.fill_range<true>(dst, x, ld, a, len, m, p0, p1, shift)
                                     : sums.fill_range<false>(dst, x, ld, a, len, m, p0, p1, shift);
        if (found) bad = true;
      };
      run_parts(team, reuse, (size_t)(m * d), part, 1, 1);
      sums.next_block();
    } else {
      const HostTeam::Part part = [=, &bad](size_t t0, size_t t1) {
        const bool found = nonfinite ? fill_block_range<true>(dst, x, ld, a, len, t0, t1, shift)
                                     : fill_block_range<false>(dst, x, ld, a, len, t0, t1, shift);
        if (found) bad = true;
      };
      run_parts(team, reuse, (size_t)len * d, part, min_part);
    }
    if (bad) {  // (blocks of rows: the first in x's order is looked for again)
      GK_CHECK(cudaStreamSynchronize(s), "copying x to the device");
      *nonfinite = first_nonfinite(x, n * d, staging_threads(D));
      return GK_CUDA_NONFINITE;
    }
    GK_CHECK(copy_rows_to_device(D, dst, a, len, esz, (double)pitch, s), "copying x to the device");
    GK_CHECK(cudaEventRecord(B.ev[b], s), "copying x to the device");
  }
  GK_CHECK(cudaStreamSynchronize(s), "copying x to the device");
  D->host_means.clear();
  if (add_up)
    for (int j = 0; j < d; ++j) D->host_means.push_back(sums.mean(j));
  stage_note(add_up ? "upload_staged" : "upload_staged_small", seconds_since(t_start));
  return GK_CUDA_OK;
}

// What gk_cuda_put_rows keeps from one block to the next, until
// gk_cuda_finish_rows: the column sums of the rows so far in totss' chunks
// (as staged_upload adds them up; they go on while the blocks come in row
// order from row 0), and where its time went (the stage log).
struct PutRows {
  ChunkSums sums;
  long long next = 0;   // the row the next block must start at for the sums to go on
  bool summing = true;  // false: a block came out of that order, or GPUKMEANS_STAGE_SUMS=0
  double seconds_wait = 0.0, seconds_fill = 0.0, seconds_copy = 0.0;
  PutRows(long long n, int d) : sums(n, d) {}
};


// A source's block: cut into pieces of at most a staging buffer, each
// filled (converted) by OpenMP threads (omp_parts: the reader's) into the
// next buffer in turn once that buffer's last copy has landed, then copied
// to its rows of x.  As they fill a buffer the threads check the values
// (nonfinite not NULL) and add the columns up (PutRows), so that the block
// is read once.  The copies of
// the last pieces go on after the return, while the caller reads the next
// block (gk_cuda_finish_rows waits for them).
int staged_put_rows(gk_cuda_data *D, const double *block, long long first, long long rows, int64_t *nonfinite,
                    char *err, size_t errlen) {
  if (!D->x || first < 0 || rows < 0 || first + rows > D->n) {
    set_msg(err, errlen, "gk_cuda_put_rows: rows [%lld, %lld) outside the %lld rows of x", first, first + rows,
            (long long)D->n);
    return GK_CUDA_INVALID;
  }
  if (rows == 0) return GK_CUDA_OK;
  const int d = D->d;
  const size_t esz = D->single ? sizeof(float) : sizeof(double);
  const long long piece = buffer_rows(D, rows);
  int pitch = 0;
  GK_CHECK(cudaDeviceGetAttribute(&pitch, cudaDevAttrMaxPitch, D->device), "querying the device");
  const double *shift = D->single ? D->shift.data() : nullptr;
  if (!D->put) {
    D->put = new (std::nothrow) PutRows(D->n, d);
    if (!D->put) {
      set_msg(err, errlen, "out of host memory (the sums of a copy)");
      return GK_CUDA_ERROR;
    }
    const char *mode = std::getenv("GPUKMEANS_STAGE_SUMS");  // (0: no sums here, as staged_upload's)
    if (mode && mode[0] == '0') D->put->summing = false;
  }
  PutRows &P = *D->put;
  cudaStream_t s = D->stream;
  if (first != P.next) P.summing = false;
  const bool sum = P.summing, check = nonfinite != nullptr;
  const int threads = staging_threads(D);
  // Rows [a, a + len) of the block into dst (a len x d block); whether a
  // value was not finite.
  auto fill = [&](void *dst, long long a, long long len) -> bool {
    std::atomic<bool> bad(false);
    if (sum) {  // (the sums' pieces are cut at x's chunks: rows of x, the block at its row `first`; a
                // thread takes 4 at a time, whose chains of whole chunks interleave)
      const long long at = first + a, m = ChunkSums::pieces(at, len);
      omp_parts((size_t)(m * d), 4, threads, [&](size_t p0, size_t p1) {
        const bool found = check ? P.sums.fill_range<true>(dst, block, rows, at, len, m, p0, p1, shift, first)
                                 : P.sums.fill_range<false>(dst, block, rows, at, len, m, p0, p1, shift, first);
        if (found) bad = true;
      });
      P.sums.next_block();
    } else {
      omp_parts((size_t)len * d, kMinPart, threads, [&](size_t t0, size_t t1) {
        const bool found = check ? fill_block_range<true>(dst, block, rows, a, len, t0, t1, shift)
                                 : fill_block_range<false>(dst, block, rows, a, len, t0, t1, shift);
        if (found) bad = true;
      });
    }
    return bad;
  };
  // (a value that is not finite: the first in the block's order, which the
  // caller places in x's; nothing more is copied)
  auto found_nonfinite = [&]() {
    P.summing = false;
    *nonfinite = (int64_t)first_nonfinite(block, rows * d, threads);
    return GK_CUDA_NONFINITE;
  };
  StagingBuffers *sb = staging_buffers(D, (size_t)piece * d * esz);
  if (!sb) {  // no pinned memory here: one pageable buffer, each copy waited for
    std::vector<char> buf;
    try {
      buf.resize((size_t)piece * d * esz);
    } catch (const std::bad_alloc &) {
      set_msg(err, errlen, "out of host memory (a block of x)");
      return GK_CUDA_ERROR;
    }
    for (long long a = 0; a < rows; a += piece) {
      const long long len = std::min(piece, rows - a);
      if (fill(buf.data(), a, len)) return found_nonfinite();
      GK_CHECK(copy_rows_to_device(D, buf.data(), first + a, len, esz, (double)pitch, s),
               "copying x to the device");
      GK_CHECK(cudaStreamSynchronize(s), "copying x to the device");
    }
  } else {
    StagingBuffers &B = *sb;
    for (long long a = 0; a < rows; a += piece) {
      const long long len = std::min(piece, rows - a);
      const int b = (int)(D->staged_next++ % kBuffers);
      auto t = std::chrono::steady_clock::now();
      GK_CHECK(cudaEventSynchronize(B.ev[b]), "copying x to the device");  // (never recorded: at once)
      P.seconds_wait += seconds_since(t);
      t = std::chrono::steady_clock::now();
      const bool bad = fill(B.p[b], a, len);
      P.seconds_fill += seconds_since(t);
      if (bad) return found_nonfinite();
      t = std::chrono::steady_clock::now();
      GK_CHECK(copy_rows_to_device(D, B.p[b], first + a, len, esz, (double)pitch, s),
               "copying x to the device");
      GK_CHECK(cudaEventRecord(B.ev[b], s), "copying x to the device");
      P.seconds_copy += seconds_since(t);
    }
  }
  if (sum) P.next = first + rows;
  return GK_CUDA_OK;
}

void end_put_rows(gk_cuda_data *D) {
  PutRows *P = D->put;
  if (!P) return;
  if (P->summing && P->next == D->n) {
    D->host_means.clear();
    for (int j = 0; j < D->d; ++j) D->host_means.push_back(P->sums.mean(j));
  }
  stage_note("source_put_wait", P->seconds_wait);
  stage_note("source_put_fill", P->seconds_fill);
  stage_note("source_put_copy", P->seconds_copy);
  release_put_rows(D);
}

void release_put_rows(gk_cuda_data *D) {
  delete D->put;
  D->put = nullptr;
}

namespace {

// out[t] = in[t] + add for t in [0, len), by the team's threads (the first
// touch of fresh pages of the destination is shared too).
void copy_out(int *out, const int *in, size_t len, int add, HostTeam &team) {
  run_parts(team, team_per_copy(), len, [=](size_t a, size_t b) {
    if (add == 0) std::memcpy(out + a, in + a, (b - a) * sizeof(int));
    else
      for (size_t t = a; t < b; ++t) out[t] = in[t] + add;
  });
}

}  // namespace

int staged_download(gk_cuda_data *D, const int *dev, int *host, long long n, int add, cudaStream_t s,
                    char *err, size_t errlen) {
  const size_t per = kBufferBytes / sizeof(int);
  const size_t total = (size_t)n;
  // (a single buffer's worth, or no pinned memory here: the plain copy)
  StagingBuffers *sb = total > per ? staging_buffers(D, kBufferBytes) : nullptr;
  if (!sb) {
    GK_CHECK(cudaMemcpyAsync(host, dev, total * sizeof(int), cudaMemcpyDeviceToHost, s), "copying labels");
    GK_CHECK(cudaStreamSynchronize(s), "copying labels");
    if (add)
      for (size_t t = 0; t < total; ++t) host[t] += add;
    return GK_CUDA_OK;
  }
  // up to kBuffers copies in flight; chunk c is copied out of its buffer
  // once its copy has landed, and its buffer then takes chunk c + kBuffers
  StagingBuffers &B = *sb;
  HostTeam team(staging_threads(D));
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
    copy_out(host + off, (const int *)B.p[b], len, add, team);
  }
  return GK_CUDA_OK;
}

}  // namespace gk

extern "C" int gk_cuda_upload_stages(int64_t n, int d, const gk_cuda_options *opts) {
  return opts && n > 0 && d > 0 && gk::adds_columns((long long)n, d, opts->staging) ? 1 : 0;
}

extern "C" void gk_cuda_release_kept(void) {
  std::lock_guard<std::mutex> lock(gk::kept_mutex);
  std::vector<gk::StagingBuffers *> &k = gk::kept();
  if (gk::kept_pid != (long)getpid()) return;  // (none here, or a forked child's copy of the parent's)
  for (gk::StagingBuffers *&b : k) {
    delete b;
    b = nullptr;
  }
}
