// init.cu: k-means++ and the oversampling phase of k-means|| on the device,
// gk_cuda_kmeanspp and gk_cuda_kmeans_par (gk_cuda.h, "initialisation").
//
// The same algorithms, in the same arithmetic order, as src/cpu_init.cpp
// (see src/init_order.h): in double precision both engines choose the same
// rows.  x stays on the device (uploaded once per fit, shared by all starts);
// D2, its sum tree, the candidates' potentials and the D^2 sampling live on
// the device.  Per k-means++ step the host only enqueues kernels; it
// synchronises every 32 steps to poll for interrupts.  Per k-means|| round it
// reads phi, the number of sampled rows and their indices (about 2k).
#include <algorithm>
#include <limits>
#include <vector>

#include "detail/engine.hpp"
#include "detail/init_kernels.cuh"

namespace gk {
namespace init {
namespace {

struct Stream {
  cudaStream_t s = nullptr;
  ~Stream() {
    if (s) cudaStreamDestroy(s);
  }
};

struct Events {
  cudaEvent_t a = nullptr, b = nullptr;
  ~Events() {
    if (a) cudaEventDestroy(a);
    if (b) cudaEventDestroy(b);
  }
};

inline unsigned int blocks_for(long long m, int threads) {
  return (unsigned int)std::max<long long>(1, (m + threads - 1) / threads);
}

// Storage for the levels >= 1 of `batches` sum trees over n values each.
struct TreeBufs {
  std::vector<long long> len;   // len[t], t = 0..T
  DevBuf<double> lv[kMaxLevels];
  int batches = 1;
  int T = 0;
  cudaError_t alloc(long long n, int b) {
    batches = b;
    len.assign(1, n);
    while (len.back() > 1) len.push_back(level_up(len.back()));
    T = (int)len.size() - 1;
    if (T >= kMaxLevels) return cudaErrorInvalidValue;
    for (int t = 1; t <= T; ++t) {
      cudaError_t e = lv[t].alloc((size_t)len[t] * b);
      if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
  }
  // Levels 2..T from level 1 (already written).
  cudaError_t build(cudaStream_t s) {
    for (int t = 2; t <= T; ++t) {
      const long long m = len[t] * batches;
      k_tree_level<<<blocks_for(m, 256), 256, 0, s>>>(lv[t - 1].p, len[t - 1], lv[t].p, len[t], batches);
    }
    return cudaGetLastError();
  }
  Levels levels(const double *level0) const {
    Levels L;
    for (int t = 0; t < kMaxLevels; ++t) {
      L.p[t] = nullptr;
      L.len[t] = 0;
    }
    L.p[0] = level0;
    for (int t = 0; t <= T; ++t) L.len[t] = len[t];
    for (int t = 1; t <= T; ++t) L.p[t] = lv[t].p;
    L.T = T;
    return L;
  }
  // The totals of the batches: element b * top_stride() of top().
  const double *top(const double *level0) const { return T == 0 ? level0 : lv[T].p; }
  long long top_stride() const { return len[T]; }  // == 1 (or n == 1 at level 0)
};

template <typename T>
void launch_multi(int mode, const gk_cuda_data *D, const double *cen, int m, double *d2, double *lv1,
                  long long nch, unsigned int *counts, cudaStream_t s) {
  const T *x = static_cast<const T *>(D->x);
  const unsigned int g = blocks_for(D->n, kThreads);
  if (mode == MODE_MIN)
    k_multi<T, MODE_MIN><<<g, kThreads, 0, s>>>(x, D->n, D->d, cen, m, d2, lv1, nch, counts);
  else if (mode == MODE_ARGMIN)
    k_multi<T, MODE_ARGMIN><<<g, kThreads, 0, s>>>(x, D->n, D->d, cen, m, d2, lv1, nch, counts);
  else
    k_multi<T, MODE_PP><<<g, kThreads, 0, s>>>(x, D->n, D->d, cen, m, d2, lv1, nch, counts);
}

void multi(int mode, const gk_cuda_data *D, const double *cen, int m, double *d2, double *lv1,
           long long nch, unsigned int *counts, cudaStream_t s) {
  if (D->single) launch_multi<float>(mode, D, cen, m, d2, lv1, nch, counts, s);
  else launch_multi<double>(mode, D, cen, m, d2, lv1, nch, counts, s);
}

void gather(const gk_cuda_data *D, const long long *idx, long long m, double *out, cudaStream_t s) {
  const unsigned int g = blocks_for(m * D->d, 256);
  if (D->single)
    k_gather<float><<<g, 256, 0, s>>>(static_cast<const float *>(D->x), D->n, D->d, idx, m, out);
  else
    k_gather<double><<<g, 256, 0, s>>>(static_cast<const double *>(D->x), D->n, D->d, idx, m, out);
}

// d2 <- min(d2, dist to the m rows in cen) and its level 1; then the tree.
cudaError_t update_d2(const gk_cuda_data *D, const double *cen, long long m, double *d2, TreeBufs &tb,
                      cudaStream_t s) {
  const long long nch = level_up(D->n);
  // very many centers: split so that one launch stays short
  const long long step = 4096;
  for (long long j0 = 0; j0 < m; j0 += step) {
    const int mm = (int)std::min(step, m - j0);
    const bool last = j0 + mm >= m;
    multi(MODE_MIN, D, cen + (size_t)j0 * D->d, mm, d2, last && tb.T >= 1 ? tb.lv[1].p : nullptr, nch,
          nullptr, s);
  }
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return e;
  return tb.build(s);
}

int check_data(const gk_cuda_data *D, int k, char *err, size_t errlen) {
  if (!D || !D->x || D->n < 1 || D->d < 1 || k < 1 || k > D->n) {
    set_msg(err, errlen, "invalid arguments to the initialisation (n, d or k)");
    return GK_CUDA_INVALID;
  }
  return GK_CUDA_OK;
}

}  // namespace
}  // namespace init
}  // namespace gk

using namespace gk;
using namespace gk::init;

extern "C" int gk_cuda_kmeanspp(gk_cuda_data *D, int k, const double *unif, int L,
                                const gk_cuda_callbacks *cb, int64_t *idx_out, double *ms, char *err,
                                size_t errlen) {
  int st = check_data(D, k, err, errlen);
  if (st != GK_CUDA_OK) return st;
  if (L < 1 || L > kTile || !unif || !idx_out) {
    set_msg(err, errlen, "k-means++: n_candidates must be in 1..%d", kTile);
    return GK_CUDA_INVALID;
  }
  if (ms) *ms = 0.0;
  const long long n = D->n;
  const int d = D->d;
  idx_out[0] = uniform_index(unif[0], n);
  if (k == 1) return GK_CUDA_OK;

  GK_CHECK(cudaSetDevice(D->device), "selecting the CUDA device");
  Stream stream;
  GK_CHECK(cudaStreamCreateWithFlags(&stream.s, cudaStreamNonBlocking), "creating a stream");
  cudaStream_t s = stream.s;
  Events ev;
  GK_CHECK(cudaEventCreate(&ev.a), "creating an event");
  GK_CHECK(cudaEventCreate(&ev.b), "creating an event");

  const long long nch = level_up(n);
  const size_t nu = 1 + (size_t)(k - 1) * L;
  DevBuf<double> d2, u, cc, newc;
  DevBuf<long long> idx, cand, free_from;
  DevBuf<unsigned char> chosen;
  TreeBufs t_d2, t_pp;
  GK_CHECK(d2.alloc(n), "allocating D2");
  GK_CHECK(u.alloc(nu), "allocating the uniforms");
  GK_CHECK(cc.alloc((size_t)L * d), "allocating the candidates");
  GK_CHECK(newc.alloc(d), "allocating a center");
  GK_CHECK(idx.alloc(k), "allocating the chosen rows");
  GK_CHECK(cand.alloc(L), "allocating the candidates");
  GK_CHECK(free_from.alloc(1), "allocating a counter");
  GK_CHECK(chosen.alloc(n), "allocating the chosen flags");
  GK_CHECK(t_d2.alloc(n, 1), "allocating the sum tree");
  GK_CHECK(t_pp.alloc(n, L), "allocating the potentials' sum trees");
  (void)nch;

  GK_CHECK(cudaEventRecord(ev.a, s), "recording an event");
  GK_CHECK(cudaMemcpyAsync(u.p, unif, nu * sizeof(double), cudaMemcpyHostToDevice, s), "copying the uniforms");
  GK_CHECK(cudaMemsetAsync(chosen.p, 0, n, s), "clearing the flags");
  GK_CHECK(cudaMemsetAsync(free_from.p, 0, sizeof(long long), s), "clearing a counter");
  long long first = idx_out[0];
  GK_CHECK(cudaMemcpyAsync(idx.p, &first, sizeof(long long), cudaMemcpyHostToDevice, s), "copying the first row");
  GK_CHECK(cudaStreamSynchronize(s), "copying the first row");  // &first is on the stack
  const unsigned char one = 1;
  GK_CHECK(cudaMemcpyAsync(chosen.p + first, &one, 1, cudaMemcpyHostToDevice, s), "setting a flag");
  GK_CHECK(cudaStreamSynchronize(s), "setting a flag");
  k_fill<<<blocks_for(n, 256), 256, 0, s>>>(d2.p, n, std::numeric_limits<double>::infinity());
  gather(D, idx.p, 1, newc.p, s);
  GK_CHECK(update_d2(D, newc.p, 1, d2.p, t_d2, s), "k-means++: distances to the first center");

  const Levels lv = t_d2.levels(d2.p);
  for (int step = 1; step < k; ++step) {
    if (D->single)
      k_pp_sample<float><<<1, 32, 0, s>>>(lv, u.p + 1 + (size_t)(step - 1) * L, L, chosen.p, free_from.p,
                                          static_cast<const float *>(D->x), n, d, cand.p, cc.p);
    else
      k_pp_sample<double><<<1, 32, 0, s>>>(lv, u.p + 1 + (size_t)(step - 1) * L, L, chosen.p, free_from.p,
                                           static_cast<const double *>(D->x), n, d, cand.p, cc.p);
    // potentials of the L candidates: level 1 in the warps, then the trees
    if (t_pp.T >= 1) {
      multi(MODE_PP, D, cc.p, L, d2.p, t_pp.lv[1].p, t_pp.len[1], nullptr, s);
      GK_CHECK(t_pp.build(s), "k-means++: potentials");
      k_pp_choose<<<1, 128, 0, s>>>(t_pp.top(nullptr), t_pp.top_stride(), L, cand.p, cc.p, d, idx.p, step,
                                    chosen.p, newc.p);
    }
    GK_CHECK(cudaGetLastError(), "k-means++ step");
    if (step + 1 < k) GK_CHECK(update_d2(D, newc.p, 1, d2.p, t_d2, s), "k-means++: distances");
    if (cb && cb->interrupt && step % 32 == 0) {
      GK_CHECK(cudaStreamSynchronize(s), "k-means++ steps");
      if (cb->interrupt(cb->ctx)) {
        set_msg(err, errlen, "interrupted");
        return GK_CUDA_INTERRUPTED;
      }
    }
  }
  GK_CHECK(cudaEventRecord(ev.b, s), "recording an event");
  std::vector<long long> h(k);
  GK_CHECK(cudaMemcpyAsync(h.data(), idx.p, k * sizeof(long long), cudaMemcpyDeviceToHost, s),
           "copying the chosen rows");
  GK_CHECK(cudaStreamSynchronize(s), "k-means++");
  for (int j = 0; j < k; ++j) idx_out[j] = (int64_t)h[j];
  if (ms) {
    float f = 0;
    GK_CHECK(cudaEventElapsedTime(&f, ev.a, ev.b), "timing");
    *ms = f;
  }
  return GK_CUDA_OK;
}

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

