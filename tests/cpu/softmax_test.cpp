#include <cmath>
#include <limits>
#include <random>

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

// Reference over an [outer, n, inner] view in double: kind 0 Softmax, 1 LogSoftmax, 2 Hardmax.
std::vector<float> reference(const std::vector<float>& x, int64_t outer, int64_t n, int64_t inner, int kind) {
  std::vector<float> y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t r) { return static_cast<size_t>((o * n + r) * inner + i); };
      double mx = -std::numeric_limits<double>::infinity();
      int64_t arg = 0;
      bool nan = false;
      for (int64_t r = 0; r < n; ++r) {
        nan = nan || std::isnan(x[at(r)]);
        if (r == 0 || x[at(r)] > mx) { mx = x[at(r)]; arg = r; }
      }
      double sum = 0;
      for (int64_t r = 0; r < n; ++r) sum += std::exp(x[at(r)] - mx);
      for (int64_t r = 0; r < n; ++r) {
        double v = kind == 2 ? (r == arg) : kind == 0 ? std::exp(x[at(r)] - mx) / sum : (x[at(r)] - mx) - std::log(sum);
        if (nan && kind != 2) v = std::numeric_limits<double>::quiet_NaN();
        y[at(r)] = static_cast<float>(v);
      }
    }
  return y;
}

void expect_same(const Tensor& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), static_cast<int64_t>(want.size())) << what;
  int bad = 0;
  for (size_t i = 0; i < want.size() && bad < 5; ++i) {
    const float g = got.data<float>()[i], w = want[i];
    const bool ok = std::isnan(w) ? std::isnan(g) : (g == w || std::fabs(g - w) <= 2e-6f * (1 + std::fabs(w)));
    if (!ok) ++bad;
    EXPECT_TRUE(ok) << what << " at " << i << ": got " << g << ", want " << w;
  }
}

// A non-last axis (the lane-parallel column path) and the last axis, on shapes
// whose inner size is not a multiple of 16 or 64, with batch > 1 and 1-element
// axes, against the double reference at 1..4 threads.
TEST(Softmax, RandomShapesAllKindsAndThreads) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-20.f, 20.f);
  const std::vector<Shape> shapes = {{1, 16, 4, 35}, {3, 5, 17}, {2, 1, 130}, {1, 7, 1}, {2, 3, 64}, {1, 2, 1000},
                                     {4, 33, 3}, {1, 300, 80}, {2, 16, 4, 2100}};
  const char* ops[] = {"Softmax", "LogSoftmax", "Hardmax"};
  for (const Shape& shape : shapes) {
    int64_t total = 1;
    for (int64_t d : shape) total *= d;
    std::vector<float> x(static_cast<size_t>(total));
    for (float& v : x) v = dist(rng);
    const Tensor in = Tensor::from_vector<float>(shape, x);
    const int64_t rank = static_cast<int64_t>(shape.size());
    for (int64_t axis = 0; axis < rank; ++axis) {
      int64_t outer = 1, inner = 1;
      for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
      for (int64_t d = axis + 1; d < rank; ++d) inner *= shape[d];
      for (int kind = 0; kind < 3; ++kind) {
        const std::vector<float> want = reference(x, outer, shape[axis], inner, kind);
        for (int threads = 1; threads <= 4; ++threads) {
          auto r = run_op(ops[kind], {in}, {{"axis", attr_int(axis)}}, 1, 13, "", threads);
          ASSERT_TRUE(r.ok()) << r.status().to_string();
          expect_same((*r)[0], want,
                      std::string(ops[kind]) + " " + shape_to_string(shape) + " axis " + std::to_string(axis) +
                          " threads " + std::to_string(threads));
        }
      }
      // Before opset 13 the input is coerced to 2-D at the axis: one softmax over all trailing dims.
      const std::vector<float> legacy = reference(x, outer, shape[axis] * inner, 1, 0);
      auto r = run_op("Softmax", {in}, {{"axis", attr_int(axis)}}, 1, 11, "", 2);
      ASSERT_TRUE(r.ok()) << r.status().to_string();
      expect_same((*r)[0], legacy, "Softmax-11 " + shape_to_string(shape) + " axis " + std::to_string(axis));
    }
  }
}

// NaN and infinities along a non-last axis: a column with a NaN is all NaN,
// -inf alone gives 0, a column of -inf or with +inf gives NaN (inf - inf), as
// the last-axis path does.
TEST(Softmax, InnerAxisNanAndInfinity) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  // [3, 70] over axis 0: column 0 has a NaN last, 1 a NaN first, 2 a -inf, 3 all -inf, 4 a +inf.
  std::vector<float> x(3 * 70, 0.5f);
  for (int64_t c = 0; c < 70; ++c) x[static_cast<size_t>(70 + c)] = static_cast<float>(c % 7);
  x[2 * 70 + 0] = nan;
  x[0 * 70 + 1] = nan;
  x[1 * 70 + 2] = -inf;
  x[0 * 70 + 3] = x[1 * 70 + 3] = x[2 * 70 + 3] = -inf;
  x[1 * 70 + 4] = inf;
  const Tensor in = Tensor::from_vector<float>({3, 70}, x);
  for (int kind = 0; kind < 2; ++kind) {
    auto r = run_op(kind == 0 ? "Softmax" : "LogSoftmax", {in}, {{"axis", attr_int(0)}}, 1, 13);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    const float* y = (*r)[0].data<float>();
    for (int64_t row = 0; row < 3; ++row) {
      EXPECT_TRUE(std::isnan(y[row * 70 + 0])) << row;
      EXPECT_TRUE(std::isnan(y[row * 70 + 1])) << row;
      EXPECT_TRUE(std::isnan(y[row * 70 + 3])) << row;
      EXPECT_TRUE(std::isnan(y[row * 70 + 4])) << row;
    }
    EXPECT_EQ(y[1 * 70 + 2], kind == 0 ? 0.f : -inf);
    EXPECT_FALSE(std::isnan(y[0 * 70 + 2]));
  }
  expect_same(run_op("Softmax", {in}, {{"axis", attr_int(0)}}, 1, 13)->at(0), reference(x, 1, 3, 70, 0), "softmax");
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
