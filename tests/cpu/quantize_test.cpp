// Quantization kernels against values worked out by hand / with numpy.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <random>

#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/simd/width.h"
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
                        {false, 1, 4, 9, 12, 4, 4, 5, 1, 2},   // (the last three depthwise)
                        {false, 1, 16, 9, 11, 24, 1, 3, 1, 1}, {true, 2, 8, 7, 6, 16, 2, 3, 1, 1},
                        {false, 1, 8, 8, 9, 8, 1, 5, 1, 2},    {false, 1, 8, 10, 12, 8, 1, 3, 1, 0},
                        {true, 1, 4, 1, 1, 8, 1, 3, 1, 1}};  // (3 x 3 and 5 x 5 "same", unpadded, 1 x 1 input)
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

// The direct depthwise path (depthwise_int8.cpp) over strides, dilations,
// uneven padding and kernel shapes, int8 and uint8 on both sides, on the
// portable loops and at each vector width this CPU runs (the tap sums of
// depthwise_int8_simd.h, its partial last vectors included): exact int32 sums.
TEST(QuantizeKernels, DepthwiseConvIntegerEveryGeometryAndIsa) {
  struct Case {
    int64_t H, W, KH, KW, sh, sw, dh, dw, pt, pl, pb, pr;
    bool x_signed, w_signed;
  };
  const Case cases[] = {
      {14, 14, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, true},  {15, 17, 3, 3, 2, 2, 1, 1, 0, 1, 1, 1, false, true},
      {9, 40, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, true, true},    {12, 11, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, false, false},
      {10, 13, 1, 7, 1, 1, 1, 1, 0, 3, 0, 3, true, false},  {16, 16, 3, 5, 3, 2, 1, 1, 1, 0, 2, 3, false, true},
      {7, 50, 2, 3, 2, 3, 2, 1, 0, 0, 0, 0, false, true},   {1, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, true},
      {33, 70, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false, true},
  };
  const int64_t N = 2, C = 3;
  std::mt19937 rng(21);
  // The ISA level that selects each width (neon: 128 bits, on x86 too).
  std::vector<std::pair<CpuIsa, std::optional<SimdWidth>>> isas{{CpuIsa::kGeneric, std::nullopt}};
  for (auto [isa, w] : {std::pair{CpuIsa::kNeon, SimdWidth::k128}, std::pair{CpuIsa::kAvx2, SimdWidth::k256},
                        std::pair{CpuIsa::kAvx512, SimdWidth::k512}}) {
    if (simd_width_runs(w) && detected_cpu_isa() >= CpuIsa::kNeon)
      isas.emplace_back(isa, w);
    else
      std::printf("skipped: this CPU (or build) cannot run the %s-bit instantiation\n", simd_width_name(w));
  }
  for (const Case& c : cases) {
    const int64_t OH = (c.H + c.pt + c.pb - ((c.KH - 1) * c.dh + 1)) / c.sh + 1;
    const int64_t OW = (c.W + c.pl + c.pr - ((c.KW - 1) * c.dw + 1)) / c.sw + 1;
    std::vector<uint8_t> xr(static_cast<size_t>(N * C * c.H * c.W)), wr(static_cast<size_t>(C * c.KH * c.KW));
    for (auto& v : xr) v = static_cast<uint8_t>(rng());
    for (auto& v : wr) v = static_cast<uint8_t>(rng());
    const int32_t xz = c.x_signed ? -7 : 140;
    const std::vector<int32_t> wz = c.w_signed ? std::vector<int32_t>{0, -3, 5} : std::vector<int32_t>{128, 120, 0};
    auto xval = [&](size_t i) { return c.x_signed ? int64_t{static_cast<int8_t>(xr[i])} : int64_t{xr[i]}; };
    auto wval = [&](size_t i) { return c.w_signed ? int64_t{static_cast<int8_t>(wr[i])} : int64_t{wr[i]}; };
    Tensor x = c.x_signed ? tv<int8_t>({N, C, c.H, c.W}, std::vector<int8_t>(xr.begin(), xr.end()))
                          : tv<uint8_t>({N, C, c.H, c.W}, xr);
    Tensor w = c.w_signed ? tv<int8_t>({C, 1, c.KH, c.KW}, std::vector<int8_t>(wr.begin(), wr.end()))
                          : tv<uint8_t>({C, 1, c.KH, c.KW}, wr);
    Tensor xzt = c.x_signed ? Tensor::scalar<int8_t>(static_cast<int8_t>(xz)) : Tensor::scalar<uint8_t>(static_cast<uint8_t>(xz));
    Tensor wzt = c.w_signed ? tv<int8_t>({C}, {0, -3, 5}) : tv<uint8_t>({C}, {128, 120, 0});
    for (const auto& [isa, width] : isas) {
      const uint64_t calls0 = width ? simd_calls("depthwise_int8_sum_taps", *width) : 0;
      SCOPED_TRACE(std::string(cpu_isa_name(isa)) + " H " + std::to_string(c.H) + " W " + std::to_string(c.W) +
                   " k " + std::to_string(c.KH) + "x" + std::to_string(c.KW) + " s " + std::to_string(c.sh) + "," +
                   std::to_string(c.sw) + " d " + std::to_string(c.dh) + "," + std::to_string(c.dw));
      ScopedCpuIsa cap(isa);
      auto r = run_op("ConvInteger", {x, w, xzt, wzt},
                      {{"pads", attr_ints({c.pt, c.pl, c.pb, c.pr})},
                       {"strides", attr_ints({c.sh, c.sw})},
                       {"dilations", attr_ints({c.dh, c.dw})},
                       {"group", attr_int(C)}},
                      1, 10);
      ASSERT_TRUE(r.ok()) << r.status().to_string();
      ASSERT_EQ((*r)[0].shape(), (Shape{N, C, OH, OW}));
      const int32_t* got = (*r)[0].data<int32_t>();
      for (int64_t n = 0; n < N; ++n)
        for (int64_t m = 0; m < C; ++m)
          for (int64_t oh = 0; oh < OH; ++oh)
            for (int64_t ow = 0; ow < OW; ++ow) {
              int64_t want = 0;
              for (int64_t kh = 0; kh < c.KH; ++kh)
                for (int64_t kw = 0; kw < c.KW; ++kw) {
                  const int64_t ih = oh * c.sh - c.pt + kh * c.dh, iw = ow * c.sw - c.pl + kw * c.dw;
                  if (ih < 0 || ih >= c.H || iw < 0 || iw >= c.W) continue;
                  want += (xval(static_cast<size_t>(((n * C + m) * c.H + ih) * c.W + iw)) - xz) *
                          (wval(static_cast<size_t>((m * c.KH + kh) * c.KW + kw)) - wz[static_cast<size_t>(m)]);
                }
              ASSERT_EQ(got[((n * C + m) * OH + oh) * OW + ow], want) << n << "," << m << "," << oh << "," << ow;
            }
      if (width) {
        EXPECT_GT(simd_calls("depthwise_int8_sum_taps", *width), calls0) << "the vector sums did not run";
      }
    }
  }
}

