// Unit tests for the gather/scatter family (src/backends/cpu/ops/gather_scatter.cpp).
// Expected values are computed by hand or with numpy (noted where non-obvious).
#include <gtest/gtest.h>

#include <cmath>

#include "kernel_test_util.h"

namespace dlrt::cpu::testing {
namespace {

template <typename T = float>
Tensor iota(Shape shape) {
  std::vector<T> v(static_cast<size_t>(element_count(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<T>(i);
  return Tensor::from_vector<T>(std::move(shape), v);
}
Tensor i64(Shape shape, std::vector<int64_t> v) { return Tensor::from_vector<int64_t>(std::move(shape), v); }

template <typename T>
std::vector<T> values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.size());
}

Tensor run1(const std::string& op, std::vector<Tensor> in, ir::Attributes attrs = {},
            int opset = 18) {
  auto r = run_op(op, std::move(in), std::move(attrs), 1, opset);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? (*r)[0] : Tensor();
}

TEST(GatherScatterOps, GatherAxesAndNegativeIndices) {
  Tensor x = iota({3, 4});
  Tensor y = run1("Gather", {x, i64({2}, {2, -3})});
  EXPECT_EQ(y.shape(), (Shape{2, 4}));
  EXPECT_EQ(values<float>(y), (std::vector<float>{8, 9, 10, 11, 0, 1, 2, 3}));
  y = run1("Gather", {x, i64({2, 1}, {3, 0})}, {{"axis", attr_int(1)}});
  EXPECT_EQ(y.shape(), (Shape{3, 2, 1}));
  EXPECT_EQ(values<float>(y), (std::vector<float>{3, 0, 7, 4, 11, 8}));
  y = run1("Gather", {x, Tensor::scalar<int32_t>(1)});
  EXPECT_EQ(y.shape(), (Shape{4}));
  Tensor s = Tensor::from_vector<std::string>({3}, {"a", "b", "c"});
  y = run1("Gather", {s, i64({2}, {2, 2})});
  EXPECT_EQ(values<std::string>(y), (std::vector<std::string>{"c", "c"}));
}

TEST(GatherScatterOps, GatherOutOfRangeIsAClearError) {
  auto r = run_op("Gather", {iota({3, 4}), i64({2}, {0, 3})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kOutOfRange);
  EXPECT_NE(r.status().message().find("index 3"), std::string::npos) << r.status().message();
  EXPECT_FALSE(run_op("Gather", {iota({3, 4}), i64({1}, {-4})}).ok());
  EXPECT_FALSE(run_op("Gather", {iota({3, 4}), i64({1}, {0})}, {{"axis", attr_int(2)}}).ok());
}

TEST(GatherScatterOps, GatherElements) {
  // numpy.take_along_axis([[1,2],[3,4]], [[0,0],[1,0]], 1) = [[1,1],[4,3]]
  Tensor x = Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4});
  Tensor y = run1("GatherElements", {x, i64({2, 2}, {0, 0, 1, 0})}, {{"axis", attr_int(1)}});
  EXPECT_EQ(values<float>(y), (std::vector<float>{1, 1, 4, 3}));
  // axis 0, indices smaller than data, negative index
  Tensor d = iota({3, 3});
  y = run1("GatherElements", {d, i64({2, 3}, {1, 2, 0, 2, 0, -1})});
  EXPECT_EQ(values<float>(y), (std::vector<float>{3, 7, 2, 6, 1, 8}));
  auto r = run_op("GatherElements", {d, i64({1, 1}, {3})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kOutOfRange);
}

TEST(GatherScatterOps, GatherND) {
  // Examples from the ONNX spec.
  Tensor d = iota<int32_t>({2, 2});
  Tensor y = run1("GatherND", {d, i64({2, 2}, {0, 0, 1, 1})});
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{0, 3}));
  y = run1("GatherND", {d, i64({2, 1}, {1, 0})});
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{2, 3, 0, 1}));
  Tensor d3 = iota<int32_t>({2, 2, 2});
  y = run1("GatherND", {d3, i64({2, 1}, {1, 0})}, {{"batch_dims", attr_int(1)}});
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{2, 3, 4, 5}));
  EXPECT_FALSE(run_op("GatherND", {d, i64({1, 2}, {0, 2})}).ok());
  EXPECT_FALSE(run_op("GatherND", {d, i64({1, 3}, {0, 0, 0})}).ok());
}

