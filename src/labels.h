// labels.h: the per-row labels of a fit (LloydFit::cluster), in a buffer
// that is not zero-filled when it is sized (an engine writes every label
// anyway) and that asks for transparent huge pages when large, so that a
// 1e8-row fit does not spend a fifth of a second touching 100 000 fresh
// 4 KiB pages (measured on an H200 host, tools/gpu/profile-big.R).  Plain
// C++, no R.
#ifndef GPUKMEANS_LABELS_H
#define GPUKMEANS_LABELS_H

#include <cstddef>
#include <cstdlib>
#include <new>
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

using Labels = std::vector<int, LabelAllocator<int>>;

}  // namespace gk

#endif
