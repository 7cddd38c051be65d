// detail/init_par_kernels.cuh: the kernels of the oversampling phase of
// k-means|| (init_par.cu).
//
// A round folds m new candidates into D2 and into each point's nearest
// candidate (the first of equals, in the order candidates were added), the
// same rule the CPU engine applies; the weights are then a histogram of those
// labels, with no separate pass.  D2 must be exact (parity.h point 1),
// but most point-candidate pairs cannot lower D2: k_par_filter rules them out
// with a float lower bound and computes the exact double distance only for
// the pairs the bound cannot exclude.  The result is the exact rule's, bit
// for bit (see the comment at k_par_filter).
#ifndef GPUKMEANS_DETAIL_INIT_PAR_KERNELS_CUH
#define GPUKMEANS_DETAIL_INIT_PAR_KERNELS_CUH

#include "init_bound.cuh"
#include "init_tree.cuh"

namespace gk {
namespace init {

constexpr int kParThreads = 128;  // threads (= points) per block
constexpr int kParTile = 32;      // candidates per register tile
constexpr int kParCoords = 32;    // coordinates per shared-memory tile

// Sequential level-1 sum of the block's D2 values (one warp = 32 points).
__device__ __forceinline__ void warp_level1(double v, long long i, long long nch, double (*s_red)[32],
                                            double *lv1) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncwarp();  // a previous call's lane 0 may still read s_red
  s_red[warp][lane] = v;
  __syncwarp();
  const long long chunk = i >> 5;
  if (lane == 0 && chunk < nch) {
    double s = 0.0;
    for (int p = 0; p < 32; ++p) s = __dadd_rn(s, s_red[warp][p]);
    lv1[chunk] = s;
  }
}

// Exact update with every pair: D2_i = min(D2_i, dist(i, c_j)) in order j,
// lab_i = base + j when c_j lowers it.  cen: m x d, row-major, double.
template <typename T>
__global__ void __launch_bounds__(kParThreads)
k_par_exact(const T *__restrict__ x, long long n, int d, const double *__restrict__ cen, int m, int base,
            double *__restrict__ d2, int *__restrict__ lab, double *__restrict__ lv1, long long nch) {
  // transposed ([coordinate][candidate]): the unrolled loop over candidates
  // reads consecutive words, which the compiler turns into wide loads
  __shared__ __align__(16) double s_cen[kParCoords][kParTile];
  __shared__ double s_red[kParThreads / 32][32];
  const long long i = (long long)blockIdx.x * kParThreads + threadIdx.x;
  const bool live = i < n;
  double my = live ? d2[i] : 0.0;
  int lb = live ? lab[i] : 0;
  double acc[kParTile];
  for (int j0 = 0; j0 < m; j0 += kParTile) {
    const int mt = min(kParTile, m - j0);
#pragma unroll
    for (int j = 0; j < kParTile; ++j) acc[j] = 0.0;
    for (int c0 = 0; c0 < d; c0 += kParCoords) {
      const int cb = min(kParCoords, d - c0);
      __syncthreads();
      for (int t = threadIdx.x; t < mt * cb; t += kParThreads) {
        const int j = t / cb, c = t - j * cb;
        s_cen[c][j] = cen[(size_t)(j0 + j) * d + c0 + c];
      }
      __syncthreads();
      if (live) {
        T xr[kParCoords];
#pragma unroll
        for (int c = 0; c < kParCoords; ++c)
          if (c < cb) xr[c] = x[i + n * (long long)(c0 + c)];
#pragma unroll
        for (int c = 0; c < kParCoords; ++c) {
          if (c < cb) {
            const double xv = (double)xr[c];
#pragma unroll
            for (int j = 0; j < kParTile; ++j) {
              if (j < mt) {
                const double t = __dsub_rn(xv, s_cen[c][j]);
                acc[j] = __dadd_rn(acc[j], __dmul_rn(t, t));
              }
            }
          }
        }
      }
    }
#pragma unroll
    for (int j = 0; j < kParTile; ++j) {
      if (j < mt && acc[j] < my) {
        my = acc[j];
        lb = base + j0 + j;
      }
    }
  }
  if (live) {
    d2[i] = my;
    lab[i] = lb;
  }
  warp_level1(live ? my : 0.0, i, nch, s_red, lv1);
}

// Filtered update, same result as k_par_exact.  Per point and tile of J
// candidates: the float dot products a.b_j of the image, then the test
// above; only candidates that pass it get the exact distance, in order j,
// against the threshold of the current D2.  A candidate ruled out has an
// exact distance >= the current D2, so the exact rule (strict <, in order)
// would not have taken it either: D2 and the label are those of
// k_par_exact.  Each thread owns P points (i, i + kParThreads, ...), so that
// every candidate value read from shared memory feeds P multiply-adds.
// CAP > 0 (d <= CAP): the points' images stay in registers; CAP = 0: any d,
// the image is read from x per tile of kParCoords coordinates.  cf: m x d
// row-major image of the candidates, cq their filter_q.
template <typename T, int CAP, int P, int J>
__global__ void __launch_bounds__(kParThreads)
k_par_filter(const T *__restrict__ x, long long n, int d, FloatImage im, const float *__restrict__ cf,
             const float *__restrict__ cq, const double *__restrict__ cen, int m, int base,
             double *__restrict__ d2, int *__restrict__ lab, double *__restrict__ lv1, long long nch) {
  constexpr int TC = CAP ? CAP : kParCoords;  // coordinates per tile
  // Candidates per refill of shared memory: many tiles per barrier, since a
  // barrier waits for the warp with the most exact distances to compute.
  constexpr int CH = CAP ? (CAP <= 16 ? 256 : 128) : J;
  static_assert(CH % J == 0, "a chunk is whole tiles");
  __shared__ __align__(16) float s_cf[TC][CH];  // [coordinate][candidate]: wide broadcast loads
  __shared__ __align__(16) float s_q[CH];
  __shared__ float s_low[P][J][kParThreads];  // the tests' left sides, of the pairs that passed
  __shared__ double s_red[kParThreads / 32][32];
  const long long i0 = (long long)blockIdx.x * (kParThreads * P) + threadIdx.x;
  long long ip[P];
  double my[P], eps[P];
  int lb[P];
  float na[P], thr[P], lim[P];
  float af[P][CAP ? CAP : 1];  // CAP: the images
#pragma unroll
  for (int p = 0; p < P; ++p) {
    ip[p] = i0 + (long long)p * kParThreads;
    const bool live = ip[p] < n;
    my[p] = live ? d2[ip[p]] : 0.0;
    lb[p] = live ? lab[ip[p]] : 0;
    na[p] = 0.f;
    if (CAP) {
#pragma unroll
      for (int c = 0; c < CAP; ++c) {
        af[p][c] = (live && c < d) ? image_coord(x, n, ip[p], c, im) : 0.f;
        na[p] = fmaf(af[p][c], af[p][c], na[p]);
      }
    } else if (live) {
      for (int c = 0; c < d; ++c) {
        const float a = image_coord(x, n, ip[p], c, im);
        na[p] = fmaf(a, a, na[p]);
      }
    }
    eps[p] = filter_eps(na[p], d, im);
    thr[p] = filter_threshold(my[p], eps[p], im);
    lim[p] = live ? filter_limit(thr[p], na[p], im) : -__int_as_float(0x7f800000);  // -inf: nothing passes
  }

  for (int j0 = 0; j0 < m; j0 += J) {
    // tile j0 is tile `slot` of the chunk in shared memory (CAP == 0: the
    // chunk is the tile, for one tile of coordinates)
    const int slot = (j0 / J) % (CH / J);
    float acc[P][J];
#pragma unroll
    for (int p = 0; p < P; ++p)
#pragma unroll
      for (int j = 0; j < J; ++j) acc[p][j] = 0.f;
    for (int c0 = 0; c0 < d; c0 += TC) {
      const int cb = min(TC, d - c0);
      if (slot == 0) {
        const int mc = min(CH, m - j0);
        __syncthreads();
        // unused coordinates are 0 and unused candidates have q = +inf, so
        // the loops below need no tests
        for (int t = threadIdx.x; t < CH * TC; t += kParThreads) {
          const int j = t / TC, c = t - j * TC;
          s_cf[c][j] = (j < mc && c < cb) ? cf[(size_t)(j0 + j) * d + c0 + c] : 0.f;
        }
        if (c0 == 0)
          for (int t = threadIdx.x; t < CH; t += kParThreads)
            s_q[t] = t < mc ? cq[j0 + t] : __int_as_float(0x7f800000);
        __syncthreads();
      }
      float ar[P][CAP ? 1 : kParCoords];  // CAP == 0: this tile of the images
      if (!CAP) {
#pragma unroll
        for (int p = 0; p < P; ++p)
#pragma unroll
          for (int c = 0; c < kParCoords; ++c)
            ar[p][c] = (ip[p] < n && c < cb) ? image_coord(x, n, ip[p], c0 + c, im) : 0.f;
      }
      const float(*tile)[CH] = s_cf;
#pragma unroll
      for (int c = 0; c < TC; ++c) {
#pragma unroll
        for (int j = 0; j < J; ++j) {
          const float b = tile[c][slot * J + j];
#pragma unroll
          for (int p = 0; p < P; ++p) acc[p][j] = fmaf(CAP ? af[p][c] : ar[p][CAP ? 0 : c], b, acc[p][j]);
        }
      }
    }
    // The tests first (compact code), then the exact distances of the pairs
    // that passed, each tested again against the limit of the current D2.
#pragma unroll
    for (int p = 0; p < P; ++p) {
      // most tiles have no pair that passes: one minimum first
      float lowest = __int_as_float(0x7f800000);
#pragma unroll
      for (int j = 0; j < J; ++j) lowest = fminf(lowest, fmaf(-2.f, acc[p][j], s_q[slot * J + j]));
      if (!(lowest < lim[p])) continue;
      unsigned int mask = 0;
#pragma unroll
      for (int j = 0; j < J; ++j) {
        const float low = fmaf(-2.f, acc[p][j], s_q[slot * J + j]);
        if (low < lim[p]) {
          mask |= 1u << j;
          s_low[p][j][threadIdx.x] = low;
        }
      }
      while (mask) {
        const int j = __ffs(mask) - 1;
        mask &= mask - 1;
        if (s_low[p][j][threadIdx.x] < lim[p]) {
          const double dist = exact_dist(x, n, d, ip[p], cen + (size_t)(j0 + j) * d);
          if (dist < my[p]) {
            my[p] = dist;
            lb[p] = base + j0 + j;
            thr[p] = filter_threshold(my[p], eps[p], im);
            lim[p] = filter_limit(thr[p], na[p], im);
          }
        }
      }
    }
  }
#pragma unroll
  for (int p = 0; p < P; ++p) {
    const bool live = ip[p] < n;
    if (live) {
      d2[ip[p]] = my[p];
      lab[ip[p]] = lb[p];
    }
    warp_level1(live ? my[p] : 0.0, ip[p], nch, s_red, lv1);
  }
}

// The candidates' float image (row-major) and their filter_q, from their
// exact rows.
static __global__ void k_par_image(const double *__restrict__ cen, int m, int d, FloatImage im,
                                   float *__restrict__ cf, float *__restrict__ cq) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < m) cq[j] = center_image(cen + (size_t)j * d, d, im, cf + (size_t)j * d);
}

