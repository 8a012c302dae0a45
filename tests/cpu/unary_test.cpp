// Unary math and activations.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernel_test_util.h"

namespace dlrt::cpu {
namespace {

using testing::attr_float;
using testing::attr_int;
using testing::attr_string;
using testing::expect_near;
using testing::run_op;

template <typename T>
std::vector<T> values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.size());
}

Tensor f32(Shape s, std::vector<float> v) { return Tensor::from_vector<float>(std::move(s), v); }

Tensor run1(const std::string& op, Tensor x, ir::Attributes attrs = {}, int opset = 17) {
  auto r = run_op(op, {std::move(x)}, std::move(attrs), 1, opset);
  EXPECT_TRUE(r.ok()) << op << ": " << r.status().to_string();
  return r.ok() ? (*r)[0] : Tensor();
}

TEST(Unary, MathOnFloats) {
  expect_near(run1("Sqrt", f32({3}, {0, 4, 2})), {0, 2, std::sqrt(2.0f)});
  expect_near(run1("Exp", f32({2}, {0, 1})), {1, std::exp(1.0f)});
  expect_near(run1("Log", f32({2}, {1, std::exp(2.0f)})), {0, 2});
  expect_near(run1("Reciprocal", f32({2}, {2, -4})), {0.5f, -0.25f});
  expect_near(run1("Floor", f32({3}, {-1.5f, 1.5f, 2})), {-2, 1, 2});
  expect_near(run1("Ceil", f32({3}, {-1.5f, 1.5f, 2})), {-1, 2, 2});
  expect_near(run1("Round", f32({7}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f, -2.6f})), {0, 2, 2, -0.0f, -2, 2, -3});
  expect_near(run1("Sin", f32({1}, {0.5f})), {std::sin(0.5f)});
  expect_near(run1("Atanh", f32({1}, {0.5f})), {std::atanh(0.5f)});
  expect_near(run1("Acosh", f32({1}, {2.0f})), {std::acosh(2.0f)});
  expect_near(run1("Erf", f32({2}, {0.5f, -3})), {0.5204998778f, std::erf(-3.0f)});
}

TEST(Unary, HalfAndDouble) {
  auto h = Tensor::from_vector<Float16>({2}, {Float16(1.0f), Float16(4.0f)});
  Tensor r = run1("Sqrt", h);
  ASSERT_EQ(r.dtype(), DType::kFloat16);
  EXPECT_EQ(static_cast<float>(r.data<Float16>()[1]), 2.0f);
  Tensor d = run1("Exp", Tensor::from_vector<double>({1}, {1.0}));
  ASSERT_EQ(d.dtype(), DType::kFloat64);
  EXPECT_DOUBLE_EQ(d.data<double>()[0], std::exp(1.0));
  auto bad = run_op("Sqrt", {Tensor::from_vector<int32_t>({1}, {4})});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kUnsupported);
}

TEST(Unary, IntegerAbsNegSign) {
  auto x = Tensor::from_vector<int32_t>({4}, {-3, 0, 5, std::numeric_limits<int32_t>::min()});
  EXPECT_EQ(values<int32_t>(run1("Abs", x)), (std::vector<int32_t>{3, 0, 5, std::numeric_limits<int32_t>::min()}));
  EXPECT_EQ(values<int32_t>(run1("Neg", x)), (std::vector<int32_t>{3, 0, -5, std::numeric_limits<int32_t>::min()}));
  EXPECT_EQ(values<int32_t>(run1("Sign", x)), (std::vector<int32_t>{-1, 0, 1, -1}));
  EXPECT_EQ(values<uint8_t>(run1("Sign", Tensor::from_vector<uint8_t>({2}, {0, 7}))), (std::vector<uint8_t>{0, 1}));
  expect_near(run1("Sign", f32({3}, {-2, 0, 0.1f})), {-1, 0, 1});
  EXPECT_FALSE(run_op("Neg", {Tensor::from_vector<uint32_t>({1}, {1})}).ok());
}

