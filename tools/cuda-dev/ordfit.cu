// ordfit.cu: what ordering the rows in space costs a fit, and what it
// saves, as bench.R sees it (issue 15, problem B; dev tool, not the engine).
//   ordfit [n] [k] [timeline|sorts|marks [iters]]   (blobs as bench.R's B: d = 2, centers U(0, 100),
//                          noise N(0, 1))
// For both precisions and 10 / 500 iterations, the engine's own fits
// (gk_cuda_lloyd, bounds off as in bench.R) with the rows as given and
// ordered (GPUKMEANS_ORDER=0/1):
//   - fresh: a new handle for every fit (bench.R uploads every fit), so an
//     ordered fit pays for the ordering;
//   - reused: one handle, the first fit (which orders) left out;
// each the median of 6 fits' compute time (info.ms_compute), and whether
// the ordered fit is the plain one, bit for bit.  Then the ordering's parts
// on fresh handles (host clock around each, synchronised).
#include <algorithm>
#include <chrono>
#include <random>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include <cub/device/device_radix_sort.cuh>

#include "b_blobs.h"
#include "detail/engine.hpp"
#include "detail/fit.hpp"

using namespace gk;

namespace {

struct FitOut {
  std::vector<double> cen, wss;
  std::vector<int> cl;
  int iter = 0;
  double ms = 0;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

bool same_bits(const std::vector<double> &a, const std::vector<double> &b) {
  for (size_t e = 0; e < a.size(); ++e)
    if (!(a[e] == b[e] || (a[e] != a[e] && b[e] != b[e]))) return false;
  return true;
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A fresh handle of x (n x d, plain iterations as bench.R's); nullptr with
// the engine's message printed.
gk_cuda_data *upload_plain(const std::vector<double> &x, long long n, int d, int single) {
  gk_cuda_options o;
  memset(&o, 0, sizeof o);
  o.single = single;
  o.bounds = 1;
  gk_cuda_data *E = nullptr;
  char err[256];
  if (gk_cuda_upload(x.data(), n, d, &o, nullptr, &E, nullptr, nullptr, err, sizeof err)) {
    printf("%s\n", err);
    return nullptr;
  }
  return E;
}

// Host time (us) to enqueue work on s, and its device time between two
// events (us), after s is idle.
struct Enqueued {
  double host = 0, device = 0;
};
template <typename F>
Enqueued enqueued(cudaStream_t s, F work) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  cudaStreamSynchronize(s);
  const double h0 = now_ms();
  cudaEventRecord(a, s);
  work();
  cudaEventRecord(b, s);
  const double h1 = now_ms();
  cudaStreamSynchronize(s);
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return {1000 * (h1 - h0), 1000.0 * ms};
}

// cub's radix sort of n (key, row) pairs as the ordering runs it (random
// keys of `bits` bits in K), its double buffers and room.
template <typename K>
struct SortBuffers {
  long long n;
  int bits;
  K *kb = nullptr;
  int *rb = nullptr;
  void *tmp = nullptr;
  size_t bytes = 0;
  SortBuffers(long long n_, int bits_, int seed, cudaStream_t s) : n(n_), bits(bits_) {
    cudaMalloc(&kb, 2 * (size_t)n * sizeof(K));
    cudaMalloc(&rb, 2 * (size_t)n * sizeof(int));
    cub::DoubleBuffer<K> keys(kb, kb + n);
    cub::DoubleBuffer<int> rows(rb, rb + n);
    cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, rows, (int)n, 0, bits, s);
    cudaMalloc(&tmp, bytes);
    fill(seed);
  }
  ~SortBuffers() {
    cudaFree(tmp);
    cudaFree(kb);
    cudaFree(rb);
  }
  void fill(int seed) {
    std::vector<K> hk(n);
    std::mt19937 r2(seed);
    for (long long i = 0; i < n; ++i) hk[i] = (K)(r2() & ((1u << bits) - 1));
    cudaMemcpy(kb, hk.data(), n * sizeof(K), cudaMemcpyHostToDevice);
    cudaDeviceSynchronize();
  }
  void sort(cudaStream_t s) {
    cub::DoubleBuffer<K> keys(kb, kb + n);
    cub::DoubleBuffer<int> rows(rb, rb + n);
    cub::DeviceRadixSort::SortPairs(tmp, bytes, keys, rows, (int)n, 0, bits, s);
  }
};

// The sort by key type and bits: device time of a graph replay (no host in
// the way), the graph's node count (cub's launches and memsets), and host
// enqueue and device time of a direct call (median of 7).
template <typename K>
void sort_variant(long long n, int bits, cudaStream_t s) {
  SortBuffers<K> sb(n, bits, 7, s);
  std::vector<double> dh, dd, gd;
  size_t nodes = 0;
  for (int rep = 0; rep < 8; ++rep) {
    sb.fill(7);
    const Enqueued e = enqueued(s, [&] { sb.sort(s); });
    cudaStream_t cs;
    cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking);
    cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal);
    sb.sort(cs);
    cudaGraph_t g;
    cudaStreamEndCapture(cs, &g);
    cudaGraphGetNodes(g, nullptr, &nodes);
    cudaGraphExec_t gx;
    cudaGraphInstantiate(&gx, g, 0);
    sb.fill(7);
    const Enqueued r = enqueued(s, [&] { cudaGraphLaunch(gx, s); });
    cudaGraphExecDestroy(gx);
    cudaGraphDestroy(g);
    cudaStreamDestroy(cs);
    if (rep) {
      dh.push_back(e.host);
      dd.push_back(e.device);
      gd.push_back(r.device);
    }
  }
  printf("sort %zu-byte keys, %d bits, n=%lld: graph replay device %.1f us (%zu nodes); direct: host %.1f us, device "
         "%.1f us; temp %zu bytes\n",
         sizeof(K), bits, n, median(gd), nodes, median(dh), median(dd), sb.bytes);
}

