// device_info.cu: driver/runtime/device queries (never fail without a GPU).
#include "detail/common.cuh"

using namespace gk;

// The architectures of this build, from configure as one token (80_86_89_90).
#define GK_STR2(x) #x
#define GK_STR(x) GK_STR2(x)
#ifdef GK_CUDA_ARCHS
#define GK_ARCHS_TEXT GK_STR(GK_CUDA_ARCHS)
#else
#define GK_ARCHS_TEXT "?"
#endif

namespace {

// A kernel whose attributes tell whether this build has code the device can
// run (SASS of a compatible architecture, or PTX it can compile).
__global__ void k_probe(int *p) {
  if (p) *p = 0;
}

// Whether the device can run this build's kernels; why not in why.
int device_usable(int device, int major, int minor, char *why, size_t len) {
  if (major < 8) {
    set_msg(why, len,
            "compute capability %d.%d is below 8.0, the minimum of gpukmeans (it uses the tensor-core and "
            "memory instructions of Ampere and later GPUs)", major, minor);
    return 0;
  }
  cudaFuncAttributes attr;
  cudaError_t e = cudaSetDevice(device);
  if (e == cudaSuccess) e = cudaFuncGetAttributes(&attr, k_probe);
  if (e != cudaSuccess) {
    cudaGetLastError();
    char archs[64];
    set_msg(archs, sizeof archs, "%s", GK_ARCHS_TEXT);
    for (char *c = archs; *c; ++c)
      if (*c == '_') *c = ' ';
    set_msg(why, len,
            "this build has no code for compute capability %d.%d (built for architectures %s; reinstall with "
            "GPUKMEANS_CUDA_ARCHS=\"%d%d\", or =native on this machine): %s", major, minor, archs, major, minor,
            cudaGetErrorString(e));
    return 0;
  }
  return 1;
}

__global__ void k_trap() { __trap(); }

}  // namespace

extern "C" int gk_cuda_fault_test(int device, char *err, size_t errlen) {
  GK_CHECK(cudaSetDevice(device), "selecting the CUDA device");
  k_trap<<<1, 1>>>();
  GK_CHECK(cudaGetLastError(), "launching the fault test");
  GK_CHECK(cudaDeviceSynchronize(), "the fault test kernel");
  set_msg(err, errlen, "the fault test kernel did not fail");
  return GK_CUDA_ERROR;
}

extern "C" void gk_cuda_get_info(gk_cuda_info *info) {
  if (!info) return;
  memset(info, 0, sizeof(*info));
  int v = 0;
  if (cudaRuntimeGetVersion(&v) == cudaSuccess) info->runtime_version = v;
  v = 0;
  cudaError_t e = cudaDriverGetVersion(&v);
  info->driver_version = (e == cudaSuccess) ? v : 0;
  int count = 0;
  e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();  // clear
    info->device_count = 0;
    if (info->driver_version == 0)
      set_msg(info->message, sizeof(info->message), "no NVIDIA driver found (%s)", cudaGetErrorString(e));
    else if (e == cudaErrorInsufficientDriver)
      set_msg(info->message, sizeof(info->message),
              "the NVIDIA driver (CUDA %d.%d) is older than this build's runtime (CUDA %d.%d)",
              info->driver_version / 1000, (info->driver_version % 1000) / 10,
              info->runtime_version / 1000, (info->runtime_version % 1000) / 10);
    else
      set_msg(info->message, sizeof(info->message), "no usable CUDA device: %s", cudaGetErrorString(e));
    return;
  }
  info->device_count = count;
  if (count == 0) set_msg(info->message, sizeof(info->message), "no CUDA device found");
}

extern "C" int gk_cuda_get_device(int device, gk_cuda_device *out, char *err, size_t errlen) {
  if (!out) {
    set_msg(err, errlen, "gk_cuda_get_device: out is NULL");
    return GK_CUDA_INVALID;
  }
  memset(out, 0, sizeof(*out));
  int count = 0;
  GK_CHECK(cudaGetDeviceCount(&count), "counting CUDA devices");
  if (device < 0 || device >= count) {
    set_msg(err, errlen, "device %d does not exist (%d CUDA device%s)", device, count, count == 1 ? "" : "s");
    return GK_CUDA_INVALID;
  }
  cudaDeviceProp p;
  GK_CHECK(cudaGetDeviceProperties(&p, device), "querying the CUDA device");
  snprintf(out->name, sizeof(out->name), "%s", p.name);
  out->major = p.major;
  out->minor = p.minor;
  out->total_memory = (double)p.totalGlobalMem;
  out->multiprocessors = p.multiProcessorCount;
  out->usable = device_usable(device, p.major, p.minor, out->why, sizeof(out->why));
  GK_CHECK(cudaSetDevice(device), "selecting the CUDA device");
  size_t fr = 0, tot = 0;
  GK_CHECK(cudaMemGetInfo(&fr, &tot), "querying device memory");
  out->free_memory = (double)fr;
  return GK_CUDA_OK;
}
