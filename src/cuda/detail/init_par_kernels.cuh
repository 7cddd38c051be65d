// detail/init_par_kernels.cuh: the kernels of the oversampling phase of
// k-means|| (init_par.cu).
//
// A round folds m new candidates into D2 and into each point's nearest
// candidate (the first of equals, in the order candidates were added), the
// same rule the CPU engine applies; the weights are then a histogram of those
// labels, with no separate pass.  D2 must be exact (init_order.h point 1),
// but most point-candidate pairs cannot lower D2: k_par_filter rules them out
// with a float lower bound and computes the exact double distance only for
// the pairs the bound cannot exclude.  The result is the exact rule's, bit
// for bit (see the comment at k_par_filter).
#ifndef GPUKMEANS_DETAIL_INIT_PAR_KERNELS_CUH
#define GPUKMEANS_DETAIL_INIT_PAR_KERNELS_CUH

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

// The float image of the data used by the bound: a = fl32((x - shift) * scale)
// with scale a power of two such that |x - shift| * scale <= 1.
struct FloatImage {
  const double *shift;  // d column shifts (double data), or NULL (single: x is stored shifted)
  double scale;
  float uprime;         // relative error of a against the exact (x - shift) * scale: 0 in single
  float bmax;           // upper bound of ||b|| for every candidate b
  float kappa;          // |A - R_f| <= kappa * (|a|^2 + |b|^2) + kAbs, with margin
  double gamma;         // relative error bound of the exact double distance
};

constexpr float kAbs = 7.8886091e-31f;  // 2^-100: covers underflow in the float image

template <typename T>
__device__ __forceinline__ float image_coord(const T *__restrict__ x, long long n, long long i, int c,
                                             const FloatImage &im) {
  double v = (double)x[i + n * (long long)c];
  if (im.shift) v = __dsub_rn(v, im.shift[c]);
  return __double2float_rn(v * im.scale);
}

// Threshold in the float image: a candidate whose exact (double) distance
// could be < D2 has A - E < thr.  With R the real squared distance, a
// candidate can beat D2 only if R < D2 (1 + 2 gamma); the image's distance
// R_f then satisfies sqrt(R_f) < sqrt(R) + eps (eps bounds the image's
// rounding of both points); and A - E <= R_f.  Rounded up, with margin.
__device__ __forceinline__ float filter_threshold(double d2v, double eps, const FloatImage &im) {
  if (!(d2v < 1e300)) return __int_as_float(0x7f800000);
  const double t = sqrt(d2v * im.scale * im.scale * (1.0 + 2.0 * im.gamma)) + eps;
  return __double2float_ru(t * t * (1.0 + 9.5367431640625e-07) + 7.8886090522101181e-31);
}

