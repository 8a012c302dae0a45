// Sizes the quantized ops derive from their attributes (block_size, strides,
// dilations, pads, kernel_shape) and from empty inputs, near INT64_MAX: each
// is computed in checked arithmetic, so a hostile value is refused or gives
// the spec's answer, never a wrapped size that fits a wrong scale or buffer
// (issue 80, shared/cases/hostile-2026-11-28/qdq_block_size_intmax_empty_scale).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "kernel_test_util.h"

namespace dlrt::cpu {
namespace {

using testing::attr_int;
using testing::attr_ints;
using testing::attr_string;
using testing::run_op;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

template <typename T>
Tensor tv(Shape s, std::vector<T> v) { return Tensor::from_vector<T>(std::move(s), v); }

bool refused(const Result<std::vector<Tensor>>& r) {
  return !r.ok() && r.status().code() == StatusCode::kInvalidArgument;
}

TEST(QuantizeAttributeSizes, BlockedDequantizeWithBlockSizeIntMaxTakesOneBlock) {
  // x int8 [3, 4], axis 1, block_size 2^63 - 1: ceil(4 / block_size) = 1 block per row.
  const Tensor x = tv<int8_t>({3, 4}, {1, 2, 3, 4, -1, -2, -3, -4, 0, 5, 10, 15});
  const ir::Attributes attrs = {{"axis", attr_int(1)}, {"block_size", attr_int(kMax)}};
  auto r = run_op("DequantizeLinear", {x, tv<float>({3, 1}, {0.5f, 2, 1})}, attrs, 1, 21);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  testing::expect_near((*r)[0], {0.5f, 1, 1.5f, 2, -2, -4, -6, -8, 0, 5, 10, 15});
  // The wrapped size was [3, 0]: a scale with no values must be refused, not read.
  auto empty = run_op("DequantizeLinear", {x, Tensor::allocate(DType::kFloat32, {3, 0}).value()}, attrs, 1, 21);
  EXPECT_TRUE(refused(empty)) << empty.status().to_string();
}

TEST(QuantizeAttributeSizes, BlockedQuantizeWithBlockSizeIntMaxTakesOneBlock) {
  const Tensor x = tv<float>({2, 3}, {1, 2, 3, -4, -5, -6});
  const ir::Attributes attrs = {{"axis", attr_int(1)}, {"block_size", attr_int(kMax)}};
  auto r = run_op("QuantizeLinear", {x, tv<float>({2, 1}, {1, 2}), tv<int8_t>({2, 1}, {0, 1})}, attrs, 1, 21);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const int8_t* y = (*r)[0].data<int8_t>();
  EXPECT_EQ(std::vector<int8_t>(y, y + 6), (std::vector<int8_t>{1, 2, 3, -1, -1, -2}));
  const Tensor no_scale = Tensor::allocate(DType::kFloat32, {2, 0}).value();
  const Tensor no_zero_point = Tensor::allocate(DType::kInt8, {2, 0}).value();
  auto empty = run_op("QuantizeLinear", {x, no_scale, no_zero_point}, attrs, 1, 21);
  EXPECT_TRUE(refused(empty)) << empty.status().to_string();
}

// ConvInteger / QLinearConv: strides, dilations and pads near INT64_MAX.
TEST(QuantizeAttributeSizes, IntegerConvGeometryOverflowIsRefused) {
  const Tensor x = tv<uint8_t>({1, 1, 3, 3}, std::vector<uint8_t>(9, 2));
  const Tensor w = tv<uint8_t>({1, 1, 2, 2}, std::vector<uint8_t>(4, 1));
  auto conv = [&](ir::Attributes attrs) { return run_op("ConvInteger", {x, w}, std::move(attrs), 1, 10); };
  EXPECT_TRUE(refused(conv({{"pads", attr_ints({kMax, 0, kMax, 0})}})));
  EXPECT_TRUE(refused(conv({{"dilations", attr_ints({kMax, 1})}})));
  // A huge stride is fine: one window per row, as the spec's formula says.
  auto same = conv({{"strides", attr_ints({kMax, kMax})}, {"auto_pad", attr_string("SAME_UPPER")}});
  ASSERT_TRUE(same.ok()) << same.status().to_string();
  EXPECT_EQ((*same)[0].shape(), (Shape{1, 1, 1, 1}));
  // One channel per group runs the depthwise kernel, which splits the padded
  // plane by stride phase: strides of 2^32 made that split's size wrap (SIGSEGV),
  // INT64_MAX gave 0 or 2 instead of the 2 x 2 window's sum 8.
  const Tensor w2 = tv<uint8_t>({2, 1, 2, 2}, std::vector<uint8_t>(8, 1));  // two outputs: the GEMM path
  for (int64_t stride : {int64_t{1} << 32, kMax})
    for (const Tensor* weights : {&w, &w2}) {
      auto r = run_op("ConvInteger", {x, *weights}, {{"strides", attr_ints({stride, stride})}}, 1, 10);
      ASSERT_TRUE(r.ok()) << r.status().to_string();
      ASSERT_EQ((*r)[0].shape(), (Shape{1, weights->dim(0), 1, 1}));
      for (int64_t m = 0; m < weights->dim(0); ++m) EXPECT_EQ((*r)[0].data<int32_t>()[m], 8) << stride;
    }
  // Several windows 2^32 apart: a padded plane whose phases cannot be counted.
  const int64_t p = int64_t{1} << 32;
  EXPECT_TRUE(refused(conv({{"strides", attr_ints({p, p})}, {"pads", attr_ints({p, p, p, p})}})));
  // group * w's channels wrapping to x's channels.
  const Tensor x0 = Tensor::allocate(DType::kUInt8, {1, 0, 3, 3}).value();
  const Tensor w0 = Tensor::allocate(DType::kUInt8, {0, int64_t{1} << 32, 1, 1}).value();
  EXPECT_TRUE(refused(run_op("ConvInteger", {x0, w0}, {{"group", attr_int(int64_t{1} << 32)}}, 1, 10)));
}

// An empty batch with pads that make a huge (but representable) output plane:
// nothing to compute, so no im2col scratch of that plane's size either.
TEST(QuantizeAttributeSizes, EmptyIntegerConvAllocatesNoScratchForItsPads) {
  const Tensor x = Tensor::allocate(DType::kUInt8, {0, 1, 4, 4}).value();
  const Tensor w = tv<uint8_t>({2, 1, 3, 3}, std::vector<uint8_t>(18, 1));  // two outputs: not depthwise
  const int64_t p = int64_t{1} << 20;
  auto r = run_op("ConvInteger", {x, w}, {{"pads", attr_ints({p, p, p, p})}}, 1, 10);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{0, 2, 2 * p + 2, 2 * p + 2}));
}