// QLinearConv requantizes inside the GEMM and the depthwise loops: its output
// must equal ConvInteger's sums requantized by the formula (float(sum + bias)
// * (x_scale * w_scale / y_scale), clamped, rounded half to even, + y_zp), on
// every conv path (pointwise, im2col, grouped, depthwise by planes and by
// channel blocks, 1-D) and ISA.
TEST(QuantizeKernels, QLinearConvEqualsRequantizedConvInteger) {
  struct Case {
    int64_t C, M, group, H, W, K, stride, pad, dilation;
    bool one_d, x_signed, y_signed;
  };
  const Case cases[] = {
      {16, 40, 1, 12, 13, 1, 1, 0, 1, false, false, false}, {8, 24, 1, 11, 9, 3, 2, 1, 1, false, true, true},
      {12, 12, 12, 20, 21, 3, 2, 1, 1, false, false, false}, {12, 12, 12, 7, 7, 3, 1, 1, 1, false, false, true},
      {8, 16, 4, 9, 9, 3, 1, 1, 1, false, false, false},    {6, 10, 1, 1, 30, 3, 1, 1, 1, true, false, false},
      // depthwise across two channel blocks (64 + 6), 5 x 5, dilated, signed x
      {70, 70, 70, 9, 9, 3, 1, 1, 1, false, true, false},   {20, 20, 20, 13, 11, 5, 2, 2, 1, false, false, true},
      {33, 33, 33, 10, 12, 3, 1, 2, 2, false, true, true},  {16, 16, 16, 120, 130, 3, 1, 1, 1, false, false, false}};
  std::mt19937 rng(33);
  std::vector<CpuIsa> isas{CpuIsa::kGeneric};
  if (detected_cpu_isa() != CpuIsa::kGeneric) isas.push_back(detected_cpu_isa());
  for (const Case& c : cases) {
    const int64_t Cg = c.C / c.group;
    const Shape xs = c.one_d ? Shape{1, c.C, c.W} : Shape{1, c.C, c.H, c.W};
    const Shape ws = c.one_d ? Shape{c.M, Cg, c.K} : Shape{c.M, Cg, c.K, c.K};
    std::vector<uint8_t> xv(static_cast<size_t>(element_count(xs)));
    std::vector<int8_t> wv(static_cast<size_t>(element_count(ws)));
    std::vector<float> wscale(static_cast<size_t>(c.M));
    std::vector<int32_t> bias(static_cast<size_t>(c.M));
    for (auto& v : xv) v = static_cast<uint8_t>(rng() % 256);
    for (auto& v : wv) v = static_cast<int8_t>(rng());
    for (auto& v : wscale) v = 0.001f + 0.0001f * static_cast<float>(rng() % 50);
    for (auto& v : bias) v = static_cast<int32_t>(rng() % 20001) - 10000;
    const float x_scale = 0.02f, y_scale = c.y_signed ? 0.9f : 0.6f;
    const int32_t xz = c.x_signed ? -9 : 119;
    const int32_t yz = c.y_signed ? -4 : 128;
    ir::Attributes attrs{
        {"pads",
         attr_ints(c.one_d ? std::vector<int64_t>{c.pad, c.pad} : std::vector<int64_t>{c.pad, c.pad, c.pad, c.pad})},
        {"strides", attr_ints(c.one_d ? std::vector<int64_t>{c.stride} : std::vector<int64_t>{c.stride, c.stride})},
        {"dilations",
         attr_ints(c.one_d ? std::vector<int64_t>{c.dilation} : std::vector<int64_t>{c.dilation, c.dilation})},
        {"group", attr_int(c.group)}};
    Tensor x = c.x_signed ? tv<int8_t>(xs, std::vector<int8_t>(xv.begin(), xv.end())) : tv<uint8_t>(xs, xv);
    Tensor w = tv<int8_t>(ws, wv);
    Tensor x_zp = c.x_signed ? Tensor::scalar<int8_t>(static_cast<int8_t>(xz))
                             : Tensor::scalar<uint8_t>(static_cast<uint8_t>(xz));
    Tensor y_zp = c.y_signed ? Tensor::scalar<int8_t>(static_cast<int8_t>(yz))
                             : Tensor::scalar<uint8_t>(static_cast<uint8_t>(yz));
    // Weight zero points all 0 (symmetric, as ONNX Runtime's tools make them), and differing per channel.
    std::vector<int8_t> w_zp_varying(static_cast<size_t>(c.M));
    for (size_t m = 0; m < w_zp_varying.size(); ++m) w_zp_varying[m] = static_cast<int8_t>(static_cast<int>(m % 5) - 2);
    for (CpuIsa isa : isas)
      for (bool varying : {false, true}) {
        SCOPED_TRACE(std::string(cpu_isa_name(isa)) + " C " + std::to_string(c.C) + " M " + std::to_string(c.M) +
                     " group " + std::to_string(c.group) + " k " + std::to_string(c.K) +
                     (varying ? " varying w_zp" : ""));
        ScopedCpuIsa cap(isa);
        const Tensor w_zp =
            tv<int8_t>({c.M}, varying ? w_zp_varying : std::vector<int8_t>(static_cast<size_t>(c.M), 0));
        auto sums = run_op("ConvInteger", {x, w, x_zp, w_zp}, attrs, 1, 10);
        ASSERT_TRUE(sums.ok()) << sums.status().to_string();
        auto q = run_op("QLinearConv",
                        {x, Tensor::scalar(x_scale), x_zp, w, tv<float>({c.M}, wscale), w_zp, Tensor::scalar(y_scale),
                         y_zp, tv<int32_t>({c.M}, bias)},
                        attrs, 1, 10);
        ASSERT_TRUE(q.ok()) << q.status().to_string();
        const Tensor& acc = (*sums)[0];
        ASSERT_EQ((*q)[0].shape(), acc.shape());
        const int64_t plane = acc.size() / c.M;
        const float lo = c.y_signed ? -128.0f - static_cast<float>(yz) : -static_cast<float>(yz);
        const float hi = c.y_signed ? 127.0f - static_cast<float>(yz) : 255.0f - static_cast<float>(yz);
        for (int64_t i = 0; i < acc.size(); ++i) {
          const int64_t m = i / plane;
          const float mult = x_scale * wscale[static_cast<size_t>(m)] / y_scale;
          float v = static_cast<float>(acc.data<int32_t>()[i] + bias[static_cast<size_t>(m)]) * mult;
          v = std::min(std::max(v, lo), hi);
          const int32_t want = static_cast<int32_t>(std::nearbyint(v)) + yz;
          const int32_t got = c.y_signed ? int32_t{(*q)[0].data<int8_t>()[i]} : int32_t{(*q)[0].data<uint8_t>()[i]};
          ASSERT_EQ(got, want) << "element " << i;
        }
      }
  }
}

