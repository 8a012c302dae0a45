// Quantization kernels against values worked out by hand / with numpy.
#include <gtest/gtest.h>

#include <random>

#include "kernel_test_util.h"

namespace dlrt::cpu {
namespace {

using testing::attr_int;
using testing::attr_ints;
using testing::run_op;

template <typename T>
std::vector<T> values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.size());
}
template <typename T>
Tensor tv(Shape s, std::vector<T> v) { return Tensor::from_vector<T>(std::move(s), v); }

TEST(QuantizeKernels, QuantizeLinearPerTensorRoundsHalfToEvenAndSaturates) {
  auto r = run_op("QuantizeLinear",
                  {tv<float>({7}, {0, 2, 3, 5, 1000, -254, -1000}), Tensor::scalar(2.0f), Tensor::scalar<uint8_t>(128)},
                  {}, 1, 10);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(values<uint8_t>((*r)[0]), (std::vector<uint8_t>{128, 129, 130, 130, 255, 1, 0}));
  // No zero point: uint8 output with zero point 0.
  r = run_op("QuantizeLinear", {tv<float>({3}, {-1, 0.5f, 1.5f}), Tensor::scalar(1.0f)}, {}, 1, 13);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].dtype(), DType::kUInt8);
  EXPECT_EQ(values<uint8_t>((*r)[0]), (std::vector<uint8_t>{0, 0, 2}));
}

TEST(QuantizeKernels, QuantizeLinearPerAxisInt8) {
  auto r = run_op("QuantizeLinear",
                  {tv<float>({1, 2, 2}, {1.5f, -2.5f, 1.0f, -70}), tv<float>({2}, {1, 0.5f}),
                   tv<int8_t>({2}, {0, -1})},
                  {{"axis", attr_int(1)}}, 1, 13);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(values<int8_t>((*r)[0]), (std::vector<int8_t>{2, -2, 1, -128}));
  // Scale length must match the axis.
  r = run_op("QuantizeLinear", {tv<float>({1, 2, 2}, {1, 2, 3, 4}), tv<float>({3}, {1, 1, 1})}, {{"axis", attr_int(1)}},
             1, 13);
  EXPECT_FALSE(r.ok());
}

TEST(QuantizeKernels, QuantizeLinearBlocked) {
  // Opset 21 block_size 2 along axis 1: scales [1, 2] for each row of 4.
  auto r = run_op("QuantizeLinear",
                  {tv<float>({1, 4}, {1, 2, 4, 6}), tv<float>({1, 2}, {1, 2}), tv<uint8_t>({1, 2}, {0, 10})},
                  {{"axis", attr_int(1)}, {"block_size", attr_int(2)}}, 1, 21);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(values<uint8_t>((*r)[0]), (std::vector<uint8_t>{1, 2, 12, 13}));
}

TEST(QuantizeKernels, DequantizeLinear) {
  auto r = run_op("DequantizeLinear",
                  {tv<uint8_t>({2, 2}, {0, 255, 10, 20}), tv<float>({2}, {2, 0.5f}), tv<uint8_t>({2}, {1, 10})},
                  {{"axis", attr_int(0)}}, 1, 13);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  testing::expect_near((*r)[0], {-2, 508, 0, 5});
  r = run_op("DequantizeLinear", {tv<int32_t>({3}, {-300, 0, 7}), Tensor::scalar(0.5f)}, {}, 1, 10);
  ASSERT_TRUE(r.ok());
  testing::expect_near((*r)[0], {-150, 0, 3.5f});
  // Zero point of another dtype.
  r = run_op("DequantizeLinear", {tv<uint8_t>({1}, {1}), Tensor::scalar(1.0f), Tensor::scalar<int8_t>(0)}, {}, 1, 13);
  EXPECT_FALSE(r.ok());
}

TEST(QuantizeKernels, DynamicQuantizeLinear) {
  auto r = run_op("DynamicQuantizeLinear", {tv<float>({6}, {0, 2, -3, -2.5f, 1.34f, 0.5f})}, {}, 3, 11);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(values<uint8_t>((*r)[0]), (std::vector<uint8_t>{153, 255, 0, 26, 221, 179}));
  EXPECT_FLOAT_EQ((*r)[1].data<float>()[0], 0.019607844f);
  EXPECT_EQ((*r)[2].data<uint8_t>()[0], 153);
  // All zeros: a finite scale, zero point 0.
  r = run_op("DynamicQuantizeLinear", {tv<float>({2}, {0, 0})}, {}, 3, 11);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(values<uint8_t>((*r)[0]), (std::vector<uint8_t>{0, 0}));
  EXPECT_EQ((*r)[2].data<uint8_t>()[0], 0);
}

