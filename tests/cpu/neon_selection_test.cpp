// What an aarch64 CPU runs (CpuIsa::kNeon): the kernel families written over
// simd/ selected at 128 bits through a whole session (graph passes and
// kernels), each checked by its call counter (simd_calls, width.h), so that a
// test fails when the portable path ran in its place. Natively on aarch64
// (make test-arm64), and on x86 at the same level under ScopedCpuIsa(kNeon),
// where the 128-bit code is compiled to SSE: the same choices, tested by both.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "../backend/plugin_test_util.h"
#include "../ir/graph_builder.h"
#include "backends/cpu/kernels/attention.h"
#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/gemm_kernels.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/simd/width.h"
#include "dlrt/session.h"
#include "ir/onnx_export.h"

namespace dlrt::cpu {
namespace {

using testing::ai;
using testing::ais;
using testing::GraphBuilder;
using testing::random_tensor;
using testing::ScopedEnv;

#define NEON_LEVEL_OR_SKIP(scope)                                                                                   \
  ScopedCpuIsa scope(CpuIsa::kNeon);                                                                                \
  if (cpu_isa() != CpuIsa::kNeon)                                                                                   \
  GTEST_SKIP() << "this CPU runs no simd/ kernels (detected " << cpu_isa_name(detected_cpu_isa())                   \
               << "): the neon level needs aarch64, or an x86 CPU with AVX2"

// y = Conv(x) of m output channels with k x k filters, stride s, group g, padded k / 2; then `then` (empty: none).
struct Net {
  GraphBuilder b;
  ir::ValueId x;
  uint32_t seed = 3;
  Net(int64_t c, int64_t h, int64_t w) { x = b.input("x", {1, c, h, w}); }
  ir::ValueId conv(ir::ValueId in, int64_t c, int64_t m, int64_t k, int64_t s = 1, int64_t group = 1) {
    const int64_t p = k / 2;
    const auto wv = b.constant("w" + std::to_string(seed), random_tensor({m, c / group, k, k}, seed, -0.3f, 0.3f));
    const auto bv = b.constant("b" + std::to_string(seed), random_tensor({m}, seed + 100));
    ++seed;
    return b.node("Conv", {in, wv, bv},
                  {{"pads", ais({p, p, p, p})}, {"strides", ais({s, s})}, {"group", ai(group)}});
  }
  std::string bytes(ir::ValueId y) {
    b.output(y);
    auto r = ir::export_onnx(*b.graph());
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    return r.ok() ? *r : std::string();
  }
};

// Runs the model once at the current cpu_isa(); its output and the report's vector_isa.
Tensor run_model(const std::string& bytes, const Tensor& x, std::string* vector_isa = nullptr) {
  SessionOptions o;
  o.device = "cpu";
  o.threads = 2;
  auto s = Session::create_from_bytes(bytes, o);
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  if (!s.ok()) return Tensor();
  RunReport report;
  auto out = (*s)->run({{"x", x}}, &report);
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  if (vector_isa && !report.partitions.empty()) *vector_isa = report.partitions[0].vector_isa;
  return out.ok() && !out->empty() ? (*out)[0] : Tensor();
}

// Calls of each entry at 128 bits while `f` runs.
std::map<std::string, uint64_t> calls_during(const std::vector<std::string>& entries, const auto& f) {
  std::map<std::string, uint64_t> before;
  for (const auto& e : entries) before[e] = simd_calls(e, SimdWidth::k128);
  f();
  std::map<std::string, uint64_t> d;
  for (const auto& e : entries) d[e] = simd_calls(e, SimdWidth::k128) - before[e];
  return d;
}

// The model at the neon level must call every entry of `want` at 128 bits
// (and the report say "neon"); at generic none of `entries`; outputs close.
void expect_neon_kernels(const std::string& bytes, const Tensor& x, const std::vector<std::string>& entries,
                         const std::vector<std::string>& want) {
  Tensor got, ref;
  std::string isa;
  const auto neon = calls_during(entries, [&] {
    ScopedCpuIsa level(CpuIsa::kNeon);
    got = run_model(bytes, x, &isa);
  });
  EXPECT_EQ(isa, "neon");
  for (const auto& e : want) EXPECT_GT(neon.at(e), 0u) << e << " did not run at 128 bits: the portable path ran";
  const auto generic = calls_during(entries, [&] {
    ScopedCpuIsa level(CpuIsa::kGeneric);
    ref = run_model(bytes, x, &isa);
  });
  EXPECT_EQ(isa, "generic");
  for (const auto& e : entries) EXPECT_EQ(generic.at(e), 0u) << e << " ran at the generic level";
  ASSERT_TRUE(got.valid() && ref.valid());
  testing::expect_close(got, ref, 2e-4f);
}

TEST(NeonSelection, Aarch64DetectsNeon) {
#if defined(__aarch64__)
  EXPECT_EQ(detected_cpu_isa(), CpuIsa::kNeon);
  EXPECT_TRUE(simd_width_runs(SimdWidth::k128));
  EXPECT_FALSE(simd_width_runs(SimdWidth::k256));
  EXPECT_FALSE(simd_width_runs(SimdWidth::k512));
  const char* env = std::getenv("DLRT_CPU_ISA");
  if (!env || !*env) {
    EXPECT_EQ(cpu_isa(), CpuIsa::kNeon);
    EXPECT_EQ(simd_width(), SimdWidth::k128);
    EXPECT_STREQ(cpu_isa_name(cpu_isa()), "neon");
  }
  {
    ScopedCpuIsa cap(CpuIsa::kAvx512);  // never above the hardware
    EXPECT_EQ(cpu_isa(), CpuIsa::kNeon);
  }
#else
  GTEST_SKIP() << "not an aarch64 build: its detection is checked under qemu-aarch64 (make test-arm64)";
#endif
}

TEST(NeonSelection, LevelRunsTheSimdLayerOnly) {
  NEON_LEVEL_OR_SKIP(level);
  EXPECT_EQ(simd_width(), SimdWidth::k128);
  EXPECT_TRUE(cpu_has_simd_kernels());
  EXPECT_FALSE(cpu_has_avx2());  // no x86 intrinsics path at this level
  ScopedCpuIsa generic(CpuIsa::kGeneric);
  EXPECT_FALSE(cpu_has_simd_kernels());
}

// A 3x3 conv with the blocked layout off: Winograd F(4x4, 3x3) on plain NCHW.
TEST(NeonSelection, WinogradF4x4) {
  NEON_LEVEL_OR_SKIP(level);
  ScopedEnv off("DLRT_DISABLE_PASSES", "blocked-layout");
  Net n(16, 20, 20);
  const auto bytes = n.bytes(n.conv(n.x, 16, 24, 3));
  expect_neon_kernels(bytes, random_tensor({1, 16, 20, 20}, 7), {"conv_winograd4"}, {"conv_winograd4"});
}

// Blocked regions: the blocked direct convs (a stem on plain input, 1x1, a
// stride-2 3x3), the blocked Winograd (blocked input, 48+ output channels),
// the blocked depthwise conv, max pool and the conversions in and out.
TEST(NeonSelection, BlockedLayout) {
  NEON_LEVEL_OR_SKIP(level);
  Net n(16, 24, 24);
  auto y = n.conv(n.x, 16, 32, 3);                // stem: plain NCHW input
  y = n.b.node("Relu", {n.conv(y, 32, 32, 1)});   // 1x1
  y = n.conv(y, 32, 48, 3);                       // Winograd F(4x4, 3x3), blocked
  y = n.conv(y, 48, 48, 3, 1, 48);                // depthwise
  y = n.conv(y, 48, 32, 3, 2);                    // stride 2
  y = n.b.node("MaxPool", {y}, {{"kernel_shape", ais({3, 3})}, {"strides", ais({2, 2})}, {"pads", ais({1, 1, 1, 1})}});
  y = n.conv(y, 32, 16, 1);
  const std::vector<std::string> entries = {"conv_winograd4_blocked", "blocked_conv_units", "blocked_depthwise_units",
                                            "blocked_max_pool16", "blocked_to_block16", "blocked_from_block16"};
  expect_neon_kernels(n.bytes(y), random_tensor({1, 16, 24, 24}, 8), entries, entries);
}

// A depthwise conv with the blocked layout off: one channel per lane, 4 lanes.
TEST(NeonSelection, DepthwiseLanes) {
  NEON_LEVEL_OR_SKIP(level);
  ScopedEnv off("DLRT_DISABLE_PASSES", "blocked-layout");
  Net n(12, 17, 19);
  const auto bytes = n.bytes(n.conv(n.x, 12, 12, 3, 1, 12));
  expect_neon_kernels(bytes, random_tensor({1, 12, 17, 19}, 9), {"depthwise_lanes"}, {"depthwise_lanes"});
}

// A depthwise conv of fewer channels than a NEON vector has lanes: the plane
// kernel (depthwise_plane.h), one channel at a time, at stride 2 (its even
// and odd column split).
TEST(NeonSelection, DepthwisePlane) {
  NEON_LEVEL_OR_SKIP(level);
  ScopedEnv off("DLRT_DISABLE_PASSES", "blocked-layout");
  Net n(3, 21, 26);
  const auto bytes = n.bytes(n.conv(n.x, 3, 3, 3, 2, 3));
  expect_neon_kernels(bytes, random_tensor({1, 3, 21, 26}, 10), {"depthwise_plane"}, {"depthwise_plane"});
}

// A 5x5 conv with the blocked layout off (no Winograd for 5x5): the direct
// conv on the 6 x 16 tile (conv_direct.h) at 128 bits.
TEST(NeonSelection, ConvDirect) {
  NEON_LEVEL_OR_SKIP(level);
  ScopedEnv off("DLRT_DISABLE_PASSES", "blocked-layout");
  Net n(8, 20, 20);
  const auto bytes = n.bytes(n.conv(n.x, 8, 16, 5));
  expect_neon_kernels(bytes, random_tensor({1, 8, 20, 20}, 11), {"conv_direct_sliced"}, {"conv_direct_sliced"});
}

// The float GEMM's paths: both operands packed per call (edge tiles: 37 x 45
// leaves 1 row and 13 columns), op(A) read in place against a pre-packed B
// (a Linear layer: 7 rows, 1 column past a 16-column panel) and the matrix-vector
// product (one column: dot products of A's rows). Each must run its 128-bit kernels at the neon level
// and none at the generic one, with C equal to a double-precision product.
TEST(NeonSelection, Gemm) {
  NEON_LEVEL_OR_SKIP(level);
  std::mt19937 rng(21);
  std::uniform_real_distribution<float> u(-1, 1);
  struct Case {
    int64_t M, N, K;
    bool packed_b;
    const char* entry;
  };
  const Case cases[] = {{37, 45, 70, false, "sgemm_kernels"}, {7, 17, 300, true, "sgemm_rows_kernel"},
                        {45, 1, 70, false, "sgemv_rows"}};
  const std::vector<std::string> entries = {"sgemm_kernels", "sgemm_rows_kernel", "sgemv_rows"};
  for (const Case& cs : cases) {
    std::vector<float> a(static_cast<size_t>(cs.M * cs.K)), b(static_cast<size_t>(cs.K * cs.N));
    for (auto& x : a) x = u(rng);
    for (auto& x : b) x = u(rng);
    std::vector<double> want(static_cast<size_t>(cs.M * cs.N), 0.0);
    for (int64_t i = 0; i < cs.M; ++i)
      for (int64_t p = 0; p < cs.K; ++p)
        for (int64_t j = 0; j < cs.N; ++j) want[i * cs.N + j] += double(a[i * cs.K + p]) * b[p * cs.N + j];
    for (CpuIsa isa : {CpuIsa::kNeon, CpuIsa::kGeneric}) {
      std::vector<float> c(static_cast<size_t>(cs.M * cs.N), NAN);
      const auto calls = calls_during(entries, [&] {
        ScopedCpuIsa cap(isa);
        std::shared_ptr<const PackedMatrix> pb;
        SgemmOperand oa{a.data(), cs.K, false, nullptr, nullptr}, ob{b.data(), cs.N, false, nullptr, nullptr};
        if (cs.packed_b) {
          pb = PackedMatrix::pack_b(false, cs.K, cs.N, b.data(), cs.N);
          ob = SgemmOperand{nullptr, 0, false, pb.get(), nullptr};
        }
        EXPECT_TRUE(sgemm_ex(cs.M, cs.N, cs.K, 1.0f, oa, ob, 0.0f, c.data(), cs.N, nullptr, nullptr).ok());
      });
      const std::string what = std::string(cpu_isa_name(isa)) + " M=" + std::to_string(cs.M);
      if (isa == CpuIsa::kNeon) {
        EXPECT_GT(calls.at(cs.entry), 0u) << what << ": " << cs.entry << " did not run at 128 bits: the portable path ran";
      } else {
        for (const auto& e : entries) EXPECT_EQ(calls.at(e), 0u) << what << ": " << e << " ran at the generic level";
      }
      for (size_t k = 0; k < c.size(); ++k)
        ASSERT_NEAR(c[k], want[k], 1e-4 * std::sqrt(double(cs.K)) * (1 + std::fabs(want[k]))) << what << " at " << k;
    }
  }
}

// The row and pooling kernels over simd/ (rows_vec.h, pool_planes.h):
// MaxPool and AveragePool (the separable passes), Softmax down the channels
// (columns) and along the last axis (rows), LayerNormalization and
// GlobalAveragePool.
TEST(NeonSelection, RowsAndPools) {
  NEON_LEVEL_OR_SKIP(level);
  ScopedEnv off("DLRT_DISABLE_PASSES", "blocked-layout");
  GraphBuilder b;
  auto x = b.input("x", {1, 8, 12, 12});
  auto y = b.node("MaxPool", {x}, {{"kernel_shape", ais({3, 3})}, {"pads", ais({1, 1, 1, 1})}});
  y = b.node("AveragePool", {y}, {{"kernel_shape", ais({2, 2})}, {"strides", ais({2, 2})}});
  y = b.node("Softmax", {y}, {{"axis", ai(1)}});
  y = b.node("LayerNormalization", {y, b.constant("ln_s", random_tensor({6}, 21, 0.5f, 1.5f)),
                                    b.constant("ln_b", random_tensor({6}, 22))},
             {{"axis", ai(-1)}});
  y = b.node("Softmax", {y}, {{"axis", ai(-1)}});
  b.output(b.node("GlobalAveragePool", {y}));
  auto bytes = ir::export_onnx(*b.graph());
  ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
  const std::vector<std::string> entries = {"pool_planes_run", "softmax_cols", "layer_norm_row", "softmax_row",
                                            "global_pool_planes"};
  expect_neon_kernels(*bytes, random_tensor({1, 8, 12, 12}, 23), entries, entries);
}

// The Erf op (kernels/erf.h): the vector erf at 128 bits, not std::erf.
TEST(NeonSelection, Erf) {
  NEON_LEVEL_OR_SKIP(level);
  GraphBuilder b;
  auto x = b.input("x", {2, 3, 17});
  b.output(b.node("Erf", {x}));
  auto bytes = ir::export_onnx(*b.graph());
  ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
  expect_neon_kernels(*bytes, random_tensor({2, 3, 17}, 41, -3.0f, 3.0f), {"erf_run"}, {"erf_run"});
}

// The activations and the GEMM/Conv output stage (gemm_epilogue_simd.h),
// which count no calls (they run once per GEMM tile): at the neon level
// apply_activation and apply_epilogue give the 128-bit instantiation's bits,
// which differ from the portable path's (<cmath>) somewhere for each kind
// below; at generic they give the portable path's.
TEST(NeonSelection, EpilogueAndActivations) {
  NEON_LEVEL_OR_SKIP(level);
  std::vector<float> xs;
  for (int i = 0; i < 203; ++i) xs.push_back(-6.0f + 0.0591f * static_cast<float>(i));
  const int64_t n = static_cast<int64_t>(xs.size());
  auto same_bits = [](const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
  };
  for (const char* name : {"Sigmoid", "Tanh", "Gelu", "Gelu_tanh", "Silu"}) {
    SCOPED_TRACE(name);
    auto a = make_activation(name, {});
    ASSERT_TRUE(a.ok());
    std::vector<float> neon = xs, w128 = xs, generic = xs;
    apply_activation(*a, neon.data(), n);
    apply_activation_at(SimdWidth::k128, *a, w128.data(), n);
    {
      ScopedCpuIsa cap(CpuIsa::kGeneric);
      apply_activation(*a, generic.data(), n);
    }
    EXPECT_TRUE(same_bits(neon, w128)) << "apply_activation did not run the 128-bit instantiation";
    EXPECT_FALSE(same_bits(w128, generic)) << "the 128-bit and portable results agree: the test cannot tell them apart";
    GemmEpilogue ep;
    ep.act = *a;
    ep.col_bias = xs.data();
    const int64_t rows = 3, cols = 67;
    std::vector<float> c(static_cast<size_t>(rows * cols), 0.25f);
    std::vector<float> neon_c = c, w128_c = c, generic_c = c;
    apply_epilogue(ep, neon_c.data(), cols, 0, 0, rows, cols);
    apply_epilogue_at(SimdWidth::k128, ep, w128_c.data(), cols, 0, 0, rows, cols);
    {
      ScopedCpuIsa cap(CpuIsa::kGeneric);
      apply_epilogue(ep, generic_c.data(), cols, 0, 0, rows, cols);
    }
    EXPECT_TRUE(same_bits(neon_c, w128_c)) << "apply_epilogue did not run the 128-bit instantiation";
    EXPECT_FALSE(same_bits(w128_c, generic_c));
    for (size_t i = 0; i < c.size(); ++i) ASSERT_NEAR(neon_c[i], generic_c[i], 1e-5f * (1 + std::fabs(generic_c[i])));
  }
}

// The attention's portable path takes the 128-bit softmax rows at the neon
// level (attention_simd.h), counted; the generic level none.
TEST(NeonSelection, AttentionSoftmax) {
  NEON_LEVEL_OR_SKIP(level);
  const int64_t Sq = 5, Skv = 37, D = 8;
  std::mt19937 rng(31);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> q(Sq * D), k(Skv * D), v(Skv * D), mask(Sq * Skv);
  for (auto* t : {&q, &k, &v, &mask})
    for (auto& x : *t) x = u(rng);
  attention::Problem p;
  p.B = p.H = 1, p.Sq = Sq, p.Skv = Skv, p.D = p.Dv = D;
  p.q = {q.data(), 0, 0, D, 1};
  p.k = {k.data(), 0, 0, D, 1};
  p.v = {v.data(), 0, 0, D, 1};
  p.mask = mask.data(), p.mq = Skv, p.mk = 1;
  p.os = D;
  p.scale = 0.35f;
  std::vector<float> got(Sq * D), want(Sq * D);
  const std::vector<std::string> entries = {"attention_softmax_rows"};
  for (CpuIsa isa : {CpuIsa::kNeon, CpuIsa::kGeneric}) {
    const auto calls = calls_during(entries, [&] {
      ScopedCpuIsa cap(isa);
      p.out = isa == CpuIsa::kNeon ? got.data() : want.data();
      attention::attend_generic(p, 0, 0, 0, Sq);
    });
    if (isa == CpuIsa::kNeon)
      EXPECT_GT(calls.at(entries[0]), 0u) << "the softmax rows did not run at 128 bits: the portable path ran";
    else
      EXPECT_EQ(calls.at(entries[0]), 0u) << "the 128-bit softmax rows ran at the generic level";
  }
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 2e-5f * (1 + std::fabs(want[i]))) << i;
}

// The recurrent step product (rnn_step_gemm.h, a batch of up to 8 rows) at 128 bits.
TEST(NeonSelection, RnnStep) {
  NEON_LEVEL_OR_SKIP(level);
  GraphBuilder b;
  auto x = b.input("x", {5, 3, 6});
  auto w = b.constant("w", random_tensor({1, 10, 6}, 31, -0.5f, 0.5f));
  auto r = b.constant("r", random_tensor({1, 10, 10}, 32, -0.5f, 0.5f));
  b.output(b.node("RNN", {x, w, r}, {{"hidden_size", ai(10)}}, 14));
  auto bytes = ir::export_onnx(*b.graph());
  ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
  const std::vector<std::string> entries = {"few_rows_gemm_acc"};
  expect_neon_kernels(*bytes, random_tensor({5, 3, 6}, 33), entries, entries);
}

}  // namespace
}  // namespace dlrt::cpu
