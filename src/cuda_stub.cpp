// cuda_stub.cpp: the CUDA interface when the package was built without nvcc.
// configure compiles this file instead of src/cuda/*.cu.
#include <cstring>
#include "cuda/gk_cuda.h"

namespace {
const char* kNotBuilt = "gpukmeans was built without CUDA";
int not_built(char* err, size_t errlen) {
  if (err && errlen) {
    std::strncpy(err, kNotBuilt, errlen - 1);
    err[errlen - 1] = '\0';
  }
  return GK_CUDA_NOT_BUILT;
}
}  // namespace

extern "C" {

void gk_cuda_get_info(gk_cuda_info* info) {
  std::memset(info, 0, sizeof(*info));
  std::strncpy(info->message, kNotBuilt, sizeof(info->message) - 1);
}

int gk_cuda_get_device(int, gk_cuda_device*, char* err, size_t errlen) { return not_built(err, errlen); }

int gk_cuda_upload(const double*, int64_t, int, const gk_cuda_options*, gk_cuda_data** out,
                   gk_cuda_upload_timing*, char* err, size_t errlen) {
  if (out) *out = nullptr;
  return not_built(err, errlen);
}

void gk_cuda_free(gk_cuda_data*) {}

int gk_cuda_lloyd(gk_cuda_data*, int, double*, const gk_cuda_options*, const gk_cuda_callbacks*, int*,
                  int*, double*, gk_cuda_fit_info*, char* err, size_t errlen) {
  return not_built(err, errlen);
}

int gk_cuda_totss(gk_cuda_data*, double*, char* err, size_t errlen) { return not_built(err, errlen); }

int gk_cuda_assign(gk_cuda_data*, int, const double*, int*, char* err, size_t errlen) {
  return not_built(err, errlen);
}

int gk_cuda_kmeanspp(gk_cuda_data*, int, const double*, int, const gk_cuda_callbacks*, int64_t*, double*,
                     char* err, size_t errlen) {
  return not_built(err, errlen);
}

int gk_cuda_kmeans_par(gk_cuda_data*, int, uint64_t, const gk_cuda_callbacks*, int64_t, int64_t*, double*,
                       int64_t* m_out, int*, double*, char* err, size_t errlen) {
  if (m_out) *m_out = 0;
  return not_built(err, errlen);
}

int gk_cuda_weighted_pp(gk_cuda_data*, const int64_t*, const double*, int64_t, int64_t, int, const double*, int,
                        const gk_cuda_callbacks*, int64_t*, double*, char* err, size_t errlen) {
  return not_built(err, errlen);
}

}  // extern "C"
