// com.dlrt Attention against a straightforward reference.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernels/gemm_amx.h"
#include "backends/cpu/kernels/gemm_bf16.h"
#include "backends/cpu/kernels/isa.h"
#include "exec/kernel_build_options.h"
#include "kernel_test_util.h"

namespace dlrt::cpu::testing {
namespace {

Tensor rnd(Shape s, uint32_t seed, float lo = -1, float hi = 1) {
  auto t = Tensor::allocate(DType::kFloat32, s).value();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = d(rng);
  return t;
}

// Reference on [B,H,S,D] inputs, mask [B,1,1,Skv] or empty; out [B,H,Sq,Dv].
std::vector<float> reference(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                             const std::vector<float>* mask, int64_t B, int64_t H, int64_t Sq, int64_t Skv, int64_t D,
                             int64_t Dv, float scale) {
  std::vector<float> out(B * H * Sq * Dv);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < Sq; ++i) {
        std::vector<double> s(Skv);
        double mx = -1e300;
        for (int64_t j = 0; j < Skv; ++j) {
          double acc = 0;
          for (int64_t c = 0; c < D; ++c) acc += double(q[((b * H + h) * Sq + i) * D + c]) * k[((b * H + h) * Skv + j) * D + c];
          s[j] = acc * scale + (mask ? (*mask)[b * Skv + j] : 0.0);
          mx = std::max(mx, s[j]);
        }
        double sum = 0;
        for (auto& x : s) sum += (x = std::exp(x - mx));
        for (int64_t c = 0; c < Dv; ++c) {
          double acc = 0;
          for (int64_t j = 0; j < Skv; ++j) acc += s[j] / sum * v[((b * H + h) * Skv + j) * Dv + c];
          out[((b * H + h) * Sq + i) * Dv + c] = static_cast<float>(acc);
        }
      }
  return out;
}

std::vector<float> values(const Tensor& t) { return std::vector<float>(t.data<float>(), t.data<float>() + t.size()); }

// [B,H,S,D] -> [B,S,H,D] (the same permutation both ways).
Tensor swap12(const Tensor& t) {
  const auto& s = t.shape();
  auto r = Tensor::allocate(DType::kFloat32, {s[0], s[2], s[1], s[3]}).value();
  for (int64_t a = 0; a < s[0]; ++a)
    for (int64_t b = 0; b < s[1]; ++b)
      for (int64_t c = 0; c < s[2]; ++c)
        for (int64_t d = 0; d < s[3]; ++d)
          r.data<float>()[((a * s[2] + c) * s[1] + b) * s[3] + d] = t.data<float>()[((a * s[1] + b) * s[2] + c) * s[3] + d];
  return r;
}

ir::Attributes layouts(const char* q, const char* k, const char* v, const char* out, float scale) {
  return {{"q_layout", attr_string(q)}, {"k_layout", attr_string(k)}, {"v_layout", attr_string(v)},
          {"output_layout", attr_string(out)}, {"scale", attr_float(scale)}};
}

TEST(Attention, BhsdMatchesReferenceAcrossSizes) {
  // Odd sizes exercise the row-block, key-tail and head-dim tails.
  for (auto [B, H, Sq, Skv, D, Dv] : std::vector<std::array<int64_t, 6>>{
           {1, 1, 1, 1, 1, 1}, {2, 3, 5, 7, 8, 8}, {1, 12, 33, 33, 32, 32}, {2, 2, 17, 9, 20, 19}, {1, 2, 64, 130, 64, 64}}) {
    auto q = rnd({B, H, Sq, D}, 1), k = rnd({B, H, Skv, D}, 2), v = rnd({B, H, Skv, Dv}, 3);
    float scale = 1.0f / std::sqrt(static_cast<float>(D));
    auto out = run_op("Attention", {q, k, v}, layouts("bhsd", "bhsd", "bhsd", "bhsd", scale), 1, 1, "com.dlrt");
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    expect_near((*out)[0], reference(values(q), values(k), values(v), nullptr, B, H, Sq, Skv, D, Dv, scale), 1e-5f);
  }
}

TEST(Attention, BshdLayoutsAndMask) {
  const int64_t B = 2, H = 3, S = 19, D = 16;
  auto q = rnd({B, H, S, D}, 4), k = rnd({B, H, S, D}, 5), v = rnd({B, H, S, D}, 6);
  auto mask = Tensor::allocate(DType::kFloat32, {B, 1, 1, S}).value();
  std::vector<float> mv(B * S, 0.0f);
  for (int64_t j = 11; j < S; ++j) mv[S + j] = -3.4028e38f;  // second batch row padded
  for (int64_t i = 0; i < B * S; ++i) mask.data<float>()[i] = mv[i];
  auto want = reference(values(q), values(k), values(v), &mv, B, H, S, S, D, D, 0.25f);
  // Q, V as [B,S,H,D]; K as Kᵀ [B,H,D,S]; output [B,S,H,D].
  auto kt = Tensor::allocate(DType::kFloat32, {B, H, D, S}).value();
  for (int64_t bh = 0; bh < B * H; ++bh)
    for (int64_t j = 0; j < S; ++j)
      for (int64_t c = 0; c < D; ++c) kt.data<float>()[(bh * D + c) * S + j] = k.data<float>()[(bh * S + j) * D + c];
  auto out = run_op("Attention", {swap12(q), kt, swap12(v), mask}, layouts("bshd", "bhds", "bshd", "bshd", 0.25f), 1,
                    1, "com.dlrt");
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_EQ((*out)[0].shape(), (Shape{B, S, H, D}));
  expect_near(swap12((*out)[0]), want, 1e-5f);
}

// Masks of other shapes than [B,1,1,Skv]: one value per query row
// ([1,1,Sq,1], broadcast over the keys) and a full [B,H,Sq,Skv] one; Skv not
// a multiple of the 32-key score block, so the block's padding keys must stay
// out of each row's maximum.
TEST(Attention, MaskBroadcastShapes) {
  const int64_t B = 2, H = 3, Sq = 11, Skv = 37, D = 16;
  auto q = rnd({B, H, Sq, D}, 16), k = rnd({B, H, Skv, D}, 17), v = rnd({B, H, Skv, D}, 18);
  const float scale = 0.5f;
  // The reference with mask(b, h, i, j) added to the scaled scores.
  auto want_for = [&](const std::function<double(int64_t, int64_t, int64_t, int64_t)>& mask) {
    std::vector<float> out(B * H * Sq * D);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < Sq; ++i) {
          std::vector<double> s(Skv);
          double mx = -1e300, sum = 0;
          for (int64_t j = 0; j < Skv; ++j) {
            double acc = 0;
            for (int64_t c = 0; c < D; ++c)
              acc += double(q.data<float>()[((b * H + h) * Sq + i) * D + c]) *
                     k.data<float>()[((b * H + h) * Skv + j) * D + c];
            s[j] = acc * scale + mask(b, h, i, j);
            mx = std::max(mx, s[j]);
          }
          for (auto& x : s) sum += (x = std::exp(x - mx));
          for (int64_t c = 0; c < D; ++c) {
            double acc = 0;
            for (int64_t j = 0; j < Skv; ++j) acc += s[j] / sum * v.data<float>()[((b * H + h) * Skv + j) * D + c];
            out[((b * H + h) * Sq + i) * D + c] = static_cast<float>(acc);
          }
        }
    return out;
  };
  // Rows far below 0 (per-row masks to -120, one row of the full mask at
  // -100): a maximum that took in the padding keys would underflow every
  // exp of such a row to 0.
  auto per_row = rnd({1, 1, Sq, 1}, 19, -120, 30);
  auto full = rnd({B, H, Sq, Skv}, 20, -30, 30);
  for (int64_t j = 30; j < Skv; ++j) full.data<float>()[((1 * H + 2) * Sq + 4) * Skv + j] = -3.4028e38f;
  for (int64_t j = 0; j < Skv; ++j) full.data<float>()[((0 * H + 1) * Sq + 2) * Skv + j] = -100.0f - 0.1f * j;
  const auto a = layouts("bhsd", "bhsd", "bhsd", "bhsd", scale);
  for (int threads : {1, 2}) {
    auto out = run_op("Attention", {q, k, v, per_row}, a, 1, 1, "com.dlrt", threads);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    expect_near((*out)[0], want_for([&](int64_t, int64_t, int64_t i, int64_t) { return per_row.data<float>()[i]; }),
                1e-5f);
    out = run_op("Attention", {q, k, v, full}, a, 1, 1, "com.dlrt", threads);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    expect_near((*out)[0], want_for([&](int64_t b, int64_t h, int64_t i, int64_t j) {
                  return full.data<float>()[((b * H + h) * Sq + i) * Skv + j];
                }),
                1e-5f);
  }
}

