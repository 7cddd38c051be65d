/* gk_cuda.h: the plain C interface of the CUDA engine.
 *
 * Its one caller in the package is the CUDA adapter, src/cuda_engine.cpp,
 * which implements the engine interface of src/engine.h on top of it (the
 * development harness in tools/cuda-dev calls it too).  It carries pointers,
 * sizes, an options struct and status codes, nothing of R or Rcpp.
 *
 * Conventions
 * - Matrices are column-major, as R stores them: x is n x d with x[i + n*j].
 *   centers are k x d, centers[c + k*j].
 * - cluster labels crossing this interface are 1-based (R's convention); row
 *   indices are 0-based int64_t.
 * - Every function returns a gk_cuda_status and, when it is not GK_CUDA_OK,
 *   writes a one-line, human-readable reason into err (NUL-terminated,
 *   at most errlen bytes).  No function prints, exits or throws.
 * - Every device allocation is released on every return path (state kept in
 *   the handle is released by gk_cuda_free).
 */
#ifndef GPUKMEANS_GK_CUDA_H
#define GPUKMEANS_GK_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  GK_CUDA_OK = 0,
  GK_CUDA_NO_DEVICE = 2,     /* no driver, driver too old, or no device */
  GK_CUDA_OUT_OF_MEMORY = 3, /* the data would not fit in free device memory */
  GK_CUDA_ERROR = 4,         /* any other CUDA error (message has the CUDA text) */
  GK_CUDA_INTERRUPTED = 5,   /* a callback asked to stop */
  GK_CUDA_INVALID = 6,       /* bad arguments (a bug in the caller) */
  GK_CUDA_NONFINITE = 7,     /* x holds NA, NaN or +-Inf (gk_cuda_upload, when asked to check) */
  GK_CUDA_UNSUPPORTED = 8    /* this way of running it is not available here (nothing was done):
                                the caller takes another */
} gk_cuda_status;

/* ---- device queries ---------------------------------------------------- */

typedef struct {
  int runtime_version;  /* cudaRuntimeGetVersion, e.g. 13000; 0 if unknown */
  int driver_version;   /* cudaDriverGetVersion; 0 when there is no driver */
  int device_count;     /* 0 when no usable device */
  char message[256];    /* why there is no device, when device_count == 0 */
} gk_cuda_info;

typedef struct {
  char name[256];
  int major, minor;           /* compute capability */
  double total_memory;        /* bytes */
  double free_memory;         /* bytes, at the time of the query */
  int multiprocessors;
  int usable;                 /* 1 when this build's kernels run on it */
  char why[256];              /* why not, when usable == 0 */
} gk_cuda_device;

/* Never fails: with no driver it fills info with device_count = 0 and a message. */
void gk_cuda_get_info(gk_cuda_info *info);

int gk_cuda_get_device(int device, gk_cuda_device *out, char *err, size_t errlen);

/* A test of the error path: launches a kernel that traps on `device` and
   returns the error the runtime reports (GK_CUDA_ERROR).  The trap leaves
   the process's CUDA context unusable: call it in a throwaway process. */
int gk_cuda_fault_test(int device, char *err, size_t errlen);

/* ---- data held on a device ------------------------------------------------ */

/* Called by the engine on the host.  Both may be NULL. */
typedef struct {
  /* Polled between iterations (at least once per batch of iterations, and
     every ~100 ms of device work when iterations are long) and between
     initialisation steps.  Return nonzero to stop: the call then returns
     GK_CUDA_INTERRUPTED after freeing what it allocated. */
  int (*interrupt)(void *ctx);
  /* Trace/progress: when non-NULL, gk_cuda_lloyd calls it after every
     iteration with the 1-based iteration number, the number of points that
     changed cluster in that iteration's assignment step and the total
     within-cluster sum of squares of that assignment w.r.t. the centers it was
     assigned to.  Setting it makes the engine synchronise once per iteration.
     Return nonzero to stop. */
  int (*on_iteration)(void *ctx, int iter, int64_t changed, double tot_withinss);
  void *ctx;
} gk_cuda_callbacks;

