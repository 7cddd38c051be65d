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
#include <memory>
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

// The largest |stored x| of the handles.
double largest(gk_cuda_data *const *parts, int count) {
  double M = 0;
  for (int p = 0; p < count; ++p)
    for (double v : parts[p]->maxabs) M = std::max(M, v);
  return M;
}

// The float image of the uploaded data (see FloatImage) whose candidates are
// rows of data whose largest |stored x| is M (D's own, or a team's); tc:
// rounded to TF32 for the tensor cores (init_par_tc_kernels.cuh).
FloatImage float_image(const gk_cuda_data *D, double M, bool tc) {
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
  cudaError_t e = allow_dynamic_smem(D, (const void *)k_par_filter_tc<T, KS>, smem);
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

// The m candidates' rows (didx) of resident x, as stored, into cen (m x d,
// row-major, double).
cudaError_t launch_gather(const gk_cuda_data *D, const long long *didx, double *cen, long long m, cudaStream_t s) {
  const unsigned int g = blocks_for(m * D->d, 256);
  if (D->single)
    k_gather_rows<float><<<g, 256, 0, s>>>(static_cast<const float *>(D->x), D->n, D->d, didx, m, cen);
  else
    k_gather_rows<double><<<g, 256, 0, s>>>(static_cast<const double *>(D->x), D->n, D->d, didx, m, cen);
  return cudaGetLastError();
}

// The candidates' images, then their fold into D2 and the labels of every
// row of resident x, writing level 1 of the tree (launch_fold).
cudaError_t launch_images_fold(const gk_cuda_data *D, double *cen, int m, int base, int filter, const FloatImage &im,
                               float *cf, float *cq, double *d2, int *lab, double *lv1, long long nch,
                               cudaStream_t s) {
  cudaError_t e = launch_images(D, cen, m, filter, im, cf, cq, s);
  if (e != cudaSuccess) return e;
  return D->single ? launch_fold<float>(D, cen, m, base, filter, im, cf, cq, d2, lab, lv1, nch, s)
                   : launch_fold<double>(D, cen, m, base, filter, im, cf, cq, d2, lab, lv1, nch, s);
}

// The room the candidates' images and filter_q take in a round of the given
// filter mode (launch_images).
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
  long long offset = 0;          // the handle's first row in the data (a part of a team: ParTeam below)
};

void destroy_par_state(ParState *p) { delete p; }

