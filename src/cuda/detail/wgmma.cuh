// detail/wgmma.cuh: Hopper's warpgroup tensor-core products (wgmma, sm_90a
// only) for the single-precision argmin on packed tiles (issue 15, problem
// E): the same 3xTF32 products as tc_chunk (tc_tiles.cuh), in the same
// order for every accumulator, issued as warpgroup instructions.
//
// Why: mma.sync on an H100 / H200 leaves the tensor cores half idle (ncu on
// E: tensor pipe 53% of peak, the warps waiting on each mma's result).
// wgmma m64n128k8 does a whole 64 x 128 product per instruction, reads the
// centers straight from shared memory (no fragment loads, no registers for
// them) and runs asynchronously, so one warpgroup keeps the pipe busy.
//
// Operands of one chunk of 16 coordinates (the block's 128 points x 128
// centers):
//   - the points (A) from registers, split into TF32 hi and lo there: the
//     packed points' fragments (tc_pack_group) are already the layout wgmma
//     reads A in (a warp's 16 rows as mma.sync m16n8k8's A fragment), so x
//     is packed as for the mma.sync kernel.  Warp w takes rows 16 w .. of
//     each half (points 0..63 and 64..127) of the tile;
//   - the centers (B) from shared memory, split and times -2 as TcPack::argmin
//     (TcPack::argmin_wg, k_tc_pack_centers; the double filter's split as
//     TcPack::split, TcPack::split_wg), in wgmma's canonical K-major
//     layout without swizzle: core matrices of 8 centers x 4 coordinates (128
//     contiguous bytes, a center's 4 values in 16 bytes); in a chunk, float
//     part 2048 + kk8 1024 + n8 64 + kc 32 + r 4 + c for center 8 n8 + r,
//     coordinate 8 kk8 + 4 kc + c, part 0 hi and 1 lo.  So a wgmma's B (128
//     centers x 8 coordinates) starts at part 8192 + kk8 4096 bytes, with
//     256 bytes between core matrices along the centers (SBO) and 128 along
//     the coordinates (LBO).
// Accumulators: the same 128 floats a thread as tc_chunk's acc[4][8][4],
// read as acc[2 h + (n8 >> 3)][n8 & 7][e]: half h, center group n8 (0..15),
// e as an m16n8 C fragment (rows g, g + 8; centers 8 n8 + 2 t, + 1).
#ifndef GPUKMEANS_DETAIL_WGMMA_CUH
#define GPUKMEANS_DETAIL_WGMMA_CUH

#include "tf32.cuh"

