#include "kernel_test_util.h"

namespace dlrt::cpu::testing {
namespace {

Tensor empty() { return Tensor(); }
Tensor scales(std::vector<float> v) { return Tensor::from_vector<float>({static_cast<int64_t>(v.size())}, v); }

TEST(Resize, NearestHalfPixelUpsample) {
  Tensor x = Tensor::from_vector<float>({1, 2}, {1, 2});
  auto r = run_op("Resize", {x, empty(), scales({1, 2})}, {}, 1, 13);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{1, 4}));
  expect_near((*r)[0], {1, 1, 2, 2});
}

TEST(Resize, LinearHalfPixelAndAlignCorners) {
  Tensor x = Tensor::from_vector<float>({1, 2}, {1, 2});
  auto r = run_op("Resize", {x, empty(), scales({1, 2})}, {{"mode", attr_string("linear")}}, 1, 13);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {1, 1.25f, 1.75f, 2});
  auto a = run_op("Resize", {x, empty(), scales({1, 2})},
                  {{"mode", attr_string("linear")}, {"coordinate_transformation_mode", attr_string("align_corners")}}, 1, 13);
  ASSERT_TRUE(a.ok());
  expect_near((*a)[0], {1, 4.f / 3, 5.f / 3, 2});
}

TEST(Resize, SizesInputNearestDownsample) {
  Tensor x = Tensor::from_vector<float>({1, 4}, {1, 2, 3, 4});
  auto r = run_op("Resize", {x, empty(), empty(), Tensor::from_vector<int64_t>({2}, {1, 2})}, {}, 1, 13);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {1, 3});
}

TEST(Resize, AxesAndIntegerNearest) {
  Tensor x = Tensor::from_vector<int32_t>({2, 2}, {1, 2, 3, 4});
  auto r = run_op("Resize", {x, empty(), scales({2})}, {{"axes", attr_ints({0})}, {"coordinate_transformation_mode", attr_string("asymmetric")}}, 1, 18);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{4, 2}));
  std::vector<int32_t> got((*r)[0].data<int32_t>(), (*r)[0].data<int32_t>() + 8);
  EXPECT_EQ(got, (std::vector<int32_t>{1, 2, 1, 2, 3, 4, 3, 4}));
}

TEST(Resize, Errors) {
  Tensor x = Tensor::from_vector<float>({1, 2}, {1, 2});
  EXPECT_FALSE(run_op("Resize", {x, empty(), scales({1})}, {}, 1, 13).ok());
  EXPECT_FALSE(run_op("Resize", {x, empty(), empty(), empty()}, {}, 1, 13).ok());
  EXPECT_FALSE(run_op("Resize", {x, empty(), scales({1, 2})}, {{"mode", attr_string("bogus")}}, 1, 13).ok());
  EXPECT_FALSE(run_op("Resize", {x, empty(), scales({1, -2})}, {}, 1, 13).ok());
}

TEST(Upsample, NearestOpset9) {
  Tensor x = Tensor::from_vector<float>({1, 2}, {1, 2});
  auto r = run_op("Upsample", {x, scales({1, 2})}, {}, 1, 9);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {1, 1, 2, 2});
  auto a = run_op("Upsample", {x}, {{"scales", attr_floats({1, 2})}, {"mode", attr_string("linear")}}, 1, 7);
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  expect_near((*a)[0], {1, 1.5f, 2, 2});
}

TEST(GridSample, BilinearAndPadding) {
  Tensor x = Tensor::from_vector<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor grid = Tensor::from_vector<float>({1, 1, 2, 2}, {0, 0, -1, -1});
  auto r = run_op("GridSample", {x, grid}, {}, 1, 16);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {2.5f, 0.25f});
  auto b = run_op("GridSample", {x, grid}, {{"padding_mode", attr_string("border")}}, 1, 16);
  ASSERT_TRUE(b.ok());
  expect_near((*b)[0], {2.5f, 1});
  auto a = run_op("GridSample", {x, grid}, {{"align_corners", attr_int(1)}, {"mode", attr_string("nearest")}}, 1, 16);
  ASSERT_TRUE(a.ok());
  // center (0.5, 0.5) rounds half to even -> (0, 0)
  expect_near((*a)[0], {1, 1});
  EXPECT_FALSE(run_op("GridSample", {x, Tensor::from_vector<float>({1, 1, 1, 3}, {0, 0, 0})}, {}, 1, 16).ok());
}

}  // namespace
}  // namespace dlrt::cpu::testing
