// multi_engine.h: one engine made of several engines that each hold a
// contiguous block of the rows (gpu_kmeans(device = c(0, 1)) or "all": one
// CUDA engine per device, each keeping its block resident; on the CPU engine
// for the tests).  Device-agnostic: it only calls the parts through the
// engine interface (engine.h), and combines what they return exactly, so that
// the fit is the same, bit for bit, for any number of parts:
//   * Lloyd: lloyd_parts() (src/fit_driver.h): every step's fixed-point sums,
//     counts and changed points added in part order, the parts' step() and
//     within-SS calls run concurrently (one host thread per part); on one
//     CUDA engine lloyd_parts() is gk_cuda_lloyd bit for bit, so CUDA parts
//     give the fit of device = one GPU;
//   * totss: the CPU engine's sum (cpu_totss, long double per column, R's
//     order) on the caller's x, which the CUDA engine also uses for its own
//     totss (src/cuda_engine.cpp): the same bits as one engine;
//   * k-means++ and the rounds of k-means||: where the parts run them
//     together (Engine::greedy_together, Engine::par_together: CUDA parts
//     whose devices reach each other's memory, each pass on every device
//     over its rows), they do;
//   * else k-means++ and the rounds of k-means||, and always the reduction
//     of the k-means|| candidates (over those, gathered on the host):
//     one engine over all the rows, made from the parts' device copies
//     (Engine::gathered), or by MultiOptions::whole (a second upload), or,
//     where neither fits, the CPU engine's code on the host on the data the
//     parts' initialisation reads: x itself (double precision; the CPU
//     engine in either precision), or, for CUDA parts in single precision,
//     the values they store, float(x - shift) (src/parity.h point 1), made
//     for the initialisation and freed after it.  In double precision the
//     CUDA engine picks the CPU engine's rows (parity.h), and in single the
//     values are those one CUDA engine stores, so these are one engine's
//     picks;
//   * assign (predict): each part labels its rows, concurrently;
//   * quality (silhouette, the sweep): not supported (kUnsupported).
// x from a reader (HostData::reader, a matrix source): the parts are made
// at once where the reader allows (RowReader::concurrent), else one after
// another on the calling thread, each reading its rows (a RowRange;
// MultiOptions::reads_rows); totss reads x again; the k-means|| reduction reads its
// candidates' rows; an initialisation on the host reads x into host memory
// for its duration (where neither the parts together nor one device over
// all the rows can run it).
// Observation weights are refused (kUnsupported).  Plain C++, no R, no CUDA.
#ifndef GPUKMEANS_MULTI_ENGINE_H
#define GPUKMEANS_MULTI_ENGINE_H

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine.h"

namespace gk {

// Makes the engine of part p over `block` (rows [lo, hi) of x: a copy, n x
// d column-major, or in place with MultiOptions::in_place); shift: the single-precision shift of all the rows (d
// values), or nullptr in double precision.  Called from a thread of its own
// per part (the CUDA uploads overlap).
using PartFactory = std::function<std::unique_ptr<Engine>(const HostData& block, int part, const double* shift)>;

// Makes an engine over all the rows (`all`: x itself; shift as for the
// parts) for an initialisation; throws EngineError kOutOfMemory where they
// do not fit (the composite then initialises on the host).
using WholeFactory = std::function<std::unique_ptr<Engine>(const HostData& all, const double* shift)>;

struct MultiOptions {
  int parts = 1;           // blocks of rows [n p / parts, n (p + 1) / parts); empty ones get no engine
  int host_threads = 0;    // threads of the host passes (totss, initialisation; 0: all)
  bool keep_blocks = true; // false: a part's host copy is freed once its engine is made, unless the part
                           // streams it from host memory (streamed_chunks() > 0) (an engine that
                           // copied it, the CUDA engine, and whose remaining uses of it the composite
                           // never calls: block_init, weights)
  std::string device;      // what device() says (empty: the parts' devices, joined)
  bool in_place = false;   // true: a part's HostData is its block of x in place (HostData::ld = n: the
                           // CUDA engine, whose upload reads it so); false: a copy of the block
  WholeFactory whole;      // the initialisations' engine (empty: the CPU engine's code on the host)
  std::int64_t align = 1;  // block boundaries at multiples of this many rows (the CUDA engines'
                           // initialisations together need whole level-1 nodes of the trees: 32)
  bool together = true;    // false: never the parts' initialisations together (greedy_together,
                           // par_together), one engine over all the rows instead (tests of that path)
  bool reads_rows = false; // x from a reader: true, each part takes a reader of its rows (the CUDA
                           // engine); false, a host copy of them, read from it (CPU parts: the tests)
};

// The composite over `data` (all the rows; must outlive it, as HostData
// says).  Throws what a part's factory throws (the parts made so far freed).
std::unique_ptr<Engine> make_multi_engine(const HostData& data, Precision precision, const PartFactory& make,
                                          const MultiOptions& options);

}  // namespace gk

#endif
