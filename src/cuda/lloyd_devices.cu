// lloyd_devices.cu: gk_cuda_lloyd_devices, Lloyd's algorithm over several
// handles that each hold a contiguous block of the rows (one per GPU of
// gpu_kmeans(device = c(0, 1)); or several on one GPU), as one fit.
//
// Each handle runs the iterations of a fit on its own device (detail/fit.hpp:
// the same kernels, the certified double filter, distance bounds) and the
// host never stands between two of them: after each assignment step the
// devices copy each other's fixed-point sums, counts and changed count
// (cudaMemcpyPeerAsync, ordered by events), and each adds them all up
// (k_merge_parts) before its update.  The sums are exact, so every device
// computes the centers of the whole data, the same bits as one device
// holding all the rows; labels, iterations and the choice of bounded
// iterations follow from them.  The host reads the devices' states once per
// batch, as on one device, to stop, to poll for an interrupt and to switch
// between plain and bounded iterations for all devices at once.
#include <algorithm>
#include <chrono>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "detail/fit.hpp"
#include "../parity.h"
#include "../for_each_part.h"

using namespace gk;

namespace {

// The sums of all the parts, on one device: its own (acc, counts,
// st->changed) plus the other parts' copies in `inbox` (peers of them, each
// `stride` words: acc 2kd words | counts k unsigned ints | changed 1 word),
// into gacc / gcnt (what the update reads) and st->changed.  Modulo 2^128
// the order of the additions does not matter: exact.  clear: the part's own
// sums are zeroed (plain iterations sum from scratch, unless they carry
// their sums, Plan::delta; bounded ones add each iteration's moves to what
// they hold).  One block adds up `changed`.
__global__ void k_merge_parts(State *st, int max_iter, u64 *__restrict__ acc, unsigned int *__restrict__ counts,
                              const u64 *__restrict__ inbox, int peers, size_t stride, int k, size_t kd,
                              u64 *__restrict__ gacc, unsigned int *__restrict__ gcnt, int clear) {
  if (fit_finished(st, max_iter)) return;
  const size_t step = (size_t)gridDim.x * blockDim.x;
  for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < kd; e += step) {
    u64 lo = acc[2 * e], hi = acc[2 * e + 1];
    for (int p = 0; p < peers; ++p) {
      const u64 a = inbox[p * stride + 2 * e], b = inbox[p * stride + 2 * e + 1];
      const u64 s = lo + a;
      hi += b + (s < lo ? 1ULL : 0ULL);
      lo = s;
    }
    gacc[2 * e] = lo;
    gacc[2 * e + 1] = hi;
    if (clear) acc[2 * e] = acc[2 * e + 1] = 0;
  }
  for (size_t c = (size_t)blockIdx.x * blockDim.x + threadIdx.x; c < (size_t)k; c += step) {
    unsigned int t = counts[c];
    for (int p = 0; p < peers; ++p) t += ((const unsigned int *)(inbox + p * stride + 2 * kd))[c];
    gcnt[c] = t;
    if (clear) counts[c] = 0;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    u64 ch = st->changed;
    for (int p = 0; p < peers; ++p) ch += inbox[p * stride + stride - 1];
    st->changed = ch;
  }
}

// Words of one part's copy in another's inbox.
size_t inbox_stride(int k, int d) { return 2 * (size_t)k * d + ((size_t)k + 1) / 2 + 1; }

// What one part holds for the length of a fit, beside its handle: the fit,
// its events, the inbox and the sums of all parts (one allocation).
struct Part {
  gk_cuda_data *D = nullptr;
  Fit f;
  BoundsBufs bb;
  cudaEvent_t assigned = nullptr;  // its step's sums are ready to be copied
  cudaEvent_t copied = nullptr;    // it has copied the others' sums
  u64 *inbox = nullptr, *gacc = nullptr;
  unsigned int *gcnt = nullptr;
  void *mem = nullptr;
  State hs;

  ~Part() {
    if (!D) return;
    cudaSetDevice(D->device);
    if (mem) cudaFree(mem);
    if (assigned) cudaEventDestroy(assigned);
    if (copied) cudaEventDestroy(copied);
  }
};

// dst (host) <- src (the part's device), after all enqueued on the part's
// stream (non-blocking: a plain cudaMemcpy would not wait for it).
cudaError_t fetch(const Part &a, void *dst, const void *src, size_t bytes) {
  cudaError_t e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, a.f.s);
  return e != cudaSuccess ? e : cudaStreamSynchronize(a.f.s);
}