int sorts(long long n) {
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  for (int bits : {16, 14, 12}) {
    sort_variant<unsigned int>(n, bits, s);
    sort_variant<unsigned short>(n, bits, s);
  }
  sort_variant<unsigned char>(n, 8, s);
  cudaStreamDestroy(s);
  return 0;
}

// An ordered 10-iteration fit on fresh handles, each kernel between CUDA
// events (device time, launches queued ahead): the ordering, each
// iteration's assignment and update, the within-SS (the labels put back);
// then the points each iteration moved.
int timeline(const std::vector<double> &x, const std::vector<double> &cen0, long long n, int d, int k) {
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) { printf("no device\n"); return 1; }
  printf("ordfit timeline | %s | n=%lld d=%d k=%d | us of device time, median of 6 fresh handles\n", prop.name, n,
         d, k);
  char err[256];
  setenv("GPUKMEANS_ORDER", "1", 1);
  const int iters = 10, ne = 3 + 2 * iters + 4;
  for (int single = 1; single >= 0; --single) {
    std::vector<std::vector<double>> t(ne - 1);
    std::vector<unsigned long long> moved(iters);
    for (int rep = 0; rep < 7; ++rep) {
      gk_cuda_data *E = upload_plain(x, n, d, single);
      if (!E) return 1;
      cudaStream_t s = E->stream;
      std::vector<double> cen = cen0;
      Fit f;
      if (begin_fit(E, k, iters, cen.data(), nullptr, f, err, sizeof err)) { printf("%s\n", err); return 1; }
      plan_delta(E, f.plan, s);
      std::vector<cudaEvent_t> ev(ne);
      for (auto &e : ev) cudaEventCreate(&e);
      cudaStreamSynchronize(s);
      int q = 0;
      cudaEventRecord(ev[q++], s);
      prepare_ordered(E, s);
      plan_ordered(E, k, f.plan);
      f.ord_first = f.plan.ordered;  // (the first iteration: labels unset, the copy made)
      cudaEventRecord(ev[q++], s);
      const bool record_moves = rep == 0;
      for (int it = 0; it < iters; ++it) {
        if (f.plan.ord_fused) f.iteration();  // (the update in the kernel: 'update' is the next event's gap)
        else f.assign_and_sum();
        cudaEventRecord(ev[q++], s);
        if (record_moves) {
          State hs;  // (on the fit's stream, which does not wait for the default one)
          cudaMemcpyAsync(&hs, f.w.st, sizeof hs, cudaMemcpyDeviceToHost, s);
          cudaStreamSynchronize(s);
          moved[it] = f.plan.ord_fused ? hs.last_changed : hs.changed;  // (fused: the update has run)
        }
        if (!f.plan.ord_fused) f.finalize();
        cudaEventRecord(ev[q++], s);
      }
      // the within-SS as the fit runs it (one kernel, or two passes), the
      // labels put back in row order
      f.withinss();
      cudaEventRecord(ev[q++], s);
      cudaEventRecord(ev[q++], s);
      cudaEventRecord(ev[q++], s);
      cudaStreamSynchronize(s);
      if (!f.plan.ordered) printf("(rows NOT ordered)\n");
      if (rep && !record_moves)
        for (int e = 0; e + 1 < q; ++e) {
          float ms = 0;
          cudaEventElapsedTime(&ms, ev[e], ev[e + 1]);
          t[e].push_back(1000.0 * ms);
        }
      for (auto &e : ev) cudaEventDestroy(e);
      gk_cuda_free(E);
    }
    printf("%s: ordering %.1f", single ? "single" : "double", median(t[0]));
    double assign = 0, update = 0;
    for (int it = 0; it < iters; ++it) {
      printf(" | it %d assign %.1f update %.1f (moved %llu)", it + 1, median(t[1 + 2 * it]), median(t[2 + 2 * it]),
             moved[it]);
      assign += median(t[1 + 2 * it]);
      update += median(t[2 + 2 * it]);
    }
    const int w = 1 + 2 * iters;
    printf(" | within-SS %.1f\n", median(t[w]));
    printf("%s: sums: assign %.1f update %.1f within-SS %.1f\n", single ? "single" : "double", assign, update,
           median(t[w]) + median(t[w + 1]) + median(t[w + 2]));
  }
  // the ordering: host time to enqueue it against its device time, and
  // cub's sort alone (device time, keys of 16 bits as the engine's), run
  // and replayed from a graph
  {
    std::vector<double> th, td, tsh, tsort, tcap, tinst, tl, tdev;
    for (int rep = 0; rep < 7; ++rep) {
      gk_cuda_options o;
      memset(&o, 0, sizeof o);
      o.single = 1;
      o.bounds = 1;
      gk_cuda_data *E = nullptr;
      if (gk_cuda_upload(x.data(), n, d, &o, nullptr, &E, nullptr, nullptr, err, sizeof err)) return 1;
      cudaStream_t s = E->stream;
      const Enqueued ord = enqueued(s, [&] { prepare_ordered(E, s); });
      SortBuffers<unsigned int> sb(n, 16, rep, s);
      const Enqueued srt = enqueued(s, [&] { sb.sort(s); });
      // the same sort captured (host: capture, instantiation), then replayed
      sb.fill(rep);
      cudaStream_t cs;
      cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking);
      const double h0 = now_ms();
      cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal);
      sb.sort(cs);
      cudaGraph_t g;
      cudaStreamEndCapture(cs, &g);
      const double h1 = now_ms();
      cudaGraphExec_t gx;
      cudaGraphInstantiate(&gx, g, 0);
      const double h2 = now_ms();
      const Enqueued rpl = enqueued(s, [&] { cudaGraphLaunch(gx, s); });
      cudaGraphExecDestroy(gx);
      cudaGraphDestroy(g);
      cudaStreamDestroy(cs);
      gk_cuda_free(E);  // (its stream, s, with it)
      if (rep) {
        th.push_back(ord.host);
        td.push_back(ord.device);
        tsh.push_back(srt.host);
        tsort.push_back(srt.device);
        tcap.push_back(1000 * (h1 - h0));
        tinst.push_back(1000 * (h2 - h1));
        tl.push_back(rpl.host);
        tdev.push_back(rpl.device);
      }
    }
    printf("ordering (single, fresh handle): host enqueue %.1f us, device %.1f us; cub sort alone: host enqueue %.1f "
           "us, device %.1f us\n",
           median(th), median(td), median(tsh), median(tsort));
    printf("cub sort in a graph: capture %.1f us, instantiate %.1f us (host); replay: enqueue %.1f us, device %.1f us\n",
           median(tcap), median(tinst), median(tl), median(tdev));
  }
  unsetenv("GPUKMEANS_ORDER");
  return 0;
}

