#include <gtest/gtest.h>

#include <random>

#include "ir/memory_plan.h"

namespace dlrt::ir {
namespace {

// No two buffers live at the same step may overlap in the arena.
void expect_no_overlap(const std::vector<BufferUse>& uses, const MemoryPlan& plan) {
  for (size_t a = 0; a < uses.size(); ++a)
    for (size_t b = a + 1; b < uses.size(); ++b) {
      bool time = uses[a].first <= uses[b].last && uses[b].first <= uses[a].last;
      bool space = plan.offsets[a] < plan.offsets[b] + uses[b].bytes && plan.offsets[b] < plan.offsets[a] + uses[a].bytes;
      EXPECT_FALSE(time && space) << "buffers " << a << " and " << b << " overlap";
    }
}

TEST(MemoryPlan, ChainReusesTwoBuffers) {
  // A chain a->b->c->d: each buffer lives two steps; two slots suffice.
  std::vector<BufferUse> uses = {{1024, 0, 1}, {1024, 1, 2}, {1024, 2, 3}, {1024, 3, 4}};
  MemoryPlan p = plan_memory(uses);
  expect_no_overlap(uses, p);
  EXPECT_EQ(p.peak_live_bytes, 2048u);
  EXPECT_EQ(p.arena_bytes, 2048u);
  EXPECT_EQ(p.total_bytes, 4096u);
}

TEST(MemoryPlan, RandomGraphsStayNearLowerBound) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<BufferUse> uses;
    for (int i = 0; i < 60; ++i) {
      int first = static_cast<int>(rng() % 50);
      uses.push_back({static_cast<size_t>(64 * (1 + rng() % 100)), first, first + static_cast<int>(rng() % 6)});
    }
    MemoryPlan p = plan_memory(uses);
    expect_no_overlap(uses, p);
    EXPECT_GE(p.arena_bytes, p.peak_live_bytes);
    EXPECT_LE(p.arena_bytes, p.peak_live_bytes * 3 / 2) << "trial " << trial;
  }
}

}  // namespace
}  // namespace dlrt::ir