TEST(QuantizeKernels, QLinearMatMul) {
  auto r = run_op(
      "QLinearMatMul",
      {tv<uint8_t>({2, 4}, {208, 236, 0, 238, 3, 214, 255, 29}), Tensor::scalar(0.0066f), Tensor::scalar<uint8_t>(113),
       tv<uint8_t>({4, 3}, {152, 51, 244, 60, 26, 255, 0, 127, 246, 127, 254, 247}), Tensor::scalar(0.00705f),
       Tensor::scalar<uint8_t>(114), Tensor::scalar(0.0107f), Tensor::scalar<uint8_t>(118)},
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

// ---------------------------------------------------------------------------
// com.microsoft QOperator ops (quantize_contrib.cpp). Expected values follow
// ONNX Runtime's CPU kernels: see the formulas at the top of that file.
namespace dlrt::cpu {
namespace {

using testing::attr_float;

constexpr const char* kMs = "com.microsoft";

Result<std::vector<Tensor>> run_ms(const std::string& op, std::vector<Tensor> inputs, ir::Attributes attrs = {}) {
  return run_op(op, std::move(inputs), std::move(attrs), 1, 1, kMs);
}

// Round half to even of a float as cvtps2dq does, then saturate to Q.
template <typename Q>
Q ref_sat_rne(float v) {
  double r = std::nearbyint(static_cast<double>(v));
  if (!(r >= -2147483648.0 && r < 2147483648.0)) r = -2147483648.0;
  return static_cast<Q>(std::clamp<double>(r, std::numeric_limits<Q>::lowest(), std::numeric_limits<Q>::max()));
}

// Right-aligned broadcast index of output element `i` into an input of shape `in`.
int64_t bcast_index(const Shape& out, const Shape& in, int64_t i) {
  int64_t idx = 0, stride = 1;
  for (size_t d = out.size(); d-- > 0;) {
    const int64_t coord = i % out[d];
    i /= out[d];
    const size_t k = d + in.size() - out.size();
    if (d + in.size() < out.size()) continue;
    if (in[k] != 1) idx += coord * stride;
    stride *= in[k];
  }
  return idx;
}

TEST(QuantizeContribKernels, QLinearAddUInt8BroadcastTiesToEven) {
  // ra = 0.5, rb = 0.25: exact in float, so c = rne(0.5 (a - 10) + 0.25 (b - 20) + 5).
  auto r = run_ms("QLinearAdd", {tv<uint8_t>({2, 3}, {11, 13, 10, 255, 0, 200}), Tensor::scalar(0.5f),
                                 Tensor::scalar<uint8_t>(10), tv<uint8_t>({3}, {20, 22, 26}), Tensor::scalar(0.25f),
                                 Tensor::scalar<uint8_t>(20), Tensor::scalar(1.0f), Tensor::scalar<uint8_t>(5)});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{2, 3}));
  // 5.5 -> 6, 7, 6.5 -> 6, 127.5 -> 128, 0.5 -> 0, 101.5 -> 102
  EXPECT_EQ(values<uint8_t>((*r)[0]), (std::vector<uint8_t>{6, 7, 6, 128, 0, 102}));
}

TEST(QuantizeContribKernels, QLinearAddInt8ScalarAndSaturation) {
  auto r = run_ms("QLinearAdd", {tv<int8_t>({4}, {-3, -2, 127, -128}), Tensor::scalar(0.5f), Tensor::scalar<int8_t>(-3),
                                 tv<int8_t>({1}, {8}), Tensor::scalar(0.125f), Tensor::scalar<int8_t>(4),
                                 Tensor::scalar(0.5f), Tensor::scalar<int8_t>(-7)});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  // (0.5 (a + 3) + 0.125 * 4) / 0.5 - 7: -6, -5, 124, -131 -> -128
  EXPECT_EQ(values<int8_t>((*r)[0]), (std::vector<int8_t>{-6, -5, 124, -128}));
  // Saturation at the top: a large ratio.
  auto s = run_ms("QLinearAdd", {tv<int8_t>({3}, {100, 0, -100}), Tensor::scalar(1.0f), Tensor::scalar<int8_t>(0),
                                 tv<int8_t>({3}, {100, 0, -100}), Tensor::scalar(1.0f), Tensor::scalar<int8_t>(0),
                                 Tensor::scalar(0.5f), Tensor::scalar<int8_t>(1)});
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(values<int8_t>((*s)[0]), (std::vector<int8_t>{127, 1, -128}));
}

// ONNX Runtime's QLinearAdd, written from its definition (MLAS AVX2 kernel):
// c = rne(fma(x, rx, fma(y, ry, zc - fma(rx, zx, ry * zy)))) where x is the
// operand that runs along the innermost dimension: B when A is broadcast there.
template <typename Q>
std::vector<Q> ref_qlinear_add(const Tensor& a, float sa, int32_t za, const Tensor& b, float sb, int32_t zb, float sc,
                               int32_t zc, const Shape& out) {
  const float ra = sa / sc, rb = sb / sc;
  int inner = -1;
  for (size_t d = out.size(); d-- > 0;)
    if (out[d] != 1) {
      inner = static_cast<int>(d);
      break;
    }
  auto dim_of = [&](const Shape& s, int d) {
    const int k = d + static_cast<int>(s.size()) - static_cast<int>(out.size());
    return k < 0 ? int64_t{1} : s[static_cast<size_t>(k)];
  };
  const bool a_first_is_b = a.size() == 1 || (inner >= 0 && dim_of(a.shape(), inner) == 1);
  std::vector<Q> res(static_cast<size_t>(element_count(out)));
  for (int64_t i = 0; i < static_cast<int64_t>(res.size()); ++i) {
    const float av = static_cast<float>(a.data<Q>()[bcast_index(out, a.shape(), i)]);
    const float bv = static_cast<float>(b.data<Q>()[bcast_index(out, b.shape(), i)]);
    float v;
    if (a_first_is_b) {
      const float fixed = static_cast<float>(zc) - std::fma(rb, static_cast<float>(zb), ra * static_cast<float>(za));
      v = std::fma(bv, rb, std::fma(av, ra, fixed));
    } else {
      const float fixed = static_cast<float>(zc) - std::fma(ra, static_cast<float>(za), rb * static_cast<float>(zb));
      v = std::fma(av, ra, std::fma(bv, rb, fixed));
    }
    res[static_cast<size_t>(i)] = ref_sat_rne<Q>(v);
  }
  return res;
}

template <typename Q>
std::vector<Q> ref_qlinear_mul(const Tensor& a, float sa, int32_t za, const Tensor& b, float sb, int32_t zb, float sc,
                               int32_t zc, const Shape& out) {
  const float ratio = sa * sb / sc;
  std::vector<Q> res(static_cast<size_t>(element_count(out)));
  for (int64_t i = 0; i < static_cast<int64_t>(res.size()); ++i) {
    const int32_t av = a.data<Q>()[bcast_index(out, a.shape(), i)];
    const int32_t bv = b.data<Q>()[bcast_index(out, b.shape(), i)];
    const float prod = static_cast<float>((av - za) * (bv - zb)) * ratio;
    res[static_cast<size_t>(i)] = ref_sat_rne<Q>(prod + static_cast<float>(zc));
  }
  return res;
}

template <typename Q>
Tensor random_q(Shape s, std::mt19937& rng) {
  std::uniform_int_distribution<int> d(std::numeric_limits<Q>::lowest(), std::numeric_limits<Q>::max());
  std::vector<Q> v(static_cast<size_t>(element_count(s)));
  for (auto& x : v) x = static_cast<Q>(d(rng));
  return Tensor::from_vector<Q>(std::move(s), v);
}

template <typename Q>
void check_random_binary(const std::string& op) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> scale(0.002f, 0.2f);
  std::uniform_int_distribution<int> zp(std::numeric_limits<Q>::lowest(), std::numeric_limits<Q>::max());
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{3, 70}, {3, 70}}, {{2, 5, 33}, {5, 1}}, {{2, 5, 1}, {1, 5, 40}}, {{1}, {50}}, {{37}, {1}},
      {{2, 8, 6, 6}, {2, 8, 1, 1}}, {{2, 8, 1, 1}, {2, 8, 6, 6}}, {{1, 1}, {1}}, {{4, 1, 3}, {4, 9, 3}}};
  for (int trial = 0; trial < 40; ++trial) {
    const auto& [sa_shape, sb_shape] = shapes[static_cast<size_t>(trial) % shapes.size()];
    const Tensor a = random_q<Q>(sa_shape, rng), b = random_q<Q>(sb_shape, rng);
    const float sa = scale(rng), sb = scale(rng), sc = scale(rng);
    const int32_t za = zp(rng), zb = zp(rng), zc = zp(rng);
    auto r = run_ms(op, {a, Tensor::scalar(sa), Tensor::scalar<Q>(static_cast<Q>(za)), b, Tensor::scalar(sb),
                         Tensor::scalar<Q>(static_cast<Q>(zb)), Tensor::scalar(sc), Tensor::scalar<Q>(static_cast<Q>(zc))});
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    const Shape out = (*r)[0].shape();
    const std::vector<Q> want = op == "QLinearAdd" ? ref_qlinear_add<Q>(a, sa, za, b, sb, zb, sc, zc, out)
                                                   : ref_qlinear_mul<Q>(a, sa, za, b, sb, zb, sc, zc, out);
    EXPECT_EQ(values<Q>((*r)[0]), want) << op << " trial " << trial << " shapes " << shape_to_string(sa_shape) << " "
                                        << shape_to_string(sb_shape);
  }
}

