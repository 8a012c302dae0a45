// A constant B used by several MatMul/Gemm nodes is packed once (ops/matmul.cpp prepack_b).
#include <gtest/gtest.h>

#include <vector>

#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/ops/matmul_impl.h"
#include "isa_test_util.h"

namespace dlrt::cpu {
namespace {

Tensor weights() {
  std::vector<float> v(64 * 48);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 17) - 8.0f;
  return Tensor::from_vector<float>({64, 48}, v);
}

TEST(PrepackShare, OneConstantIsPackedOnceForEveryUser) {
  const Tensor b = weights();
  const Tensor same_storage = b;  // another Tensor over the same constant (a second node's input)
  auto first = prepack_b(&b, false);
  auto second = prepack_b(&same_storage, false);
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_NE(first.value(), nullptr);
  EXPECT_EQ(first.value().get(), second.value().get());
  EXPECT_EQ(first.value()->packed.get(), second.value()->packed.get());
}

TEST(PrepackShare, OtherDataLayoutOrIsaIsPackedApart) {
  const Tensor b = weights();
  auto plain = prepack_b(&b, false);
  ASSERT_TRUE(plain.ok());
  // The same values in other storage: not the same constant.
  auto copy = b.clone();
  ASSERT_TRUE(copy.ok());
  auto other = prepack_b(&copy.value(), false);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(plain.value().get(), other.value().get());
  // Transposed use of the same constant: another layout.
  auto trans = prepack_b(&b, true);
  ASSERT_TRUE(trans.ok());
  EXPECT_NE(plain.value().get(), trans.value().get());
  EXPECT_EQ(trans.value()->packed->rows(), 48);
  // Another ISA packs for its own kernels.
  for (CpuIsa isa : testing::runnable_isas()) {
    if (isa == cpu_isa()) continue;
    ScopedCpuIsa cap(isa);
    auto at_isa = prepack_b(&b, false);
    ASSERT_TRUE(at_isa.ok());
    EXPECT_NE(plain.value().get(), at_isa.value().get());
  }
}

TEST(PrepackShare, ViewsAreNotShared) {
  std::vector<float> v(8 * 8, 1.0f);
  const Tensor view = Tensor::view(DType::kFloat32, {8, 8}, v.data());
  auto a = prepack_b(&view, false);
  auto b = prepack_b(&view, false);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a.value().get(), b.value().get());
}

}  // namespace
}  // namespace dlrt::cpu
