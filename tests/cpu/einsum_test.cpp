#include "kernel_test_util.h"

namespace dlrt::cpu::testing {
namespace {

Result<std::vector<Tensor>> einsum(const std::string& eq, std::vector<Tensor> ins) {
  return run_op("Einsum", std::move(ins), {{"equation", attr_string(eq)}}, 1, 12);
}

Tensor seq(Shape s) {
  std::vector<float> v(static_cast<size_t>(element_count(s)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  return Tensor::from_vector<float>(s, v);
}

TEST(Einsum, MatMulExplicitAndImplicit) {
  // [[0,1,2],[3,4,5]] x [[0,1],[2,3],[4,5]] = [[10,13],[28,40]]
  auto r = einsum("ij,jk->ik", {seq({2, 3}), seq({3, 2})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {10, 13, 28, 40});
  auto i = einsum("ij,jk", {seq({2, 3}), seq({3, 2})});
  ASSERT_TRUE(i.ok());
  expect_near((*i)[0], {10, 13, 28, 40});
}

TEST(Einsum, TransposeTraceDiagonalSum) {
  auto t = einsum("ij->ji", {seq({2, 3})});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)[0].shape(), (Shape{3, 2}));
  expect_near((*t)[0], {0, 3, 1, 4, 2, 5});
  auto tr = einsum("ii", {seq({3, 3})});
  ASSERT_TRUE(tr.ok());
  expect_near((*tr)[0], {12});
  auto d = einsum("ii->i", {seq({3, 3})});
  ASSERT_TRUE(d.ok());
  expect_near((*d)[0], {0, 4, 8});
  auto s = einsum("ij->", {seq({2, 3})});
  ASSERT_TRUE(s.ok());
  expect_near((*s)[0], {15});
  auto ba = einsum("ba", {seq({2, 3})});  // implicit output sorts labels: "ab"
  ASSERT_TRUE(ba.ok());
  expect_near((*ba)[0], {0, 3, 1, 4, 2, 5});
}

TEST(Einsum, BatchEllipsisOuterAndChain) {
  auto b = einsum("...ij,...jk->...ik", {seq({2, 1, 2}), seq({2, 2, 1})});
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  // batch0: [0,1]·[0,1] = 1 ; batch1: [2,3]·[2,3] = 13
  expect_near((*b)[0], {1, 13});
  auto o = einsum("i,j->ij", {seq({2}), seq({3})});
  ASSERT_TRUE(o.ok());
  expect_near((*o)[0], {0, 0, 0, 0, 1, 2});
  auto c = einsum("ij,jk,kl->il", {seq({1, 2}), seq({2, 2}), seq({2, 1})});
  ASSERT_TRUE(c.ok());
  // [0,1] x [[0,1],[2,3]] = [2,3]; x [0,1]^T = 3
  expect_near((*c)[0], {3});
  // broadcasting ellipsis of size 1
  auto bc = einsum("...i,...i->...", {seq({2, 2}), seq({1, 2})});
  ASSERT_TRUE(bc.ok()) << bc.status().to_string();
  expect_near((*bc)[0], {1, 3});
}

TEST(Einsum, Errors) {
  EXPECT_FALSE(einsum("ij,jk->ik", {seq({2, 3}), seq({2, 2})}).ok());
  EXPECT_FALSE(einsum("ij->ik", {seq({2, 3})}).ok());
  EXPECT_FALSE(einsum("ijk->i", {seq({2, 3})}).ok());
  EXPECT_FALSE(einsum("ij,j", {seq({2, 3})}).ok());
  EXPECT_FALSE(einsum("i1->i", {seq({2, 3})}).ok());
}

}  // namespace
}  // namespace dlrt::cpu::testing
