// detail/assign_kernels.cuh: the assignment kernels (nearest center).
//
// Distance rules (stats::kmeans, Lloyd):
//   double: dd = sum_j (x_j - c_j)^2 in coordinate order, each step rounded
//           separately (__dsub_rn/__dmul_rn/__dadd_rn: no FMA contraction), so
//           dd is bitwise what R's C code computes;
//   float:  |c|^2 - 2 x.c with FMAs (x is stored shifted near its mean, see
//           device_data.cu), the fast path;
//   argmin with strict '<' scanning centers in index order (ties: lowest
//   index); NaN distances (empty clusters' NaN centers) are never chosen.
// Padding coordinates with x = c = 0 leaves dd bitwise unchanged (dd + 0 = dd).
//
// Included by assign.cu only (kernels are launched from the TU defining them).
#ifndef GPUKMEANS_DETAIL_ASSIGN_KERNELS_CUH
#define GPUKMEANS_DETAIL_ASSIGN_KERNELS_CUH

#include <type_traits>

#include "common.cuh"

namespace gk {
namespace {

// Squared distance term: exact double or float dot product.
template <typename T> struct Dist;
template <> struct Dist<double> {
  static __device__ __forceinline__ double first(double x, double c) {
    double t = __dsub_rn(x, c);
    return __dmul_rn(t, t);  // 0.0 + t*t == t*t exactly
  }
  static __device__ __forceinline__ double step(double acc, double x, double c) {
    double t = __dsub_rn(x, c);
    return __dadd_rn(acc, __dmul_rn(t, t));
  }
  static __device__ __forceinline__ double finish(double acc, double) { return acc; }
};
// float difference form, (x - c)^2 accumulated with FMA
template <typename T> struct DistDiff : Dist<T> {};
template <> struct DistDiff<float> {
  static __device__ __forceinline__ float first(float x, float c) { float t = x - c; return t * t; }
  static __device__ __forceinline__ float step(float acc, float x, float c) {
    float t = x - c;
    return fmaf(t, t, acc);
  }
  static __device__ __forceinline__ float finish(float acc, float) { return acc; }
};
template <> struct Dist<float> {
  static __device__ __forceinline__ float first(float x, float c) { return x * c; }
  static __device__ __forceinline__ float step(float acc, float x, float c) {
    return fmaf(x, c, acc);
  }
  // |c|^2 - 2 x.c  (|x|^2 is the same for every center)
  static __device__ __forceinline__ float finish(float dot, float cc) {
    return fmaf(-2.0f, dot, cc);
  }
};

// Block-wide sum of one counter, then one global atomic per block.
__device__ __forceinline__ void add_changed(unsigned int mine, unsigned int *sh, State *st) {
  unsigned int w = __popc(__ballot_sync(0xffffffffu, mine != 0));
  if ((threadIdx.x & 31) == 0 && w) atomicAdd(sh, w);
}

// ---------------------------------------------------------------------------
// Small d (d <= DM <= 8): one point per thread, its coordinates in registers,
// all k centers in shared memory; optionally fused with the centroid sums
// (per-block fixed-point accumulators in shared memory, flushed once).
// Shared layout: [acc 2*k*d u64][centers k*DM T][cc k T][counts k u32]
template <typename T, int DM, bool UPDATE>
__global__ void __launch_bounds__(256)
k_assign_small(const T *__restrict__ x, long long n, int d, const T *__restrict__ cen, int k,
               int *__restrict__ labels, State *st, int max_iter, u64 *__restrict__ acc,
               unsigned int *__restrict__ counts, const int *__restrict__ scale) {
  if (fit_finished(st, max_iter)) return;
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ unsigned int sh_changed;
  u64 *sacc = reinterpret_cast<u64 *>(smem);
  T *sc = reinterpret_cast<T *>(sacc + (UPDATE ? 2 * (size_t)k * d : 0));
  T *scc = sc + (size_t)k * DM;
  unsigned int *scnt = reinterpret_cast<unsigned int *>(scc + k);
  const int tid = threadIdx.x;

  if (tid == 0) sh_changed = 0;
  for (int e = tid; e < k * DM; e += blockDim.x) {
    int c = e / DM, j = e - c * DM;
    sc[e] = (j < d) ? cen[c + (size_t)k * j] : T(0);
  }
  if (UPDATE) {
    for (size_t e = tid; e < 2 * (size_t)k * d; e += blockDim.x) sacc[e] = 0;
    for (int c = tid; c < k; c += blockDim.x) scnt[c] = 0;
  }
  __syncthreads();
  if (sizeof(T) == 4) {
    for (int c = tid; c < k; c += blockDim.x) {
      T s = 0;
      for (int j = 0; j < DM; ++j) s = fmaf(sc[c * DM + j], sc[c * DM + j], s);
      scc[c] = s;
    }
    __syncthreads();
  }
  int sj[DM];
#pragma unroll
  for (int j = 0; j < DM; ++j) sj[j] = (UPDATE && j < d) ? scale[j] : 0;

  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long base = (long long)blockIdx.x * blockDim.x; base < n; base += stride) {
    const long long i = base + tid;
    const bool valid = i < n;
    T xr[DM];
#pragma unroll
    for (int j = 0; j < DM; ++j) xr[j] = (valid && j < d) ? x[i + n * j] : T(0);

    T best = pos_inf<T>();
    int bi = -1;
#pragma unroll 4
    for (int c = 0; c < k; ++c) {
      const T *cp = sc + c * DM;
      T dd = Dist<T>::first(xr[0], cp[0]);
#pragma unroll
      for (int j = 1; j < DM; ++j) dd = Dist<T>::step(dd, xr[j], cp[j]);
      dd = Dist<T>::finish(dd, sizeof(T) == 4 ? scc[c] : T(0));
      if (dd < best) { best = dd; bi = c; }
    }
    unsigned int ch = 0;
    if (valid) {
      int old = labels[i];
      if (bi < 0) bi = old >= 0 ? old : 0;  // no finite distance (overflow): keep
      if (old != bi) { ch = 1; labels[i] = bi; }
    }
    add_changed(ch, &sh_changed, st);
    if (UPDATE && valid) {
#pragma unroll
      for (int j = 0; j < DM; ++j) {
        if (j < d) {
          u64 lo, hi;
          to_fixed((double)xr[j], sj[j], lo, hi);
          atomic_add128(&sacc[2 * ((size_t)bi + (size_t)k * j)], lo, hi);
        }
      }
      atomicAdd(&scnt[bi], 1u);
    }
  }
  __syncthreads();
  if (tid == 0 && st && sh_changed) atomicAdd(&st->changed, (u64)sh_changed);
  if (UPDATE) {
    for (size_t e = tid; e < (size_t)k * d; e += blockDim.x) {
      u64 lo = sacc[2 * e], hi = sacc[2 * e + 1];
      if (lo | hi) atomic_add128(&acc[2 * e], lo, hi);
    }
    for (int c = tid; c < k; c += blockDim.x)
      if (scnt[c]) atomicAdd(&counts[c], scnt[c]);
  }
}

// ---------------------------------------------------------------------------
// Any d, any k: register-blocked tiles (BM points x BN centers per block,
// TM x TN per thread, coordinates in chunks of BK through shared memory), the
// argmin fused in; the n x k distances never leave registers.
template <typename T> struct TileCfg;
template <> struct TileCfg<float> { enum { BM = 128, BN = 128, BK = 16, TM = 8, TN = 8 }; };
template <> struct TileCfg<double> { enum { BM = 128, BN = 64, BK = 16, TM = 8, TN = 4 }; };

template <typename T, int N>
__device__ __forceinline__ void load_row(T (&r)[N], const T *p) {
  if (sizeof(T) == 4 && N % 4 == 0) {
#pragma unroll
    for (int q = 0; q < N; q += 4) {
      float4 v = *reinterpret_cast<const float4 *>(p + q);
      r[q] = v.x; r[q + 1] = v.y; r[q + 2] = v.z; r[q + 3] = v.w;
    }
  } else if (sizeof(T) == 8 && N % 2 == 0) {
#pragma unroll
    for (int q = 0; q < N; q += 2) {
      double2 v = *reinterpret_cast<const double2 *>(p + q);
      r[q] = v.x; r[q + 1] = v.y;
    }
  } else {
#pragma unroll
    for (int q = 0; q < N; ++q) r[q] = p[q];
  }
}

// DOT (float only): |c|^2 - 2 x.c (one FMA per coordinate); otherwise the
// difference form (x - c)^2 (exact rules in double; sub + FMA in float, more
// accurate when centers are close together relative to their norm).
template <typename T, bool DOT>
__global__ void __launch_bounds__(256)
k_assign_tiled(const T *__restrict__ x, long long n, int d, const T *__restrict__ cen, int k,
               int *__restrict__ labels, State *st, int max_iter) {
  typedef TileCfg<T> C;
  enum { BM = C::BM, BN = C::BN, BK = C::BK, TM = C::TM, TN = C::TN };
  if (fit_finished(st, max_iter)) return;
  __shared__ __align__(16) T xs[BK][BM];
  __shared__ __align__(16) T cs[BK][BN];
  __shared__ T ccs[BN];
  __shared__ unsigned int sh_changed;
  const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
  const long long i0 = (long long)blockIdx.x * BM;
  const bool dot = DOT;
  typedef typename std::conditional<DOT, Dist<float>, DistDiff<T> >::type DT;
  if (tid == 0) sh_changed = 0;

  T best[TM];
  int bidx[TM];
#pragma unroll
  for (int m = 0; m < TM; ++m) { best[m] = pos_inf<T>(); bidx[m] = -1; }

  for (int c0 = 0; c0 < k; c0 += BN) {
    T acc[TM][TN];
    T ccv = 0;
    for (int j0 = 0; j0 < d; j0 += BK) {
      for (int e = tid; e < BK * BM; e += 256) {
        int jj = e / BM, ii = e - jj * BM;
        long long i = i0 + ii;
        int j = j0 + jj;
        xs[jj][ii] = (i < n && j < d) ? x[i + n * j] : T(0);
      }
      for (int e = tid; e < BK * BN; e += 256) {
        int jj = e / BN, cc = e - jj * BN;
        int c = c0 + cc, j = j0 + jj;
        cs[jj][cc] = (c >= k) ? quiet_nan<T>() : (j < d ? cen[c + (size_t)k * j] : T(0));
      }
      __syncthreads();
      if (dot && tid < BN) {
#pragma unroll
        for (int jj = 0; jj < BK; ++jj) ccv = fmaf(cs[jj][tid], cs[jj][tid], ccv);
      }
      if (j0 == 0) {
        // first coordinate initialises (keeps the double sum bitwise R's)
        T xr[TM], cr[TN];
        load_row(xr, &xs[0][ty * TM]);
        load_row(cr, &cs[0][tx * TN]);
#pragma unroll
        for (int m = 0; m < TM; ++m)
#pragma unroll
          for (int q = 0; q < TN; ++q) acc[m][q] = DT::first(xr[m], cr[q]);
#pragma unroll
        for (int jj = 1; jj < BK; ++jj) {
          load_row(xr, &xs[jj][ty * TM]);
          load_row(cr, &cs[jj][tx * TN]);
#pragma unroll
          for (int m = 0; m < TM; ++m)
#pragma unroll
            for (int q = 0; q < TN; ++q) acc[m][q] = DT::step(acc[m][q], xr[m], cr[q]);
        }
      } else {
#pragma unroll
        for (int jj = 0; jj < BK; ++jj) {
          T xr[TM], cr[TN];
          load_row(xr, &xs[jj][ty * TM]);
          load_row(cr, &cs[jj][tx * TN]);
#pragma unroll
          for (int m = 0; m < TM; ++m)
#pragma unroll
            for (int q = 0; q < TN; ++q) acc[m][q] = DT::step(acc[m][q], xr[m], cr[q]);
        }
      }
      __syncthreads();
    }
    if (dot) {
      if (tid < BN) ccs[tid] = ccv;
      __syncthreads();
    }
#pragma unroll
    for (int m = 0; m < TM; ++m) {
      T bd = pos_inf<T>();
      int bi = 0x7fffffff;
#pragma unroll
      for (int q = 0; q < TN; ++q) {
        T dd = DT::finish(acc[m][q], dot ? ccs[tx * TN + q] : T(0));
        if (dd < bd) { bd = dd; bi = c0 + tx * TN + q; }
      }
#pragma unroll
      for (int off = 8; off >= 1; off >>= 1) {
        T od = __shfl_xor_sync(0xffffffffu, bd, off);
        int oi = __shfl_xor_sync(0xffffffffu, bi, off);
        if (od < bd || (od == bd && oi < bi)) { bd = od; bi = oi; }
      }
      if (bd < best[m]) { best[m] = bd; bidx[m] = bi; }
    }
    if (dot) __syncthreads();  // ccs is rewritten by the next tile
  }

  unsigned int ch = 0;
  if (tx == 0) {
#pragma unroll
    for (int m = 0; m < TM; ++m) {
      long long i = i0 + ty * TM + m;
      if (i < n) {
        int old = labels[i];
        int nl = bidx[m];
        if (nl < 0) nl = old >= 0 ? old : 0;
        if (old != nl) { ++ch; labels[i] = nl; }
      }
    }
  }
  if (ch) atomicAdd(&sh_changed, ch);
  __syncthreads();
  if (tid == 0 && st && sh_changed) atomicAdd(&st->changed, (u64)sh_changed);
}

}  // namespace
}  // namespace gk

#endif
