// length_groups: how a padded batch of mixed lengths is split into runs.
#include "embed/models/length_groups.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace dlrt::embed {
namespace {

// Every index exactly once, each group longest first, groups longest first.
void expect_length_groups_partition(const std::vector<size_t>& lengths, const std::vector<std::vector<size_t>>& groups) {
  std::vector<int> seen(lengths.size(), 0);
  size_t previous_shortest = SIZE_MAX;
  for (const auto& g : groups) {
    ASSERT_FALSE(g.empty());
    for (size_t k = 0; k < g.size(); ++k) {
      ASSERT_LT(g[k], lengths.size());
      ++seen[g[k]];
      if (k > 0) {
        EXPECT_GE(lengths[g[k - 1]], lengths[g[k]]);
      }
    }
    EXPECT_LE(lengths[g.front()], previous_shortest);
    previous_shortest = lengths[g.back()];
  }
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], 1) << "index " << i;
}

TEST(LengthGroups, EmptyAndEqualLengthsStayOneBatch) {
  EXPECT_TRUE(length_groups({}).empty());
  const std::vector<size_t> same(20, 64);
  const auto g = length_groups(same);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].size(), 20u);
}

TEST(LengthGroups, SplitsOnlyWherePaddingCostsMoreThanARun) {
  // 128 + 16 padded to 128: 32 + 256 = 288 tokens' cost; apart 32 + 128 + 32 + 16 = 208.
  const std::vector<size_t> apart = {16, 128};
  auto g = length_groups(apart, 32);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0], std::vector<size_t>({1}));
  EXPECT_EQ(g[1], std::vector<size_t>({0}));
  // 20 + 18: together 72, apart 102.
  g = length_groups({18, 20}, 32);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0], std::vector<size_t>({1, 0}));
  // A larger run cost keeps the pair of 128 and 16 together.
  EXPECT_EQ(length_groups(apart, 200).size(), 1u);
}

TEST(LengthGroups, MixedLengthsCostNoMoreThanOneBatchAndKeepEqualLengthsTogether) {
  const std::vector<size_t> lengths = {13, 138, 72, 72, 40, 41, 120, 13, 99, 25, 25, 25, 60, 7, 138, 90};
  const size_t run_cost = 32;
  const auto groups = length_groups(lengths, run_cost);
  expect_length_groups_partition(lengths, groups);
  size_t cost = 0;
  for (const auto& g : groups) cost += run_cost + lengths[g.front()] * g.size();
  EXPECT_LT(cost, run_cost + 138 * lengths.size()) << "splitting should pay on these lengths";
  EXPECT_GT(groups.size(), 1u);
  for (size_t a = 0; a < lengths.size(); ++a)
    for (size_t b = 0; b < lengths.size(); ++b) {
      if (lengths[a] != lengths[b]) continue;
      const auto in = [&](size_t i) {
        return std::find_if(groups.begin(), groups.end(),
                            [&](const auto& g) { return std::find(g.begin(), g.end(), i) != g.end(); });
      };
      EXPECT_EQ(in(a), in(b)) << "texts " << a << " and " << b << " have the same length";
    }
}

}  // namespace
}  // namespace dlrt::embed
