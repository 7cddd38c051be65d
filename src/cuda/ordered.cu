// ordered.cu: the rows of x ordered in space, for the small-d assignment
// through warp boxes (detail/wbox_kernels.cuh).
//
// Made once for the data handle, at the first fit that wants it
// (ordered_wanted): every row's key is its cell on a Z curve over the
// columns' ranges (256 cells a side at d = 2, 2^16 at d = 1; the ranges
// found by the upload's column pass where it kept the ordering's room,
// gk_cuda_data::ord_range, else by k_order_range), the
// rows are sorted by key (cub's radix sort, stable: ties keep row order),
// all in one allocation kept with the handle.  The copy of x in that order
// is made by the next fit's first iteration, which reads x through the
// permutation and writes each row to its ordered place as it goes
// (ord_state 2, then 1).  A gather kernel of its own cost 17 us at 1e6
// rows on an H200; in the first iteration the copy adds 4-10 us
// (tools/cuda-dev/LOG.md, twenty-ninth session).  The fit's later
// iterations then read the ordered copy and keep their labels in its
// order; the within-SS runs on
// them too (Fit::withinss), whose second pass puts the labels back in row
// order (labels[perm[i]] = ordered[i]) before anything reads them as the
// rows' own.  The sums are exact integers, so the order of the rows
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
// Rows below which the ordering is never worth it (or its memory kept).
constexpr long long kOrderMinRows = 1 << 16;

// Each column's least and largest value, in float: range[j] (min) and
// range[d + j] (max) as float_order_bits (set to 0xffffffff and 0 before),
// one atomic a block and column (block_range_atomics).
template <typename T>
__global__ void __launch_bounds__(256) k_order_range(const T *__restrict__ x, long long n, int d, unsigned int *range) {
  for (int j = 0; j < d; ++j) {
    float lo = 3.4e38f, hi = -3.4e38f;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
      const float v = (float)x[i + n * j];
      lo = fminf(lo, v);
      hi = fmaxf(hi, v);
    }
    block_range_atomics(lo, hi, &range[j], &range[d + j]);
  }
}

// Row i's key: its cell on a Z curve over the columns' ranges.  A thread
// takes kKeyRows rows a block's width apart (their loads in flight
// together), the columns' offsets and factors read once.
constexpr int kKeyRows = 4;

// The low 16 bits of v spread to the even bits (bit t to bit 2 t).
__device__ __forceinline__ unsigned int spread_bits(unsigned int v) {
  v &= 0xffffu;
  v = (v | (v << 8)) & 0x00ff00ffu;
  v = (v | (v << 4)) & 0x0f0f0f0fu;
  v = (v | (v << 2)) & 0x33333333u;
  return (v | (v << 1)) & 0x55555555u;
}

template <typename T>
__global__ void __launch_bounds__(256) k_order_keys(const T *__restrict__ x, long long n, int d,
                                                    const unsigned int *__restrict__ range,
                                                    unsigned int *__restrict__ key, int *__restrict__ row) {
  const int side = d == 1 ? (1 << kOrderBits) : (1 << (kOrderBits / 2));
  float lo[2] = {0.f, 0.f}, f[2] = {0.f, 0.f};
  for (int j = 0; j < d; ++j) {
    lo[j] = order_bits_float(range[j]);
    const float w = order_bits_float(range[d + j]) - lo[j];
    f[j] = w > 0 ? (float)side / w : 0.f;  // (0: every row in cell 0)
  }
  const long long i0 = (long long)blockIdx.x * blockDim.x * kKeyRows + threadIdx.x;
  unsigned int cell[kKeyRows][2];
#pragma unroll
  for (int r = 0; r < kKeyRows; ++r) {
    const long long i = i0 + (long long)r * blockDim.x;
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const float t = (i < n && j < d) ? ((float)x[i + n * j] - lo[j]) * f[j] : 0.f;
      cell[r][j] = (unsigned int)fminf((float)(side - 1), fmaxf(0.f, t));  // (NaN: 0)
    }
  }
#pragma unroll
  for (int r = 0; r < kKeyRows; ++r) {
    const long long i = i0 + (long long)r * blockDim.x;
    if (i >= n) break;
    key[i] = d == 2 ? spread_bits(cell[r][0]) | (spread_bits(cell[r][1]) << 1) : cell[r][0];
    row[i] = (int)i;
  }
}