TEST(QuantizeContribKernels, QLinearAddMatchesReferenceUInt8) { check_random_binary<uint8_t>("QLinearAdd"); }
TEST(QuantizeContribKernels, QLinearAddMatchesReferenceInt8) { check_random_binary<int8_t>("QLinearAdd"); }
TEST(QuantizeContribKernels, QLinearMulMatchesReferenceUInt8) { check_random_binary<uint8_t>("QLinearMul"); }
TEST(QuantizeContribKernels, QLinearMulMatchesReferenceInt8) { check_random_binary<int8_t>("QLinearMul"); }

TEST(QuantizeContribKernels, QLinearBinaryVectorPathsMatchPortable) {
  std::mt19937 rng(11);
  for (const char* op : {"QLinearAdd", "QLinearMul"})
    for (const Shape& bs : {Shape{1000}, Shape{1}}) {
      const Tensor a = random_q<uint8_t>({1000}, rng), b = random_q<uint8_t>(bs, rng);
      std::vector<Tensor> in = {a, Tensor::scalar(0.0371f), Tensor::scalar<uint8_t>(131), b, Tensor::scalar(0.0123f),
                                Tensor::scalar<uint8_t>(7), Tensor::scalar(0.0419f), Tensor::scalar<uint8_t>(99)};
      auto fast = run_ms(op, in);
      ASSERT_TRUE(fast.ok());
      ScopedCpuIsa generic(CpuIsa::kGeneric);
      auto slow = run_ms(op, in);
      ASSERT_TRUE(slow.ok());
      EXPECT_EQ(values<uint8_t>((*fast)[0]), values<uint8_t>((*slow)[0])) << op << " " << shape_to_string(bs);
    }
}

TEST(QuantizeContribKernels, QLinearMulTiesAndSaturation) {
  // ratio = 0.5 * 0.5 / 0.5 = 0.5: c = rne(0.5 (a - 100)(b - 120) + 128).
  auto r = run_ms("QLinearMul", {tv<uint8_t>({2, 2}, {101, 103, 255, 0}), Tensor::scalar(0.5f), Tensor::scalar<uint8_t>(100),
                                 tv<uint8_t>({2, 1}, {121, 0}), Tensor::scalar(0.5f), Tensor::scalar<uint8_t>(120),
                                 Tensor::scalar(0.5f), Tensor::scalar<uint8_t>(128)});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  // 128.5 -> 128, 129.5 -> 130, -9300 -> 0, 6000 -> 255
  EXPECT_EQ(values<uint8_t>((*r)[0]), (std::vector<uint8_t>{128, 130, 0, 255}));
  // int8, A a scalar: ratio 0.25, c = rne(0.25 * 2 (b + 1) + 3).
  auto s = run_ms("QLinearMul", {Tensor::scalar<int8_t>(2), Tensor::scalar(0.5f), Tensor::scalar<int8_t>(0),
                                 tv<int8_t>({4}, {-1, 0, 1, 127}), Tensor::scalar(0.25f), Tensor::scalar<int8_t>(-1),
                                 Tensor::scalar(0.5f), Tensor::scalar<int8_t>(3)});
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  // 3, 3.5 -> 4, 4, 67
  EXPECT_EQ(values<int8_t>((*s)[0]), (std::vector<int8_t>{3, 4, 4, 67}));
}

TEST(QuantizeContribKernels, QLinearBinaryRejectsBadInputs) {
  auto r = run_ms("QLinearAdd", {tv<uint8_t>({2}, {1, 2}), tv<float>({2}, {0.1f, 0.2f}), Tensor::scalar<uint8_t>(0),
                                 tv<uint8_t>({2}, {1, 2}), Tensor::scalar(0.1f), Tensor::scalar<uint8_t>(0),
                                 Tensor::scalar(0.1f), Tensor::scalar<uint8_t>(0)});
  EXPECT_FALSE(r.ok());
  auto s = run_ms("QLinearMul", {tv<uint8_t>({2}, {1, 2}), Tensor::scalar(0.1f), Tensor::scalar<uint8_t>(0),
                                 tv<uint8_t>({3}, {1, 2, 3}), Tensor::scalar(0.1f), Tensor::scalar<uint8_t>(0),
                                 Tensor::scalar(0.1f), Tensor::scalar<uint8_t>(0)});
  EXPECT_FALSE(s.ok());
}

TEST(QuantizeContribKernels, QLinearSigmoidAgreesWithSigmoidAwayFromTies) {
  // Every input byte, uint8 and int8: the table must equal rne(sigmoid(x) / ys) + zy
  // wherever sigmoid(x) / ys is not within 1e-3 of a rounding tie (MLAS's
  // approximation is within about 1e-6 of the true sigmoid).
  for (int signed_case = 0; signed_case < 2; ++signed_case) {
    const float xs = 0.0625f, ys = 1.0f / 256.0f;
    const int32_t xz = signed_case ? -5 : 123, yz = signed_case ? -128 : 0;
    std::vector<uint8_t> bytes(256);
    for (int i = 0; i < 256; ++i) bytes[static_cast<size_t>(i)] = static_cast<uint8_t>(i);
    Tensor x = signed_case ? tv<int8_t>({256}, std::vector<int8_t>(bytes.begin(), bytes.end()))
                           : tv<uint8_t>({256}, bytes);
    Tensor xzt = signed_case ? Tensor::scalar<int8_t>(static_cast<int8_t>(xz)) : Tensor::scalar<uint8_t>(static_cast<uint8_t>(xz));
    Tensor yzt = signed_case ? Tensor::scalar<int8_t>(static_cast<int8_t>(yz)) : Tensor::scalar<uint8_t>(static_cast<uint8_t>(yz));
    auto r = run_ms("QLinearSigmoid", {x, Tensor::scalar(xs), xzt, Tensor::scalar(ys), yzt});
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    int checked = 0;
    for (int i = 0; i < 256; ++i) {
      const int32_t q = signed_case ? static_cast<int8_t>(i) : i;
      const double v = 1.0 / (1.0 + std::exp(-static_cast<double>(xs) * (q - xz))) / ys;
      if (std::abs(v - std::floor(v) - 0.5) < 1e-3) continue;
      const int32_t want = std::clamp<int32_t>(static_cast<int32_t>(std::nearbyint(v)) + yz, signed_case ? -128 : 0,
                                               signed_case ? 127 : 255);
      const int32_t got = signed_case ? (*r)[0].data<int8_t>()[i] : (*r)[0].data<uint8_t>()[i];
      EXPECT_EQ(got, want) << "byte " << i;
      ++checked;
    }
    EXPECT_GT(checked, 200);
    // sigmoid(0) = 0.5 exactly: 128 steps of 1/256 above the zero point,
    // which saturates for uint8 zero point 0 at 128 (in range) and int8 at 0.
    const int64_t zero_byte = static_cast<uint8_t>(xz);
    const int32_t got0 = signed_case ? (*r)[0].data<int8_t>()[zero_byte] : (*r)[0].data<uint8_t>()[zero_byte];
    EXPECT_EQ(got0, 128 + yz);
  }
}