typedef struct {
  int device;         /* CUDA device ordinal */
  int single;         /* 1: data held and distances computed in float;
                         0: double (exact parity with stats::kmeans) */
  int assign_kernel;  /* tiled assignment in single precision, d > 8:
                         0 by shape (default), 1 SIMT, 2 tensor cores (3xTF32) */
  int init_filter;    /* k-means|| rounds: 0 by shape (default: the lower-bound
                         filter, on the tensor cores where d allows), 1 exact
                         distance for every pair, 2 the SIMT filter */
  int sample_room;    /* k-means|| rounds: rows a round's sample holds before
                         it is drawn again into a larger buffer (0: 2l + 1024,
                         which a round exceeds almost never; tests set 1) */
  double memory_cap;  /* bytes of device memory the handle may take (0 or
                         Inf: all that is free; options(gpukmeans.device_memory)) */
  int bounds;         /* Lloyd's distance bounds: 0 the default (= 3),
                         1 never (plain Lloyd), 2 from the second
                         iteration on (tests), 3 where they pay; the results
                         are the same bits in double precision */
  int staging;        /* the upload of x: 0 by size (default: large data
                         through pinned staging buffers filled by host
                         threads), 1 one pageable copy, 2 staging with small
                         buffers whatever the size (tests); same bits */
  int host_threads;   /* host threads that fill the staging buffers (0: up
                         to 16, as the machine has cores) */
  int stream;         /* x held in host memory and brought to the device in
                         chunks of rows in every pass over the data: 0 when
                         it would not fit on the device (default), 1 never
                         (GK_CUDA_OUT_OF_MEMORY instead), 2 always (tests) */
  int64_t stream_rows; /* rows of a streamed chunk (0: by size, ~256 MiB) */
  int stream_copy;    /* how streamed x is copied: 0 as the host allows (in
                         single precision a pinned float image of x where a
                         quarter of the host's memory holds it, else x
                         page-locked in place, else staged); 1 staged
                         through pinned buffers filled by host threads; 2 x
                         page-locked in place (tests, benchmarks) */
  int64_t ld;         /* rows between the starts of two columns of x (0: n):
                         x may be a block of the rows of a larger matrix.
                         The staged upload reads it in place; the other
                         ways (small or streamed x, no pinned memory, a
                         check of x asked) first copy it into the handle */
} gk_cuda_options;

/* Data resident on a device: x uploaded once, reused across starts. */
typedef struct gk_cuda_data gk_cuda_data;

/* Upload x (n x d doubles, column-major) to the device and compute its total
   sum of squares.  In single precision x is stored as float(x - shift), the
   shift (d values) given or, when NULL, the column means of up to 4096
   evenly spaced rows (in double precision the shift is 0).  Checks free
   device memory first and returns GK_CUDA_OUT_OF_MEMORY naming the sizes
   when it would not fit.  *seconds (may be NULL): host wall time.
   nonfinite: NULL when x is known to be finite; else x is checked as it is
   read (the staged copy checks the values it copies): for a value that is
   NA, NaN or infinite the call returns GK_CUDA_NONFINITE, holds nothing,
   and *nonfinite is the first such value's 0-based index (column-major). */
int gk_cuda_upload(const double *x, int64_t n, int d, const gk_cuda_options *opts,
                   const double *shift, gk_cuda_data **out, double *seconds,
                   int64_t *nonfinite, char *err, size_t errlen);

/* Whether gk_cuda_upload of an n x d x with these options means to add
   its columns up as host threads copy it through pinned buffers
   (gk_cuda_column_means): 1 (x of 256 MiB or more, or options.staging =
   2), else 0 (one plain copy, or a mid-sized x staged in small buffers
   without the sums).  A caller that computes totss on the host may start
   it beside an upload that does not; beside one that does, its passes
   would compete with the threads that read x anyway. */
int gk_cuda_upload_stages(int64_t n, int d, const gk_cuda_options *opts);

