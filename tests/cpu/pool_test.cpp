#include <cmath>

#include "kernel_test_util.h"

namespace dlrt::cpu {
namespace {

using testing::attr_int;
using testing::attr_ints;
using testing::attr_string;
using testing::expect_near;
using testing::run_op;

Tensor iota_4x4() {
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[i] = static_cast<float>(i + 1);
  return Tensor::from_vector<float>({1, 1, 4, 4}, v);
}

TEST(MaxPool, StridesAndIndices) {
  auto r = run_op("MaxPool", {iota_4x4()}, {{"kernel_shape", attr_ints({2, 2})}, {"strides", attr_ints({2, 2})}}, 2);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{1, 1, 2, 2}));
  expect_near((*r)[0], {6, 8, 14, 16});
  const int64_t* idx = (*r)[1].data<int64_t>();
  EXPECT_EQ(idx[0], 5);
  EXPECT_EQ(idx[3], 15);
  // Column-major indices: (h=1, w=1) -> 1 + 1*4.
  r = run_op("MaxPool", {iota_4x4()},
             {{"kernel_shape", attr_ints({2, 2})}, {"strides", attr_ints({2, 2})}, {"storage_order", attr_int(1)}}, 2);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[1].data<int64_t>()[0], 5);
  EXPECT_EQ((*r)[1].data<int64_t>()[1], 1 + 3 * 4);
}

