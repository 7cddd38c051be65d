// engine.h: the interface every engine implements (the CPU engine,
// src/cpu_engine.h, and the CUDA engine, src/cuda_engine.cpp), and the one
// way engine code reports failure and interruption.
//
// An engine holds one data set (n x d, in double or single precision) and
// offers the pieces every fit is made of: Lloyd's algorithm from given
// centers, nearest-center labels (predict), the total sum of squares, one
// assignment step with exact partial sums (for drivers that combine several
// engines), and the pieces of the k-means++ and k-means|| initialisations.
// The fit driver (src/fit_driver.cpp) is written once against this
// interface; the R glue (src/fit_glue.cpp) only converts arguments.  Plain
// C++: no R, no CUDA headers.
//
// Errors: engine code throws gk::EngineError (what failed, in words, and of
// which kind) and gk::Interrupted (the observer asked to stop) after
// releasing what it holds; src/r_boundary.h turns both into R conditions, in
// one place.
#ifndef GPUKMEANS_ENGINE_H
#define GPUKMEANS_ENGINE_H

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "block_tree.h"
#include "fixed_point.h"
#include "labels.h"
#include "observer.h"

namespace gk {

enum class Precision { kDouble, kSingle };

// A failure of engine code, with the kind that R reports as the condition
// class gpukmeans_<kind> (src/r_boundary.cpp).
class EngineError : public std::runtime_error {
 public:
  // not built with CUDA; no usable device; out of (device) memory; any other
  // device error; a bad argument (a bug in the caller); the data cannot give
  // what was asked (e.g. fewer distinct points than centers).
  // A capability this engine does not have (yet), e.g. observation weights
  // on the CUDA engine.
  // x holds NA, NaN or an infinite value (NonFiniteData, below).
  enum class Kind { kNotBuilt, kNoDevice, kOutOfMemory, kDevice, kInvalid, kData, kUnsupported, kNonFinite };
  EngineError(Kind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

// x holds a value that is not finite (NA, NaN, +-Inf), found by an engine
// that checked x as it took it (HostData::finite false); index: the first
// such value's 0-based place in x, column-major.
class NonFiniteData : public EngineError {
 public:
  explicit NonFiniteData(std::int64_t index)
      : EngineError(Kind::kNonFinite, "x holds a value that is not finite (NA, NaN or infinite)"), index_(index) {}
  std::int64_t index() const { return index_; }

 private:
  std::int64_t index_;
};

// A reader's rows (HostData::reader) would not fit on the device, or the
// engine cannot take them block by block: nothing was read and nothing is
// held.  The caller reads x into host memory and makes the engine from it.
class SourceNotResident : public EngineError {
 public:
  explicit SourceNotResident(const std::string& why) : EngineError(Kind::kOutOfMemory, why) {}
};

// The observer asked to stop (Ctrl-C); everything has been released.
class Interrupted : public std::exception {
 public:
  const char* what() const noexcept override { return "interrupted"; }
};

// Rows of a data set that is never whole in host memory (a matrix source
// that R reads block by block, R/matrix_sources.R; src/source_glue.h adapts
// it): an engine that takes one (HostData::reader, x nullptr) copies the
// blocks to its device as they come.  Both functions write column-major
// blocks of doubles, as x would hold them, and may throw (an R error, an
// interrupt): the engine releases what it holds on the way.
class RowReader {
 public:
  virtual ~RowReader() = default;
  // The rows read at a time (one block: about 32 MiB of doubles).
  virtual std::int64_t block_rows() const = 0;
  // Rows [first, first + rows) into out (rows x d).
  virtual void block(std::int64_t first, std::int64_t rows, double* out) = 0;
  // Rows idx[0 .. m) (0-based, any order) into out (m x d).
  virtual void rows(const std::int64_t* idx, std::int64_t m, double* out) = 0;
  // Whether reading the rows again costs about as little as copying them
  // back from a device (a source in host memory read in C++): the engine
  // then reads them again for a second pass instead.
  virtual bool reads_again_cheaply() const { return false; }
  // Whether block() and rows() may run in several threads at once (a
  // reader in C++ over memory; one that calls R may not): several devices
  // then read their rows concurrently.
  virtual bool concurrent() const { return false; }
};

// The data an engine takes: n x d doubles, column-major (R's layout).  The
// memory must outlive the engine (the CPU engine reads it in place).
struct HostData {
  const double* x = nullptr;
  std::int64_t n = 0;
  int d = 0;
  // Rows between the starts of two columns of x (0: n): x may be a block of
  // the rows of a larger matrix, read in place (several devices, each
  // taking its block; src/multi_engine.h).  Only the CUDA engine takes
  // ld != n; the others throw kInvalid.
  std::int64_t ld = 0;
  // Observation weights (n values, finite, >= 0, not all 0; checked in R),
  // or nullptr: every row weighs 1.  Read in place, as x.  Only engines whose
  // supports_weights() is true take them (src/weights.h says what they mean).
  const double* w = nullptr;
  // Whether x is known to be finite.  false: the engine checks it as it
  // takes x, before computing anything from it, and throws NonFiniteData
  // for the first value that is not (R leaves the check of a fit's x to
  // the engine, which reads x anyway: the CUDA engine's staged upload
  // checks the values it copies, saving a pass over x).
  bool finite = true;
  // x is not in host memory (x nullptr): its rows come from here, block by
  // block (RowReader).  The CUDA engine takes a reader, resident on its
  // device, the composite over several devices (a RowRange of it per part),
  // and the CPU engine, reading it again at every pass (src/cpu_stream_engine.cpp),
  // all without weights (R sends no other fit: R/gpu_kmeans.R); they throw
  // SourceNotResident where x (a part) would not fit on the device, or (the
  // CPU engine) where it cannot stream the reader.
  RowReader* reader = nullptr;
  // x from a reader that does not fit on the CUDA engine's device (on the
  // CPU engine: any) may be streamed from the reader, read again at every
  // pass over the rows, where
  // it reads them again cheaply (RowReader::reads_again_cheaply: a
  // dgCMatrix's slots): the caller sends no fit that needs x on the host
  // (the quality passes of the sweep, weights).  false: SourceNotResident.
  bool reader_streams = false;
  // The caller will ask for totss() (a fit): an engine whose upload leaves
  // the host idle may start on it at once, on a thread of its own, beside
  // the upload (the CUDA engine, x in host memory).  Engines made for a
  // part of x, or for predictions, leave it false.
  bool totss_early = false;
};

// The outcome of Lloyd's algorithm from one set of initial centers.
struct LloydFit {
  std::vector<double> centers;   // k x d column-major, the final centers
  Labels cluster;                // n, 1-based (labels.h: not zero-filled when sized)
  std::vector<int> size;         // k
  std::vector<double> withinss;  // k
  int iter = 0;                  // stats' convention: max_iter + 1 when not converged
  double seconds_compute = 0.0;
  double seconds_download = 0.0;  // device -> host copies of the results (CUDA)
  // Per iteration, the share of the n k point-center distances computed (1
  // for plain iterations; less where distance bounds proved labels; the
  // CUDA engine computes all k distances of a point or none); empty when the
  // engine does not say.
  std::vector<double> exact_fraction;
  // A certified screen of the assignment (the CUDA engine's double filter):
  // the share of point-iterations it left to exact distances, and of those
  // given every center's exact distance (the others: a few candidates');
  // -1 when none ran.
  double screen_exact = -1.0, screen_every = -1.0;
  // CUDA, d <= 3: the share of point-iterations the grid of cells' lists
  // served (-1: no grid)
  double grid_share = -1.0;
  // CUDA: 1 where the iterations ran on the rows ordered in space (warp boxes)
  int rows_ordered = 0;
  // CUDA: over the iterations that carried their cluster sums from the one
  // before, the share of points they added (the movers, or every point where
  // an iteration summed afresh; -1: none carried)
  double sums_share = -1.0;
};

// One assignment step's partial results over the engine's rows, exact and
// combinable by addition (any split of the rows gives the same totals).
// Sums are in stored coordinates (x - shift()).
struct StepSums {
  std::vector<Fixed128> sum;         // k x d column-major, at the caller's per-column scales
  std::vector<std::int64_t> count;   // k
  std::int64_t changed = 0;          // points whose label changed
};

// ---- quality of a partition (choosing k; src/quality_driver.h) -----------
// The rows of each cluster in row order: order[start[c] .. start[c + 1]) are
// the rows of cluster c (0-based), increasing (a stable counting sort).
struct ClusterOrder {
  std::vector<std::int32_t> order;  // n rows
  std::vector<std::int64_t> start;  // k + 1 offsets
};

// What Engine::quality computes for a partition of the rows into k clusters.
// Distances are Euclidean, sqrt(s) with s = 0; s = s + (u_a - v_a)^2 in
// coordinate order, each operation rounded on its own (no FMA), so the
// engines agree bit for bit in double precision.
struct QualityRequest {
  enum class Silhouette { kNone, kExact, kSimplified };
  const ClusterOrder* order = nullptr;
  int k = 0;
  const double* centers = nullptr;  // k x d, column-major (original coordinates); may be NULL
                                    // when neither center_dist nor the simplified silhouette is asked
  bool center_dist = false;         // each row's distance to its own cluster's center
  Silhouette silhouette = Silhouette::kNone;
  // Exact silhouette of these rows only (0-based, m of them; the sampled
  // silhouette); nullptr: of every row.
  const std::int64_t* rows = nullptr;
  std::int64_t m = 0;
};

// Per row (or per rows[q] for a sampled exact silhouette):
//  exact silhouette: a = mean distance to the other rows of its cluster,
//    b = least mean distance to the rows of another non-empty cluster (the
//    first of equals), width = (b - a) / max(a, b), 0 for a row alone in its
//    cluster or when a == b (cluster::silhouette's rules);
//  simplified: the same with a = distance to its own center and b = least
//    distance to another non-empty cluster's center;
//  neighbor: the cluster of b, 1-based.
// Every engine needs at least two non-empty clusters for a silhouette.
struct QualityPoints {
  std::vector<double> center_dist;  // n (when asked)
  std::vector<double> width;        // n, or m when rows are given
  std::vector<int> neighbor;        // as width
};

// ---- the initialisation of a block of rows of a larger data set ----------
// One process's part of a k-means++ or k-means|| initialisation whose rows
// are spread over several processes (MPI ranks; src/block_driver.h, R/mpi.R):
// the engine holds rows [offset, offset + n) of N.  It keeps D2 (each row's
// squared distance to the nearest center added so far, +Inf at first) and
// the index of that center (the first of equals), and computes the pieces
// of the sum trees of src/parity.h that the block can compute alone
// (src/block_tree.h), with the arithmetic of parity.h: the same bits as the
// engine's own greedy() / par_*() over all N rows.
class BlockInit {
 public:
  virtual ~BlockInit() = default;
  // Adds m centers (m x d, row-major), in order: for each, D2_i = min(D2_i,
  // dist(i, c)) and the label of row i becomes the center's number (counted
  // over every add_centers call, from 0) where the distance is smaller.
  virtual void add_centers(const double* centers, std::int64_t m) = 0;
  // The tree of D2 (k-means++ sampling, the k-means|| potential).
  virtual BlockLevel1 d2_tree() = 0;
  // For each of L candidates (L x d, row-major), the tree of
  // min(D2_i, dist(i, candidate)): its total is the candidate's potential.
  virtual std::vector<BlockLevel1> potentials(const double* candidates, int L) = 0;
  // D2 of rows [from, from + count) (global indices inside the block).
  virtual void d2(std::int64_t from, int count, double* out) = 0;
  // The k-means|| round r: the rows i (global) with D2_i > 0 and
  // u(seed, r, i) < l D2_i / phi, in index order.
  virtual std::vector<std::int64_t> select(std::uint64_t seed, int round, double l, double phi) = 0;
  // The rows whose label is c, for c < m.
  virtual std::vector<double> label_counts(std::int64_t m) = 0;
};

// The k-means|| rounds of several engines that each hold a block of the
// rows (Engine::par_together), as Engine::par_begin / par_round /
// par_weights of one engine over all of them; destroying it ends them.
class ParTogether {
 public:
  virtual ~ParTogether() = default;
  // false, having done nothing, where the parts cannot run the rounds
  // together (the caller then runs them on one engine); else *phi.
  virtual bool begin(std::int64_t first, double* phi) = 0;
  virtual std::vector<std::int64_t> round(std::uint64_t seed, int round, double l, double phi, double* phi_out) = 0;
  virtual std::vector<double> weights(std::int64_t m) = 0;
};

// A map of the centers applied after each update of Lloyd's algorithm
// (k x d, column-major, in the data's coordinates, NaN rows for empty
// clusters), e.g. spherical k-means' projection onto the unit sphere
// (src/spherical.h).
using CenterMap = std::function<void(double* centers, int k)>;

class Engine {
 public:
  virtual ~Engine() = default;

  // "cpu" or "cuda", and the device in words ("CPU, 4 threads", the card).
  virtual const char* backend() const = 0;
  virtual std::string device() const = 0;
  std::int64_t n() const { return n_; }
  int d() const { return d_; }
  Precision precision() const { return precision_; }
  // Seconds spent taking the data (the upload, for a device).
  double seconds_upload() const { return seconds_upload_; }
  // The chunks in which the engine brings x from host memory at every pass
  // over the rows (the CUDA engine when x does not fit on its device; it
  // then reads HostData::x for as long as it lives); 0: x is resident.
  virtual std::int64_t streamed_chunks() const { return 0; }
  // The observation weights of the data (HostData::w), or nullptr.  An
  // engine that fits them (totss, lloyd, greedy over all rows, the k-means||
  // rounds, as src/weights.h defines them) says so here; the driver refuses
  // weights on the others (EngineError kUnsupported), and R asks before it
  // makes one (cuda_supports_weights()).
  const double* weights() const { return w_; }
  virtual bool supports_weights() const { return false; }

  // ---- Lloyd ---------------------------------------------------------------
  // sum(scale(x, scale = FALSE)^2), as R computes it (to rounding).
  virtual double totss() = 0;
  // True when totss() runs on the host alone and may run in a thread of its
  // own while the other methods run (it shares no state with them): the fit
  // driver then overlaps it with the fit (the CUDA engine and the composite
  // over CUDA engines, whose totss is the CPU engine's sum of x).
  virtual bool totss_concurrent() const { return false; }
  // Lloyd's algorithm with stats' rules from centers (k x d, column-major).
  // into: where the labels go, a view of the caller's memory for the
  // engine's n rows (Labels::view: the result's cluster then is that view,
  // written in place), or empty: a buffer of the result's own.
  virtual LloydFit lloyd(const double* centers, int k, int max_iter, IterationObserver* observer,
                         Labels into) = 0;
  // Lloyd over `parts` (this engine first; each holds a block of the rows,
  // in row order) as one fit, where this engine's backend runs the parts'
  // iterations together without the host between them (the CUDA engine:
  // the devices add up each other's sums, gk_cuda_lloyd_devices): the fit
  // of lloyd_parts() (src/fit_driver.h), bit for bit, in *out (whose
  // cluster may hold the labels' destination, as lloyd()'s into).  false,
  // having done nothing, where it cannot (other engines among the parts, x
  // streamed, an observer that wants every iteration): the caller then runs
  // lloyd_parts().
  virtual bool lloyd_together(const std::vector<Engine*>& parts, const double* centers, int k, int max_iter,
                              IterationObserver* observer, LloydFit* out) {
    return false;
  }
  // Greedy k-means++ over all the rows of `parts` (this engine first; each
  // holds a block of the rows, in row order; no weights), as greedy(nullptr,
  // nullptr, n, ...) over all of them, where this engine's backend runs the
  // parts' passes on their own devices (the CUDA engine: each step's pass
  // on every device, the sampling on this engine's, gk_cuda_greedy_devices):
  // the same picks, bit for bit, in *out.  false, having done nothing, where
  // it cannot (other engines among the parts, x streamed, weights, devices
  // without peer access): the caller then runs greedy() on one engine over
  // all the rows.
  virtual bool greedy_together(const std::vector<Engine*>& parts, std::int64_t first, int picks, const double* unif,
                               int L, IterationObserver* observer, std::vector<std::int64_t>* out) {
    return false;
  }
  // The k-means|| rounds over all the rows of `parts` (this engine first;
  // each holds a block of the rows, in row order; no weights) run by the
  // parts on their own devices (the CUDA engine: gk_cuda_par_team_*): the
  // phi, rows and weights of one engine over all the rows, bit for bit.
  // nullptr where this backend has no such rounds; ParTogether::begin says
  // whether these parts allow them.
  virtual std::unique_ptr<ParTogether> par_together(const std::vector<Engine*>& parts) { return nullptr; }
  // An engine over all the rows of `parts` (this engine first; each holds a
  // block of the rows, in row order; data: all of them, on the host) on
  // this engine's device, made from what the parts hold where the backend
  // can (the CUDA engine: device-to-device copies of the stored rows, no
  // second upload from the host): the engine make_*_engine(data) would give,
  // with the parts' shift.  nullptr where it cannot (other engines among
  // the parts, x streamed, weights); EngineError kOutOfMemory where the
  // rows do not fit.  (The composite's k-means++ and k-means||.)
  virtual std::unique_ptr<Engine> gathered(const std::vector<Engine*>& parts, const HostData& data,
                                           int host_threads) {
    return nullptr;
  }
  // Nearest center (1-based; ties to the lowest index, NaN centers never) of every row.
  virtual void assign(const double* centers, int k, int* cluster) = 0;

  // ---- one step at a time (a driver combining several engines) ------------
  // Per column: max |stored x| and the shift of the stored values (0 in
  // double precision).
  virtual std::vector<double> column_maxabs() = 0;
  virtual std::vector<double> shift() = 0;
  // One assignment step with centers in stored coordinates; the labels stay
  // in the engine (reset first when first is true, so every point changes).
  // Sums are rounded to the nearest multiple of 2^-scale[j] (round_fixed).
  virtual StepSums step(const double* centers, int k, const std::vector<int>& scale, bool first) = 0;
  // Within-cluster sums of squares of the last step's labels w.r.t. centers
  // (stored coordinates), in two passes: the upper 32 bits of each cluster's
  // largest term, then, given the maxima of all parts, the fixed-point sums
  // at scales wss_scale(maxterm[c]).
  virtual std::vector<std::uint32_t> withinss_maxterm(const double* centers, int k) = 0;
  virtual std::vector<Fixed128> withinss_sums(const double* centers, int k,
                                              const std::vector<std::uint32_t>& maxterm) = 0;
  // The last step's labels, 1-based.
  virtual std::vector<int> labels() = 0;

  // ---- Lloyd with a map of the centers (spherical k-means) ---------------
  // lloyd() with map(centers) after every update of the centers: the
  // labels, iter and sizes follow the mapped centers, the final centers are
  // mapped, withinss are the squared distances to them.  The default runs
  // it over step() (lloyd_parts on this engine alone, src/spherical.cpp), so
  // every engine can; an engine may have a faster path of its own.
  // into: as lloyd()'s.
  virtual LloydFit lloyd_mapped(const double* centers, int k, int max_iter, IterationObserver* observer,
                                const CenterMap& map, Labels into);

  // ---- initialisation (arithmetic and order: src/parity.h) ----------------
  // Greedy k-means++ over the rows `rows` (m of them; nullptr: all rows) with
  // weights (nullptr: 1): the first pick is point `first`, step s >= 1 draws
  // its L candidates with unif[(s - 1) * L + j].  Returns `picks` point
  // indices (into rows when given, else rows of x), 0-based.
  virtual std::vector<std::int64_t> greedy(const std::int64_t* rows, const double* weight, std::int64_t m,
                                           std::int64_t first, int picks, const double* unif, int L,
                                           IterationObserver* observer) = 0;
  // The k-means|| rounds (the loop is the driver's): begin with row `first`
  // (returns phi, the sum of D2); a round adds the rows i with D2_i > 0 and
  // u(seed, r, i) < l D2_i / phi, in index order, and sets *phi_out (polling
  // the observer inside a long round); weights are the points nearest to each
  // of the m candidates so far.
  virtual double par_begin(std::int64_t first) = 0;
  virtual std::vector<std::int64_t> par_round(std::uint64_t seed, int round, double l, double phi, double* phi_out,
                                              IterationObserver* observer) = 0;
  virtual std::vector<double> par_weights(std::int64_t m) = 0;
  virtual void par_end() = 0;

  // ---- quality of a partition (src/quality_driver.h) ----------------------
  // The per-row pieces of the silhouette and Davies-Bouldin indices (see
  // QualityRequest); the exact silhouette is O(n^2 d) without an n x n
  // matrix.  Polls the observer (may be NULL) between pieces of work.
  virtual QualityPoints quality(const QualityRequest& request, IterationObserver* observer) = 0;

  // ---- the initialisation of a block of a larger data set ----------------
  // The engine's rows are rows [offset, offset + n()) of `total` (see
  // BlockInit; always on the data in double precision).  host_threads: the
  // threads of an engine that runs these passes on the host (the CUDA
  // engine, for now).
  virtual std::unique_ptr<BlockInit> block_init(std::int64_t offset, std::int64_t total, int host_threads) = 0;

 protected:
  Engine(const HostData& data, Precision precision)
      : n_(data.n), d_(data.d), precision_(precision), w_(data.w) {}
  std::int64_t n_;
  int d_;
  Precision precision_;
  const double* w_;
  double seconds_upload_ = 0.0;
};

// What an engine's device() adds when it streams x from host memory in
// `chunks` chunks (none when 0): the printed fit says so.
inline std::string streamed_suffix(std::int64_t chunks) {
  if (chunks <= 0) return "";
  return ", x streamed from host memory in " + std::to_string(chunks) + (chunks == 1 ? " chunk" : " chunks");
}

// What device() adds for x read from its source (HostData::reader): block
// by block to the device, or, in `chunks` chunks at every pass, streamed
// from it.
inline std::string source_suffix(std::int64_t chunks) {
  if (chunks <= 0) return ", x read block by block from its source";
  return ", x streamed from its source in " + std::to_string(chunks) + (chunks == 1 ? " chunk" : " chunks");
}

// The CPU engine with `threads` OpenMP threads (0: all); shift (d values or
// nullptr) fixes the single-precision shift (src/single_shift.h), as for the
// CUDA engine (several processes holding parts of the rows share one).  x
// from a reader: the engine that reads it at every pass (src/cpu_engine.h,
// make_cpu_stream_engine).
std::unique_ptr<Engine> make_cpu_engine(const HostData& data, Precision precision, int threads,
                                        const double* shift = nullptr);

// Kernel choices of the CUDA engine (development harness and tests; the
// defaults choose by shape).  Mirrors gk_cuda_options.
struct CudaTuning {
  int assign_kernel = 0;  // 0 by shape, 1 SIMT, 2 tensor cores (single, d > 8)
  int init_filter = 0;    // 0 by shape, 1 exact for every pair, 2 SIMT filter
  int sample_room = 0;    // rows a k-means|| round's sample holds before it is redrawn larger (0: 2l + 1024)
  int bounds = 0;         // Lloyd's distance bounds: 0 default (where they pay), 1 never, 2 from the
                          // second iteration, 3 where they pay
  double memory_cap = 0;  // bytes of device memory the engine may take (0 or Inf: all that is free)
  int staging = 0;        // upload of x: 0 by size (pinned staging for large data), 1 one pageable copy,
                          // 2 staging with small buffers (tests)
  int host_threads = 0;   // host threads of the staged upload (the package's thread count; 0: up to 16)
  int stream = 0;         // x streamed from host memory: 0 when it does not fit on the device, 1 never
                          // (an out-of-memory error instead), 2 always
  std::int64_t stream_rows = 0;  // rows of a streamed chunk (0: by size; tests set a few)
  int stream_copy = 0;           // streamed x: 0 as the host allows, 1 staged, 2 page-locked x (gk_cuda_options)
};

// The CUDA engine on device `device`; shift (d values or nullptr) fixes the
// single-precision shift.  In a build without CUDA it throws
// EngineError(kNotBuilt).
std::unique_ptr<Engine> make_cuda_engine(const HostData& data, Precision precision, int device,
                                         const double* shift = nullptr, const CudaTuning& tuning = CudaTuning());

// Whether the CUDA engine fits observation weights (HostData::w); R asks
// before it chooses an engine.  Defined with the CUDA engine.
bool cuda_supports_weights();

// Runs a kernel that traps on the device, and throws the resulting
// EngineError as every CUDA failure is thrown (internal: the tests check that
// a kernel fault is an R error; the process cannot use CUDA afterwards).
void cuda_fault_test(int device);

// Frees the pinned buffers the CUDA engine keeps between fits (at the end
// of R's session; a no-op without CUDA).
void cuda_release_kept();

// What the CUDA side says about itself (never throws).
struct CudaDevice {
  std::string name;
  int major = 0, minor = 0;  // compute capability
  double total_memory = 0.0, free_memory = 0.0;
  int multiprocessors = 0;
  bool ok = false;      // false: the query failed
  bool usable = false;  // this build's kernels run on it
  std::string why;      // why not
};
struct CudaInfo {
  bool built = false;
  int runtime_version = 0, driver_version = 0;
  int device_count = 0;
  std::string message;  // why there is no device
  std::vector<CudaDevice> devices;
};
CudaInfo cuda_info();
// The name of a device (cached per process: a property query costs more
// than a small fit).
std::string cuda_device_name(int device);

}  // namespace gk

#endif
