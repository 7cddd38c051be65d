// detail/tc_tiles.cuh: 3xTF32 tensor-core tiles on packed, fragment-native
// operands (issue 15): the main loop shared by the single-precision
// assignment (k_assign_tc) and the double-precision certified filter
// (k_assign_tc_filter), both in assign_kernels.cuh, and the filter's
// candidate pass (k_assign_tc_cand, df_candidates.cuh).
//
// Why a packed copy of the operands: the earlier kernel read scalars from
// shared memory and loaded its tiles synchronously.  Here x is copied once
// per handle and the centers once per iteration into the order in which
// mma.sync m16n8k8 reads its fragments (tf32.cuh), so that
//   - a stage of the pipeline is two contiguous copies (cp.async, 16 bytes
//     a thread and copy; 8 KB of points, 8 or 16 KB of centers), three
//     stages in flight;
//   - a lane reads its A fragment with one 16-byte and its B fragment with
//     one 16-byte (split) or 8-byte shared load, without bank conflicts.
// The points' values are split (hi = tf32(a), lo = a - hi) in registers
// after the load: splitting x once at packing time would double its copy
// and the bytes every tile moves from L2.  For the single-precision kernel
// the centers, packed again each iteration, come split (their chunk twice
// the size): three instructions a value fewer in a loop bound by its issue
// more than by L2 (E 16.4 -> 15.0 ms on an H100).  So do the double
// filter's without its pair (TcFilterEpi<false>); the pair's epilogue
// leaves no registers for them (spills: E 21.4 -> 23.3 ms), so its centers
// come whole and are split in registers.
//
// Block: 128 points x 128 centers, 4 warps as 2 (points) x 2 (centers), each
// 64 x 64: acc[mt][nt] for the 16-point group mt (0..3) and the 8-center
// group nt (0..7).  Coordinates in chunks of 16 (zero padded: a product
// with a zero coordinate adds nothing).
//
// Packed points, per block tile bt of 128 points and chunk k16 (2048
// floats): [m16: 8][kk8: 2][lane: 32][slot: 4], slot s of lane
// 4g + t holding point 16 m16 + g + 8 (s & 1), coordinate
// 16 k16 + 8 kk8 + t + 4 (s >> 1) (rows beyond n: zero).
// Packed centers, per tile ct of 128 centers and chunk k16 (2048 floats,
// split: 4096): [n8: 16][kk8: 2][lane: 32][slot: 2], slot e of lane 4g + t
// holding center 128 ct + 8 n8 + g, coordinate 16 k16 + 8 kk8 + t + 4 e
// (centers beyond k, and NaN ones: zeros, norm +inf); split, [slot: 4] with the TF32
// split (hi, lo) of that value in slots e and 2 + e.  Their norms (one
// float a center) follow.
#ifndef GPUKMEANS_DETAIL_TC_TILES_CUH
#define GPUKMEANS_DETAIL_TC_TILES_CUH

#include "common.cuh"
#include "init_bound.cuh"
#include "tf32.cuh"
#include "wgmma.cuh"

