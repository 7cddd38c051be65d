// quality_emu_shim.cuh: the CUDA built-ins the quality kernels use, on the host
// (tools/cuda-dev/quality_emu.cpp): threadIdx/blockIdx per std::thread,
// __syncthreads as a std::barrier, __shared__ as a static (blocks run one at a
// time), the _rn intrinsics as plain IEEE operations.
#pragma once
#include <barrier>
#include <cmath>
#include <cstdint>
#include <algorithm>
#include <limits>
struct dim3_ { unsigned x = 0, y = 0, z = 0; };
inline thread_local dim3_ threadIdx, blockIdx;
inline dim3_ blockDim, gridDim;
inline std::barrier<>* g_bar = nullptr;
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(x)
#define __shared__ static
#define __align__(x) __attribute__((aligned(x)))
#define __syncthreads() g_bar->arrive_and_wait()
struct alignas(16) double2 { double x, y; };
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline double __dsqrt_rn(double a) { return std::sqrt(a); }
using std::min;
namespace gk {
template <typename T> inline T pos_inf() { return std::numeric_limits<T>::infinity(); }
}
