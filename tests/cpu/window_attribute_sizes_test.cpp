// Conv and the float pools take their window geometry from attributes
// (kernel_shape, strides, dilations, pads); near INT64_MAX each size is
// computed in checked arithmetic: a huge stride gives the spec's single
// window, an extent that overflows is refused (issue 80's class "attribute
// sizes in checked arithmetic", beside quantize_attribute_sizes_test.cpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "kernel_test_util.h"

namespace dlrt::cpu {
namespace {

using testing::attr_int;
using testing::attr_ints;
using testing::attr_string;
using testing::run_op;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

Tensor filled(Shape s, float v) {
  const int64_t n = element_count(s);
  return Tensor::from_vector<float>(std::move(s), std::vector<float>(static_cast<size_t>(n), v));
}

bool refused(const Result<std::vector<Tensor>>& r) {
  return !r.ok() && r.status().code() == StatusCode::kInvalidArgument;
}

// A stride past the input leaves one window per axis: its 2 x 2 taps sum to 8
// whatever the stride (INT64_MAX gave 0 when the stride was multiplied in).
TEST(WindowAttributeSizes, ConvWithHugeStridesReadsTheOneWindow) {
  const Tensor x = filled({1, 1, 3, 3}, 2.0f);
  for (int64_t stride : {int64_t{1} << 32, kMax})
    for (int64_t m : {1, 2, 16}) {
      auto r = run_op("Conv", {x, filled({m, 1, 2, 2}, 1.0f)}, {{"strides", attr_ints({stride, stride})}}, 1, 11);
      ASSERT_TRUE(r.ok()) << r.status().to_string();
      ASSERT_EQ((*r)[0].shape(), (Shape{1, m, 1, 1}));
      for (int64_t i = 0; i < m; ++i) EXPECT_EQ((*r)[0].data<float>()[i], 8.0f) << "stride " << stride << ", m " << m;
    }
  auto same = run_op("Conv", {x, filled({1, 1, 2, 2}, 1.0f)},
                     {{"strides", attr_ints({kMax, kMax})}, {"auto_pad", attr_string("SAME_UPPER")}}, 1, 11);
  ASSERT_TRUE(same.ok()) << same.status().to_string();
  EXPECT_EQ((*same)[0].shape(), (Shape{1, 1, 1, 1}));
}

TEST(WindowAttributeSizes, ConvExtentsThatOverflowAreRefused) {
  const Tensor x = filled({1, 1, 3, 3}, 1.0f);
  const Tensor w = filled({1, 1, 2, 2}, 1.0f);
  auto conv = [&](ir::Attributes attrs) { return run_op("Conv", {x, w}, std::move(attrs), 1, 11); };
  EXPECT_TRUE(refused(conv({{"dilations", attr_ints({kMax, 1})}})));
  EXPECT_TRUE(refused(conv({{"pads", attr_ints({kMax, 0, kMax, 0})}})));
}

TEST(WindowAttributeSizes, PoolsWithHugeStridesAndOverflowingExtents) {
  const Tensor x = Tensor::from_vector<float>({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  for (const char* op : {"MaxPool", "AveragePool"})
    for (int64_t ceil_mode : {0, 1}) {
      auto r = run_op(op, {x},
                      {{"kernel_shape", attr_ints({2, 2})}, {"strides", attr_ints({kMax, kMax})},
                       {"ceil_mode", attr_int(ceil_mode)}},
                      1, 19);
      ASSERT_TRUE(r.ok()) << op << ": " << r.status().to_string();
      ASSERT_EQ((*r)[0].shape(), (Shape{1, 1, 1, 1})) << op << " ceil_mode " << ceil_mode;
      EXPECT_EQ((*r)[0].data<float>()[0], op[0] == 'M' ? 5.0f : 3.0f) << op << " ceil_mode " << ceil_mode;
      EXPECT_TRUE(refused(run_op(op, {x}, {{"kernel_shape", attr_ints({2, 2})}, {"pads", attr_ints({kMax, 0, 1, 0})},
                                          {"ceil_mode", attr_int(ceil_mode)}}, 1, 19)))
          << op;
    }
}

}  // namespace
}  // namespace dlrt::cpu
