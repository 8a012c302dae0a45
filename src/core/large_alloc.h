// Buffers for tensors and run arenas, the large ones straight from the kernel.
//
// glibc's malloc hands out blocks of 128 KiB and more through mmap, but once
// such a block is freed it raises that threshold to the freed size (up to 32
// MiB) and serves later blocks of that size from its heap, where freed
// memory stays resident. A model's first run (every value a tensor of its
// own) then left tens of MiB of heap behind the run arena: minilm_l6 at
// batch 8 peaked at 187 MiB instead of 158. These buffers are mapped and
// unmapped here instead, so their memory goes back when they are freed and
// glibc's threshold never moves.
//
// Thread-safety: free of shared state.
#pragma once

#include <cstddef>

namespace dlrt {

// Sizes from which buffer_alloc maps memory rather than calling malloc.
inline constexpr size_t kLargeAllocBytes = size_t{1} << 20;

// `bytes` (a multiple of 64) of 64-byte-aligned memory, or null when the
// system has none: from kLargeAllocBytes on a fresh mapping (page-aligned
// and zero-filled), below that from aligned_alloc, zero-filled when `zero`.
// Release it with buffer_free(p, bytes), the same byte count.
void* buffer_alloc(size_t bytes, bool zero);
void buffer_free(void* p, size_t bytes);

}  // namespace dlrt