TEST(GatherScatterOps, ScatterNDWithReductions) {
  Tensor data = Tensor::from_vector<float>({4}, {1, 2, 3, 4});
  Tensor idx = i64({3, 1}, {1, 3, 1});
  Tensor upd = Tensor::from_vector<float>({3}, {10, 20, 30});
  Tensor y = run1("ScatterND", {data, i64({2, 1}, {1, 3}), Tensor::from_vector<float>({2}, {10, 20})});
  EXPECT_EQ(values<float>(y), (std::vector<float>{1, 10, 3, 20}));
  y = run1("ScatterND", {data, idx, upd}, {{"reduction", attr_string("add")}});
  EXPECT_EQ(values<float>(y), (std::vector<float>{1, 42, 3, 24}));
  y = run1("ScatterND", {data, idx, upd}, {{"reduction", attr_string("mul")}});
  EXPECT_EQ(values<float>(y), (std::vector<float>{1, 600, 3, 80}));
  y = run1("ScatterND", {data, idx, upd}, {{"reduction", attr_string("max")}});
  EXPECT_EQ(values<float>(y), (std::vector<float>{1, 30, 3, 20}));
  y = run1("ScatterND", {data, idx, upd}, {{"reduction", attr_string("min")}});
  EXPECT_EQ(values<float>(y), (std::vector<float>{1, 2, 3, 4}));
  // Slices: data 2x2, write row 1.
  y = run1("ScatterND", {iota({2, 2}), i64({1, 1}, {1}), Tensor::from_vector<float>({1, 2}, {7, 8})});
  EXPECT_EQ(values<float>(y), (std::vector<float>{0, 1, 7, 8}));
  auto r = run_op("ScatterND", {data, i64({1, 1}, {4}), Tensor::from_vector<float>({1}, {1})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kOutOfRange);
  EXPECT_FALSE(run_op("ScatterND", {data, i64({1, 1}, {0}), Tensor::from_vector<float>({2}, {1, 2})}).ok());
}

TEST(GatherScatterOps, ScatterElementsAndScatter) {
  // ONNX spec example: axis=1
  Tensor data = Tensor::from_vector<float>({1, 5}, {1, 2, 3, 4, 5});
  Tensor idx = i64({1, 2}, {1, 3});
  Tensor upd = Tensor::from_vector<float>({1, 2}, {1.1f, 2.1f});
  Tensor y = run1("ScatterElements", {data, idx, upd}, {{"axis", attr_int(1)}});
  EXPECT_EQ(values<float>(y), (std::vector<float>{1, 1.1f, 3, 2.1f, 5}));
  y = run1("Scatter", {data, idx, upd}, {{"axis", attr_int(1)}}, 9);
  EXPECT_EQ(values<float>(y), (std::vector<float>{1, 1.1f, 3, 2.1f, 5}));
  y = run1("ScatterElements", {data, i64({1, 2}, {1, 1}), upd}, {{"axis", attr_int(1)}, {"reduction", attr_string("add")}});
  EXPECT_NEAR(y.data<float>()[1], 2 + 1.1f + 2.1f, 1e-5);
  // Integer add wraps rather than overflowing.
  Tensor di = Tensor::from_vector<int64_t>({1}, {INT64_MAX});
  y = run1("ScatterElements", {di, i64({1}, {0}), Tensor::from_vector<int64_t>({1}, {1})},
           {{"reduction", attr_string("add")}});
  EXPECT_EQ(y.data<int64_t>()[0], INT64_MIN);
  auto r = run_op("ScatterElements", {data, i64({1, 1}, {5}), Tensor::from_vector<float>({1, 1}, {0})},
                  {{"axis", attr_int(1)}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kOutOfRange);
}

TEST(GatherScatterOps, OneHot) {
  // indices [1, -1, 5], depth 3, values [0, 9], axis -1 -> -1 wraps to 2, 5 is all off
  Tensor y = run1("OneHot", {i64({3}, {1, -1, 5}), Tensor::scalar<float>(3), Tensor::from_vector<int32_t>({2}, {0, 9})});
  EXPECT_EQ(y.shape(), (Shape{3, 3}));
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{0, 9, 0, 0, 0, 9, 0, 0, 0}));
  y = run1("OneHot", {i64({2}, {0, 2}), Tensor::scalar<int64_t>(3), Tensor::from_vector<float>({2}, {-1, 1})},
           {{"axis", attr_int(0)}});
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(values<float>(y), (std::vector<float>{1, -1, -1, -1, -1, 1}));
  EXPECT_FALSE(run_op("OneHot", {i64({1}, {0}), Tensor::scalar<int64_t>(0), Tensor::from_vector<float>({2}, {0, 1})}).ok());
}

