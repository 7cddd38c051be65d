// detail/data_kernels.cuh: kernels over the uploaded data (conversion, column
// maxima, total sum of squares).  Included by device_data.cu only.
#ifndef GPUKMEANS_DETAIL_DATA_KERNELS_CUH
#define GPUKMEANS_DETAIL_DATA_KERNELS_CUH

#include "../../single_shift.h"
#include "common.cuh"

namespace gk {
namespace {

// out[off + t] = float(chunk[t] - shift[column]) (single_stored, the host's
// rounding) for a chunk of column-major x.
__global__ void k_convert_chunk(const double *__restrict__ chunk, long long len, long long off,
                                long long n, const double *__restrict__ shift,
                                float *__restrict__ out) {
  for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < len;
       t += (long long)gridDim.x * blockDim.x) {
    long long e = off + t;
    int j = (int)(e / n);
    out[e] = single_stored(chunk[t], shift[j]);
  }
}

// Fixed-order block sum (deterministic).
__device__ __forceinline__ double block_sum(double v, double *sh) {
  const int tid = threadIdx.x;
  sh[tid] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sh[tid] = __dadd_rn(sh[tid], sh[tid + s]);
    __syncthreads();
  }
  double r = sh[0];
  __syncthreads();
  return r;
}

// max |x| per column: bits of non-negative doubles order like the values.
// With range (the ordering's: gk_cuda_data::ord_range): also each column's
// least and largest float image, range[j] and range[d + j] as
// float_order_bits (set to 0xffffffff and 0 before), as k_order_range
// (ordered.cu) finds them; the same pass over x, so that a fit's ordering
// of the rows need not read x for them.
template <typename T>
__global__ void __launch_bounds__(256)
k_col_maxabs(const T *__restrict__ x, long long n, u64 *__restrict__ out, unsigned int *__restrict__ range) {
  __shared__ double sh[256];
  const int j = blockIdx.y;
  double m = 0;
  float lo = 3.4e38f, hi = -3.4e38f;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    const T v = x[i + n * j];
    m = fmax(m, fabs((double)v));
    if (range) {  // (the same in the whole grid)
      lo = fminf(lo, (float)v);
      hi = fmaxf(hi, (float)v);
    }
  }
  if (range) block_range_atomics(lo, hi, &range[j], &range[gridDim.y + j]);
  sh[threadIdx.x] = m;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) sh[threadIdx.x] = fmax(sh[threadIdx.x], sh[threadIdx.x + s]);
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicMax(&out[j], (u64)__double_as_longlong(sh[0]));
}

// Column sums (fixed point, per-column scale).
template <typename T>
__global__ void __launch_bounds__(256)
k_col_sum(const T *__restrict__ x, long long n, const int *__restrict__ scale, u64 *__restrict__ acc) {
  __shared__ double sh[256];
  const int j = blockIdx.y;
  double s = 0;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    s = __dadd_rn(s, (double)x[i + n * j]);
  s = block_sum(s, sh);
  if (threadIdx.x == 0) {
    u64 lo, hi;
    to_fixed(s, scale[j], lo, hi);
    atomic_add128(&acc[2 * j], lo, hi);
  }
}

// Column means from the fixed-point column sums (the same IEEE operations as
// the host would do: bitwise the same means).
__global__ void k_col_mean(const u64 *__restrict__ acc, const int *__restrict__ scale, int d, long long n,
                           double *__restrict__ mean) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < d) mean[j] = from_fixed(acc[2 * j], acc[2 * j + 1], scale[j]) / (double)n;
}

// Sum of squared deviations from the column means (fixed point, one total).
template <typename T>
__global__ void __launch_bounds__(256)
k_sq_dev(const T *__restrict__ x, long long n, const double *__restrict__ mean, int tscale,
         u64 *__restrict__ acc) {
  __shared__ double sh[256];
  const int j = blockIdx.y;
  const double mu = mean[j];
  double s = 0;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    double t = __dsub_rn((double)x[i + n * j], mu);
    s = __dadd_rn(s, __dmul_rn(t, t));
  }
  s = block_sum(s, sh);
  if (threadIdx.x == 0) {
    u64 lo, hi;
    to_fixed(s, tscale, lo, hi);
    atomic_add128(acc, lo, hi);
  }
}

}  // namespace
}  // namespace gk

#endif
