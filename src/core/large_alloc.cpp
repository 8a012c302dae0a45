#include "core/large_alloc.h"

#include <cstdlib>

#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#define DLRT_LARGE_ALLOC_MMAP 1
#endif

namespace dlrt {

void* large_alloc(size_t bytes) {
#ifdef DLRT_LARGE_ALLOC_MMAP
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
#else
  return std::calloc(1, bytes);  // (no 64-byte alignment promise here; unused on the platforms built)
#endif
}

void large_free(void* p, size_t bytes) {
  if (!p) return;
#ifdef DLRT_LARGE_ALLOC_MMAP
  munmap(p, bytes);
#else
  (void)bytes;
  std::free(p);
#endif
}

}  // namespace dlrt
