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
#include <type_traits>
#include <vector>

#include "detail/engine.hpp"
#include "detail/init_host.hpp"
#include "detail/init_pp_kernels.cuh"

namespace gk {
namespace init {

namespace {

constexpr int kTailThreads = 256;  // at least; the sampling needs 32 L
static_assert(kMaxRowBlocks >= kMaxTogether, "RowBlocks holds every part check_together allows");

// The pass with the smallest accumulator count that holds L + 1 slots.
// (head: k_pp_pass's, a chunk of streamed x)
template <typename T>
void launch_pass(const T *x, long long n, int d, const double *w, double *d2, const double *pend,
                 const double *cc, int L, double *lv1, long long stride, long long nch, cudaStream_t s,
                 int head = 0) {
  const unsigned int g = blocks_for(n + head, kPassThreads * kPassPoints);
#define GK_PASS(NB) \
  k_pp_pass<T, NB><<<g, kPassThreads, 0, s>>>(x, n, d, w, d2, pend, cc, L, lv1, stride, nch, head)
  if (L + 1 <= 2) GK_PASS(2);
  else if (L + 1 <= 4) GK_PASS(4);
  else if (L + 1 <= 8) GK_PASS(8);
  else if (L + 1 <= 12) GK_PASS(12);
  else if (L + 1 <= 16) GK_PASS(16);
  else if (L + 1 <= 24) GK_PASS(24);
  else GK_PASS(kMaxCandidates + 1);
#undef GK_PASS
}

// What every greedy k-means++ keeps on the sampling device besides the rows'
// D2 and chosen flags: the uniforms, the candidates (cc: L x d, row-major)
// and their rows, the pending center, the picks, the degenerate rule's
// counter, the tree the next step samples, and the candidates' sum trees.
struct StepState {
  DevBuf<double> u, cc, pend;
  DevBuf<long long> idx, cand, free_from;
  DevBuf<int> best;
  TreeBufs tb;
  int t_tail = 2;        // the first tree level the one-block step end sums
  int tail_threads = 0;  // its threads
  // For n rows, d columns, `picks` picks of L candidates with unif (host):
  // allocated, the uniforms copied, the counters cleared, on s.
  int begin(long long n, int d, int picks, int L, const double *unif, cudaStream_t s, char *err, size_t errlen) {
    const size_t nu = (size_t)(picks - 1) * L;
    GK_CHECK(u.alloc(nu), "allocating the uniforms");
    GK_CHECK(cc.alloc((size_t)L * d), "allocating the candidates");
    GK_CHECK(pend.alloc(d), "allocating a center");
    GK_CHECK(idx.alloc(picks), "allocating the chosen rows");
    GK_CHECK(cand.alloc(L), "allocating the candidates");
    GK_CHECK(free_from.alloc(1), "allocating a counter");
    GK_CHECK(best.alloc(1), "allocating an index");
    GK_CHECK(tb.alloc(n, L), "allocating the potentials' sum trees");
    if (tb.T < 1) {  // (n >= 2 rows when picks >= 2)
      set_msg(err, errlen, "k-means++: fewer than 2 rows");
      return GK_CUDA_INVALID;
    }
    GK_CHECK(cudaMemcpyAsync(u.p, unif, nu * sizeof(double), cudaMemcpyHostToDevice, s), "copying the uniforms");
    GK_CHECK(cudaMemsetAsync(free_from.p, 0, sizeof(long long), s), "clearing a counter");
    GK_CHECK(cudaMemsetAsync(best.p, 0, sizeof(int), s), "clearing an index");
    while (t_tail <= tb.T && tb.len[t_tail] * L > kTailThreads * 4) ++t_tail;
    tail_threads = std::max(kTailThreads, 32 * L);
    return GK_CUDA_OK;
  }
  // The picks into out (host), once s has run.
  int end(int picks, cudaStream_t s, int64_t *out, char *err, size_t errlen) {
    std::vector<long long> h(picks);
    GK_CHECK(cudaMemcpyAsync(h.data(), idx.p, picks * sizeof(long long), cudaMemcpyDeviceToHost, s),
             "copying the chosen rows");
    GK_CHECK(cudaStreamSynchronize(s), "k-means++");
    for (int j = 0; j < picks; ++j) out[j] = (int64_t)h[j];
    return GK_CUDA_OK;
  }
};

// One block of the rows of a greedy k-means++: rows [lo, lo + n) of the
// data, x on `device` (column-major, n rows), with the block's D2 and
// chosen flags there; its passes run on `s`.  Block 0 also holds the
// trees, the candidates and the sampling (gk_cuda_greedy_devices).
template <typename T>
struct GreedyBlock {
  const T *x = nullptr;
  long long n = 0, lo = 0;
  const double *w = nullptr;  // the block's weights (device), or NULL
  int device = 0;
  cudaStream_t s = nullptr;
  bool own_stream = false;
  DevBuf<double> d2;
  DevBuf<unsigned char> chosen;
  cudaEvent_t done = nullptr;  // recorded after the block's last enqueued work
  GreedyBlock() {}
  GreedyBlock(const GreedyBlock &) = delete;
  GreedyBlock &operator=(const GreedyBlock &) = delete;
  ~GreedyBlock() {
    cudaSetDevice(device);
    d2.release();
    chosen.release();
    if (done) cudaEventDestroy(done);
    if (own_stream && s) cudaStreamDestroy(s);
  }
};

// Greedy k-means++ over the rows of the blocks B (in row order; every
// block but the last a whole number of level-1 nodes, 32 rows), one pass
// over every block per step; with block 0's weights (one block only; NULL =
// 1): picks centers; the first is row `first`,
// step s >= 1 draws its L candidates with unif[(s - 1) * L + j] (host).
// Writes the picked rows to out (host).  The blocks' passes run on their
// streams, ordered against block 0's stream by events: the host enqueues
// every step and synchronises every 32 steps to poll for interrupts.
template <typename T, int NB>
int pp_run(std::vector<GreedyBlock<T>> &B, int d, long long first, int picks, const double *unif, int L,
           const gk_cuda_callbacks *cb, int64_t *out, char *err, size_t errlen) {
  out[0] = first;
  if (picks <= 1) return GK_CUDA_OK;
  const int P = (int)B.size();
  GreedyBlock<T> &root = B[0];
  const double *w = root.w;  // (the sampling's leaves: one block, the rows' own weights)
  const long long n = B[P - 1].lo + B[P - 1].n;
  cudaStream_t s = root.s;
  if (P > NB || (w && P > 1)) {
    set_msg(err, errlen, "k-means++: more than %d blocks of rows, or weights over several", NB);
    return GK_CUDA_INVALID;
  }
  RowBlocks<T, NB> R;
  R.blocks = P;
  for (int p = 0; p < P; ++p) {
    GreedyBlock<T> &b = B[p];
    GK_CHECK(cudaSetDevice(b.device), "selecting the CUDA device");
    GK_CHECK(b.d2.alloc(b.n), "allocating D2");
    GK_CHECK(b.chosen.alloc(b.n), "allocating the chosen flags");
    GK_CHECK(cudaEventCreateWithFlags(&b.done, cudaEventDisableTiming), "creating an event");
    GK_CHECK(cudaMemsetAsync(b.chosen.p, 0, b.n, b.s), "clearing the flags");
    k_fill<<<blocks_for(b.n, 256), 256, 0, b.s>>>(b.d2.p, b.n, std::numeric_limits<double>::infinity());
    GK_CHECK(cudaGetLastError(), "initialising D2");
    R.x[p] = b.x;
    R.d2[p] = b.d2.p;
    R.chosen[p] = b.chosen.p;
    R.lo[p] = b.lo;
  }
  R.lo[P] = n;
  GK_CHECK(cudaSetDevice(root.device), "selecting the CUDA device");
  StepState S;
  int st = S.begin(n, d, picks, L, unif, s, err, errlen);
  if (st != GK_CUDA_OK) return st;
  DevBuf<double> &cc = S.cc, &pend = S.pend, &u = S.u;
  TreeBufs &tb = S.tb;
  const long long nch = tb.len[1];
  const Levels lv = tb.levels();

  // s waits for the other blocks' streams (join), or they for s (fork)
  auto join = [&]() -> cudaError_t {
    for (int p = 1; p < P; ++p) {
      cudaError_t e = cudaSetDevice(B[p].device);
      if (e == cudaSuccess) e = cudaEventRecord(B[p].done, B[p].s);
      if (e == cudaSuccess) e = cudaStreamWaitEvent(s, B[p].done, 0);
      if (e != cudaSuccess) return e;
    }
    return cudaSetDevice(root.device);
  };
  auto fork = [&]() -> cudaError_t {
    if (P == 1) return cudaSuccess;
    cudaError_t e = cudaEventRecord(root.done, s);
    for (int p = 1; p < P && e == cudaSuccess; ++p) e = cudaStreamWaitEvent(B[p].s, root.done, 0);
    return e;
  };
  // one pass over every block with pending center pend_p (may be NULL) and
  // Lp candidates in cc, each writing its nodes of level 1
  auto passes = [&](const double *pend_p, int Lp) -> cudaError_t {
    cudaError_t e = fork();
    for (int p = 0; p < P && e == cudaSuccess; ++p) {
      GreedyBlock<T> &b = B[p];
      e = cudaSetDevice(b.device);
      if (e != cudaSuccess) break;
      launch_pass<T>(b.x, b.n, d, b.w, b.d2.p, pend_p, cc.p, Lp, tb.level1() + b.lo / GK_SUM_ARITY, nch,
                     (b.n + GK_SUM_ARITY - 1) / GK_SUM_ARITY, b.s);
      e = cudaGetLastError();
    }
    return e == cudaSuccess ? join() : e;
  };

  GK_CHECK(join(), "k-means++: ordering the devices");  // (the blocks' D2 and flags are set)
  // The first center as the single "candidate" of a pass with nothing
  // pending: tree 0 becomes the tree of w * D2 after it, and it becomes the
  // pending center of step 1.
  k_pp_start<T, NB><<<1, 256, 0, s>>>(R, d, S.idx.p, first, cc.p);
  GK_CHECK(cudaGetLastError(), "k-means++: the first center");
  GK_CHECK(passes(nullptr, 1), "k-means++: distances to the first center");
  GK_CHECK(tb.build(s, 1), "k-means++: distances to the first center");
  GK_CHECK(cudaMemcpyAsync(pend.p, cc.p, d * sizeof(double), cudaMemcpyDeviceToDevice, s), "copying a center");

  k_pp_sample<T, NB><<<1, 32 * L, 0, s>>>(lv, S.best.p, R, d, w, pend.p, u.p, L, S.free_from.p, S.cand.p, cc.p);
  for (int step = 1; step < picks; ++step) {
    GK_CHECK(passes(pend.p, L), "k-means++ step");
    GK_CHECK(tb.build(s, L, S.t_tail), "k-means++: potentials");
    const double *next_u = step + 1 < picks ? u.p + (size_t)step * L : nullptr;
    k_pp_tail<T, NB><<<1, S.tail_threads, 0, s>>>(lv, S.t_tail, L, S.cand.p, cc.p, d, S.idx.p, step, pend.p,
                                                  S.best.p, R, w, next_u, S.free_from.p);
    GK_CHECK(cudaGetLastError(), "k-means++ step");
    if (cb && cb->interrupt && step % 32 == 0) {
      GK_CHECK(cudaStreamSynchronize(s), "k-means++ steps");
      if (cb->interrupt(cb->ctx)) {
        set_msg(err, errlen, "interrupted");
        return GK_CUDA_INTERRUPTED;
      }
    }
  }
  return S.end(picks, s, out, err, errlen);
}

// pp_run over one block: x (n rows on the current device, D's), on s.
template <typename T>
int pp_one(const T *x, long long n, int d, int device, const double *w, long long first, int picks,
           const double *unif, int L, const gk_cuda_callbacks *cb, cudaStream_t s, int64_t *out, char *err,
           size_t errlen) {
  std::vector<GreedyBlock<T>> B(1);
  B[0].x = x;
  B[0].n = n;
  B[0].w = w;
  B[0].device = device;
  B[0].s = s;
  return pp_run<T, 1>(B, d, first, picks, unif, L, cb, out, err, errlen);
}

// Greedy k-means++ over streamed x (D->src: x in host memory, brought in
// chunks at every pass): pp_run's algorithm and arithmetic, with each
// step's pass over the chunks (k_pp_pass with the chunk's head: chunks need
// not hold whole level-1 nodes) and the draws ending in two halves: down to
// level 1 on the device (k_pps_tail), then, once the host has copied the
// drawn nodes' rows (32 each, as the device stores them), the last level
// (k_pps_finish).  One synchronisation a step, against one pass over x.
int pp_streamed(gk_cuda_data *D, long long first, int picks, const double *unif, int L,
                const gk_cuda_callbacks *cb, int64_t *out, char *err, size_t errlen) {
  out[0] = first;
  if (picks <= 1) return GK_CUDA_OK;
  const long long n = D->n;
  const int d = D->d;
  cudaStream_t s = D->stream;
  DevBuf<double> d2, rows;
  DevBuf<unsigned char> chosen;
  DevBuf<NodeDraw> draws;
  GK_CHECK(d2.alloc(n), "allocating D2");
  GK_CHECK(chosen.alloc(n), "allocating the chosen flags");
  GK_CHECK(rows.alloc((size_t)L * 32 * d), "allocating the drawn rows");
  GK_CHECK(draws.alloc(L), "allocating the draws");
  StepState S;
  int st = S.begin(n, d, picks, L, unif, s, err, errlen);
  if (st != GK_CUDA_OK) return st;
  DevBuf<double> &cc = S.cc, &pend = S.pend, &u = S.u;
  TreeBufs &tb = S.tb;
  const long long nch = tb.len[1];
  const Levels lv = tb.levels();
  std::vector<double> hrows((size_t)L * 32 * d);
  std::vector<NodeDraw> hdraws(L);
  std::vector<long long> at(32);

  GK_CHECK(cudaMemsetAsync(chosen.p, 0, n, s), "clearing the flags");
  GK_CHECK(cudaMemsetAsync(chosen.p + first, 1, 1, s), "choosing the first row");
  k_fill<<<blocks_for(n, 256), 256, 0, s>>>(d2.p, n, std::numeric_limits<double>::infinity());
  GK_CHECK(cudaGetLastError(), "initialising D2");
  // the first center as the single candidate of a pass with nothing pending
  const int got_first = streamed_rows(D, &first, 1, hrows.data(), err, errlen);
  if (got_first != GK_CUDA_OK) return got_first;
  GK_CHECK(cudaMemcpyAsync(cc.p, hrows.data(), d * sizeof(double), cudaMemcpyHostToDevice, s), "copying a center");
  GK_CHECK(cudaMemcpyAsync(S.idx.p, &first, sizeof(long long), cudaMemcpyHostToDevice, s), "copying a row");
  GK_CHECK(cudaStreamSynchronize(s), "k-means++");  // (hrows is refilled below)
  auto pass = [&](const double *pend_p, int Lp) -> int {
    return for_each_chunk(D, D->labels, [&](const gk_cuda_data &V) -> cudaError_t {
      const long long a = V.labels - D->labels;  // the chunk's first row
      const int head = (int)(a % GK_SUM_ARITY);
      const long long nodes = (V.n + head + GK_SUM_ARITY - 1) / GK_SUM_ARITY;
      if (D->single)
        launch_pass<float>(static_cast<const float *>(V.x), V.n, d, nullptr, d2.p + a, pend_p, cc.p, Lp,
                           tb.level1() + (a - head) / GK_SUM_ARITY, nch, nodes, s, head);
      else
        launch_pass<double>(static_cast<const double *>(V.x), V.n, d, nullptr, d2.p + a, pend_p, cc.p, Lp,
                            tb.level1() + (a - head) / GK_SUM_ARITY, nch, nodes, s, head);
      return cudaGetLastError();
    }, err, errlen);
  };
  // the drawn nodes' rows to the device, then the draws' last level
  auto finish = [&]() -> int {
    GK_CHECK(cudaMemcpyAsync(hdraws.data(), draws.p, L * sizeof(NodeDraw), cudaMemcpyDeviceToHost, s),
             "copying the draws");
    GK_CHECK(cudaStreamSynchronize(s), "k-means++ step");
    for (int j = 0; j < L; ++j) {
      const long long lo = hdraws[j].node < 0 ? -1 - hdraws[j].node : hdraws[j].node * GK_SUM_ARITY;
      const long long cnt = hdraws[j].node < 0 ? 1 : std::min<long long>(GK_SUM_ARITY, n - lo);
      for (long long q = 0; q < cnt; ++q) at[q] = lo + q;
      const int got = streamed_rows(D, at.data(), cnt, hrows.data() + (size_t)j * 32 * d, err, errlen);
      if (got != GK_CUDA_OK) return got;
    }
    GK_CHECK(cudaMemcpyAsync(rows.p, hrows.data(), hrows.size() * sizeof(double), cudaMemcpyHostToDevice, s),
             "copying the drawn rows");
    k_pps_finish<<<1, 32 * L, 0, s>>>(n, d, d2.p, pend.p, rows.p, draws.p, L, S.cand.p, cc.p);
    GK_CHECK(cudaGetLastError(), "k-means++ step");
    GK_CHECK(cudaStreamSynchronize(s), "k-means++ step");  // (hrows is refilled at the next step)
    return GK_CUDA_OK;
  };
  if ((st = pass(nullptr, 1)) != GK_CUDA_OK) return st;
  GK_CHECK(tb.build(s, 1), "k-means++: distances to the first center");
  GK_CHECK(cudaMemcpyAsync(pend.p, cc.p, d * sizeof(double), cudaMemcpyDeviceToDevice, s), "copying a center");
  k_pps_draw<<<1, 32 * L, 0, s>>>(lv, S.best.p, n, u.p, L, chosen.p, S.free_from.p, draws.p);
  GK_CHECK(cudaGetLastError(), "k-means++ step");
  if ((st = finish()) != GK_CUDA_OK) return st;
  for (int step = 1; step < picks; ++step) {
    if ((st = pass(pend.p, L)) != GK_CUDA_OK) return st;
    GK_CHECK(tb.build(s, L, S.t_tail), "k-means++: potentials");
    const double *next_u = step + 1 < picks ? u.p + (size_t)step * L : nullptr;
    k_pps_tail<<<1, S.tail_threads, 0, s>>>(lv, S.t_tail, L, S.cand.p, cc.p, d, S.idx.p, step, chosen.p, pend.p,
                                            S.best.p, n, next_u, S.free_from.p, draws.p);
    GK_CHECK(cudaGetLastError(), "k-means++ step");
    if (next_u && (st = finish()) != GK_CUDA_OK) return st;
    if (cb && cb->interrupt && cb->interrupt(cb->ctx)) {
      set_msg(err, errlen, "interrupted");
      return GK_CUDA_INTERRUPTED;
    }
  }
  return S.end(picks, s, out, err, errlen);
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
  return pp_one<T>(xc.p, m, d, D->device, weight ? w.p : nullptr, first, picks, unif, L, cb, s, out, err, errlen);
}

extern "C" int gk_cuda_greedy(gk_cuda_data *D, const int64_t *rows, const double *weight, int64_t m,
                              int64_t first, int picks, const double *unif, int L, const gk_cuda_callbacks *cb,
                              int64_t *out, char *err, size_t errlen) {
  if (D && D->src && rows) return refuse_streamed(D, "the k-means|| reduction on the device", err, errlen);
  if (D && D->src && weight) return refuse_streamed(D, "weighted k-means++ on the device", err, errlen);
  if (!D || (!D->x && !D->src) || !out || m < 1 || (!rows && m != D->n) || picks < 1 || picks > m || first < 0 ||
      first >= m || (picks > 1 && !unif)) {
    set_msg(err, errlen, "invalid arguments to the greedy k-means++");
    return GK_CUDA_INVALID;
  }
  int st = check_candidates(L, err, errlen);
  if (st != GK_CUDA_OK) return st;
  if (D->src) {  // streamed x: on the handle's stream, which its chunks' copies are ordered against
    GK_CHECK(cudaSetDevice(D->device), "selecting the CUDA device");
    return pp_streamed(D, first, picks, unif, L, cb, out, err, errlen);
  }
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
      return pp_one<float>(static_cast<const float *>(D->x), D->n, D->d, D->device, w.p, first, picks, unif, L,
                           cb, s, out, err, errlen);
    return pp_one<double>(static_cast<const double *>(D->x), D->n, D->d, D->device, w.p, first, picks, unif, L,
                          cb, s, out, err, errlen);
  });
}

extern "C" int gk_cuda_greedy_devices(gk_cuda_data *const *parts, int count, int64_t first, int picks,
                                      const double *unif, int L, const gk_cuda_callbacks *cb, int64_t *out,
                                      char *err, size_t errlen) {
  if (!parts || count < 1 || !out || picks < 1 || first < 0 || (picks > 1 && !unif)) {
    set_msg(err, errlen, "invalid arguments to the greedy k-means++ on several devices");
    return GK_CUDA_INVALID;
  }
  int st = check_candidates(L, err, errlen);
  if (st != GK_CUDA_OK) return st;
  long long n = 0;
  if ((st = check_together(parts, count, "k-means++ on several devices", &n, err, errlen))) return st;
  if (picks > n || first >= n) {
    set_msg(err, errlen, "invalid arguments to the greedy k-means++ on several devices");
    return GK_CUDA_INVALID;
  }
  auto run = [&](auto *tag) -> int {
    using T = std::remove_pointer_t<decltype(tag)>;
    std::vector<GreedyBlock<T>> B(count);
    long long lo = 0;
    for (int p = 0; p < count; ++p) {
      GreedyBlock<T> &b = B[p];
      b.x = static_cast<const T *>(parts[p]->x);
      b.n = parts[p]->n;
      b.lo = lo;
      b.device = parts[p]->device;
      lo += b.n;
      GK_CHECK(cudaSetDevice(b.device), "selecting the CUDA device");
      GK_CHECK(cudaStreamCreateWithFlags(&b.s, cudaStreamNonBlocking), "creating a stream");
      b.own_stream = true;
    }
    return pp_run<T, kMaxRowBlocks>(B, parts[0]->d, first, picks, unif, L, cb, out, err, errlen);
  };
  if (parts[0]->single) return run(static_cast<float *>(nullptr));
  return run(static_cast<double *>(nullptr));
}
