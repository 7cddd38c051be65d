// process_guard.h: what survives fork() (parallel::mclapply, BiocParallel's
// MulticoreParam, future's multicore plan).
//
// GNU OpenMP's thread pool does not survive fork(): a forked child that
// starts a parallel region with several threads can hang.  A CUDA context
// does not survive it either.  So, in a forked child of the process that
// loaded the package, the CPU engine runs one thread (as data.table does),
// and CUDA is refused once the parent has touched it (the child gets the
// CPU engine, or with backend = "cuda" a clear error).
#ifndef GPUKMEANS_PROCESS_GUARD_H
#define GPUKMEANS_PROCESS_GUARD_H

namespace gk {

// True in a process forked after the package was loaded.
bool in_forked_child();

// Call before every use of the CUDA runtime: records the process that
// initialised it, and returns a reason (non-empty) when this process may not
// use it (a forked child of that process).
const char* cuda_use_refused();

}  // namespace gk

#endif
