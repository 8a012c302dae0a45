// The 8-bit products on aarch64 (gemm_int8_neon.cpp): at the neon level the
// best NEON kernel the CPU's HWCAP allows runs (neon-i8mm, neon-dotprod,
// neon), counted per GEMM (simd_calls "gemm_int8_neon"), so that these tests
// fail when the portable kernel ran in its place; every kernel gives the bits
// of an int64 reference and of the portable kernel, through gemm_u8s8 and
// through the ops that call it. make test-arm64 runs them under QEMU's `max`
// CPU (all three kernels) and again as a Cortex-A76 (dotprod, no i8mm) and a
// Cortex-A53 (neither), where a wrongly chosen extension traps.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

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
uint64_t neon_depthwise_planes() { return simd_calls("depthwise_int8_neon", SimdWidth::k128); }

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
    bool depthwise = false;  // counted by depthwise_int8_neon, else by gemm_int8_neon
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
       true},
  };
  for (const OpCase& c : ops) {
    SCOPED_TRACE(c.name);
    std::vector<Tensor> out[2];
    for (int level = 0; level < 2; ++level) {
      ScopedCpuIsa cap(level == 0 ? CpuIsa::kNeon : CpuIsa::kGeneric);
      auto count = [&] { return c.depthwise ? neon_depthwise_planes() : neon_gemms(); };
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

}  // namespace
}  // namespace dlrt::cpu