namespace gk {

// Where the kernels of this file are compiled with their bodies: device
// code for sm_90a.  The host launches them only where wgmma_device() says so
// (assign.cu: such a build, a device of compute capability 9.0).
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define GK_WGMMA_BODY 1
#else
#define GK_WGMMA_BODY 0
#endif

// Offset (floats) of center r of group n8, coordinate 8 kk8 + 4 kc + c, part
// 0 (hi) or 1 (lo), in a chunk of TcPack::argmin_wg or split_wg.
__host__ __device__ constexpr int wg_b_at(int part, int kk8, int n8, int kc, int r, int c) {
  return part * 2048 + kk8 * 1024 + n8 * 64 + kc * 32 + r * 4 + c;
}

// The shared-memory matrix descriptor of a B operand at byte address addr
// (shared window): start, LBO 128, SBO 256 (all in 16-byte units), no swizzle.
__device__ __forceinline__ unsigned long long wg_desc(unsigned int addr) {
  return (unsigned long long)((addr >> 4) & 0x3fff) | ((unsigned long long)(128 >> 4) << 16) |
         ((unsigned long long)(256 >> 4) << 32);
}

__device__ __forceinline__ void wg_fence() {
#if GK_WGMMA_BODY
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void wg_commit() {
#if GK_WGMMA_BODY
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void wg_wait0() {
#if GK_WGMMA_BODY
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#endif
}
// Shared memory written by cp.async (the generic proxy) made visible to
// wgmma's reads (the async proxy); each thread for its own copies, before
// the barrier that publishes them.
__device__ __forceinline__ void wg_fence_smem() {
#if GK_WGMMA_BODY
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}
// Keeps the compiler from moving reads or writes of the accumulators across
// the asynchronous products (their registers are the hardware's until the wait).
__device__ __forceinline__ void wg_pin(float (&acc)[4][8][4]) {
  float *a = &acc[0][0][0];
#pragma unroll
  for (int i = 0; i < 128; ++i) asm volatile("" : "+f"(a[i])::"memory");
}

// d (64 floats: half h's accumulators) += A B: A this warp's 16 x 8 fragment
// (TF32 bits), B 128 centers x 8 coordinates at descriptor b.
__device__ __forceinline__ void wg_mma(float *d, const uint4 &a, unsigned long long b) {
#if GK_WGMMA_BODY
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 "
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
      "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
      "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"
      "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, "
      "{%64,%65,%66,%67}, %68, 1, 1, 1;\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "l"(b));
#endif
}

// One chunk of 16 coordinates: acc (+)= the 3xTF32 products of the block's
// 128 points (sa: packed) with its 128 centers (sb: TcPack::argmin_wg), in
// tc_chunk's order (per accumulator and 8 coordinates: lo hi, hi lo, hi hi).
// First: the tile's first chunk, whose accumulators start from their
// centers' norms (Norms; norms: the tile's C quads, as TcPack::argmin's) or
// from zero (the filter's TcPack::split_wg).  The products are issued and
// committed, not waited for.
template <bool First, bool Norms>
__device__ __forceinline__ void wg_chunk(float (&acc)[4][8][4], const float *sa, const float *sb, int warp, int lane,
                                         const float *norms) {
  uint4 ah[2][2], al[2][2];  // [half][kk8]
#pragma unroll
  for (int h = 0; h < 2; ++h)
#pragma unroll
    for (int kk8 = 0; kk8 < 2; ++kk8) {
      const float4 v = *reinterpret_cast<const float4 *>(sa + (size_t)(((4 * h + warp) * 2 + kk8) * 128 + lane * 4));
      split_tf32_nonan(v.x, ah[h][kk8].x, al[h][kk8].x);
      split_tf32_nonan(v.y, ah[h][kk8].y, al[h][kk8].y);
      split_tf32_nonan(v.z, ah[h][kk8].z, al[h][kk8].z);
      split_tf32_nonan(v.w, ah[h][kk8].w, al[h][kk8].w);
    }
  if (First && !Norms) {  // (zeros, then the products added: mma.sync's C = 0, the same bits)
    float *a = &acc[0][0][0];
#pragma unroll
    for (int i = 0; i < 128; ++i) a[i] = 0.f;
  } else if (First) {
#pragma unroll
    for (int n8 = 0; n8 < 16; ++n8) {
      const float4 q = *reinterpret_cast<const float4 *>(norms + n8 * 16 + 4 * (lane & 3));
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float *c = acc[2 * h + (n8 >> 3)][n8 & 7];
        c[0] = q.x;
        c[1] = q.y;
        c[2] = q.z;
        c[3] = q.w;
      }
    }
  }
  wg_pin(acc);
  wg_fence();
  const unsigned int base = (unsigned int)__cvta_generic_to_shared(sb);
#pragma unroll
  for (int kk8 = 0; kk8 < 2; ++kk8) {
    const unsigned long long bh = wg_desc(base + 4 * wg_b_at(0, kk8, 0, 0, 0, 0));
    const unsigned long long bl = wg_desc(base + 4 * wg_b_at(1, kk8, 0, 0, 0, 0));
#pragma unroll
    for (int h = 0; h < 2; ++h) wg_mma(&acc[2 * h][0][0], al[h][kk8], bh);
#pragma unroll
    for (int h = 0; h < 2; ++h) wg_mma(&acc[2 * h][0][0], ah[h][kk8], bl);
#pragma unroll
    for (int h = 0; h < 2; ++h) wg_mma(&acc[2 * h][0][0], ah[h][kk8], bh);
  }
  wg_commit();
  wg_pin(acc);
}

}  // namespace gk

#endif
