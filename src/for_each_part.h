// for_each_part.h: work on several parts at once (the engines of several
// GPUs, src/fit_driver.cpp; the devices of one fit, src/cuda/lloyd_devices.cu),
// one host thread per part.  Header-only plain C++, so that the CUDA objects
// and the harnesses use it without linking the fit driver.
#ifndef GPUKMEANS_FOR_EACH_PART_H
#define GPUKMEANS_FOR_EACH_PART_H

#include <exception>
#include <functional>
#include <thread>
#include <vector>

namespace gk {

// Runs fn(p) for p = 0 .. count - 1, each in a host thread of its own when
// count > 1 (the calling thread runs the last; where no thread can be
// started, it runs those parts too), and rethrows the exception of the
// first part (in part order) that threw, once all have finished.  fn must
// not call R.
inline void for_each_part(int count, const std::function<void(int)>& fn) {
  if (count <= 0) return;
  if (count == 1) {
    fn(0);
    return;
  }
  std::vector<std::exception_ptr> err(count);
  auto run = [&](int p) {
    try {
      fn(p);
    } catch (...) {
      err[p] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(count - 1);
  try {
    for (int p = 0; p + 1 < count; ++p) threads.emplace_back(run, p);
  } catch (...) {  // no thread could be started: run the rest here
    for (int p = static_cast<int>(threads.size()); p + 1 < count; ++p) run(p);
  }
  run(count - 1);
  for (std::thread& t : threads) t.join();
  for (int p = 0; p < count; ++p)
    if (err[p]) std::rethrow_exception(err[p]);
}

}  // namespace gk

#endif