  GK_CHECK(cudaSetDevice(D->device), "selecting the CUDA device");
  Stream stream;
  GK_CHECK(cudaStreamCreateWithFlags(&stream.s, cudaStreamNonBlocking), "creating a stream");
  cudaStream_t s = stream.s;
  Events ev;
  GK_CHECK(cudaEventCreate(&ev.a), "creating an event");
  GK_CHECK(cudaEventCreate(&ev.b), "creating an event");

  DevBuf<double> d2, cen;
  DevBuf<long long> dsel, didx;
  DevBuf<unsigned long long> count;
  DevBuf<unsigned int> counts;
  TreeBufs tb;
  GK_CHECK(d2.alloc(n), "allocating D2");
  GK_CHECK(tb.alloc(n, 1), "allocating the sum tree");
  GK_CHECK(count.alloc(1), "allocating a counter");
  long long sel_cap = std::min<long long>(n, (long long)(2.0 * l) + 1024);
  GK_CHECK(dsel.alloc(sel_cap), "allocating the sample");
  GK_CHECK(cudaEventRecord(ev.a, s), "recording an event");

  std::vector<long long> cand;
  cand.push_back(uniform_index(counter_uniform(seed, 0, 0), n));
  const double *top = tb.top(d2.p);
  double phi = 0.0;

