// pass_poll.h: interrupts and progress during one long parallel pass.
//
// An iteration of Lloyd's algorithm on large data can take minutes.  The
// observer (R's interrupt check and progress bar) may only be called from
// the thread that called the engine, which is thread 0 of the OpenMP team;
// the other threads must not wait for it.  So thread 0 polls the observer
// between its blocks (every kPollSeconds at most) and, once its own share is
// done, keeps polling while it waits for the others; every thread checks a
// shared flag between blocks and stops early once the observer said stop.
#ifndef GPUKMEANS_PASS_POLL_H
#define GPUKMEANS_PASS_POLL_H

#include <atomic>
#include <chrono>
#include <exception>
#include <thread>

#include "engine.h"
#include "observer.h"
#include "threads.h"
#include "wall_clock.h"

namespace gk {

class PassPoll {
 public:
  // observer: may be null (nothing to poll); slots: the parallel slots of
  // the pass (for_each_slot).
  PassPoll(IterationObserver* observer, int slots)
      : observer_(observer), slots_(slots), next_poll_(wall_seconds() + kPollSeconds) {}

  // Between blocks, from any thread: true once the pass must stop.
  bool stop() {
    // the clock is read every 16th block: blocks of small k cost little
    if (observer_ && thread_id() == 0 && (++calls_ & 15) == 0) poll();
    return stop_.load(std::memory_order_relaxed);
  }

  // After each slot's body.
  void slot_done() { done_.fetch_add(1, std::memory_order_acq_rel); }

  // Thread 0, after its last slot: keeps polling until every slot is done,
  // so that a Ctrl-C is seen while slower threads finish.
  void wait_others() {
    if (!observer_) return;
    while (done_.load(std::memory_order_acquire) < slots_ && !stop_.load(std::memory_order_relaxed)) {
      // short waits (the common case: balanced threads) must not take a
      // sleep's granularity; long ones must not burn a core
      if (wall_seconds() < next_poll_)
        std::this_thread::yield();
      else
        std::this_thread::sleep_for(std::chrono::microseconds(500));
      poll();
    }
  }

  // After the parallel region: throws what the observer threw, or
  // Interrupted when it asked to stop.
  void finish() const {
    if (error_) std::rethrow_exception(error_);
    if (stop_.load()) throw Interrupted();
  }

 private:
  static constexpr double kPollSeconds = 0.05;

  void poll() {
    const double now = wall_seconds();
    if (now < next_poll_ || stop_.load(std::memory_order_relaxed)) return;
    next_poll_ = now + kPollSeconds;
    try {
      if (!observer_->keep_going()) stop_.store(true);
    } catch (...) {  // nothing may leave a parallel region
      error_ = std::current_exception();
      stop_.store(true);
    }
  }

  IterationObserver* observer_;
  const int slots_;
  double next_poll_;  // thread 0 only
  unsigned calls_ = 0;  // thread 0 only
  std::exception_ptr error_;
  std::atomic<bool> stop_{false};
  std::atomic<int> done_{0};
};

// for_each_slot() (threads.h) for a pass that `poll` watches: body(t) calls
// poll.stop() between its blocks; poll.finish() afterwards throws if the
// pass was stopped.
template <typename Body>
void for_each_slot(int nt, PassPoll& poll, Body&& body) {
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
  {
    const int team = team_size();
    for (int t = thread_id(); t < nt; t += team) {
      body(t);
      poll.slot_done();
    }
    if (thread_id() == 0) poll.wait_others();
  }
#else
  for (int t = 0; t < nt; ++t) {
    body(t);
    poll.slot_done();
  }
#endif
}

}  // namespace gk

#endif