TEST(Unary, IsNaNIsInf) {
  auto x = f32({4}, {1, NAN, INFINITY, -INFINITY});
  EXPECT_EQ(values<bool>(run1("IsNaN", x)), (std::vector<bool>{false, true, false, false}));
  EXPECT_EQ(values<bool>(run1("IsInf", x)), (std::vector<bool>{false, false, true, true}));
  EXPECT_EQ(values<bool>(run1("IsInf", x, {{"detect_negative", attr_int(0)}})), (std::vector<bool>{false, false, true, false}));
  EXPECT_EQ(values<bool>(run1("IsInf", x, {{"detect_positive", attr_int(0)}})), (std::vector<bool>{false, false, false, true}));
}

TEST(Activation, Basic) {
  auto x = f32({4}, {-2, -0.5f, 0, 3});
  expect_near(run1("Relu", x), {0, 0, 0, 3});
  EXPECT_EQ(values<int8_t>(run1("Relu", Tensor::from_vector<int8_t>({2}, {-3, 4}))), (std::vector<int8_t>{0, 4}));
  expect_near(run1("LeakyRelu", x, {{"alpha", attr_float(0.1f)}}), {-0.2f, -0.05f, 0, 3});
  expect_near(run1("Elu", x), {std::expm1(-2.0f), std::expm1(-0.5f), 0, 3});
  const float a = 1.67326319217681884765625f, g = 1.05070102214813232421875f;
  expect_near(run1("Selu", x), {g * a * std::expm1(-2.0f), g * a * std::expm1(-0.5f), 0, 3 * g});
  expect_near(run1("Celu", x, {{"alpha", attr_float(2.0f)}}), {2 * std::expm1(-1.0f), 2 * std::expm1(-0.25f), 0, 3});
  expect_near(run1("Sigmoid", f32({3}, {0, -100, 100})), {0.5f, 0, 1});
  expect_near(run1("HardSigmoid", x), {0.1f, 0.4f, 0.5f, 1});
  // A NaN input stays NaN (clamping with the bounds first would turn it into 1).
  EXPECT_TRUE(std::isnan(values<float>(run1("HardSigmoid", f32({1}, {NAN})))[0]));
  expect_near(run1("HardSwish", x), {-2 * (1.0f / 6 * -2 + 0.5f), -0.5f * (-0.5f / 6 + 0.5f), 0, 3});
  expect_near(run1("Tanh", f32({1}, {0.5f})), {std::tanh(0.5f)});
  expect_near(run1("Softplus", f32({3}, {0, 100, -100})), {std::log(2.0f), 100, 0});
  expect_near(run1("Softsign", x), {-2.0f / 3, -0.5f / 1.5f, 0, 0.75f});
  expect_near(run1("ThresholdedRelu", x, {{"alpha", attr_float(0.0f)}}), {0, 0, 0, 3});
  expect_near(run1("Shrink", f32({3}, {-2, 0.3f, 2}), {{"lambd", attr_float(1.0f)}, {"bias", attr_float(0.5f)}}), {-1.5f, 0, 1.5f});
  const float sp = std::log1p(std::exp(1.0f));
  expect_near(run1("Mish", f32({1}, {1}), {}, 18), {std::tanh(sp)});
}

TEST(Activation, Gelu) {
  const float e = 0.5f * 1.5f * (1 + std::erf(1.5f / std::sqrt(2.0f)));
  expect_near(run1("Gelu", f32({1}, {1.5f}), {}, 20), {e});
  expect_near(run1("Gelu", f32({1}, {1.5f}), {{"approximate", attr_string("tanh")}}, 20), {1.3995715769802328f});
  EXPECT_FALSE(run_op("Gelu", {f32({1}, {1})}, {{"approximate", attr_string("erf")}}, 1, 20).ok());
}

