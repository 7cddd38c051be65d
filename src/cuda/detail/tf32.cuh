// detail/tf32.cuh: TF32 tensor-core helpers shared by the assignment kernels
// (assign_kernels.cuh) and the k-means|| filter (init_par_tc_kernels.cuh).
//
// Fragments of mma.sync m16n8k8 (row.col, f32 accumulators), lane = 4g + t:
//   A (16 x 8):  a0 = A[g][t],  a1 = A[g+8][t],  a2 = A[g][t+4],  a3 = A[g+8][t+4]
//   B (8 x 8):   b0 = B[t][g],  b1 = B[t+4][g]
//   C (16 x 8):  c0 = C[g][2t], c1 = C[g][2t+1], c2 = C[g+8][2t], c3 = C[g+8][2t+1]
#ifndef GPUKMEANS_DETAIL_TF32_CUH
#define GPUKMEANS_DETAIL_TF32_CUH

namespace gk {

// a rounded to TF32 (10 explicit mantissa bits; to nearest, ties away):
// relative error <= 2^-11; the low 13 bits of the result are zero.
__device__ __forceinline__ unsigned int tf32_rna(float a) {
  unsigned int r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(a));
  return r;
}

// a = hi + lo exactly, hi = tf32(a) (3xTF32 products).
__device__ __forceinline__ void split_tf32(float a, unsigned int &hi, unsigned int &lo) {
  hi = tf32_rna(a);
  lo = __float_as_uint(a - __uint_as_float(hi));  // exact; the mma reads its top 19 bits
}

// split_tf32 in 3 instructions instead of 5, for operands whose NaNs do not
// matter: cvt.rna is the magnitude's bits plus half a TF32 ulp (0x1000),
// cut to 10 mantissa bits, which gives the same bits for every value but a
// NaN (inf and overflow to inf included); the compiler's cvt adds a test
// for NaN (a NaN with low payload bits would turn into +-inf or -0 here).
// The packed tiles (tc_tiles.cuh) use it: x (and its float image) is
// finite, and a center with a NaN coordinate has a NaN norm, so its every
// value (|c|^2 - 2 x.c, or the filter's w) is NaN whatever its products.
__device__ __forceinline__ void split_tf32_nonan(float a, unsigned int &hi, unsigned int &lo) {
  hi = (__float_as_uint(a) + 0x1000u) & 0xffffe000u;
  lo = __float_as_uint(a - __uint_as_float(hi));
}

// c += A B on the tensor cores.
__device__ __forceinline__ void mma_tf32(float (&c)[4], const unsigned int (&a)[4], unsigned int b0,
                                         unsigned int b1) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// c = A B (no accumulator to clear first).
__device__ __forceinline__ void mma_tf32_first(float (&c)[4], const unsigned int (&a)[4], unsigned int b0,
                                               unsigned int b1) {
  const float z = 0.f;
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%10,%10,%10,%10};\n"
      : "=f"(c[0]), "=f"(c[1]), "=f"(c[2]), "=f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "f"(z));
}

}  // namespace gk

#endif
