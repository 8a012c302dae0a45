// The 8-bit products on aarch64 (gemm_int8_neon.cpp): at the neon level the
// best NEON kernel the CPU's HWCAP allows runs (neon-i8mm, neon-dotprod,
// neon), counted per GEMM (simd_calls "gemm_int8_neon"), so that these tests
// fail when the portable kernel ran in its place; every kernel gives the bits
// of an int64 reference and of the portable kernel, through gemm_u8s8 and
// through the ops that call it; the same for the depthwise kernels, the
// plane one ("depthwise_int8_sum_taps", its 128-bit instantiation) and the channels-last one
// ("depthwise_int8_nhwc_neon", QLinearConvNhwc). make test-arm64 runs them
// under QEMU's `max` CPU (all three GEMM kernels) and again as a Cortex-A76
// (dotprod, no i8mm) and a Cortex-A53 (neither), where a wrongly chosen
// extension traps.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/kernels/depthwise_int8.h"
#include "backends/cpu/kernels/gemm_int8.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/simd/width.h"
#include "core/thread_pool.h"
#include "device/cpu_features.h"
#include "kernel_test_util.h"

namespace dlrt::cpu {
namespace {

using testing::attr_int;
using testing::attr_ints;
using testing::run_op;

#define AARCH64_OR_SKIP()                                                                                        \
  if (detected_cpu_isa() != CpuIsa::kNeon || int8_detail::neon_tile() == nullptr)                                \
  GTEST_SKIP() << "the NEON int8 kernels are aarch64 code (this build runs " << cpu_isa_name(detected_cpu_isa()) \
               << "): make test-arm64 runs them under qemu-aarch64"

uint64_t neon_gemms() { return simd_calls("gemm_int8_neon", SimdWidth::k128); }
uint64_t neon_depthwise_nhwc() { return simd_calls("depthwise_int8_nhwc_neon", SimdWidth::k128); }

template <typename T>
Tensor tv(Shape s, const std::vector<T>& v) {
  return Tensor::from_vector<T>(std::move(s), v);
}

TEST(NeonInt8, PicksTheBestKernelTheCpuHas) {
  AARCH64_OR_SKIP();
  const device::CpuFeatures& f = device::cpu_features();
  std::vector<std::string> want;
  if (f.i8mm) want.push_back("neon-i8mm");
  if (f.dotprod) want.push_back("neon-dotprod");
  want.push_back("neon");
  want.push_back("generic");
  ScopedCpuIsa neon(CpuIsa::kNeon);
  std::vector<std::string> got;
  for (const char* k : int8_gemm_kernels()) got.push_back(k);
  // (Kernels for tests only, models of other CPUs' instructions, may follow.)
  ASSERT_GE(got.size(), want.size());
  EXPECT_EQ(std::vector<std::string>(got.begin(), got.begin() + static_cast<std::ptrdiff_t>(want.size())), want)
      << "dotprod " << f.dotprod << ", i8mm " << f.i8mm;
  std::printf("int8 GEMM kernels of this CPU, best first: %s\n", ::testing::PrintToString(got).c_str());
  EXPECT_EQ(int8_gemm_kernel_name(), want[0]);
  ScopedCpuIsa generic(CpuIsa::kGeneric);
  EXPECT_STREQ(int8_gemm_kernel_name(), "generic");
}

// Each kernel on shapes with partial row blocks, panels and k groups (an odd
// number of groups: i8mm pairs them), extreme bytes, both signednesses, K
// long enough for the K-blocked loop; the NEON ones counted, the portable one not.
TEST(NeonInt8, EveryKernelGivesTheReferenceBits) {
  AARCH64_OR_SKIP();
  ScopedCpuIsa neon(CpuIsa::kNeon);
  struct Case {
    int64_t M, K, N;
  };
  const Case cases[] = {{1, 1, 1}, {5, 9, 17}, {4, 4, 16}, {7, 20, 33}, {9, 397, 31}, {3, 700, 48}};
  std::mt19937 rng(5);
  ThreadPool pool(2);
  const device::CpuFeatures& f = device::cpu_features();
  int neon_kernels = 0;
  for (const char* kernel : int8_gemm_kernels()) neon_kernels += std::strncmp(kernel, "neon", 4) == 0;
  EXPECT_EQ(neon_kernels, 1 + f.dotprod + f.i8mm) << "the NEON kernels are not all offered at the neon level";
  for (const char* kernel : int8_gemm_kernels()) {
    ScopedInt8Kernel use(kernel);
    ASSERT_STREQ(int8_gemm_kernel_name(), kernel);
    const bool is_neon = std::strncmp(kernel, "neon", 4) == 0;
    for (const Case& c : cases)
      for (int signs = 0; signs < 4; ++signs) {
        const bool a_signed = signs & 1, b_signed = signs & 2;
        SCOPED_TRACE(std::string(kernel) + " M " + std::to_string(c.M) + " K " + std::to_string(c.K) + " N " +
                     std::to_string(c.N) + " signs " + std::to_string(signs));
        const bool extreme = signs % 2 == 1;
        std::vector<uint8_t> a(static_cast<size_t>(c.M * c.K)), b(static_cast<size_t>(c.K * c.N));
        for (auto& v : a) v = extreme ? ((rng() & 1) ? 255 : 0) : static_cast<uint8_t>(rng());
        for (auto& v : b) v = extreme ? ((rng() & 1) ? 128 : 127) : static_cast<uint8_t>(rng());
        const int32_t a_zp = a_signed ? -7 : 131, b_zp = b_signed ? 3 : 126;
        auto val = [](uint8_t raw, bool s) { return s ? int64_t{static_cast<int8_t>(raw)} : int64_t{raw}; };
        std::vector<int32_t> want(static_cast<size_t>(c.M * c.N));
        for (int64_t i = 0; i < c.M; ++i)
          for (int64_t j = 0; j < c.N; ++j) {
            int64_t s = 0;
            for (int64_t k = 0; k < c.K; ++k)
              s += (val(a[i * c.K + k], a_signed) - a_zp) * (val(b[k * c.N + j], b_signed) - b_zp);
            want[i * c.N + j] = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(s)));
          }
        const auto packed = PackedInt8B::pack(false, c.K, c.N, b.data(), c.N, b_signed);
        std::vector<int32_t> got(want.size(), -1);
        const uint64_t before = neon_gemms();
        gemm_u8s8(c.M, c.N, c.K, a.data(), c.K, a_signed, &a_zp, 0, *packed, &b_zp, 0, got.data(), c.N,
                  c.M > 4 ? &pool : nullptr);
        EXPECT_EQ(neon_gemms() - before, is_neon ? 1u : 0u);
        ASSERT_EQ(got, want);
      }
  }
}