TEST(Activation, PReluBroadcastsSlope) {
  auto x = f32({2, 3}, {-1, 2, -3, -4, 5, -6});
  auto r = run_op("PRelu", {x, f32({3}, {0.1f, 0.2f, 0.3f})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {-0.1f, 2, -0.9f, -0.4f, 5, -1.8f});
  r = run_op("PRelu", {x, f32({1}, {0.5f})});
  ASSERT_TRUE(r.ok());
  expect_near((*r)[0], {-0.5f, 2, -1.5f, -2, 5, -3});
  EXPECT_FALSE(run_op("PRelu", {x, f32({2}, {1, 2})}).ok());
  EXPECT_FALSE(run_op("PRelu", {f32({3}, {1, 2, 3}), f32({2, 3}, {1, 2, 3, 4, 5, 6})}).ok());  // not unidirectional
}

TEST(Activation, PReluBeforeOpset7SlopeIsPerChannel) {
  // X [1, 2, 2]: channel 0 = {-1, -2}, channel 1 = {-3, 4}; slope per channel {0.5, 0.25}.
  auto x = f32({1, 2, 2}, {-1, -2, -3, 4});
  auto r = run_op("PRelu", {x, f32({2}, {0.5f, 0.25f})}, {}, 1, 6);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {-0.5f, -1, -0.75f, 4});
  // From opset 7 the same slope broadcasts numpy-style along the last axis.
  r = run_op("PRelu", {x, f32({2}, {0.5f, 0.25f})}, {}, 1, 7);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {-0.5f, -0.5f, -1.5f, 4});
}

TEST(Activation, ClipOpset6Attributes) {
  auto x = f32({4}, {-5, 0.5f, 5, NAN});
  Tensor r = run1("Clip", x, {{"min", attr_float(-1)}, {"max", attr_float(1)}}, 6);
  EXPECT_EQ(r.data<float>()[0], -1);
  EXPECT_EQ(r.data<float>()[1], 0.5f);
  EXPECT_EQ(r.data<float>()[2], 1);
  EXPECT_TRUE(std::isnan(r.data<float>()[3]));
  expect_near(run1("Clip", f32({2}, {-1e30f, 1e30f}), {}, 6), {-1e30f, 1e30f});
}

TEST(Activation, ClipOpset13Inputs) {
  auto x = f32({3}, {-5, 0.5f, 5});
  auto r = run_op("Clip", {x, Tensor::scalar<float>(-1), Tensor::scalar<float>(1)}, {}, 1, 13);
  ASSERT_TRUE(r.ok());
  expect_near((*r)[0], {-1, 0.5f, 1});
  r = run_op("Clip", {x, Tensor(), Tensor::scalar<float>(0)}, {}, 1, 13);  // only max
  ASSERT_TRUE(r.ok());
  expect_near((*r)[0], {-5, 0, 0});
  r = run_op("Clip", {x, Tensor::scalar<float>(2), Tensor::scalar<float>(1)}, {}, 1, 13);  // min > max -> max
  ASSERT_TRUE(r.ok());
  expect_near((*r)[0], {1, 1, 1});
  auto i = run_op("Clip", {Tensor::from_vector<int64_t>({3}, {-7, 3, 9}), Tensor::scalar<int64_t>(0), Tensor::scalar<int64_t>(5)}, {}, 1, 13);
  ASSERT_TRUE(i.ok());
  EXPECT_EQ(values<int64_t>((*i)[0]), (std::vector<int64_t>{0, 3, 5}));
  // Attributes are ignored from opset 11 on; bounds must be scalars of the input's dtype.
  auto attrs = run_op("Clip", {x}, {{"min", attr_float(0)}}, 1, 13);
  ASSERT_TRUE(attrs.ok());
  expect_near((*attrs)[0], {-5, 0.5f, 5});
  EXPECT_FALSE(run_op("Clip", {x, f32({2}, {0, 1})}, {}, 1, 13).ok());
  EXPECT_FALSE(run_op("Clip", {x, Tensor::scalar<double>(0)}, {}, 1, 13).ok());
}

}  // namespace
}  // namespace dlrt::cpu
