// observer.h: how an engine reports progress and learns of interrupts.
#ifndef GPUKMEANS_OBSERVER_H
#define GPUKMEANS_OBSERVER_H

#include <cstdint>

namespace gk {

// Implemented by the R glue.  Engines call it between iterations only.
class IterationObserver {
 public:
  virtual ~IterationObserver() {}
  // True when every iteration must be reported (trace, or a progress bar
  // asked for): the CUDA engine then synchronises once per iteration.
  virtual bool wants_iterations() const = 0;
  // After an iteration: its 1-based number, the points that changed cluster
  // and the tot.withinss of its assignment.  Returns false to stop.
  virtual bool iteration(int iter, std::int64_t changed, double tot_withinss) = 0;
  // A poll without details (between batches of GPU iterations); false = stop.
  virtual bool keep_going() = 0;
  // Start s (1-based) of nstart is about to run.
  virtual void set_start(int s, int nstart) { (void)s; (void)nstart; }
};

}  // namespace gk

#endif
