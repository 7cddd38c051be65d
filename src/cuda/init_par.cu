// init_par.cu: the oversampling phase of k-means|| on the device, one piece
// at a time: gk_cuda_par_begin, _round, _added, _weights, _end (gk_cuda.h,
// "initialisation"); the loop over rounds is the driver's
// (src/init_driver.cpp), written once for both engines.
//
// The same draws and arithmetic as src/cpu_init.cpp: in double precision both
// engines find the same candidates and weights.  Streamed x (it does not fit
// on the device) comes chunk by chunk in each round; D2 and the labels stay
// on the device all the same.  x stays on the device; per
// round the host reads phi, the number of sampled rows and their indices
// (about 2k).  The weights come from each point's nearest candidate, tracked
// while D2 is updated.
#include <algorithm>
#include <cmath>
#include <limits>
#include <new>
#include <vector>

#include "detail/engine.hpp"
#include "detail/init_host.hpp"
#include "detail/init_par_kernels.cuh"
#include "detail/init_par_tc_kernels.cuh"
#include "detail/init_pp_kernels.cuh"

namespace gk {
namespace init {
namespace {

// The float image of the uploaded data (see FloatImage); tc: rounded to TF32
// for the tensor cores (init_par_tc_kernels.cuh).
FloatImage float_image(const gk_cuda_data *D, bool tc) {
  double M = 0;
  for (double v : D->maxabs) M = std::max(M, v);
  return gk::init::float_image(M, D->single != 0, D->d_mean, D->d, tc);
}

// Whether a round of m candidates runs the tensor-core filter.  Its images
// (float_image(D, true)) are valid for the SIMT filter as well, only looser.
bool tc_filter(int mode, int m, int d) { return mode == 1 && d <= kParTcMaxDim && m < kTcMaxCands; }

template <typename T, int KS>
cudaError_t launch_filter_tc(const gk_cuda_data *D, const FloatImage &im, const float *cf, const float *cq,
                             const double *cen, int m, int base, double *d2, int *lab, double *lv1, long long nch,
                             cudaStream_t s) {
  const size_t smem = tc_smem_bytes(D->d);
  cudaError_t e = cudaFuncSetAttribute(k_par_filter_tc<T, KS>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
  if (e != cudaSuccess) return e;
  k_par_filter_tc<T, KS><<<blocks_for(D->n, kTcWarps * 32), kTcWarps * 32, smem, s>>>(
      static_cast<const T *>(D->x), D->n, D->d, im, reinterpret_cast<const uint2 *>(cf), cq, cen, m, base, d2, lab,
      lv1, nch);
  return cudaGetLastError();
}

// The candidates' images and filter_q for a round of the given filter mode
// (once a round; none for exact distances).  cf, cq: room for them
// (image_floats, q_floats).
cudaError_t launch_images(const gk_cuda_data *D, const double *cen, int m, int filter, const FloatImage &im,
                          float *cf, float *cq, cudaStream_t s) {
  if (filter == 0) return cudaSuccess;
  if (tc_filter(filter, m, D->d)) {
    const int mp = tc_cands(m);
    k_par_image_tc<<<blocks_for(mp, 128), 128, 0, s>>>(cen, m, mp, D->d, im, reinterpret_cast<unsigned int *>(cf),
                                                       cq);
  } else {
    k_par_image<<<blocks_for(m, 128), 128, 0, s>>>(cen, m, D->d, im, cf, cq);
  }
  return cudaGetLastError();
}

// Folds the m candidates (cen, their images made) into D2 and the labels of
// the rows of V (all of x, or a chunk of streamed x with d2 and lab at its
// first row), writing level 1 of the potential's tree (nch nodes; 0: none).
// filter: 0 exact distances for every pair, 1 the filter on the tensor
// cores where d allows, 2 the SIMT filter.
template <typename T>
cudaError_t launch_fold(const gk_cuda_data *V, double *cen, int m, int base, int filter, const FloatImage &im,
                        float *cf, float *cq, double *d2, int *lab, double *lv1, long long nch, cudaStream_t s) {
  const T *x = static_cast<const T *>(V->x);
  const unsigned int g = blocks_for(V->n, kParThreads);
  if (filter == 0) {
    k_par_exact<T><<<g, kParThreads, 0, s>>>(x, V->n, V->d, cen, m, base, d2, lab, lv1, nch);
    return cudaGetLastError();
  }
  if (tc_filter(filter, m, V->d)) {
    const int ks = tc_dim(V->d) / 8;
    switch (ks) {  // small d: the k-steps unrolled
      case 1: return launch_filter_tc<T, 1>(V, im, cf, cq, cen, m, base, d2, lab, lv1, nch, s);
      case 2: return launch_filter_tc<T, 2>(V, im, cf, cq, cen, m, base, d2, lab, lv1, nch, s);
      case 3: return launch_filter_tc<T, 3>(V, im, cf, cq, cen, m, base, d2, lab, lv1, nch, s);
      case 4: return launch_filter_tc<T, 4>(V, im, cf, cq, cen, m, base, d2, lab, lv1, nch, s);
      default: return launch_filter_tc<T, 0>(V, im, cf, cq, cen, m, base, d2, lab, lv1, nch, s);
    }
  }
  // d <= 32: two points per thread, the images in registers
  const unsigned int g2 = blocks_for(V->n, kParThreads * 2);
#define GK_FILTER(CAP) \
  k_par_filter<T, CAP, 2, 16><<<g2, kParThreads, 0, s>>>(x, V->n, V->d, im, cf, cq, cen, m, base, d2, lab, lv1, nch)
  if (V->d <= 8) GK_FILTER(8);
  else if (V->d <= 16) GK_FILTER(16);
  else if (V->d <= 32) GK_FILTER(32);
  else k_par_filter<T, 0, 1, 32><<<g, kParThreads, 0, s>>>(x, V->n, V->d, im, cf, cq, cen, m, base, d2, lab, lv1, nch);
#undef GK_FILTER
  return cudaGetLastError();
}

// Gathers the m candidates' rows (didx) of resident x into cen, then folds
// them into D2 and the labels of every row, writing level 1 of the tree.
template <typename T>
cudaError_t launch_update(const gk_cuda_data *D, const long long *didx, double *cen, int m, int base, int filter,
                          const FloatImage &im, float *cf, float *cq, double *d2, int *lab, double *lv1,
                          long long nch, cudaStream_t s) {
  k_gather_rows<T><<<blocks_for((long long)m * D->d, 256), 256, 0, s>>>(static_cast<const T *>(D->x), D->n, D->d,
                                                                        didx, m, cen);
  cudaError_t e = launch_images(D, cen, m, filter, im, cf, cq, s);
  return e != cudaSuccess ? e : launch_fold<T>(D, cen, m, base, filter, im, cf, cq, d2, lab, lv1, nch, s);
}

// The room the candidates' images and filter_q take in a round of the given
// filter mode (launch_update).
size_t image_floats(int mode, int m, int d) {
  return tc_filter(mode, m, d) ? (size_t)tc_cands(m) * tc_dim(d) : (size_t)m * d;
}
size_t q_floats(int mode, int m, int d) { return tc_filter(mode, m, d) ? (size_t)tc_cands(m) : (size_t)m; }

}  // namespace

// The state of the rounds, kept in the handle between calls.
struct ParState {
  int mode = 1;  // 0 exact distances for every pair, 1 filter (tensor cores), 2 SIMT filter
  FloatImage im;
  Stream stream;
  DevBuf<double> d2, cen, lv1top;
  DevBuf<int> lab;
  DevBuf<float> cf, cq;
  DevBuf<long long> dsel, didx;
  DevBuf<unsigned long long> count;
  DevBuf<unsigned int> counts;
  TreeBufs tb;
  long long sel_cap = 0;
  long long m = 0;              // candidates so far
  std::vector<long long> added;  // the last round's rows, in index order
  double *lv1 = nullptr;         // level 1 of the tree of D2 (or a one-element dummy)
  long long nch = 1;
  const double *top = nullptr;   // the sum of D2
};

void destroy_par_state(ParState *p) { delete p; }

namespace {

// The filter mode of the options (gk_cuda_options.init_filter).
int filter_mode(int option) { return option == 1 ? 0 : option == 2 ? 2 : 1; }

// Level 1 of the tree of D2 from its leaves: node c is the sequential sum
// of leaves [32 c, 32 c + 32), zeros past n (warp_level1's arithmetic).
__global__ void k_level1(const double *__restrict__ d2, long long n, double *__restrict__ lv1, long long nch) {
  const long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= nch) return;
  double s = 0.0;
  for (int p = 0; p < 32; ++p) {
    const long long i = 32 * c + p;
    s = __dadd_rn(s, i < n ? d2[i] : 0.0);
  }
  lv1[c] = s;
}

// add_candidates for streamed x: the candidates' rows from host memory, each
// chunk's rows folded in (on D->stream, as the chunks arrive),
// then level 1 of the tree from D2 (chunks need not hold whole nodes).
int add_streamed(gk_cuda_data *D, ParState &P, long long m, long long base, int filter, char *err,
                 size_t errlen) {
  const int d = D->d;
  GK_CHECK(cudaStreamSynchronize(P.stream.s), "k-means|| round");  // (D2 and the labels set there)
  std::vector<double> cen((size_t)m * d);
  streamed_rows(D, P.added.data(), m, cen.data());
  GK_CHECK(cudaMemcpyAsync(P.cen.p, cen.data(), cen.size() * sizeof(double), cudaMemcpyHostToDevice, D->stream),
           "copying candidates");
  GK_CHECK(launch_images(D, P.cen.p, (int)m, filter, P.im, P.cf.p, P.cq.p, D->stream), "k-means||: candidates");
  int st = for_each_chunk(D, P.lab.p, [&](const gk_cuda_data &V) -> cudaError_t {
    const long long a = V.labels - P.lab.p;  // the chunk's first row
    return D->single ? launch_fold<float>(&V, P.cen.p, (int)m, (int)base, filter, P.im, P.cf.p, P.cq.p, P.d2.p + a,
                                          P.lab.p + a, P.lv1, 0, D->stream)
                     : launch_fold<double>(&V, P.cen.p, (int)m, (int)base, filter, P.im, P.cf.p, P.cq.p, P.d2.p + a,
                                           P.lab.p + a, P.lv1, 0, D->stream);
  }, err, errlen);
  if (st != GK_CUDA_OK) return st;
  if (P.tb.T >= 1) {
    k_level1<<<blocks_for(P.nch, 256), 256, 0, D->stream>>>(P.d2.p, D->n, P.lv1, P.nch);
    GK_CHECK(cudaGetLastError(), "k-means||: potential");
  } else {  // one row: its D2 is the total
    GK_CHECK(cudaMemcpyAsync(P.lv1, P.d2.p, sizeof(double), cudaMemcpyDeviceToDevice, D->stream), "k-means||: potential");
  }
  GK_CHECK(cudaStreamSynchronize(D->stream), "k-means|| round");  // (the tree is built on the rounds' stream)
  return GK_CUDA_OK;
}

// Folds the rows P.added (already counted in P.m) into D2, the labels and
// the tree; *phi = the new sum of D2.
int add_candidates(gk_cuda_data *D, ParState &P, double *phi, char *err, size_t errlen) {
  const long long m = (long long)P.added.size();
  const int d = D->d;
  cudaStream_t s = P.stream.s;
  if (m == 0) return GK_CUDA_OK;
  const long long base = P.m - m;
  if (P.m > 0x7fffffffLL) {
    set_msg(err, errlen, "k-means||: too many candidates");
    return GK_CUDA_INVALID;
  }
  if ((long long)P.didx.count < m) GK_CHECK(P.didx.alloc(m), "allocating candidate rows");
  if ((long long)P.cen.count < m * d) GK_CHECK(P.cen.alloc((size_t)m * d), "allocating candidates");
  const int filter = base > 0 ? P.mode : 0;
  const size_t nf = image_floats(filter, (int)m, d), nq = q_floats(filter, (int)m, d);
  if (filter && P.cf.count < nf) GK_CHECK(P.cf.alloc(nf), "allocating candidates");
  if (filter && P.cq.count < nq) GK_CHECK(P.cq.alloc(nq), "allocating candidates");
  if (D->src) {
    const int st = add_streamed(D, P, m, base, filter, err, errlen);
    if (st != GK_CUDA_OK) return st;
  } else {
    GK_CHECK(cudaMemcpyAsync(P.didx.p, P.added.data(), m * sizeof(long long), cudaMemcpyHostToDevice, s),
             "copying candidate rows");
    if (D->single)
      GK_CHECK((launch_update<float>(D, P.didx.p, P.cen.p, (int)m, (int)base, filter, P.im, P.cf.p, P.cq.p, P.d2.p,
                                     P.lab.p, P.lv1, P.nch, s)),
               "k-means||: distances");
    else
      GK_CHECK((launch_update<double>(D, P.didx.p, P.cen.p, (int)m, (int)base, filter, P.im, P.cf.p, P.cq.p, P.d2.p,
                                      P.lab.p, P.lv1, P.nch, s)),
               "k-means||: distances");
  }
  GK_CHECK(P.tb.build(s, 1), "k-means||: potential");
  GK_CHECK(cudaMemcpyAsync(phi, P.top, sizeof(double), cudaMemcpyDeviceToHost, s), "copying phi");
  GK_CHECK(cudaStreamSynchronize(s), "k-means|| round");
  return GK_CUDA_OK;
}

// Rows i with D2_i > 0 and u(seed, r, i) < l D2_i / phi, in index order, into
// P.added (sampled again into a larger buffer when more than it holds: the
// same draws).
int sample(gk_cuda_data *D, ParState &P, uint64_t seed, int r, double l, double phi, char *err, size_t errlen) {
  const long long n = D->n;
  cudaStream_t s = P.stream.s;
  if (P.sel_cap == 0) {  // room for twice the expected sample (or as the options say)
    P.sel_cap = D->opts.sample_room > 0 ? (long long)D->opts.sample_room
                                        : std::min<long long>(n, (long long)(2.0 * l) + 1024);
    GK_CHECK(P.dsel.alloc(P.sel_cap), "allocating the sample");
  }
  for (;;) {
    GK_CHECK(cudaMemsetAsync(P.count.p, 0, sizeof(unsigned long long), s), "clearing a counter");
    k_par_select<<<blocks_for(n, 256), 256, 0, s>>>(P.d2.p, n, l, phi, (unsigned long long)seed,
                                                    (unsigned long long)r, P.count.p, P.dsel.p, P.sel_cap);
    GK_CHECK(cudaGetLastError(), "k-means|| sampling");
    unsigned long long c = 0;
    GK_CHECK(cudaMemcpyAsync(&c, P.count.p, sizeof c, cudaMemcpyDeviceToHost, s), "copying a count");
    GK_CHECK(cudaStreamSynchronize(s), "k-means|| sampling");
    if ((long long)c > P.sel_cap) {
      P.sel_cap = (long long)c;
      GK_CHECK(P.dsel.alloc(P.sel_cap), "allocating the sample");
      continue;
    }
    P.added.resize(c);
    if (c) {
      GK_CHECK(cudaMemcpyAsync(P.added.data(), P.dsel.p, c * sizeof(long long), cudaMemcpyDeviceToHost, s),
               "copying the sample");
      GK_CHECK(cudaStreamSynchronize(s), "copying the sample");
    }
    std::sort(P.added.begin(), P.added.end());  // index order, as the CPU engine adds them
    return GK_CUDA_OK;
  }
}

int begin(gk_cuda_data *D, ParState &P, long long first, double *phi, char *err, size_t errlen) {
  const long long n = D->n;
  const int d = D->d;
  P.mode = filter_mode(D->opts.init_filter);
  P.im = float_image(D, P.mode == 1 && d <= kParTcMaxDim);
  GK_CHECK(cudaStreamCreateWithFlags(&P.stream.s, cudaStreamNonBlocking), "creating a stream");
  GK_CHECK(P.d2.alloc(n), "allocating D2");
  GK_CHECK(P.lab.alloc(n), "allocating the nearest candidates");
  GK_CHECK(P.tb.alloc(n, 1), "allocating the sum tree");
  GK_CHECK(P.count.alloc(1), "allocating a counter");
  // n == 1: the tree has no level 1; the kernels write a one-element dummy
  GK_CHECK(P.lv1top.alloc(1), "allocating the sum");
  P.lv1 = P.tb.T >= 1 ? P.tb.level1() : P.lv1top.p;
  P.nch = P.tb.T >= 1 ? P.tb.len[1] : 1;
  P.top = P.tb.T >= 1 ? P.tb.top() : P.lv1top.p;
  cudaStream_t s = P.stream.s;
  k_fill<<<blocks_for(n, 256), 256, 0, s>>>(P.d2.p, n, std::numeric_limits<double>::infinity());
  GK_CHECK(cudaGetLastError(), "initialising D2");
  GK_CHECK(cudaMemsetAsync(P.lab.p, 0, n * sizeof(int), s), "clearing the labels");
  P.added.assign(1, first);
  P.m = 1;
  return add_candidates(D, P, phi, err, errlen);
}

}  // namespace
}  // namespace init
}  // namespace gk