TEST(QuantizeContribKernels, QLinearLeakyReluTable) {
  // xs = 0.5, xz = 10, ys = 0.25, yz = 100, alpha = 0.25: y = 2 x or 0.5 x (x = 0.5 (q - 10)) / 0.25
  auto r = run_ms("QLinearLeakyRelu", {tv<uint8_t>({6}, {10, 11, 9, 7, 255, 0}), Tensor::scalar(0.5f),
                                       Tensor::scalar<uint8_t>(10), Tensor::scalar(0.25f), Tensor::scalar<uint8_t>(100)},
                  {{"alpha", attr_float(0.25f)}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  // q=10: 0 -> 100; 11: 2 -> 102; 9: -0.5 -> 99.5 -> 100 (tie to even: -0.5 rounds to 0);
  // 7: -1.5 -> -2 -> 98; 255: 490 -> 255; 0: -5 -> 95
  EXPECT_EQ(values<uint8_t>((*r)[0]), (std::vector<uint8_t>{100, 102, 100, 98, 255, 95}));
}

TEST(QuantizeContribKernels, QLinearGlobalAveragePoolNchwAndNhwc) {
  // scale = xs / (ys * HW) = 0.5 / (0.25 * 4) = 0.5; y = rne(0.5 * sum(q - 10)) + 3.
  const std::vector<uint8_t> nchw = {10, 11, 12, 13, 0, 0, 0, 1, 11, 10, 10, 10};
  auto r = run_ms("QLinearGlobalAveragePool", {tv<uint8_t>({1, 3, 2, 2}, nchw), Tensor::scalar(0.5f),
                                               Tensor::scalar<uint8_t>(10), Tensor::scalar(0.25f), Tensor::scalar<uint8_t>(3)});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{1, 3, 1, 1}));
  // sums 6 -> 3 + 3 = 6; -39 -> -19.5 -> -20 -> 0 (saturated); 1 -> 0.5 -> 0 (tie) -> 3
  EXPECT_EQ(values<uint8_t>((*r)[0]), (std::vector<uint8_t>{6, 0, 3}));
  // The same data channels-last: [1, 2, 2, 3].
  std::vector<uint8_t> nhwc(12);
  for (int c = 0; c < 3; ++c)
    for (int p = 0; p < 4; ++p) nhwc[static_cast<size_t>(p * 3 + c)] = nchw[static_cast<size_t>(c * 4 + p)];
  auto s = run_ms("QLinearGlobalAveragePool", {tv<uint8_t>({1, 2, 2, 3}, nhwc), Tensor::scalar(0.5f),
                                               Tensor::scalar<uint8_t>(10), Tensor::scalar(0.25f), Tensor::scalar<uint8_t>(3)},
                  {{"channels_last", attr_int(1)}});
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ((*s)[0].shape(), (Shape{1, 1, 1, 3}));
  EXPECT_EQ(values<uint8_t>((*s)[0]), (std::vector<uint8_t>{6, 0, 3}));
  // int8 with a negative zero point: sums of (q + 4) over 3 values, scale = 1 / (0.5 * 3).
  auto t = run_ms("QLinearGlobalAveragePool", {tv<int8_t>({2, 1, 3}, {-4, -3, -2, 127, 127, 127}), Tensor::scalar(1.0f),
                                               Tensor::scalar<int8_t>(-4), Tensor::scalar(0.5f), Tensor::scalar<int8_t>(-1)});
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  // 3 / 1.5 = 2 -> 1; 393 / 1.5 = 262 -> 127 (saturated)
  EXPECT_EQ(values<int8_t>((*t)[0]), (std::vector<int8_t>{1, 127}));
}

