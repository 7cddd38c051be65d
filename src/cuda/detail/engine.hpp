// detail/engine.hpp: the engine's internal host API shared by the .cu files.
//
// The public C interface (gk_cuda.h) is implemented on top of these pieces:
//   device_data.cu  upload, free, totss, column maxima (owns gk_cuda_data)
//   assign.cu       assignment kernels + predict (gk_cuda_assign)
//   update.cu       centroid sums, finalize, within-SS
//   persistent.cu   whole iterations in one cooperative kernel (small n, d)
//   lloyd.cu        the Lloyd loop (batches in CUDA graphs), gk_cuda_lloyd
//   step.cu         one assignment step with partial sums (gk_cuda_step ...)
//   init_pp.cu      greedy k-means++ (gk_cuda_greedy)
//   init_par.cu     the k-means|| rounds (gk_cuda_par_*)
//   device_info.cu  gk_cuda_get_info, gk_cuda_get_device
//   staged_copy.cu  the upload of x through pinned staging buffers
// Each kernel is launched from the translation unit that defines it; the
// others call the host wrappers declared here.
#ifndef GPUKMEANS_DETAIL_ENGINE_HPP
#define GPUKMEANS_DETAIL_ENGINE_HPP

#include <functional>
#include <initializer_list>
#include <utility>
#include <vector>

#include "common.cuh"
#include "init_bound.cuh"
#include "weight_fixed.cuh"

namespace gk {
namespace init {
struct ParState;  // k-means|| rounds in progress (init_par.cu)
void destroy_par_state(ParState *p);
}  // namespace init
struct StreamSource;  // x streamed from host memory (streamed.cu)
class HostTeam;       // host threads of the staged copies (detail/host_team.hpp)
struct StagingBuffers;  // the pinned buffers of the staged copies (staged_copy.cu)
struct PutRows;         // what gk_cuda_put_rows keeps between blocks (staged_copy.cu)
// The handle's staging buffers, freed or kept for the next handle on the
// device (staged_copy.cu).
void release_staging(StagingBuffers *b, int device);
void destroy_stream_source(StreamSource *s);
}  // namespace gk

