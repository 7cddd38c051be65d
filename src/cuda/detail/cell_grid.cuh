// detail/cell_grid.cuh: the small-d assignment through a grid of cells
// (d <= 3).  Each iteration a grid over the centers' bounding box lists, for
// every cell, the centers that can be nearest to some point of the cell;
// a point in a cell then computes its distances to those centers only, in
// index order with the kernel's own arithmetic, so it takes the center the
// full scan takes (float: the dot form of Small<float>; double: the exact
// no-FMA rule, and so stats::kmeans's label).  Points outside the grid, and
// cells with more than `cap` candidates, scan every center.
//
// Why the lists are safe.  For a cell (a box, widened by 1/16 of a cell on
// every side so that a point the kernel places in it lies inside whatever
// the rounding of its cell index), LB(c) and UB(c) are the least and the
// largest squared distance from the box to center c, and U = min_c UB(c).
// The grid computes them in float, from inputs taken relative to the box's
// middle and scaled by a power of two 2^s (in double), rounded to float:
// each is within e_b = (4d^2 + 17d) 1.01 u M^2 of the true value (in scaled
// units; u = 2^-24, M in [1, 2) the largest distance from the middle of a
// coordinate of the box one cell wider: inputs off by u M, the differences
// by 4 u M, the squares and their sum; the subtraction's own rounding, 2^-53
// of it, is far inside the 1.01).  A center c* the kernel
// takes for a point x of the cell has a computed distance no larger than
// that of the center reaching U, so
//   double: its true distance is within (d + 3) 2^-53 relative (and d
//           subnormals) of the computed one: LB(c*) <= U (1 + 3e-16) + 2^-1070;
//   float:  the dot form |c|^2 - 2 x.c is within E = (2d + 1) 1.01 u 3 M2
//           (M2 = sum_j M_j^2, M_j the box's largest |coordinate| j) of
//           |x - c|^2 - |x|^2: LB(c*) <= U + 2 E.
// With the float errors: LB_f(c*) <= (U_f + 2 e_b + (2 E + 2^-1000) 2^2s)
// (1 + 2^-40), the list's test; a center tied with c* passes it too, so the
// first of them in index order is the full scan's choice.  In float the
// box's coordinates must stay below 2^60 (E), and a cell be wider than
// 2^-40 of M (its edges' rounding well inside 1/16).
//
// Internal to the CUDA engine.  The part above the kernels also compiles as
// plain C++ (tools/cuda-dev/grid_emu.cpp checks it on the CPU).
#ifndef GPUKMEANS_DETAIL_CELL_GRID_CUH
#define GPUKMEANS_DETAIL_CELL_GRID_CUH

#include <math.h>

#if defined(__CUDACC__)
#define GK_GRID_HD __host__ __device__ __forceinline__
#else
#define GK_GRID_HD inline
#endif