// The ops over gemm_u8s8 (MatMulInteger, QLinearMatMul, QLinearConv,
// com.microsoft DynamicQuantizeMatMul) and the depthwise QLinearConv
// (depthwise_int8_plane): at the neon level each runs its NEON kernel, and
// its output is bit for bit the portable level's.
TEST(NeonInt8, QuantizedOpsRunTheNeonKernel) {
  AARCH64_OR_SKIP();
  std::mt19937 rng(17);
  auto bytes = [&](int64_t n) {
    std::vector<uint8_t> v(static_cast<size_t>(n));
    for (auto& x : v) x = static_cast<uint8_t>(rng());
    return v;
  };
  auto s8 = [](const std::vector<uint8_t>& v) { return std::vector<int8_t>(v.begin(), v.end()); };
  const int64_t M = 19, K = 70, N = 37;
  std::vector<float> af(static_cast<size_t>(M * K)), bias(static_cast<size_t>(N));
  for (auto& x : af) x = static_cast<float>(static_cast<int>(rng() % 2001) - 1000) / 300.0f;
  for (auto& x : bias) x = static_cast<float>(static_cast<int>(rng() % 201) - 100) / 50.0f;
  std::vector<float> wscale(8);
  for (auto& x : wscale) x = 0.002f + 0.0005f * static_cast<float>(rng() % 7);
  struct OpCase {
    const char* name;
    std::string op, domain;
    std::vector<Tensor> in;
    ir::Attributes attrs;
    int opset;
    const char* counter = "gemm_int8_neon";  // the NEON kernel's call counter
  };
  const std::vector<OpCase> ops = {
      {"MatMulInteger",
       "MatMulInteger",
       "",
       {tv<uint8_t>({M, K}, bytes(M * K)), tv<int8_t>({K, N}, s8(bytes(K * N))), Tensor::scalar<uint8_t>(121),
        Tensor::scalar<int8_t>(-2)},
       {},
       10},
      {"QLinearMatMul s8",
       "QLinearMatMul",
       "",
       {tv<int8_t>({2, M, K}, s8(bytes(2 * M * K))), Tensor::scalar(0.05f), Tensor::scalar<int8_t>(3),
        tv<int8_t>({K, N}, s8(bytes(K * N))), Tensor::scalar(0.01f), Tensor::scalar<int8_t>(0), Tensor::scalar(0.7f),
        Tensor::scalar<int8_t>(-5)},
       {},
       10},
      {"QLinearConv 3x3",
       "QLinearConv",
       "",
       {tv<uint8_t>({1, 6, 11, 10}, bytes(6 * 11 * 10)), Tensor::scalar(0.02f), Tensor::scalar<uint8_t>(119),
        tv<int8_t>({8, 6, 3, 3}, s8(bytes(8 * 6 * 9))), tv<float>({8}, wscale),
        tv<int8_t>({8}, std::vector<int8_t>(8, 0)), Tensor::scalar(0.4f), Tensor::scalar<uint8_t>(128)},
       {{"pads", attr_ints({1, 1, 1, 1})}, {"strides", attr_ints({1, 1})}, {"group", attr_int(1)}},
       10},
      {"DynamicQuantizeMatMul",
       "DynamicQuantizeMatMul",
       "com.microsoft",
       {tv<float>({M, K}, af), tv<int8_t>({K, N}, s8(bytes(K * N))), Tensor::scalar(0.004f), Tensor(),
        tv<float>({N}, bias)},
       {},
       1},
      {"QLinearConv depthwise",
       "QLinearConv",
       "",
       {tv<uint8_t>({1, 8, 13, 12}, bytes(8 * 13 * 12)), Tensor::scalar(0.02f), Tensor::scalar<uint8_t>(119),
        tv<int8_t>({8, 1, 3, 3}, s8(bytes(8 * 9))), tv<float>({8}, wscale), tv<int8_t>({8}, std::vector<int8_t>(8, 0)),
        Tensor::scalar(0.4f), Tensor::scalar<uint8_t>(128)},
       {{"pads", attr_ints({1, 1, 1, 1})}, {"strides", attr_ints({2, 1})}, {"group", attr_int(8)}},
       10,
       "depthwise_int8_sum_taps"},
      // Channels-last ([N, H, W, C]), 40 channels: two vectors and a partial one.
      {"QLinearConvNhwc depthwise",
       "QLinearConvNhwc",
       "com.dlrt",
       {tv<int8_t>({2, 9, 11, 40}, s8(bytes(2 * 9 * 11 * 40))), Tensor::scalar(0.02f), Tensor::scalar<int8_t>(-3),
        tv<uint8_t>({40, 1, 3, 3}, bytes(40 * 9)), Tensor::scalar(0.003f), Tensor::scalar<uint8_t>(131),
        Tensor::scalar(0.3f), Tensor::scalar<int8_t>(4)},
       {{"pads", attr_ints({1, 1, 1, 1})}, {"strides", attr_ints({1, 2})}, {"group", attr_int(40)}},
       1,
       "depthwise_int8_nhwc_neon"},
  };
  for (const OpCase& c : ops) {
    SCOPED_TRACE(c.name);
    std::vector<Tensor> out[2];
    for (int level = 0; level < 2; ++level) {
      ScopedCpuIsa cap(level == 0 ? CpuIsa::kNeon : CpuIsa::kGeneric);
      auto count = [&] { return simd_calls(c.counter, SimdWidth::k128); };
      const uint64_t before = count();
      auto r = run_op(c.op, c.in, c.attrs, 1, c.opset, c.domain);
      ASSERT_TRUE(r.ok()) << r.status().to_string();
      out[level] = std::move(*r);
      if (level == 0)
        EXPECT_GT(count() - before, 0u) << "no NEON int8 kernel ran at the neon level: the portable one did";
      else
        EXPECT_EQ(count() - before, 0u) << "a NEON int8 kernel ran at the generic level";
    }
    ASSERT_EQ(out[0][0].shape(), out[1][0].shape());
    ASSERT_EQ(out[0][0].dtype(), out[1][0].dtype());
    EXPECT_EQ(std::memcmp(out[0][0].raw_data(), out[1][0].raw_data(), out[0][0].nbytes()), 0)
        << "the neon level's output differs from the portable level's";
  }
}

