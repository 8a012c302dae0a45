// The AVX-512 (and AVX2) paths of the non-GEMM float kernels against the
// portable ones, selected in-process with ScopedCpuIsa (isa.h): depthwise
// FusedConv, Attention, LayerNormalization, Softmax and the epilogue activations, on
// odd sizes so every vector tail (1..33 elements) is exercised, and the
// activations against <cmath> over a range including extremes, NaN and +-inf.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

#include "../ir/graph_builder.h"
#include "backends/cpu/kernels/activation_epilogue.h"
#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/isa.h"
#include "kernel_test_util.h"
#include "isa_test_util.h"

namespace dlrt::cpu {
namespace {

using testing::attr_float;
using testing::attr_floats;
using testing::attr_int;
using testing::attr_ints;
using testing::attr_string;
using testing::run_op;

Tensor rnd(Shape s, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  return dlrt::testing::random_tensor(std::move(s), seed, lo, hi);
}

#define SKIP_WITHOUT_AVX512()                                                                  \
  if (detected_cpu_isa() < CpuIsa::kAvx512)                                                    \
  GTEST_SKIP() << "this CPU lacks AVX-512 F/BW/DQ/VL (detected " << cpu_isa_name(detected_cpu_isa()) \
               << "): only the portable and AVX2 paths can run here"

std::vector<Tensor> run_with(CpuIsa isa, const std::string& op, std::vector<Tensor> in,
                             ir::Attributes attrs, int outputs = 1, int opset = 17,
                             const std::string& domain = "") {
  ScopedCpuIsa scope(isa);
  EXPECT_EQ(cpu_isa(), std::min(isa, detected_cpu_isa()));
  auto r = run_op(op, std::move(in), std::move(attrs), outputs, opset, domain);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? *r : std::vector<Tensor>{};
}

void expect_same(const std::vector<Tensor>& got, const std::vector<Tensor>& want, float tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE("output " + std::to_string(i));
    dlrt::testing::expect_close(got[i], want[i], tol);
  }
}

TEST(CpuIsa, ScopedCapNeverExceedsHardware) {
  const CpuIsa hw = detected_cpu_isa();
  {
    ScopedCpuIsa s(CpuIsa::kGeneric);
    EXPECT_EQ(cpu_isa(), CpuIsa::kGeneric);
    EXPECT_FALSE(cpu_has_avx2());
    {
      ScopedCpuIsa t(CpuIsa::kAvx512);
      EXPECT_EQ(cpu_isa(), hw);
    }
    EXPECT_EQ(cpu_isa(), CpuIsa::kGeneric);
  }
  EXPECT_STREQ(cpu_isa_name(CpuIsa::kAvx512), "avx512");
  EXPECT_STREQ(cpu_isa_name(CpuIsa::kAvx2), "avx2");
  EXPECT_STREQ(cpu_isa_name(CpuIsa::kGeneric), "generic");
}

// Every activation on every vector path against activate() (the <cmath> definition).
TEST(CpuIsa, ActivationsMatchScalarIncludingExtremes) {
  if (testing::vector_isas().empty()) GTEST_SKIP() << "this CPU has no AVX2/AVX-512: nothing but the scalar path to compare";
  std::vector<float> xs;
  for (float v = -20.0f; v <= 20.0f; v += 0.003f) xs.push_back(v);
  const float inf = std::numeric_limits<float>::infinity();
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-7f, -1e-7f, 0.2999f, 0.3001f, 0.2499f, 0.2501f, 60.0f, -60.0f,
                  88.0f, -88.0f, 89.0f, -89.0f, 104.0f, -104.0f, 1e30f, -1e30f, 3.4e38f, -3.4e38f, inf, -inf})
    xs.push_back(v);
  const std::vector<std::pair<std::string, std::vector<float>>> acts = {
      {"Relu", {}},      {"Clip", {-0.5f, 0.75f}},      {"Sigmoid", {}},   {"Tanh", {}},   {"LeakyRelu", {0.3f}},
      {"HardSigmoid", {0.25f, 0.4f}}, {"HardSwish", {}}, {"Gelu", {}},     {"Gelu_tanh", {}}, {"Silu", {}}};
  for (CpuIsa isa : testing::vector_isas()) {
    ScopedCpuIsa scope(isa);
    for (const auto& [name, params] : acts) {
      SCOPED_TRACE(std::string(cpu_isa_name(isa)) + " " + name);
      auto a = make_activation(name, params);
      ASSERT_TRUE(a.ok());
      std::vector<float> y = xs;
      apply_activation(*a, y.data(), static_cast<int64_t>(y.size()));
      for (size_t i = 0; i < xs.size(); ++i) {
        const float want = activate(*a, xs[i]);
        if (std::isnan(want)) {  // e.g. Gelu(-inf) = -inf * 0
          EXPECT_TRUE(std::isnan(y[i])) << name << "(" << xs[i] << ") = " << y[i];
        } else if (std::isinf(want)) {
          EXPECT_EQ(y[i], want) << name << "(" << xs[i] << ")";
        } else {
          // Absolute 3e-7 plus a few ulps relative: the documented accuracy of the approximations.
          EXPECT_NEAR(y[i], want, 3e-7f + 4e-7f * std::abs(want)) << name << "(" << xs[i] << ")";
        }
      }
      // NaN stays NaN, on a full vector and in the tail.
      for (int64_t n : {1, 5, 16, 17, 33}) {
        std::vector<float> z(static_cast<size_t>(n), std::numeric_limits<float>::quiet_NaN());
        apply_activation(*a, z.data(), n);
        for (float v : z) EXPECT_TRUE(std::isnan(v)) << name << " n=" << n;
      }
      // Tails: lengths 1..130 (every remainder after 64-wide steps) leave the elements after n untouched and match.
      for (int64_t n = 1; n <= 130; ++n) {
        std::vector<float> z(static_cast<size_t>(n) + 3, 7.0f);
        for (int64_t i = 0; i < n; ++i) z[static_cast<size_t>(i)] = static_cast<float>(i % 33) * 0.37f - 5.0f;
        apply_activation(*a, z.data(), n);
        for (int64_t i = 0; i < n; ++i)
          EXPECT_NEAR(z[static_cast<size_t>(i)], activate(*a, static_cast<float>(i % 33) * 0.37f - 5.0f), 1e-6f);
        for (size_t i = static_cast<size_t>(n); i < z.size(); ++i) EXPECT_EQ(z[i], 7.0f);
      }
    }
  }
}

