// host_team.hpp: a team of host threads that split one loop at a time.
//
// The staged copies (staged_copy.cu, streamed.cu) fill a pinned buffer of
// 32 MiB with every host thread, then hand it to the copy engine, hundreds
// of times for a large x.  Starting and joining fresh threads for every
// buffer cost ~15 thread starts per 1 ms of copying; a team starts its
// threads once and wakes them per buffer.  Plain C++ (no CUDA, no R): the
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

  // Up to `threads` threads in all (this one and threads - 1 workers); a
  // worker that cannot be started leaves the team smaller.
  explicit HostTeam(int threads) {
    for (int i = 1; i < threads; ++i) {
      try {
        pool_.emplace_back(&HostTeam::work, this, i);
      } catch (...) {
        break;
      }
    }
  }
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

  int size() const { return (int)pool_.size() + 1; }

  // part(a, b) over [0, total) in up to size() parts of at least min_part
  // elements (each a multiple of `align` elements but the last), this
  // thread running the first; returns when every part has run.  Parts must
  // not throw.
  void run(size_t total, size_t min_part, size_t align, const Part &part) {
    size_t parts = std::max<size_t>(1, std::min<size_t>((size_t)size(), total / std::max<size_t>(min_part, 1)));
    size_t step = (total + parts - 1) / parts;
    step = (step + align - 1) / align * align;
    parts = std::max<size_t>(1, (total + step - 1) / step);
    if (parts > 1) {
      std::lock_guard<std::mutex> lock(m_);
      job_ = &part;
      total_ = total;
      step_ = step;
      parts_ = (int)parts;
      pending_ = (int)parts - 1;
      ++generation_;
    }
    if (parts > 1) go_.notify_all();
    part(0, std::min(total, step));
    if (parts > 1) {
      std::unique_lock<std::mutex> lock(m_);
      done_.wait(lock, [this] { return pending_ == 0; });
      job_ = nullptr;
    }
  }

 private:
  void work(int id) {
    unsigned long seen = 0;
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
