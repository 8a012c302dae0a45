// Reading and writing single elements of any dtype (core/tensor_values.h).
#include "core/tensor_values.h"

#include <gtest/gtest.h>

namespace dlrt {
namespace {

TEST(TensorValues, SetThenReadEveryNumericDtype) {
  const DType types[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt8,
                         DType::kInt16,   DType::kInt32,   DType::kInt64,   DType::kUInt8,    DType::kUInt16,
                         DType::kUInt32,  DType::kUInt64};
  for (DType dt : types) {
    Tensor t = Tensor::allocate(dt, {3}).value();
    ASSERT_TRUE(set_element_from_double(t, 0, 2.0)) << dtype_name(dt);
    ASSERT_TRUE(set_element_from_double(t, 2, 7.0)) << dtype_name(dt);
    EXPECT_EQ(element_as_double(t, 0), 2.0) << dtype_name(dt);
    EXPECT_EQ(element_as_double(t, 2), 7.0) << dtype_name(dt);
    EXPECT_EQ(element_as_int64(t, 2), 7) << dtype_name(dt);
  }
}

TEST(TensorValues, SetRoundsFloatsAndTruncatesIntegers) {
  Tensor h = Tensor::allocate(DType::kFloat16, {1}).value();
  ASSERT_TRUE(set_element_from_double(h, 0, 1.0 + 1.0 / 4096));  // below float16's half ulp at 1
  EXPECT_EQ(element_as_double(h, 0), 1.0);
  Tensor i = Tensor::allocate(DType::kInt32, {1}).value();
  ASSERT_TRUE(set_element_from_double(i, 0, -2.75));
  EXPECT_EQ(element_as_int64(i, 0), -2);
  Tensor b = Tensor::allocate(DType::kBool, {2}).value();
  ASSERT_TRUE(set_element_from_double(b, 0, 5.0));
  ASSERT_TRUE(set_element_from_double(b, 1, 0.0));
  EXPECT_EQ(element_as_double(b, 0), 1.0);
  EXPECT_EQ(element_as_double(b, 1), 0.0);
}

TEST(TensorValues, SetRefusesStrings) {
  Tensor s = Tensor::allocate(DType::kString, {1}).value();
  EXPECT_FALSE(set_element_from_double(s, 0, 1.0));
}

}  // namespace
}  // namespace dlrt