// Filtered update, same result as k_par_exact.  Per point and tile of 32
// candidates: A_j = |a|^2 + |b_j|^2 - 2 a.b_j in float (the image), and the
// lower bound A_j - E_j of the image's distance; only candidates whose bound
// is below the current threshold get the exact distance, in order j.  A
// candidate ruled out has an exact distance >= the current D2, so the exact
// rule (strict <, in order) would not have taken it either: D2 and the label
// are those of k_par_exact.  REG: d <= kParCoords, the point's image stays in
// registers.  cf: m x d row-major image of the candidates, cn their |b|^2.
template <typename T, bool REG>
__global__ void __launch_bounds__(kParThreads)
k_par_filter(const T *__restrict__ x, long long n, int d, FloatImage im, const float *__restrict__ cf,
             const float *__restrict__ cn, const double *__restrict__ cen, int m, int base,
             double *__restrict__ d2, int *__restrict__ lab, double *__restrict__ lv1, long long nch) {
  __shared__ __align__(16) float s_cf[kParCoords][kParTile];  // transposed, as in k_par_exact
  __shared__ float s_cn[kParTile];
  __shared__ float s_lb[kParTile][kParThreads];
  __shared__ double s_red[kParThreads / 32][32];
  const long long i = (long long)blockIdx.x * kParThreads + threadIdx.x;
  const bool live = i < n;
  double my = live ? d2[i] : 0.0;
  int lb = live ? lab[i] : 0;

  float af[REG ? kParCoords : 1];
  float na = 0.f;
  if (live) {
    if (REG) {
#pragma unroll
      for (int c = 0; c < kParCoords; ++c) {
        if (c < d) {
          af[c] = image_coord(x, n, i, c, im);
          na = fmaf(af[c], af[c], na);
        }
      }
    } else {
      for (int c = 0; c < d; ++c) {
        const float a = image_coord(x, n, i, c, im);
        na = fmaf(a, a, na);
      }
    }
  }
  const float kna = fmaf(im.kappa, na, kAbs);
  const double eps =
      (double)im.uprime * (sqrt((double)na) * (1.0 + d * 5.9604644775390625e-08) + im.bmax) + 7.8886090522101181e-31;
  float thr = filter_threshold(my, eps, im);

  for (int j0 = 0; j0 < m; j0 += kParTile) {
    const int mt = min(kParTile, m - j0);
    float acc[kParTile];
#pragma unroll
    for (int j = 0; j < kParTile; ++j) acc[j] = 0.f;
    for (int c0 = 0; c0 < d; c0 += kParCoords) {
      const int cb = min(kParCoords, d - c0);
      __syncthreads();
      for (int t = threadIdx.x; t < mt * cb; t += kParThreads) {
        const int j = t / cb, c = t - j * cb;
        s_cf[c][j] = cf[(size_t)(j0 + j) * d + c0 + c];
      }
      if (c0 == 0 && threadIdx.x < mt) s_cn[threadIdx.x] = cn[j0 + threadIdx.x];
      __syncthreads();
      if (live) {
        float ar[REG ? 1 : kParCoords];
        if (!REG) {
#pragma unroll
          for (int c = 0; c < kParCoords; ++c)
            if (c < cb) ar[c] = image_coord(x, n, i, c0 + c, im);
        }
#pragma unroll
        for (int c = 0; c < kParCoords; ++c) {
          if (c < cb) {
            const float a = REG ? af[c] : ar[c];
#pragma unroll
            for (int j = 0; j < kParTile; ++j) acc[j] = fmaf(a, s_cf[c][j], acc[j]);
          }
        }
      }
    }
    if (live) {
      unsigned int mask = 0;
#pragma unroll
      for (int j = 0; j < kParTile; ++j) {
        if (j < mt) {
          const float A = fmaf(-2.f, acc[j], na + s_cn[j]);
          const float low = A - fmaf(im.kappa, s_cn[j], kna);
          if (low < thr) {
            mask |= 1u << j;
            s_lb[j][threadIdx.x] = low;
          }
        }
      }
      while (mask) {
        const int j = __ffs(mask) - 1;
        mask &= mask - 1;
        if (s_lb[j][threadIdx.x] < thr) {
          const double dist = exact_dist(x, n, d, i, cen + (size_t)(j0 + j) * d);
          if (dist < my) {
            my = dist;
            lb = base + j0 + j;
            thr = filter_threshold(my, eps, im);
          }
        }
      }
    }
  }
  if (live) {
    d2[i] = my;
    lab[i] = lb;
  }
  warp_level1(live ? my : 0.0, i, nch, s_red, lv1);
}

// The candidates' float image (row-major) and |b|^2, from their exact rows.
static __global__ void k_par_image(const double *__restrict__ cen, int m, int d, FloatImage im,
                            float *__restrict__ cf, float *__restrict__ cn) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= m) return;
  float nb = 0.f;
  for (int c = 0; c < d; ++c) {
    double v = cen[(size_t)j * d + c];
    if (im.shift) v = __dsub_rn(v, im.shift[c]);
    const float b = __double2float_rn(v * im.scale);
    cf[(size_t)j * d + c] = b;
    nb = fmaf(b, b, nb);
  }
  cn[j] = nb;
}

// Round r: point i joins when u(seed, r, i) < (l * D2_i) / phi.
static __global__ void k_par_select(const double *__restrict__ d2, long long n, double l, double phi,
                             unsigned long long seed, unsigned long long r, unsigned long long *count,
                             long long *sel, long long cap) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const double v = d2[i];
  if (!(v > 0)) return;
  const double p = __ddiv_rn(__dmul_rn(l, v), phi);
  if (counter_uniform(seed, r, (unsigned long long)i) < p) {
    const unsigned long long pos = atomicAdd(count, 1ull);
    if ((long long)pos < cap) sel[pos] = i;
  }
}

// The weights: points whose nearest candidate is j.
static __global__ void k_par_weights(const int *__restrict__ lab, long long n, unsigned int *__restrict__ counts) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&counts[lab[i]], 1u);
}

}  // namespace init
}  // namespace gk

#endif