namespace gk {

constexpr int kGridMaxD = 3;       // dimensions the grid splits
constexpr int kGridMaxK = 4096;    // centers (the build keeps them in shared memory)
constexpr int kGridCap = 48;       // candidates a cell lists (more: its points scan all)
constexpr int kGridSuper = 4;      // cells the build's super-cell spans along each dimension
constexpr int kGridSuperCap = 1024;  // centers a super-cell lists (more: its cells' lists from all)

// The grid of one iteration (written by the build's first block).
struct GridBox {
  double mid[kGridMaxD];  // middle (the build's float values are relative to it,
  double scale;           // ... times this power of two)
  double lo[kGridMaxD];   // lower corner
  double inv[kGridMaxD];  // cells per unit
  double cw[kGridMaxD];   // a cell's width
  double slack;           // the list's additive slack, in scaled units (see above)
  int g[kGridMaxD];       // cells along each dimension (1 beyond d)
  int usable;             // 0: every point scans every center
};

// The grid of at most `cells` cells over the bounding box [bmin, bmax] of
// the finite centers (bmin[0] > bmax[0]: none): widened by an eighth of its
// widest side on every side (points of the outer clusters stay inside),
// cells along each side in proportion to its width.
GK_GRID_HD void grid_box(const double *bmin, const double *bmax, int d, int cells, bool single, GridBox &b) {
  b.usable = 0;
  b.slack = 0;
  b.scale = 1;
  for (int j = 0; j < kGridMaxD; ++j) { b.mid[j] = 0; b.lo[j] = 0; b.inv[j] = 0; b.cw[j] = 0; b.g[j] = 1; }
  if (!(bmin[0] <= bmax[0]) || d < 1 || d > kGridMaxD || cells < 2) return;
  double wmax = 0;
  for (int j = 0; j < d; ++j) wmax = fmax(wmax, bmax[j] - bmin[j]);
  if (!(wmax > 0) || !(wmax < 1e300)) return;
  double W[kGridMaxD], vol = 1;  // (vol in units of wmax^d: no overflow)
  for (int j = 0; j < d; ++j) {
    W[j] = (bmax[j] - bmin[j]) + 0.25 * wmax;
    b.lo[j] = bmin[j] - 0.125 * wmax;
    b.mid[j] = b.lo[j] + 0.5 * W[j];
    vol *= W[j] / wmax;
  }
  const double per_side = pow((double)cells / vol, 1.0 / d);  // cells along a side of wmax
  long long prod = 1;
  for (int j = 0; j < d; ++j) {
    double gj = floor(W[j] / wmax * per_side);
    b.g[j] = gj < 1 ? 1 : gj > cells ? cells : (int)gj;
    prod *= b.g[j];
  }
  while (prod > cells) {  // (pow's rounding)
    int jm = 0;
    for (int j = 1; j < d; ++j) if (b.g[j] > b.g[jm]) jm = j;
    prod = prod / b.g[jm] * (b.g[jm] - 1);
    --b.g[jm];
  }
  if (prod < 2) return;
  double M = 0, Mabs = 0, M2 = 0;
  for (int j = 0; j < d; ++j) {
    b.cw[j] = W[j] / b.g[j];
    b.inv[j] = b.g[j] / W[j];
    const double lo = b.lo[j] - b.cw[j], hi = b.lo[j] + W[j] + b.cw[j];
    M = fmax(M, fmax(fabs(lo - b.mid[j]), fabs(hi - b.mid[j])));
    const double mj = fmax(fabs(lo), fabs(hi));
    Mabs = fmax(Mabs, mj);
    M2 += mj * mj;
  }
  if (!(M > 0 && M < 1e300) || (single && !(Mabs <= 0x1p60))) return;
  for (int j = 0; j < d; ++j)
    if (!(b.cw[j] >= M * 0x1p-40)) return;
  const int s = -ilogb(M);  // M 2^s in [1, 2)
  b.scale = ldexp(1.0, s);
  const double Ms = M * b.scale, u = 0x1p-24;
  const double eb = (4.0 * d * d + 17.0 * d) * 1.01 * u * Ms * Ms;
  const double E = single ? (2.0 * d + 1) * 1.01 * u * 3.0 * M2 + (2.0 * d + 1) * 0x1p-149 : 0.0;
  b.slack = 2 * eb + ldexp(2 * E + 0x1p-1000, 2 * s);  // (beyond double: +inf, every center listed)
  b.usable = 1;
}

// The cell of point x (its index), or -1 outside the grid.  (Loops over
// constant bounds with j < d tests, here and below: the kernels keep their
// arrays in registers.)
template <int N, typename T>
GK_GRID_HD int grid_cell(const GridBox &b, const T (&x)[N], int d) {
  int cell = 0, mul = 1;
#pragma unroll
  for (int j = 0; j < (N < kGridMaxD ? N : kGridMaxD); ++j) {
    if (j >= d) break;
    const double t = ((double)x[j] - b.lo[j]) * b.inv[j];
    if (!(t >= 0 && t < b.g[j])) return -1;
    int i = (int)t;
    if (i > b.g[j] - 1) i = b.g[j] - 1;
    cell += i * mul;
    mul *= b.g[j];
  }
  return cell;
}

// The lower and upper edge of cell i along dimension j, in float (widened by
// 1/16 of a cell), relative to the box's middle, scaled.
GK_GRID_HD float edge_lo(const GridBox &b, int j, int i) {
  return (float)(((b.lo[j] - b.mid[j]) + (i - 0.0625) * b.cw[j]) * b.scale);
}
GK_GRID_HD float edge_hi(const GridBox &b, int j, int i) {
  return (float)(((b.lo[j] - b.mid[j]) + (i + 1.0625) * b.cw[j]) * b.scale);
}

// A cell's box in float.
GK_GRID_HD void cell_box(const GridBox &b, int cell, int d, float (&lo)[kGridMaxD], float (&hi)[kGridMaxD]) {
#pragma unroll
  for (int j = 0; j < kGridMaxD; ++j) {
    lo[j] = hi[j] = 0;
    if (j >= d) continue;
    const int i = cell % b.g[j];
    cell /= b.g[j];
    lo[j] = edge_lo(b, j, i);
    hi[j] = edge_hi(b, j, i);
  }
}

// Least and largest squared distance from the box [lo, hi] to c, in float
// (c[0] NaN: both NaN).
GK_GRID_HD void box_dist(const float (&lo)[kGridMaxD], const float (&hi)[kGridMaxD], const float (&c)[kGridMaxD],
                         int d, float &lb, float &ub) {
  lb = 0;
  ub = 0;
#pragma unroll
  for (int j = 0; j < kGridMaxD; ++j) {
    if (j >= d) continue;
    const float a = lo[j] - c[j], z = c[j] - hi[j];  // a > 0: c below the box; z > 0: above
    const float out = fmaxf(fmaxf(a, z), 0.f);
    const float far = fmaxf(-a, -z);                 // the farther side (>= 0 for c inside)
    lb = lb + out * out;
    ub = ub + far * far;
  }
  if (c[0] != c[0]) lb = ub = c[0];
}

// The list's test for a center of least squared distance lb to the cell,
// given U (the least largest distance) and the grid's slack.
GK_GRID_HD double grid_limit(float U, double slack) { return ((double)U + slack) * (1.0 + 0x1p-40); }

}  // namespace gk

