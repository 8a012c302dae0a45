#include "core/large_alloc.h"

#include <cstdlib>
#include <cstring>

#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#define DLRT_LARGE_ALLOC_MMAP 1
#endif

namespace dlrt {

namespace {

// `bytes` of zero-filled, page-aligned memory, or null.
void* large_alloc(size_t bytes) {
#ifdef DLRT_LARGE_ALLOC_MMAP
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
#else
  const size_t page = 4096;  // the alignment a mapping would have
  void* p = std::aligned_alloc(page, (bytes + page - 1) / page * page);
  if (p) std::memset(p, 0, bytes);
  return p;
#endif
}

void large_free(void* p, size_t bytes) {
#ifdef DLRT_LARGE_ALLOC_MMAP
  munmap(p, bytes);
#else
  (void)bytes;
  std::free(p);
#endif
}

}  // namespace

void* buffer_alloc(size_t bytes, bool zero) {
  if (bytes >= kLargeAllocBytes) return large_alloc(bytes);
  void* p = std::aligned_alloc(64, bytes);
  if (p && zero) std::memset(p, 0, bytes);
  return p;
}

void buffer_free(void* p, size_t bytes) {
  if (!p) return;
  if (bytes >= kLargeAllocBytes) large_free(p, bytes);
  else std::free(p);
}

}  // namespace dlrt
