#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <utility>

#include "ir/memory_plan.h"

namespace dlrt::ir {
namespace {

// No two buffers live at the same step may overlap in the arena (but the
// pairs in `joined`, one taking the other over).
void expect_no_overlap(const std::vector<BufferUse>& uses, const MemoryPlan& plan,
                       const std::vector<std::pair<size_t, size_t>>& joined = {}) {
  for (size_t a = 0; a < uses.size(); ++a)
    for (size_t b = a + 1; b < uses.size(); ++b) {
      if (std::find(joined.begin(), joined.end(), std::pair{a, b}) != joined.end()) continue;
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


TEST(MemoryPlan, TakenBufferSharesItsOffset) {
  // b is written at step 1 over a (last read at step 1), c over b: one slot
  // for the three; d lives alongside and gets its own.
  std::vector<BufferUse> uses = {{4096, 0, 1}, {4096, 1, 2}, {4096, 2, 4}, {4096, 1, 3}};
  uses[1].takes = 0;
  uses[2].takes = 1;
  MemoryPlan p = plan_memory(uses);
  EXPECT_EQ(p.in_place, 2u);
  EXPECT_EQ(p.offsets[0], p.offsets[1]);
  EXPECT_EQ(p.offsets[1], p.offsets[2]);
  EXPECT_NE(p.offsets[3], p.offsets[0]);
  EXPECT_EQ(p.arena_bytes, 8192u);
  EXPECT_EQ(p.peak_live_bytes, 8192u);  // a+b at step 1 count once
  EXPECT_EQ(p.total_bytes, 4u * 4096u);
  expect_no_overlap(uses, p, {{0, 1}, {1, 2}});
}

TEST(MemoryPlan, TakesThatDoNotFitAreIgnored) {
  std::vector<BufferUse> uses = {{4096, 0, 1}, {2048, 1, 2},   // sizes differ
                                 {4096, 0, 3}, {4096, 1, 2},   // the taken one lives past the handover
                                 {1024, 0, 1}, {1024, 1, 2}, {1024, 1, 3}};  // taken twice: the second is refused
  uses[1].takes = 0;
  uses[3].takes = 2;
  uses[5].takes = 4;
  uses[6].takes = 4;
  uses[0].takes = 0;  // itself
  MemoryPlan p = plan_memory(uses);
  EXPECT_EQ(p.in_place, 1u);
  EXPECT_EQ(p.offsets[5], p.offsets[4]);
  expect_no_overlap(uses, p, {{4, 5}});
}

}  // namespace
}  // namespace dlrt::ir