int check_parts(gk_cuda_data *const *parts, int count, int k, int max_iter, const double *centers,
                const gk_cuda_callbacks *cb, char *err, size_t errlen) {
  if (!parts || count < 1 || !centers || k < 1 || max_iter < 1 || (cb && cb->on_iteration)) {
    set_msg(err, errlen, "gk_cuda_lloyd_devices: invalid arguments (%d parts, k = %d, max_iter = %d)", count, k,
            max_iter);
    return GK_CUDA_INVALID;
  }
  for (int p = 0; p < count; ++p) {
    const gk_cuda_data *D = parts[p];
    if (!D || D->src || D->weighted || D->d != parts[0]->d || D->single != parts[0]->single ||
        D->shift != parts[0]->shift) {
      set_msg(err, errlen, "gk_cuda_lloyd_devices: part %d is not a resident, unweighted block of the same data", p);
      return GK_CUDA_INVALID;
    }
  }
  return GK_CUDA_OK;
}

// One iteration on every part: the assignment (bounded or plain), the
// exchange of the sums, their merge and the update.
int enqueue_iteration(std::vector<Part> &P, bool bounded, bool first, char *err, size_t errlen) {
  const int count = (int)P.size();
  const int k = P[0].f.k, d = P[0].D->d;
  const size_t kd = (size_t)k * d, stride = inbox_stride(k, d);
  for (Part &a : P) {
    const Fit &f = a.f;
    GK_CHECK(cudaSetDevice(a.D->device), "selecting the CUDA device");
    if (bounded) GK_CHECK(launch_bounds_assign(a.D, f.plan, k, f.w, a.bb, first, f.max_iter, f.scale, f.s),
                          "bounded iterations");
    else GK_CHECK(f.assign_and_sum(), "assignment step");
    GK_CHECK(cudaEventRecord(a.assigned, f.s), "recording an event");
  }
  for (int q = 0; q < count; ++q) {
    Part &a = P[q];
    GK_CHECK(cudaSetDevice(a.D->device), "selecting the CUDA device");
    int slot = 0;
    for (int p = 0; p < count; ++p) {
      if (p == q) continue;
      const Part &b = P[p];
      u64 *in = a.inbox + slot++ * stride;
      GK_CHECK(cudaStreamWaitEvent(a.f.s, b.assigned, 0), "waiting for another device");
      GK_CHECK(cudaMemcpyPeerAsync(in, a.D->device, b.f.w.acc, b.D->device, 2 * kd * sizeof(u64), a.f.s),
               "copying sums between devices");
      GK_CHECK(cudaMemcpyPeerAsync(in + 2 * kd, a.D->device, b.f.w.counts, b.D->device, k * sizeof(unsigned int),
                                   a.f.s),
               "copying counts between devices");
      GK_CHECK(cudaMemcpyPeerAsync(in + stride - 1, a.D->device, &b.f.w.st->changed, b.D->device, sizeof(u64), a.f.s),
               "copying changed counts between devices");
    }
    GK_CHECK(cudaEventRecord(a.copied, a.f.s), "recording an event");
  }
  for (int p = 0; p < count; ++p) {
    Part &a = P[p];
    const Fit &f = a.f;
    GK_CHECK(cudaSetDevice(a.D->device), "selecting the CUDA device");
    // (its own sums change only once every other part has copied them)
    for (int q = 0; q < count; ++q)
      if (q != p) GK_CHECK(cudaStreamWaitEvent(f.s, P[q].copied, 0), "waiting for another device");
    const unsigned int grid = (unsigned int)std::max<size_t>(1, std::min<size_t>((kd + 255) / 256, 4 * (size_t)a.D->sms));
    k_merge_parts<<<grid, 256, 0, f.s>>>(f.w.st, f.max_iter, f.w.acc, f.w.counts, a.inbox, count - 1, stride, k, kd,
                                         a.gacc, a.gcnt, bounded || f.plan.delta ? 0 : 1);
    GK_CHECK(cudaGetLastError(), "adding up the sums of the devices");
    if (bounded)
      GK_CHECK(launch_bounds_update(a.D, f.plan, k, f.w, a.bb, a.gacc, a.gcnt, f.max_iter, f.scale, f.s),
               "bounded iterations");
    else
      GK_CHECK(f.finalize_from(a.gacc, a.gcnt), "update step");
  }
  return GK_CUDA_OK;
}

