// quality.cu: the quality pass of a partition (gk_cuda_quality): each row's
// distance to its own center, the simplified silhouette and the exact
// silhouette, on the data already on the device.  The kernels and the
// design are in detail/quality_kernels.cuh; the CPU engine's
// src/cpu_quality.cpp is the reference (the same bits in double precision).
//
// Device memory: the rows in cluster order as a padded row-major copy in
// double (n x dp doubles, dp = d rounded up to 2, 4, 8, 12, 16, 24, 32 or a
// multiple of 16), the order (n ints), the outputs (n doubles and ints), all
// freed on return; checked against free memory first.
#include <algorithm>
#include <vector>

#include "detail/engine.hpp"
#include "detail/quality_kernels.cuh"

using namespace gk;
using namespace gk::quality;

namespace {

// Padded width of a row of the copy: the register kernel's DM for d <= 32,
// else a multiple of the wide kernel's chunk.
int padded_width(int d) {
  const int dms[] = {2, 4, 8, 12, 16, 24, 32};
  for (int dm : dms)
    if (d <= dm) return dm;
  return (d + kWideChunk - 1) / kWideChunk * kWideChunk;
}

// Rows per block of the exact kernels.
int rows_per_thread(int dp) { return dp <= 16 ? 2 : 1; }

template <int DM, int R>
void launch_exact_dm(const SilArgs &A, int grid, cudaStream_t s) {
  k_sil_exact<DM, R><<<grid, kThreads, 0, s>>>(A);
}

void launch_exact(const SilArgs &A, int dp, int grid, cudaStream_t s) {
  switch (dp) {
    case 2: launch_exact_dm<2, 2>(A, grid, s); break;
    case 4: launch_exact_dm<4, 2>(A, grid, s); break;
    case 8: launch_exact_dm<8, 2>(A, grid, s); break;
    case 12: launch_exact_dm<12, 2>(A, grid, s); break;
    case 16: launch_exact_dm<16, 2>(A, grid, s); break;
    case 24: launch_exact_dm<24, 1>(A, grid, s); break;
    case 32: launch_exact_dm<32, 1>(A, grid, s); break;
    default: k_sil_exact_wide<<<grid, kThreads, 0, s>>>(A, dp); break;
  }
}

// Blocks for a grid-stride kernel over `work` items.
int grid_of(long long work, int per_block) {
  return (int)std::max<long long>(1, std::min<long long>((work + per_block - 1) / per_block, 1 << 20));
}

// Blocks for one thread per item (n < 2^31 rows: at most 2^23 blocks).
int grid_all(long long work, int per_block) {
  return (int)std::max<long long>(1, (work + per_block - 1) / per_block);
}

}  // namespace

