#include "kernel_test_util.h"

namespace dlrt::cpu::testing {
namespace {

TEST(TopK, LargestWithTies) {
  Tensor x = Tensor::from_vector<float>({2, 4}, {1, 3, 3, 2, 4, 0, 4, 1});
  auto r = run_op("TopK", {x, Tensor::from_vector<int64_t>({1}, {2})}, {}, 2, 11);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {3, 3, 4, 4});
  const int64_t* i = (*r)[1].data<int64_t>();
  EXPECT_EQ(i[0], 1);
  EXPECT_EQ(i[1], 2);
  EXPECT_EQ(i[2], 0);
  EXPECT_EQ(i[3], 2);
}

TEST(TopK, SmallestAlongAxis0AndAttributeK) {
  Tensor x = Tensor::from_vector<float>({3, 2}, {5, 1, 2, 6, 3, 0});
  auto r = run_op("TopK", {x, Tensor::from_vector<int64_t>({1}, {2})}, {{"axis", attr_int(0)}, {"largest", attr_int(0)}}, 2, 11);
  ASSERT_TRUE(r.ok());
  expect_near((*r)[0], {2, 0, 3, 1});
  auto a = run_op("TopK", {x}, {{"axis", attr_int(0)}, {"k", attr_int(1)}}, 2, 1);
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  expect_near((*a)[0], {5, 6});
  EXPECT_FALSE(run_op("TopK", {x, Tensor::from_vector<int64_t>({1}, {4})}, {{"axis", attr_int(0)}}, 2, 11).ok());
}

TEST(CumSum, Modes) {
  Tensor x = Tensor::from_vector<float>({3}, {1, 2, 3});
  Tensor ax = Tensor::from_vector<int32_t>({}, {0});
  auto r = run_op("CumSum", {x, ax}, {}, 1, 14);
  ASSERT_TRUE(r.ok());
  expect_near((*r)[0], {1, 3, 6});
  auto e = run_op("CumSum", {x, ax}, {{"exclusive", attr_int(1)}}, 1, 14);
  expect_near((*e)[0], {0, 1, 3});
  auto rv = run_op("CumSum", {x, ax}, {{"reverse", attr_int(1)}}, 1, 14);
  expect_near((*rv)[0], {6, 5, 3});
  auto re = run_op("CumSum", {x, ax}, {{"reverse", attr_int(1)}, {"exclusive", attr_int(1)}}, 1, 14);
  expect_near((*re)[0], {5, 3, 0});
  auto two = run_op("CumSum", {Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4}), Tensor::from_vector<int64_t>({}, {-1})}, {}, 1, 14);
  ASSERT_TRUE(two.ok());
  expect_near((*two)[0], {1, 3, 3, 7});
}

TEST(Unique, SortedAndUnsorted) {
  Tensor x = Tensor::from_vector<float>({6}, {2, 1, 1, 3, 4, 3});
  auto r = run_op("Unique", {x}, {}, 4, 11);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {1, 2, 3, 4});
  std::vector<int64_t> idx((*r)[1].data<int64_t>(), (*r)[1].data<int64_t>() + 4);
  EXPECT_EQ(idx, (std::vector<int64_t>{1, 0, 3, 4}));
  std::vector<int64_t> inv((*r)[2].data<int64_t>(), (*r)[2].data<int64_t>() + 6);
  EXPECT_EQ(inv, (std::vector<int64_t>{1, 0, 0, 2, 3, 2}));
  std::vector<int64_t> cnt((*r)[3].data<int64_t>(), (*r)[3].data<int64_t>() + 4);
  EXPECT_EQ(cnt, (std::vector<int64_t>{2, 1, 2, 1}));
  auto u = run_op("Unique", {x}, {{"sorted", attr_int(0)}}, 4, 11);
  ASSERT_TRUE(u.ok());
  expect_near((*u)[0], {2, 1, 3, 4});
  std::vector<int64_t> uinv((*u)[2].data<int64_t>(), (*u)[2].data<int64_t>() + 6);
  EXPECT_EQ(uinv, (std::vector<int64_t>{0, 1, 1, 2, 3, 2}));
}

TEST(Unique, WithAxis) {
  // rows: [1,0], [0,1], [1,0]
  Tensor x = Tensor::from_vector<int32_t>({3, 2}, {1, 0, 0, 1, 1, 0});
  auto r = run_op("Unique", {x}, {{"axis", attr_int(0)}}, 4, 11);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (Shape{2, 2}));
  const int32_t* y = (*r)[0].data<int32_t>();
  EXPECT_EQ(y[0], 0);
  EXPECT_EQ(y[1], 1);
  EXPECT_EQ(y[2], 1);
  EXPECT_EQ(y[3], 0);
  EXPECT_EQ((*r)[3].data<int64_t>()[1], 2);
}

}  // namespace
}  // namespace dlrt::cpu::testing
