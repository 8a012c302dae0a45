#include <cmath>

#include "kernel_test_util.h"

namespace dlrt::cpu {
namespace {

using testing::attr_float;
using testing::attr_int;
using testing::attr_ints;
using testing::expect_near;
using testing::run_op;

TEST(BatchNormalization, Inference) {
  auto x = Tensor::from_vector<float>({1, 2, 1, 2}, {1, 2, 3, 4});
  auto scale = Tensor::from_vector<float>({2}, {1, 2});
  auto bias = Tensor::from_vector<float>({2}, {0, 1});
  auto mean = Tensor::from_vector<float>({2}, {1, 3});
  auto var = Tensor::from_vector<float>({2}, {4, 1});
  auto r = run_op("BatchNormalization", {x, scale, bias, mean, var}, {{"epsilon", attr_float(0)}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {0, 0.5f, 1, 3});
  r = run_op("BatchNormalization", {x, scale, bias, mean, var}, {{"training_mode", attr_int(1)}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
  r = run_op("BatchNormalization", {x, Tensor::from_vector<float>({3}, {1, 1, 1}), bias, mean, var});
  EXPECT_FALSE(r.ok());
}

TEST(InstanceNormalization, PerChannel) {
  auto x = Tensor::from_vector<float>({1, 2, 2}, {1, 3, 10, 10});
  auto r = run_op("InstanceNormalization", {x, Tensor::from_vector<float>({2}, {2, 1}), Tensor::from_vector<float>({2}, {0, 5})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {-2, 2, 5, 5}, 1e-4f);  // a constant channel maps to its bias
}

TEST(LayerNormalization, AxisAndStatOutputs) {
  auto x = Tensor::from_vector<float>({2, 2}, {1, 3, 2, 6});
  auto r = run_op("LayerNormalization", {x, Tensor::from_vector<float>({2}, {1, 2}), Tensor::from_vector<float>({2}, {0, 1})},
                  {{"epsilon", attr_float(0)}}, 3);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {-1, 3, -1, 3});
  EXPECT_EQ((*r)[1].shape(), (Shape{2, 1}));
  expect_near((*r)[1], {2, 4});
  expect_near((*r)[2], {1, 0.5f});
  // axis 0 normalises over everything; scale broadcast from a scalar-like [1].
  r = run_op("LayerNormalization", {x, Tensor::from_vector<float>({1}, {1})}, {{"axis", attr_int(0)}, {"epsilon", attr_float(0)}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const float sd = std::sqrt(((1 - 3.f) * (1 - 3.f) + 0 + 1 + 9) / 4);
  expect_near((*r)[0], {-2 / sd, 0, -1 / sd, 3 / sd});
  EXPECT_FALSE(run_op("LayerNormalization", {x, Tensor::from_vector<float>({3}, {1, 1, 1})}).ok());
  EXPECT_FALSE(run_op("LayerNormalization", {x, Tensor::from_vector<float>({2}, {1, 1})}, {{"axis", attr_int(2)}}).ok());
}

TEST(LayerNormalization, Float16KeepsFloatStatistics) {
  auto x = Tensor::from_vector<Float16>({1, 2}, {Float16(1.0f), Float16(3.0f)});
  auto s = Tensor::from_vector<Float16>({2}, {Float16(1.0f), Float16(1.0f)});
  auto r = run_op("LayerNormalization", {x, s}, {{"epsilon", attr_float(0)}}, 2);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ((*r)[0].dtype(), DType::kFloat16);
  EXPECT_EQ(static_cast<float>((*r)[0].data<Float16>()[1]), 1.0f);
  ASSERT_EQ((*r)[1].dtype(), DType::kFloat32);
  EXPECT_EQ((*r)[1].data<float>()[0], 2.0f);
}

TEST(GroupNormalization, Opset18And21) {
  auto x = Tensor::from_vector<float>({1, 4, 1}, {1, 3, 4, 8});
  auto r = run_op("GroupNormalization", {x, Tensor::from_vector<float>({2}, {1, 1}), Tensor::from_vector<float>({2}, {0, 1})},
                  {{"num_groups", attr_int(2)}, {"epsilon", attr_float(0)}}, 1, 18);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {-1, 1, 0, 2});
  r = run_op("GroupNormalization",
             {x, Tensor::from_vector<float>({4}, {1, 2, 1, 1}), Tensor::from_vector<float>({4}, {0, 0, 0, 3})},
             {{"num_groups", attr_int(2)}, {"epsilon", attr_float(0)}}, 1, 21);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {-1, 2, -1, 4});
  EXPECT_FALSE(run_op("GroupNormalization", {x, Tensor::from_vector<float>({3}, {1, 1, 1}), Tensor::from_vector<float>({3}, {0, 0, 0})},
                      {{"num_groups", attr_int(3)}}, 1, 18)
                   .ok());
}

TEST(LpNormalization, P1P2) {
  auto x = Tensor::from_vector<float>({2, 2}, {3, 4, 0, 0});
  auto r = run_op("LpNormalization", {x});
  ASSERT_TRUE(r.ok());
  expect_near((*r)[0], {0.6f, 0.8f, 0, 0});
  r = run_op("LpNormalization", {x}, {{"axis", attr_int(0)}, {"p", attr_int(1)}});
  ASSERT_TRUE(r.ok());
  expect_near((*r)[0], {1, 1, 0, 0});
}

TEST(MeanVarianceNormalization, DefaultAxes) {
  // [1, 2, 1, 2]: per-channel over N, H, W.
  auto x = Tensor::from_vector<float>({1, 2, 1, 2}, {1, 3, 5, 5});
  auto r = run_op("MeanVarianceNormalization", {x});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {-1, 1, 0, 0}, 1e-6f);
  r = run_op("MeanVarianceNormalization", {x}, {{"axes", attr_ints({1, 3})}});
  ASSERT_TRUE(r.ok());
  const float sd = std::sqrt((6.25f + 0.25f + 2.25f + 2.25f) / 4.0f);
  expect_near((*r)[0], {-2.5f / sd, -0.5f / sd, 1.5f / sd, 1.5f / sd}, 1e-6f);
}

TEST(LRN, AcrossChannels) {
  auto x = Tensor::from_vector<float>({1, 3, 1, 1}, {1, 2, 3});
  auto r = run_op("LRN", {x}, {{"size", attr_int(2)}, {"alpha", attr_float(1)}, {"beta", attr_float(1)}, {"bias", attr_float(1)}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  // size 2: window [c, c+1].
  expect_near((*r)[0], {1 / (1 + 0.5f * 5), 2 / (1 + 0.5f * 13), 3 / (1 + 0.5f * 9)});
  EXPECT_FALSE(run_op("LRN", {x}).ok());  // size is required
}

}  // namespace
}  // namespace dlrt::cpu
