// detail/quality_kernels.cuh: the kernels of the quality pass (quality.cu):
// the rows in cluster order as a padded row-major copy (k_sorted_copy), each
// row's distance to its own center and the simplified silhouette
// (k_quality_centers), and the exact silhouette streamed in O(n^2 d) without
// an n x n matrix (k_sil_exact, k_sil_exact_wide).
//
// Exactness, as the CPU engine (src/cpu_quality.cpp), so that both give the
// same bits: a distance is sqrt(s), s = 0; s = s + (u_a - v_a)^2 in
// coordinate order with __dsub_rn/__dmul_rn/__dadd_rn (never an FMA) and
// __dsqrt_rn; padding coordinates are 0 on both sides and add (0 - 0)^2 = 0,
// which changes no bit; a row's distances to a cluster are added one by one
// in row order (the order of the sorted copy within a cluster); means,
// minima (strict <: the first of equals) and widths as cluster::silhouette.
//
// Exact silhouette, the design.  The rows are sorted by cluster, so the rows
// of cluster c are the contiguous range [start[c], start[c+1]) of the copy,
// and a block needs no per-(row, cluster) table: for each cluster in turn it
// streams that range through shared memory in tiles of TJ rows and every
// thread adds the distances of its R rows (held in registers) to the tile's
// rows into R running sums; at the end of the range each sum becomes a mean
// and updates the row's a (its own cluster) or b and neighbor (another).
// So k may be anything, with O(TJ d) shared memory, and a launch covers a
// range of row tiles (the host polls for interrupts between launches).  Work:
// n_i * n distances of d coordinates, 3 FP64 operations per coordinate.
// Rows of d <= 32 coordinates (padded to DM) stay in registers; wider rows
// are taken in chunks of 16 coordinates, each tile row's partial s kept in
// registers across the chunks (the order of the additions is unchanged).
#ifndef GPUKMEANS_DETAIL_QUALITY_KERNELS_CUH
#define GPUKMEANS_DETAIL_QUALITY_KERNELS_CUH

#include "common.cuh"

namespace gk {
namespace quality {

constexpr int kThreads = 128;   // threads per block of the silhouette kernels
constexpr int kTileJ = 64;      // rows of a tile (registers path)
constexpr int kWideTileJ = 16;  // rows of a tile (wide path)
constexpr int kWideChunk = 16;  // coordinates per chunk (wide path)

// The cluster of position p: the last c with start[c] <= p (it is not empty).
__device__ __forceinline__ int cluster_of(const long long *__restrict__ start, int k, long long p) {
  int lo = 0, hi = k;
  while (hi - lo > 1) {
    const int mid = (lo + hi) >> 1;
    if (start[mid] <= p) lo = mid;
    else hi = mid;
  }
  return lo;
}

// cluster::silhouette's width: (b - a) / max(a, b), 0 when the row is alone
// in its cluster or a == b.
__device__ __forceinline__ double width_of(double a, double b, bool alone) {
  return (!alone && a != b) ? __ddiv_rn(__dsub_rn(b, a), a < b ? b : a) : 0.0;
}

// xs[p * dp + a] = stored x[order[p], a] in double for a < d, 0 for d <= a < dp.
template <typename T>
__global__ void k_sorted_copy(const T *__restrict__ x, long long n, int d, int dp, const int *__restrict__ order,
                              double *__restrict__ xs) {
  const long long total = n * (long long)dp;
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < total;
       e += (long long)gridDim.x * blockDim.x) {
    const long long p = e / dp;
    const int a = (int)(e - p * dp);
    xs[e] = a < d ? (double)x[(long long)order[p] + n * (long long)a] : 0.0;
  }
}

// Per position p (row order[p]): the distance to its own center (cen: k x d
// row-major, stored coordinates) into center_dist[row] (may be NULL) and,
// when simplified, the simplified silhouette width and neighbor (1-based).
// The row's coordinates are read from xs (row p, padded to dp).
__global__ void k_quality_centers(const double *__restrict__ xs, long long n, int d, int dp,
                                  const int *__restrict__ order, const long long *__restrict__ start, int k,
                                  const double *__restrict__ cen, int simplified, double *__restrict__ center_dist,
                                  double *__restrict__ width, int *__restrict__ neighbor) {
  const long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= n) return;
  const double *xp = xs + p * dp;
  const int own = cluster_of(start, k, p);
  const long long row = order[p];
  double s = 0.0;
  const double *co = cen + (long long)own * d;
  for (int a = 0; a < d; ++a) {
    const double u = __dsub_rn(xp[a], co[a]);
    s = __dadd_rn(s, __dmul_rn(u, u));
  }
  const double ao = __dsqrt_rn(s);
  if (center_dist) center_dist[row] = ao;
  if (!simplified) return;
  double best = pos_inf<double>();
  int nb = -1;
  for (int c = 0; c < k; ++c) {
    if (c == own || start[c + 1] == start[c]) continue;
    const double *cc = cen + (long long)c * d;
    double t = 0.0;
    for (int a = 0; a < d; ++a) {
      const double u = __dsub_rn(xp[a], cc[a]);
      t = __dadd_rn(t, __dmul_rn(u, u));
    }
    const double dist = __dsqrt_rn(t);
    if (dist < best) {
      best = dist;
      nb = c;
    }
  }
  width[row] = width_of(ao, best, start[own + 1] - start[own] == 1);
  neighbor[row] = nb + 1;
}

