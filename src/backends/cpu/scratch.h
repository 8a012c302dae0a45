// A 64-byte-aligned buffer that grows and never shrinks, for the CPU
// kernels' per-thread scratch: each call site keeps its own thread_local
// instance, so no heap allocation happens once a run's shapes have been seen.
#pragma once

#include <algorithm>
#include <cstddef>
#include <new>

namespace dlrt::cpu {

class AlignedScratch {
 public:
  // How a too-small buffer grows: to exactly what is asked, or by at least
  // half (for sizes that creep up from call to call).
  enum class Growth { kExact, kByHalf };

  AlignedScratch() = default;
  AlignedScratch(const AlignedScratch&) = delete;
  AlignedScratch& operator=(const AlignedScratch&) = delete;
  ~AlignedScratch() { ::operator delete(p_, std::align_val_t(64)); }

  // At least `bytes` bytes (one when 0); the contents are not kept when it grows.
  void* bytes(size_t bytes, Growth growth = Growth::kExact) {
    bytes = std::max<size_t>(bytes, 1);
    if (size_ < bytes) {
      ::operator delete(p_, std::align_val_t(64));
      p_ = nullptr;  // (if the allocation below throws, the destructor must not free twice)
      const size_t grow = growth == Growth::kByHalf ? std::max(bytes, size_ + size_ / 2) : bytes;
      size_ = 0;
      p_ = ::operator new(grow, std::align_val_t(64));
      size_ = grow;
    }
    return p_;
  }

  template <typename T>
  T* get(size_t n, Growth growth = Growth::kExact) {
    return static_cast<T*>(bytes(n * sizeof(T), growth));
  }

 private:
  void* p_ = nullptr;
  size_t size_ = 0;
};

}  // namespace dlrt::cpu