/* x put on the device block of rows by block of rows, for data that is
   never whole in host memory (a matrix source read through R,
   src/cuda_engine.cpp): gk_cuda_alloc_rows makes a resident handle for n x
   d values (single precision: the shift given, d values) and returns
   GK_CUDA_OUT_OF_MEMORY, holding nothing, where they would not fit on the
   device (or options.stream asks for streamed data, which needs the whole
   x in host memory); gk_cuda_put_rows copies rows [first, first + rows)
   from a rows x d column-major block (stored as gk_cuda_upload stores
   them, through the pinned staging buffers: the block may be reused when
   it returns); once every row is there, gk_cuda_finish_rows computes what
   gk_cuda_upload computes from the stored values (the scales of the sums,
   the device's totss).  The stored values, and so every result, are those
   of gk_cuda_upload over the same rows with the same shift.  As it copies
   a block, gk_cuda_put_rows checks its values where nonfinite is not
   NULL (for a value that is NA, NaN or infinite it returns
   GK_CUDA_NONFINITE with *nonfinite the first such value's 0-based index
   in the block, column-major, and x is incomplete: free the handle), and
   while the blocks come in row order from row 0 it adds the columns up
   as gk_cuda_upload does (gk_cuda_column_means after gk_cuda_finish_rows).
   The caller computes totss.  gk_cuda_get_rows
   copies rows [first, first + rows) of a double-precision handle back
   into a rows x d block (GK_CUDA_INVALID in single precision). */
int gk_cuda_alloc_rows(int64_t n, int d, const gk_cuda_options *opts, const double *shift,
                       gk_cuda_data **out, char *err, size_t errlen);
int gk_cuda_put_rows(gk_cuda_data *data, const double *block, int64_t first, int64_t rows,
                     int64_t *nonfinite, char *err, size_t errlen);
int gk_cuda_finish_rows(gk_cuda_data *data, char *err, size_t errlen);
int gk_cuda_get_rows(gk_cuda_data *data, int64_t first, int64_t rows, double *block,
                     char *err, size_t errlen);

/* Frees the pinned staging buffers that freed handles left on their
   devices for the next fit (staged_copy.cu); a no-op in a process that did
   not make them (a forked child).  R calls it when the session ends. */
void gk_cuda_release_kept(void);

/* x never whole in host memory and larger than the device (a matrix
   source read in C++ from its own storage, src/cuda_engine.cpp): a
   streamed handle (gk_cuda_streamed) whose every pass over the rows reads
   them from `source` chunk by chunk, as a streamed upload brings x from
   host memory: the same stored values (those of gk_cuda_upload with the
   same shift, d values in single precision) and so the same results.
   gk_cuda_stream_rows reads the rows once for the column maxima; the
   values must be finite (the caller checks them); source->ctx must
   outlive the handle.  GK_CUDA_OUT_OF_MEMORY, holding nothing, where even
   the chunks do not fit.  A read that fails (a callback returning
   nonzero) makes the call in progress return GK_CUDA_ERROR. */
typedef struct gk_cuda_row_source {
  void *ctx;
  /* rows [first, first + rows) into out, a rows x d column-major block */
  int (*block)(void *ctx, int64_t first, int64_t rows, double *out);
  /* rows idx[0], ..., idx[m - 1] (0-based) into out, an m x d column-major block */
  int (*rows)(void *ctx, const int64_t *idx, int64_t m, double *out);
} gk_cuda_row_source;
int gk_cuda_stream_rows(int64_t n, int d, const gk_cuda_options *opts, const double *shift,
                        const gk_cuda_row_source *source, gk_cuda_data **out, char *err, size_t errlen);

/* A new handle on opts->device over the rows of `count` handles (resident,
   of one precision, d and shift), part after part, made from their stored
   values by device-to-device copies instead of a second upload from the
   host: the stored values, and so every result, are those of
   gk_cuda_upload over the same rows (the parts' shift given).  The parts
   keep theirs.  Errors and *seconds as gk_cuda_upload's
   (GK_CUDA_OUT_OF_MEMORY where the rows do not fit there). */
