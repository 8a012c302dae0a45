#include "backends/cpu/packed_store.h"

#include <cassert>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <set>
#include <string_view>

#if defined(__unix__)
#include <sys/mman.h>

#include "core/env.h"
#define DLRT_PACKED_STORE_MMAP 1
#endif

namespace dlrt::cpu {

namespace {

constexpr size_t kAlign = 64;
constexpr size_t kPage = 4096;
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kChunkBytes = size_t{32} << 20;
constexpr size_t kOwnMappingBytes = size_t{8} << 20;

constexpr size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

bool enabled() {
#ifdef DLRT_PACKED_STORE_MMAP
  static const bool on = [] {
    const char* e = env::get("DLRT_HUGE_PAGES");
    return !(e && std::string_view(e) == "0");
  }();
  return on;
#else
  return false;
#endif
}

#ifdef DLRT_PACKED_STORE_MMAP
struct Chunk {
  char* base = nullptr;
  size_t len = 0;   // mapped bytes (a multiple of kPage)
  size_t used = 0;  // bytes handed out, from base
  size_t live = 0;  // blocks not yet freed
};

struct Store {
  std::mutex mu;
  std::map<uintptr_t, Chunk> chunks;  // keyed by end address: upper_bound(p) finds p's chunk
  Chunk* current = nullptr;           // the chunk small blocks are cut from (a node of `chunks`)
  std::set<void*> heap;               // blocks taken from the heap when mmap failed
};

// Never destroyed: a session held in a static may free its weights after
// this file's statics are gone.
Store& store() {
  static Store* s = new Store;
  return *s;
}

// `len` bytes (a multiple of kPage) of fresh memory at a 2 MiB boundary,
// advised for huge pages, or null.
char* map_aligned(size_t len) {
  const size_t over = len + kHugePage;
  void* p = mmap(nullptr, over, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  char* raw = static_cast<char*>(p);
  char* base = reinterpret_cast<char*>(round_up(reinterpret_cast<uintptr_t>(raw), kHugePage));
  if (base > raw) munmap(raw, static_cast<size_t>(base - raw));
  char* const raw_end = raw + over;
  if (raw_end > base + len) munmap(base + len, static_cast<size_t>(raw_end - (base + len)));
  // Advice only: where THP is off (or unsupported) the memory stays on 4 KiB pages.
#ifdef MADV_HUGEPAGE
  madvise(base, len, MADV_HUGEPAGE);
#endif
  return base;
}

// A new chunk of `len` bytes, or null when mmap refuses.
Chunk* add_chunk(Store& s, size_t len) {
  char* base = map_aligned(len);
  if (!base) return nullptr;
  Chunk c;
  c.base = base;
  c.len = len;
  return &s.chunks.emplace(reinterpret_cast<uintptr_t>(base + len), c).first->second;
}

// The store is an optimisation: when mmap fails the block comes from the
// heap, which reports exhaustion as every other allocation does.
void* heap_block(Store& s, size_t need) {
  void* p = ::operator new(need, std::align_val_t(kAlign));
  s.heap.insert(p);
  return p;
}
#endif

}  // namespace

void* packed_alloc(size_t bytes) {
  const size_t need = round_up(bytes > 0 ? bytes : 1, kAlign);
  if (!enabled()) return ::operator new(need, std::align_val_t(kAlign));
#ifdef DLRT_PACKED_STORE_MMAP
  Store& s = store();
  std::lock_guard<std::mutex> lock(s.mu);
  if (need >= kOwnMappingBytes) {
    Chunk* c = add_chunk(s, round_up(need, kPage));
    if (!c) return heap_block(s, need);
    c->used = need;
    c->live = 1;
    return c->base;
  }
  if (!s.current || s.current->len - s.current->used < need) {
    Chunk* fresh = add_chunk(s, kChunkBytes);
    if (!fresh) return heap_block(s, need);
    s.current = fresh;
  }
  Chunk& c = *s.current;
  void* p = c.base + c.used;
  c.used += need;
  ++c.live;
  return p;
#else
  return nullptr;  // unreachable: the store is always off here
#endif
}

void packed_free(void* p, size_t bytes) {
  if (!p) return;
  const size_t need = round_up(bytes > 0 ? bytes : 1, kAlign);
  if (!enabled()) {
    ::operator delete(p, std::align_val_t(kAlign));
    return;
  }
#ifdef DLRT_PACKED_STORE_MMAP
  Store& s = store();
  std::lock_guard<std::mutex> lock(s.mu);
  const auto at = reinterpret_cast<uintptr_t>(p);
  const auto it = s.chunks.upper_bound(at);
  if (it == s.chunks.end() || at < reinterpret_cast<uintptr_t>(it->second.base)) {
    // Not in a chunk: a heap block. Only PackedMatrix frees, and only what
    // packed_alloc gave it, so any other pointer is a bug: debug builds check.
    [[maybe_unused]] const size_t erased = s.heap.erase(p);
    assert(erased == 1);
    if (erased) ::operator delete(p, std::align_val_t(kAlign));
    return;
  }
  Chunk& c = it->second;
  if (--c.live == 0) {
    if (s.current == &c) s.current = nullptr;
    munmap(c.base, c.len);
    s.chunks.erase(it);
    return;
  }
  // Other blocks keep the chunk mapped: give back the pages that lie wholly
  // inside this one (addresses are never handed out twice, so they stay unused).
  const uintptr_t first = round_up(at, kPage);
  const uintptr_t last = (at + need) / kPage * kPage;
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
#endif
}

bool packed_store_enabled() { return enabled(); }

size_t packed_store_mapped_bytes() {
  size_t total = 0;
#ifdef DLRT_PACKED_STORE_MMAP
  if (!enabled()) return 0;
  Store& s = store();
  std::lock_guard<std::mutex> lock(s.mu);
  for (const auto& [end, c] : s.chunks) total += c.len;
#endif
  return total;
}

}  // namespace dlrt::cpu