// depthwise_int8_nhwc on channels-last pixels wider than the call's channels
// (x_ld, y_ld > C, as for a block of a wider tensor), channel counts with
// partial vectors, padding, strides, dilation and both signednesses in and
// out, extreme bytes and the widest 8-bit weights (w - w_zp = +-255): at the
// neon level the NEON kernel runs once per call and gives the bits of an
// int64 reference requantized as QLinearConv specifies (float scale, clamp,
// rounding half to even, written out here with std::nearbyint); at the generic
// level the portable loop runs and gives the same. Weights past int16 take
// the portable loop (not counted), with the same reference bits.
TEST(NeonInt8, ChannelsLastDepthwiseGivesTheReferenceBits) {
  AARCH64_OR_SKIP();
  struct Case {
    int64_t C, H, W, K, stride, dil, pad;
    bool x_signed, out_signed, bias, extreme, big_weight;
  };
  const Case cases[] = {
      {16, 7, 9, 3, 1, 1, 1, false, false, true, false, false}, {5, 6, 5, 3, 2, 1, 1, true, false, false, true, false},
      {37, 8, 7, 3, 1, 2, 2, false, true, true, true, false},   {64, 5, 6, 5, 2, 1, 2, true, true, true, false, false},
      {24, 4, 4, 1, 1, 1, 0, false, false, false, false, false}, {40, 3, 9, 3, 1, 1, 3, true, false, true, true, false},
      {9, 6, 6, 3, 1, 1, 1, false, false, true, false, true},
  };
  std::mt19937 rng(29);
  for (const Case& c : cases) {
    SCOPED_TRACE("C " + std::to_string(c.C) + " H " + std::to_string(c.H) + " W " + std::to_string(c.W) + " K " +
                 std::to_string(c.K) + " stride " + std::to_string(c.stride) + " dilation " + std::to_string(c.dil) +
                 " pad " + std::to_string(c.pad));
    DepthwiseInt8Geometry g;
    g.H = c.H, g.W = c.W, g.KH = c.K, g.KW = c.K, g.sh = c.stride, g.sw = c.stride, g.dh = c.dil, g.dw = c.dil;
    g.ph = c.pad, g.pw = c.pad;
    g.OH = (c.H + 2 * c.pad - c.dil * (c.K - 1) - 1) / c.stride + 1;
    g.OW = (c.W + 2 * c.pad - c.dil * (c.K - 1) - 1) / c.stride + 1;
    const int64_t taps = c.K * c.K, x_ld = c.C + 3, y_ld = c.C + 5;
    std::vector<uint8_t> x(static_cast<size_t>(c.H * c.W * x_ld));
    for (auto& v : x) v = c.extreme ? ((rng() & 1) ? 255 : 0) : static_cast<uint8_t>(rng());
    const int32_t x_zp = c.x_signed ? (c.extreme ? 127 : -9) : (c.extreme ? 0 : 133);
    std::vector<int32_t> w(static_cast<size_t>(c.C * taps)), bias(static_cast<size_t>(c.C));
    for (auto& v : w) v = c.extreme ? ((rng() & 1) ? 255 : -255) : static_cast<int32_t>(rng() % 511) - 255;
    if (c.big_weight) w[3] = 40000;
    for (auto& v : bias) v = static_cast<int32_t>(rng() % 20001) - 10000;
    std::vector<float> mult(static_cast<size_t>(c.C));
    for (auto& v : mult) v = (c.extreme ? 1e-5f : 4e-4f) * static_cast<float>(1 + rng() % 9);
    DepthwiseInt8Requant rq;
    rq.mult = mult.data();
    rq.bias = c.bias ? bias.data() : nullptr;
    rq.zero_point = c.out_signed ? -6 : 121;
    rq.out_signed = c.out_signed;
    // The reference: int64 sums over the taps inside x, wrapped to int32,
    // then (sum + bias) * mult clamped, rounded half to even, + zp.
    const uint8_t untouched = 0x5A;  // the bytes of y past C
    std::vector<uint8_t> want(static_cast<size_t>(g.OH * g.OW * y_ld), untouched);
    for (int64_t oh = 0; oh < g.OH; ++oh)
      for (int64_t ow = 0; ow < g.OW; ++ow)
        for (int64_t ch = 0; ch < c.C; ++ch) {
          int64_t s = 0;
          for (int64_t kh = 0; kh < c.K; ++kh)
            for (int64_t kw = 0; kw < c.K; ++kw) {
              const int64_t ih = oh * c.stride - c.pad + kh * c.dil, iw = ow * c.stride - c.pad + kw * c.dil;
              if (ih < 0 || ih >= c.H || iw < 0 || iw >= c.W) continue;
              const uint8_t b = x[static_cast<size_t>((ih * c.W + iw) * x_ld + ch)];
              const int64_t v = (c.x_signed ? int64_t{static_cast<int8_t>(b)} : int64_t{b}) - x_zp;
              s += v * w[static_cast<size_t>(ch * taps + kh * c.K + kw)];
            }
          const auto acc = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(s)) +
                                                static_cast<uint32_t>(c.bias ? bias[static_cast<size_t>(ch)] : 0));
          const float lo = static_cast<float>((c.out_signed ? -128 : 0) - rq.zero_point);
          const float hi = static_cast<float>((c.out_signed ? 127 : 255) - rq.zero_point);
          const float f = std::min(std::max(static_cast<float>(acc) * mult[static_cast<size_t>(ch)], lo), hi);
          const auto q = static_cast<int32_t>(std::nearbyint(f)) + rq.zero_point;
          want[static_cast<size_t>((oh * g.OW + ow) * y_ld + ch)] = static_cast<uint8_t>(q);
        }
    for (int level = 0; level < 2; ++level) {
      SCOPED_TRACE(level == 0 ? "neon" : "generic");
      ScopedCpuIsa cap(level == 0 ? CpuIsa::kNeon : CpuIsa::kGeneric);
      std::vector<uint8_t> y(want.size(), untouched);
      const uint64_t before = neon_depthwise_nhwc();
      depthwise_int8_nhwc(g, c.C, x.data(), x_ld, c.x_signed, x_zp, w.data(), rq, y.data(), y_ld);
      EXPECT_EQ(neon_depthwise_nhwc() - before, level == 0 && !c.big_weight ? 1u : 0u)
          << "the NEON kernel ran when it should not, or the portable loop ran in its place";
      ASSERT_EQ(y, want);
    }
  }
}

}  // namespace
}  // namespace dlrt::cpu