int gk_cuda_gather(gk_cuda_data *const *parts, int count, const gk_cuda_options *opts,
                   gk_cuda_data **out, double *seconds, char *err, size_t errlen);

/* Whether the upload left x in host memory (streamed data: options.stream,
   or x did not fit on the device), and then the rows of one chunk and the
   number of chunks.  Streamed data keeps its labels, the per-column maxima
   and scales on the device and brings x there chunk by chunk (pinned host
   buffers, copies overlapped with the previous chunk's kernels) in every
   gk_cuda_step, gk_cuda_step_withinss and gk_cuda_assign, which give the
   bits they give on resident data.  The caller's x must then outlive the
   handle (or its row source, gk_cuda_stream_rows).  k-means++
   (gk_cuda_greedy over all the rows) and the k-means|| rounds run on
   streamed data too, each pass over the chunks.  The other functions of
   the data (gk_cuda_lloyd, weights, quality) return GK_CUDA_INVALID on
   streamed data: the caller runs Lloyd step by step and the rest on the
   host. */
int gk_cuda_streamed(const gk_cuda_data *data, int64_t *chunk_rows, int64_t *chunks);

/* The column means of x as the host's total sum of squares takes them
   (src/column_sum.h: long double sums in chunks of rows), when the upload
   added them up as it copied x (the staged upload): returns 1 and writes d
   values to means; else returns 0.  The first pass of the total sum of
   squares that the caller computes on the host. */
int gk_cuda_column_means(const gk_cuda_data *data, double *means);

/* Free everything held by data (NULL is allowed). */
void gk_cuda_free(gk_cuda_data *data);

/* Total sum of squares of the uploaded data about its column means
   (stats: sum(scale(x, scale = FALSE)^2)), computed at upload. */
int gk_cuda_totss(gk_cuda_data *data, double *totss, char *err, size_t errlen);

/* Observation weights (src/weights.h says what they mean): w, n finite
   values >= 0, not all 0, copied to the device.  Later gk_cuda_lloyd calls on
   data fit them: centers are weighted means (a cluster of weight 0 gets NaN),
   withinss weighted sums, size the count of rows.  The sums stay exact
   128-bit fixed-point integers (src/cuda/detail/weight_fixed.cuh): with whole
   weights (0, 1, 2, ... <= 2^53) a row adds w times its rounded value, so
   that in double precision a fit has the bits of the fit of the rows
   replicated w times (when the total weight is below 2^66; above, the scales
   drop by the excess bits so that nothing overflows); other weights add w x
   rounded once, at scales set by the largest weight.  Rows of weight 0 do
   not set the scales.  gk_cuda_totss stays unweighted (the caller computes
   the weighted totss), and the other functions ignore the weights. */
int gk_cuda_set_weights(gk_cuda_data *data, const double *w, char *err, size_t errlen);

/* ---- Lloyd's algorithm ---------------------------------------------------- */

typedef struct {
  int iter;           /* as stats' C code reports it: the 1-based index of the
                         iteration in which no point changed (converged), or
                         max_iter + 1 when it did not converge */
  double ms_compute;  /* all iterations plus the final within-SS (CUDA events) */
  double ms_download; /* device -> host copy of the results */
} gk_cuda_fit_info;

/* Lloyd's algorithm with exactly the rules of stats::kmeans(algorithm = "Lloyd"):
   - assignment: nearest center by squared Euclidean distance computed as
     sum_j (x_ij - c_j)^2 in coordinate order; ties go to the lowest index;
     a center with NaN coordinates (an empty cluster) is never chosen;
   - stop when no point changed cluster (every point "changes" in iteration 1);
   - update: each center becomes the mean of its points; an empty cluster's
     center becomes NaN (0/0), as in stats;
   - after the loop, withinss uses the final centers and the final labels.
   Inputs:  centers (k x d, column-major) initial centers; max_iter >= 1.
   Outputs: centers (k x d) final centers (overwritten);
            cluster (n, 1-based), size (k), withinss (k).
   Any output pointer except centers may be NULL when not wanted. */
