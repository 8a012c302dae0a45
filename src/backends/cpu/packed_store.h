// Memory for the constant operands kernels pack at session create: weight
// matrices in the GEMM's panel layout (PackedMatrix), which includes the
// Winograd-transformed filters.
//
// Why a store of its own: a run reads each packed weight once, front to
// back, and a transformer's weights (42 MiB for minilm_l6) do not stay in
// cache between runs. On 4 KiB pages that stream costs a TLB miss and a page
// walk every 4 KiB, and the hardware prefetcher stops at each page boundary.
// The store carves blocks out of 2 MiB-aligned chunks that it asks Linux to
// back with transparent huge pages (madvise MADV_HUGEPAGE, which Debian's
// default THP mode "madvise" honours), so one TLB entry covers 2 MiB of
// weights: minilm_l6 at sequence 128 on one thread ran 4-5% faster
// (docs/performance-decisions.md, "Packed weights on huge pages").
//
// Blocks are bump-allocated from 32 MiB chunks (only the 2 MiB pages a block
// touches become resident); a block of 8 MiB or more gets a mapping of its
// own. Freeing a block returns the whole pages inside it to the system at
// once, so a chunk kept mapped by a long-lived session never keeps a dead
// session's weights resident, and a chunk is unmapped when its last block
// is freed.
//
// DLRT_HUGE_PAGES=0 turns the store off: each block then comes from the heap
// (64-byte aligned), as before. Without mmap (non-POSIX builds) it is
// always off.
//
// Thread-safety: both functions may be called from any thread.
#pragma once

#include <cstddef>

namespace dlrt::cpu {

// `bytes` (> 0) of 64-byte-aligned, uninitialised memory. Where mmap fails
// the block comes from the heap, so exhaustion is reported as for any other
// allocation (std::bad_alloc from operator new). Release with packed_free(p, bytes).
void* packed_alloc(size_t bytes);
void packed_free(void* p, size_t bytes);

// For tests and diagnostics: whether the store is on, and the bytes it has
// mapped now (0 when off).
bool packed_store_enabled();
size_t packed_store_mapped_bytes();

}  // namespace dlrt::cpu