#if defined(__CUDACC__)
#include "assign_kernels.cuh"

namespace gk {
namespace {

// The grid's device buffers (one block, assign.cu): the box, each cell's
// list length (-1: more than kGridCap) and its list (center indices in
// index order).
struct GridBufs {
  GridBox *box;
  int *counts;
  unsigned short *lists;
  int cells;  // at most
};
// (the lists 16-byte aligned: the kernel reads 8 entries at once)
static_assert(kGridCap % 8 == 0, "a cell's list is whole 16-byte groups");
inline size_t grid_lists_at(int cells) { return 256 + ((size_t)cells * sizeof(int) + 15) / 16 * 16; }
inline size_t grid_bytes(int cells) { return grid_lists_at(cells) + (size_t)cells * kGridCap * sizeof(unsigned short); }
// Cells a super-cell of the build spans (kGridSuper^d), and the build's
// blocks on a device of `sms` multiprocessors (about one a super-cell, at
// most two an SM: each block finds the box again).
GK_GRID_HD int grid_super_cells(int d) {
  int n = 1;
  for (int j = 0; j < d; ++j) n *= kGridSuper;
  return n;
}
inline int grid_build_blocks(int cells, int d, int sms) {
  const int blocks = cells / grid_super_cells(d) + 1;
  return blocks < 2 * sms ? blocks : 2 * sms;
}
inline GridBufs grid_bufs(void *block, int cells) {
  char *p = (char *)block;
  return GridBufs{(GridBox *)p, (int *)(p + 256), (unsigned short *)(p + grid_lists_at(cells)), cells};
}

// box_dist for center c of the build's shared copy ([j][c] floats).
__device__ __forceinline__ void center_box_dist(const float (&lo)[kGridMaxD], const float (&hi)[kGridMaxD],
                                                const float *sgc, int k, int d, int c, float &lb, float &ub) {
  float cv[kGridMaxD];
#pragma unroll
  for (int j = 0; j < kGridMaxD; ++j) cv[j] = j < d ? sgc[j * k + c] : 0.f;
  box_dist(lo, hi, cv, d, lb, ub);
}

// A warp's list for one box: of the candidates src[0, m) (null: centers 0
// .. m - 1), in their order, those that pass the test against the least
// largest distance among them (a subset's least is larger: still an upper
// bound); returns their number (more than cap: out holds the first cap).
__device__ __forceinline__ int warp_cell_list(const float (&lo)[kGridMaxD], const float (&hi)[kGridMaxD],
                                              const float *sgc, int k, int d, const unsigned short *src, int m,
                                              double slack, unsigned short *out, int cap, int lane) {
  float U = pos_inf<float>();
  for (int t = lane; t < m; t += 32) {
    const int c = src ? src[t] : t;
    float lb, ub;
    center_box_dist(lo, hi, sgc, k, d, c, lb, ub);
    U = fminf(U, ub);
  }
#pragma unroll
  for (int off = 16; off; off >>= 1) U = fminf(U, __shfl_xor_sync(0xffffffffu, U, off));
  const double lim = grid_limit(U, slack);
  int total = 0;
  for (int t0 = 0; t0 < m && total <= cap; t0 += 32) {
    const int t = t0 + lane;
    bool pass = false;
    int c = 0;
    if (t < m) {
      c = src ? src[t] : t;
      float lb, ub;
      center_box_dist(lo, hi, sgc, k, d, c, lb, ub);
      pass = (double)lb <= lim;
    }
    const unsigned int msk = __ballot_sync(0xffffffffu, pass);
    const int pos = total + __popc(msk & ((1u << lane) - 1u));
    if (pass && pos < cap) out[pos] = (unsigned short)c;
    total += __popc(msk);
  }
  return total;
}

// The grid of this iteration's centers (column-major, k <= kGridMaxK, d <=
// 3): every block finds the finite centers' box (the same in each), then
// keeps the centers in shared memory as floats relative to its middle, scaled ([j][c],
// NaN in row 0 for a non-finite center); block 0 writes the box.  Then a block a super-cell
// (kGridSuper cells a side): the super-cell's list from all centers, then
// a warp a cell its list from the super-cell's.  (A center that can be
// nearest in a cell passes the super-cell's test: its least distance to
// the larger box is no larger, the least largest distance no smaller.)
// Dynamic shared memory: d k floats.
template <typename T>
__global__ void __launch_bounds__(256)
k_grid_build(const T *__restrict__ cen, int k, int d, GridBufs g, bool single, const State *st, int max_iter) {
  if (fit_finished(st, max_iter)) return;
  extern __shared__ float sgc[];
  __shared__ double red[2][kGridMaxD][8];
  __shared__ GridBox sbox;
  __shared__ float sU[8];
  __shared__ int swc[8];
  __shared__ unsigned short slist[kGridSuperCap];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  double mn[kGridMaxD], mx[kGridMaxD];
#pragma unroll
  for (int j = 0; j < kGridMaxD; ++j) { mn[j] = pos_inf<double>(); mx[j] = -pos_inf<double>(); }
  for (int c = tid; c < k; c += blockDim.x) {
    double v[kGridMaxD];
    bool fin = true;
#pragma unroll
    for (int j = 0; j < kGridMaxD; ++j) {
      v[j] = j < d ? (double)cen[c + (size_t)k * j] : 0.0;
      fin = fin && isfinite(v[j]);
    }
    if (fin) {
#pragma unroll
      for (int j = 0; j < kGridMaxD; ++j) { mn[j] = fmin(mn[j], v[j]); mx[j] = fmax(mx[j], v[j]); }
    }
  }
#pragma unroll
  for (int j = 0; j < kGridMaxD; ++j) {
#pragma unroll
    for (int off = 16; off; off >>= 1) {
      mn[j] = fmin(mn[j], __shfl_xor_sync(0xffffffffu, mn[j], off));
      mx[j] = fmax(mx[j], __shfl_xor_sync(0xffffffffu, mx[j], off));
    }
    if (lane == 0) { red[0][j][warp] = mn[j]; red[1][j][warp] = mx[j]; }
  }
  __syncthreads();
  if (tid == 0) {
    double bmin[kGridMaxD], bmax[kGridMaxD];
    for (int j = 0; j < kGridMaxD; ++j) {
      bmin[j] = red[0][j][0];
      bmax[j] = red[1][j][0];
      for (int w = 1; w < 8; ++w) {
        bmin[j] = fmin(bmin[j], red[0][j][w]);
        bmax[j] = fmax(bmax[j], red[1][j][w]);
      }
    }
    grid_box(bmin, bmax, d, g.cells, single, sbox);
    if (blockIdx.x == 0) *g.box = sbox;
  }
  __syncthreads();
  if (!sbox.usable) return;
  // the centers relative to the box's middle (read again: L2)
  for (int c = tid; c < k; c += blockDim.x) {
    bool fin = true;
#pragma unroll
    for (int j = 0; j < kGridMaxD; ++j) {
      if (j >= d) continue;
      const double v = (double)cen[c + (size_t)k * j];
      fin = fin && isfinite(v);
      sgc[j * k + c] = (float)((v - sbox.mid[j]) * sbox.scale);
    }
    if (!fin) sgc[c] = quiet_nan<float>();
  }
  __syncthreads();
  const int per_sup = grid_super_cells(d);
  int sg[kGridMaxD], nsup = 1;
#pragma unroll
  for (int j = 0; j < kGridMaxD; ++j) {
    sg[j] = (sbox.g[j] + kGridSuper - 1) / kGridSuper;
    nsup *= sg[j];
  }
  for (int S = blockIdx.x; S < nsup; S += gridDim.x) {
    // the super-cell's box and cells
    int s0[kGridMaxD];
    float lo[kGridMaxD], hi[kGridMaxD];
    {
      int r = S;
#pragma unroll
      for (int j = 0; j < kGridMaxD; ++j) {
        s0[j] = (r % sg[j]) * kGridSuper;
        r /= sg[j];
        lo[j] = hi[j] = 0;
        if (j < d) {
          lo[j] = edge_lo(sbox, j, s0[j]);
          hi[j] = edge_hi(sbox, j, min(s0[j] + kGridSuper, sbox.g[j]) - 1);
        }
      }
    }
    // its list, in index order, by the whole block
    float U = pos_inf<float>();
    for (int c = tid; c < k; c += blockDim.x) {
      float lb, ub;
      center_box_dist(lo, hi, sgc, k, d, c, lb, ub);
      U = fminf(U, ub);
    }
#pragma unroll
    for (int off = 16; off; off >>= 1) U = fminf(U, __shfl_xor_sync(0xffffffffu, U, off));
    if (lane == 0) sU[warp] = U;
    __syncthreads();
    U = sU[0];
    for (int w = 1; w < 8; ++w) U = fminf(U, sU[w]);
    const double lim = grid_limit(U, sbox.slack);
    int total = 0;
    for (int c0 = 0; c0 < k; c0 += blockDim.x) {
      const int c = c0 + tid;
      bool pass = false;
      if (c < k) {
        float lb, ub;
        center_box_dist(lo, hi, sgc, k, d, c, lb, ub);
        pass = (double)lb <= lim;
      }
      const unsigned int msk = __ballot_sync(0xffffffffu, pass);
      if (lane == 0) swc[warp] = __popc(msk);
      __syncthreads();
      int pos = total + __popc(msk & ((1u << lane) - 1u)), all = 0;
      for (int w = 0; w < 8; ++w) {
        if (w < warp) pos += swc[w];
        all += swc[w];
      }
      if (pass && pos < kGridSuperCap) slist[pos] = (unsigned short)c;
      total += all;
      __syncthreads();
    }
    const bool listed = total <= kGridSuperCap;
    // a warp a cell
    for (int q = warp; q < per_sup; q += 8) {
      int cell = 0, mul = 1, r = q;
      bool in = true;
#pragma unroll
      for (int j = 0; j < kGridMaxD; ++j) {
        if (j >= d) break;
        const int i = s0[j] + r % kGridSuper;
        r /= kGridSuper;
        in = in && i < sbox.g[j];
        cell += i * mul;
        mul *= sbox.g[j];
      }
      if (!in) continue;
      float clo[kGridMaxD], chi[kGridMaxD];
      cell_box(sbox, cell, d, clo, chi);
      const int n = warp_cell_list(clo, chi, sgc, k, d, listed ? slist : nullptr, listed ? total : k, sbox.slack,
                                   g.lists + (size_t)cell * kGridCap, kGridCap, lane);
      if (lane == 0) g.counts[cell] = n <= kGridCap ? n : -1;
    }
    __syncthreads();  // (slist and sU are the next super-cell's)
  }
}

// Center c's distance as the small-d kernels compute it (float: the dot
// form; double: the exact rule), from its shared row.
template <typename T, int DM>
__device__ __forceinline__ T grid_dist(const T (&x)[DM], const T *sc, int c) {
  T cv[Small<T, DM>::SD];
  load_row(cv, sc + Small<T, DM>::row_at(c));
  return Small<T, DM>::dist(x, cv);
}

// k_assign_small's step with the grid: a point in a listed cell computes its
// distances to the cell's list only (in index order, strict '<'); the
// others scan every center.  The same labels, sums and changed count.
template <typename T, int DM, bool UPDATE>
__global__ void __launch_bounds__(256)
k_assign_small_grid(const T *__restrict__ x, long long n, int d, const T *__restrict__ cen, int k,
                    int *__restrict__ labels, State *st, int max_iter, u64 *__restrict__ acc,
                    unsigned int *__restrict__ counts, const int *__restrict__ scale, GridBufs g) {
  if (fit_finished(st, max_iter)) return;
  constexpr int P = Small<T, DM>::PPT;
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ unsigned int sh_changed;
  __shared__ GridBox box;
  unsigned int *slimb = reinterpret_cast<unsigned int *>(smem);
  T *sc = reinterpret_cast<T *>(slimb + (UPDATE ? 4 * (size_t)k * d : 0));
  unsigned int *scnt = reinterpret_cast<unsigned int *>(sc + Small<T, DM>::values(k));
  const int tid = threadIdx.x;
  if (tid == 0) {
    sh_changed = 0;
    box = *g.box;
  }
  Small<T, DM>::load(sc, cen, k, d, false);
  double pw[DM];
  small_sums_begin<DM, UPDATE>(slimb, scnt, k, d, scale, pw);
  __syncthreads();
  unsigned int served = 0;
  small_pass<T, DM, UPDATE, P>(
      x, n, d, k, labels, slimb, scnt, pw, acc, counts, &sh_changed,
      [&](const T (&xr)[P][DM], unsigned int valid, int (&bi)[P]) {
        // the P points' lists side by side (their loads and distances
        // overlap), 8 entries a 16-byte load
        int cell[P], cnt[P], cmax = 0;
        T best[P];
#pragma unroll
        for (int r = 0; r < P; ++r) {
          bi[r] = -1;
          best[r] = pos_inf<T>();
          cell[r] = ((valid >> r) & 1u) && box.usable ? grid_cell<DM>(box, xr[r], d) : -1;
          cnt[r] = cell[r] >= 0 ? __ldg(&g.counts[cell[r]]) : -1;
          cmax = max(cmax, cnt[r]);
          if (cnt[r] >= 0) ++served;
        }
        const uint4 *lists = reinterpret_cast<const uint4 *>(g.lists);
        for (int t0 = 0; t0 < cmax; t0 += 8) {
          unsigned long long v[P][2];  // entries t0 .. t0 + 7, 16 bits each
#pragma unroll
          for (int r = 0; r < P; ++r) {
            v[r][0] = v[r][1] = 0;
            if (t0 < cnt[r]) {
              const uint4 q = __ldg(&lists[(size_t)cell[r] * (kGridCap / 8) + t0 / 8]);
              v[r][0] = q.x | ((unsigned long long)q.y << 32);
              v[r][1] = q.z | ((unsigned long long)q.w << 32);
            }
          }
          const int un = min(8, cmax - t0);  // (a loop, not unrolled: short lists stop early)
          for (int u = 0; u < un; ++u) {
#pragma unroll
            for (int r = 0; r < P; ++r) {
              if (t0 + u >= cnt[r]) continue;
              const int c = (int)(((u < 4 ? v[r][0] : v[r][1]) >> (16 * (u & 3))) & 0xffffu);
              const T dd = grid_dist<T, DM>(xr[r], sc, c);
              if (dd < best[r]) { best[r] = dd; bi[r] = c; }
            }
          }
        }
        // the others (outside the grid, or a cell with too many candidates):
        // every center, one after the other (the scan's rule; Small's
        // grouped scan would hold 8 centers in registers)
#pragma unroll
        for (int r = 0; r < P; ++r) {
          if (!((valid >> r) & 1u) || cnt[r] >= 0) continue;
          for (int c = 0; c < k; ++c) {
            const T dd = grid_dist<T, DM>(xr[r], sc, c);
            if (dd < best[r]) { best[r] = dd; bi[r] = c; }
          }
        }
      });
  // (small_pass ends with a barrier: sh_changed is complete)
#pragma unroll
  for (int off = 16; off; off >>= 1) served += __shfl_xor_sync(0xffffffffu, served, off);
  if ((tid & 31) == 0 && served && st) atomicAdd(&st->grid_served, (u64)served);
  if (tid == 0 && st) {
    if (sh_changed) atomicAdd(&st->changed, (u64)sh_changed);
    if (blockIdx.x == 0) atomicAdd(&st->grid_seen, (u64)n);
  }
}

}  // namespace
}  // namespace gk
#endif

#endif  // GPUKMEANS_DETAIL_CELL_GRID_CUH
