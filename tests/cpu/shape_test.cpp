// Unit tests for the shape family (src/backends/cpu/ops/shape.cpp). Expected
// values are computed by hand (or with numpy where noted).
#include <gtest/gtest.h>

#include "kernel_test_util.h"

namespace dlrt::cpu::testing {
namespace {

Tensor iota_f(Shape shape) {
  std::vector<float> v(static_cast<size_t>(element_count(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  return Tensor::from_vector<float>(std::move(shape), v);
}
Tensor i64(std::vector<int64_t> v) { return Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v); }

template <typename T>
std::vector<T> values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.size());
}

TEST(ShapeOps, ReshapeInfersAndCopiesDimsAsAView) {
  Tensor x = iota_f({2, 3, 4});
  auto r = run_op("Reshape", {x, i64({0, -1, 2})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{2, 6, 2}));
  EXPECT_EQ((*r)[0].raw_data(), x.raw_data());  // zero-copy
}

TEST(ShapeOps, ReshapeAllowZeroKeepsZeroDims) {
  Tensor x = Tensor::from_vector<float>({0, 3}, {});
  auto r = run_op("Reshape", {x, i64({3, 0})}, {{"allowzero", attr_int(1)}}, 1, 14);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{3, 0}));
}

TEST(ShapeOps, ReshapeErrors) {
  Tensor x = iota_f({2, 3});
  auto bad = run_op("Reshape", {x, i64({4, 2})});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("cannot reshape"), std::string::npos) << bad.status().message();
  EXPECT_FALSE(run_op("Reshape", {x, i64({-1, -1})}).ok());
  EXPECT_FALSE(run_op("Reshape", {x, i64({-1, 4})}).ok());
  EXPECT_FALSE(run_op("Reshape", {x, i64({0, 0, 0})}).ok());  // dim 2 does not exist
  EXPECT_FALSE(run_op("Reshape", {x, i64({-2, 3})}).ok());
}

TEST(ShapeOps, ReshapeOpset1UsesAttribute) {
  auto r = run_op("Reshape", {iota_f({6})}, {{"shape", attr_ints({3, 2})}}, 1, 1);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{3, 2}));
}

TEST(ShapeOps, Flatten) {
  auto r = run_op("Flatten", {iota_f({2, 3, 4, 5})}, {{"axis", attr_int(2)}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (Shape{6, 20}));
  r = run_op("Flatten", {iota_f({2, 3, 4})}, {{"axis", attr_int(0)}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (Shape{1, 24}));
  r = run_op("Flatten", {iota_f({2, 3, 4})}, {{"axis", attr_int(-1)}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (Shape{6, 4}));
  EXPECT_FALSE(run_op("Flatten", {iota_f({2, 3})}, {{"axis", attr_int(3)}}).ok());
}

TEST(ShapeOps, SqueezeAndUnsqueezeBothOpsetStyles) {
  Tensor x = iota_f({1, 3, 1, 2});
  auto r = run_op("Squeeze", {x});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (Shape{3, 2}));
  r = run_op("Squeeze", {x, i64({-2})}, {}, 1, 13);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (Shape{1, 3, 2}));
  r = run_op("Squeeze", {x}, {{"axes", attr_ints({0})}}, 1, 11);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (Shape{3, 1, 2}));
  EXPECT_FALSE(run_op("Squeeze", {x, i64({1})}, {}, 1, 13).ok());  // dim 1 has size 3
  r = run_op("Squeeze", {x, i64({})}, {}, 1, 13);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (Shape{3, 2}));

  Tensor y = iota_f({3, 4});
  r = run_op("Unsqueeze", {y, i64({0, 3})}, {}, 1, 13);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (Shape{1, 3, 4, 1}));
  r = run_op("Unsqueeze", {y}, {{"axes", attr_ints({-1})}}, 1, 11);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (Shape{3, 4, 1}));
  EXPECT_FALSE(run_op("Unsqueeze", {y, i64({1, 1})}, {}, 1, 13).ok());
  EXPECT_FALSE(run_op("Unsqueeze", {y, i64({5})}, {}, 1, 13).ok());
}