// An empty A whose batch dims multiply past memory: nothing to compute, so
// no per-batch offsets either (listing 2^40 of them was OutOfMemory).
TEST(QuantizeAttributeSizes, EmptyMatMulIntegerListsNoBatchOffsets) {
  const int64_t batch = int64_t{1} << 40;
  const Tensor a = Tensor::allocate(DType::kUInt8, {batch, 0, 5}).value();
  const Tensor b = tv<uint8_t>({1, 5, 3}, std::vector<uint8_t>(15, 1));
  auto r = run_op("MatMulInteger", {a, b}, {}, 1, 10);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{batch, 0, 3}));
}

Result<std::vector<Tensor>> average_pool(const Tensor& x, ir::Attributes attrs) {
  return run_op("QLinearAveragePool",
                {x, Tensor::scalar(0.5f), Tensor::scalar<uint8_t>(0), Tensor::scalar(1.0f), Tensor::scalar<uint8_t>(0)},
                std::move(attrs), 1, 1, "com.microsoft");
}

TEST(QuantizeAttributeSizes, QLinearAveragePoolGeometryOverflowIsRefused) {
  const Tensor x = tv<uint8_t>({1, 1, 1, 1}, {4});
  const int64_t big = int64_t{1} << 32;
  // kernel 2^32 x 2^32 fits the padded input, but its window size 2^64 wrapped
  // to 0 and the grain 16384 / 0 was a SIGFPE.
  auto window = average_pool(x, {{"kernel_shape", attr_ints({big, big})}, {"pads", attr_ints({big, big, 0, 0})}});
  EXPECT_TRUE(refused(window)) << window.status().to_string();
  auto pads = average_pool(x, {{"kernel_shape", attr_ints({1, 1})}, {"pads", attr_ints({kMax, 0, kMax, 0})}});
  EXPECT_TRUE(refused(pads)) << pads.status().to_string();
  // SAME padding for a kernel of INT64_MAX: pads near 2^62, where window ends would wrap.
  auto huge = average_pool(x, {{"kernel_shape", attr_ints({kMax, 1})}, {"auto_pad", attr_string("SAME_UPPER")}});
  EXPECT_TRUE(refused(huge)) << huge.status().to_string();
  // A huge stride alone is one window: the average of a 2 x 2 window of 0.5 * 4 is 2.
  auto same = average_pool(tv<uint8_t>({1, 1, 3, 3}, std::vector<uint8_t>(9, 4)),
                           {{"kernel_shape", attr_ints({2, 2})}, {"strides", attr_ints({kMax, kMax})},
                            {"auto_pad", attr_string("SAME_UPPER")}});
  ASSERT_TRUE(same.ok()) << same.status().to_string();
  EXPECT_EQ((*same)[0].shape(), (Shape{1, 1, 1, 1}));
  EXPECT_EQ((*same)[0].data<uint8_t>()[0], 2);
  auto ceil = average_pool(x, {{"kernel_shape", attr_ints({1, 1})}, {"strides", attr_ints({kMax, kMax})},
                               {"ceil_mode", attr_int(1)}});
  ASSERT_TRUE(ceil.ok()) << ceil.status().to_string();
  EXPECT_EQ((*ceil)[0].shape(), (Shape{1, 1, 1, 1}));
}

Result<std::vector<Tensor>> concat_twice(const Tensor& x) {
  const Tensor scale = Tensor::scalar(1.0f), zero = Tensor::scalar<uint8_t>(0);
  return run_op("QLinearConcat", {scale, zero, x, scale, zero, x, scale, zero}, {{"axis", attr_int(1)}}, 1, 1,
                "com.microsoft");
}

TEST(QuantizeAttributeSizes, QLinearConcatOfEmptyInputsCannotWrapTheAxis) {
  auto r = concat_twice(Tensor::allocate(DType::kUInt8, {0, int64_t{1} << 62}).value());
  EXPECT_TRUE(refused(r)) << r.status().to_string();
  // Two such halves that fit: an empty [0, 2^62] result.
  auto ok = concat_twice(Tensor::allocate(DType::kUInt8, {0, int64_t{1} << 61}).value());
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_EQ((*ok)[0].shape(), (Shape{0, int64_t{1} << 62}));
}

}  // namespace
}  // namespace dlrt::cpu