TEST(GatherScatterOps, NonZero) {
  Tensor x = Tensor::from_vector<float>({2, 3}, {0, 1, 0, 2, 0, -0.5f});
  Tensor y = run1("NonZero", {x});
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(values<int64_t>(y), (std::vector<int64_t>{0, 1, 1, 1, 0, 2}));
  Tensor b = Tensor::from_vector<bool>({3}, {false, false, false});
  y = run1("NonZero", {b});
  EXPECT_EQ(y.shape(), (Shape{1, 0}));
}

}  // namespace
}  // namespace dlrt::cpu::testing

namespace dlrt::cpu::testing {
namespace {

TEST(GatherScatterOps, HalfFloatReductionsAndBools) {
  Tensor d = Tensor::from_vector<Float16>({2}, {Float16(1.5f), Float16(2.0f)});
  Tensor y = run1("ScatterElements", {d, i64({2}, {0, 0}), Tensor::from_vector<Float16>({2}, {Float16(1.0f), Float16(0.5f)})},
                  {{"reduction", attr_string("add")}});
  EXPECT_EQ(static_cast<float>(y.data<Float16>()[0]), 3.0f);
  EXPECT_EQ(static_cast<float>(y.data<Float16>()[1]), 2.0f);
  Tensor b = Tensor::from_vector<bool>({3}, {true, false, true});
  y = run1("Gather", {b, i64({2}, {1, 2})});
  EXPECT_EQ(values<bool>(y), (std::vector<bool>{false, true}));
  auto r = run_op("ScatterND", {Tensor::from_vector<std::string>({2}, {"a", "b"}), i64({1, 1}, {0}),
                                Tensor::from_vector<std::string>({1}, {"z"})},
                  {{"reduction", attr_string("add")}}, 1, 18);
  EXPECT_FALSE(r.ok());
}

TEST(GatherScatterOps, HostileInputs) {
  // NaN / huge float indices in OneHot select nothing.
  Tensor y = run1("OneHot", {Tensor::from_vector<float>({2}, {std::nanf(""), 1e30f}), Tensor::scalar<int64_t>(2),
                             Tensor::from_vector<float>({2}, {0, 1})});
  EXPECT_EQ(values<float>(y), (std::vector<float>{0, 0, 0, 0}));
  EXPECT_FALSE(run_op("Gather", {Tensor::from_vector<float>({0}, {}), i64({1}, {0})}).ok());
  EXPECT_FALSE(run_op("Gather", {iota({2}), i64({1}, {INT64_MIN})}).ok());
  EXPECT_FALSE(run_op("GatherND", {iota({2, 2}), i64({2, 1}, {0, 0})}, {{"batch_dims", attr_int(2)}}).ok());
  EXPECT_FALSE(run_op("GatherElements", {iota({2, 2}), i64({1, 3}, {0, 0, 0})}).ok());
  EXPECT_FALSE(run_op("ScatterElements", {iota({2, 2}), i64({1, 1}, {0}), iota({1, 2})}).ok());
  EXPECT_FALSE(run_op("ScatterND", {iota({2, 2}), i64({1, 1}, {0}), iota({1, 2})}, {{"reduction", attr_string("xor")}}).ok());
  // Empty indices give empty outputs.
  y = run1("Gather", {iota({3, 2}), i64({0}, {})});
  EXPECT_EQ(y.shape(), (Shape{0, 2}));
}

TEST(GatherScatterOps, LargeGatherUsesThePool) {
  Tensor x = iota({1000, 70});
  std::vector<int64_t> idx(500);
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int64_t>((i * 37) % 1000);
  Tensor y = run1("Gather", {x, i64({500}, idx)});
  for (size_t i = 0; i < idx.size(); ++i)
    for (int64_t j = 0; j < 70; j += 13) ASSERT_EQ(y.data<float>()[i * 70 + j], static_cast<float>(idx[i] * 70 + j));
}

}  // namespace
}  // namespace dlrt::cpu::testing