// The epilogue on a block with row bias, column bias and residual, widths 1..33 and 63..97.
TEST(CpuIsa, EpilogueTailsMatchGeneric) {
  if (testing::vector_isas().empty()) GTEST_SKIP() << "this CPU has no AVX2/AVX-512: nothing but the scalar path to compare";
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  // Widths below 64 take 8-lane vectors (GEMM tiles), from 64 on 16-lane ones where the CPU has them.
  std::vector<int64_t> widths;
  for (int64_t w = 1; w <= 33; ++w) widths.push_back(w);
  for (int64_t w = 63; w <= 97; ++w) widths.push_back(w);
  for (int64_t cols : widths) {
    const int64_t rows = 3, ldc = cols + 5;
    std::vector<float> c(static_cast<size_t>(rows * ldc)), rb(static_cast<size_t>(rows + 2)), cb(static_cast<size_t>(cols + 4)),
        res(static_cast<size_t>((rows + 2) * (cols + 7)));
    for (auto* v : {&c, &rb, &cb, &res})
      for (auto& x : *v) x = u(rng);
    GemmEpilogue ep;
    ep.row_bias = rb.data();
    ep.col_bias = cb.data();
    ep.residual = res.data();
    ep.ldr = cols + 7;
    ep.act = *make_activation("Gelu", {});
    std::vector<float> want = c;
    {
      ScopedCpuIsa s(CpuIsa::kGeneric);
      apply_epilogue(ep, want.data(), ldc, 1, 2, rows, cols);
    }
    for (CpuIsa isa : testing::vector_isas()) {
      ScopedCpuIsa s(isa);
      std::vector<float> got = c;
      apply_epilogue(ep, got.data(), ldc, 1, 2, rows, cols);
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_NEAR(got[i], want[i], 1e-5f * (1 + std::abs(want[i]))) << cpu_isa_name(isa) << " cols " << cols << " at " << i;
    }
  }
}