namespace gk {

#ifndef GK_TC_STAGES
#define GK_TC_STAGES 3
#endif
constexpr int kTcBM = 128, kTcBN = 128, kTcThreads = 128, kTcStages = GK_TC_STAGES;
constexpr int kTcChunk = 2048;  // floats of one tile's chunk of 16 coordinates (either operand)
// ... of a center tile's, split (hi and lo) or not
__host__ __device__ constexpr int tc_chunk_b(bool split) { return split ? 2 * kTcChunk : kTcChunk; }
// A stage of the pipeline: the points' chunk, the centers' chunk, then (on
// the last chunk of a center tile, or its first for Epi::kNorms, as C
// quads) the tile's norms, and (on the last chunk of a point tile) the
// tile's rows' labels and norms (the epilogues' reads; labels after the
// quads for Epi::kNorms, whose epilogue reads no norms of the rows).
// (room for the split centers; 3 stages, 78 KB: two blocks an SM on sm_80
// and sm_90, one on sm_86 / sm_89, as the 4 stages of whole centers (70 KB)
// before.  4 stages of split ones (104 KB) gave the same times on an H100
// (E 13.9 ms either way) and would leave one block an SM on an A100.  The
// stage of a chunk is counted, not taken modulo 3 of a 64-bit index: E
// 15.0 -> 13.8 ms.  4 for the wgmma kernels gave E the same time too: H200,
// 2026-12-01.  GK_TC_STAGES: another depth, for tools/cuda-dev.)
constexpr int kTcStage = kTcChunk + tc_chunk_b(true) + 3 * kTcBM;
constexpr size_t kTcSmem = (size_t)kTcStages * kTcStage * sizeof(float);

__host__ __device__ constexpr int tc_k16(int d) { return (d + 15) / 16; }
__host__ __device__ constexpr int tc_kp(int k) { return (k + kTcBN - 1) / kTcBN * kTcBN; }
// floats of the packed points / centers (the centers' norms included, room
// for them as the argmin's C quads; room for split centers)
__host__ __device__ inline size_t tc_points_floats(long long n, int d) { return (size_t)((n + kTcBM - 1) / kTcBM) * tc_k16(d) * kTcChunk; }
inline size_t tc_centers_floats(int k, int d) {
  return (size_t)(tc_kp(k) / kTcBN) * tc_k16(d) * tc_chunk_b(true) + 2 * (size_t)tc_kp(k);
}

// The packed points from a source src(i, j) (the stored float x, or the
// float image of double x); one thread a lane's 4 slots of one fragment:
// group e of the layout's float4s, in order.
template <class Src>
__device__ __forceinline__ void tc_pack_group(const Src &src, long long n, int d, float *__restrict__ out,
                                              long long e) {
  const int lane = (int)(e & 31), kk8 = (int)((e >> 5) & 1), m16 = (int)((e >> 6) & 7);
  const long long rest = e >> 9;
  const int K16 = tc_k16(d);
  const int k16 = (int)(rest % K16);
  const long long bt = rest / K16;
  const int g = lane >> 2, t = lane & 3;
  float4 v;
  float *w = &v.x;
#pragma unroll
  for (int s = 0; s < 4; ++s) {
    const long long i = bt * kTcBM + m16 * 16 + g + 8 * (s & 1);
    const int j = k16 * 16 + kk8 * 8 + t + 4 * (s >> 1);
    w[s] = (i < n && j < d) ? src(i, j) : 0.f;
  }
  reinterpret_cast<float4 *>(out)[e] = v;
}
// Where tc_pack_group puts point i's coordinate j (j < d): the float's
// offset in the packed points (the layout's inverse).  A point's 16
// coordinates of a chunk lie in four 32-byte sectors.
__device__ __forceinline__ size_t tc_packed_at(long long i, int j, int d) {
  const long long bt = i >> 7;
  const int r = (int)(i & 127), m16 = r >> 4, g = r & 7, s0 = (r >> 3) & 1;
  const int k16 = j >> 4, kk8 = (j >> 3) & 1, t = j & 3, s1 = (j >> 2) & 1;
  const long long e = (((bt * tc_k16(d) + k16) * 8 + m16) * 2 + kk8) * 32 + 4 * g + t;
  return (size_t)e * 4 + 2 * s1 + s0;
}
template <class Src>
__global__ void k_tc_pack_points(Src src, long long n, int d, float *__restrict__ out, long long groups) {
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e < groups) tc_pack_group(src, n, d, out, e);
}

struct TcFloatSource {  // single precision: x as stored (n x d floats)
  const float *x;
  long long n;
  __device__ float operator()(long long i, int j) const { return x[i + n * (long long)j]; }
};

struct TcImageSource {  // the double filter: x's float image (init_bound.cuh)
  const double *x;
  long long n;
  init::FloatImage im;
  __device__ float operator()(long long i, int j) const { return init::image_coord(x, n, i, j, im); }
};

// How k_tc_pack_centers lays out the centers: whole or split (the layouts
// above), or for the single-precision argmin (TcArgmin, assign_kernels.cuh)
// split, times -2 (a power of two: the split and every product scale
// exactly, so its products hold -2 x.c), with the norms as the mma's C
// operands: for each group of 8 centers and t = 0..3 the quad (n[2t],
// n[2t + 1], n[2t], n[2t + 1]), 256 floats a tile (one 16-byte load gives
// the four products of a group their C without register moves); argmin_wg
// and split_wg: argmin's and split's values and norms, the centers in
// wgmma's layout (wgmma.cuh).
enum class TcPack { whole, split, argmin, argmin_wg, split_wg };