TEST(Attention, PackedQkv) {
  const int64_t B = 2, N = 10, H = 2, D = 8;
  auto x = rnd({B, N, 3, H, D}, 7, -2, 2);
  // Unpack to [B,H,N,D] for the reference: slot 2 is Q, 0 is K, 1 is V here.
  auto unpack = [&](int64_t slot) {
    std::vector<float> r(B * H * N * D);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t n = 0; n < N; ++n)
        for (int64_t h = 0; h < H; ++h)
          for (int64_t d = 0; d < D; ++d)
            r[((b * H + h) * N + n) * D + d] = x.data<float>()[(((b * N + n) * 3 + slot) * H + h) * D + d];
    return r;
  };
  auto want = reference(unpack(2), unpack(0), unpack(1), nullptr, B, H, N, N, D, D, 0.3f);
  auto out = run_op("Attention", {x, Tensor(), Tensor()},
                    {{"qkv_layout", attr_string("packed")}, {"packed_indices", attr_ints({2, 0, 1})},
                     {"output_layout", attr_string("bhsd")}, {"scale", attr_float(0.3f)}},
                    1, 1, "com.dlrt");
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], want, 1e-5f);
}

TEST(Attention, BadInputsAreErrors) {
  auto q = rnd({1, 2, 4, 8}, 8);
  auto bad_k = rnd({1, 2, 4, 7}, 9);
  auto a = layouts("bhsd", "bhsd", "bhsd", "bhsd", 1.0f);
  EXPECT_FALSE(run_op("Attention", {q, bad_k, q}, a, 1, 1, "com.dlrt").ok());
  EXPECT_FALSE(run_op("Attention", {q, q, rnd({2, 4, 8}, 10)}, a, 1, 1, "com.dlrt").ok());
  EXPECT_FALSE(run_op("Attention", {q, q, q, rnd({1, 3, 1, 4}, 11)}, a, 1, 1, "com.dlrt").ok());  // mask H=3
  EXPECT_FALSE(run_op("Attention", {q, q, q}, layouts("bshd", "nope", "bhsd", "bhsd", 1.0f), 1, 1, "com.dlrt").ok());
  auto x = rnd({1, 4, 2, 2, 8}, 12);  // only 2 slots: index 2 is out of range
  EXPECT_FALSE(run_op("Attention", {x, Tensor(), Tensor()},
                      {{"qkv_layout", attr_string("packed")}, {"packed_indices", attr_ints({0, 1, 2})}}, 1, 1, "com.dlrt")
                   .ok());
}