TEST(QuantizeKernels, MatMulIntegerZeroPointsAndBroadcast) {
  auto r = run_op("MatMulInteger",
                  {tv<uint8_t>({2, 3}, {1, 2, 3, 4, 5, 6}), tv<int8_t>({3, 2}, {1, -1, 2, 0, -3, 4}),
                   tv<uint8_t>({2}, {1, 2}), tv<int8_t>({2}, {0, 1})},
                  {}, 1, 10);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(values<int32_t>((*r)[0]), (std::vector<int32_t>{-4, 5, -4, 5}));
  r = run_op("MatMulInteger",
             {tv<uint8_t>({2, 2, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}), tv<int8_t>({3, 2}, {1, -1, 2, 0, -3, 4}),
              Tensor::scalar<uint8_t>(3)},
             {}, 1, 10);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(values<int32_t>((*r)[0]), (std::vector<int32_t>{-4, 2, -4, 11, -4, 20, -4, 29}));
  r = run_op("MatMulInteger", {tv<uint8_t>({2, 3}, {1, 2, 3, 4, 5, 6}), tv<uint8_t>({2, 2}, {1, 2, 3, 4})}, {}, 1, 10);
  EXPECT_FALSE(r.ok());
}

TEST(QuantizeKernels, MatMulIntegerLargeMatchesNaive) {
  const int64_t M = 70, K = 300, N = 90;
  std::mt19937 rng(7);
  std::vector<uint8_t> a(M * K);
  std::vector<int8_t> b(K * N);
  for (auto& v : a) v = static_cast<uint8_t>(rng() % 256);
  for (auto& v : b) v = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
  auto r = run_op("MatMulInteger", {tv<uint8_t>({M, K}, a), tv<int8_t>({K, N}, b), Tensor::scalar<uint8_t>(100),
                                    Tensor::scalar<int8_t>(-3)},
                  {}, 1, 10);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      int32_t want = 0;
      for (int64_t k = 0; k < K; ++k) want += (a[i * K + k] - 100) * (b[k * N + j] + 3);
      ASSERT_EQ((*r)[0].data<int32_t>()[i * N + j], want) << i << "," << j;
    }
}

TEST(QuantizeKernels, ConvIntegerPaddingAndPerChannelZeroPoint) {
  std::vector<uint8_t> x(9);
  for (int i = 0; i < 9; ++i) x[i] = static_cast<uint8_t>(i + 1);
  auto r = run_op("ConvInteger",
                  {tv<uint8_t>({1, 1, 3, 3}, x), tv<uint8_t>({1, 1, 2, 2}, {1, 2, 3, 4}), Tensor::scalar<uint8_t>(1),
                   Tensor::scalar<uint8_t>(1)},
                  {{"pads", attr_ints({1, 1, 1, 1})}}, 1, 10);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{1, 1, 4, 4}));
  EXPECT_EQ(values<int32_t>((*r)[0]), (std::vector<int32_t>{0, 3, 8, 4, 9, 19, 25, 10, 21, 37, 43, 16, 6, 7, 8, 0}));

  std::vector<uint8_t> x16(16);
  for (int i = 0; i < 16; ++i) x16[i] = static_cast<uint8_t>(i);
  r = run_op("ConvInteger",
             {tv<uint8_t>({1, 1, 4, 4}, x16), tv<uint8_t>({2, 1, 2, 2}, {1, 0, 0, 1, 2, 2, 2, 2}), Tensor(),
              tv<uint8_t>({2}, {1, 2})},
             {{"strides", attr_ints({2, 2})}}, 1, 10);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{1, 2, 2, 2}));
  EXPECT_EQ(values<int32_t>((*r)[0]), (std::vector<int32_t>{-5, -9, -21, -25, 0, 0, 0, 0}));
  // Channel mismatch.
  r = run_op("ConvInteger", {tv<uint8_t>({1, 1, 4, 4}, x16), tv<uint8_t>({1, 2, 2, 2}, std::vector<uint8_t>(8, 1))}, {},
             1, 10);
  EXPECT_FALSE(r.ok());
}