int gk_cuda_lloyd(gk_cuda_data *data, int k, int max_iter, double *centers,
                  const gk_cuda_callbacks *cb, int *cluster, int *size, double *withinss,
                  gk_cuda_fit_info *info, char *err, size_t errlen);

/* The last gk_cuda_lloyd's share of points whose distances were computed in
   each iteration (1 for plain iterations, less for bounded ones): up to max
   values into out; returns how many there are in *len (0 when unknown). */
int gk_cuda_fit_profile(gk_cuda_data *data, double *out, int max, int *len, char *err, size_t errlen);

/* The last gk_cuda_lloyd in double precision: whether its assignments ran
   the certified filter (*used; environment GPUKMEANS_DFILTER=0 never, =1
   wherever safe, unset by shape), the points it left to exact distances
   (*exact_points, summed over iterations), those of them given every
   center's exact distance (*every_points; the others only their few
   candidates') and the iterations it filtered.  Any pointer may be NULL. */
int gk_cuda_dfilter_stats(gk_cuda_data *data, int64_t *exact_points, int64_t *every_points, int64_t *iters,
                          int *used);

/* The last gk_cuda_lloyd: the point-iterations the small-d kernel ran on the
   grid of cells (*seen; environment GPUKMEANS_GRID=0 never, =1 at d <= 3
   from k = 2, unset at d <= 2 from k = 160 in single precision and 96 in
   double) and those its cells' lists served
   (*served; the others scanned every center).  Any pointer may be NULL. */
int gk_cuda_grid_stats(gk_cuda_data *data, int64_t *seen, int64_t *served);

/* The last gk_cuda_lloyd: *ordered 1 where its iterations ran on the rows
   ordered in space, through warp boxes (environment GPUKMEANS_ORDER=0
   never, =1 at d <= 2 where the fit allows it, unset at d = 2 from 2^16
   rows with k <= 1024 in single precision and k <= 200 in double, where
   max_iter can repay the ordering (from 10 with k >= 50, else from 30; five
   times as many in double above 2^21 rows) or on a handle already
   ordered), else 0. */
int gk_cuda_order_stats(gk_cuda_data *data, int *ordered);

/* The last gk_cuda_lloyd: the iterations that carried their cluster sums
   from the one before (*iters; d > 8, unweighted; environment
   GPUKMEANS_DELTA_SUMS=0: none) and the points they added (*added: those
   that moved, or every point where too many had moved and the iteration
   summed afresh).  Any pointer may be NULL. */
int gk_cuda_sums_stats(gk_cuda_data *data, int64_t *iters, int64_t *added);

/* gk_cuda_lloyd over `count` handles that hold, in order, contiguous blocks
   of the rows of one data set (uploaded with the same shift, resident, no
   weights), on one device each or several on one device: one fit, the
   same bits as gk_cuda_lloyd on a handle holding all the rows.  The devices
   add up each other's exact sums after every assignment step, without the
   host.  cluster: n values, the parts' rows in order.  cb->on_iteration
   must be NULL (a traced fit runs step by step, gk_cuda_step).  Each
   handle's gk_cuda_fit_profile and gk_cuda_dfilter_stats then describe
   the fit over all the rows. */
int gk_cuda_lloyd_devices(gk_cuda_data *const *parts, int count, int k, int max_iter, double *centers,
                          const gk_cuda_callbacks *cb, int *cluster, int *size, double *withinss,
                          gk_cuda_fit_info *info, char *err, size_t errlen);

/* gk_cuda_greedy's k-means++ (rows NULL, no weights) over `count` handles
   that hold, in order, contiguous blocks of the rows of one data set (as
   gk_cuda_lloyd_devices takes them): the same picks, bit for bit, as
   gk_cuda_greedy on a handle holding all the rows.  Every step's pass runs
   on each part's device over its rows; the sum trees and the sampling on the
   first part's device, which reads the other parts' rows directly.
   GK_CUDA_UNSUPPORTED, having done nothing, where the parts do not allow
   it: a part streamed or weighted, a part but the last whose rows are not a
   multiple of 32 (the trees' level-1 nodes), more than 16 parts, or
   devices without peer access to the first part's. */
