// labels.h: the per-row labels of a fit (LloydFit::cluster), written in
// place into the caller's destination or into a buffer that is not
// zero-filled when it is sized (an engine writes every label anyway) and
// that asks for transparent huge pages when large, so that a 1e8-row fit
// does not spend a fifth of a second touching 100 000 fresh 4 KiB pages
// (measured on an H200 host, tools/gpu/profile-big.R).  Plain C++, no R.
#ifndef GPUKMEANS_LABELS_H
#define GPUKMEANS_LABELS_H

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <future>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace gk {

// Huge pages for [p, p + bytes) where the kernel offers them (Linux,
// transparent huge pages in "madvise" or "always" mode); a no-op elsewhere.
inline void advise_huge_pages(void* p, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::size_t kHuge = std::size_t(2) << 20;
  const std::size_t a = (reinterpret_cast<std::size_t>(p) + kHuge - 1) & ~(kHuge - 1);
  const std::size_t e = (reinterpret_cast<std::size_t>(p) + bytes) & ~(kHuge - 1);
  if (e > a) (void)madvise(reinterpret_cast<void*>(a), e - a, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

// The fresh pages of [p, p + bytes) touched (written, one int a 4 KiB page)
// on a thread of its own while the caller does something else, and waited
// for when this goes (or at wait()).  For a destination the device's labels
// are copied into later: the copy then lands in pages already there (4 MB
// of labels, the download of a 1e6-row fit: ~0.5 ms against ~2.3 ms into
// fresh pages on an H200 host).  Below 1 MiB, or with no thread to be had,
// nothing.  The caller writes nothing there before wait().
class PageToucher {
 public:
  PageToucher(int* p, std::size_t bytes) {
    if (!p || bytes < (std::size_t(1) << 20)) return;
    try {
      done_ = std::async(std::launch::async, [p, bytes] {
        const std::size_t step = 4096 / sizeof(int), n = bytes / sizeof(int);
        for (std::size_t i = 0; i < n; i += step) p[i] = 0;
      });
    } catch (const std::system_error&) {
    }
  }
  ~PageToucher() { wait(); }
  PageToucher(const PageToucher&) = delete;
  PageToucher& operator=(const PageToucher&) = delete;
  void wait() {
    if (done_.valid()) done_.get();
  }

 private:
  std::future<void> done_;
};

// std::allocator without value-initialisation of sized elements, 2 MiB
// aligned with huge-page advice from 32 MiB on.
template <typename T>
struct LabelAllocator {
  using value_type = T;
  LabelAllocator() = default;
  template <typename U>
  LabelAllocator(const LabelAllocator<U>&) {}
  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < (std::size_t(32) << 20)) return static_cast<T*>(::operator new(bytes));
    void* p = nullptr;
    if (posix_memalign(&p, std::size_t(2) << 20, bytes) != 0) throw std::bad_alloc();
    advise_huge_pages(p, bytes);
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) {
    if (n * sizeof(T) < (std::size_t(32) << 20))
      ::operator delete(p);
    else
      std::free(p);
  }
  template <typename U>
  void construct(U* p) {
    ::new (static_cast<void*>(p)) U;  // default-initialised: no zeroing
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(static_cast<Args&&>(args)...);
  }
  template <typename U>
  bool operator==(const LabelAllocator<U>&) const { return true; }
  template <typename U>
  bool operator!=(const LabelAllocator<U>&) const { return false; }
};

// The labels of a fit (LloydFit::cluster): n ints that an engine writes.
// Either the engine's own buffer (LabelAllocator: not zero-filled, huge
// pages when large) or a view of memory the caller gave as the labels'
// destination (the R integer vector of the result, src/fit_glue.cpp),
// written in place: a 1e8-row fit then neither allocates a second 400 MB
// nor copies the labels into the result.  A copy of a view is a buffer of
// its own.
class Labels {
 public:
  Labels() = default;
  // A view of dst[0, n): written in place; its size is fixed.
  static Labels view(int* dst, std::size_t n) {
    Labels l;
    l.p_ = dst;
    l.n_ = n;
    l.view_ = true;
    return l;
  }
  Labels(const Labels& o) { copy_from(o); }
  Labels& operator=(const Labels& o) {
    if (this != &o) {
      release();
      copy_from(o);
    }
    return *this;
  }
  Labels(Labels&& o) noexcept : p_(o.p_), n_(o.n_), view_(o.view_) { o.forget(); }
  Labels& operator=(Labels&& o) noexcept {
    if (this != &o) {
      release();
      p_ = o.p_;
      n_ = o.n_;
      view_ = o.view_;
      o.forget();
    }
    return *this;
  }
  ~Labels() { release(); }

  std::size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  bool is_view() const { return view_; }
  int* data() { return p_; }
  const int* data() const { return p_; }
  int* begin() { return p_; }
  int* end() { return p_ + n_; }
  const int* begin() const { return p_; }
  const int* end() const { return p_ + n_; }
  int& operator[](std::size_t i) { return p_[i]; }
  int operator[](std::size_t i) const { return p_[i]; }

  // n labels, the first min(n, size()) kept, the others not initialised.  A
  // view takes only its own size (the caller sized the destination for the
  // engine's rows: another size is a bug).
  void resize(std::size_t n) {
    if (n == n_) return;
    if (view_)
      throw std::length_error("the labels' destination holds " + std::to_string(n_) + " rows, not " +
                              std::to_string(n));
    int* q = n ? LabelAllocator<int>().allocate(n) : nullptr;
    if (n_ && n) std::memcpy(q, p_, std::min(n, n_) * sizeof(int));
    release();
    p_ = q;
    n_ = n;
  }
  void assign(std::size_t n, int value) {
    resize(n);
    std::fill(p_, p_ + n_, value);
  }

 private:
  void copy_from(const Labels& o) {
    p_ = o.n_ ? LabelAllocator<int>().allocate(o.n_) : nullptr;
    n_ = o.n_;
    view_ = false;
    if (n_) std::memcpy(p_, o.p_, n_ * sizeof(int));
  }
  void release() {
    if (!view_ && p_) LabelAllocator<int>().deallocate(p_, n_);
    forget();
  }
  void forget() {
    p_ = nullptr;
    n_ = 0;
    view_ = false;
  }
  int* p_ = nullptr;
  std::size_t n_ = 0;
  bool view_ = false;
};

// dst[0, n) = src[0, n), by `threads` threads where it is large (a 1e8-row
// copy costs a fraction of touching its fresh 4 KiB pages on one thread;
// dst is advised to use huge pages).
inline void copy_labels(int* dst, const int* src, std::size_t n, int threads) {
  const std::size_t bytes = n * sizeof(int);
  if (bytes < (std::size_t(32) << 20) || threads < 2) {
    if (n) std::memcpy(dst, src, bytes);
    return;
  }
  advise_huge_pages(dst, bytes);
  constexpr std::int64_t kChunk = std::int64_t(1) << 20;  // ints per task (4 MiB)
  const std::int64_t total = static_cast<std::int64_t>(n), chunks = (total + kChunk - 1) / kChunk;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t c = 0; c < chunks; ++c) {
    const std::int64_t lo = c * kChunk, len = std::min<std::int64_t>(kChunk, total - lo);
    std::memcpy(dst + lo, src + lo, static_cast<std::size_t>(len) * sizeof(int));
  }
}

}  // namespace gk

#endif
