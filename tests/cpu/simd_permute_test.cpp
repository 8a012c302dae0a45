// The lane permutes of the vector layer (simd.h: permute, permute2, lookup4,
// index_ramp, interleave2) at every width this CPU runs (the others skipped, saying so),
// against their scalar definitions, bit for bit, over random indexes and
// the edges (the last lane, lookup4's negative indexes).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/kernels/simd/simd.h"
#include "simd_width_test_util.h"

// The body's path from simd/instantiate.h's folder, where its #include looks first.
#define DLRT_SIMD_BODY "../../../../../tests/cpu/simd_permute_ops_body.h"
#include "backends/cpu/kernels/simd/instantiate.h"

namespace dlrt::cpu {
namespace {

#define PERMUTE_OP(w, op, ...) DLRT_SIMD_PICK(w, permute_ops::op, __VA_ARGS__)

class SimdPermute : public testing::SimdWidthTest {
 protected:
  void SetUp() override {
    SimdWidthTest::SetUp();
    if (IsSkipped()) return;
    n_ = PERMUTE_OP(GetParam(), lanes);
  }
  // Distinct floats, NaNs with payloads among them (a permute moves bits).
  std::vector<float> floats(int count) {
    std::vector<float> v(static_cast<size_t>(count));
    for (int i = 0; i < count; ++i) {
      const uint32_t bits = i % 7 == 3 ? 0x7fc00000u + static_cast<uint32_t>(i) : static_cast<uint32_t>(rng_());
      std::memcpy(&v[static_cast<size_t>(i)], &bits, 4);
    }
    return v;
  }
  std::vector<int32_t> indexes(int lo, int hi) {
    std::vector<int32_t> ix(static_cast<size_t>(n_));
    std::uniform_int_distribution<int32_t> d(lo, hi - 1);
    for (int32_t& i : ix) i = d(rng_);
    return ix;
  }
  static void expect_bits(const std::vector<float>& got, const std::vector<float>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(0, std::memcmp(&got[i], &want[i], 4)) << "lane " << i;
  }
  int n_ = 0;
  std::mt19937 rng_{81};
};

TEST_P(SimdPermute, PermuteWithinOneVector) {
  for (int t = 0; t < 200; ++t) {
    const std::vector<float> v = floats(n_);
    std::vector<int32_t> ix = indexes(0, n_);
    if (t == 0)
      for (int i = 0; i < n_; ++i) ix[static_cast<size_t>(i)] = n_ - 1 - i;
    std::vector<float> got(static_cast<size_t>(n_)), want(got.size());
    PERMUTE_OP(GetParam(), permute_op, v.data(), ix.data(), got.data());
    for (int i = 0; i < n_; ++i) want[static_cast<size_t>(i)] = v[static_cast<size_t>(ix[static_cast<size_t>(i)])];
    ASSERT_NO_FATAL_FAILURE(expect_bits(got, want)) << "trial " << t;
  }
}

TEST_P(SimdPermute, PermuteAcrossTwoVectors) {
  for (int t = 0; t < 200; ++t) {
    const std::vector<float> ab = floats(2 * n_);
    std::vector<int32_t> ix = indexes(0, 2 * n_);
    if (t == 0)
      for (int i = 0; i < n_; ++i) ix[static_cast<size_t>(i)] = 2 * n_ - 1 - i;
    std::vector<float> got(static_cast<size_t>(n_)), want(got.size());
    PERMUTE_OP(GetParam(), permute2_op, ab.data(), ix.data(), got.data());
    for (int i = 0; i < n_; ++i) want[static_cast<size_t>(i)] = ab[static_cast<size_t>(ix[static_cast<size_t>(i)])];
    ASSERT_NO_FATAL_FAILURE(expect_bits(got, want)) << "trial " << t;
  }
}

TEST_P(SimdPermute, LookupInFourVectorsNegativeIsZero) {
  for (int t = 0; t < 300; ++t) {
    const std::vector<float> v = floats(4 * n_);
    std::vector<int32_t> ix = indexes(-3 * n_, 4 * n_);
    if (t == 0)
      for (int i = 0; i < n_; ++i) ix[static_cast<size_t>(i)] = i % 2 ? -1 : 4 * n_ - 1 - i;
    if (t == 1)
      for (int i = 0; i < n_; ++i) ix[static_cast<size_t>(i)] = i % 2 ? INT32_MIN : 0;
    std::vector<float> got(static_cast<size_t>(n_)), want(got.size());
    PERMUTE_OP(GetParam(), lookup4_op, v.data(), ix.data(), got.data());
    for (int i = 0; i < n_; ++i) {
      const int32_t j = ix[static_cast<size_t>(i)];
      want[static_cast<size_t>(i)] = j < 0 ? 0.0f : v[static_cast<size_t>(j)];
    }
    ASSERT_NO_FATAL_FAILURE(expect_bits(got, want)) << "trial " << t;
  }
}

// index_ramp(s, w) read through lookup4: lane i = (s + i) & w.
TEST_P(SimdPermute, IndexRampWraps) {
  const std::vector<float> v = floats(4 * n_);
  for (int32_t wrap : {3, 7, 15}) {
    if (wrap >= 4 * n_) continue;
    for (int32_t start = -20; start <= 20; ++start) {
      std::vector<float> got(static_cast<size_t>(n_)), want(got.size());
      PERMUTE_OP(GetParam(), index_ramp_op, start, wrap, v.data(), got.data());
      for (int i = 0; i < n_; ++i) want[static_cast<size_t>(i)] = v[static_cast<size_t>((start + i) & wrap)];
      ASSERT_NO_FATAL_FAILURE(expect_bits(got, want)) << "start " << start << " wrap " << wrap;
    }
  }
}

TEST_P(SimdPermute, InterleaveTwo) {
  for (int t = 0; t < 50; ++t) {
    const std::vector<float> a = floats(n_), b = floats(n_);
    std::vector<float> got(static_cast<size_t>(2 * n_)), want(got.size());
    PERMUTE_OP(GetParam(), interleave2_op, a.data(), b.data(), got.data());
    for (int i = 0; i < n_; ++i) {
      want[static_cast<size_t>(2 * i)] = a[static_cast<size_t>(i)];
      want[static_cast<size_t>(2 * i + 1)] = b[static_cast<size_t>(i)];
    }
    ASSERT_NO_FATAL_FAILURE(expect_bits(got, want)) << "trial " << t;
  }
}

// Where the permutes are native: every width but x86's 128-bit baseline.
TEST_P(SimdPermute, NativeWhereTheIsaHasPermutes) {
#if defined(__aarch64__)
  EXPECT_TRUE(PERMUTE_OP(GetParam(), native));
#else
  EXPECT_EQ(PERMUTE_OP(GetParam(), native), GetParam() != SimdWidth::k128);
#endif
}

INSTANTIATE_TEST_SUITE_P(Widths, SimdPermute,
                         ::testing::Values(SimdWidth::k128, SimdWidth::k256, SimdWidth::k512),
                         [](const ::testing::TestParamInfo<SimdWidth>& i) {
                           return std::string("w") + simd_width_name(i.param);
                         });

}  // namespace
}  // namespace dlrt::cpu
