#include "kernel_test_util.h"

namespace dlrt::cpu::testing {
namespace {

TEST(NonMaxSuppression, SuppressByIou) {
  Tensor boxes = Tensor::from_vector<float>({1, 6, 4}, {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, -0.1f, 1, 0.9f,
                                                        0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100, 1, 101});
  Tensor scores = Tensor::from_vector<float>({1, 1, 6}, {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f});
  auto r = run_op("NonMaxSuppression", {boxes, scores, Tensor::from_vector<int64_t>({1}, {3}),
                                        Tensor::from_vector<float>({1}, {0.5f}), Tensor::from_vector<float>({1}, {0.f})},
                  {}, 1, 11);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{3, 3}));
  std::vector<int64_t> got((*r)[0].data<int64_t>(), (*r)[0].data<int64_t>() + 9);
  EXPECT_EQ(got, (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 5}));
  // No max_output_boxes_per_class: nothing is selected.
  auto none = run_op("NonMaxSuppression", {boxes, scores}, {}, 1, 11);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ((*none)[0].shape(), (Shape{0, 3}));
  EXPECT_FALSE(run_op("NonMaxSuppression", {boxes, Tensor::from_vector<float>({1, 1, 5}, {1, 1, 1, 1, 1})}, {}, 1, 11).ok());
}

TEST(RoiAlign, AvgAndBadBatchIndex) {
  Tensor x = Tensor::from_vector<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor rois = Tensor::from_vector<float>({1, 4}, {0, 0, 1, 1});
  auto r = run_op("RoiAlign", {x, rois, Tensor::from_vector<int64_t>({1}, {0})},
                  {{"sampling_ratio", attr_int(1)}}, 1, 10);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {2.5f});
  EXPECT_FALSE(run_op("RoiAlign", {x, rois, Tensor::from_vector<int64_t>({1}, {1})}, {}, 1, 10).ok());
}

}  // namespace
}  // namespace dlrt::cpu::testing