// Every part's state into its hs (after the batch enqueued before).
int read_states(std::vector<Part> &P, char *err, size_t errlen) {
  for (Part &a : P) {
    GK_CHECK(cudaSetDevice(a.D->device), "selecting the CUDA device");
    GK_CHECK(cudaMemcpyAsync(&a.hs, a.f.w.st, sizeof(State), cudaMemcpyDeviceToHost, a.f.s), "reading the state");
  }
  for (Part &a : P) {
    GK_CHECK(cudaSetDevice(a.D->device), "selecting the CUDA device");
    GK_CHECK(cudaStreamSynchronize(a.f.s), "iterations");
  }
  return GK_CUDA_OK;
}

int interrupted(char *err, size_t errlen) {
  set_msg(err, errlen, "interrupted");
  return GK_CUDA_INTERRUPTED;
}

// The iterations, in batches, as run_graphs on one device (lloyd.cu) but
// without graphs: plain ones until few points change, then bounded ones
// while they pay (BoundsPolicy), on every part at once.
int run_iterations(std::vector<Part> &P, long long rows, const gk_cuda_callbacks *cb, std::vector<double> *profile,
                   char *err, size_t errlen) {
  const Fit &f0 = P[0].f;
  const int k = f0.k, max_iter = f0.max_iter;
  // (plain batches as long as those of the largest part)
  const Part *big = &P[0];
  for (const Part &a : P)
    if (a.D->n > big->D->n) big = &a;
  const int bsz = P[0].D->opts.bounds == 2 ? 1 : batch_size(big->D, k, max_iter);
  bool may_bound = true;
  for (const Part &a : P) may_bound = may_bound && bounds_wanted(a.D, k, rows);
  BoundsSwitch sw(BoundsPolicy(P[0].D, f0), (double)rows, max_iter, may_bound);
  int launched = 0;
  while (launched < max_iter) {
    const int b = std::min(sw.batch(bsz), max_iter - launched);
    for (int it = 0; it < b; ++it) {
      const bool first = sw.launched(launched + it, b);
      int st = enqueue_iteration(P, sw.bounded(), first, err, errlen);
      if (st != GK_CUDA_OK) return st;
    }
    launched += b;
    int st = read_states(P, err, errlen);
    if (st != GK_CUDA_OK) return st;
    if (cb && cb->interrupt && cb->interrupt(cb->ctx)) return interrupted(err, errlen);
    const State &hs = P[0].hs;  // (the same flags and counts on every part: all add up the same sums)
    if (hs.flag) break;
    double active = 0;
    for (const Part &a : P) active += (double)a.hs.active_sum;
    const BoundsSwitch::Move move = sw.next((double)hs.last_changed, active);
    if (move == BoundsSwitch::Move::kEnter) {
      bool room = true;
      if (!sw.has_buffers()) {
        for (Part &a : P) {
          GK_CHECK(cudaSetDevice(a.D->device), "selecting the CUDA device");
          if (!bounds_buffers(a.D, k, a.f.s, a.bb)) room = false;
        }
      }
      if (room) {
        sw.enter();
        for (Part &a : P) {
          GK_CHECK(cudaSetDevice(a.D->device), "selecting the CUDA device");
          GK_CHECK(a.f.sums_entering_bounds(), "clearing sums");
        }
      } else {
        sw.refuse();  // no room on some device: plain iterations throughout
      }
      continue;
    }
    if (!sw.bounded()) continue;
    if (move == BoundsSwitch::Move::kLeave) sw.leave();
    for (Part &a : P) {
      GK_CHECK(cudaSetDevice(a.D->device), "selecting the CUDA device");
      if (move == BoundsSwitch::Move::kLeave) {
        GK_CHECK(a.f.sums_leaving_bounds(), "back to plain iterations");
      } else {
        GK_CHECK(cudaMemsetAsync(&a.f.w.st->active_sum, 0, sizeof(u64), a.f.s), "clearing a counter");
      }
    }
  }
  // the share of points computed in each iteration run (all parts together)
  const int done = P[0].hs.iter_done, iters = std::min<int>(done, kBoundsHist);
  std::vector<u64> sum;
  if (sw.any_bounded(iters)) {
    std::vector<u64> h(iters);
    sum.assign(iters, 0);
    for (Part &a : P) {
      GK_CHECK(cudaSetDevice(a.D->device), "selecting the CUDA device");
      GK_CHECK(fetch(a, h.data(), a.bb.hist, iters * sizeof(u64)), "reading counts");
      for (int it = 0; it < iters; ++it) sum[it] += h[it];
    }
  }
  *profile = sw.profile(done, sum);
  return GK_CUDA_OK;
}