// The packed centers from column-major floats cen (leading dimension ld)
// and their norms |c|^2 (fmaf in coordinate order), stored as q, or rounded
// down to q (1 - kappa) when kappa > 0 (the filter's w).  One thread a
// center.  A NaN center (an empty cluster:
// every coordinate NaN) and the padding k..kp-1 are packed as zeros with
// norm +inf: their values |c|^2 - 2 x.c are +inf, never taken, as NaN
// ones would be, but they sort above every other value (the filter's
// second least value of a tile, assign_kernels.cuh, relied on it when a
// tournament of min and max made it; its tree of fminf needs no more).
static __global__ void k_tc_pack_centers(const float *__restrict__ cen, int ld, int k, int kp, int d, float kappa,
                                         TcPack form, float *__restrict__ out, const State *st, int max_iter) {
  if (fit_finished(st, max_iter)) return;
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= kp) return;
  const int K16 = tc_k16(d), ct = c / kTcBN, n8 = (c % kTcBN) >> 3, g = c & 7;
  const bool none = c >= k || !(cen[c] == cen[c]);
  const bool split = form != TcPack::whole;
  const bool argmin = form == TcPack::argmin || form == TcPack::argmin_wg;
  const float scale = argmin ? -2.f : 1.f;
  float q = 0.f;
  for (int k16 = 0; k16 < K16; ++k16) {  // (a chunk's 16 loads first: one after the other, D's 256
                                         // threads took 12 us an iteration at base clocks)
    float v[16];
#pragma unroll
    for (int jj = 0; jj < 16; ++jj) {
      const int j = k16 * 16 + jj;
      v[jj] = j < d && !none ? cen[c + (size_t)ld * j] : 0.f;
    }
#pragma unroll
    for (int jj = 0; jj < 16; ++jj)
      if (k16 * 16 + jj < d) q = fmaf(v[jj], v[jj], q);
    if (form == TcPack::argmin_wg || form == TcPack::split_wg) {  // (a center's 4 coordinates of a core
                                                                  // matrix: 16 bytes, hi and lo)
      float *chunk = out + ((size_t)ct * K16 + k16) * tc_chunk_b(true);
#pragma unroll
      for (int q4 = 0; q4 < 4; ++q4) {
        unsigned int h[4], l[4];
#pragma unroll
        for (int c4 = 0; c4 < 4; ++c4) split_tf32_nonan(scale * v[4 * q4 + c4], h[c4], l[c4]);
        const int kk8 = q4 >> 1, kc = q4 & 1;
        *reinterpret_cast<uint4 *>(chunk + wg_b_at(0, kk8, n8, kc, g, 0)) = make_uint4(h[0], h[1], h[2], h[3]);
        *reinterpret_cast<uint4 *>(chunk + wg_b_at(1, kk8, n8, kc, g, 0)) = make_uint4(l[0], l[1], l[2], l[3]);
      }
      continue;
    }
#pragma unroll
    for (int kk8 = 0; kk8 < 2; ++kk8) {
      const size_t f = (((size_t)ct * K16 + k16) * 16 + n8) * 2 + kk8;  // the fragment
#pragma unroll
      for (int t = 0; t < 4; ++t) {  // lane 4 g + t's slots: coordinates t and t + 4
        const float a = scale * v[kk8 * 8 + t], b = scale * v[kk8 * 8 + 4 + t];
        if (split) {
          unsigned int ha, la, hb, lb;
          split_tf32_nonan(a, ha, la);
          split_tf32_nonan(b, hb, lb);
          reinterpret_cast<float4 *>(out + f * 128)[4 * g + t] =
              make_float4(__uint_as_float(ha), __uint_as_float(hb), __uint_as_float(la), __uint_as_float(lb));
        } else {
          reinterpret_cast<float2 *>(out + f * 64)[4 * g + t] = make_float2(a, b);
        }
      }
    }
  }
  float *norms = out + (size_t)(kp / kTcBN) * K16 * tc_chunk_b(split);
  const float nq = none ? pos_inf<float>() : kappa > 0.f ? __fmaf_rd(-kappa, q, q) : q;
  if (argmin) {  // (the quad of center pair t of group n8)
    const size_t at = (size_t)ct * 2 * kTcBN + n8 * 16 + ((c & 7) >> 1) * 4 + (c & 1);
    norms[at] = nq;
    norms[at + 2] = nq;
  } else {
    norms[c] = nq;
  }
}