using namespace gk;
using namespace gk::init;

extern "C" void gk_cuda_par_end(gk_cuda_data *D) {
  if (!D || !D->par) return;
  cudaSetDevice(D->device);
  destroy_par_state(D->par);
  D->par = nullptr;
}

extern "C" int gk_cuda_par_begin(gk_cuda_data *D, int64_t first, double *phi, char *err, size_t errlen) {
  if (!D || (!D->x && !D->src) || !phi || first < 0 || first >= D->n) {
    set_msg(err, errlen, "gk_cuda_par_begin: invalid arguments");
    return GK_CUDA_INVALID;
  }
  gk_cuda_par_end(D);
  GK_CHECK(cudaSetDevice(D->device), "selecting the CUDA device");
  D->par = new (std::nothrow) ParState;
  if (!D->par) {
    set_msg(err, errlen, "out of host memory");
    return GK_CUDA_ERROR;
  }
  const int st = begin(D, *D->par, first, phi, err, errlen);
  if (st != GK_CUDA_OK) gk_cuda_par_end(D);
  return st;
}

extern "C" int gk_cuda_par_round(gk_cuda_data *D, uint64_t seed, int round, double l, double phi, int64_t *added,
                                 double *phi_out, char *err, size_t errlen) {
  if (!D || !D->par || round < 1 || !added || !phi_out) {
    set_msg(err, errlen, "gk_cuda_par_round: invalid arguments (no k-means|| in progress?)");
    return GK_CUDA_INVALID;
  }
  GK_CHECK(cudaSetDevice(D->device), "selecting the CUDA device");
  ParState &P = *D->par;
  *phi_out = phi;
  int st = sample(D, P, seed, round, l, phi, err, errlen);
  if (st != GK_CUDA_OK) return st;
  P.m += (long long)P.added.size();
  *added = (int64_t)P.added.size();
  return add_candidates(D, P, phi_out, err, errlen);
}

