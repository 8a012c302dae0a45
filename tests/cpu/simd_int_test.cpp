// The vector layer's integer-sum operations (simd.h: load_i16_i32,
// load_first_i16_i32, mullo_i32, storeu_i32, store_first_i32) at every width
// this CPU runs (the others skipped, saying so), against their scalar
// definitions: sign extension, wrapping products, every partial length with
// the lanes past it 0 and the memory past it left alone.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/kernels/simd/simd.h"
#include "simd_width_test_util.h"

// The body's path from simd/instantiate.h's folder, where its #include looks first.
#define DLRT_SIMD_BODY "../../../../../tests/cpu/simd_int_ops_body.h"
#include "backends/cpu/kernels/simd/instantiate.h"

namespace dlrt::cpu {
namespace {

#define INT_OP(w, op, ...) DLRT_SIMD_PICK(w, int_ops::op, __VA_ARGS__)

class SimdInt : public testing::SimdWidthTest {};

TEST_P(SimdInt, WidenedProductsWrapAsInt32) {
  const int n = INT_OP(GetParam(), lanes);
  std::mt19937 rng(81);
  std::vector<int16_t> p(static_cast<size_t>(n));
  std::vector<int32_t> c(static_cast<size_t>(n)), out(static_cast<size_t>(n));
  for (int rep = 0; rep < 20; ++rep) {
    for (int16_t& v : p) v = static_cast<int16_t>(rng());
    p[0] = -32768, p[static_cast<size_t>(n - 1)] = 32767;
    for (int32_t& v : c) v = static_cast<int32_t>(rng());
    const int32_t m = rep == 0 ? 2147483647 : static_cast<int32_t>(rng());
    INT_OP(GetParam(), widen_mul_add, p.data(), m, c.data(), out.data());
    for (int i = 0; i < n; ++i) {
      const uint32_t want = static_cast<uint32_t>(static_cast<int32_t>(p[static_cast<size_t>(i)])) *
                                static_cast<uint32_t>(m) +
                            static_cast<uint32_t>(c[static_cast<size_t>(i)]);
      ASSERT_EQ(static_cast<uint32_t>(out[static_cast<size_t>(i)]), want) << "lane " << i << " rep " << rep;
    }
  }
}

TEST_P(SimdInt, FirstLanesOnlyAreReadAndWritten) {
  const int n = INT_OP(GetParam(), lanes);
  for (int k = 0; k <= n; ++k) {
    // The values end at p + k: lanes past k must read 0 whatever lies beyond.
    std::vector<int16_t> p(static_cast<size_t>(2 * n), int16_t{-7});
    for (int i = 0; i < k; ++i) p[static_cast<size_t>(i)] = static_cast<int16_t>(-1000 * i - 1);
    std::vector<int32_t> whole(static_cast<size_t>(n), 99), out(static_cast<size_t>(2 * n), 12345);
    INT_OP(GetParam(), widen_first_whole, p.data(), int64_t{k}, whole.data());
    INT_OP(GetParam(), widen_mul_first, p.data(), int64_t{k}, 3, out.data());
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(whole[static_cast<size_t>(i)], i < k ? p[static_cast<size_t>(i)] : 0) << "k " << k << " lane " << i;
      EXPECT_EQ(out[static_cast<size_t>(i)], i < k ? 3 * p[static_cast<size_t>(i)] : 12345) << "k " << k << " lane " << i;
    }
    for (int i = n; i < 2 * n; ++i) EXPECT_EQ(out[static_cast<size_t>(i)], 12345) << "k " << k << " past " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Widths, SimdInt, ::testing::Values(SimdWidth::k128, SimdWidth::k256, SimdWidth::k512),
                         [](const ::testing::TestParamInfo<SimdWidth>& i) {
                           return std::string("w") + simd_width_name(i.param);
                         });

}  // namespace
}  // namespace dlrt::cpu