// Within-SS and sizes of the final labels over all parts, in the two passes
// of a step (the largest term of each cluster over all parts sets its scale).
int withinss_all(std::vector<Part> &P, int *size, double *withinss, char *err, size_t errlen) {
  const int k = P[0].f.k;
  std::vector<unsigned int> maxterm(k, 0), m(k), cnt(k);
  std::vector<u64> w(2 * (size_t)k);
  std::vector<Fixed128> sum(k, Fixed128{0, 0});
  std::vector<long long> sizes(k, 0);
  for (int pass = 0; pass < 2; ++pass) {
    for (Part &a : P) {
      const Fit &f = a.f;
      GK_CHECK(cudaSetDevice(a.D->device), "selecting the CUDA device");
      if (pass == 1)
        GK_CHECK(cudaMemcpyAsync(f.w.wmax, maxterm.data(), k * sizeof(unsigned int), cudaMemcpyHostToDevice, f.s),
                 "copying within-SS maxima");
      GK_CHECK(launch_withinss_pass(a.D, f.plan, pass, a.D->labels, f.w.cen_d, k, f.w.wmax, f.w.wacc, f.w.wcnt, f.s,
                                    true, f.plan.withinss_terms()),
               "within-SS");
    }
    for (Part &a : P) {
      const Fit &f = a.f;
      GK_CHECK(cudaSetDevice(a.D->device), "selecting the CUDA device");
      if (pass == 0) {
        GK_CHECK(fetch(a, m.data(), f.w.wmax, k * sizeof(unsigned int)), "within-SS");
        for (int c = 0; c < k; ++c) maxterm[c] = std::max(maxterm[c], m[c]);
      } else {
        GK_CHECK(fetch(a, w.data(), f.w.wacc, 2 * (size_t)k * sizeof(u64)), "within-SS");
        GK_CHECK(fetch(a, cnt.data(), f.w.wcnt, k * sizeof(unsigned int)), "sizes");
        for (int c = 0; c < k; ++c) {
          add_fixed(sum[c], Fixed128{w[2 * c], w[2 * c + 1]});
          sizes[c] += cnt[c];
        }
      }
    }
  }
  for (int c = 0; c < k; ++c) {
    if (size) size[c] = (int)sizes[c];
    if (withinss) withinss[c] = from_fixed(sum[c].lo, sum[c].hi, wss_scale(maxterm[c]));
  }
  return GK_CUDA_OK;
}

// Every part's labels (1-based) into its rows of cluster, the parts at once.
int download_labels(std::vector<Part> &P, int *cluster, char *err, size_t errlen) {
  const int count = (int)P.size();
  std::vector<int> status(count, GK_CUDA_OK);
  std::vector<std::vector<char>> msg(count, std::vector<char>(errlen > 0 ? errlen : 1, 0));
  std::vector<long long> lo(count + 1, 0);
  for (int p = 0; p < count; ++p) lo[p + 1] = lo[p] + P[p].D->n;
  auto one = [&](int p) {
    char *e = msg[p].data();
    const size_t el = msg[p].size();
    Part &a = P[p];
    cudaError_t ce = cudaSetDevice(a.D->device);
    if (ce == cudaSuccess) ce = launch_plus_one(a.D->labels, a.D->n, a.f.s);
    if (ce != cudaSuccess) {
      status[p] = fail(ce, "1-based labels", e, el);
      return;
    }
    status[p] = staged_download(a.D, a.D->labels, cluster + lo[p], a.D->n, 0, a.f.s, e, el);
  };
  for_each_part(count, one);  // (one() reports by status, never throws)
  for (int p = 0; p < count; ++p)
    if (status[p] != GK_CUDA_OK) {
      if (errlen > 0) snprintf(err, errlen, "%s", msg[p].data());
      return status[p];
    }
  return GK_CUDA_OK;
}

}  // namespace