// Asynchronous copies into shared memory (also the filter kernel of
// assign_kernels.cuh): 16 bytes; 4 bytes, or zeros (valid false: src is
// not read); the end of a group; waiting until at most N groups are in flight.
__device__ __forceinline__ void cp_async16(void *dst, const void *src) {
  const unsigned int s = (unsigned int)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(src));
}
__device__ __forceinline__ void cp_async4(void *dst, const void *src, bool valid) {
  const unsigned int s = (unsigned int)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(src), "r"(valid ? 4 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

// Per-row inputs of the epilogues, staged with a point tile's last chunk:
// labels (n ints, 16-byte aligned; nullptr: none, with na nullptr too) and
// the filter's point norms na (or nullptr).
struct TcRows {
  const int *labels;
  const float *na;
  long long n;
};

__device__ __forceinline__ void mma_tf32_u(float (&c)[4], const uint4 &a, const uint2 &b) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b.x), "r"(b.y));
}

// c = A B (the accumulators' first product: no zeroing of c beforehand,
// which took a select per accumulator and chunk).
__device__ __forceinline__ void mma_tf32_z(float (&c)[4], const uint4 &a, const uint2 &b) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%10,%10,%10,%10};\n"
      : "=f"(c[0]), "=f"(c[1]), "=f"(c[2]), "=f"(c[3])
      : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b.x), "r"(b.y), "f"(0.0f));
}

// c = A B + q: the accumulators of 8 centers start from their norms (q: the
// C quad of TcPack::argmin, columns 2t, 2t + 1 of rows g and g + 8).
__device__ __forceinline__ void mma_tf32_n(float (&c)[4], const uint4 &a, const uint2 &b, const float4 &q) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%10,%11,%12,%13};\n"
      : "=f"(c[0]), "=f"(c[1]), "=f"(c[2]), "=f"(c[3])
      : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b.x), "r"(b.y), "f"(q.x), "f"(q.y), "f"(q.z), "f"(q.w));
}

// One chunk of 16 coordinates: acc (+)= the 3xTF32 products of the warp's
// 64 points (sa) and 64 centers (sb, split or not).  First: the tile's
// first chunk, whose first product of each accumulator starts it from zero,
// or (Norms) from its center's norm (norms: the tile's C quads, in shared
// memory).
template <bool First, bool SplitB, bool Norms = false>
__device__ __forceinline__ void tc_chunk(float (&acc)[4][8][4], const float *sa, const float *sb, int wm, int wn,
                                         int lane, const float *norms = nullptr) {
#pragma unroll
  for (int kk8 = 0; kk8 < 2; ++kk8) {
    uint4 ah[4], al[4];
#pragma unroll
    for (int mt = 0; mt < 4; ++mt) {
      const float4 v = *reinterpret_cast<const float4 *>(sa + (size_t)((wm * 4 + mt) * 2 + kk8) * 128 + lane * 4);
      split_tf32_nonan(v.x, ah[mt].x, al[mt].x);
      split_tf32_nonan(v.y, ah[mt].y, al[mt].y);
      split_tf32_nonan(v.z, ah[mt].z, al[mt].z);
      split_tf32_nonan(v.w, ah[mt].w, al[mt].w);
    }
#pragma unroll
    for (int np = 0; np < 8; np += 2) {
      uint2 bh[2], bl[2];
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        if (SplitB) {  // (hi, lo as packed)
          const uint4 v = *reinterpret_cast<const uint4 *>(sb + (size_t)((wn * 8 + np + j) * 2 + kk8) * 128 + lane * 4);
          bh[j] = make_uint2(v.x, v.y);
          bl[j] = make_uint2(v.z, v.w);
        } else {
          const float2 v = *reinterpret_cast<const float2 *>(sb + (size_t)((wn * 8 + np + j) * 2 + kk8) * 64 + lane * 2);
          split_tf32_nonan(v.x, bh[j].x, bl[j].x);
          split_tf32_nonan(v.y, bh[j].y, bl[j].y);
        }
      }
      // the three products of an accumulator 8 mma apart (independent in between)
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        float4 nv;
        if (Norms && First && kk8 == 0)
          nv = *reinterpret_cast<const float4 *>(norms + (wn * 8 + np + j) * 16 + 4 * (lane & 3));
#pragma unroll
        for (int mt = 0; mt < 4; ++mt) {
          if (Norms && First && kk8 == 0) mma_tf32_n(acc[mt][np + j], al[mt], bh[j], nv);
          else if (First && kk8 == 0) mma_tf32_z(acc[mt][np + j], al[mt], bh[j]);
          else mma_tf32_u(acc[mt][np + j], al[mt], bh[j]);
        }
      }
#pragma unroll
      for (int j = 0; j < 2; ++j)
#pragma unroll
        for (int mt = 0; mt < 4; ++mt) mma_tf32_u(acc[mt][np + j], ah[mt], bl[j]);
#pragma unroll
      for (int j = 0; j < 2; ++j)
#pragma unroll
        for (int mt = 0; mt < 4; ++mt) mma_tf32_u(acc[mt][np + j], ah[mt], bh[j]);
    }
  }
}

