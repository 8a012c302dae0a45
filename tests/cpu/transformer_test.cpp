// com.dlrt Attention against a straightforward reference, and fuse_attention on
// the chain causal-LM exports write (exported_lm below).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <random>

#include "../ir/graph_builder.h"
#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernels/gemm_amx.h"
#include "backends/cpu/kernels/attention.h"
#include "backends/cpu/kernels/gemm_bf16.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/simd/width.h"
#include "exec/executor.h"
#include "exec/kernel_build_options.h"
#include "kernel_test_util.h"
#include "simd_width_test_util.h"

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

// The vector kernel (attention_simd.h) at every width this CPU runs (128
// bits on x86 too, where no ISA level picks it), against the portable
// kernel: key counts around every tile edge (2 vectors of keys a step),
// head dims with tails, row blocks cut short, per-key, scalar and no masks,
// a fully masked row, head dims strided and contiguous.
TEST(Attention, VectorKernelAtEveryWidthMatchesPortable) {
  std::mt19937 rng(81);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const int ran = for_each_runnable_width([&](SimdWidth w) {
    for (int64_t Skv : {1, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 40, 63, 64, 65, 67})
      for (int64_t D : {5, 16, 37})
        for (int64_t Sq : {1, 6, 9, 17})
          for (int mask = 0; mask < 4; ++mask)
            for (bool contig : {true, false}) {
              const int64_t H = 2, Dv = D + 3;
              std::vector<float> q(H * Sq * D), k(H * Skv * D), v(H * Skv * Dv), m(Sq * Skv);
              for (auto* x : {&q, &k, &v, &m})
                for (float& y : *x) y = nd(rng);
              for (int64_t i = 0; i < Sq * Skv; i += 3) m[i] = -std::numeric_limits<float>::infinity();
              if (mask == 3)
                for (int64_t j = 0; j < Skv; ++j) m[j] = -std::numeric_limits<float>::infinity();
              attention::Problem p;
              p.B = 1, p.H = H, p.Sq = Sq, p.Skv = Skv, p.D = D, p.Dv = Dv;
              if (contig) {
                p.q = {q.data(), 0, Sq * D, D, 1}, p.k = {k.data(), 0, Skv * D, D, 1}, p.v = {v.data(), 0, Skv * Dv, Dv, 1};
              } else {
                p.q = {q.data(), 0, Sq * D, 1, Sq}, p.k = {k.data(), 0, Skv * D, 1, Skv}, p.v = {v.data(), 0, Skv * Dv, 1, Skv};
              }
              if (mask == 1 || mask == 3) p.mask = m.data(), p.mq = Skv, p.mk = 1;
              if (mask == 2) p.mask = m.data(), p.mq = 1, p.mk = 0;
              p.scale = 0.3f;
              p.zero_undefined_rows = mask == 3;
              p.oh = Sq * Dv, p.os = Dv;
              std::vector<float> got(H * Sq * Dv, -7.0f), want(got.size(), -7.0f);
              p.out = want.data();
              {
                ScopedCpuIsa portable(CpuIsa::kGeneric);
                for (int64_t h = 0; h < H; ++h) attention::attend_generic(p, 0, h, 0, Sq);
              }
              p.out = got.data();
              for (int64_t h = 0; h < H; ++h) attention::attend_vec(w, p, 0, h, 0, Sq);
              for (size_t i = 0; i < got.size(); ++i) {
                if (std::isnan(want[i])) {  // a fully masked row without zero_undefined_rows: NaN in both
                  ASSERT_TRUE(std::isnan(got[i])) << simd_width_name(w) << " bits at " << i;
                  continue;
                }
                ASSERT_NEAR(got[i], want[i], 2e-5f + 2e-5f * std::abs(want[i]))
                    << simd_width_name(w) << " bits, Skv " << Skv << " D " << D << " Sq " << Sq << " mask " << mask
                    << " contig " << contig << " at " << i;
              }
            }
  });
  EXPECT_GE(ran, 1);
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
#if !defined(__x86_64__)
  GTEST_SKIP() << "precision bf16's attention products are x86 code (VDPBF16PS); on this CPU they run f32 "
                  "(docs/platforms.md)";
#endif
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

// Attention as causal-LM exports write it (Qwen3 through torch.onnx): Q and
// Kᵀ each scaled by a Mul, keys and values repeated for grouped-query heads
// (Unsqueeze, Expand, Reshape), the mask made by Where(allowed, 0, -inf), and
// the softmax's NaN rows (a left-padded query sees no key) zeroed by
// Where(IsNaN(P), 0, P) before P·V. fuse_attention takes the chain into one
// com.dlrt Attention (zero_undefined_rows), so the [B, H, S, S] scores are
// never a tensor: the planned arena of a run holds less than one copy of them.
namespace exported_lm {

using dlrt::testing::ai;
using dlrt::testing::ais;
using dlrt::testing::GraphBuilder;
using dlrt::testing::random_tensor;
namespace p = ir::passes;

constexpr int64_t kB = 2, kH = 4, kHkv = 2, kS = 128, kD = 8;
constexpr int64_t kPad = 5;  // batch row 1 is left-padded by this many tokens

// K or V of kHkv heads repeated to kH ([B, Hkv, S, D] -> [B, H, S, D]).
ir::ValueId repeat_kv(GraphBuilder& b, ir::ValueId x, const std::string& tag) {
  const ir::ValueId u = b.node("Unsqueeze", {x, b.ints("axes" + tag, {2})});
  const ir::ValueId e = b.node("Expand", {u, b.ints("expand" + tag, {kB, kHkv, kH / kHkv, kS, kD})});
  return b.node("Reshape", {e, b.ints("shape" + tag, {kB, kH, kS, kD})});
}

std::shared_ptr<ir::Graph> exported_causal_attention() {
  GraphBuilder b;
  const ir::ValueId q = b.input("q", {kB, kH, kS, kD});
  const ir::ValueId k = b.input("k", {kB, kHkv, kS, kD});
  const ir::ValueId v = b.input("v", {kB, kHkv, kS, kD});
  const ir::ValueId allowed = b.input("allowed", {kB, 1, kS, kS}, DType::kBool);
  const float root_scale = 1.0f / std::sqrt(std::sqrt(static_cast<float>(kD)));
  const ir::ValueId qs = b.node("Mul", {q, b.scalar("qscale", root_scale)});
  const ir::ValueId kt = b.node("Transpose", {repeat_kv(b, k, "k")}, {{"perm", ais({0, 1, 3, 2})}});
  const ir::ValueId ks = b.node("Mul", {kt, b.scalar("kscale", root_scale)});
  const ir::ValueId zero = b.constant("zero", Tensor::from_vector<float>({1}, {0.0f}));
  const ir::ValueId ninf = b.constant("ninf", Tensor::from_vector<float>({1}, {-std::numeric_limits<float>::infinity()}));
  const ir::ValueId mask = b.node("Where", {allowed, zero, ninf});
  const ir::ValueId probs = b.node("Softmax", {b.node("Add", {b.node("MatMul", {qs, ks}), mask})}, {{"axis", ai(-1)}});
  const ir::ValueId guarded = b.node("Where", {b.node("IsNaN", {probs}), zero, probs});
  const ir::ValueId o = b.node("MatMul", {guarded, repeat_kv(b, v, "v")});
  b.output(b.node("Transpose", {o}, {{"perm", ais({0, 2, 1, 3})}}));
  return b.graph();
}

// Causal, and batch row 1's first kPad tokens are padding: its query rows
// < kPad see no key at all.
Tensor causal_left_padded() {
  Tensor t = Tensor::allocate(DType::kBool, {kB, 1, kS, kS}).value();
  for (int64_t b = 0; b < kB; ++b)
    for (int64_t i = 0; i < kS; ++i)
      for (int64_t j = 0; j < kS; ++j) t.data<bool>()[(b * kS + i) * kS + j] = j <= i && (b == 0 || j >= kPad);
  return t;
}

std::vector<Tensor> inputs() {
  return {random_tensor({kB, kH, kS, kD}, 1, -2, 2), random_tensor({kB, kHkv, kS, kD}, 2, -2, 2),
          random_tensor({kB, kHkv, kS, kD}, 3), causal_left_padded()};
}

std::shared_ptr<ir::Graph> fused(const std::shared_ptr<ir::Graph>& g, int* fired) {
  auto opt = std::make_shared<ir::Graph>(*g);
  p::PassContext ctx = dlrt::testing::cpu_kernels_context();
  p::fold_shapes(*opt, ctx);  // the operands' ranks, as a session's standard passes give them
  *fired = p::fuse_attention(*opt, ctx);
  EXPECT_TRUE(opt->topological_sort().ok());
  return opt;
}

// The planned arena of `g` (its second run on `inputs` runs in it): bytes.
size_t planned_arena_bytes(const std::shared_ptr<ir::Graph>& g, const std::vector<Tensor>& in, Tensor* out) {
  ThreadPool pool(2);
  auto ex = Executor::create(g, pool, builtin_kernels());
  EXPECT_TRUE(ex.ok()) << ex.status().to_string();
  if (!ex.ok()) return 0;
  std::vector<RunValue> values;
  for (const auto& t : in) values.push_back(RunValue::of(t));
  for (int rep = 0; rep < 2; ++rep) {
    auto r = (*ex)->run(values);
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    if (!r.ok()) return 0;
    *out = (*r)[0].tensor.clone().value();
  }
  auto st = (*ex)->memory_stats();
  EXPECT_TRUE(st.has_value());
  return st ? st->arena_bytes : 0;
}

TEST(AttentionExportedLm, ExportedCausalChainFusesAndZeroesRowsThatSeeNoKey) {
  const auto g = exported_causal_attention();
  int fired = 0;
  const auto opt = fused(g, &fired);
  ASSERT_EQ(fired, 1);
  ASSERT_EQ(dlrt::testing::count_ops(*opt, "Attention"), 1);
  EXPECT_EQ(dlrt::testing::count_ops(*opt, "Softmax") + dlrt::testing::count_ops(*opt, "IsNaN"), 0);
  for (const auto& n : opt->nodes) {
    if (n.op_type == "Attention") {
      EXPECT_EQ(n.attr_int("zero_undefined_rows", 0), 1);
    }
  }
  const std::vector<Tensor> in = inputs();
  const auto want = dlrt::testing::run_graph(g, in);
  ASSERT_EQ(want.size(), 1u);
  for (CpuIsa isa : {CpuIsa::kGeneric, CpuIsa::kAvx2, CpuIsa::kAvx512}) {
    if (isa > detected_cpu_isa()) continue;
    ScopedCpuIsa cap(isa);
    SCOPED_TRACE(cpu_isa_name(isa));
    const auto got = dlrt::testing::run_graph(opt, in);
    ASSERT_EQ(got.size(), 1u);
    dlrt::testing::expect_close(got[0], want[0], 1e-5f);
    // Output [B, S, H, D]: batch row 1's padded queries are exactly zero.
    const float* y = got[0].data<float>() + kS * kH * kD;
    for (int64_t n = 0; n < kPad * kH * kD; ++n) ASSERT_EQ(y[n], 0.0f) << "at " << n;
  }
}

// The count the fusion is for: unfused, a planned run holds the scores
// (B x H x S x S floats) and more; fused, less than one copy of them.
TEST(AttentionExportedLm, PlannedArenaHoldsLessThanOneCopyOfTheScores) {
  const auto g = exported_causal_attention();
  int fired = 0;
  const auto opt = fused(g, &fired);
  ASSERT_EQ(fired, 1);
  const size_t scores = kB * kH * kS * kS * sizeof(float);
  const std::vector<Tensor> in = inputs();
  Tensor before, after;
  const size_t unfused = planned_arena_bytes(g, in, &before);
  const size_t with_fusion = planned_arena_bytes(opt, in, &after);
  EXPECT_GE(unfused, scores);
  EXPECT_LT(with_fusion, scores) << "fused arena " << with_fusion << " bytes, unfused " << unfused;
  dlrt::testing::expect_close(after, before, 1e-5f);
}

// A guard whose replacement is not 0 is left alone: the kernel only zeroes.
// (The unguarded chain: Passes.AttentionFusesBertPattern.)
TEST(AttentionExportedLm, OnlyAZeroGuardIsTaken) {
  GraphBuilder b;
  const ir::ValueId q = b.input("q", {1, 2, 8, 4});
  const ir::ValueId k = b.input("k", {1, 2, 8, 4});
  const ir::ValueId v = b.input("v", {1, 2, 8, 4});
  const ir::ValueId kt = b.node("Transpose", {k}, {{"perm", ais({0, 1, 3, 2})}});
  const ir::ValueId probs = b.node("Softmax", {b.node("MatMul", {q, kt})}, {{"axis", ai(-1)}});
  const ir::ValueId one = b.constant("one", Tensor::from_vector<float>({1}, {1.0f}));
  b.output(b.node("MatMul", {b.node("Where", {b.node("IsNaN", {probs}), one, probs}), v}));
  int fired = -1;
  fused(b.graph(), &fired);
  EXPECT_EQ(fired, 0);
}

}  // namespace exported_lm

}  // namespace
}  // namespace dlrt::cpu::testing