// The device pairs (a, b) whose kernels on a may take b's memory, enabled
// by this process (enable_peers).
namespace {
std::mutex peer_lock;
std::set<std::pair<int, int>> peer_enabled;
}  // namespace

// Peer access between the parts' devices where the hardware has it (the
// copies then go device to device; without it the runtime routes them
// through the host, slower but the same bytes).  Once per pair and process:
// enabling it again is an error of the runtime (harmless, but
// compute-sanitizer reports it).
void gk::enable_peers(gk_cuda_data *const *parts, int count) {
  std::lock_guard<std::mutex> hold(peer_lock);
  for (int p = 0; p < count; ++p)
    for (int q = 0; q < count; ++q) {
      const int a = parts[p]->device, b = parts[q]->device;
      int can = 0;
      if (a == b || peer_enabled.count({a, b}) || cudaDeviceCanAccessPeer(&can, a, b) != cudaSuccess || !can)
        continue;
      if (cudaSetDevice(a) != cudaSuccess) continue;
      const cudaError_t e = cudaDeviceEnablePeerAccess(b, 0);
      if (e == cudaSuccess || e == cudaErrorPeerAccessAlreadyEnabled) peer_enabled.insert({a, b});
      cudaGetLastError();  // (refused: the copies still work, and reaches() says so)
    }
}

bool gk::reaches(int a, int b) {
  std::lock_guard<std::mutex> hold(peer_lock);
  return a == b || (peer_enabled.count({a, b}) && peer_enabled.count({b, a}));
}

int gk::check_together(gk_cuda_data *const *parts, int count, const char *what, long long *n, char *err,
                       size_t errlen) {
  for (int p = 0; p < count; ++p)
    if (!parts[p]) {
      set_msg(err, errlen, "%s: part %d missing", what, p);
      return GK_CUDA_INVALID;
    }
  if (count > kMaxTogether) {
    set_msg(err, errlen, "%s: more than %d parts", what, kMaxTogether);
    return GK_CUDA_UNSUPPORTED;
  }
  enable_peers(parts, count);
  *n = 0;
  for (int p = 0; p < count; ++p) {
    const gk_cuda_data *D = parts[p];
    if (!D->x || D->src || D->weighted || D->d != parts[0]->d || D->single != parts[0]->single) {
      set_msg(err, errlen, "%s: part %d is not a resident, unweighted block of the data", what, p);
      return GK_CUDA_UNSUPPORTED;
    }
    if (p + 1 < count && D->n % GK_SUM_ARITY != 0) {
      set_msg(err, errlen, "%s: part %d does not hold whole nodes of the sum trees", what, p);
      return GK_CUDA_UNSUPPORTED;
    }
    if (!reaches(parts[0]->device, D->device)) {
      set_msg(err, errlen, "%s: devices %d and %d cannot access each other's memory", what, parts[0]->device,
              D->device);
      return GK_CUDA_UNSUPPORTED;
    }
    *n += D->n;
  }
  return GK_CUDA_OK;
}