TEST(QuantizeContribKernels, QLinearConcatRequantizesEachInput) {
  // Y: scale 0.5, zp 10. X0 has Y's parameters (copied); X1: scale 0.25, zp 1,
  // y = rne(0.25 (q - 1) / 0.5) + 10: 2 -> 0.5 -> 0 -> 10, 4 -> 1.5 -> 2 -> 12, 3 -> 11, 255 -> 137.
  auto r = run_ms("QLinearConcat", {Tensor::scalar(0.5f), Tensor::scalar<uint8_t>(10), tv<uint8_t>({2, 1}, {10, 20}),
                                    Tensor::scalar(0.5f), Tensor::scalar<uint8_t>(10), tv<uint8_t>({2, 2}, {2, 4, 3, 255}),
                                    Tensor::scalar(0.25f), Tensor::scalar<uint8_t>(1)},
                  {{"axis", attr_int(-1)}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(values<uint8_t>((*r)[0]), (std::vector<uint8_t>{10, 10, 12, 20, 11, 137}));
  // int8 along axis 0 with saturation: y = q * xs - 100.
  auto s = run_ms("QLinearConcat", {Tensor::scalar(1.0f), Tensor::scalar<int8_t>(-100), tv<int8_t>({3}, {-128, 0, 127}),
                                    Tensor::scalar(1.0f), Tensor::scalar<int8_t>(0), tv<int8_t>({1}, {50}),
                                    Tensor::scalar(2.0f), Tensor::scalar<int8_t>(0)},
                  {{"axis", attr_int(0)}});
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(values<int8_t>((*s)[0]), (std::vector<int8_t>{-128, -100, 27, 0}));
}

TEST(QuantizeContribKernels, QLinearAveragePoolAddsZeroPointBeforeRounding) {
  // x = 0.5 (q - 10) = [[0, .5, 1], [1.5, 2, 2.5], [3, 3.5, 4]]; y = rne(avg / 1 + 1):
  // the zero point is added before rounding, so 1.5 + 1 = 2.5 -> 2 (not rne(1.5) + 1 = 3).
  const Tensor x = tv<uint8_t>({1, 1, 3, 3}, {10, 11, 12, 13, 14, 15, 16, 17, 18});
  auto pool = [&](ir::Attributes attrs) {
    return run_ms("QLinearAveragePool", {x, Tensor::scalar(0.5f), Tensor::scalar<uint8_t>(10), Tensor::scalar(1.0f),
                                         Tensor::scalar<uint8_t>(1)},
                  std::move(attrs));
  };
  auto r = pool({{"kernel_shape", attr_ints({2, 2})}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{1, 1, 2, 2}));
  // averages 1, 1.5, 2.5, 3 -> 2, 2.5 -> 2, 3.5 -> 4, 4
  EXPECT_EQ(values<uint8_t>((*r)[0]), (std::vector<uint8_t>{2, 2, 4, 4}));
  // Padding at the start, stride 2: windows hold 1, 2, 2 and 4 values.
  auto p = pool({{"kernel_shape", attr_ints({2, 2})}, {"strides", attr_ints({2, 2})}, {"pads", attr_ints({1, 1, 0, 0})}});
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  // 0 / 1, 1.5 / 2, 4.5 / 2, 12 / 4, each + 1: 1, 1.75 -> 2, 3.25 -> 3, 4
  EXPECT_EQ(values<uint8_t>((*p)[0]), (std::vector<uint8_t>{1, 2, 3, 4}));
  auto pi = pool({{"kernel_shape", attr_ints({2, 2})}, {"strides", attr_ints({2, 2})}, {"pads", attr_ints({1, 1, 0, 0})},
                  {"count_include_pad", attr_int(1)}});
  ASSERT_TRUE(pi.ok()) << pi.status().to_string();
  // divided by 4: 0, 0.375, 1.125, 3, each + 1: 1, 1, 2, 4
  EXPECT_EQ(values<uint8_t>((*pi)[0]), (std::vector<uint8_t>{1, 1, 2, 4}));
  // A window over the whole image is the global pool: rne(36 * 0.5 / 9) + 1 = 3.
  auto g = pool({{"kernel_shape", attr_ints({3, 3})}});
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  EXPECT_EQ((*g)[0].shape(), (Shape{1, 1, 1, 1}));
  EXPECT_EQ(values<uint8_t>((*g)[0]), (std::vector<uint8_t>{3}));
}

// QGemm reference: int64 products, int32 wrap of bias + sum, then the scale.
template <typename TA, typename TB>
std::vector<float> ref_qgemm_float(const std::vector<TA>& a, int32_t za, const std::vector<TB>& b,
                                   const std::vector<int32_t>& zb, const std::vector<int32_t>* bias, int64_t M, int64_t K,
                                   int64_t N, bool trans_b, const std::vector<float>& scales) {
  std::vector<float> out(static_cast<size_t>(M * N));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      int64_t s = bias ? (*bias)[static_cast<size_t>(n)] : 0;
      const int32_t z = zb[zb.size() == 1 ? 0 : static_cast<size_t>(n)];
      for (int64_t k = 0; k < K; ++k) {
        const int32_t bv = trans_b ? b[static_cast<size_t>(n * K + k)] : b[static_cast<size_t>(k * N + n)];
        s += static_cast<int64_t>(a[static_cast<size_t>(m * K + k)] - za) * (bv - z);
      }
      out[static_cast<size_t>(m * N + n)] =
          static_cast<float>(static_cast<int32_t>(s)) * scales[scales.size() == 1 ? 0 : static_cast<size_t>(n)];
    }
  return out;
}

TEST(QuantizeContribKernels, QGemmFloatOutputPerColumn) {
  std::mt19937 rng(3);
  for (int trans_b = 0; trans_b < 2; ++trans_b) {
    const int64_t M = 3, K = 37, N = 300;  // N above one accumulator block
    std::vector<uint8_t> a(static_cast<size_t>(M * K));
    std::vector<int8_t> b(static_cast<size_t>(K * N));
    for (auto& v : a) v = static_cast<uint8_t>(rng() & 255);
    for (auto& v : b) v = static_cast<int8_t>(rng() & 255);
    std::vector<float> bs(static_cast<size_t>(N));
    std::vector<int8_t> bz(static_cast<size_t>(N));
    std::vector<int32_t> bias(static_cast<size_t>(N)), zb(static_cast<size_t>(N));
    for (int64_t n = 0; n < N; ++n) {
      bs[static_cast<size_t>(n)] = 0.001f * static_cast<float>(1 + n % 7);
      bz[static_cast<size_t>(n)] = static_cast<int8_t>(n % 5 - 2);
      zb[static_cast<size_t>(n)] = bz[static_cast<size_t>(n)];
      bias[static_cast<size_t>(n)] = static_cast<int32_t>(n * 13) - 2000;
    }
    const float sa = 0.02f, alpha = 0.75f;
    auto r = run_ms("QGemm", {tv<uint8_t>({M, K}, a), Tensor::scalar(sa), Tensor::scalar<uint8_t>(131),
                              tv<int8_t>(trans_b ? Shape{N, K} : Shape{K, N}, b), tv<float>({N}, bs), tv<int8_t>({N}, bz),
                              tv<int32_t>({N}, bias)},
                    {{"alpha", attr_float(alpha)}, {"transB", attr_int(trans_b)}});
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    ASSERT_EQ((*r)[0].dtype(), DType::kFloat32);
    std::vector<float> scales(static_cast<size_t>(N));
    for (int64_t n = 0; n < N; ++n) scales[static_cast<size_t>(n)] = alpha * sa * bs[static_cast<size_t>(n)];
    EXPECT_EQ(values<float>((*r)[0]), ref_qgemm_float(a, 131, b, zb, &bias, M, K, N, trans_b != 0, scales));
  }
}

// The products ONNX Runtime's saved optimised models hold: at a real
// model's sizes (one MiniLM layer's feed-forward product), a zero point
// for A, per-column scales and zero points for B, and a bias.
TEST(QuantizeContribKernels, MatMulIntegerToFloatPerColumnWithBias) {
  const int64_t M = 128, K = 384, N = 1536;
  std::mt19937 rng(5);
  std::vector<uint8_t> a(static_cast<size_t>(M * K));
  std::vector<int8_t> b(static_cast<size_t>(K * N)), bz(static_cast<size_t>(N));
  std::vector<float> bs(static_cast<size_t>(N)), bias(static_cast<size_t>(N));
  std::vector<int32_t> zb(static_cast<size_t>(N));
  for (auto& v : a) v = static_cast<uint8_t>(rng() & 255);
  for (auto& v : b) v = static_cast<int8_t>(rng() & 255);
  for (size_t n = 0; n < static_cast<size_t>(N); ++n) {
    bs[n] = 0.0005f * static_cast<float>(1 + n % 11);
    bz[n] = static_cast<int8_t>(static_cast<int>(n % 7) - 3);
    zb[n] = bz[n];
    bias[n] = 0.01f * static_cast<float>(static_cast<int>(n % 13) - 6);
  }
  const float sa = 0.0173f;
  auto r = run_ms("MatMulIntegerToFloat", {tv<uint8_t>({M, K}, a), tv<int8_t>({K, N}, b), Tensor::scalar(sa),
                                           tv<float>({N}, bs), Tensor::scalar<uint8_t>(117), tv<int8_t>({N}, bz),
                                           tv<float>({N}, bias)});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ((*r)[0].shape(), (Shape{M, N}));
  std::vector<float> scales(static_cast<size_t>(N));
  for (size_t n = 0; n < scales.size(); ++n) scales[n] = sa * bs[n];
  const std::vector<float> want = ref_qgemm_float(a, 117, b, zb, nullptr, M, K, N, false, scales);
  const float* got = (*r)[0].data<float>();
  for (int64_t i = 0; i < M * N; ++i) {
    const float w = want[static_cast<size_t>(i)] + bias[static_cast<size_t>(i % N)];
    ASSERT_NEAR(got[i], w, 1e-6f * (1 + std::fabs(w))) << i;
  }
}

// com.dlrt MatMulIntegerToFloat (what the fusion of MatMulInteger -> Cast ->
// Mul -> Add makes) rounds the product and then the sum, as those three ops
// do: bit for bit float(acc) * scale, then + bias, at every level this CPU
// runs. On aarch64 a contracted fused multiply-add differs in the last bit
// (that build has -ffp-contract=off); on x86 the output is what it was.
TEST(QuantizeContribKernels, MatMulIntegerToFloatRoundsProductThenSum) {
  const int64_t M = 7, K = 40, N = 37;  // N: full vectors and a tail
  std::mt19937 rng(17);
  std::vector<uint8_t> a(static_cast<size_t>(M * K));
  std::vector<int8_t> b(static_cast<size_t>(K * N));
  std::vector<float> scale(static_cast<size_t>(N)), bias(static_cast<size_t>(N));
  for (auto& v : a) v = static_cast<uint8_t>(rng() & 255);
  for (auto& v : b) v = static_cast<int8_t>(rng() & 255);
  std::uniform_real_distribution<float> us(1e-4f, 1e-2f), ub(-1.0f, 1.0f);
  for (auto& v : scale) v = us(rng);
  for (auto& v : bias) v = ub(rng);
  for (bool per_column : {false, true}) {
    std::vector<float> sc = per_column ? scale : std::vector<float>{0.0123f};
    std::vector<float> want = ref_qgemm_float(a, 131, b, {-3}, nullptr, M, K, N, false, sc);
    for (int64_t i = 0; i < M * N; ++i) want[static_cast<size_t>(i)] += bias[static_cast<size_t>(i % N)];
    for (CpuIsa isa : {detected_cpu_isa(), CpuIsa::kGeneric}) {
      SCOPED_TRACE(std::string(cpu_isa_name(isa)) + (per_column ? " per-column scale" : " one scale"));
      ScopedCpuIsa cap(isa);
      auto r = run_op("MatMulIntegerToFloat",
                      {tv<uint8_t>({M, K}, a), tv<int8_t>({K, N}, b), Tensor::scalar<uint8_t>(131),
                       Tensor::scalar<int8_t>(-3), per_column ? tv<float>({N}, sc) : Tensor::scalar(sc[0]),
                       tv<float>({N}, bias)},
                      {}, 1, 1, "com.dlrt");
      ASSERT_TRUE(r.ok()) << r.status().to_string();
      EXPECT_EQ(values<float>((*r)[0]), want);
    }
  }
}

TEST(QuantizeContribKernels, DynamicQuantizeMatMulQuantizesAllOfA) {
  // Batched A [2, 64, K] (one scale and zero point for all of it), int8 B with
  // one scale and no zero point, a bias.
  const int64_t B = 2, M = 64, K = 384, N = 96;
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(-3.0f, 5.0f);
  std::vector<float> a(static_cast<size_t>(B * M * K)), bias(static_cast<size_t>(N));
  std::vector<int8_t> b(static_cast<size_t>(K * N));
  for (auto& v : a) v = u(rng);
  for (auto& v : b) v = static_cast<int8_t>(rng() & 255);
  for (auto& v : bias) v = u(rng);
  const float sb = 0.004f;
  auto r = run_ms("DynamicQuantizeMatMul",
                  {tv<float>({B, M, K}, a), tv<int8_t>({K, N}, b), Tensor::scalar(sb), Tensor(), tv<float>({N}, bias)});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ((*r)[0].shape(), (Shape{B, M, N}));
  // Reference: DynamicQuantizeLinear's own output, then the integer product.
  auto q = run_op("DynamicQuantizeLinear", {tv<float>({B * M, K}, a)}, {}, 3, 11);
  ASSERT_TRUE(q.ok());
  const std::vector<uint8_t> aq = values<uint8_t>((*q)[0]);
  const float sa = (*q)[1].data<float>()[0];
  const int32_t za = (*q)[2].data<uint8_t>()[0];
  const std::vector<float> want = ref_qgemm_float(aq, za, b, {0}, nullptr, B * M, K, N, false, {sa * sb});
  const float* got = (*r)[0].data<float>();
  for (int64_t i = 0; i < B * M * N; ++i) {
    const float w = want[static_cast<size_t>(i)] + bias[static_cast<size_t>(i % N)];
    ASSERT_NEAR(got[i], w, 1e-6f * (1 + std::fabs(w))) << i;
  }
}

TEST(QuantizeContribKernels, IntegerToFloatProductsRejectWhatTheyDoNotRun) {
  const Tensor a = tv<uint8_t>({2, 3}, {1, 2, 3, 4, 5, 6}), b = tv<int8_t>({3, 2}, {1, -1, 2, 0, -3, 4});
  auto r = run_ms("MatMulIntegerToFloat", {a, b, tv<float>({2}, {0.1f, 0.2f}), Tensor::scalar(0.5f)});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("a_scale"), std::string::npos) << r.status().message();
  r = run_ms("MatMulIntegerToFloat", {a, b, Tensor::scalar(0.1f), tv<float>({3}, {1, 2, 3})});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("b_scale"), std::string::npos) << r.status().message();
  r = run_ms("MatMulIntegerToFloat",
             {a, b, Tensor::scalar(0.1f), Tensor::scalar(0.5f), Tensor(), Tensor(), tv<float>({3}, {1, 2, 3})});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("bias"), std::string::npos) << r.status().message();
  r = run_ms("DynamicQuantizeMatMul", {tv<float>({1, 3}, {1, NAN, 2}), b, Tensor::scalar(0.5f)});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("NaN"), std::string::npos) << r.status().message();
  r = run_ms("DynamicQuantizeMatMul", {a, b, Tensor::scalar(0.5f)});
  EXPECT_FALSE(r.ok());
}