// The i rows of a launch: positions ipos[q] (sampled) or q, for
// q = q0 + (blockIdx.x * R + r) * blockDim.x + threadIdx.x < q1; outputs at
// q (sampled) or order[q] (every row).
struct SilArgs {
  const double *xs;   // n x dp, row-major, cluster by cluster
  long long n;
  const int *order;   // position -> row
  const long long *start;
  int k;
  const int *ipos;    // NULL: every position
  long long q0, q1;
  double *width;
  int *neighbor;
};

// After cluster c's range: the row's a (own cluster) or its b and neighbor.
__device__ __forceinline__ void fold_cluster(int c, int own, long long nc, double acc, double &a, double &b,
                                             int &nb) {
  if (c == own) {
    a = nc > 1 ? __ddiv_rn(acc, (double)(nc - 1)) : 0.0;
  } else {
    const double v = __ddiv_rn(acc, (double)nc);
    if (v < b) {
      b = v;
      nb = c;
    }
  }
}

__device__ __forceinline__ void write_width(const SilArgs &A, long long q, int own, double a, double b, int nb) {
  const long long out = A.ipos ? q : (long long)A.order[q];
  A.width[out] = width_of(a, b, A.start[own + 1] - A.start[own] == 1);
  A.neighbor[out] = nb + 1;
}

// Rows of DM <= 32 (padded) coordinates: R rows per thread in registers,
// tiles of kTileJ rows in shared memory, two tile rows at a time.
template <int DM, int R>
__global__ void __launch_bounds__(kThreads) k_sil_exact(SilArgs A) {
  __shared__ __align__(16) double sj[kTileJ * DM];
  const int t = threadIdx.x;
  double xi[R][DM];
  long long q[R];
  int own[R];
  bool live[R];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    q[r] = A.q0 + ((long long)blockIdx.x * R + r) * kThreads + t;
    live[r] = q[r] < A.q1;
    const long long p = live[r] ? (A.ipos ? (long long)A.ipos[q[r]] : q[r]) : 0;
    own[r] = cluster_of(A.start, A.k, p);
    const double2 *src = reinterpret_cast<const double2 *>(A.xs + p * DM);
#pragma unroll
    for (int a = 0; a < DM / 2; ++a) {
      const double2 v = src[a];
      xi[r][2 * a] = v.x;
      xi[r][2 * a + 1] = v.y;
    }
  }
  double a_own[R], b[R];
  int nb[R];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    a_own[r] = 0.0;
    b[r] = pos_inf<double>();
    nb[r] = -1;
  }
  for (int c = 0; c < A.k; ++c) {
    const long long s0 = A.start[c], s1 = A.start[c + 1];
    if (s1 == s0) continue;
    double acc[R];
#pragma unroll
    for (int r = 0; r < R; ++r) acc[r] = 0.0;
    for (long long j0 = s0; j0 < s1; j0 += kTileJ) {
      const int mj = (int)min((long long)kTileJ, s1 - j0);
      __syncthreads();
      const double *src = A.xs + j0 * DM;
      for (int e = t; e < kTileJ * DM; e += kThreads) sj[e] = e < mj * DM ? src[e] : 0.0;
      __syncthreads();
      for (int j = 0; j < mj; j += 2) {
        const double2 *y0 = reinterpret_cast<const double2 *>(sj + j * DM);
        const double2 *y1 = reinterpret_cast<const double2 *>(sj + (j + 1) * DM);
        double s0v[R], s1v[R];
#pragma unroll
        for (int r = 0; r < R; ++r) s0v[r] = s1v[r] = 0.0;
#pragma unroll
        for (int a = 0; a < DM / 2; ++a) {
          const double2 u0 = y0[a], u1 = y1[a];
#pragma unroll
          for (int r = 0; r < R; ++r) {
            double v = __dsub_rn(xi[r][2 * a], u0.x);
            s0v[r] = __dadd_rn(s0v[r], __dmul_rn(v, v));
            v = __dsub_rn(xi[r][2 * a], u1.x);
            s1v[r] = __dadd_rn(s1v[r], __dmul_rn(v, v));
            v = __dsub_rn(xi[r][2 * a + 1], u0.y);
            s0v[r] = __dadd_rn(s0v[r], __dmul_rn(v, v));
            v = __dsub_rn(xi[r][2 * a + 1], u1.y);
            s1v[r] = __dadd_rn(s1v[r], __dmul_rn(v, v));
          }
        }
        // Tile row j + 1 may be padding (mj odd): its distance is not added.
        const bool two = j + 1 < mj;
#pragma unroll
        for (int r = 0; r < R; ++r) {
          acc[r] = __dadd_rn(acc[r], __dsqrt_rn(s0v[r]));
          if (two) acc[r] = __dadd_rn(acc[r], __dsqrt_rn(s1v[r]));
        }
      }
    }
#pragma unroll
    for (int r = 0; r < R; ++r) fold_cluster(c, own[r], s1 - s0, acc[r], a_own[r], b[r], nb[r]);
  }