// Depthwise FusedConv (bias, residual Z, activation) on odd planes: every vector path vs the portable loop.
TEST(CpuIsa, DepthwiseConvMatchesGeneric) {
  if (testing::vector_isas().empty()) GTEST_SKIP() << "this CPU has neither AVX2 nor AVX-512: no vector path to compare";
  struct Case {
    int64_t c, h, w, kh, kw, s, pt, pl, pb, pr;
  };
  std::vector<Case> cases;
  for (int64_t w = 1; w <= 33; w += 2) cases.push_back({3, 5, w, 3, 3, 1, 1, 1, 1, 1});
  for (int64_t w = 2; w <= 34; w += 4) cases.push_back({2, 7, w, 3, 3, 2, 1, 1, 1, 1});
  cases.push_back({4, 9, 40, 5, 5, 2, 2, 2, 2, 2});
  cases.push_back({3, 6, 37, 5, 5, 1, 2, 2, 2, 2});
  cases.push_back({2, 8, 19, 3, 3, 2, 0, 0, 0, 0});
  cases.push_back({2, 8, 19, 3, 3, 2, 1, 0, 0, 1});  // asymmetric: odd start column for the split
  cases.push_back({2, 5, 70, 1, 7, 1, 0, 3, 0, 3});
  cases.push_back({2, 4, 21, 3, 3, 1, 4, 4, 4, 4});  // padding wider than the kernel
  cases.push_back({5, 3, 3, 3, 3, 2, 1, 1, 1, 1});
  // Whole groups of 8 channels: the 8-channel kernel on AVX2 (mobilenet's
  // 7x7 and 14x14 planes, several row bands, stride 3, wide padding).
  cases.push_back({8, 7, 7, 3, 3, 1, 1, 1, 1, 1});
  cases.push_back({16, 14, 14, 3, 3, 2, 1, 1, 1, 1});
  cases.push_back({8, 40, 200, 3, 3, 1, 1, 1, 1, 1});
  cases.push_back({8, 9, 23, 5, 5, 2, 2, 2, 2, 2});
  cases.push_back({8, 11, 13, 3, 3, 3, 1, 1, 1, 1});
  cases.push_back({8, 4, 21, 3, 3, 1, 4, 4, 4, 4});
  cases.push_back({24, 5, 9, 1, 7, 1, 0, 3, 0, 3});
  // 28+ output rows: on run_op's 2 threads each also takes a band of rows.
  cases.push_back({8, 61, 12, 3, 3, 2, 1, 1, 1, 1});
  cases.push_back({16, 33, 9, 5, 5, 1, 2, 2, 2, 2});
  // Whole groups of 16 channels: the 16-channel kernel on AVX-512 (bands of
  // input rows that end off a 16-position load, several scratch bands, wide
  // padding, stride 3, mobilenet's 56x56 stride-2 layer).
  cases.push_back({16, 7, 7, 3, 3, 1, 1, 1, 1, 1});
  cases.push_back({32, 19, 37, 3, 3, 1, 1, 1, 1, 1});
  cases.push_back({16, 40, 200, 3, 3, 1, 1, 1, 1, 1});
  cases.push_back({48, 9, 23, 5, 5, 2, 2, 2, 2, 2});
  cases.push_back({16, 11, 13, 3, 3, 3, 1, 1, 1, 1});
  cases.push_back({16, 4, 21, 3, 3, 1, 4, 4, 4, 4});
  cases.push_back({16, 5, 9, 1, 7, 1, 0, 3, 0, 3});
  cases.push_back({16, 61, 12, 3, 3, 2, 1, 1, 1, 1});
  cases.push_back({32, 56, 56, 3, 3, 2, 0, 0, 1, 1});
  cases.push_back({16, 3, 1, 3, 3, 1, 1, 1, 1, 1});
  const std::vector<std::pair<std::string, std::vector<float>>> acts = {{"", {}}, {"Relu", {}}, {"Clip", {0.0f, 0.5f}}, {"HardSwish", {}}};
  uint32_t seed = 1;
  for (const auto& k : cases) {
    for (bool with_z : {false, true})
      for (const auto& [act, params] : acts) {
        const int64_t oh = (k.h + k.pt + k.pb - k.kh) / k.s + 1, ow = (k.w + k.pl + k.pr - k.kw) / k.s + 1;
        SCOPED_TRACE("c" + std::to_string(k.c) + " " + std::to_string(k.h) + "x" + std::to_string(k.w) + " k" +
                     std::to_string(k.kh) + "x" + std::to_string(k.kw) + " s" + std::to_string(k.s) + " z" +
                     std::to_string(with_z) + " " + act);
        std::vector<Tensor> in = {rnd({2, k.c, k.h, k.w}, seed++), rnd({k.c, 1, k.kh, k.kw}, seed++), rnd({k.c}, seed++)};
        if (with_z) in.push_back(rnd({2, k.c, oh, ow}, seed++));
        ir::Attributes at = {{"group", attr_int(k.c)},
                                                   {"kernel_shape", attr_ints({k.kh, k.kw})},
                                                   {"pads", attr_ints({k.pt, k.pl, k.pb, k.pr})},
                                                   {"strides", attr_ints({k.s, k.s})}};
        if (!act.empty()) at["activation"] = attr_string(act);
        if (!params.empty()) at["activation_params"] = attr_floats(params);
        const auto want = run_with(CpuIsa::kGeneric, "FusedConv", in, at, 1, 1, "com.dlrt");
        for (CpuIsa isa : testing::vector_isas()) {
          SCOPED_TRACE(cpu_isa_name(isa));
          expect_same(run_with(isa, "FusedConv", in, at, 1, 1, "com.dlrt"), want, 2e-6f);
        }
      }
  }
}

