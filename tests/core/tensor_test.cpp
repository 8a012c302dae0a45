#include <gtest/gtest.h>

#include <limits>

#include "dlrt/tensor.h"

namespace dlrt {
namespace {

TEST(Tensor, AllocateIsZeroedAndAligned) {
  auto r = Tensor::allocate(DType::kFloat32, {2, 3});
  ASSERT_TRUE(r.ok());
  const Tensor& t = r.value();
  EXPECT_EQ(t.size(), 6);
  EXPECT_EQ(t.nbytes(), 24u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % 64, 0u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(t.data<float>()[i], 0.0f);
}

// From 1 MiB, tensors are mapped (core/large_alloc.h) rather than malloc'd:
// still zero-filled and aligned, and a copy shares the mapping until the last
// owner lets go. Sizes around the switch, and one reused after the first is gone.
TEST(Tensor, LargeTensorsAreZeroedAlignedAndShared) {
  for (int64_t n : {int64_t{1} << 18, (int64_t{1} << 18) - 16, (int64_t{1} << 18) + 3, int64_t{3} << 20}) {
    SCOPED_TRACE(n);
    for (int round = 0; round < 2; ++round) {
      auto r = Tensor::allocate(DType::kFloat32, {n});
      ASSERT_TRUE(r.ok());
      Tensor t = r.value();
      EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % 64, 0u);
      const float* d = t.data<float>();
      for (int64_t i = 0; i < n; i += 1021) ASSERT_EQ(d[i], 0.0f) << i;
      EXPECT_EQ(d[n - 1], 0.0f);
      t.data<float>()[n - 1] = 7.0f;  // writable to the last element
      Tensor copy = t;
      t = Tensor();
      EXPECT_EQ(copy.data<float>()[n - 1], 7.0f);
      auto u = Tensor::allocate_uninitialized(DType::kFloat32, {n});
      ASSERT_TRUE(u.ok());
      u->data<float>()[0] = 1.0f;
      u->data<float>()[n - 1] = 2.0f;
      EXPECT_EQ(u->data<float>()[n - 1], 2.0f);
    }
  }
}

TEST(Tensor, AllocateUninitializedHasShapeAlignmentAndTheSameChecks) {
  auto r = Tensor::allocate_uninitialized(DType::kFloat32, {4, 5});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->size(), 20);
  EXPECT_EQ(r->nbytes(), 80u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(r->raw_data()) % 64, 0u);
  EXPECT_FALSE(Tensor::allocate_uninitialized(DType::kInt64, {-1}).ok());
  EXPECT_FALSE(Tensor::allocate_uninitialized(DType::kUndefined, {1}).ok());
  auto s = Tensor::allocate_uninitialized(DType::kString, {2});  // strings still start empty
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->data<std::string>()[1].empty());
}

TEST(Tensor, OverflowingShapeIsAnError) {
  int64_t big = std::numeric_limits<int64_t>::max() / 2;
  auto r = Tensor::allocate(DType::kFloat32, {big, 4});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("overflows"), std::string::npos);
}

TEST(Tensor, NegativeDimIsAnError) {
  EXPECT_FALSE(Tensor::allocate(DType::kInt64, {-1}).ok());
}

TEST(Tensor, ReshapeSharesStorageAndChecksCount) {
  Tensor t = Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4});
  auto r = t.reshaped({4});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->raw_data(), t.raw_data());
  EXPECT_FALSE(t.reshaped({3}).ok());
}

TEST(Tensor, ViewDoesNotOwn) {
  float buf[3] = {1, 2, 3};
  Tensor v = Tensor::view(DType::kFloat32, {3}, buf);
  EXPECT_TRUE(v.is_view());
  auto c = v.clone();
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->is_view());
  EXPECT_EQ(c->data<float>()[2], 3.0f);
}

TEST(Tensor, StringTensorsHoldStrings) {
  auto r = Tensor::allocate(DType::kString, {2});
  ASSERT_TRUE(r.ok());
  r->data<std::string>()[1] = "hello";
  auto c = r->clone();
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->data<std::string>()[1], "hello");
}

TEST(DType, Float16RoundTrip) {
  for (float f : {0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f}) {
    EXPECT_EQ(static_cast<float>(Float16(f)), f) << f;
  }
  EXPECT_EQ(Float16(1e6f).bits, 0x7c00);  // overflow -> inf
  EXPECT_EQ(static_cast<float>(BFloat16(1.0f)), 1.0f);
  EXPECT_EQ(dtype_from_name("int64"), DType::kInt64);
  EXPECT_FALSE(dtype_from_name("complex64").has_value());
}

}  // namespace
}  // namespace dlrt