TEST(Attention, FullyMaskedRowGivesUniformAverageNotNaN) {
  auto q = rnd({1, 1, 2, 4}, 13), k = rnd({1, 1, 3, 4}, 14), v = rnd({1, 1, 3, 4}, 15);
  auto mask = Tensor::from_vector<float>({1, 1, 1, 3}, {-3.4028e38f, -3.4028e38f, -3.4028e38f});
  auto out = run_op("Attention", {q, k, v, mask}, layouts("bhsd", "bhsd", "bhsd", "bhsd", 1.0f), 1, 1, "com.dlrt");
  ASSERT_TRUE(out.ok());
  for (int64_t i = 0; i < (*out)[0].size(); ++i) EXPECT_FALSE(std::isnan((*out)[0].data<float>()[i]));
}

// Scores as a trained model has them (issue 52 item 5): each query row puts
// one key about 45 above the rest, so its softmax saturates (the random inputs
// above give near-uniform rows that average any mistake away), padded keys
// at float's lowest (finfo.min, as exporters write the mask), and V with two
// outlier channels 100x the others. Every ISA path the CPU has, on 1 and 2
// threads (2 threads, 3 heads: each head's rows split into two blocks),
// against the double reference.
TEST(Attention, SaturatedSoftmaxOnEveryIsa) {
  const int64_t B = 1, H = 3, Sq = 33, Skv = 37, D = 32, Dv = 24;
  auto q = rnd({B, H, Sq, D}, 31), k = rnd({B, H, Skv, D}, 32), v = rnd({B, H, Skv, Dv}, 33);
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  // Key (7 i + 3) mod 29 of query row i < 29 (keys 29.. are padding) gets 24
  // times Q's row plus a constant: its scaled score leads by about 45.
  for (int64_t bh = 0; bh < B * H; ++bh)
    for (int64_t i = 0; i < 29; ++i) {
      const int64_t j = (7 * i + 3) % 29;
      for (int64_t c = 0; c < D; ++c)
        k.data<float>()[(bh * Skv + j) * D + c] = 24.0f * q.data<float>()[(bh * Sq + i) * D + c] + 0.1f * static_cast<float>(i % 5);
    }
  for (int64_t n = 0; n < B * H * Skv; ++n)
    for (int64_t c : {1, 17}) v.data<float>()[n * Dv + c] *= 100.0f;
  std::vector<float> mv(static_cast<size_t>(B * Skv), 0.0f);
  for (int64_t j = 29; j < Skv; ++j) mv[static_cast<size_t>(j)] = std::numeric_limits<float>::lowest();
  auto mask = Tensor::allocate(DType::kFloat32, {B, 1, 1, Skv}).value();
  std::copy(mv.begin(), mv.end(), mask.data<float>());
  const auto want = reference(values(q), values(k), values(v), &mv, B, H, Sq, Skv, D, Dv, scale);
  // The leading key takes nearly all the weight: the output follows V's row of that key.
  int saturated = 0;
  for (int64_t i = 0; i < 29; ++i) {
    const int64_t j = (7 * i + 3) % 29;
    saturated += std::abs(want[i * Dv + 1] - v.data<float>()[j * Dv + 1]) < 1.0f;
  }
  EXPECT_GT(saturated, 25) << "the test's scores do not saturate the softmax";
  for (CpuIsa isa : {CpuIsa::kGeneric, CpuIsa::kAvx2, CpuIsa::kAvx512}) {
    if (isa > detected_cpu_isa()) continue;
    ScopedCpuIsa cap(isa);
    for (int threads : {1, 2}) {
      SCOPED_TRACE(std::string(cpu_isa_name(isa)) + ", " + std::to_string(threads) + " threads");
      auto out = run_op("Attention", {q, k, v, mask}, layouts("bhsd", "bhsd", "bhsd", "bhsd", scale), 1, 1, "com.dlrt",
                        threads);
      ASSERT_TRUE(out.ok()) << out.status().to_string();
      // Float sums of V's 100-sized outliers (rows 29.. average them, with
      // cancellation): an absolute term for those; a wrong key costs ~100.
      const float* got = (*out)[0].data<float>();
      for (size_t n = 0; n < want.size(); ++n)
        ASSERT_NEAR(got[n], want[n], 1e-5f * (1 + std::abs(want[n])) + 5e-4f) << "at index " << n;
    }
  }
}