int gk_cuda_greedy_devices(gk_cuda_data *const *parts, int count, int64_t first, int picks,
                           const double *unif, int L, const gk_cuda_callbacks *cb, int64_t *out,
                           char *err, size_t errlen);

/* Nearest-center labels (1-based) for the uploaded data, same rule as the
   assignment step above (used by predict()). */
int gk_cuda_assign(gk_cuda_data *data, int k, const double *centers,
                   int *cluster, char *err, size_t errlen);

/* ---- one step at a time, for drivers that combine several devices ----------
 * The partial results of a part of the rows, combinable exactly: sums are
 * 128-bit fixed-point integers (src/fixed_point.h; `sums` holds 2 words, lo
 * then hi, per (cluster, coordinate), entry c + k*j), at the per-column scales
 * the caller chooses from the maxima of all parts (gk_cuda_column_stats,
 * limb_scale).  Centers and sums are in stored coordinates (x - shift; the
 * shift is 0 in double precision).  The labels stay in the handle between
 * steps. */

/* Per column j (d values each, either may be NULL): max |stored x_ij| and
   the shift. */
int gk_cuda_column_stats(gk_cuda_data *data, double *maxabs, double *shift, char *err, size_t errlen);

/* One assignment step with centers (k x d): labels (reset to "none" when
   first != 0, so that every point changes), the sums of x per cluster at
   scales scale[0..d), counts per cluster and the number of points whose
   label changed. */
int gk_cuda_step(gk_cuda_data *data, int k, const double *centers, const int *scale, int first,
                 uint64_t *sums, int64_t *counts, int64_t *changed, char *err, size_t errlen);

/* Within-cluster sums of squares of the labels of the last step w.r.t.
   centers, in two passes as gk_cuda_lloyd computes them: pass 1 writes the
   upper 32 bits of each cluster's largest term (maxterm, k); pass 2 takes
   the maxima of all parts in maxterm and writes the fixed-point sums (2k
   words, scale wss_scale(maxterm[c])). */
int gk_cuda_step_withinss(gk_cuda_data *data, int k, const double *centers, int pass,
                          uint32_t *maxterm, uint64_t *sums, char *err, size_t errlen);

/* The labels of the last step, 1-based (n ints). */
int gk_cuda_labels(gk_cuda_data *data, int *cluster, char *err, size_t errlen);

/* ---- initialisation: k-means++ and k-means|| ------------------------------
 * (implemented in src/cuda/init_pp.cu and src/cuda/init_par.cu.)
 * All run on the data already uploaded and return ROW INDICES, 0-based; the
 * caller takes the centers from its own double copy of x.  The arithmetic
 * and its order are those of src/parity.h, identical to the CPU engine
 * (src/cpu_init.cpp): in double precision a seed gives the same rows on both
 * engines.  Distances, potentials, sums and sampling stay on the device; the
 * host copies only scalars and the chosen indices.  cb may be NULL; only
 * cb->interrupt is used (polled between steps). */

/* Greedy k-means++ over the rows `rows` (m of them; NULL: all n rows, m = n)
   with weights `weight` (m; NULL: 1).  The first pick is point `first`
   (0-based, < m); step s = 1 .. picks - 1 draws its n_candidates candidates
   (1..32) with unif[(s - 1) * n_candidates + j].  out: picks point indices
   (0-based, into rows when given, else rows of x).  Streamed x (all rows, no
   weights only): each step is a pass over the chunks, and the host copies
   the 32 rows of each drawn tree node (the same picks). */
int gk_cuda_greedy(gk_cuda_data *data, const int64_t *rows, const double *weight, int64_t m,
                   int64_t first, int picks, const double *unif, int n_candidates,
                   const gk_cuda_callbacks *cb, int64_t *out, char *err, size_t errlen);

