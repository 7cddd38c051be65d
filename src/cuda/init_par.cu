// init_par.cu: the oversampling phase of k-means|| on the device,
// gk_cuda_kmeans_par (gk_cuda.h, "initialisation").
//
// The same rounds, draws and arithmetic as src/cpu_init.cpp: in double
// precision both engines find the same candidates and weights.  x stays on
// the device; per round the host reads phi, the number of sampled rows and
// their indices (about 2k).  The weights come from each point's nearest
// candidate, tracked while D2 is updated.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "detail/engine.hpp"
#include "detail/init_host.hpp"
#include "detail/init_par_kernels.cuh"
#include "detail/init_par_tc_kernels.cuh"
#include "detail/init_pp_kernels.cuh"

namespace gk {

int g_init_filter = 1;  // dev knob: 0 exact distances for every pair, 1 filter (tensor cores), 2 SIMT filter

namespace init {
namespace {

// The float image of the uploaded data (see FloatImage); tc: rounded to TF32
// for the tensor cores (init_par_tc_kernels.cuh).
FloatImage float_image(const gk_cuda_data *D, bool tc) {
  FloatImage im;
  double M = 0;
  for (double v : D->maxabs) M = std::max(M, v);
  // double: x - column mean, |x - mean| <= 2 max|x|; single: x is stored shifted
  if (!D->single) M *= 2.0;
  int e = 0;
  if (M > 0 && std::isfinite(M)) (void)std::frexp(M, &e);  // M < 2^e
  im.shift = D->single ? nullptr : D->d_mean;
  im.scale = std::ldexp(1.0, -e);
  const double u = std::ldexp(1.0, -24);
  const double conv = D->single ? 0.0 : u + std::ldexp(1.0, -52);  // double -> float
  im.uprime = (float)(1.01 * (conv + (tc ? std::ldexp(1.0, -11) : 0.0)));
  im.bmax = (float)(std::sqrt((double)D->d) * 1.001);
  im.kappa = (float)((tc ? 4.0 : 1.0) * 2.0 * (2.0 * D->d + 8.0) * u);
  im.gamma = 1.01 * (D->d + 3.0) * std::ldexp(1.0, -53);
  return im;
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

// Gathers the m candidates' rows (didx) into cen, then folds them into D2
// and the labels, writing level 1 of the potential's tree.  filter: 0 exact
// distances for every pair, 1 the filter on the tensor cores where d allows,
// 2 the SIMT filter.  cf, cq: room for the candidates' images
// (image_floats, q_floats).
template <typename T>
cudaError_t launch_update(const gk_cuda_data *D, const long long *didx, double *cen, int m, int base, int filter,
                          const FloatImage &im, float *cf, float *cq, double *d2, int *lab, double *lv1,
                          long long nch, cudaStream_t s) {
  const T *x = static_cast<const T *>(D->x);
  k_gather_rows<T><<<blocks_for((long long)m * D->d, 256), 256, 0, s>>>(x, D->n, D->d, didx, m, cen);
  const unsigned int g = blocks_for(D->n, kParThreads);
  if (filter == 0) {
    k_par_exact<T><<<g, kParThreads, 0, s>>>(x, D->n, D->d, cen, m, base, d2, lab, lv1, nch);
    return cudaGetLastError();
  }
  if (tc_filter(filter, m, D->d)) {
    const int mp = tc_cands(m);
    k_par_image_tc<<<blocks_for(mp, 128), 128, 0, s>>>(cen, m, mp, D->d, im, reinterpret_cast<unsigned int *>(cf),
                                                       cq);
    const int ks = tc_dim(D->d) / 8;
    switch (ks) {  // small d: the k-steps unrolled
      case 1: return launch_filter_tc<T, 1>(D, im, cf, cq, cen, m, base, d2, lab, lv1, nch, s);
      case 2: return launch_filter_tc<T, 2>(D, im, cf, cq, cen, m, base, d2, lab, lv1, nch, s);
      case 3: return launch_filter_tc<T, 3>(D, im, cf, cq, cen, m, base, d2, lab, lv1, nch, s);
      case 4: return launch_filter_tc<T, 4>(D, im, cf, cq, cen, m, base, d2, lab, lv1, nch, s);
      default: return launch_filter_tc<T, 0>(D, im, cf, cq, cen, m, base, d2, lab, lv1, nch, s);
    }
  }
  k_par_image<<<blocks_for(m, 128), 128, 0, s>>>(cen, m, D->d, im, cf, cq);
  // d <= 32: two points per thread, the images in registers
  const unsigned int g2 = blocks_for(D->n, kParThreads * 2);
#define GK_FILTER(CAP) \
  k_par_filter<T, CAP, 2, 16><<<g2, kParThreads, 0, s>>>(x, D->n, D->d, im, cf, cq, cen, m, base, d2, lab, lv1, nch)
  if (D->d <= 8) GK_FILTER(8);
  else if (D->d <= 16) GK_FILTER(16);
  else if (D->d <= 32) GK_FILTER(32);
  else k_par_filter<T, 0, 1, 32><<<g, kParThreads, 0, s>>>(x, D->n, D->d, im, cf, cq, cen, m, base, d2, lab, lv1, nch);
#undef GK_FILTER
  return cudaGetLastError();
}

// The room the candidates' images and filter_q take in a round of the given
// filter mode (launch_update).
size_t image_floats(int mode, int m, int d) {
  return tc_filter(mode, m, d) ? (size_t)tc_cands(m) * tc_dim(d) : (size_t)m * d;
}
size_t q_floats(int mode, int m, int d) { return tc_filter(mode, m, d) ? (size_t)tc_cands(m) : (size_t)m; }

}  // namespace
}  // namespace init
}  // namespace gk

using namespace gk;
using namespace gk::init;

extern "C" void gk_cuda_dev_init_knobs(int filter) { gk::g_init_filter = filter; }

extern "C" int gk_cuda_kmeans_par(gk_cuda_data *D, int k, uint64_t seed, const gk_cuda_callbacks *cb,
                                  int64_t cap, int64_t *cand_out, double *weight_out, int64_t *m_out,
                                  int *rounds_out, double *ms, char *err, size_t errlen) {
  int st = check_data(D, k, err, errlen);
  if (st != GK_CUDA_OK) return st;
  if (!m_out) {
    set_msg(err, errlen, "k-means||: m_out must not be NULL");
    return GK_CUDA_INVALID;
  }
  *m_out = 0;
  if (ms) *ms = 0.0;
  const long long n = D->n;
  const int d = D->d;
  const double l = 2.0 * k;  // gk::kmeans_par_oversampling
  const int mode = g_init_filter;
  const FloatImage im = float_image(D, mode == 1 && d <= kParTcMaxDim);

  GK_CHECK(cudaSetDevice(D->device), "selecting the CUDA device");
  Stream stream;
  GK_CHECK(cudaStreamCreateWithFlags(&stream.s, cudaStreamNonBlocking), "creating a stream");
  cudaStream_t s = stream.s;
  Events ev;
  GK_CHECK(cudaEventCreate(&ev.a), "creating an event");
  GK_CHECK(cudaEventCreate(&ev.b), "creating an event");

  DevBuf<double> d2, cen, lv1top;
  DevBuf<int> lab;
  DevBuf<float> cf, cq;
  DevBuf<long long> dsel, didx;
  DevBuf<unsigned long long> count;
  DevBuf<unsigned int> counts;
  TreeBufs tb;
  GK_CHECK(d2.alloc(n), "allocating D2");
  GK_CHECK(lab.alloc(n), "allocating the nearest candidates");
  GK_CHECK(tb.alloc(n, 1), "allocating the sum tree");
  GK_CHECK(count.alloc(1), "allocating a counter");
  long long sel_cap = std::min<long long>(n, (long long)(2.0 * l) + 1024);
  GK_CHECK(dsel.alloc(sel_cap), "allocating the sample");
  // n == 1: the tree has no level 1; the kernels write a one-element dummy
  GK_CHECK(lv1top.alloc(1), "allocating the sum");
  double *lv1 = tb.T >= 1 ? tb.level1() : lv1top.p;
  const long long nch = tb.T >= 1 ? tb.len[1] : 1;
  const double *top = tb.T >= 1 ? tb.top() : lv1top.p;
  GK_CHECK(cudaEventRecord(ev.a, s), "recording an event");

  std::vector<long long> cand;
  cand.push_back(uniform_index(counter_uniform(seed, 0, 0), n));
  double phi = 0.0;

  // Adds rows (host, in order) to the candidates: D2, labels, phi.
  auto add = [&](const long long *rows, long long m) -> int {
    if (m == 0) return GK_CUDA_OK;
    const long long base = (long long)cand.size() - m;  // rows are already in cand
    if (base + m > 0x7fffffffLL) {
      set_msg(err, errlen, "k-means||: too many candidates");
      return GK_CUDA_INVALID;
    }
    if ((long long)didx.count < m) GK_CHECK(didx.alloc(m), "allocating candidate rows");
    if ((long long)cen.count < m * d) GK_CHECK(cen.alloc((size_t)m * d), "allocating candidates");
    const int filter = base > 0 ? mode : 0;
    const size_t nf = image_floats(filter, (int)m, d), nq = q_floats(filter, (int)m, d);
    if (filter && cf.count < nf) GK_CHECK(cf.alloc(nf), "allocating candidates");
    if (filter && cq.count < nq) GK_CHECK(cq.alloc(nq), "allocating candidates");
    GK_CHECK(cudaMemcpyAsync(didx.p, rows, m * sizeof(long long), cudaMemcpyHostToDevice, s),
             "copying candidate rows");
    if (D->single)
      GK_CHECK((launch_update<float>(D, didx.p, cen.p, (int)m, (int)base, filter, im, cf.p, cq.p, d2.p, lab.p, lv1,
                                     nch, s)),
               "k-means||: distances");
    else
      GK_CHECK((launch_update<double>(D, didx.p, cen.p, (int)m, (int)base, filter, im, cf.p, cq.p, d2.p, lab.p, lv1,
                                      nch, s)),
               "k-means||: distances");
    GK_CHECK(tb.build(s, 1), "k-means||: potential");
    GK_CHECK(cudaMemcpyAsync(&phi, top, sizeof(double), cudaMemcpyDeviceToHost, s), "copying phi");
    GK_CHECK(cudaStreamSynchronize(s), "k-means|| round");
    return GK_CUDA_OK;
  };

  k_fill<<<blocks_for(n, 256), 256, 0, s>>>(d2.p, n, std::numeric_limits<double>::infinity());
  GK_CHECK(cudaMemsetAsync(lab.p, 0, n * sizeof(int), s), "clearing the labels");
  st = add(cand.data(), 1);
  if (st != GK_CUDA_OK) return st;

  int rounds = 0;
  std::vector<long long> sel;
  auto round = [&](int r) -> int {
    for (;;) {
      GK_CHECK(cudaMemsetAsync(count.p, 0, sizeof(unsigned long long), s), "clearing a counter");
      k_par_select<<<blocks_for(n, 256), 256, 0, s>>>(d2.p, n, l, phi, (unsigned long long)seed,
                                                      (unsigned long long)r, count.p, dsel.p, sel_cap);
      GK_CHECK(cudaGetLastError(), "k-means|| sampling");
      unsigned long long c = 0;
      GK_CHECK(cudaMemcpyAsync(&c, count.p, sizeof c, cudaMemcpyDeviceToHost, s), "copying a count");
      GK_CHECK(cudaStreamSynchronize(s), "k-means|| sampling");
      if ((long long)c > sel_cap) {  // rare: sample again into a larger buffer (same draws)
        sel_cap = (long long)c;
        GK_CHECK(dsel.alloc(sel_cap), "allocating the sample");
        continue;
      }
      sel.resize(c);
      if (c) {
        GK_CHECK(cudaMemcpyAsync(sel.data(), dsel.p, c * sizeof(long long), cudaMemcpyDeviceToHost, s),
                 "copying the sample");
        GK_CHECK(cudaStreamSynchronize(s), "copying the sample");
      }
      break;
    }
    std::sort(sel.begin(), sel.end());  // index order, as the CPU engine adds them
    cand.insert(cand.end(), sel.begin(), sel.end());
    rounds = r;
    return add(sel.data(), (long long)sel.size());
  };

  const int max_rounds = GK_PAR_ROUNDS + GK_PAR_MAX_EXTRA;
  std::vector<unsigned int> hc;
  for (;;) {
    while (phi > 0 && rounds < max_rounds && (rounds < GK_PAR_ROUNDS || (long long)cand.size() < k)) {
      if (cb && cb->interrupt && cb->interrupt(cb->ctx)) {
        set_msg(err, errlen, "interrupted");
        return GK_CUDA_INTERRUPTED;
      }
      st = round(rounds + 1);
      if (st != GK_CUDA_OK) return st;
    }
    // weights: points whose nearest candidate (the first of equals) is j
    const long long m = (long long)cand.size();
    GK_CHECK(counts.alloc(m), "allocating the weights");
    GK_CHECK(cudaMemsetAsync(counts.p, 0, m * sizeof(unsigned int), s), "clearing the weights");
    // a few blocks per SM, each over many points (its counts are flushed once)
    const unsigned int wb = std::min<unsigned int>(blocks_for(n, 1024), 4u * (unsigned int)D->sms);
    k_par_weights<<<wb, 1024, 0, s>>>(lab.p, n, (int)m, counts.p);
    GK_CHECK(cudaGetLastError(), "k-means|| weights");
    hc.resize(m);
    GK_CHECK(cudaMemcpyAsync(hc.data(), counts.p, m * sizeof(unsigned int), cudaMemcpyDeviceToHost, s),
             "copying the weights");
    GK_CHECK(cudaStreamSynchronize(s), "k-means|| weights");
    long long pos = 0;
    for (unsigned int c : hc) pos += c > 0;
    if (pos >= k || !(phi > 0) || rounds >= max_rounds) break;
    st = round(rounds + 1);
    if (st != GK_CUDA_OK) return st;
  }
  GK_CHECK(cudaEventRecord(ev.b, s), "recording an event");
  GK_CHECK(cudaEventSynchronize(ev.b), "k-means||");
  const long long m = (long long)cand.size();
  *m_out = m;
  if (rounds_out) *rounds_out = rounds;
  if (m <= cap) {
    for (long long j = 0; j < m; ++j) {
      if (cand_out) cand_out[j] = (int64_t)cand[j];
      if (weight_out) weight_out[j] = (double)hc[j];
    }
  }
  if (ms) {
    float f = 0;
    GK_CHECK(cudaEventElapsedTime(&f, ev.a, ev.b), "timing");
    *ms = f;
  }
  return GK_CUDA_OK;
}