TEST(QuantizeContribKernels, QGemmQuantizedTransAAndBiasShapes) {
  // A^T given as [K, M]; y = rne(acc * (1 * 0.5 * 0.5 / 0.5)) + 2 = rne(0.5 acc) + 2.
  // A = [[1, 2, 3], [4, 5, 6]] (after transposing), a_zp 1; B = [[1, 0], [0, 1], [1, 1]] (uint8), b_zp 0.
  // acc (no bias) = [[0+0+2, 0+1+2], [3+0+5, 0+4+5]] = [[2, 3], [8, 9]]
  const Tensor at = tv<uint8_t>({3, 2}, {1, 4, 2, 5, 3, 6});
  const Tensor b = tv<uint8_t>({3, 2}, {1, 0, 0, 1, 1, 1});
  auto run = [&](Tensor bias) {
    return run_ms("QGemm", {at, Tensor::scalar(0.5f), Tensor::scalar<uint8_t>(1), b, Tensor::scalar(0.5f),
                            Tensor::scalar<uint8_t>(0), bias, Tensor::scalar(0.5f), Tensor::scalar<uint8_t>(2)},
                  {{"transA", attr_int(1)}});
  };
  auto none = run(Tensor());
  ASSERT_TRUE(none.ok()) << none.status().to_string();
  ASSERT_EQ((*none)[0].dtype(), DType::kUInt8);
  // 1 -> 3, 1.5 -> 2 -> 4, 4 -> 6, 4.5 -> 4 -> 6
  EXPECT_EQ(values<uint8_t>((*none)[0]), (std::vector<uint8_t>{3, 4, 6, 6}));
  auto row = run(tv<int32_t>({2, 1}, {1, -1000}));  // per row: +1 on row 0, -1000 on row 1
  ASSERT_TRUE(row.ok()) << row.status().to_string();
  // 1.5 -> 2 -> 4, 2 -> 4, -992 * 0.5 -> 0, -991 * 0.5 = -495.5 -> 0
  EXPECT_EQ(values<uint8_t>((*row)[0]), (std::vector<uint8_t>{4, 4, 0, 0}));
  auto full = run(tv<int32_t>({2, 2}, {0, 1, 2, 1000}));
  ASSERT_TRUE(full.ok()) << full.status().to_string();
  // 2 -> 1 -> 3, 4 -> 2 -> 4, 10 -> 5 -> 7, 1009 -> 504.5 -> 255
  EXPECT_EQ(values<uint8_t>((*full)[0]), (std::vector<uint8_t>{3, 4, 7, 255}));
}

TEST(QuantizeContribKernels, QGemmInt8Quantized) {
  // int8 A and B, per-tensor, y int8 with zero point -3: y = rne(acc * 0.25) - 3.
  // A = [[-1, 2]], a_zp = -1 -> [0, 3]; B^T rows [1, 1], [-2, 3], [127, 127] -> acc 3, 9, 381
  auto r = run_ms("QGemm", {tv<int8_t>({1, 2}, {-1, 2}), Tensor::scalar(0.5f), Tensor::scalar<int8_t>(-1),
                            tv<int8_t>({3, 2}, {1, 1, -2, 3, 127, 127}), Tensor::scalar(1.0f), Tensor::scalar<int8_t>(0),
                            Tensor(), Tensor::scalar(2.0f), Tensor::scalar<int8_t>(-3)},
                  {{"transB", attr_int(1)}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  // 0.75 -> 1 -> -2, 2.25 -> 2 -> -1, 95.25 -> 95 -> 92
  EXPECT_EQ(values<int8_t>((*r)[0]), (std::vector<int8_t>{-2, -1, 92}));
}

}  // namespace
}  // namespace dlrt::cpu