int blocks_of(long long n) { return (int)((n + 255) / 256); }

// Whether D's shape may have its rows ordered (mode: GPUKMEANS_ORDER):
// never with 0, beyond d = 2 or above 2^31 - 1 rows (int rows); with 1 at d
// <= 2; unset at d = 2 from kOrderMinRows rows.  The fit (ordered_wanted)
// and the upload's room (ordered_room) both ask it.
bool shape_may_order(const gk_cuda_data *D, int mode) {
  if (mode == 0 || D->d > 2 || D->n > 0x7fffffffLL) return false;
  return mode == 1 || (D->d == 2 && D->n >= kOrderMinRows);
}

// ordered_wanted but for the plan's path.
bool ordered_by_shape(const gk_cuda_data *D, int k, int max_iter) {
  const int mode = env_switch("GPUKMEANS_ORDER");
  if (!shape_may_order(D, mode) || D->src || D->weighted || D->opts.bounds == 2 || k < 2) return false;
  if (mode == 1) return true;
  // Ordering a handle's rows costs about 0.1 ms at 1e6 rows on an H200
  // (keys, sort and the copy, which the first iteration now makes at about
  // half a gather kernel's cost; its memory kept by the upload), 0.25-0.33 at 4e6,
  // paid once a handle.  A fit that may run few iterations orders only where
  // they repay it (tools/cuda-dev/ordfit, a fresh handle each fit as
  // bench.R, ms of a 10-iteration fit as given / ordered): 1e6 rows, k =
  // 100: single 0.449 / 0.406, double 0.504 / 0.466; k = 20 (an iteration
  // saves a third as much): single 0.316 / 0.347; 4e6 rows, k = 100, double
  // 1.12 / 1.37 (to convergence, 239 iterations: 23.3 / 18.3).
  if (!ordered_sorted(D)) {
    int repay = k >= 50 ? 10 : 30;
    if (!D->single && D->n > (1LL << 21)) repay *= 5;
    if (max_iter < repay) return false;
  }
  // By shape (shape_may_order: d = 2, many rows), and centers few enough
  // that a warp's pass over them stays small beside its rows' work.  One
  // H200, 1e6 blobs, ms an iteration to convergence as
  // given / ordered (tools/cuda-dev/bproto): single k = 20 0.0225 / 0.0197,
  // k = 100 0.0385 / 0.0236, k = 300 0.052 / 0.029, k = 1000 0.064 /
  // 0.059; double (its exact distances to each listed center, against the
  // grid of cells from k = 96) k = 50 0.040 / 0.023, k = 100 0.044 / 0.030,
  // k = 200 0.044 / 0.041, k = 300 0.047 / 0.050, k = 500 0.048 / 0.077.
  return k <= (D->single ? 1024 : 200);
}

}  // namespace

bool ordered_wanted(const gk_cuda_data *D, int k, int max_iter, const Plan &plan) {
  return plan.path == 0 && ordered_by_shape(D, k, max_iter);
}

bool ordered_early(const gk_cuda_data *D, int k, int max_iter) {
  return !persistent_shape(D) && small_path_shape(D, k, true) && ordered_by_shape(D, k, max_iter);
}

namespace {

// The one allocation of the ordering: [the ordered copy of x | two row
// buffers | the column ranges | cub's room].  The sort's keys live where
// the copy goes (at least two ints a row), its rows in the two row
// buffers: one ends up holding the permutation, the other becomes the
// ordered labels.
struct OrderLayout {
  size_t xb = 0, ib = 0, cub_bytes = 0, total = 0;
  explicit OrderLayout(const gk_cuda_data *D) {
    const long long n = D->n;
    const size_t tsz = D->single ? sizeof(float) : sizeof(double);
    ib = ((size_t)n * sizeof(int) + 255) / 256 * 256;
    xb = (std::max((size_t)n * D->d * tsz, 2 * (size_t)n * sizeof(int)) + 255) / 256 * 256;
    cub::DoubleBuffer<unsigned int> keys(nullptr, nullptr);
    cub::DoubleBuffer<int> rows(nullptr, nullptr);
    if (cub::DeviceRadixSort::SortPairs(nullptr, cub_bytes, keys, rows, (int)n, 0, kOrderBits) != cudaSuccess) {
      cudaGetLastError();
      return;  // (total 0: no ordering)
    }
    total = cub_at() + (cub_bytes + 255) / 256 * 256;
  }
  size_t range_at() const { return xb + 2 * ib; }  // (d minima, then d maxima: 256 bytes)
  size_t cub_at() const { return range_at() + 256; }
};

}  // namespace

