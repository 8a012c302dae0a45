#include <cmath>

#include "kernel_test_util.h"

namespace dlrt::cpu::testing {
namespace {

TEST(Softmax, LastAxisOpset13) {
  auto r = run_op("Softmax", {Tensor::from_vector<float>({2, 2}, {0, 0, 1, 3})}, {}, 1, 13);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  float e = 1.f / (1.f + std::exp(2.f));
  expect_near((*r)[0], {0.5f, 0.5f, e, 1 - e});
}

TEST(Softmax, InnerAxis) {
  // shape [2,2], axis 0: columns
  auto r = run_op("Softmax", {Tensor::from_vector<float>({2, 2}, {0, 1, 0, 3})}, {{"axis", attr_int(0)}}, 1, 13);
  ASSERT_TRUE(r.ok());
  float e = 1.f / (1.f + std::exp(2.f));
  expect_near((*r)[0], {0.5f, e, 0.5f, 1 - e});
}

TEST(Softmax, LegacyCoercesTo2D) {
  // opset 11, axis 1 on [1,2,2]: softmax over all 4 values.
  auto r = run_op("Softmax", {Tensor::from_vector<float>({1, 2, 2}, {0, 0, 0, 0})}, {}, 1, 11);
  ASSERT_TRUE(r.ok());
  expect_near((*r)[0], {0.25f, 0.25f, 0.25f, 0.25f});
}

TEST(LogSoftmax, LargeNumbers) {
  auto r = run_op("LogSoftmax", {Tensor::from_vector<float>({2}, {10000, 10000})}, {}, 1, 13);
  ASSERT_TRUE(r.ok());
  expect_near((*r)[0], {-std::log(2.f), -std::log(2.f)});
}

TEST(Hardmax, FirstMaxWins) {
  auto r = run_op("Hardmax", {Tensor::from_vector<float>({2, 3}, {1, 3, 3, 0, -1, -2})}, {}, 1, 13);
  ASSERT_TRUE(r.ok());
  expect_near((*r)[0], {0, 1, 0, 1, 0, 0});
}

TEST(Softmax, BadAxis) {
  EXPECT_FALSE(run_op("Softmax", {Tensor::from_vector<float>({2}, {0, 0})}, {{"axis", attr_int(1)}}, 1, 13).ok());
  EXPECT_FALSE(run_op("Softmax", {Tensor::from_vector<int32_t>({2}, {0, 0})}, {}, 1, 13).ok());
}

TEST(NllLoss, MeanWithWeightsAndIgnoreIndex) {
  // input [N=2, C=3] (already log-probs)
  Tensor x = Tensor::from_vector<float>({2, 3}, {-1, -2, -3, -4, -5, -6});
  Tensor t = Tensor::from_vector<int64_t>({2}, {2, 0});
  Tensor w = Tensor::from_vector<float>({3}, {0.5f, 1, 2});
  auto r = run_op("NegativeLogLikelihoodLoss", {x, t, w}, {}, 1, 13);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  // (3*2 + 4*0.5) / (2 + 0.5)
  expect_near((*r)[0], {8.f / 2.5f});
  auto none = run_op("NegativeLogLikelihoodLoss", {x, t}, {{"reduction", attr_string("none")}}, 1, 13);
  ASSERT_TRUE(none.ok());
  expect_near((*none)[0], {3, 4});
  auto ii = run_op("NegativeLogLikelihoodLoss", {x, t}, {{"ignore_index", attr_int(0)}}, 1, 13);
  ASSERT_TRUE(ii.ok());
  expect_near((*ii)[0], {3});
  auto bad = run_op("NegativeLogLikelihoodLoss", {x, Tensor::from_vector<int64_t>({2}, {3, 0})}, {}, 1, 13);
  EXPECT_FALSE(bad.ok());
}

TEST(SoftmaxCrossEntropyLoss, SumWithLogProb) {
  // N=1, C=2, d1=2: scores [[0, 0], [0, ln 3]] over C at each d.
  Tensor x = Tensor::from_vector<float>({1, 2, 2}, {0, 0, 0, std::log(3.f)});
  Tensor t = Tensor::from_vector<int32_t>({1, 2}, {1, 1});
  auto r = run_op("SoftmaxCrossEntropyLoss", {x, t}, {{"reduction", attr_string("sum")}}, 2, 13);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  // d=0: -log(0.5); d=1: -log(0.75)
  expect_near((*r)[0], {std::log(2.f) - std::log(0.75f)});
  expect_near((*r)[1], {std::log(0.5f), std::log(0.25f), std::log(0.5f), std::log(0.75f)});
}

}  // namespace
}  // namespace dlrt::cpu::testing