TEST(ShapeOps, ShapeWithStartEnd) {
  Tensor x = iota_f({2, 3, 4, 5});
  auto r = run_op("Shape", {x});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{2, 3, 4, 5}));
  r = run_op("Shape", {x}, {{"start", attr_int(1)}, {"end", attr_int(-1)}}, 1, 15);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{3, 4}));
  r = run_op("Shape", {x}, {{"start", attr_int(-10)}, {"end", attr_int(10)}}, 1, 15);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].size(), 4);
  r = run_op("Shape", {x}, {{"start", attr_int(3)}, {"end", attr_int(1)}}, 1, 15);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].size(), 0);
}

TEST(ShapeOps, SizeIdentityDropout) {
  Tensor x = iota_f({2, 3});
  auto r = run_op("Size", {x});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].rank(), 0u);
  EXPECT_EQ((*r)[0].data<int64_t>()[0], 6);

  r = run_op("Identity", {x});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(values<float>((*r)[0]), values<float>(x));

  r = run_op("Dropout", {x, Tensor::scalar<float>(0.3f)}, {}, 2, 13);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(values<float>((*r)[0]), values<float>(x));
  ASSERT_EQ((*r)[1].dtype(), DType::kBool);
  for (bool b : values<bool>((*r)[1])) EXPECT_TRUE(b);

  auto train = run_op("Dropout", {x, Tensor::scalar<float>(0.3f), Tensor::scalar<bool>(true)}, {}, 1, 13);
  ASSERT_FALSE(train.ok());
  EXPECT_EQ(train.status().code(), StatusCode::kUnsupported);
  // Training with ratio 0 is still the identity.
  EXPECT_TRUE(run_op("Dropout", {x, Tensor::scalar<float>(0.0f), Tensor::scalar<bool>(true)}, {}, 1, 13).ok());
}

TEST(ShapeOps, ConstantOfShape) {
  ir::Attribute v;
  v.kind = ir::Attribute::Kind::kTensor;
  v.t = Tensor::from_vector<int32_t>({1}, {7});
  auto r = run_op("ConstantOfShape", {i64({2, 2})}, {{"value", v}}, 1, 9);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].dtype(), DType::kInt32);
  EXPECT_EQ(values<int32_t>((*r)[0]), (std::vector<int32_t>{7, 7, 7, 7}));
  r = run_op("ConstantOfShape", {i64({3})}, {}, 1, 9);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{0, 0, 0}));
  EXPECT_FALSE(run_op("ConstantOfShape", {i64({2, -1})}, {}, 1, 9).ok());
}

TEST(ShapeOps, Range) {
  // numpy.arange(10, 4, -3) = [10, 7]
  auto r = run_op("Range", {Tensor::scalar<int32_t>(10), Tensor::scalar<int32_t>(4), Tensor::scalar<int32_t>(-3)});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(values<int32_t>((*r)[0]), (std::vector<int32_t>{10, 7}));
  r = run_op("Range", {Tensor::scalar<float>(1), Tensor::scalar<float>(2), Tensor::scalar<float>(0.25f)});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{1, 1.25f, 1.5f, 1.75f}));
  r = run_op("Range", {Tensor::scalar<int64_t>(5), Tensor::scalar<int64_t>(1), Tensor::scalar<int64_t>(1)});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].size(), 0);
  EXPECT_FALSE(run_op("Range", {Tensor::scalar<int64_t>(0), Tensor::scalar<int64_t>(1), Tensor::scalar<int64_t>(0)}).ok());
}

TEST(ShapeOps, EyeLike) {
  auto r = run_op("EyeLike", {Tensor::from_vector<float>({3, 4}, std::vector<float>(12))},
                  {{"k", attr_int(1)}, {"dtype", attr_int(static_cast<int>(DType::kInt32))}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(values<int32_t>((*r)[0]), (std::vector<int32_t>{0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}));
  r = run_op("EyeLike", {Tensor::from_vector<int64_t>({2, 2}, {5, 5, 5, 5})}, {{"k", attr_int(-1)}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{0, 0, 1, 0}));
}

TEST(ShapeOps, ConstantAttributes) {
  auto r = run_op("Constant", {}, {{"value_ints", attr_ints({1, 2, 3})}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{1, 2, 3}));
  r = run_op("Constant", {}, {{"value_float", attr_float(2.5f)}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].rank(), 0u);
  EXPECT_EQ((*r)[0].data<float>()[0], 2.5f);
  r = run_op("Constant", {}, {{"value_string", attr_string("hi")}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].data<std::string>()[0], "hi");
  EXPECT_FALSE(run_op("Constant", {}, {}).ok());
}

}  // namespace
}  // namespace dlrt::cpu::testing