/* The oversampling phase of k-means||, one piece at a time (the loop over
   rounds is the driver's, src/init_driver.cpp).  The state (D2, each point's
   nearest candidate, the candidates) lives in the handle from par_begin to
   par_end (or gk_cuda_free).
   par_begin: the first candidate is row `first`; *phi = sum of D2.
   par_round: round r >= 1 adds every point i with D2_i > 0 and
     u(seed, r, i) < l * D2_i / phi; *added = how many, *phi_out = new sum.
   par_added: the rows the last round added, in index order (*added of them).
   par_weights: for each of the m candidates so far, the number of points
     nearest to it (the first of equals). */
int gk_cuda_par_begin(gk_cuda_data *data, int64_t first, double *phi, char *err, size_t errlen);
int gk_cuda_par_round(gk_cuda_data *data, uint64_t seed, int round, double l, double phi,
                      int64_t *added, double *phi_out, char *err, size_t errlen);
int gk_cuda_par_added(gk_cuda_data *data, int64_t *rows, char *err, size_t errlen);
int gk_cuda_par_weights(gk_cuda_data *data, int64_t m, double *weight, char *err, size_t errlen);
void gk_cuda_par_end(gk_cuda_data *data);

/* The k-means|| rounds above over `count` handles that hold, in order,
   contiguous blocks of the rows of one data set (as gk_cuda_lloyd_devices
   takes them), as one: the same phi, rows and weights, bit for bit, as a
   handle holding all the rows.  Each part keeps D2 and the labels of its
   rows and runs the sampling and the distances on its device; the
   candidates' rows go to every part through the host; the first part's
   device sums the tree of D2.  _begin returns GK_CUDA_UNSUPPORTED, having
   done nothing, where the parts do not allow it (as
   gk_cuda_greedy_devices); rows in _round and _added are of the whole
   data.  _free ends the rounds (NULL: nothing). */
typedef struct gk_cuda_par_team gk_cuda_par_team;
int gk_cuda_par_team_begin(gk_cuda_data *const *parts, int count, int64_t first, gk_cuda_par_team **out,
                           double *phi, char *err, size_t errlen);
int gk_cuda_par_team_round(gk_cuda_par_team *team, uint64_t seed, int round, double l, double phi,
                           int64_t *added, double *phi_out, char *err, size_t errlen);
int gk_cuda_par_team_added(gk_cuda_par_team *team, int64_t *rows, char *err, size_t errlen);
int gk_cuda_par_team_weights(gk_cuda_par_team *team, int64_t m, double *weight, char *err, size_t errlen);
void gk_cuda_par_team_free(gk_cuda_par_team *team);

/* ---- quality of a partition (src/cuda/quality.cu) --------------------------
 * The per-row pieces of the silhouette and Davies-Bouldin indices of a
 * partition of the uploaded rows (src/engine.h, QualityRequest), computed as
 * the CPU engine does (src/cpu_quality.cpp; the same bits in double
 * precision).  The partition: order (n row indices, 0-based) lists the rows
 * cluster by cluster, in increasing order within a cluster, cluster c being
 * order[start[c] .. start[c+1]) (start: k + 1 offsets, start[0] = 0,
 * start[k] = n).  centers: k x d, column-major, original coordinates (NULL
 * unless center_dist or the simplified silhouette is wanted).
 * silhouette: 0 none; 1 exact (O(n^2 d), streamed, no n x n matrix), of the
 *   rows `rows` only when rows is not NULL (m of them, 0-based; the sampled
 *   silhouette); 2 simplified (distances to the centers, O(n k d)).
 * Outputs, NULL when not wanted: center_dist (n, each row's distance to its
 * own center), width and neighbor (n, in row order, or m with rows; the
 * neighbor 1-based).  Needs at least two non-empty clusters for a
 * silhouette.  cb may be NULL; cb->interrupt is polled between launches of
 * the exact silhouette. */
int gk_cuda_quality(gk_cuda_data *data, int k, const int32_t *order, const int64_t *start,
                    const double *centers, int silhouette, const int64_t *rows, int64_t m,
                    const gk_cuda_callbacks *cb, double *center_dist, double *width, int *neighbor,
                    char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* GPUKMEANS_GK_CUDA_H */