// The opaque handle of gk_cuda.h.
struct gk_cuda_data {
  int device = 0;
  long long n = 0;
  int d = 0;
  int single = 0;
  gk_cuda_options opts = {};  // as given at upload (kernel choices)
  void *x = nullptr;            // n x d column-major, double or float (inside block);
                                // nullptr when x is streamed (src below)
  int sms = 1;                  // multiprocessors of the device
  int cc_major = 0, cc_minor = 0;  // the device's compute capability (new_handle)
  bool pdl = false;             // programmatic dependent launches (launch_kernel): sm_90+, GPUKMEANS_PDL not 0
  size_t smem_optin = 48 * 1024;  // dynamic shared memory a block may have (see smem_limit)
  // One device allocation made at upload: x | labels (n ints, the fits'
  // labels) | d_scale | small scratch.  Freed by gk_cuda_free.
  void *block = nullptr;
  int *labels = nullptr;
  unsigned long long *scratch = nullptr;  // 2d + 2 words (totss) + d (column maxima)
  double *d_mean = nullptr;               // d column means (totss)
  double totss = 0;                       // computed at upload
  // The column means of x (column_sum.h), added up by the staged upload as
  // it copied x; empty when the upload did not (gk_cuda_column_means).
  std::vector<double> host_means;
  // x made contiguous, where it was given as a block of a larger matrix
  // (opts.ld) and its upload needs one: streamed x reads it for as long as
  // the handle lives.
  std::vector<double> host_x;
  gk::StagingBuffers *staging = nullptr;  // made at the first staged copy (staged_copy.cu)
  unsigned long long staged_next = 0;     // the staging buffer gk_cuda_put_rows fills next (of its count)
  gk::PutRows *put = nullptr;             // its column sums, from the first block to gk_cuda_finish_rows
  // Per-handle stream and timing events (created at upload).
  cudaStream_t stream = nullptr;
  cudaEvent_t ev0 = nullptr, ev1 = nullptr;
  // Fit workspace, O(k d), grown on demand, reused across fits (nstart).
  void *ws = nullptr;
  size_t ws_bytes = 0;
  // Instantiated iteration graphs, reused by later fits with the same key.
  cudaGraphExec_t gx[2] = {nullptr, nullptr};  // full batch, remainder
  int gx_iters[2] = {0, 0};
  int gx_k = 0, gx_max_iter = 0, gx_bsz = 0;
  void *gx_ws = nullptr;
  // single precision stores x - shift (per column) to keep float distances
  // accurate for data far from the origin; zero in double precision.
  std::vector<double> shift;
  std::vector<double> maxabs;   // max |stored x| per column
  std::vector<int> scale;       // fixed-point scale of the per-column sums
  int *d_scale = nullptr;       // the same on the device
  gk::init::ParState *par = nullptr;  // between gk_cuda_par_begin and gk_cuda_par_end
  // Streamed data (streamed.cu): x stays in the caller's host memory and
  // for_each_chunk() brings it to the device chunk by chunk; nullptr when x
  // is resident.
  gk::StreamSource *src = nullptr;
  // Bounded iterations (bounds.cu): one allocation, grown on demand.
  void *bounds = nullptr;
  size_t bounds_bytes = 0;
  // The last fit's share of points whose distances were computed, per
  // iteration (1 for plain iterations; gk_cuda_fit_profile).
  std::vector<double> profile;
  // Observation weights (gk_cuda_set_weights; weights.cu): weighted fits
  // when weighted is 1 (wspec.w: n doubles on the device, owned here).
  int weighted = 0;
  gk::WeightSpec wspec;
  // The certified filter of double-precision assignments (assign.cu,
  // detail/dfilter.cuh): x's float image (n x d) | its norms (n) | the list
  // of points left to the exact pass (n) | the rest (n) | what the filter
  // knew of them | counters; made at the first fit that uses it (df_state
  // 1; -1: no room, exact kernels).  df_cand: the candidate pass's buffers
  // (detail/df_candidates.cuh), at the first fit that runs it (tried once).
  // df_cen: the centers' image (k x d floats), grown on demand.
  void *df_block = nullptr;
  int df_state = 0;
  void *df_cand = nullptr;
  int df_cand_tried = 0;
  int df_tc = 0;                          // the image is rounded to TF32
  gk::init::FloatImage df_im;
  void *df_cen = nullptr;
  size_t df_cen_bytes = 0;
  int gx_df = 0;                          // the kept graphs run the filter
  long long df_exact = 0, df_iters = 0;   // the last fit: points listed, filtered iterations
  long long df_every = 0;                 // ... and of those, the points given every center's exact distance
  int df_used = 0;                        // the last fit used the filter
  // Single precision on the tensor cores (detail/tc_tiles.cuh): x copied
  // into packed tiles in the tensor cores' fragment order, made at the first
  // fit that uses them (tc_state 1; -1: no room, the unpacked kernel), and
  // the centers' packed tiles, grown on demand.
  void *tc_x = nullptr;
  int tc_state = 0;
  void *tc_cen = nullptr;
  size_t tc_cen_bytes = 0;
  int tc_per_sm = 0, tc_filter_per_sm = 0;  // blocks a multiprocessor holds (their persistent grids)
  int tc_wg_per_sm = 0;  // ... of the wgmma argmin (k_assign_tc<true>), 0 where it is not used
  // The small-d grid of cells (detail/cell_grid.cuh): its box, counts and
  // lists, grown on demand.
  void *grid_buf = nullptr;
  size_t grid_bytes = 0;
  long long grid_seen = 0, grid_served = 0;  // the last fit: points the grid ran, and those its lists served
  // x's rows ordered in space (ordered.cu), for the small-d assignment
  // through warp boxes: one layout (the ordered copy of x | the
  // permutation, n ints: row perm[i] is ordered row i | the ordered labels,
  // n ints | the sort's room), made at the first fit that wants it
  // (ord_state 2: sorted, the copy of x made by the next ordered fit's
  // first iteration, which then sets 1; -1: no room), in the room the upload kept for it in
  // `block` (ord_room, ordered_room) or else an allocation of its own
  // (ord_block, freed with the handle).
  void *ord_block = nullptr;
  void *ord_room = nullptr;
  size_t ord_room_bytes = 0;
  void *ord_x = nullptr;
  int *ord_perm = nullptr, *ord_labels = nullptr;
  mutable int ord_state = 0;  // (mutable: the launch that makes the copy records it)
  // The columns' ranges in ord_room, where the ordering keeps them: the
  // upload's column pass (column_scales, which every handle runs before its
  // first fit) leaves them there for it.
  unsigned int *ord_range = nullptr;
  int ord_used = 0;  // the last fit ran on the ordered rows
  // The tiled path's carried sums (Plan::prev, Plan::moves): the labels the
  // sums hold and the list of moved points, n ints each, made at the first
  // fit that carries them (prev_state -1: no room).
  int *prev_labels = nullptr;
  int prev_state = 0;
  long long sums_iters = 0, sums_added = 0;  // the last fit: iterations that carried their sums, points they added
};