extern "C" int gk_cuda_quality(gk_cuda_data *D, int k, const int32_t *order, const int64_t *start,
                               const double *centers, int silhouette, const int64_t *rows, int64_t m,
                               const gk_cuda_callbacks *cb, double *center_dist, double *width, int *neighbor,
                               char *err, size_t errlen) {
  if (int rs = refuse_streamed(D, "the quality pass on the device", err, errlen)) return rs;
  if (!D || k < 1 || !order || !start || silhouette < 0 || silhouette > 2 || (rows && m < 1) ||
      (silhouette != 0 && (!width || !neighbor)) || ((center_dist || silhouette == 2) && !centers) ||
      (rows && silhouette != 1)) {
    set_msg(err, errlen, "gk_cuda_quality: invalid arguments (k = %d, silhouette = %d)", k, silhouette);
    return GK_CUDA_INVALID;
  }
  const long long n = D->n;
  const int d = D->d;
  if (start[0] != 0 || start[k] != n || n > 2147483647LL) {
    set_msg(err, errlen, "gk_cuda_quality: the cluster order does not cover the %lld rows", n);
    return GK_CUDA_INVALID;
  }
  const bool want_centers = center_dist || silhouette == 2;
  if (!want_centers && silhouette == 0) return GK_CUDA_OK;
  GK_CHECK(cudaSetDevice(D->device), "selecting the CUDA device");
  cudaStream_t s = D->stream;
  const int dp = padded_width(d);
  const long long mi = rows ? (long long)m : n;  // rows whose exact width is wanted

  // Free memory first: the copy dominates.
  const double need = (double)n * dp * sizeof(double) + (double)n * (sizeof(int) + 2 * sizeof(double) + sizeof(int)) +
                      (double)(k + 1) * sizeof(long long) + (double)k * d * sizeof(double) +
                      (double)mi * sizeof(int);
  {
    size_t free_b = 0, total_b = 0;
    GK_CHECK(cudaMemGetInfo(&free_b, &total_b), "querying device memory");
    if (need > 0.95 * (double)free_b) {
      set_msg(err, errlen,
              "the quality pass needs %.2f GiB on device %d (the rows in cluster order, in double) but only %.2f "
              "GiB is free",
              gib(need), D->device, gib((double)free_b));
      return GK_CUDA_OUT_OF_MEMORY;
    }
  }

  DevBuf<int> d_order, d_ipos, d_nb;
  DevBuf<long long> d_start;
  DevBuf<double> d_xs, d_cen, d_cdist, d_width;
  GK_CHECK(d_order.alloc(n), "allocating the cluster order");
  GK_CHECK(d_start.alloc(k + 1), "allocating the cluster offsets");
  GK_CHECK(d_xs.alloc((size_t)n * dp), "allocating the rows in cluster order");
  GK_CHECK(cudaMemcpyAsync(d_order.p, order, (size_t)n * sizeof(int), cudaMemcpyHostToDevice, s),
           "copying the cluster order");
  static_assert(sizeof(long long) == sizeof(int64_t), "64-bit offsets");
  GK_CHECK(cudaMemcpyAsync(d_start.p, start, (size_t)(k + 1) * sizeof(long long), cudaMemcpyHostToDevice, s),
           "copying the cluster offsets");
  {
    const long long total = n * (long long)dp;
    const int g = grid_of(total, 256);
    if (D->single) k_sorted_copy<float><<<g, 256, 0, s>>>((const float *)D->x, n, d, dp, d_order.p, d_xs.p);
    else k_sorted_copy<double><<<g, 256, 0, s>>>((const double *)D->x, n, d, dp, d_order.p, d_xs.p);
    GK_CHECK(cudaGetLastError(), "copying the rows in cluster order");
  }

  if (want_centers) {
    // Centers in stored coordinates (x - shift in single precision), row-major.
    std::vector<double> cen((size_t)k * d);
    for (int c = 0; c < k; ++c)
      for (int a = 0; a < d; ++a)
        cen[(size_t)c * d + a] = centers[c + (size_t)k * a] - (D->single ? D->shift[a] : 0.0);
    GK_CHECK(d_cen.alloc((size_t)k * d), "allocating the centers");
    GK_CHECK(cudaMemcpyAsync(d_cen.p, cen.data(), cen.size() * sizeof(double), cudaMemcpyHostToDevice, s),
             "copying the centers");
    if (center_dist) GK_CHECK(d_cdist.alloc(n), "allocating the distances to the centers");
    if (silhouette == 2) {
      GK_CHECK(d_width.alloc(n), "allocating the silhouette widths");
      GK_CHECK(d_nb.alloc(n), "allocating the neighbors");
    }
    k_quality_centers<<<grid_all(n, 256), 256, 0, s>>>(d_xs.p, n, d, dp, d_order.p, d_start.p, k, d_cen.p,
                                                      silhouette == 2 ? 1 : 0, d_cdist.p, d_width.p, d_nb.p);
    GK_CHECK(cudaGetLastError(), "distances to the centers");
  }

  if (silhouette == 1) {
    GK_CHECK(d_width.alloc(mi), "allocating the silhouette widths");
    GK_CHECK(d_nb.alloc(mi), "allocating the neighbors");
    if (rows) {
      // Sampled rows -> their positions in the cluster order.
      std::vector<int> inv(n), ipos(m);
      for (long long p = 0; p < n; ++p) inv[order[p]] = (int)p;
      for (long long q = 0; q < m; ++q) {
        if (rows[q] < 0 || rows[q] >= n) {
          set_msg(err, errlen, "gk_cuda_quality: sampled row %lld is out of range", (long long)rows[q]);
          return GK_CUDA_INVALID;
        }
        ipos[q] = inv[rows[q]];
      }
      GK_CHECK(d_ipos.alloc(m), "allocating the sampled rows");
      GK_CHECK(cudaMemcpyAsync(d_ipos.p, ipos.data(), (size_t)m * sizeof(int), cudaMemcpyHostToDevice, s),
               "copying the sampled rows");
      // ipos is a local: the copy must be done before it goes.
      GK_CHECK(cudaStreamSynchronize(s), "copying the sampled rows");
    }
    SilArgs A;
    A.xs = d_xs.p;
    A.n = n;
    A.order = d_order.p;
    A.start = d_start.p;
    A.k = k;
    A.ipos = rows ? d_ipos.p : nullptr;
    A.width = d_width.p;
    A.neighbor = d_nb.p;
    const int R = dp <= 32 ? rows_per_thread(dp) : 1;
    const long long per_block = (long long)R * kThreads;
    const long long blocks = (mi + per_block - 1) / per_block;
    // Launches of about 5e10 coordinate operations (tens of ms), at least
    // 8 blocks per multiprocessor; interrupts are polled between them.
    long long per_launch = (long long)(5e10 / ((double)per_block * (double)n * (double)dp));
    per_launch = std::max<long long>(per_launch, 8LL * D->sms);
    for (long long b0 = 0; b0 < blocks; b0 += per_launch) {
      const long long nbk = std::min(per_launch, blocks - b0);
      A.q0 = b0 * per_block;
      A.q1 = std::min(mi, (b0 + nbk) * per_block);
      launch_exact(A, dp, (int)nbk, s);
      GK_CHECK(cudaGetLastError(), "exact silhouette");
      if (cb && cb->interrupt) {
        GK_CHECK(cudaStreamSynchronize(s), "exact silhouette");
        if (cb->interrupt(cb->ctx)) {
          set_msg(err, errlen, "interrupted");
          return GK_CUDA_INTERRUPTED;
        }
      }
    }
  }

  if (center_dist)
    GK_CHECK(cudaMemcpyAsync(center_dist, d_cdist.p, (size_t)n * sizeof(double), cudaMemcpyDeviceToHost, s),
             "copying the distances to the centers");
  if (silhouette != 0) {
    const long long mo = silhouette == 1 ? mi : n;
    GK_CHECK(cudaMemcpyAsync(width, d_width.p, (size_t)mo * sizeof(double), cudaMemcpyDeviceToHost, s),
             "copying the silhouette widths");
    GK_CHECK(cudaMemcpyAsync(neighbor, d_nb.p, (size_t)mo * sizeof(int), cudaMemcpyDeviceToHost, s),
             "copying the neighbors");
  }
  GK_CHECK(cudaStreamSynchronize(s), "the quality pass");
  return GK_CUDA_OK;
}
