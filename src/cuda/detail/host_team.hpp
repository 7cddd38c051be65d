// host_team.hpp: a team of host threads that split one loop at a time.
//
// The staged copies (staged_copy.cu, streamed.cu) fill a pinned buffer of
// 32 MiB with every host thread, then hand it to the copy engine, hundreds
// of times for a large x.  Starting and joining fresh threads for every
// buffer cost ~15 thread starts per 1 ms of copying (the double upload of
// 1e8 x 16: 1.17 s against 0.43 s with a team, H100 host, 2026-11-25); a
// team starts its threads once, when a loop first needs them (a small copy
// starts none), and wakes them per loop.  Plain C++ (no CUDA, no R): the
// workers never call either.
#ifndef GPUKMEANS_HOST_TEAM_HPP
#define GPUKMEANS_HOST_TEAM_HPP

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gk {

class HostTeam {
 public:
  using Part = std::function<void(size_t, size_t)>;

  // Up to `threads` threads in all: this one and up to threads - 1 workers.
  explicit HostTeam(int threads) : max_(std::max(threads, 1)) {}
  ~HostTeam() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    go_.notify_all();
    for (auto &t : pool_) t.join();
  }
  HostTeam(const HostTeam &) = delete;
  HostTeam &operator=(const HostTeam &) = delete;

  // The threads a loop may take (fewer run where a worker cannot be started).
  int size() const { return max_; }

  // part(a, b) over [0, total) in up to size() parts of at least min_part
  // elements (each a multiple of `align` elements but the last), this
  // thread running the first; returns when every part has run.  Parts must
  // not throw.
  void run(size_t total, size_t min_part, size_t align, const Part &part) {
    if (total == 0) return;
    size_t parts = std::max<size_t>(1, std::min<size_t>((size_t)max_, total / std::max<size_t>(min_part, 1)));
    if (parts > 1) parts = std::min(parts, (size_t)start_workers((int)parts));
    size_t step = (total + parts - 1) / parts;
    step = (step + align - 1) / align * align;
    parts = std::max<size_t>(1, (total + step - 1) / step);
    if (parts > 1) {
      {
        std::lock_guard<std::mutex> lock(m_);
        job_ = &part;
        total_ = total;
        step_ = step;
        parts_ = (int)parts;
        pending_ = (int)parts - 1;
        ++generation_;
      }
      go_.notify_all();
    }
    part(0, std::min(total, step));
    if (parts > 1) {
      std::unique_lock<std::mutex> lock(m_);
      done_.wait(lock, [this] { return pending_ == 0; });
      job_ = nullptr;
    }
  }

 private:
  // Workers for `want` threads in all, as far as they can be started;
  // returns the threads there are.  (A worker starts waiting for the next
  // loop, not the last one.)
  int start_workers(int want) {
    std::lock_guard<std::mutex> lock(m_);
    while ((int)pool_.size() + 1 < want) {
      try {
        pool_.emplace_back(&HostTeam::work, this, (int)pool_.size() + 1, generation_);
      } catch (...) {
        max_ = (int)pool_.size() + 1;
        break;
      }
    }
    return (int)pool_.size() + 1;
  }

  void work(int id, unsigned long seen) {
    std::unique_lock<std::mutex> lock(m_);
    for (;;) {
      go_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (id >= parts_) continue;
      const Part *job = job_;
      const size_t a = std::min(total_, (size_t)id * step_), b = std::min(total_, a + step_);
      lock.unlock();
      (*job)(a, b);
      lock.lock();
      if (--pending_ == 0) done_.notify_one();
    }
  }

  int max_;
  std::mutex m_;
  std::condition_variable go_, done_;
  std::vector<std::thread> pool_;
  const Part *job_ = nullptr;
  size_t total_ = 0, step_ = 0;
  int parts_ = 0, pending_ = 0;
  unsigned long generation_ = 0;
  bool stop_ = false;
};

}  // namespace gk

#endif