  // Adds rows (host, in order) to the candidates and updates D2 and phi.
  auto add = [&](const long long *rows, long long m) -> int {
    if (m == 0) return GK_CUDA_OK;
    if ((long long)didx.count < m) GK_CHECK(didx.alloc(m), "allocating candidate rows");
    if ((long long)cen.count < m * d) GK_CHECK(cen.alloc((size_t)m * d), "allocating candidates");
    GK_CHECK(cudaMemcpyAsync(didx.p, rows, m * sizeof(long long), cudaMemcpyHostToDevice, s),
             "copying candidate rows");
    gather(D, didx.p, m, cen.p, s);
    GK_CHECK(update_d2(D, cen.p, m, d2.p, tb, s), "k-means||: distances");
    GK_CHECK(cudaMemcpyAsync(&phi, top, sizeof(double), cudaMemcpyDeviceToHost, s), "copying phi");
    GK_CHECK(cudaStreamSynchronize(s), "k-means|| round");
    return GK_CUDA_OK;
  };

  k_fill<<<blocks_for(n, 256), 256, 0, s>>>(d2.p, n, std::numeric_limits<double>::infinity());
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
    // weights: points nearest to each candidate (ties: the first)
    const long long m = (long long)cand.size();
    if ((long long)didx.count < m) GK_CHECK(didx.alloc(m), "allocating candidate rows");
    if ((long long)cen.count < m * d) GK_CHECK(cen.alloc((size_t)m * d), "allocating candidates");
    GK_CHECK(counts.alloc(m), "allocating the weights");
    GK_CHECK(cudaMemsetAsync(counts.p, 0, m * sizeof(unsigned int), s), "clearing the weights");
    GK_CHECK(cudaMemcpyAsync(didx.p, cand.data(), m * sizeof(long long), cudaMemcpyHostToDevice, s),
             "copying candidate rows");
    gather(D, didx.p, m, cen.p, s);
    if (m > 0x7fffffffLL) {
      set_msg(err, errlen, "k-means||: too many candidates");
      return GK_CUDA_INVALID;
    }
    multi(MODE_ARGMIN, D, cen.p, (int)m, nullptr, nullptr, 0, counts.p, s);
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