// Precision bf16x3 (the kernel created under it, on an AMX machine): heads
// of 64+ dims over 64+ keys run their products on AMX tiles, within bf16x3's
// error of the reference; smaller heads stay on the fp32 kernel.
TEST(Attention, Bf16x3RunsLargeHeadsOnAmx) {
  if (!amx_bf16x3_available())
    GTEST_SKIP() << "no AMX-BF16 + AVX512-BF16 here (or Linux refused the tile state, or DLRT_CPU_ISA is below "
                    "avx512): attention never runs on AMX on this machine";
  KernelBuildOptions options;
  options.precision = GemmPrecision::kBf16x3;
  ScopedKernelBuildOptions scope(options);
  struct Case {
    int64_t B, H, Sq, Skv, D, Dv;
    bool amx;
  };
  for (const Case& c : std::vector<Case>{{1, 3, 197, 197, 64, 64, true},    // tiny_vit
                                         {2, 2, 70, 65, 96, 40, true},      // key, row and head-dim tails
                                         {1, 2, 130, 64, 64, 64, true},     // several 64-row blocks
                                         {1, 12, 128, 128, 32, 32, false},  // minilm: 32 dims
                                         {1, 2, 16, 16, 64, 64, false}}) {  // 16 keys
    SCOPED_TRACE(::testing::PrintToString(std::vector<int64_t>{c.B, c.H, c.Sq, c.Skv, c.D, c.Dv}));
    auto q = rnd({c.B, c.H, c.Sq, c.D}, 21), k = rnd({c.B, c.H, c.Skv, c.D}, 22), v = rnd({c.B, c.H, c.Skv, c.Dv}, 23);
    // A padding mask on the second batch row's last keys.
    auto mask = Tensor::allocate(DType::kFloat32, {c.B, 1, 1, c.Skv}).value();
    std::vector<float> mv(static_cast<size_t>(c.B * c.Skv), 0.0f);
    for (int64_t j = c.Skv - 5; j < c.Skv && c.B > 1; ++j) mv[static_cast<size_t>(c.Skv + j)] = -3.4028e38f;
    for (size_t i = 0; i < mv.size(); ++i) mask.data<float>()[i] = mv[i];
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.D));
    const uint64_t before = attention_amx_runs();
    auto out = run_op("Attention", {q, k, v, mask}, layouts("bhsd", "bhsd", "bhsd", "bhsd", scale), 1, 1, "com.dlrt");
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    if (c.amx) EXPECT_GT(attention_amx_runs(), before) << "did not run on AMX";
    else EXPECT_EQ(attention_amx_runs(), before) << "ran on AMX";
    expect_near((*out)[0], reference(values(q), values(k), values(v), &mv, c.B, c.H, c.Sq, c.Skv, c.D, c.Dv, scale),
                c.amx ? 1e-4f : 1e-5f);
  }
}