// ordfit marks: where a fresh 10-iteration fit's device waits on the host.
// Only with an engine built through marks_apply.py (its gk_dev_mark hook; a
// weak symbol here, null without it): at each mark a CUDA event on the
// fit's stream and the host clock; per mark the median over 6 fresh handles
// of the device's time (us after the mark "ev0") and of the host's.
}  // namespace
extern "C" __attribute__((weak)) void (*gk_dev_mark)(cudaStream_t, const char *);
namespace {

struct Mark {
  const char *name;
  cudaEvent_t ev;
  double host;
};
std::vector<Mark> g_marks;
size_t g_used = 0;

void record_mark(cudaStream_t s, const char *name) {
  if (g_used == g_marks.size()) {
    Mark m{};
    cudaEventCreate(&m.ev);
    g_marks.push_back(m);
  }
  Mark &m = g_marks[g_used++];
  m.name = name;
  m.host = now_ms();
  cudaEventRecord(m.ev, s);
}

int marks(const std::vector<double> &x, const std::vector<double> &cen0, long long n, int d, int k, int iters) {
  if (!&gk_dev_mark) {
    printf("ordfit marks: the engine has no marks (tools/cuda-dev/marks_apply.py)\n");
    return 1;
  }
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  printf("ordfit marks | %s | n=%lld d=%d k=%d iter.max=%d | us after ev0, device / host, median of 6 fresh "
         "handles\n", prop.name, n, d, k, iters);
  char err[256];
  for (int single = 1; single >= 0; --single) {
    std::vector<std::vector<double>> dev, host;
    std::vector<const char *> names;
    std::vector<double> comp, up;
    for (int rep = 0; rep < 7; ++rep) {
      const double u0 = now_ms();
      gk_cuda_data *E = upload_plain(x, n, d, single);
      if (!E) return 1;
      cudaDeviceSynchronize();
      const double u1 = now_ms();
      std::vector<double> cen = cen0, wss(k);
      std::vector<int> cl(n), size(k);
      gk_cuda_fit_info info;
      g_used = 0;
      gk_dev_mark = record_mark;
      const int rc = gk_cuda_lloyd(E, k, iters, cen.data(), nullptr, cl.data(), size.data(), wss.data(), &info, err,
                                   sizeof err);
      gk_dev_mark = nullptr;
      if (rc) {
        printf("%s\n", err);
        return 1;
      }
      cudaDeviceSynchronize();
      if (rep) {
        if (dev.empty()) {
          dev.resize(g_used);
          host.resize(g_used);
          for (size_t i = 0; i < g_used; ++i) names.push_back(g_marks[i].name);
        }
        for (size_t i = 0; i < g_used && i < dev.size(); ++i) {
          float ms = 0;
          cudaEventElapsedTime(&ms, g_marks[0].ev, g_marks[i].ev);
          dev[i].push_back(1000.0 * ms);
          host[i].push_back(1000.0 * (g_marks[i].host - g_marks[0].host));
        }
        comp.push_back(1000.0 * info.ms_compute);
        up.push_back(1000.0 * (u1 - u0));
      }
      gk_cuda_free(E);
    }
    printf("%s: upload %.1f us, compute %.1f us |", single ? "single" : "double", median(up), median(comp));
    for (size_t i = 0; i < dev.size(); ++i) printf(" %s %.1f / %.1f |", names[i], median(dev[i]), median(host[i]));
    printf("\n");
  }
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  const long long n = argc > 1 ? atoll(argv[1]) : 1000000;
  const int d = 2, k = argc > 2 ? atoi(argv[2]) : 100;
  std::mt19937_64 rng(1);
  const std::vector<double> x = b_blobs(n, d, k, rng);
  const size_t kd = (size_t)k * d;
  std::vector<double> cen0(kd);
  for (int c = 0; c < k; ++c) {
    const long long i = (long long)(rng() % n);
    for (int j = 0; j < d; ++j) cen0[c + (size_t)k * j] = x[i + n * j];
  }
  if (argc > 3 && !strcmp(argv[3], "timeline")) return timeline(x, cen0, n, d, k);
  if (argc > 3 && !strcmp(argv[3], "sorts")) return sorts(n);
  if (argc > 3 && !strcmp(argv[3], "marks")) return marks(x, cen0, n, d, k, argc > 4 ? atoi(argv[4]) : 10);
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) { printf("no device\n"); return 1; }
  printf("ordfit | %s | n=%lld d=%d k=%d | ms of compute a fit, median of 6\n", prop.name, n, d, k);
  char err[256];
  auto upload = [&](int single) {
    gk_cuda_data *E = upload_plain(x, n, d, single);
    if (!E) exit(1);
    return E;
  };
  auto fit = [&](gk_cuda_data *E, int iters, FitOut &f) {
    f.cen = cen0;
    f.cl.assign(n, 0);
    std::vector<int> size(k);
    f.wss.assign(k, 0.0);
    gk_cuda_fit_info info;
    if (gk_cuda_lloyd(E, k, iters, f.cen.data(), nullptr, f.cl.data(), size.data(), f.wss.data(), &info, err,
                      sizeof err)) {
      printf("%s\n", err);
      exit(1);
    }
    f.iter = info.iter;
    f.ms = info.ms_compute;
  };
  for (int single = 1; single >= 0; --single)
    for (int iters : {1, 2, 10, 500}) {
      double fresh[2], reused[2];
      FitOut last[2];
      int used = 0;
      for (int ord = 0; ord < 2; ++ord) {
        setenv("GPUKMEANS_ORDER", ord ? "1" : "0", 1);
        std::vector<double> v;
        for (int rep = 0; rep < 7; ++rep) {
          gk_cuda_data *E = upload(single);
          fit(E, iters, last[ord]);
          if (ord) gk_cuda_order_stats(E, &used);
          if (rep) v.push_back(last[ord].ms);
          gk_cuda_free(E);
        }
        fresh[ord] = median(v);
        v.clear();
        gk_cuda_data *E = upload(single);
        for (int rep = 0; rep < 7; ++rep) {
          fit(E, iters, last[ord]);
          if (rep) v.push_back(last[ord].ms);
        }
        gk_cuda_free(E);
        reused[ord] = median(v);
      }
      unsetenv("GPUKMEANS_ORDER");
      const int it = std::min(last[0].iter, iters);
      const bool same = last[0].cl == last[1].cl && last[0].iter == last[1].iter &&
                        same_bits(last[0].cen, last[1].cen) && same_bits(last[0].wss, last[1].wss);
      printf("%s iter.max %3d (%3d run): as given fresh %.4f reused %.4f | ordered%s fresh %.4f reused %.4f | "
             "ms an iteration: %.4f / %.4f fresh, %.4f / %.4f reused | ordering ~%.3f ms | same fit %s\n",
             single ? "single" : "double", iters, it, fresh[0], reused[0], used ? "" : " (NOT USED)", fresh[1],
             reused[1], fresh[0] / it, fresh[1] / it, reused[0] / it, reused[1] / it, fresh[1] - reused[1],
             same ? "yes" : "NO");
    }
  // a 10-iteration fit's parts as gk_cuda_lloyd runs them, on a fresh handle
  // (host clock, each part synchronised: its host work and its device work)
  for (int single = 1; single >= 0; --single)
    for (int ord = 0; ord < 2; ++ord) {
      setenv("GPUKMEANS_ORDER", ord ? "1" : "0", 1);
      const char *names[] = {"begin_fit", "plans", "ordering", "iteration 1", "iterations 2-10", "-",
                             "within-SS (+ labels back)"};
      std::vector<std::vector<double>> t(7);
      for (int rep = 0; rep < 7; ++rep) {
        gk_cuda_data *E = upload(single);
        cudaStream_t s = E->stream;
        std::vector<double> cen = cen0;
        Fit f;
        double t0 = now_ms();
        if (begin_fit(E, k, 10, cen.data(), nullptr, f, err, sizeof err)) { printf("%s\n", err); return 1; }
        cudaStreamSynchronize(s);
        double t1 = now_ms();
        PersistentPlan pp;
        plan_persistent(E, k, pp);
        plan_delta(E, f.plan, s);
        const bool want = ordered_wanted(E, k, 10, f.plan);
        cudaStreamSynchronize(s);
        double t2 = now_ms();
        if (want) {
          prepare_ordered(E, s);
          plan_ordered(E, k, f.plan);
          f.ord_first = f.plan.ordered;
        }
        cudaStreamSynchronize(s);
        double t3 = now_ms();
        f.iteration();
        cudaStreamSynchronize(s);
        double t4 = now_ms();
        for (int it = 1; it < 10; ++it) f.iteration();
        cudaStreamSynchronize(s);
        double t5 = now_ms();
        // (the within-SS of ordered rows puts their labels back: Fit::withinss)
        double t6 = now_ms();
        f.withinss();
        cudaStreamSynchronize(s);
        double t7 = now_ms();
        const double tt[8] = {t0, t1, t2, t3, t4, t5, t6, t7};
        if (rep)
          for (int p = 0; p < 7; ++p) t[p].push_back(tt[p + 1] - tt[p]);
        gk_cuda_free(E);
      }
      printf("%s, %s: a 10-iteration fit's parts, ms (median of 6, fresh handles):", single ? "single" : "double",
             ord ? "ordered" : "as given");
      for (int p = 0; p < 7; ++p) printf(" %s %.4f", names[p], median(t[p]));
      printf("\n");
    }
  unsetenv("GPUKMEANS_ORDER");
  // the ordering's parts on fresh handles, host clock, synchronised
  for (int single = 1; single >= 0; --single) {
    std::vector<double> t;
    for (int rep = 0; rep < 7; ++rep) {
      gk_cuda_data *E = upload(single);
      cudaStream_t s = E->stream;
      cudaStreamSynchronize(s);
      const double t0 = now_ms();
      if (prepare_ordered(E, s) != cudaSuccess) { printf("prepare_ordered failed\n"); return 1; }
      cudaStreamSynchronize(s);
      if (rep) t.push_back(now_ms() - t0);
      gk_cuda_free(E);
    }
    printf("%s: prepare_ordered on a fresh handle %.3f ms\n", single ? "single" : "double", median(t));
  }
  {
    std::vector<double> tm, tf, ta, tc;
    const size_t bytes = (size_t)n * 16;
    cudaStream_t s;
    cudaStreamCreate(&s);
    for (int rep = 0; rep < 7; ++rep) {
      void *p = nullptr;
      double t0 = now_ms();
      cudaMalloc(&p, bytes);
      double t1 = now_ms();
      cudaFree(p);
      double t2 = now_ms();
      cudaMallocAsync(&p, bytes, s);
      cudaFreeAsync(p, s);
      cudaStreamSynchronize(s);
      double t3 = now_ms();
      unsigned int h[4] = {0, 1, 2, 3};
      void *q = nullptr;
      cudaMalloc(&q, 256);
      double t4 = now_ms();
      cudaMemcpyAsync(q, h, sizeof h, cudaMemcpyHostToDevice, s);
      double t5 = now_ms();
      cudaFree(q);
      if (rep) {
        tm.push_back(t1 - t0);
        tf.push_back(t2 - t1);
        ta.push_back(t3 - t2);
        tc.push_back(t5 - t4);
      }
    }
    std::vector<double> tg, ts;
    unsigned int *kb;
    int *rb;
    cudaMalloc(&kb, 2 * (size_t)n * sizeof(unsigned int));
    cudaMalloc(&rb, 2 * (size_t)n * sizeof(int));
    for (int rep = 0; rep < 7; ++rep) {
      size_t fb = 0, tb = 0;
      double t0 = now_ms();
      cudaMemGetInfo(&fb, &tb);
      double t1 = now_ms();
      cub::DoubleBuffer<unsigned int> keys(kb, kb + n);
      cub::DoubleBuffer<int> rows(rb, rb + n);
      size_t cb = 0;
      cub::DeviceRadixSort::SortPairs(nullptr, cb, keys, rows, (int)n, 0, 16, s);
      void *ct = nullptr;
      cudaMalloc(&ct, cb);
      cudaStreamSynchronize(s);
      double t2 = now_ms();
      cub::DeviceRadixSort::SortPairs(ct, cb, keys, rows, (int)n, 0, 16, s);
      cudaStreamSynchronize(s);
      double t3 = now_ms();
      cudaFree(ct);
      if (rep) {
        tg.push_back(t1 - t0);
        ts.push_back(t3 - t2);
      }
    }
    cudaFree(kb);
    cudaFree(rb);
    printf("parts: cudaMemGetInfo %.3f ms, cub radix sort of n (key, row), 16 bits, synchronised %.3f ms\n", median(tg),
           median(ts));
    printf("parts: cudaMalloc %zu MB %.3f ms, cudaFree %.3f ms, pool alloc+free+sync %.3f ms, 16-byte pageable copy "
           "%.3f ms\n",
           bytes >> 20, median(tm), median(tf), median(ta), median(tc));
    cudaStreamDestroy(s);
  }
  return 0;
}