// The main loop of one block, over the point tiles blockIdx.x,
// blockIdx.x + gridDim.x, ... of ntiles (a persistent grid: the copies of a
// tile's first chunks overlap the previous tile's last products): for every
// tile of 128 centers, acc = the 3xTF32 products x.c of the tile's 128
// points (xp: the packed points) with the tile's centers (cp: the packed
// centers, nct tiles, their norms after them), then epi.tile(acc, c0,
// norms); after a point tile's last center tile, epi.finish(bt, labels, na)
// (which every thread calls: it may hold barriers).  The norms, labels and
// na passed are the tiles' own, in shared memory.  Epi::kZeroFirst: the
// tile's first chunk starts the accumulators by its products (tc_chunk<true>)
// rather than zeroing them first; Epi::kNorms (with kZeroFirst; cp packed as
// TcPack::argmin, no na): by its products plus the centers' norms (which
// then come with the tile's first chunk, and epi.tile gets no norms);
// Epi::kSplitB: cp holds split centers; Epi::kUnrolledCopies: the copies
// of a stage unrolled (below).
// smem: kTcSmem bytes of
// dynamic shared memory.
template <class Epi>
__device__ __forceinline__ void tc_main_loop(const float *__restrict__ xp, const float *__restrict__ cp, int d,
                                             int nct, long long ntiles, const TcRows rows, float *smem, Epi &epi) {
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp & 1, wn = warp >> 1;
  const int K16 = tc_k16(d), per_tile = K16 * nct;
  constexpr int kChunkB = tc_chunk_b(Epi::kSplitB);
  const long long mine = ntiles > blockIdx.x ? (ntiles - 1 - blockIdx.x) / gridDim.x + 1 : 0;
  const long long nq = mine * per_tile;
  // The block's chunk lq to load is chunk lk16 of point tile lbt and center
  // tile lct (counters, not divisions: a 64-bit division a chunk was a
  // tenth of D's instructions).
  long long lbt = blockIdx.x;
  int lct = 0, lk16 = 0, lst = 0;  // (lst: lq's stage, lq % kTcStages)
  auto load = [&](long long lq) {
    if (lq < nq) {
      const float4 *ga = reinterpret_cast<const float4 *>(xp + ((size_t)lbt * K16 + lk16) * kTcChunk);
      const float4 *gb = reinterpret_cast<const float4 *>(cp + ((size_t)lct * K16 + lk16) * kChunkB);
      float4 *sa = reinterpret_cast<float4 *>(smem + (size_t)lst * kTcStage);
      float4 *sb = sa + kTcChunk / 4, *sr = sb + kChunkB / 4;
      // Epi::kUnrolledCopies: trip counts known at compile time.  Loops from
      // tid take ~60 instructions of remainder handling and branches a chunk
      // (a twentieth of the argmin's on D) and left the argmin 8 bytes of
      // spills; unrolled it has none, in the same time on D (H100).  The
      // filter's epilogues, short of registers, spill with them (284 bytes
      // with the pair), so they keep the loops.
      static_assert(kTcChunk / 4 % kTcThreads == 0 && kChunkB / 4 % kTcThreads == 0, "whole copies a thread");
      if (Epi::kUnrolledCopies) {
#pragma unroll
        for (int u = 0; u < kTcChunk / 4 / kTcThreads; ++u)
          cp_async16(sa + tid + u * kTcThreads, ga + tid + u * kTcThreads);
#pragma unroll
        for (int u = 0; u < kChunkB / 4 / kTcThreads; ++u)
          cp_async16(sb + tid + u * kTcThreads, gb + tid + u * kTcThreads);
      } else {
#pragma unroll
        for (int e = tid; e < kTcChunk / 4; e += kTcThreads) cp_async16(sa + e, ga + e);
#pragma unroll
        for (int e = tid; e < kChunkB / 4; e += kTcThreads) cp_async16(sb + e, gb + e);
      }
      if (Epi::kNorms ? lk16 == 0 && tid < kTcBN / 2 : lk16 == K16 - 1 && tid < kTcBN / 4)  // the center tile's norms
        cp_async16(sr + tid, cp + (size_t)nct * K16 * kChunkB + (size_t)lct * (Epi::kNorms ? 2 : 1) * kTcBN + 4 * tid);
      if (lk16 == K16 - 1 && lct == nct - 1 && rows.labels && tid >= 32 && tid < 64 + (rows.na ? 32 : 0)) {  // the rows'
        const int e = tid - 32, part = e >> 5, u = e & 31;
        const long long i = lbt * kTcBM + 4 * u;
        const float *src = part ? rows.na : reinterpret_cast<const float *>(rows.labels);
        float4 *dst = sr + 32 * (1 + part + (Epi::kNorms ? 1 : 0)) + u;  // (after the norms)
        if (i + 4 <= rows.n) {
          cp_async16(dst, src + i);
        } else {  // the last tile's end: rows up to n, zeros after (nothing read past n)
#pragma unroll
          for (int q = 0; q < 4; ++q) cp_async4(reinterpret_cast<float *>(dst) + q, src + (i + q < rows.n ? i + q : 0), i + q < rows.n);
        }
      }
      if (++lk16 == K16) {
        lk16 = 0;
        if (++lct == nct) {
          lct = 0;
          lbt += gridDim.x;
        }
      }
    }
    if (++lst == kTcStages) lst = 0;
    cp_async_commit();  // (an empty group past the end keeps the counting uniform)
  };
#pragma unroll
  for (int q = 0; q < kTcStages - 1; ++q) load(q);
  float acc[4][8][4];
  int k16 = 0, ct = 0, stg = 0;  // (stg: q's stage)
  long long bt = blockIdx.x;
  for (long long q = 0; q < nq; ++q) {
    cp_async_wait<kTcStages - 2>();  // chunk q has landed (for this thread's copies)
    if constexpr (Epi::kWgmma) wg_fence_smem();  // (... for wgmma's reads too)
    __syncthreads();           // ... for every thread's; and chunk q - 1's buffer is free
    load(q + kTcStages - 1);
    const float *sa = smem + (size_t)stg * kTcStage, *sb = sa + kTcChunk, *sr = sb + kChunkB;
    if (++stg == kTcStages) stg = 0;
    if constexpr (Epi::kWgmma) {  // (chunk q's products done before the next barrier frees its buffer)
      static_assert(Epi::kSplitB && Epi::kZeroFirst, "wgmma: split centers (TcPack::argmin_wg, split_wg)");
      if (k16 == 0) wg_chunk<true, Epi::kNorms>(acc, sa, sb, warp, lane, sr);
      else wg_chunk<false, Epi::kNorms>(acc, sa, sb, warp, lane, sr);
      wg_wait0();
      wg_pin(acc);
    } else if (Epi::kZeroFirst && k16 == 0) {
      tc_chunk<true, Epi::kSplitB, Epi::kNorms>(acc, sa, sb, wm, wn, lane, sr);
    } else {
      if (k16 == 0) {
#pragma unroll
        for (int mt = 0; mt < 4; ++mt)
#pragma unroll
          for (int nt = 0; nt < 8; ++nt)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[mt][nt][e] = 0.f;
      }
      tc_chunk<false, Epi::kSplitB>(acc, sa, sb, wm, wn, lane);
    }
    if (++k16 == K16) {
      k16 = 0;
      epi.tile(acc, ct * kTcBN, sr);
      if (++ct == nct) {
        ct = 0;
        epi.finish(bt, reinterpret_cast<const int *>(sr + (Epi::kNorms ? 2 : 1) * kTcBM), sr + 2 * kTcBM);
        bt += gridDim.x;
      }
    }
  }
  cp_async_wait<0>();
}

// Row r (0..7) of a thread's accumulators: the block's point
// wm 64 + 16 (r >> 1) + 8 (r & 1) + g; column (nt, e) the center
// c0 + wn 64 + 8 nt + 2 t + e.
__device__ __forceinline__ int tc_row(int r, int wm, int g) { return wm * 64 + (r >> 1) * 16 + (r & 1) * 8 + g; }
// A thread's rows of the block tile, and groups of 16 values (centers) a
// row, from mma.sync's products (8, 1) or wgmma's (4, 2: wgmma.cuh).
__host__ __device__ constexpr int tc_rows(bool wg) { return wg ? 4 : 8; }
__host__ __device__ constexpr int tc_groups(bool wg) { return wg ? 2 : 1; }

}  // namespace gk

#endif