// Real-model sizes (a grouped strided padded 3x3 and a pointwise conv, int8
// and uint8 inputs, nonzero zero points) against a direct int64 convolution.
TEST(QuantizeKernels, ConvIntegerLargeMatchesNaive) {
  struct Case {
    bool x_signed;
    int64_t N, C, H, W, M, group, k, stride, pad;
  };
  const Case cases[] = {{false, 2, 16, 15, 13, 32, 2, 3, 2, 1}, {true, 1, 24, 9, 9, 40, 1, 1, 1, 0},
                        {true, 1, 8, 10, 10, 8, 8, 3, 1, 1}, {false, 2, 6, 11, 10, 6, 6, 3, 2, 1},
                        {false, 1, 4, 9, 12, 4, 4, 5, 1, 2}};  // (the last three depthwise)
  std::mt19937 rng(9);
  for (const Case& c : cases) {
    SCOPED_TRACE("C " + std::to_string(c.C) + " k " + std::to_string(c.k) + " group " + std::to_string(c.group));
    const int64_t Cg = c.C / c.group, Mg = c.M / c.group;
    const int64_t OH = (c.H + 2 * c.pad - c.k) / c.stride + 1, OW = (c.W + 2 * c.pad - c.k) / c.stride + 1;
    std::vector<uint8_t> xr(static_cast<size_t>(c.N * c.C * c.H * c.W));
    std::vector<int8_t> w(static_cast<size_t>(c.M * Cg * c.k * c.k));
    for (auto& v : xr) v = static_cast<uint8_t>(rng());
    for (auto& v : w) v = static_cast<int8_t>(rng());
    std::vector<int8_t> wzp(static_cast<size_t>(c.M));
    for (auto& v : wzp) v = static_cast<int8_t>(static_cast<int>(rng() % 21) - 10);
    const int32_t xz = c.x_signed ? -5 : 131;
    auto xval = [&](size_t i) { return c.x_signed ? int64_t{static_cast<int8_t>(xr[i])} : int64_t{xr[i]}; };
    Tensor x = c.x_signed ? tv<int8_t>({c.N, c.C, c.H, c.W}, std::vector<int8_t>(xr.begin(), xr.end()))
                          : tv<uint8_t>({c.N, c.C, c.H, c.W}, xr);
    Tensor xzt = c.x_signed ? Tensor::scalar<int8_t>(static_cast<int8_t>(xz)) : Tensor::scalar<uint8_t>(static_cast<uint8_t>(xz));
    auto r = run_op("ConvInteger", {x, tv<int8_t>({c.M, Cg, c.k, c.k}, w), xzt, tv<int8_t>({c.M}, wzp)},
                    {{"pads", attr_ints({c.pad, c.pad, c.pad, c.pad})},
                     {"strides", attr_ints({c.stride, c.stride})},
                     {"group", attr_int(c.group)}},
                    1, 10);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    ASSERT_EQ((*r)[0].shape(), (Shape{c.N, c.M, OH, OW}));
    const int32_t* got = (*r)[0].data<int32_t>();
    for (int64_t n = 0; n < c.N; ++n)
      for (int64_t m = 0; m < c.M; ++m)
        for (int64_t oh = 0; oh < OH; ++oh)
          for (int64_t ow = 0; ow < OW; ++ow) {
            int64_t want = 0;
            const int64_t grp = m / Mg;
            for (int64_t ci = 0; ci < Cg; ++ci)
              for (int64_t kh = 0; kh < c.k; ++kh)
                for (int64_t kw = 0; kw < c.k; ++kw) {
                  const int64_t ih = oh * c.stride - c.pad + kh, iw = ow * c.stride - c.pad + kw;
                  if (ih < 0 || ih >= c.H || iw < 0 || iw >= c.W) continue;  // padding is x's zero point
                  const size_t xi = static_cast<size_t>(((n * c.C + grp * Cg + ci) * c.H + ih) * c.W + iw);
                  want += (xval(xi) - xz) * (w[static_cast<size_t>(((m * Cg + ci) * c.k + kh) * c.k + kw)] - wzp[m]);
                }
            ASSERT_EQ(got[((n * c.M + m) * OH + oh) * OW + ow], want) << n << "," << m << "," << oh << "," << ow;
          }
  }
}

TEST(QuantizeKernels, QLinearMatMul) {
  auto r = run_op("QLinearMatMul",
                  {tv<uint8_t>({2, 4}, {208, 236, 0, 238, 3, 214, 255, 29}), Tensor::scalar(0.0066f),
                   Tensor::scalar<uint8_t>(113),
                   tv<uint8_t>({4, 3}, {152, 51, 244, 60, 26, 255, 0, 127, 246, 127, 254, 247}),
                   Tensor::scalar(0.00705f), Tensor::scalar<uint8_t>(114), Tensor::scalar(0.0107f),
                   Tensor::scalar<uint8_t>(118)},
                  {}, 1, 10);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(values<uint8_t>((*r)[0]), (std::vector<uint8_t>{168, 115, 255, 1, 66, 151}));
}

TEST(QuantizeKernels, QLinearConvPerChannelWithBias) {
  auto r = run_op("QLinearConv",
                  {tv<uint8_t>({1, 1, 3, 3}, {10, 20, 30, 40, 50, 60, 70, 80, 90}), Tensor::scalar(0.5f),
                   Tensor::scalar<uint8_t>(10), tv<int8_t>({2, 1, 2, 2}, {1, -1, 2, 0, 3, 1, -2, 1}),
                   tv<float>({2}, {0.25f, 0.5f}), tv<int8_t>({2}, {0, 0}), Tensor::scalar(2.0f),
                   Tensor::scalar<int8_t>(5), tv<int32_t>({2}, {100, -50})},
                  {}, 1, 10);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].dtype(), DType::kInt8);
  EXPECT_EQ(values<int8_t>((*r)[0]), (std::vector<int8_t>{14, 16, 18, 19, -3, 1, 9, 13}));
}

}  // namespace
}  // namespace dlrt::cpu