#pragma unroll
  for (int r = 0; r < R; ++r)
    if (live[r]) write_width(A, q[r], own[r], a_own[r], b[r], nb[r]);
}

// Rows of more than 32 coordinates (dp, a multiple of kWideChunk): one row
// per thread, tiles of kWideTileJ rows taken kWideChunk coordinates at a
// time; each tile row's partial sum of squares stays in a register across the
// chunks, so the additions keep the coordinate order.
__global__ void __launch_bounds__(kThreads) k_sil_exact_wide(SilArgs A, int dp) {
  __shared__ __align__(16) double sj[kWideTileJ * kWideChunk];
  const int t = threadIdx.x;
  const long long q = A.q0 + (long long)blockIdx.x * kThreads + t;
  const bool live = q < A.q1;
  const long long p = live ? (A.ipos ? (long long)A.ipos[q] : q) : 0;
  const int own = cluster_of(A.start, A.k, p);
  const double *xp = A.xs + p * dp;
  double a_own = 0.0, b = pos_inf<double>();
  int nb = -1;
  for (int c = 0; c < A.k; ++c) {
    const long long s0 = A.start[c], s1 = A.start[c + 1];
    if (s1 == s0) continue;
    double acc = 0.0;
    for (long long j0 = s0; j0 < s1; j0 += kWideTileJ) {
      const int mj = (int)min((long long)kWideTileJ, s1 - j0);
      double part[kWideTileJ];
#pragma unroll
      for (int j = 0; j < kWideTileJ; ++j) part[j] = 0.0;
      for (int a0 = 0; a0 < dp; a0 += kWideChunk) {
        __syncthreads();
        for (int e = t; e < kWideTileJ * kWideChunk; e += kThreads) {
          const int jj = e / kWideChunk, aa = e - jj * kWideChunk;
          sj[e] = jj < mj ? A.xs[(j0 + jj) * dp + a0 + aa] : 0.0;
        }
        __syncthreads();
        double xc[kWideChunk];
        const double2 *src = reinterpret_cast<const double2 *>(xp + a0);
#pragma unroll
        for (int a = 0; a < kWideChunk / 2; ++a) {
          const double2 v = src[a];
          xc[2 * a] = v.x;
          xc[2 * a + 1] = v.y;
        }
#pragma unroll
        for (int j = 0; j < kWideTileJ; ++j) {
          const double2 *y = reinterpret_cast<const double2 *>(sj + j * kWideChunk);
          double s = part[j];
#pragma unroll
          for (int a = 0; a < kWideChunk / 2; ++a) {
            const double2 u = y[a];
            double v = __dsub_rn(xc[2 * a], u.x);
            s = __dadd_rn(s, __dmul_rn(v, v));
            v = __dsub_rn(xc[2 * a + 1], u.y);
            s = __dadd_rn(s, __dmul_rn(v, v));
          }
          part[j] = s;
        }
      }
#pragma unroll
      for (int j = 0; j < kWideTileJ; ++j)
        if (j < mj) acc = __dadd_rn(acc, __dsqrt_rn(part[j]));
    }
    fold_cluster(c, own, s1 - s0, acc, a_own, b, nb);
  }
  if (live) write_width(A, q, own, a_own, b, nb);
}

}  // namespace quality
}  // namespace gk

#endif
