// init_pp.cu: greedy k-means++ on the device, gk_cuda_greedy: over all rows
// (k-means++) or over the weighted candidates of k-means|| (its reduction)
// (gk_cuda.h, "initialisation").
//
// The same algorithm, in the same arithmetic order, as src/cpu_init.cpp (see
// src/parity.h): in double precision both engines choose the same rows.
// One pass over x per step (detail/init_pp_kernels.cuh says how); D2, the sum
// trees, the candidates' potentials and the D^2 sampling stay on the device.
// The host only enqueues kernels; it synchronises every 32 steps to poll for
// interrupts.
#include <algorithm>
#include <limits>
#include <vector>

#include "detail/engine.hpp"
#include "detail/init_host.hpp"
#include "detail/init_pp_kernels.cuh"

namespace gk {
namespace init {

namespace {

constexpr int kTailThreads = 256;  // at least; the sampling needs 32 L

__global__ void k_pp_start(long long *idx, unsigned char *chosen, long long first) {
  idx[0] = first;
  chosen[first] = 1;
}

// The pass with the smallest accumulator count that holds L + 1 slots.
template <typename T>
void launch_pass(const T *x, long long n, int d, const double *w, double *d2, const double *pend,
                 const double *cc, int L, double *lv1, long long nch, cudaStream_t s) {
  const unsigned int g = blocks_for(n, kPassThreads * kPassPoints);
#define GK_PASS(NB) k_pp_pass<T, NB><<<g, kPassThreads, 0, s>>>(x, n, d, w, d2, pend, cc, L, lv1, nch)
  if (L + 1 <= 2) GK_PASS(2);
  else if (L + 1 <= 4) GK_PASS(4);
  else if (L + 1 <= 8) GK_PASS(8);
  else if (L + 1 <= 12) GK_PASS(12);
  else if (L + 1 <= 16) GK_PASS(16);
  else if (L + 1 <= 24) GK_PASS(24);
  else GK_PASS(kMaxCandidates + 1);
#undef GK_PASS
}

// Greedy k-means++ over the n rows of x (column-major, on the device), with
// weights w (device, NULL = 1): picks centers; the first is row `first`,
// step s >= 1 draws its L candidates with unif[(s - 1) * L + j] (host).
// Writes the picked rows to out (host).
template <typename T>
int pp_run(const T *x, long long n, int d, const double *w, long long first, int picks, const double *unif,
           int L, const gk_cuda_callbacks *cb, cudaStream_t s, int64_t *out, char *err, size_t errlen) {
  out[0] = first;
  if (picks <= 1) return GK_CUDA_OK;
  const size_t nu = (size_t)(picks - 1) * L;
  DevBuf<double> d2, u, cc, pend;
  DevBuf<long long> idx, cand, free_from;
  DevBuf<unsigned char> chosen;
  DevBuf<int> best;
  TreeBufs tb;
  GK_CHECK(d2.alloc(n), "allocating D2");
  GK_CHECK(u.alloc(nu), "allocating the uniforms");
  GK_CHECK(cc.alloc((size_t)L * d), "allocating the candidates");
  GK_CHECK(pend.alloc(d), "allocating a center");
  GK_CHECK(idx.alloc(picks), "allocating the chosen rows");
  GK_CHECK(cand.alloc(L), "allocating the candidates");
  GK_CHECK(free_from.alloc(1), "allocating a counter");
  GK_CHECK(chosen.alloc(n), "allocating the chosen flags");
  GK_CHECK(best.alloc(1), "allocating an index");
  GK_CHECK(tb.alloc(n, L), "allocating the potentials' sum trees");
  const long long nch = tb.len[1];
  const Levels lv = tb.levels();

  GK_CHECK(cudaMemcpyAsync(u.p, unif, nu * sizeof(double), cudaMemcpyHostToDevice, s), "copying the uniforms");
  GK_CHECK(cudaMemsetAsync(chosen.p, 0, n, s), "clearing the flags");
  GK_CHECK(cudaMemsetAsync(free_from.p, 0, sizeof(long long), s), "clearing a counter");
  GK_CHECK(cudaMemsetAsync(best.p, 0, sizeof(int), s), "clearing an index");
  k_pp_start<<<1, 1, 0, s>>>(idx.p, chosen.p, first);
  k_fill<<<blocks_for(n, 256), 256, 0, s>>>(d2.p, n, std::numeric_limits<double>::infinity());
  // The first center as the single "candidate" of a pass with nothing
  // pending: tree 0 becomes the tree of w * D2 after it, and it becomes the
  // pending center of step 1.
  k_gather_rows<T><<<blocks_for(d, 256), 256, 0, s>>>(x, n, d, idx.p, 1, cc.p);
  launch_pass<T>(x, n, d, w, d2.p, nullptr, cc.p, 1, tb.level1(), nch, s);
  GK_CHECK(tb.build(s, 1), "k-means++: distances to the first center");
  GK_CHECK(cudaMemcpyAsync(pend.p, cc.p, d * sizeof(double), cudaMemcpyDeviceToDevice, s), "copying a center");

  // The levels of the candidates' trees up to the first small enough for
  // the one-block end of a step.
  int t_tail = 2;
  while (t_tail <= tb.T && tb.len[t_tail] * L > kTailThreads * 4) ++t_tail;
  const int tail_threads = std::max(kTailThreads, 32 * L);
  k_pp_sample<T><<<1, 32 * L, 0, s>>>(lv, best.p, x, n, d, w, d2.p, pend.p, u.p, L, chosen.p, free_from.p, cand.p,
                                       cc.p);
  for (int step = 1; step < picks; ++step) {
    launch_pass<T>(x, n, d, w, d2.p, pend.p, cc.p, L, tb.level1(), nch, s);
    GK_CHECK(tb.build(s, L, t_tail), "k-means++: potentials");
    const double *next_u = step + 1 < picks ? u.p + (size_t)step * L : nullptr;
    k_pp_tail<T><<<1, tail_threads, 0, s>>>(lv, t_tail, L, cand.p, cc.p, d, idx.p, step, chosen.p, pend.p, best.p,
                                            x, n, w, d2.p, next_u, free_from.p);
    GK_CHECK(cudaGetLastError(), "k-means++ step");
    if (cb && cb->interrupt && step % 32 == 0) {
      GK_CHECK(cudaStreamSynchronize(s), "k-means++ steps");
      if (cb->interrupt(cb->ctx)) {
        set_msg(err, errlen, "interrupted");
        return GK_CUDA_INTERRUPTED;
      }
    }
  }
  std::vector<long long> h(picks);
  GK_CHECK(cudaMemcpyAsync(h.data(), idx.p, picks * sizeof(long long), cudaMemcpyDeviceToHost, s),
           "copying the chosen rows");
  GK_CHECK(cudaStreamSynchronize(s), "k-means++");
  for (int j = 0; j < picks; ++j) out[j] = (int64_t)h[j];
  return GK_CUDA_OK;
}

int check_candidates(int L, char *err, size_t errlen) {
  if (L < 1 || L > kMaxCandidates) {
    set_msg(err, errlen, "k-means++: n_candidates must be in 1..%d", kMaxCandidates);
    return GK_CUDA_INVALID;
  }
  return GK_CUDA_OK;
}

// fn(stream) on a stream of its own on the data's device, then a sync.
template <typename Fn>
int on_stream(const gk_cuda_data *D, char *err, size_t errlen, Fn fn) {
  GK_CHECK(cudaSetDevice(D->device), "selecting the CUDA device");
  Stream stream;
  GK_CHECK(cudaStreamCreateWithFlags(&stream.s, cudaStreamNonBlocking), "creating a stream");
  const int st = fn(stream.s);
  if (st != GK_CUDA_OK) return st;
  GK_CHECK(cudaStreamSynchronize(stream.s), "initialisation");
  return GK_CUDA_OK;
}

}  // namespace
}  // namespace init
}  // namespace gk