// Precision bf16 (the kernel created under it, on a CPU with AVX512-BF16):
// every head whose Q and V dims are contiguous runs its two products on
// VDPBF16PS, within bf16's error of the reference (inputs and
// probabilities rounded to 8 bits: about 1e-2 here) and not at f32's.
TEST(Attention, Bf16RunsOnVdpbf16ps) {
  if (!bf16_dot_available())
    GTEST_SKIP() << "precision bf16's attention needs AVX512-BF16 (" << bf16_dot_unavailable_reason()
                 << "); its GEMM is tested on the scalar model in gemm_bf16_test";
  KernelBuildOptions options;
  options.precision = GemmPrecision::kBf16;
  ScopedKernelBuildOptions scope(options);
  struct Case {
    int64_t B, H, Sq, Skv, D, Dv;
  };
  for (const Case& c : std::vector<Case>{{1, 12, 128, 128, 32, 32}, {2, 2, 70, 65, 96, 40}, {1, 2, 3, 5, 7, 9}}) {
    SCOPED_TRACE(::testing::PrintToString(std::vector<int64_t>{c.B, c.H, c.Sq, c.Skv, c.D, c.Dv}));
    auto q = rnd({c.B, c.H, c.Sq, c.D}, 31), k = rnd({c.B, c.H, c.Skv, c.D}, 32), v = rnd({c.B, c.H, c.Skv, c.Dv}, 33);
    auto mask = Tensor::allocate(DType::kFloat32, {c.B, 1, 1, c.Skv}).value();
    std::vector<float> mv(static_cast<size_t>(c.B * c.Skv), 0.0f);
    for (int64_t j = c.Skv - 2; j < c.Skv && c.B > 1; ++j) mv[static_cast<size_t>(c.Skv + j)] = -3.4028e38f;
    for (size_t i = 0; i < mv.size(); ++i) mask.data<float>()[i] = mv[i];
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.D));
    const uint64_t before = attention_bf16_runs();
    auto out = run_op("Attention", {q, k, v, mask}, layouts("bhsd", "bhsd", "bhsd", "bhsd", scale), 1, 1, "com.dlrt");
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    EXPECT_GT(attention_bf16_runs(), before) << "did not run on VDPBF16PS";
    const std::vector<float> want =
        reference(values(q), values(k), values(v), &mv, c.B, c.H, c.Sq, c.Skv, c.D, c.Dv, scale);
    expect_near((*out)[0], want, 2e-2f);
    double max_err = 0;
    for (size_t i = 0; i < want.size(); ++i)
      max_err = std::max(max_err, std::fabs(double((*out)[0].data<float>()[i]) - want[i]));
    EXPECT_GT(max_err, 1e-5) << "as close as f32: were the products bf16?";
  }
}

}  // namespace
}  // namespace dlrt::cpu::testing