size_t ordered_room(const gk_cuda_data *D, size_t *range_at) {
  // (forced on few rows, the fit allocates its own)
  if (!shape_may_order(D, env_switch("GPUKMEANS_ORDER")) || D->n < kOrderMinRows) return 0;
  const OrderLayout L(D);
  if (range_at) *range_at = L.range_at();
  return L.total;
}

cudaError_t prepare_ordered(gk_cuda_data *D, cudaStream_t s) {
  if (D->ord_state != 0) return cudaSuccess;
  D->ord_state = -1;
  if (!D->x) return cudaSuccess;
  const long long n = D->n;
  const int d = D->d;
  const OrderLayout L(D);
  if (!L.total) return cudaSuccess;
  const size_t xb = L.xb, ib = L.ib;
  size_t cub_bytes = L.cub_bytes;
  void *block = nullptr;
  if (D->ord_room && D->ord_room_bytes >= L.total) {  // (kept by the upload)
    block = D->ord_room;
  } else {
    if (!optional_fits(D, L.total)) return cudaSuccess;
    if (cudaMalloc(&block, L.total) != cudaSuccess) {
      cudaGetLastError();
      return cudaSuccess;
    }
    D->ord_block = block;
  }
  char *b = (char *)block;
  int *rows_a = (int *)(b + xb), *rows_b = (int *)(b + xb + ib);
  unsigned int *range = (unsigned int *)(b + L.range_at());  // d minima, then d maxima
  void *cub_tmp = b + L.cub_at();
  cub::DoubleBuffer<unsigned int> keys((unsigned int *)b, (unsigned int *)b + n);
  cub::DoubleBuffer<int> rows(rows_a, rows_b);
  cudaError_t e;
  // (the keys' blocks: kKeyRows rows a thread)
  const int nb = blocks_of(n), rb = std::min(nb, 4 * D->sms), tb = (int)((n + 256 * kKeyRows - 1) / (256 * kKeyRows));
  // (the ranges: from the upload's column pass where it left them in the
  // room, else a pass of their own)
  // (the upload's room holds this layout, its ranges at D->ord_range)
  const bool ranged = block == D->ord_room;
  e = cudaSuccess;
  if (!ranged) {
    e = cudaMemsetAsync(range, 0xff, d * sizeof(unsigned int), s);
    if (e == cudaSuccess) e = cudaMemsetAsync(range + d, 0, d * sizeof(unsigned int), s);
    if (e == cudaSuccess) {
      if (D->single) k_order_range<<<rb, 256, 0, s>>>((const float *)D->x, n, d, range);
      else k_order_range<<<rb, 256, 0, s>>>((const double *)D->x, n, d, range);
      e = cudaGetLastError();
    }
  }
  if (e == cudaSuccess) {
    if (D->single) k_order_keys<<<tb, 256, 0, s>>>((const float *)D->x, n, d, range, keys.Current(), rows.Current());
    else k_order_keys<<<tb, 256, 0, s>>>((const double *)D->x, n, d, range, keys.Current(), rows.Current());
    e = cudaGetLastError();
  }
  if (e == cudaSuccess) e = cub::DeviceRadixSort::SortPairs(cub_tmp, cub_bytes, keys, rows, (int)n, 0, kOrderBits, s);
  if (e != cudaSuccess) return e;  // (an owned block goes with the handle)
  D->ord_x = block;  // (over the keys, once the first iteration writes it: the sort is done with them)
  D->ord_perm = rows.Current();
  D->ord_labels = rows.Alternate();
  D->ord_state = 2;
  return cudaSuccess;
}

}  // namespace gk

extern "C" int gk_cuda_order_stats(gk_cuda_data *D, int *ordered) {
  if (!D) return GK_CUDA_INVALID;
  if (ordered) *ordered = D->ord_used;
  return GK_CUDA_OK;
}
