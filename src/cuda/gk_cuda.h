/* gk_cuda.h: the plain C interface of the CUDA engine.
 *
 * This is the only header the R glue (src/*.cpp) includes from the CUDA side.
 * It carries pointers, sizes, an options struct and status codes, nothing of
 * R or Rcpp.  It is implemented twice:
 *   src/cuda/*.cu      when configure found nvcc (the real engine);
 *   src/cuda_stub.cpp  otherwise (every call answers GK_CUDA_NOT_BUILT).
 *
 * Conventions
 * - Matrices are column-major, as R stores them: x is n x d with x[i + n*j].
 *   centers are k x d, centers[c + k*j].
 * - cluster labels crossing this interface are 1-based (R's convention).
 * - Every function returns a gk_cuda_status and, when it is not GK_CUDA_OK,
 *   writes a one-line, human-readable reason into err (NUL-terminated,
 *   at most errlen bytes).  No function prints, exits or throws.
 * - Every device allocation is released on every return path.
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
  GK_CUDA_NOT_BUILT = 1,     /* the package was built without CUDA */
  GK_CUDA_NO_DEVICE = 2,     /* no driver, driver too old, or no device */
  GK_CUDA_OUT_OF_MEMORY = 3, /* the data would not fit in free device memory */
  GK_CUDA_ERROR = 4,         /* any other CUDA error (message has the CUDA text) */
  GK_CUDA_INTERRUPTED = 5,   /* the interrupt callback asked to stop */
  GK_CUDA_INVALID = 6        /* bad arguments (a bug in the caller) */
} gk_cuda_status;

/* ---- device queries ---------------------------------------------------- */

typedef struct {
  int built;            /* 1 when compiled with nvcc, 0 in the stub */
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
  int clock_khz;
} gk_cuda_device;

/* Never fails: with no driver it fills info with device_count = 0 and a message. */
void gk_cuda_get_info(gk_cuda_info *info);

int gk_cuda_get_device(int device, gk_cuda_device *out, char *err, size_t errlen);

/* ---- fitting ------------------------------------------------------------ */

/* Called by the engine on the host.  Both may be NULL. */
typedef struct {
  /* Called between iterations, at least every ~100 ms of device work when
     iterations are long, and at least once per batch of iterations.
     Return nonzero to stop the fit (it then returns GK_CUDA_INTERRUPTED after
     freeing everything). */
  int (*interrupt)(void *ctx);
  /* Trace/progress: when non-NULL it is called after every iteration with the
     1-based iteration number, the number of points that changed cluster in
     that iteration's assignment step and the total within-cluster sum of
     squares of that assignment w.r.t. the centers it was assigned to (NaN if
     the engine does not compute it per iteration).  Setting it may make the
     engine synchronise once per iteration.  Return nonzero to stop. */
  int (*on_iteration)(void *ctx, int iter, int64_t changed, double tot_withinss);
  void *ctx;
} gk_cuda_callbacks;

typedef struct {
  int device;         /* CUDA device ordinal */
  int single;         /* 1: data held and distances computed in float;
                         0: double (exact parity with stats::kmeans) */
  int deterministic;  /* 1: bitwise-identical results run to run */
  int max_iter;       /* iter.max, >= 1 */
} gk_cuda_options;

/* Data resident on a device: x uploaded once, reused across starts. */
typedef struct gk_cuda_data gk_cuda_data;

typedef struct {
  double ms_upload;    /* host -> device copy (and conversion) of x */
} gk_cuda_upload_timing;

/* Upload x (n x d doubles, column-major) to the device, converting to float
   on the device when opts->single.  Checks free device memory first and
   returns GK_CUDA_OUT_OF_MEMORY naming the sizes when it would not fit. */
int gk_cuda_upload(const double *x, int64_t n, int d, const gk_cuda_options *opts,
                   gk_cuda_data **out, gk_cuda_upload_timing *timing,
                   char *err, size_t errlen);

