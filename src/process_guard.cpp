// process_guard.cpp: see process_guard.h.
#include "process_guard.h"

#include <atomic>

#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#include <unistd.h>
#define GK_HAVE_FORK 1
#endif

namespace gk {

namespace {

std::atomic<bool> forked{false};
std::atomic<long> cuda_pid{0};  // the process that first used the CUDA runtime

#ifdef GK_HAVE_FORK
// Runs in the child right after fork(): only async-signal-safe work.
void on_fork_child() { forked.store(true); }

// Registered when the shared library is loaded.
struct RegisterAtFork {
  RegisterAtFork() { pthread_atfork(nullptr, nullptr, on_fork_child); }
} register_at_fork;
#endif

}  // namespace

bool in_forked_child() { return forked.load(); }

const char* cuda_use_refused() {
#ifdef GK_HAVE_FORK
  const long me = static_cast<long>(getpid());
  long expected = 0;
  if (cuda_pid.compare_exchange_strong(expected, me) || expected == me) return "";
  return "CUDA was initialised in the parent of this forked process (parallel::mclapply, "
         "BiocParallel's MulticoreParam, future's multicore plan) and cannot be used after fork(); "
         "use a socket cluster (parallel::makePSOCKcluster, future's multisession plan) to run "
         "fits on the GPU from workers";
#else
  return "";
#endif
}

}  // namespace gk