using namespace gk;
using namespace gk::init;

template <typename T>
static int weighted_pp(const gk_cuda_data *D, const int64_t *rows, const double *weight, int64_t m,
                       int64_t first, int picks, const double *unif, int L, const gk_cuda_callbacks *cb,
                       cudaStream_t s, int64_t *out, char *err, size_t errlen) {
  const int d = D->d;
  DevBuf<long long> drows;
  DevBuf<T> xc;
  DevBuf<double> w;
  GK_CHECK(drows.alloc(m), "allocating the candidate rows");
  GK_CHECK(xc.alloc((size_t)m * d), "allocating the candidates");
  GK_CHECK(w.alloc(m), "allocating the weights");
  static_assert(sizeof(long long) == sizeof(int64_t), "row indices are 64-bit");
  GK_CHECK(cudaMemcpyAsync(drows.p, rows, m * sizeof(long long), cudaMemcpyHostToDevice, s), "copying rows");
  if (weight) GK_CHECK(cudaMemcpyAsync(w.p, weight, m * sizeof(double), cudaMemcpyHostToDevice, s), "copying weights");
  k_gather_cols<T><<<blocks_for(m * d, 256), 256, 0, s>>>(static_cast<const T *>(D->x), D->n, d, drows.p, m, xc.p);
  GK_CHECK(cudaGetLastError(), "gathering the candidates");
  return pp_run<T>(xc.p, m, d, weight ? w.p : nullptr, first, picks, unif, L, cb, s, out, err, errlen);
}

extern "C" int gk_cuda_greedy(gk_cuda_data *D, const int64_t *rows, const double *weight, int64_t m,
                              int64_t first, int picks, const double *unif, int L, const gk_cuda_callbacks *cb,
                              int64_t *out, char *err, size_t errlen) {
  if (int rs = refuse_streamed(D, "k-means++ on the device", err, errlen)) return rs;
  if (!D || !D->x || !out || m < 1 || (!rows && m != D->n) || picks < 1 || picks > m || first < 0 ||
      first >= m || (picks > 1 && !unif)) {
    set_msg(err, errlen, "invalid arguments to the greedy k-means++");
    return GK_CUDA_INVALID;
  }
  int st = check_candidates(L, err, errlen);
  if (st != GK_CUDA_OK) return st;
  return on_stream(D, err, errlen, [&](cudaStream_t s) {
    if (rows) {
      if (D->single) return weighted_pp<float>(D, rows, weight, m, first, picks, unif, L, cb, s, out, err, errlen);
      return weighted_pp<double>(D, rows, weight, m, first, picks, unif, L, cb, s, out, err, errlen);
    }
    DevBuf<double> w;  // weights of all rows (a weighted fit's k-means++)
    if (weight) {
      GK_CHECK(w.alloc(D->n), "allocating the weights");
      GK_CHECK(cudaMemcpyAsync(w.p, weight, D->n * sizeof(double), cudaMemcpyHostToDevice, s), "copying weights");
    }
    if (D->single)
      return pp_run<float>(static_cast<const float *>(D->x), D->n, D->d, w.p, first, picks, unif, L, cb, s,
                           out, err, errlen);
    return pp_run<double>(static_cast<const double *>(D->x), D->n, D->d, w.p, first, picks, unif, L, cb, s,
                          out, err, errlen);
  });
}