namespace gk {

// How one fit runs its iterations, chosen by shape.
struct Plan {
  int path = 0;          // 0: fused small-d kernel (assign + sums); 1: tiled assign + accumulate
  int dm = 0;            // small path: padded dimension (1, 2, 4, 8)
  size_t smem = 0;       // small path: dynamic shared bytes
  // small path, double: the certified float filter (detail/small_dfilter.cuh)
  // with this image of x and absd
  bool sdf = false;
  init::FloatImage sdf_im{};
  double sdf_absd = 0;
  int grid = 0;          // small path: blocks; tiled: blocks
  // accumulate kernel (tiled path)
  int acc_gx = 0, acc_gy = 0, acc_jb = 0;
  size_t acc_smem = 0;
  bool acc_shared = true;
  // within-SS kernel
  int w_grid = 0;
  size_t w_smem = 0;
  bool w_shared = true;
  int w_points = 1;      // points a thread takes a step (wss_points)
  int fin_grid = 0;      // finalize kernel
  // The sums carried from one iteration to the next (plan_delta, for the
  // Lloyd loop on one device, lloyd.cu; tiled path): the points whose label
  // differs from prev (the labels the sums hold) are listed in moves, and
  // k_accumulate adds those only, to their new cluster's sums, and takes
  // them from their old one's; finalize keeps the sums.  Exact integers, so
  // the same bits as sums made afresh; labels and prev start at -1.
  bool delta = false;
  int *prev = nullptr, *moves = nullptr;
  // prev and the list (2 n ints) are free once the iterations end: the
  // within-SS keeps its per-point terms there (n doubles), so that its
  // second pass reads them instead of x (nullptr: it computes them again).
  double *withinss_terms() const { return delta ? reinterpret_cast<double *>(prev) : nullptr; }
  int tf32 = 0;          // tiled single (d > 8): tensor-core 3xTF32 kernel instead of SIMT
  const float *tc_x = nullptr;  // tf32 on packed tiles (prepare_tc): x's, and the centers' buffer
  float *tc_cen = nullptr;
  bool tc_wg = false;  // ... through k_assign_tc<true> (wgmma, sm_90a), its centers TcPack::argmin_wg
  // small path, d <= 3: the grid of cells (detail/cell_grid.cuh) in this
  // buffer (prepare_assign) with at most gcells cells, built by gblocks blocks
  void *gbuf = nullptr;
  int gcells = 0, gblocks = 0;
  // small path, d <= 2, rows ordered in space (ordered.cu): the warp boxes'
  // kernel (detail/wbox_kernels.cuh) on D's ordered copy, with these blocks
  bool ordered = false;
  int ord_grid = 0;
  size_t ord_smem = 0;     // its dynamic shared bytes (the small path's and the centers' float images)
  bool ord_carry = false;  // its sums carried from one iteration to the next
  bool ord_fused = false;  // its last block runs the update (no update kernel)
  // finalize keeps the sums for the next iteration to add the moves to
  bool sums_carried() const { return delta || (ordered && ord_carry); }
  // weighted fits (weights.cu): accumulate and within-SS kernels
  int wacc_gx = 0, wacc_gy = 0, wacc_jb = 0;
  size_t wacc_smem = 0, ww_smem = 0;
  bool wacc_shared = true, ww_shared = true;
};

// assign.cu --------------------------------------------------------------
// An internal on/off switch of the environment (GPUKMEANS_GRID, ..._TC,
// ..._DELTA_SUMS ...): -1 unset (or empty), 0 when it starts with '0', else 1.
int env_switch(const char *name);
// A kernel launch on s, as a programmatic dependent of the stream's last
// kernel where pdl (D->pdl): its blocks may start while that kernel's last
// ones run, so the kernel calls grid_dependency_wait (common.cuh) before
// it reads anything that kernel wrote.
template <typename... K, typename... A>
cudaError_t launch_kernel(void (*kern)(K...), unsigned int grid, size_t smem, cudaStream_t s, bool pdl, A &&...args) {
  cudaLaunchAttribute at;
  at.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(grid);
  cfg.blockDim = dim3(256);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = s;
  cfg.attrs = &at;
  cfg.numAttrs = pdl ? 1 : 0;
  return cudaLaunchKernelEx(&cfg, kern, std::forward<A>(args)...);
}
// Fills the assignment part of plan (path, dm, smem, grid) for k centers.
cudaError_t plan_assign(const gk_cuda_data *D, int k, bool update, Plan &plan);
// Whether plan_assign plans the small-d kernels (path 0) for D's shape, as
// far as it can tell without the device (which may still refuse their
// shared memory: the tiled path then).
bool small_path_shape(const gk_cuda_data *D, int k, bool update);
// The assignment's buffers, where the device has the memory (plan_assign
// then plans the kernels that use them; call it first): in single
// precision on the tensor cores, x's packed tiles (once per handle, on
// stream s) and room for k centers' tiles; at d <= 3, the grid of cells.
cudaError_t prepare_assign(gk_cuda_data *D, int k, cudaStream_t s);
// Rows ordered in space (ordered.cu): whether a fit of k centers and at
// most max_iter iterations wants them (GPUKMEANS_ORDER=0/1, else by shape);
// the rows sorted (D->ord_state
// 2: the first ordered iteration makes the copy; -1 where it does not fit:
// the fit then runs as planned).  The
// ordered labels go back into D->labels in row order with the within-SS
// (launch_withinss's perm).
bool ordered_wanted(const gk_cuda_data *D, int k, int max_iter, const Plan &plan);
// Whether such a fit will want them whatever its plans say (no persistent
// kernel, the small-d kernels' shape): gk_cuda_lloyd then sorts the rows
// before it plans, so that the sort's device work runs while the host
// plans.  (A device that refuses the small kernels' shared memory leaves
// that sort unused.)
bool ordered_early(const gk_cuda_data *D, int k, int max_iter);
// Whether D's rows are sorted (ord_state 2, the copy still to be made by
// a first iteration, or 1, made).
inline bool ordered_sorted(const gk_cuda_data *D) { return D->ord_state == 1 || D->ord_state == 2; }
cudaError_t prepare_ordered(gk_cuda_data *D, cudaStream_t s);
// The bytes the ordering takes for D's shape (0 where it never runs: d > 2,
// d = 1 unless forced, few or too many rows, GPUKMEANS_ORDER=0): the
// upload keeps them in its allocation where the device has them to spare
// (D->ord_room); range_at (where not null): the offset in them of the
// columns' ranges, 2 d unsigned ints (D->ord_range).
size_t ordered_room(const gk_cuda_data *D, size_t *range_at);
// The warp boxes' step on the ordered copy (plan.ordered, after
// plan_ordered): D->ord_labels and st->changed, the sums into acc/counts;
// with upd_cen_d (plan.ord_fused), the update too: the new centers into
// upd_cen_d and upd_cen_f (where not null), as launch_finalize would.
// first: the fit's first iteration, whose labels are unset (not read, no
// memset); where the ordered copy is not made yet (ord_state 2) it reads x
// through the permutation and makes the copy (then ord_state 1; a later
// iteration without it is refused).
cudaError_t plan_ordered(const gk_cuda_data *D, int k, Plan &plan);
cudaError_t launch_assign_ordered(const gk_cuda_data *D, const Plan &plan, const void *cen, int k, State *st,
                                  int max_iter, u64 *acc, unsigned int *counts, const int *scale, double *upd_cen_d,
                                  float *upd_cen_f, bool first, cudaStream_t s);

// One assignment step: labels (0-based, -1 = none yet) and st->changed; with
// plan.path == 0 and update, also adds the centroid sums into acc/counts.
// scale: the per-column fixed-point scales of the sums (D->d_scale in a fit).
cudaError_t launch_assign(const gk_cuda_data *D, const Plan &plan, const void *cen, int k,
                          int *labels, State *st, int max_iter, bool update,
                          u64 *acc, unsigned int *counts, const int *scale, cudaStream_t s);

// The certified filter of one fit (double precision, tiled path): the
// device buffers in D->df_block / D->df_cen and the bound's constants.
struct DFilter {
  bool on = false;
  bool tc1 = false;  // TF32 images, one mma a product (else 3xTF32 on the images' packed tiles)
  // The filter keeps the two nearest centers of the points it lists, and
  // those whose image leaves only them get two exact distances (dfilter.cuh,
  // k_df_pair): 3xTF32, d >= kDfPairMinD, where there is no candidate pass
  // (GPUKMEANS_DF_PAIR=0 never, =1 also with one: the tests and benchmarks
  // compare them).
  bool pair = false;
  bool wg = false;    // the filter without the pair and its candidate pass through wgmma (wgmma.cuh)
  bool top2 = false;  // the filter without the pair takes each tile's two least values by a tree
                      // (k <= 512, unless GPUKMEANS_DF_TOP2=0)
  // Without the pair and the candidate pass: the listed points' exact distances to the centers
  // near their lowest that float distances leave (df_settle.cuh; 3xTF32, k <= kDfSettleMaxK),
  // unless GPUKMEANS_DF_SETTLE=0 (every center's, k_df_exact); nbr, nbf: its lists (k x k)
  bool settle = false;
  int *nbr = nullptr;
  float *nbf = nullptr;
  float *xi = nullptr, *na = nullptr, *ci = nullptr, *nb = nullptr;
  float *cpk = nullptr;  // 3xTF32: the centers' image in packed tiles (tc_tiles.cuh); xi: x's, likewise
  int *list = nullptr;
  int *rest = nullptr;                      // the listed points k_df_pair leaves
  float *w1 = nullptr, *w3 = nullptr;       // by list position below lcap: what the filter
  int *c1 = nullptr, *c2 = nullptr;         //   knew of the point (dfilter.cuh, DFArgs)
  long long lcap = 0;
  // The candidate pass (df_candidates.cuh) for the first ccap rest points
  // (3xTF32 only; 0: none, every rest point to k_df_exact), unless
  // GPUKMEANS_DF_CAND=0 (the tests compare both).
  float *thr = nullptr, *rp = nullptr;
  int *ccount = nullptr, *cand = nullptr;
  long long ccap = 0;
  unsigned int *cnt = nullptr;       // [0] listed this iteration, [1] a center out of the box, [2] max |b|^2,
                                     // [3] rest, [4] left by the candidate pass
  unsigned long long *tot = nullptr; // [0] listed, [1] filtered iterations, [2] every center exact (this fit)
  init::FloatImage im;
  double absd = 0;
};
// Whether this fit's assignments run the certified filter (GPUKMEANS_DFILTER:
// 0 never, 1 wherever it is safe (3xTF32), 2 the same with TF32 images and
// one mma, unset: by shape), and its buffers (x's
// image made once per handle, on stream s; the fit's counters cleared).
cudaError_t prepare_dfilter(gk_cuda_data *D, int k, const Plan &plan, DFilter &f, cudaStream_t s);
// One assignment step through the filter: the same labels and st->changed as
// launch_assign's exact double kernel, bit for bit.
cudaError_t launch_assign_df(const gk_cuda_data *D, const Plan &plan, const DFilter &f, const double *cen_d, int k,
                             int *labels, State *st, int max_iter, cudaStream_t s);

// update.cu --------------------------------------------------------------
cudaError_t plan_update(const gk_cuda_data *D, int k, Plan &plan);
// Whether a Lloyd loop on one device carries its sums (Plan::delta and
// Plan::prev, made and set to -1 on stream s): unweighted fits on the tiled
// path, unless GPUKMEANS_DELTA_SUMS=0 (the tests compare both) or there is
// no room for prev.
cudaError_t plan_delta(gk_cuda_data *D, Plan &plan, cudaStream_t s);
// Sums of x per cluster and coordinate (tiled path only); carried
// (plan.delta), the moves since the labels plan.prev holds added to
// acc/counts, and plan.prev brought up to date.
cudaError_t launch_accumulate(const gk_cuda_data *D, const Plan &plan, const int *labels, int k,
                              State *st, int max_iter, u64 *acc, unsigned int *counts,
                              const int *scale, cudaStream_t s, bool carried = false);
// New centers from the sums at the fixed-point scales `scale` (or
// convergence), zeroes the sums (unless plan.sums_carried()), advances st.
cudaError_t launch_finalize(const gk_cuda_data *D, const Plan &plan, int k, State *st,
                            int max_iter, u64 *acc, unsigned int *counts, double *cen_d,
                            float *cen_f, const int *scale, cudaStream_t s);
// Within-cluster sums of squares and sizes (zeroes its outputs first); cluster
// c's sum is fixed point with scale wss_scale(wmax[c]).  x: D's rows in the
// order of labels (nullptr: D->x; the ordered copy, D->ord_x, with
// D->ord_labels: the same sums, exact integers).  perm (the ordered rows'
// permutation, D->ord_perm, or nullptr): the second pass also puts the
// labels back in row order, D->labels[perm[i]] = labels[i].
cudaError_t launch_withinss(const gk_cuda_data *D, const Plan &plan, const int *labels,
                            const double *cen_d, int k, unsigned int *wmax, u64 *wacc,
                            unsigned int *wcnt, cudaStream_t s, const void *x = nullptr, const int *perm = nullptr);
// One of the two passes (0: maxima into wmax; 1: sums with the scales of
// wmax), each zeroing its own outputs first unless clear is false (then it
// adds to them: the chunks of streamed data).  terms (n doubles, or
// nullptr): pass 0 stores each point's term there, pass 1 reads it back.
cudaError_t launch_withinss_pass(const gk_cuda_data *D, const Plan &plan, int pass, const int *labels,
                                 const double *cen_d, int k, unsigned int *wmax, u64 *wacc,
                                 unsigned int *wcnt, cudaStream_t s, bool clear = true, double *terms = nullptr,
                                 const void *x = nullptr, const int *perm = nullptr);
// The fit workspace (O(k d), kept in the handle, grown on demand) as pointers.
struct Workspace {
  State *st;
  double *cen_d;
  float *cen_f;          // single precision only
  u64 *acc, *wacc;
  u64 *wsum;             // weighted fits: the weighted counts (2k words, 128-bit)
  unsigned int *counts, *wcnt, *wmax;
  int *scale;            // d: a step's per-column scales (the caller's, gk_cuda_step)
  size_t pack;           // [0, pack) of the workspace: the results downloaded at the end
};
// Destroys the iteration graphs kept in the handle.
void drop_graphs(gk_cuda_data *D);
// The column maxima of the stored values (d u64 bit patterns on the device,
// at mx) into D->maxabs and the fixed-point scales of the sums (D->scale,
// D->d_scale), on D->stream.  (device_data.cu)
int scales_from_maxima(gk_cuda_data *D, const u64 *mx, char *err, size_t errlen);
// Whether an optional buffer of `extra` bytes (the distance bounds, the
// double-precision filter's image of x) may be taken: within 0.9 of the free
// device memory and, under options(gpukmeans.device_memory), within that
// cap beside x and its labels.  (device_data.cu)
bool optional_fits(const gk_cuda_data *D, size_t extra);
// The dynamic shared memory a block of D's kernels may ask for: the
// device's opt-in limit (227 KB on sm_90, 163 KB on sm_80, 99 KB on sm_86
// and sm_89), or less where GPUKMEANS_SMEM_CAP (bytes) says so, so that the
// tests run the plans of those smaller devices on the one they have.
// (device_data.cu)
size_t smem_limit(const gk_cuda_data *D);
// cudaFuncSetAttribute(kernel, MaxDynamicSharedMemorySize, bytes); above
// smem_limit(D), cudaErrorInvalidValue, as the runtime answers a device
// without that much.  Every plan asks through it; the list form asks for
// each kernel in turn (the first error stops it).  (device_data.cu)
cudaError_t allow_dynamic_smem(const gk_cuda_data *D, const void *kernel, size_t bytes);
cudaError_t allow_dynamic_smem(const gk_cuda_data *D, std::initializer_list<const void *> kernels, size_t bytes);
// Grows the workspace for k centers (checking free memory for large ones).
int ensure_workspace(gk_cuda_data *D, int k, Workspace &w, char *err, size_t errlen);
// Centers (host, k x d, original coordinates) into the workspace's cen_d
// (stored coordinates: shifted in single precision) and cen_f.
cudaError_t upload_centers(const gk_cuda_data *D, const double *centers, int k, const Workspace &w,
                           cudaStream_t s);

// bounds.cu ----------------------------------------------------------------
// The buffers of bounded iterations (u, l, the active list per point; the
// centers' movements and the previous centers).
struct BoundsBufs {
  float *u = nullptr, *l = nullptr;
  unsigned int *active = nullptr;
  double *move = nullptr, *top = nullptr;
  void *prev = nullptr;  // k x d, storage precision
  u64 *hist = nullptr;   // points computed exactly in each bounded iteration (kBoundsHist)
};
const int kBoundsHist = 4096;
// Whether bounded iterations may run for k centers (options, shape: rows,
// the fit's rows, 0: D's); then (grows and) points b at their buffers, its
// per-iteration counts zeroed on s (plain iterations never write theirs, and
// the profile's download reads them all): false when they do not fit in free
// device memory or cannot be cleared (the fit stays plain).
bool bounds_wanted(const gk_cuda_data *D, int k, long long rows = 0);
bool bounds_buffers(gk_cuda_data *D, int k, cudaStream_t s, BoundsBufs &b);
// A bounded iteration in two halves (an iteration over several devices adds
// their sums up in between, lloyd_parts.cu).  The assignment: the first
// (full exact assignment that sets the bounds, sums from scratch into the
// zeroed w.acc/w.counts) or a later one (the bounds' filter, then the
// active points, their moves added to w.acc/w.counts).  scale: the sums'
// fixed-point scales (D->d_scale in a fit on one device).
cudaError_t launch_bounds_assign(const gk_cuda_data *D, const Plan &plan, int k, const Workspace &w,
                                 const BoundsBufs &b, bool first, int max_iter, const int *scale, cudaStream_t s);
// The update: new centers from the sums acc/counts (left as they are: the
// next iteration adds its moves to them), the centers' movements.
cudaError_t launch_bounds_update(const gk_cuda_data *D, const Plan &plan, int k, const Workspace &w,
                                 const BoundsBufs &b, const u64 *acc, const unsigned int *counts, int max_iter,
                                 const int *scale, cudaStream_t s);

// weights.cu ---------------------------------------------------------------
// The weighted kernels' launch shapes (into the wacc_* / ww_* fields).
cudaError_t plan_weighted(const gk_cuda_data *D, int k, Plan &plan);
// Weighted sums of x and weighted counts (into acc and w.wsum).
cudaError_t launch_accumulate_w(const gk_cuda_data *D, const Plan &plan, int k, const Workspace &w, int max_iter,
                                cudaStream_t s);
// New centers from the weighted sums and counts (or convergence).
cudaError_t launch_finalize_w(const gk_cuda_data *D, const Plan &plan, int k, const Workspace &w, int max_iter,
                              cudaStream_t s);
// Weighted within-SS (scales: weighted_wss_value) and sizes (rows).
cudaError_t launch_withinss_w(const gk_cuda_data *D, const Plan &plan, int k, const Workspace &w, cudaStream_t s);
// Cluster c's weighted within-SS from its fixed-point sum and maximum.
double weighted_wss_value(const gk_cuda_data *D, u64 lo, u64 hi, unsigned int maxterm);

// staged_copy.cu -----------------------------------------------------------
// x (n x d doubles, column-major, host) into D->x (stored precision: float
// of x - D->shift in single) through pinned staging buffers filled by host
// threads, overlapped with the copies.  *used = false (and nothing copied)
// when pinned memory cannot be had: the caller copies the plain way.
// nonfinite: NULL, or x is checked as it is copied (GK_CUDA_NONFINITE, and
// *nonfinite the first bad value's index, as gk_cuda_upload).
// ld: rows between two columns of x (n, or more for a block of a larger
// matrix; then nonfinite must be NULL).
int staged_upload(gk_cuda_data *D, const double *x, long long ld, bool *used, int64_t *nonfinite, char *err,
                  size_t errlen);
// Whether an upload of this size goes through the staging buffers.
bool staging_wanted(const gk_cuda_data *D);
// Rows [first, first + rows) of x from a rows x d column-major block
// (host, doubles) into D->x in stored precision (gk_cuda_put_rows), through
// the staging buffers (a pageable buffer where there is no pinned memory);
// the block may be reused when it returns (the copies of the buffers go on).
// nonfinite not NULL: the values are checked as they are copied
// (GK_CUDA_NONFINITE, *nonfinite the first bad value's place in the block).
int staged_put_rows(gk_cuda_data *D, const double *block, long long first, long long rows, int64_t *nonfinite,
                    char *err, size_t errlen);
// Once every block is in: the column means (D->host_means) where the
// copies added up all the rows in order, the stage log's notes, and
// release_put_rows.
void end_put_rows(gk_cuda_data *D);
// Frees what staged_put_rows kept in D (D->put; none: no-op).
void release_put_rows(gk_cuda_data *D);

// Rows [a, a + len) of x (n x d doubles, column-major, host) into dst as a
// len x d column-major block in stored precision (float(x - shift) when
// shift is not NULL), by the team's threads (detail/host_team.hpp).
void fill_rows(void *dst, const double *x, long long n, int d, long long a, long long len, const double *shift,
               HostTeam &team);
// Host threads of the staging copies (options.host_threads, at most 32).
int staging_threads(const gk_cuda_data *D);
// n labels from the device (dev, on stream s) into host memory, each plus
// `add`, through pinned buffers drained by host threads while the next
// chunks are copied (a copy into pageable memory crawls: 2.2 GB/s for the
// labels of 1e8 rows on an H200 host); small ones in one plain copy.
// Returns once host holds them.
int staged_download(gk_cuda_data *D, const int *dev, int *host, long long n, int add, cudaStream_t s,
                    char *err, size_t errlen);

// streamed.cu ----------------------------------------------------------------
// Whether x (its upload needs `need` bytes of device memory) is to be
// streamed: options.stream, or it would not fit.
bool stream_wanted(const gk_cuda_data *D, double need);
// The upload of streamed data: labels, scales and scratch on the device,
// the chunk buffers (device and pinned host), and the column maxima and
// scales from one pass over the chunks.  x must outlive D; or x NULL and
// the rows read from `source` at every pass (gk_cuda_stream_rows).
int stream_upload(gk_cuda_data *D, const double *x, char *err, size_t errlen,
                  const gk_cuda_row_source *source = nullptr);
// One pass over the rows: fn(V) for each chunk, V being D with x, n and
// labels (= labels + the chunk's first row) of the chunk, on D->stream, in
// row order.  Resident data is one chunk, V = D with `labels`.  fn enqueues
// its kernels on D->stream and returns their launch status; the caller
// synchronises.  A chunk's buffer is refilled only after the kernels
// enqueued for it have run.
using ChunkFn = std::function<cudaError_t(const gk_cuda_data &V)>;
int for_each_chunk(gk_cuda_data *D, int *labels, const ChunkFn &fn, char *err, size_t errlen);
// The status GK_CUDA_INVALID for a function that needs x resident.
int refuse_streamed(const gk_cuda_data *D, const char *what, char *err, size_t errlen);
// Streamed x: rows idx[0..m) as the device stores them, converted to double
// (x itself; in single precision double(float(x - shift))), m x d row-major
// (GK_CUDA_ERROR where the row source's read fails).
int streamed_rows(const gk_cuda_data *D, const long long *idx, long long m, double *out, char *err, size_t errlen);

// lloyd_devices.cu -----------------------------------------------------------
// Peer access between the parts' devices, where the hardware has it.
void enable_peers(gk_cuda_data *const *parts, int count);
// Whether kernels on device a can read and write memory of device b and
// the other way round: the same device, or peers whose access
// enable_peers() enabled (call it first).
bool reaches(int a, int b);
// Whether `count` handles, in order, can run an initialisation together
// (gk_cuda_greedy_devices, gk_cuda_par_team_begin; `what` names it in the
// message): GK_CUDA_OK with *n their rows; GK_CUDA_UNSUPPORTED where a
// part is streamed or weighted or of another precision or d, a part but
// the last is not whole level-1 nodes of the sum trees (32 rows), there
// are more than kMaxTogether parts, or the devices do not reach each
// other's memory; GK_CUDA_INVALID for a missing part.  Enables peer access.
constexpr int kMaxTogether = 16;
int check_together(gk_cuda_data *const *parts, int count, const char *what, long long *n, char *err,
                   size_t errlen);

// persistent.cu ------------------------------------------------------------
struct PersistentPlan {
  bool ok = false;  // false: use the per-kernel path
  int dm = 0, grid = 0;
  size_t smem = 0;
};
cudaError_t plan_persistent(const gk_cuda_data *D, int k, PersistentPlan &p);
// Whether D's shape may run persistent fits at all (plan_persistent then
// asks the device).
bool persistent_shape(const gk_cuda_data *D);
// Up to batch iterations in one cooperative launch; counts must hold 2k
// zeroed entries, acc 2kd zeroed words, st zeroed before the first batch.
// cen is the working-precision copy (float or the same as cen_d in double).
cudaError_t launch_persistent(const gk_cuda_data *D, const PersistentPlan &p, void *cen, double *cen_d,
                              int k, int *labels, State *st, int max_iter, int batch, u64 *acc,
                              unsigned int *counts, cudaStream_t s);

// labels[i] += 1 (1-based labels for the caller).
cudaError_t launch_plus_one(int *labels, long long n, cudaStream_t s);
// float copy of double centers (single precision).
cudaError_t launch_to_float(const double *src, float *dst, long long m, cudaStream_t s);

}  // namespace gk

#endif