// Round r: point i joins when u(seed, r, i) < (l * D2_i) / phi; i counts
// the rows of the whole data, d2 being those of rows [offset, offset + n).
static __global__ void k_par_select(const double *__restrict__ d2, long long n, long long offset, double l,
                                    double phi, unsigned long long seed, unsigned long long r,
                                    unsigned long long *count, long long *sel, long long cap) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const double v = d2[i];
  if (!(v > 0)) return;
  const double p = __ddiv_rn(__dmul_rn(l, v), phi);
  const long long row = offset + i;  // (the rows' numbers in the whole data: a block of it)
  if (counter_uniform(seed, r, (unsigned long long)row) < p) {
    const unsigned long long pos = atomicAdd(count, 1ull);
    if ((long long)pos < cap) sel[pos] = row;
  }
}

// The weights: points whose nearest candidate is j.  A block counts into
// shared memory when the m counters fit (kWeightBins), then adds its counts
// to the global ones: far fewer global atomics on the same addresses.
constexpr int kWeightBins = 8192;

static __global__ void k_par_weights(const int *__restrict__ lab, long long n, int m,
                                     unsigned int *__restrict__ counts) {
  __shared__ unsigned int s_h[kWeightBins];
  const bool local = m <= kWeightBins;
  if (local) {
    for (int t = threadIdx.x; t < m; t += blockDim.x) s_h[t] = 0;
    __syncthreads();
  }
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    if (local) atomicAdd(&s_h[lab[i]], 1u);
    else atomicAdd(&counts[lab[i]], 1u);
  }
  if (local) {
    __syncthreads();
    for (int t = threadIdx.x; t < m; t += blockDim.x)
      if (s_h[t]) atomicAdd(&counts[t], s_h[t]);
  }
}

}  // namespace init
}  // namespace gk

#endif
