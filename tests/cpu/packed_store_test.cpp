// The store packed weights live in (packed_store.h): aligned, disjoint
// blocks that keep their contents while others come and go, and chunks
// that go back to the system once their last block is freed.
#include "backends/cpu/packed_store.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace dlrt::cpu {
namespace {

struct Block {
  unsigned char* p;
  size_t bytes;
  unsigned char tag;
};

void fill(const Block& b) { std::memset(b.p, b.tag, b.bytes); }

bool intact(const Block& b) {
  for (size_t i = 0; i < b.bytes; ++i)
    if (b.p[i] != b.tag) return false;
  return true;
}

TEST(PackedStore, BlocksAreAlignedDisjointAndKeepTheirContents) {
  // Small blocks share chunks; 9 MiB gets a mapping of its own.
  const size_t sizes[] = {1, 100, 4099, 64 << 10, 1 << 20, 3 << 20, 9 << 20, 17, 12289};
  std::vector<Block> blocks;
  unsigned char tag = 1;
  for (size_t n : sizes) {
    Block b{static_cast<unsigned char*>(packed_alloc(n)), n, tag++};
    ASSERT_NE(b.p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.p) % 64, 0u) << n << " bytes";
    fill(b);
    blocks.push_back(b);
  }
  for (const Block& b : blocks) EXPECT_TRUE(intact(b)) << b.bytes << " bytes";
  // Free every other block (a freed block's inner pages go back to the
  // system): its neighbours must keep their bytes.
  for (size_t i = 0; i < blocks.size(); i += 2) packed_free(blocks[i].p, blocks[i].bytes);
  for (size_t i = 1; i < blocks.size(); i += 2) EXPECT_TRUE(intact(blocks[i])) << blocks[i].bytes << " bytes";
  for (size_t i = 1; i < blocks.size(); i += 2) packed_free(blocks[i].p, blocks[i].bytes);
}

TEST(PackedStore, ChunksAreUnmappedWithTheirLastBlock) {
  if (!packed_store_enabled()) GTEST_SKIP() << "DLRT_HUGE_PAGES=0: blocks come from the heap, no chunks to count";
  const size_t before = packed_store_mapped_bytes();
  // 40 MiB of 1 MiB blocks fills more than one 32 MiB chunk.
  std::vector<void*> small;
  for (int i = 0; i < 40; ++i) small.push_back(packed_alloc(1 << 20));
  void* big = packed_alloc(10 << 20);
  EXPECT_GE(packed_store_mapped_bytes(), before + (50u << 20));
  packed_free(big, 10 << 20);
  for (void* p : small) packed_free(p, 1 << 20);
  // Chunks this test opened are gone; one that already held blocks stays.
  EXPECT_EQ(packed_store_mapped_bytes(), before);
}

}  // namespace
}  // namespace dlrt::cpu