// ---------------------------------------------------------------------------
// com.dlrt QLinearConvNhwc (quantize_conv_nhwc.cpp) against QLinearConv on
// the same data, transposed: one group (1 x 1, im2col, strided, dilated) and
// depthwise (one and two channel blocks, int8 and uint8 weights), signed and
// unsigned activations and outputs, on every ISA.
namespace dlrt::cpu {
namespace {

// [N, C, H, W] bytes -> [N, H, W, C], and back with `back`.
std::vector<uint8_t> to_channels_last(const std::vector<uint8_t>& v, int64_t N, int64_t C, int64_t H, int64_t W,
                                      bool back = false) {
  std::vector<uint8_t> out(v.size());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t p = 0; p < H * W; ++p) {
        const size_t nchw = static_cast<size_t>((n * C + c) * H * W + p), nhwc = static_cast<size_t>((n * H * W + p) * C + c);
        if (back) out[nchw] = v[nhwc];
        else out[nhwc] = v[nchw];
      }
  return out;
}

Tensor bytes_tensor(bool is_signed, Shape s, const std::vector<uint8_t>& v) {
  return is_signed ? Tensor::from_vector<int8_t>(std::move(s), std::vector<int8_t>(v.begin(), v.end()))
                   : Tensor::from_vector<uint8_t>(std::move(s), v);
}

TEST(QuantizeKernels, QLinearConvNhwcMatchesQLinearConv) {
  struct Case {
    int64_t N, C, M, group, H, W, K, stride, pad, dilation;
    bool x_signed, w_signed, y_signed, w_zp;
  };
  const Case cases[] = {
      {1, 16, 40, 1, 12, 13, 1, 1, 0, 1, false, true, false, false},  // 1 x 1
      {2, 8, 24, 1, 11, 9, 3, 1, 1, 1, true, true, true, false},      // 3 x 3 "same"
      {1, 3, 16, 1, 20, 18, 7, 2, 3, 1, false, true, false, false},   // 7 x 7, stride 2
      {1, 12, 20, 1, 10, 10, 3, 2, 1, 2, false, false, true, true},   // dilated, uint8 weights with zero points
      {1, 12, 12, 12, 20, 21, 3, 2, 1, 1, false, true, false, false}, // depthwise
      {2, 70, 70, 70, 9, 9, 3, 1, 1, 1, true, true, true, true},      // two channel blocks, weight zero points
      {1, 20, 20, 20, 13, 11, 5, 1, 2, 1, false, false, false, true}, // uint8 weights beyond int8 after the zp
      {1, 33, 33, 33, 10, 12, 3, 1, 2, 2, true, true, false, false},  // dilated depthwise
  };
  std::mt19937 rng(41);
  std::vector<CpuIsa> isas{CpuIsa::kGeneric};
  if (detected_cpu_isa() >= CpuIsa::kAvx2) isas.push_back(CpuIsa::kAvx2);
  if (detected_cpu_isa() >= CpuIsa::kAvx512) isas.push_back(CpuIsa::kAvx512);
  for (const Case& c : cases) {
    const int64_t Cg = c.C / c.group;
    std::vector<uint8_t> xv(static_cast<size_t>(c.N * c.C * c.H * c.W)), wv(static_cast<size_t>(c.M * Cg * c.K * c.K));
    for (auto& v : xv) v = static_cast<uint8_t>(rng());
    for (auto& v : wv) v = static_cast<uint8_t>(rng());
    std::vector<float> wscale(static_cast<size_t>(c.M));
    std::vector<int32_t> bias(static_cast<size_t>(c.M));
    std::vector<uint8_t> wzp(static_cast<size_t>(c.M));
    for (auto& v : wscale) v = 0.001f + 0.0001f * static_cast<float>(rng() % 50);
    for (auto& v : bias) v = static_cast<int32_t>(rng() % 20001) - 10000;
    for (size_t m = 0; m < wzp.size(); ++m)
      wzp[m] = !c.w_zp ? (c.w_signed ? 0 : 128) : static_cast<uint8_t>(c.w_signed ? (m % 7) - 3 : 100 + m % 60);
    const int32_t xz = c.x_signed ? -9 : 119, yz = c.y_signed ? -4 : 128;
    const ir::Attributes attrs{{"pads", attr_ints({c.pad, c.pad, c.pad, c.pad})},
                               {"strides", attr_ints({c.stride, c.stride})},
                               {"dilations", attr_ints({c.dilation, c.dilation})},
                               {"group", attr_int(c.group)}};
    auto inputs = [&](Tensor x) {
      return std::vector<Tensor>{
          std::move(x),
          Tensor::scalar(0.02f),
          c.x_signed ? Tensor::scalar<int8_t>(static_cast<int8_t>(xz)) : Tensor::scalar<uint8_t>(static_cast<uint8_t>(xz)),
          bytes_tensor(c.w_signed, {c.M, Cg, c.K, c.K}, wv),
          tv<float>({c.M}, wscale),
          bytes_tensor(c.w_signed, {c.M}, wzp),
          Tensor::scalar(c.y_signed ? 0.9f : 0.6f),
          c.y_signed ? Tensor::scalar<int8_t>(static_cast<int8_t>(yz)) : Tensor::scalar<uint8_t>(static_cast<uint8_t>(yz)),
          tv<int32_t>({c.M}, bias)};
    };
    auto want = run_op("QLinearConv", inputs(bytes_tensor(c.x_signed, {c.N, c.C, c.H, c.W}, xv)), attrs, 1, 10);
    ASSERT_TRUE(want.ok()) << want.status().to_string();
    const Shape ws = (*want)[0].shape();
    const auto* wb = static_cast<const uint8_t*>((*want)[0].raw_data());
    const std::vector<uint8_t> want_bytes(wb, wb + (*want)[0].size());
    for (CpuIsa isa : isas) {
      SCOPED_TRACE(std::string(cpu_isa_name(isa)) + " C " + std::to_string(c.C) + " M " + std::to_string(c.M) +
                   " group " + std::to_string(c.group) + " k " + std::to_string(c.K));
      ScopedCpuIsa cap(isa);
      auto got = run_op("QLinearConvNhwc",
                        inputs(bytes_tensor(c.x_signed, {c.N, c.H, c.W, c.C}, to_channels_last(xv, c.N, c.C, c.H, c.W))),
                        attrs, 1, 1, "com.dlrt");
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      ASSERT_EQ((*got)[0].shape(), (Shape{ws[0], ws[2], ws[3], ws[1]}));
      const auto* gb = static_cast<const uint8_t*>((*got)[0].raw_data());
      const std::vector<uint8_t> back =
          to_channels_last(std::vector<uint8_t>(gb, gb + (*got)[0].size()), ws[0], ws[1], ws[2], ws[3], true);
      for (size_t i = 0; i < back.size(); ++i) ASSERT_EQ(back[i], want_bytes[i]) << "element " << i;
    }
  }
  // Grouped convs other than depthwise stay NCHW: a clear error.
  auto bad = run_op("QLinearConvNhwc",
                    {tv<uint8_t>({1, 4, 4, 8}, std::vector<uint8_t>(128, 1)), Tensor::scalar(1.0f), Tensor::scalar<uint8_t>(0),
                     tv<int8_t>({8, 4, 1, 1}, std::vector<int8_t>(32, 1)), Tensor::scalar(1.0f), Tensor::scalar<int8_t>(0),
                     Tensor::scalar(1.0f), Tensor::scalar<uint8_t>(0)},
                    {{"group", attr_int(2)}}, 1, 1, "com.dlrt");
  EXPECT_FALSE(bad.ok());
}

}  // namespace
}  // namespace dlrt::cpu