// A general Conv at width stride 2: its im2col rows come from the AVX-512 stride-2 gather.
TEST(CpuIsa, StridedConvRowsMatchGeneric) {
  SKIP_WITHOUT_AVX512();
  uint32_t seed = 200;
  for (int64_t w : {31, 32, 33, 34, 35, 47, 64, 65, 97}) {
    for (int64_t pad : {0, 1, 2}) {
      SCOPED_TRACE("width " + std::to_string(w) + " pad " + std::to_string(pad));
      std::vector<Tensor> in = {rnd({1, 3, 9, w}, seed++), rnd({5, 3, 3, 3}, seed++), rnd({5}, seed++)};
      ir::Attributes at = {{"kernel_shape", attr_ints({3, 3})},
                                                 {"pads", attr_ints({pad, pad, pad, pad})},
                                                 {"strides", attr_ints({2, 2})}};
      const auto want = run_with(CpuIsa::kGeneric, "Conv", in, at);
      expect_same(run_with(CpuIsa::kAvx512, "Conv", in, at), want, 2e-6f);
    }
  }
}

// Attention: key counts 1..33 (and 40, 67), head dims with odd tails, per-key and scalar masks, a fully masked row.
TEST(CpuIsa, AttentionMatchesGeneric) {
  if (testing::vector_isas().empty()) GTEST_SKIP() << "this CPU has no AVX2/AVX-512: nothing but the scalar path to compare";
  uint32_t seed = 100;
  for (int64_t skv : {1, 2, 5, 15, 16, 17, 31, 32, 33, 40, 67}) {
    for (int64_t d : {3, 16, 17, 32, 40, 64}) {
      const int64_t B = 1, H = 2, Sq = 13;  // AVX2: two 6-row blocks and 1 row
      SCOPED_TRACE("Skv " + std::to_string(skv) + " D " + std::to_string(d));
      std::vector<Tensor> in = {rnd({B, Sq, H, d}, seed++, -2, 2), rnd({B, skv, H, d}, seed++, -2, 2),
                                rnd({B, H, skv, d}, seed++)};
      ir::Attributes at = {{"scale", attr_float(0.3f)}, {"q_layout", attr_string("bshd")},
                                                 {"k_layout", attr_string("bshd")}, {"v_layout", attr_string("bhsd")},
                                                 {"output_layout", attr_string("bshd")}};
      auto want = run_with(CpuIsa::kGeneric, "Attention", in, at, 1, 1, "com.dlrt");
      for (CpuIsa isa : testing::vector_isas()) expect_same(run_with(isa, "Attention", in, at, 1, 1, "com.dlrt"), want, 2e-5f);
      // Per-key mask, one row fully masked (-1e30, as exporters write finfo.min).
      Tensor mask = rnd({B, 1, Sq, skv}, seed++, -4, 0);
      for (int64_t j = 0; j < skv; ++j) mask.data<float>()[2 * skv + j] = -1e30f;
      for (int64_t r = 0; r < Sq && skv > 1; ++r) mask.data<float>()[r * skv + skv - 1] = -3.4028235e38f;  // padded key
      in.push_back(mask);
      want = run_with(CpuIsa::kGeneric, "Attention", in, at, 1, 1, "com.dlrt");
      for (CpuIsa isa : testing::vector_isas()) expect_same(run_with(isa, "Attention", in, at, 1, 1, "com.dlrt"), want, 2e-5f);
      // A mask broadcast along the keys (one value per query row).
      in.back() = rnd({B, 1, Sq, 1}, seed++, -4, 0);
      want = run_with(CpuIsa::kGeneric, "Attention", in, at, 1, 1, "com.dlrt");
      for (CpuIsa isa : testing::vector_isas()) expect_same(run_with(isa, "Attention", in, at, 1, 1, "com.dlrt"), want, 2e-5f);
    }
  }
}