TEST(MaxPool, PadsCeilModeDilations) {
  auto r = run_op("MaxPool", {iota_4x4()},
                  {{"kernel_shape", attr_ints({3, 3})}, {"strides", attr_ints({2, 2})}, {"ceil_mode", attr_int(1)}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (Shape{1, 1, 2, 2}));
  expect_near((*r)[0], {11, 12, 15, 16});
  r = run_op("MaxPool", {iota_4x4()}, {{"kernel_shape", attr_ints({2, 2})}, {"dilations", attr_ints({2, 2})}});
  ASSERT_TRUE(r.ok());
  expect_near((*r)[0], {11, 12, 15, 16});
  r = run_op("MaxPool", {iota_4x4()}, {{"kernel_shape", attr_ints({3, 3})}, {"pads", attr_ints({1, 1, 1, 1})}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (Shape{1, 1, 4, 4}));
  EXPECT_EQ((*r)[0].data<float>()[0], 6.0f);
  r = run_op("MaxPool", {iota_4x4()}, {{"kernel_shape", attr_ints({3, 3})}, {"auto_pad", attr_string("SAME_UPPER")}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (Shape{1, 1, 4, 4}));
}

TEST(MaxPool, Uint8AndErrors) {
  auto x = Tensor::from_vector<uint8_t>({1, 1, 1, 4}, {3, 250, 7, 1});
  auto r = run_op("MaxPool", {x}, {{"kernel_shape", attr_ints({1, 2})}, {"strides", attr_ints({1, 2})}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].data<uint8_t>()[0], 250);
  EXPECT_EQ((*r)[0].data<uint8_t>()[1], 7);
  EXPECT_FALSE(run_op("MaxPool", {iota_4x4()}, {}).ok());  // kernel_shape missing
  EXPECT_FALSE(run_op("MaxPool", {iota_4x4()}, {{"kernel_shape", attr_ints({5, 5})}}).ok());
  EXPECT_FALSE(run_op("MaxPool", {iota_4x4()}, {{"kernel_shape", attr_ints({2, 2})}, {"strides", attr_ints({0, 1})}}).ok());
}

TEST(AveragePool, CountIncludePad) {
  std::map<std::string, ir::Attribute> a = {{"kernel_shape", attr_ints({3, 3})}, {"pads", attr_ints({1, 1, 1, 1})}};
  auto r = run_op("AveragePool", {iota_4x4()}, a);
  ASSERT_TRUE(r.ok());
  EXPECT_FLOAT_EQ((*r)[0].data<float>()[0], (1 + 2 + 5 + 6) / 4.0f);
  a["count_include_pad"] = attr_int(1);
  r = run_op("AveragePool", {iota_4x4()}, a);
  ASSERT_TRUE(r.ok());
  EXPECT_FLOAT_EQ((*r)[0].data<float>()[0], (1 + 2 + 5 + 6) / 9.0f);
  EXPECT_FLOAT_EQ((*r)[0].data<float>()[5], (1 + 2 + 3 + 5 + 6 + 7 + 9 + 10 + 11) / 9.0f);
}

TEST(AveragePool, OneDAndThreeD) {
  auto r = run_op("AveragePool", {Tensor::from_vector<float>({1, 1, 5}, {1, 2, 3, 4, 5})},
                  {{"kernel_shape", attr_ints({2})}, {"strides", attr_ints({2})}, {"ceil_mode", attr_int(1)}});
  ASSERT_TRUE(r.ok());
  expect_near((*r)[0], {1.5f, 3.5f, 5});
  r = run_op("AveragePool", {Tensor::from_vector<float>({1, 1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8})},
             {{"kernel_shape", attr_ints({2, 2, 2})}});
  ASSERT_TRUE(r.ok());
  expect_near((*r)[0], {4.5f});
}

TEST(GlobalPools, AverageMaxLp) {
  auto x = Tensor::from_vector<float>({1, 2, 2, 1}, {1, -3, 2, 4});
  auto r = run_op("GlobalAveragePool", {x});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (Shape{1, 2, 1, 1}));
  expect_near((*r)[0], {-1, 3});
  r = run_op("GlobalMaxPool", {x});
  ASSERT_TRUE(r.ok());
  expect_near((*r)[0], {1, 4});
  r = run_op("GlobalLpPool", {x});
  ASSERT_TRUE(r.ok());
  expect_near((*r)[0], {std::sqrt(10.0f), std::sqrt(20.0f)});
}

TEST(LpPool, P1AndP2) {
  auto x = Tensor::from_vector<float>({1, 1, 4}, {1, -2, 3, -4});
  auto r = run_op("LpPool", {x}, {{"kernel_shape", attr_ints({2})}, {"strides", attr_ints({2})}, {"p", attr_int(1)}});
  ASSERT_TRUE(r.ok());
  expect_near((*r)[0], {3, 7});
  r = run_op("LpPool", {x}, {{"kernel_shape", attr_ints({2})}, {"strides", attr_ints({2})}});
  ASSERT_TRUE(r.ok());
  expect_near((*r)[0], {std::sqrt(5.0f), 5});
}

TEST(MaxUnpool, ScattersAndChecksIndices) {
  auto pooled = run_op("MaxPool", {iota_4x4()}, {{"kernel_shape", attr_ints({2, 2})}, {"strides", attr_ints({2, 2})}}, 2);
  ASSERT_TRUE(pooled.ok());
  std::map<std::string, ir::Attribute> a = {{"kernel_shape", attr_ints({2, 2})}, {"strides", attr_ints({2, 2})}};
  auto r = run_op("MaxUnpool", {(*pooled)[0], (*pooled)[1]}, a);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{1, 1, 4, 4}));
  expect_near((*r)[0], {0, 0, 0, 0, 0, 6, 0, 8, 0, 0, 0, 0, 0, 14, 0, 16});
  r = run_op("MaxUnpool", {(*pooled)[0], (*pooled)[1], Tensor::from_vector<int64_t>({4}, {1, 1, 5, 5})}, a);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (Shape{1, 1, 5, 5}));
  auto bad = Tensor::from_vector<int64_t>({1, 1, 2, 2}, {0, 1, 2, 99});
  EXPECT_FALSE(run_op("MaxUnpool", {(*pooled)[0], bad}, a).ok());
}

}  // namespace
}  // namespace dlrt::cpu