namespace {

// The filter mode of the options (gk_cuda_options.init_filter).
int filter_mode(int option) { return option == 1 ? 0 : option == 2 ? 2 : 1; }

// Room in P for m candidates of a round of the given filter mode.
int candidate_room(ParState &P, long long m, int d, int filter, char *err, size_t errlen) {
  if ((long long)P.cen.count < m * d) GK_CHECK(P.cen.alloc((size_t)m * d), "allocating candidates");
  const size_t nf = image_floats(filter, (int)m, d), nq = q_floats(filter, (int)m, d);
  if (filter && P.cf.count < nf) GK_CHECK(P.cf.alloc(nf), "allocating candidates");
  if (filter && P.cq.count < nq) GK_CHECK(P.cq.alloc(nq), "allocating candidates");
  return GK_CUDA_OK;
}

// The rounds' state of D's rows (D on the current device): the filter
// mode, the candidates' image for data whose largest |stored x| is M (D's
// own, or a team's), a stream, D2 = +inf, the labels 0, a counter.
int start_state(gk_cuda_data *D, ParState &P, double M, char *err, size_t errlen) {
  const long long n = D->n;
  P.mode = filter_mode(D->opts.init_filter);
  // (a block of the tensor-core filter holds 128 rows' images: beyond the
  // device's shared memory, 99 KB on sm_86 and sm_89 from d = 193 on, the
  // SIMT filter)
  if (P.mode == 1 && D->d <= kParTcMaxDim && tc_smem_bytes(D->d) > smem_limit(D)) P.mode = 2;
  P.im = float_image(D, M, P.mode == 1 && D->d <= kParTcMaxDim);
  GK_CHECK(cudaStreamCreateWithFlags(&P.stream.s, cudaStreamNonBlocking), "creating a stream");
  GK_CHECK(P.d2.alloc(n), "allocating D2");
  GK_CHECK(P.lab.alloc(n), "allocating the nearest candidates");
  GK_CHECK(P.count.alloc(1), "allocating a counter");
  k_fill<<<blocks_for(n, 256), 256, 0, P.stream.s>>>(P.d2.p, n, std::numeric_limits<double>::infinity());
  GK_CHECK(cudaGetLastError(), "initialising D2");
  GK_CHECK(cudaMemsetAsync(P.lab.p, 0, n * sizeof(int), P.stream.s), "clearing the labels");
  return GK_CUDA_OK;
}

// The rows of D whose nearest candidate is j, for j < m, into hc (host).
int candidate_counts(gk_cuda_data *D, ParState &P, int64_t m, unsigned int *hc, char *err, size_t errlen) {
  cudaStream_t s = P.stream.s;
  GK_CHECK(P.counts.alloc(m), "allocating the weights");
  GK_CHECK(cudaMemsetAsync(P.counts.p, 0, m * sizeof(unsigned int), s), "clearing the weights");
  // a few blocks per SM, each over many points (its counts are flushed once)
  const unsigned int wb = std::min<unsigned int>(blocks_for(D->n, 1024), 4u * (unsigned int)D->sms);
  k_par_weights<<<wb, 1024, 0, s>>>(P.lab.p, D->n, (int)m, P.counts.p);
  GK_CHECK(cudaGetLastError(), "k-means|| weights");
  GK_CHECK(cudaMemcpyAsync(hc, P.counts.p, m * sizeof(unsigned int), cudaMemcpyDeviceToHost, s),
           "copying the weights");
  GK_CHECK(cudaStreamSynchronize(s), "k-means|| weights");
  return GK_CUDA_OK;
}

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
  const int got = streamed_rows(D, P.added.data(), m, cen.data(), err, errlen);
  if (got != GK_CUDA_OK) return got;
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
  const int filter = base > 0 ? P.mode : 0;
  int st = candidate_room(P, m, d, filter, err, errlen);
  if (st != GK_CUDA_OK) return st;
  if (D->src) {
    if ((st = add_streamed(D, P, m, base, filter, err, errlen)) != GK_CUDA_OK) return st;
  } else {
    GK_CHECK(cudaMemcpyAsync(P.didx.p, P.added.data(), m * sizeof(long long), cudaMemcpyHostToDevice, s),
             "copying candidate rows");
    GK_CHECK(launch_gather(D, P.didx.p, P.cen.p, m, s), "k-means||: candidates");
    GK_CHECK(launch_images_fold(D, P.cen.p, (int)m, (int)base, filter, P.im, P.cf.p, P.cq.p, P.d2.p, P.lab.p, P.lv1,
                                P.nch, s),
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
    k_par_select<<<blocks_for(n, 256), 256, 0, s>>>(P.d2.p, n, P.offset, l, phi, (unsigned long long)seed,
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
  const int st = start_state(D, P, largest(&D, 1), err, errlen);
  if (st != GK_CUDA_OK) return st;
  GK_CHECK(P.tb.alloc(D->n, 1), "allocating the sum tree");
  // n == 1: the tree has no level 1; the kernels write a one-element dummy
  GK_CHECK(P.lv1top.alloc(1), "allocating the sum");
  P.lv1 = P.tb.T >= 1 ? P.tb.level1() : P.lv1top.p;
  P.nch = P.tb.T >= 1 ? P.tb.len[1] : 1;
  P.top = P.tb.T >= 1 ? P.tb.top() : P.lv1top.p;
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
  std::vector<unsigned int> hc(m);
  const int st = candidate_counts(D, *D->par, m, hc.data(), err, errlen);
  if (st != GK_CUDA_OK) return st;
  for (int64_t j = 0; j < m; ++j) weight[j] = (double)hc[j];
  return GK_CUDA_OK;
}

// ---- k-means|| over several handles together (gk_cuda_par_team_*) --------
// Each part keeps the D2 and labels of its rows on its device and runs the
// rounds' sampling and folds there; the candidates' rows go through the
// host (a few thousand rows a round) to every part; level 1 of the tree of
// D2 is written by each part's fold straight into the first part's tree
// (parts of whole level-1 nodes, on devices that reach each other), where
// the tree is built: phi, the samples and the weights are those of one
// handle over all the rows.
struct gk_cuda_par_team {
  std::vector<gk_cuda_data *> parts;
  std::vector<long long> lo;  // first row of each part, then n
  std::vector<std::unique_ptr<gk::init::ParState>> st;
  std::vector<cudaEvent_t> done;  // per part: its fold of the round ran
  gk::init::TreeBufs tb;          // on the first part's device
  long long m = 0;                // candidates so far
  std::vector<long long> added;   // the last round's rows, in index order
  ~gk_cuda_par_team() {
    for (size_t p = 0; p < parts.size(); ++p) {
      cudaSetDevice(parts[p]->device);
      if (p < done.size() && done[p]) cudaEventDestroy(done[p]);
      if (p < st.size()) st[p].reset();
      if (p == 0) {
        for (auto &b : tb.lv) b.release();
      }
    }
  }
};

namespace gk {
namespace init {
namespace {

// The rows of `rows` (global, in [lo, lo + D->n), increasing) as the part
// stores them, in double, into out (row-major), through P's buffers.
int team_rows(gk_cuda_data *D, ParState &P, long long lo, const long long *rows, long long m, double *out,
              char *err, size_t errlen) {
  if (m == 0) return GK_CUDA_OK;
  cudaStream_t s = P.stream.s;
  std::vector<long long> local(rows, rows + m);
  for (long long &r : local) r -= lo;
  if ((long long)P.didx.count < m) GK_CHECK(P.didx.alloc(m), "allocating candidate rows");
  if ((long long)P.cen.count < m * D->d) GK_CHECK(P.cen.alloc((size_t)m * D->d), "allocating candidates");
  GK_CHECK(cudaMemcpyAsync(P.didx.p, local.data(), m * sizeof(long long), cudaMemcpyHostToDevice, s),
           "copying candidate rows");
  GK_CHECK(launch_gather(D, P.didx.p, P.cen.p, m, s), "gathering the candidates");
  GK_CHECK(cudaMemcpyAsync(out, P.cen.p, (size_t)m * D->d * sizeof(double), cudaMemcpyDeviceToHost, s),
           "copying the candidates");
  GK_CHECK(cudaStreamSynchronize(s), "gathering the candidates");
  return GK_CUDA_OK;
}

// Folds the rows T.added (already counted in T.m) into every part's D2 and
// labels and the tree; *phi = the new sum of D2.
int team_add(gk_cuda_par_team &T, double *phi, char *err, size_t errlen) {
  const long long mm = (long long)T.added.size();
  if (mm == 0) return GK_CUDA_OK;
  const int count = (int)T.parts.size(), d = T.parts[0]->d;
  const long long base = T.m - mm;
  if (T.m > 0x7fffffffLL) {
    set_msg(err, errlen, "k-means||: too many candidates");
    return GK_CUDA_INVALID;
  }
  // the candidates' rows from the parts that hold them, in index order
  std::vector<double> cen((size_t)mm * d);
  size_t a = 0;
  for (int p = 0; p < count; ++p) {
    size_t b = a;
    while (b < T.added.size() && T.added[b] < T.lo[p + 1]) ++b;
    GK_CHECK(cudaSetDevice(T.parts[p]->device), "selecting the CUDA device");
    const int st = team_rows(T.parts[p], *T.st[p], T.lo[p], T.added.data() + a, (long long)(b - a),
                             cen.data() + a * d, err, errlen);
    if (st != GK_CUDA_OK) return st;
    a = b;
  }
  for (int p = 0; p < count; ++p) {
    gk_cuda_data *D = T.parts[p];
    ParState &P = *T.st[p];
    cudaStream_t s = P.stream.s;
    const int filter = base > 0 ? P.mode : 0;
    GK_CHECK(cudaSetDevice(D->device), "selecting the CUDA device");
    const int st = candidate_room(P, mm, d, filter, err, errlen);
    if (st != GK_CUDA_OK) return st;
    GK_CHECK(cudaMemcpyAsync(P.cen.p, cen.data(), cen.size() * sizeof(double), cudaMemcpyHostToDevice, s),
             "copying candidates");
    GK_CHECK(launch_images_fold(D, P.cen.p, (int)mm, (int)base, filter, P.im, P.cf.p, P.cq.p, P.d2.p, P.lab.p, P.lv1,
                                P.nch, s),
             "k-means||: distances");
    GK_CHECK(cudaEventRecord(T.done[p], s), "k-means||: ordering the devices");
  }
  ParState &R = *T.st[0];
  GK_CHECK(cudaSetDevice(T.parts[0]->device), "selecting the CUDA device");
  for (int p = 1; p < count; ++p)
    GK_CHECK(cudaStreamWaitEvent(R.stream.s, T.done[p], 0), "k-means||: ordering the devices");
  GK_CHECK(T.tb.build(R.stream.s, 1), "k-means||: potential");
  GK_CHECK(cudaMemcpyAsync(phi, T.tb.top(), sizeof(double), cudaMemcpyDeviceToHost, R.stream.s), "copying phi");
  GK_CHECK(cudaStreamSynchronize(R.stream.s), "k-means|| round");
  return GK_CUDA_OK;
}

int team_begin(gk_cuda_par_team &T, long long first, double *phi, char *err, size_t errlen) {
  const int count = (int)T.parts.size();
  const double M = largest(T.parts.data(), count);  // (every part's image covers the rows of all: the candidates)
  GK_CHECK(cudaSetDevice(T.parts[0]->device), "selecting the CUDA device");
  GK_CHECK(T.tb.alloc(T.lo[count], 1), "allocating the sum tree");  // (T >= 1: at least 2 rows)
  for (int p = 0; p < count; ++p) {
    gk_cuda_data *D = T.parts[p];
    GK_CHECK(cudaSetDevice(D->device), "selecting the CUDA device");
    T.st.emplace_back(new (std::nothrow) ParState);
    T.done.push_back(nullptr);
    if (!T.st[p]) {
      set_msg(err, errlen, "out of host memory");
      return GK_CUDA_ERROR;
    }
    ParState &P = *T.st[p];
    const int st = start_state(D, P, M, err, errlen);
    if (st != GK_CUDA_OK) return st;
    P.offset = T.lo[p];
    P.lv1 = T.tb.level1() + T.lo[p] / GK_SUM_ARITY;
    P.nch = (D->n + GK_SUM_ARITY - 1) / GK_SUM_ARITY;
    GK_CHECK(cudaEventCreateWithFlags(&T.done[p], cudaEventDisableTiming), "creating an event");
  }
  T.added.assign(1, first);
  T.m = 1;
  return team_add(T, phi, err, errlen);
}

}  // namespace
}  // namespace init
}  // namespace gk

extern "C" void gk_cuda_par_team_free(gk_cuda_par_team *T) { delete T; }

extern "C" int gk_cuda_par_team_begin(gk_cuda_data *const *parts, int count, int64_t first, gk_cuda_par_team **out,
                                      double *phi, char *err, size_t errlen) {
  if (!parts || count < 1 || !out || !phi || first < 0) {
    set_msg(err, errlen, "gk_cuda_par_team_begin: invalid arguments");
    return GK_CUDA_INVALID;
  }
  *out = nullptr;
  long long n = 0;
  if (int st = check_together(parts, count, "k-means|| on several devices", &n, err, errlen)) return st;
  if (n < 2 || first >= n) {
    set_msg(err, errlen, "gk_cuda_par_team_begin: invalid arguments");
    return GK_CUDA_INVALID;
  }
  gk_cuda_par_team *T = new (std::nothrow) gk_cuda_par_team;
  if (!T) {
    set_msg(err, errlen, "out of host memory");
    return GK_CUDA_ERROR;
  }
  T->parts.assign(parts, parts + count);
  T->lo.push_back(0);
  for (int p = 0; p < count; ++p) T->lo.push_back(T->lo.back() + parts[p]->n);
  const int st = team_begin(*T, first, phi, err, errlen);
  if (st != GK_CUDA_OK) {
    delete T;
    return st;
  }
  *out = T;
  return GK_CUDA_OK;
}

extern "C" int gk_cuda_par_team_round(gk_cuda_par_team *T, uint64_t seed, int round, double l, double phi,
                                      int64_t *added, double *phi_out, char *err, size_t errlen) {
  if (!T || round < 1 || !added || !phi_out) {
    set_msg(err, errlen, "gk_cuda_par_team_round: invalid arguments");
    return GK_CUDA_INVALID;
  }
  *phi_out = phi;
  T->added.clear();
  for (size_t p = 0; p < T->parts.size(); ++p) {  // (each part's rows in index order, parts in row order)
    GK_CHECK(cudaSetDevice(T->parts[p]->device), "selecting the CUDA device");
    int st = sample(T->parts[p], *T->st[p], seed, round, l, phi, err, errlen);
    if (st != GK_CUDA_OK) return st;
    T->added.insert(T->added.end(), T->st[p]->added.begin(), T->st[p]->added.end());
  }
  T->m += (long long)T->added.size();
  *added = (int64_t)T->added.size();
  return team_add(*T, phi_out, err, errlen);
}

extern "C" int gk_cuda_par_team_added(gk_cuda_par_team *T, int64_t *rows, char *err, size_t errlen) {
  if (!T || (!rows && !T->added.empty())) {
    set_msg(err, errlen, "gk_cuda_par_team_added: invalid arguments");
    return GK_CUDA_INVALID;
  }
  for (size_t j = 0; j < T->added.size(); ++j) rows[j] = (int64_t)T->added[j];
  return GK_CUDA_OK;
}

extern "C" int gk_cuda_par_team_weights(gk_cuda_par_team *T, int64_t m, double *weight, char *err, size_t errlen) {
  if (!T || !weight || m != T->m) {
    set_msg(err, errlen, "gk_cuda_par_team_weights: invalid arguments");
    return GK_CUDA_INVALID;
  }
  std::vector<unsigned long long> total(m, 0);
  std::vector<unsigned int> hc(m);
  for (size_t p = 0; p < T->parts.size(); ++p) {
    GK_CHECK(cudaSetDevice(T->parts[p]->device), "selecting the CUDA device");
    const int st = candidate_counts(T->parts[p], *T->st[p], m, hc.data(), err, errlen);
    if (st != GK_CUDA_OK) return st;
    for (int64_t j = 0; j < m; ++j) total[j] += hc[j];
  }
  for (int64_t j = 0; j < m; ++j) weight[j] = (double)total[j];
  return GK_CUDA_OK;
}