extern "C" int gk_cuda_par_added(gk_cuda_data *D, int64_t *rows, char *err, size_t errlen) {
  if (!D || !D->par || (!rows && !D->par->added.empty())) {
    set_msg(err, errlen, "gk_cuda_par_added: invalid arguments");
    return GK_CUDA_INVALID;
  }
  const std::vector<long long> &a = D->par->added;
  for (size_t j = 0; j < a.size(); ++j) rows[j] = (int64_t)a[j];
  return GK_CUDA_OK;
}

extern "C" int gk_cuda_par_weights(gk_cuda_data *D, int64_t m, double *weight, char *err, size_t errlen) {
  if (!D || !D->par || !weight || m != D->par->m) {
    set_msg(err, errlen, "gk_cuda_par_weights: invalid arguments");
    return GK_CUDA_INVALID;
  }
  GK_CHECK(cudaSetDevice(D->device), "selecting the CUDA device");
  ParState &P = *D->par;
  cudaStream_t s = P.stream.s;
  GK_CHECK(P.counts.alloc(m), "allocating the weights");
  GK_CHECK(cudaMemsetAsync(P.counts.p, 0, m * sizeof(unsigned int), s), "clearing the weights");
  // a few blocks per SM, each over many points (its counts are flushed once)
  const unsigned int wb = std::min<unsigned int>(blocks_for(D->n, 1024), 4u * (unsigned int)D->sms);
  k_par_weights<<<wb, 1024, 0, s>>>(P.lab.p, D->n, (int)m, P.counts.p);
  GK_CHECK(cudaGetLastError(), "k-means|| weights");
  std::vector<unsigned int> hc(m);
  GK_CHECK(cudaMemcpyAsync(hc.data(), P.counts.p, m * sizeof(unsigned int), cudaMemcpyDeviceToHost, s),
           "copying the weights");
  GK_CHECK(cudaStreamSynchronize(s), "k-means|| weights");
  for (int64_t j = 0; j < m; ++j) weight[j] = (double)hc[j];
  return GK_CUDA_OK;
}