// LayerNormalization rows of 1..33 (and wider) elements, with and without B, with Mean/InvStdDev outputs.
TEST(CpuIsa, LayerNormMatchesGeneric) {
  if (testing::vector_isas().empty()) GTEST_SKIP() << "this CPU has no AVX2/AVX-512: nothing but the scalar path to compare";
  uint32_t seed = 300;
  for (int64_t n = 1; n <= 40; ++n) {
    for (bool with_b : {false, true}) {
      SCOPED_TRACE("n " + std::to_string(n) + (with_b ? " with B" : ""));
      // An offset mean checks the two-pass variance.
      std::vector<Tensor> in = {rnd({3, 5, n}, seed++, 90.0f, 110.0f), rnd({n}, seed++)};
      if (with_b) in.push_back(rnd({n}, seed++));
      ir::Attributes at = {{"axis", attr_int(-1)}, {"epsilon", attr_float(1e-5f)}};
      const auto want = run_with(CpuIsa::kGeneric, "LayerNormalization", in, at, 3);
      for (CpuIsa isa : testing::vector_isas()) expect_same(run_with(isa, "LayerNormalization", in, at, 3), want, 2e-5f);
    }
  }
}

// Rows where a one-pass variance could cancel: a mean 1e6 times the
// spread, and a first element (the AVX-512 moments' shift) far out from
// the rest. The normalized outputs, the mean and 1/std must match the
// generic two-pass moments.
TEST(CpuIsa, LayerNormMomentsOfOffsetRowsAndOutliers) {
  if (testing::vector_isas().empty()) GTEST_SKIP() << "this CPU has no AVX2/AVX-512: nothing but the scalar path to compare";
  for (int64_t n : {7, 384, 1000}) {
    SCOPED_TRACE("n " + std::to_string(n));
    Tensor x = rnd({4, n}, 310 + static_cast<uint32_t>(n), -0.01f, 0.01f);
    float* xv = x.data<float>();
    for (int64_t i = 0; i < n; ++i) xv[i] += 10000.0f;  // row 0: offset mean
    xv[n] = 5000.0f;                                   // row 1: an outlier first
    xv[2 * n + n - 1] = -3000.0f;                      // row 2: an outlier last
    std::vector<Tensor> in = {x, rnd({n}, 400), rnd({n}, 401)};
    ir::Attributes at = {{"axis", attr_int(-1)}, {"epsilon", attr_float(1e-12f)}};
    const auto want = run_with(CpuIsa::kGeneric, "LayerNormalization", in, at, 3);
    for (CpuIsa isa : testing::vector_isas()) expect_same(run_with(isa, "LayerNormalization", in, at, 3), want, 2e-5f);
  }
}

// Softmax over rows of 1..40 elements (and one of 1000), with +-inf and NaN rows.
TEST(CpuIsa, SoftmaxRowsMatchGeneric) {
  SKIP_WITHOUT_AVX512();
  uint32_t seed = 400;
  std::vector<int64_t> lengths;
  for (int64_t n = 1; n <= 40; ++n) lengths.push_back(n);
  for (int64_t n : {63, 64, 65, 127, 128, 130, 1000}) lengths.push_back(n);  // around the 64-lane step
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    for (int64_t n : lengths) {
      SCOPED_TRACE(std::string(op) + " n " + std::to_string(n));
      Tensor x = rnd({6, n}, seed++, -30.0f, 30.0f);
      float* d = x.data<float>();
      if (n > 1) d[n] = -std::numeric_limits<float>::infinity();  // row 1: one -inf (alone it is NaN)
      if (n > 2) d[2 * n + 2] = -1e30f;                 // row 2: a huge negative (exp underflows to 0)
      for (int64_t j = 0; j < n; ++j) d[3 * n + j] = -1e30f;  // row 3: all equal
      const auto want = run_with(CpuIsa::kGeneric, op, {x}, {{"axis", attr_int(-1)}}, 1, 13);
      expect_same(run_with(CpuIsa::kAvx512, op, {x}, {{"axis", attr_int(-1)}}, 1, 13), want, 1e-6f);
      // A NaN or +inf makes the row NaN on both paths.
      d[4 * n + n / 2] = std::numeric_limits<float>::quiet_NaN();
      d[5 * n + n - 1] = std::numeric_limits<float>::infinity();
      const auto got = run_with(CpuIsa::kAvx512, op, {x}, {{"axis", attr_int(-1)}}, 1, 13);
      const auto ref = run_with(CpuIsa::kGeneric, op, {x}, {{"axis", attr_int(-1)}}, 1, 13);
      ASSERT_EQ(got.size(), 1u);
      for (int64_t i = 4 * n; i < 6 * n; ++i)
        EXPECT_EQ(std::isnan(got[0].data<float>()[i]), std::isnan(ref[0].data<float>()[i])) << "at " << i;
    }
  }
}

}  // namespace
}  // namespace dlrt::cpu
