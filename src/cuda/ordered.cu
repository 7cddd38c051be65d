// ordered.cu: the rows of x ordered in space, for the small-d assignment
// through warp boxes (detail/wbox_kernels.cuh).
//
// Made once for the data handle, at the first fit that wants it
// (ordered_wanted): every row's key is its cell on a Z curve over the
// columns' ranges (256 cells a side at d = 2, 2^16 at d = 1), the
// rows are sorted by key (cub's radix sort, stable: ties keep row order)
// and x is gathered in that order.  The fit's plain iterations then read the
// ordered copy and keep their labels in its order; the labels go back to
// row order (labels[perm[i]] = ordered[i]) before anything reads them as
// the rows' own.  The sums are exact integers, so the order of the rows
// changes no bit of the fit.  Memory: the copy of x, and two ints a row
// (the permutation and the ordered labels); where they do not fit, the fit
// runs as before.
#include <algorithm>
#include <cub/device/device_radix_sort.cuh>

#include "detail/engine.hpp"

namespace gk {

namespace {

// Bits of a row's key (the radix sort's passes): cells of 1/256 of the
// range a side at d = 2 leave a warp's 128 rows within one or two cells on
// B's blobs (20 bits: 70 us at 1e6 rows on an H200, three passes; 16: two).
constexpr int kOrderBits = 16;

// Floats as unsigned integers in the same order (min/max by integer atomics).
__device__ __forceinline__ unsigned int float_order(float f) {
  const unsigned int b = __float_as_uint(f);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
__device__ __forceinline__ float order_float(unsigned int u) {
  return __uint_as_float((u & 0x80000000u) ? (u & 0x7fffffffu) : ~u);
}

// Each column's least and largest value, in float: range[2 j] (min) and
// range[2 j + 1] (max) as float_order (set to 0xffffffff and 0 before).
template <typename T>
__global__ void k_order_range(const T *__restrict__ x, long long n, int d, unsigned int *range) {
  for (int j = 0; j < d; ++j) {
    float lo = 3.4e38f, hi = -3.4e38f;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
      const float v = (float)x[i + n * j];
      lo = fminf(lo, v);
      hi = fmaxf(hi, v);
    }
#pragma unroll
    for (int o = 16; o; o >>= 1) {
      lo = fminf(lo, __shfl_xor_sync(0xffffffffu, lo, o));
      hi = fmaxf(hi, __shfl_xor_sync(0xffffffffu, hi, o));
    }
    if ((threadIdx.x & 31) == 0) {
      atomicMin(&range[2 * j], float_order(lo));
      atomicMax(&range[2 * j + 1], float_order(hi));
    }
  }
}

// Row i's key: its cell on a Z curve over the columns' ranges.
template <typename T>
__global__ void k_order_keys(const T *__restrict__ x, long long n, int d, const unsigned int *__restrict__ range,
                             unsigned int *__restrict__ key, int *__restrict__ row) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int side = d == 1 ? (1 << kOrderBits) : (1 << (kOrderBits / 2));
  unsigned int cell[2] = {0, 0};
  for (int j = 0; j < d; ++j) {
    const float lo = order_float(range[2 * j]), hi = order_float(range[2 * j + 1]);
    const float w = hi - lo;
    const float t = w > 0 ? ((float)x[i + n * j] - lo) * ((float)side / w) : 0.f;
    cell[j] = (unsigned int)fminf((float)(side - 1), fmaxf(0.f, t));  // (NaN: 0)
  }
  unsigned int z = cell[0];
  if (d == 2) {
    z = 0;
    for (int t = 0; t < kOrderBits / 2; ++t)
      z |= (((cell[0] >> t) & 1u) << (2 * t)) | (((cell[1] >> t) & 1u) << (2 * t + 1));
  }
  key[i] = z;
  row[i] = (int)i;
}

template <typename T>
__global__ void k_order_gather(const T *__restrict__ x, long long n, int d, const int *__restrict__ perm,
                               T *__restrict__ xo) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const long long r = perm[i];
  for (int j = 0; j < d; ++j) xo[i + n * j] = x[r + n * j];
}

__global__ void k_order_labels_back(const int *__restrict__ ordered, const int *__restrict__ perm, long long n,
                                    int *__restrict__ labels) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) labels[perm[i]] = ordered[i];
}

int blocks_of(long long n) { return (int)((n + 255) / 256); }

}  // namespace

bool ordered_wanted(const gk_cuda_data *D, int k, int max_iter, const Plan &plan) {
  const int mode = env_switch("GPUKMEANS_ORDER");
  if (mode == 0 || D->src || D->weighted || D->d > 2 || D->opts.bounds == 2 || plan.path != 0 || k < 2 ||
      D->n > 0x7fffffffLL)
    return false;
  if (mode == 1) return true;
  // Ordering a handle's rows costs about 0.4 ms at 1e6 rows on an H200 (the
  // ordered copy's allocation, the sort's buffers, keys, sort, gather):
  // bench.R's B, 10 iterations on a fresh handle each fit, went from 0.045
  // to 0.063 ms an iteration in single precision.  Only a fit allowed many
  // iterations, or a handle already ordered (nstart), earns it back.
  if (D->ord_state != 1 && max_iter < 100) return false;
  // By shape: d = 2, many rows, and
  // centers few enough that a warp's pass over them stays small beside its
  // rows' work.  One H200, 1e6 blobs, ms an iteration to convergence as
  // given / ordered (tools/cuda-dev/bproto): single k = 20 0.0225 / 0.0197,
  // k = 100 0.0385 / 0.0236, k = 300 0.052 / 0.029, k = 1000 0.064 /
  // 0.059; double (its exact distances to each listed center, against the
  // grid of cells from k = 96) k = 50 0.040 / 0.023, k = 100 0.044 / 0.030,
  // k = 200 0.044 / 0.041, k = 300 0.047 / 0.050, k = 500 0.048 / 0.077.
  return D->d == 2 && D->n >= (1 << 16) && k <= (D->single ? 1024 : 200);
}

