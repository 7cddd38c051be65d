// device_info.cu: driver/runtime/device queries (never fail without a GPU).
#include "detail/common.cuh"

using namespace gk;

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
  GK_CHECK(cudaSetDevice(device), "selecting the CUDA device");
  size_t fr = 0, tot = 0;
  GK_CHECK(cudaMemGetInfo(&fr, &tot), "querying device memory");
  out->free_memory = (double)fr;
  return GK_CUDA_OK;
}