/* Free everything held by data (NULL is allowed). */
void gk_cuda_free(gk_cuda_data *data);

typedef struct {
  int iter;           /* as stats' C code reports it: the 1-based index of the
                         iteration in which no point changed (converged), or
                         max_iter + 1 when it did not converge */
  int converged;      /* 1 if no point changed in the last assignment */
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
   Inputs:  centers (k x d, column-major) initial centers.
   Outputs: centers (k x d) final centers (overwritten);
            cluster (n, 1-based), size (k), withinss (k).
   Any output pointer except centers may be NULL when not wanted. */
int gk_cuda_lloyd(gk_cuda_data *data, int k, double *centers,
                  const gk_cuda_options *opts, const gk_cuda_callbacks *cb,
                  int *cluster, int *size, double *withinss,
                  gk_cuda_fit_info *info, char *err, size_t errlen);

/* Total sum of squares of the uploaded data about its column means
   (stats: sum(scale(x, scale = FALSE)^2)), computed on the device. */
int gk_cuda_totss(gk_cuda_data *data, double *totss, char *err, size_t errlen);

/* Nearest-center labels (1-based) for the uploaded data, same rule as the
   assignment step above (used by predict()). */
int gk_cuda_assign(gk_cuda_data *data, int k, const double *centers,
                   int *cluster, char *err, size_t errlen);


/* ---- initialisation: k-means++ and k-means|| ------------------------------
 * (implemented in src/cuda/init_pp.cu and src/cuda/init_par.cu.)
 * All run on the data already uploaded (nstart > 1 reuses it) and return ROW
 * INDICES, 0-based (int64_t); the caller takes the centers from its own
 * double copy of x.  The arithmetic and its order are those of
 * src/init_order.h, identical to the CPU engine (src/cpu_init.cpp): in double
 * precision a seed gives the same rows on both engines.  Distances, D2
 * potentials, sums and sampling stay on the device; the host copies only
 * scalars and the chosen indices.  cb may be NULL; only cb->interrupt is used
 * (polled between steps/rounds).  ms (may be NULL): device time, CUDA events. */

/* Greedy k-means++.  unif: 1 + (k - 1) * n_candidates uniforms in [0, 1)
   (unif[0]: first center floor(u * n); step s >= 1 uses
   unif[1 + (s - 1) * n_candidates + j]); n_candidates in 1..32.
   idx_out: k row indices. */
int gk_cuda_kmeanspp(gk_cuda_data *data, int k, const double *unif, int n_candidates,
                     const gk_cuda_callbacks *cb, int64_t *idx_out, double *ms,
                     char *err, size_t errlen);

/* Oversampling phase of k-means||.  seed: the 64-bit counter-RNG seed.
   Writes up to cap candidates (row indices, in order of addition) and their
   weights (points nearest to each, the first of equals); *m_out is the number
   of candidates, which can exceed cap: then call again with cap >= *m_out
   (same result). */
int gk_cuda_kmeans_par(gk_cuda_data *data, int k, uint64_t seed, const gk_cuda_callbacks *cb,
                       int64_t cap, int64_t *cand_out, double *weight_out, int64_t *m_out,
                       int *rounds_out, double *ms, char *err, size_t errlen);

/* The greedy part of the k-means|| reduction (gk::kmeans_par_reduce): greedy
   k-means++ over the m candidate rows `rows` of x with weights `weight`.  The
   first pick is candidate `first`; step s = 1 .. picks - 1 draws its
   n_candidates candidates with unif[(s - 1) * n_candidates + j].
   picks <= m.  out: picks candidate indices (0-based, into rows). */
int gk_cuda_weighted_pp(gk_cuda_data *data, const int64_t *rows, const double *weight, int64_t m,
                        int64_t first, int picks, const double *unif, int n_candidates,
                        const gk_cuda_callbacks *cb, int64_t *out, double *ms, char *err,
                        size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* GPUKMEANS_GK_CUDA_H */