extern "C" int gk_cuda_lloyd_devices(gk_cuda_data *const *parts, int count, int k, int max_iter, double *centers,
                                     const gk_cuda_callbacks *cb, int *cluster, int *size, double *withinss,
                                     gk_cuda_fit_info *info, char *err, size_t errlen) {
  int st = check_parts(parts, count, k, max_iter, centers, cb, err, errlen);
  if (st != GK_CUDA_OK) return st;
  if (info) memset(info, 0, sizeof(*info));
  const auto t0 = std::chrono::steady_clock::now();
  const int d = parts[0]->d;
  long long rows = 0;
  // the scales of the sums from the maxima of all the rows (those of one
  // device holding them all)
  std::vector<int> scale(d);
  for (int j = 0; j < d; ++j) {
    double m = 0;
    for (int p = 0; p < count; ++p) m = std::max(m, parts[p]->maxabs[j]);
    scale[j] = limb_scale(m);
  }
  enable_peers(parts, count);
  std::vector<Part> P(count);
  const size_t stride = inbox_stride(k, d), kd = (size_t)k * d;
  for (int p = 0; p < count; ++p) {
    Part &a = P[p];
    a.D = parts[p];
    rows += a.D->n;
    GK_CHECK(cudaSetDevice(a.D->device), "selecting the CUDA device");
    st = begin_fit(a.D, k, max_iter, centers, scale.data(), a.f, err, errlen);
    if (st != GK_CUDA_OK) return st;
    GK_CHECK(plan_delta(a.D, a.f.plan, a.f.s), "planning the sums");
    GK_CHECK(cudaEventCreateWithFlags(&a.assigned, cudaEventDisableTiming), "creating an event");
    GK_CHECK(cudaEventCreateWithFlags(&a.copied, cudaEventDisableTiming), "creating an event");
    const size_t words = (size_t)std::max(count - 1, 1) * stride + 2 * kd + ((size_t)k + 1) / 2;
    cudaError_t e = cudaMalloc(&a.mem, words * sizeof(u64));
    if (e == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      a.mem = nullptr;
      set_msg(err, errlen, "the sums of %d devices need %.2f GiB on device %d, which is not free", count,
              gib((double)words * sizeof(u64)), a.D->device);
      return GK_CUDA_OUT_OF_MEMORY;
    }
    GK_CHECK(e, "allocating the sums of the devices");
    a.inbox = (u64 *)a.mem;
    a.gacc = a.inbox + (size_t)std::max(count - 1, 1) * stride;
    a.gcnt = (unsigned int *)(a.gacc + 2 * kd);
  }
  std::vector<double> prof;
  st = run_iterations(P, rows, cb, &prof, err, errlen);
  if (st != GK_CUDA_OK) return st;
  st = withinss_all(P, size, withinss, err, errlen);
  if (st != GK_CUDA_OK) return st;
  // the centers (the same on every part) and the iterations
  const Part &a0 = P[0];
  GK_CHECK(cudaSetDevice(a0.D->device), "selecting the CUDA device");
  std::vector<double> cen(kd);
  GK_CHECK(fetch(a0, cen.data(), a0.f.w.cen_d, kd * sizeof(double)), "copying centers");
  for (int j = 0; j < d; ++j)
    for (int c = 0; c < k; ++c) centers[c + (size_t)k * j] = cen[c + (size_t)k * j] + a0.D->shift[j];
  const auto t1 = std::chrono::steady_clock::now();
  if (cluster) {
    st = download_labels(P, cluster, err, errlen);
    if (st != GK_CUDA_OK) return st;
  }
  const auto t2 = std::chrono::steady_clock::now();
  // the filter's counts (points listed for exact distances) and the grid's
  // of every part
  long long listed = 0, every = 0, filtered = 0, grid_seen = 0, grid_served = 0, sums_added = 0;
  int used = 0;
  for (Part &a : P) {
    sums_added += (long long)a.hs.sums_added;
    grid_seen += (long long)a.hs.grid_seen;
    grid_served += (long long)a.hs.grid_served;
    // the small-d filter's counts, in the state read after the last batch
    // (each of its iterations ran the part's rows)
    if (a.hs.df_points) {
      listed += (long long)a.hs.df_exact;
      every += (long long)a.hs.df_exact;
      filtered = std::max(filtered, (long long)(a.hs.df_points / (u64)a.D->n));
      used = 1;
    }
    if (!a.f.df.on) continue;
    unsigned long long dft[3] = {0, 0, 0};
    GK_CHECK(cudaSetDevice(a.D->device), "selecting the CUDA device");
    GK_CHECK(fetch(a, dft, a.f.df.tot, sizeof dft), "copying the filter's counts");
    listed += (long long)dft[0];
    every += (long long)dft[2];
    filtered = std::max(filtered, (long long)dft[1]);
    used = 1;
  }
  for (Part &a : P) {  // (each handle says what the fit did over all the rows: gk_cuda_fit_profile, ..._dfilter_stats, ..._grid_stats)
    a.D->grid_seen = grid_seen;
    a.D->grid_served = grid_served;
    a.D->sums_iters = (long long)P[0].hs.sums_iters;  // (the same on every part)
    a.D->sums_added = sums_added;
    a.D->df_exact = listed;
    a.D->df_every = every;
    a.D->df_iters = filtered;
    a.D->df_used = used;
    a.D->profile = prof;
  }
  if (info) {
    const State &hs = P[0].hs;
    info->iter = hs.flag ? hs.conv_iter : max_iter + 1;
    info->ms_compute = std::chrono::duration<double, std::milli>(t1 - t0).count();
    info->ms_download = std::chrono::duration<double, std::milli>(t2 - t1).count();
  }
  return GK_CUDA_OK;
}