cudaError_t prepare_ordered(gk_cuda_data *D, cudaStream_t s) {
  if (D->ord_state != 0) return cudaSuccess;
  D->ord_state = -1;
  if (!D->x) return cudaSuccess;
  const long long n = D->n;
  const int d = D->d;
  const size_t tsz = D->single ? sizeof(float) : sizeof(double);
  const size_t xb = ((size_t)n * d * tsz + 255) / 256 * 256, ib = ((size_t)n * sizeof(int) + 255) / 256 * 256;
  // the sort's buffers (freed at the end): keys in and out, rows in, cub's room
  size_t cub_bytes = 0;
  cudaError_t e = cub::DeviceRadixSort::SortPairs(nullptr, cub_bytes, (unsigned int *)nullptr, (unsigned int *)nullptr,
                                                  (int *)nullptr, (int *)nullptr, (int)n, 0, kOrderBits, s);
  if (e != cudaSuccess) return e;
  const size_t tmp_bytes = 3 * ib + (cub_bytes + 255) / 256 * 256 + 256;
  if (!optional_fits(D, xb + 2 * ib + tmp_bytes)) return cudaSuccess;
  void *block = nullptr, *tmp = nullptr;
  if (cudaMalloc(&block, xb + 2 * ib) != cudaSuccess) {
    cudaGetLastError();
    return cudaSuccess;
  }
  // the sort's buffers from the device's memory pool where it has one
  // (freed in stream order: no wait for the device), else plain
  int pools = 0;
  if (cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, D->device) != cudaSuccess) {
    cudaGetLastError();
    pools = 0;
  }
  if ((pools ? cudaMallocAsync(&tmp, tmp_bytes, s) : cudaMalloc(&tmp, tmp_bytes)) != cudaSuccess) {
    cudaGetLastError();
    cudaFree(block);
    return cudaSuccess;
  }
  char *b = (char *)block, *t = (char *)tmp;
  void *ox = b;
  int *perm = (int *)(b + xb), *olabels = (int *)(b + xb + ib);
  unsigned int *key_in = (unsigned int *)t, *key_out = (unsigned int *)(t + ib);
  int *row_in = (int *)(t + 2 * ib);
  unsigned int *range = (unsigned int *)(t + 3 * ib);
  void *cub_tmp = t + 3 * ib + 256;
  const int nb = blocks_of(n), rb = std::min(nb, 4 * D->sms);
  // (the copy reads pageable memory: it has completed when it returns)
  const unsigned int range0[4] = {0xffffffffu, 0u, 0xffffffffu, 0u};  // min, max of each column
  e = cudaMemcpyAsync(range, range0, sizeof range0, cudaMemcpyHostToDevice, s);
  if (e == cudaSuccess) {
    if (D->single) {
      k_order_range<<<rb, 256, 0, s>>>((const float *)D->x, n, d, range);
      k_order_keys<<<nb, 256, 0, s>>>((const float *)D->x, n, d, range, key_in, row_in);
    } else {
      k_order_range<<<rb, 256, 0, s>>>((const double *)D->x, n, d, range);
      k_order_keys<<<nb, 256, 0, s>>>((const double *)D->x, n, d, range, key_in, row_in);
    }
    e = cudaGetLastError();
  }
  if (e == cudaSuccess)
    e = cub::DeviceRadixSort::SortPairs(cub_tmp, cub_bytes, key_in, key_out, row_in, perm, (int)n, 0, kOrderBits, s);
  if (e == cudaSuccess) {
    if (D->single) k_order_gather<<<nb, 256, 0, s>>>((const float *)D->x, n, d, perm, (float *)ox);
    else k_order_gather<<<nb, 256, 0, s>>>((const double *)D->x, n, d, perm, (double *)ox);
    e = cudaGetLastError();
  }
  if (pools) {
    const cudaError_t f = cudaFreeAsync(tmp, s);
    if (e == cudaSuccess) e = f;
  } else {
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);  // (before the sort's buffers go)
    cudaFree(tmp);
  }
  if (e != cudaSuccess) {
    cudaStreamSynchronize(s);
    cudaFree(block);
    return e;
  }
  D->ord_block = block;
  D->ord_x = ox;
  D->ord_perm = perm;
  D->ord_labels = olabels;
  D->ord_state = 1;
  return cudaSuccess;
}

cudaError_t launch_labels_back(const gk_cuda_data *D, cudaStream_t s) {
  k_order_labels_back<<<blocks_of(D->n), 256, 0, s>>>(D->ord_labels, D->ord_perm, D->n, D->labels);
  return cudaGetLastError();
}

}  // namespace gk

extern "C" int gk_cuda_order_stats(gk_cuda_data *D, int *ordered) {
  if (!D) return GK_CUDA_INVALID;
  if (ordered) *ordered = D->ord_used;
  return GK_CUDA_OK;
}
