// The 16-channel blocked kernels (kernels/conv_blocked_vec.cpp, written once
// over kernels/simd/) at every vector width the build has: 128 bits (4
// vectors per block), 256 (AVX2, 2 per block) and 512 (AVX-512, 1), each
// with cpu_isa() capped to match. Group-1 and depthwise convs against a
// double-precision reference conv: channel counts off the block and off the
// vector width, one and several output block pairs (an odd block count runs
// its last block alone), odd planes, strides 1 to 3, dilations, pads at the
// row ends and past the kernel's reach, outputs narrow enough for two-row
// tiles, 1x1 convs whose rows merge, NCHW stem input, inputs split into K
// chunks, bias, residual and activations (clamps in registers, others over
// the stored row). The reorders round-trip channel counts and planes off
// the vector width. Widths this CPU cannot run are skipped with the reason.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "backends/cpu/kernels/conv_blocked.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/simd/width.h"
#include "conv_test_util.h"
#include "kernel_test_util.h"
#include "simd_width_test_util.h"

namespace dlrt::cpu {
namespace {

using testing::random_floats;

CpuIsa isa_of(SimdWidth w) {
  return w == SimdWidth::k512 ? CpuIsa::kAvx512 : w == SimdWidth::k256 ? CpuIsa::kAvx2 : CpuIsa::kGeneric;
}

class ConvBlockedSimd : public testing::SimdWidthTest {
 protected:
  void SetUp() override {
    SimdWidthTest::SetUp();
    if (IsSkipped()) return;
    isa_ = std::make_unique<ScopedCpuIsa>(isa_of(GetParam()));
    ASSERT_EQ(simd_width(), GetParam());
  }
  std::unique_ptr<ScopedCpuIsa> isa_;
};

struct Case {
  const char* what;
  int64_t N, C, H, W, M, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
  bool depthwise, x_blocked, residual;
  ActKind act;
};

BlockedConvGeometry geometry(const Case& c) {
  BlockedConvGeometry g;
  g.N = c.N, g.C = c.C, g.H = c.H, g.W = c.W, g.M = c.M;
  g.kh = c.kh, g.kw = c.kw, g.sh = c.sh, g.sw = c.sw, g.dh = c.dh, g.dw = c.dw, g.pad_top = c.pt, g.pad_left = c.pl;
  g.OH = (c.H + c.pt + c.pb - c.dh * (c.kh - 1) - 1) / c.sh + 1;
  g.OW = (c.W + c.pl + c.pr - c.dw * (c.kw - 1) - 1) / c.sw + 1;
  return g;
}

Activation activation(ActKind k) {
  Activation a;
  a.kind = k;
  if (k == ActKind::kClip) a.p0 = -0.25f, a.p1 = 0.5f;
  if (k == ActKind::kLeakyRelu) a.p0 = 0.1f;
  return a;
}

void check(const Case& c, ThreadPool* pool) {
  SCOPED_TRACE(std::string(c.what) + (pool ? ", 2 threads" : ", no pool"));
  constexpr int b = 16;
  const BlockedConvGeometry g = geometry(c);
  ASSERT_GT(g.OH, 0);
  ASSERT_GT(g.OW, 0);
  const int64_t Cg = c.depthwise ? 1 : c.C, out_plane = g.OH * g.OW, ocbs = (c.M + b - 1) / b;
  const auto x = random_floats(static_cast<size_t>(c.N * c.C * c.H * c.W), 21);
  const auto w = random_floats(static_cast<size_t>(c.M * Cg * c.kh * c.kw), 22);
  const auto bias = random_floats(static_cast<size_t>(c.M), 23);
  const auto z = c.residual ? random_floats(static_cast<size_t>(c.N * c.M * out_plane), 24) : std::vector<float>();
  const Activation act = activation(c.act);
  testing::RefConvShape s;
  s.N = c.N, s.C = c.C, s.M = c.M, s.group = c.depthwise ? c.C : 1, s.H = c.H, s.W = c.W, s.KH = c.kh, s.KW = c.kw;
  s.SH = c.sh, s.SW = c.sw, s.DH = c.dh, s.DW = c.dw, s.PT = c.pt, s.PL = c.pl, s.OH = g.OH, s.OW = g.OW;
  const std::vector<float> want = testing::reference_conv(s, x, w, bias, z, act);
  const auto packed = pack_blocked_conv(w.data(), c.M, c.C, c.kh, c.kw, c.depthwise, b);
  const auto xb = testing::blocked_copy(x, c.N, c.C, c.H * c.W, b);
  const auto zb = c.residual ? testing::blocked_copy(z, c.N, c.M, out_plane, b) : std::vector<float>();
  std::vector<float> y(static_cast<size_t>(c.N * ocbs * out_plane * b), NAN);
  conv_blocked(packed, g, c.x_blocked ? xb.data() : x.data(), c.x_blocked, bias.data(),
               c.residual ? zb.data() : nullptr, act, y.data(), pool);
  std::vector<float> got(want.size());
  from_blocked(y.data(), c.N, c.M, out_plane, b, got.data(), nullptr);
  const float tol = 2e-5f * (2.0f + std::sqrt(static_cast<float>(Cg * c.kh * c.kw)));
  int bad = 0;
  for (size_t i = 0; i < want.size() && bad < 5; ++i)
    if (!(std::fabs(got[i] - want[i]) <= tol * (1.0f + std::fabs(want[i])))) {
      ++bad;
      ADD_FAILURE() << "at " << i << ": " << got[i] << " vs " << want[i];
    }
}

TEST_P(ConvBlockedSimd, GroupOneMatchesReference) {
  const std::vector<Case> cases = {
      {"3x3 pad 1, 3 output blocks, K in chunks", 1, 40, 9, 13, 37, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, true, true,
       ActKind::kRelu},
      {"3x3 stride 2, odd plane", 2, 21, 11, 15, 33, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false, true, false, ActKind::kClip},
      {"5x3 stride 3 dilated", 1, 16, 17, 23, 20, 5, 3, 3, 3, 2, 2, 4, 2, 3, 1, false, true, true, ActKind::kSilu},
      {"1x1 merged rows, 2 pairs", 1, 48, 7, 7, 64, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, false, true, true, ActKind::kNone},
      {"1x1, channels below a vector", 2, 3, 5, 9, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, false, true, false,
       ActKind::kLeakyRelu},
      {"1x1 stride 2, wide row", 1, 24, 6, 61, 17, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, false, true, false, ActKind::kNone},
      {"narrow output: two-row tiles", 1, 19, 5, 3, 31, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, true, true,
       ActKind::kRelu},
      {"one output column", 1, 17, 6, 1, 18, 3, 1, 1, 1, 1, 1, 1, 0, 1, 0, false, true, false, ActKind::kNone},
      {"pads past the reach", 1, 7, 4, 5, 9, 3, 3, 1, 1, 1, 1, 4, 5, 4, 3, false, true, true, ActKind::kNone},
      {"NCHW stem 3x3 stride 2", 1, 3, 19, 21, 24, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false, false, false,
       ActKind::kHardSwish},
      {"NCHW stem 7x7 stride 2 pad 3", 1, 3, 14, 17, 16, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3, false, false, true,
       ActKind::kNone},
      // Activations other than a clamp over whole stored rows (below 512 bits): after the last K
      // chunk only, over both rows of a two-row tile, over the row ends run one position at a time.
      {"3x3 pad 1, K in chunks, Silu", 1, 40, 9, 13, 37, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, true, true,
       ActKind::kSilu},
      {"narrow output: two-row tiles, Sigmoid", 1, 19, 5, 3, 31, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, true, true,
       ActKind::kSigmoid},
      {"1x1 merged rows, HardSwish", 1, 48, 7, 7, 64, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, false, true, true,
       ActKind::kHardSwish},
  };
  ThreadPool pool(2);
  for (const Case& c : cases) {
    check(c, nullptr);
    check(c, &pool);
  }
}

TEST_P(ConvBlockedSimd, DepthwiseMatchesReference) {
  const std::vector<Case> cases = {
      {"3x3 pad 1, channels off the block", 1, 40, 9, 13, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, true, true,
       ActKind::kRelu},
      {"3x3 stride 2, odd plane", 2, 21, 11, 15, 21, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, true, true, false, ActKind::kClip},
      {"5x5 pad 2, wide rows", 1, 24, 7, 37, 24, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, true, true, false, ActKind::kSigmoid},
      {"5x5 stride 2 on 7x7", 1, 32, 7, 7, 32, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2, true, true, true, ActKind::kNone},
      {"3x3 dilation 2, stride 3", 1, 5, 13, 29, 5, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, true, true, false, ActKind::kNone},
      {"7x7 wider than the input", 1, 18, 4, 5, 18, 7, 7, 1, 1, 1, 1, 3, 3, 3, 3, true, true, true, ActKind::kRelu},
      {"3x3 unpadded, one column", 1, 9, 5, 3, 9, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, true, true, false, ActKind::kNone},
      {"3x3 pad 1, row ends alone, Silu", 1, 40, 9, 13, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, true, true,
       ActKind::kSilu},
  };
  ThreadPool pool(2);
  for (const Case& c : cases) {
    check(c, nullptr);
    check(c, &pool);
  }
}

TEST_P(ConvBlockedSimd, ReordersRoundTrip) {
  for (int64_t C : {1, 5, 8, 16, 19, 37})
    for (int64_t hw : {1, 3, 4, 7, 16, 23, 50}) {
      SCOPED_TRACE("C " + std::to_string(C) + " hw " + std::to_string(hw));
      const int64_t N = 2, cbs = (C + 15) / 16;
      const auto x = random_floats(static_cast<size_t>(N * C * hw), 31);
      std::vector<float> xb(static_cast<size_t>(N * cbs * hw * 16), NAN);
      to_blocked(x.data(), N, C, hw, 16, xb.data(), nullptr);
      for (int64_t n = 0; n < N; ++n)
        for (int64_t c = 0; c < cbs * 16; ++c)
          for (int64_t p = 0; p < hw; ++p) {
            const float v = xb[static_cast<size_t>(((n * cbs + c / 16) * hw + p) * 16 + c % 16)];
            ASSERT_EQ(v, c < C ? x[static_cast<size_t>((n * C + c) * hw + p)] : 0.0f) << n << " " << c << " " << p;
          }
      std::vector<float> back(x.size() + 8, -7.0f);  // floats past the planes stay untouched
      from_blocked(xb.data(), N, C, hw, 16, back.data(), nullptr);
      for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(back[i], x[i]) << i;
      for (size_t i = x.size(); i < back.size(); ++i) ASSERT_EQ(back[i], -7.0f) << i;
    }
}

INSTANTIATE_TEST_SUITE_P(Widths, ConvBlockedSimd,
                         ::testing::Values(SimdWidth::k128, SimdWidth::k256, SimdWidth::k512),
                         [](const ::testing::TestParamInfo<SimdWidth>& i) {
                           return std::string("w") + simd_width_name(i.param);
                         });

}  // namespace
}  // namespace dlrt::cpu
