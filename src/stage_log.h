// stage_log.h: an internal diagnostic of where a fit's wall time goes.
// With the environment variable GPUKMEANS_STAGE_LOG naming a file, each
// marked stage of a gk_fit_cpp call appends "stage seconds" (the seconds
// since the previous mark) to it; unset, marking costs one branch.  Not
// part of the user API (tools/gpu/profile-big.R reads it).
#ifndef GPUKMEANS_STAGE_LOG_H
#define GPUKMEANS_STAGE_LOG_H

#include <cstdio>
#include <cstdlib>

#include "wall_clock.h"

namespace gk {

class StageLog {
 public:
  StageLog() {
    const char* f = std::getenv("GPUKMEANS_STAGE_LOG");
    if (f && *f) fp_ = std::fopen(f, "a");
    t_ = wall_seconds();
    if (fp_) current() = this;
  }
  ~StageLog() {
    if (!fp_) return;
    std::fclose(fp_);
    current() = nullptr;
  }
  StageLog(const StageLog&) = delete;
  StageLog& operator=(const StageLog&) = delete;
  void mark(const char* stage) {
    if (!fp_) return;
    const double t = wall_seconds();
    note(stage, t - t_);
    t_ = t;
  }
  // A line "stage seconds" that does not move the clock: the duration of
  // something measured elsewhere (another thread's task).
  void note(const char* stage, double seconds) {
    if (fp_) std::fprintf(fp_, "%s %.6f\n", stage, seconds);
  }
  // The log of the call in progress (on the thread that runs it), or null.
  static StageLog*& current() {
    static StageLog* log = nullptr;
    return log;
  }

 private:
  std::FILE* fp_ = nullptr;
  double t_ = 0.0;
};

// Marks a stage in the log of the call in progress, if any.
inline void stage_mark(const char* stage) {
  if (StageLog* l = StageLog::current()) l->mark(stage);
}
// Notes a duration in that log (StageLog::note), from the thread that runs the call.
inline void stage_note(const char* stage, double seconds) {
  if (StageLog* l = StageLog::current()) l->note(stage, seconds);
}

}  // namespace gk

#endif
