// Winograd F(4x4, 3x3), NCHW and 16-channel blocked (kernels/conv_winograd4*.cpp,
// written once over kernels/simd/), called directly at every vector width the
// build has: 128 bits (portable vector code, NEON's width), 256 (AVX2) and 512
// (AVX-512), each with cpu_isa() capped to match so its GEMMs run at that level
// too. Against a double-precision conv: output planes that are not multiples of 4
// (partial tiles and groups of tiles), every padding the kernels take, channel
// counts off the vector width and the 16-channel block, a plane cut into blocks
// of tile rows with a shorter last one, bias, residual and activations. Widths
// this CPU cannot run are skipped with the reason.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/kernels/conv_winograd.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/simd/width.h"
#include "conv_test_util.h"
#include "simd_width_test_util.h"

namespace dlrt::cpu {
namespace {

struct Shape {
  int64_t C, M, H, W;
  int64_t pt = 1, pl = 1, pb = 1, pr = 1;
  int64_t out_h() const { return H + pt + pb - 2; }
  int64_t out_w() const { return W + pl + pr - 2; }
  std::string describe() const {
    return "C" + std::to_string(C) + " M" + std::to_string(M) + " " + std::to_string(H) + "x" + std::to_string(W) +
           " pads " + std::to_string(pt) + "," + std::to_string(pl) + "," + std::to_string(pb) + "," +
           std::to_string(pr);
  }
};

struct Data {
  std::vector<float> x, w, b, z, want;
};

// Random operands and the double reference conv (bias and residual when asked).
Data make(const Shape& s, bool bias, bool residual, const Activation& act, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  Data d;
  d.x.resize(static_cast<size_t>(s.C * s.H * s.W));
  d.w.resize(static_cast<size_t>(s.M * s.C * 9));
  d.b.resize(static_cast<size_t>(s.M));
  d.z.resize(static_cast<size_t>(s.M * s.out_h() * s.out_w()));
  for (auto* v : {&d.x, &d.w, &d.b, &d.z})
    for (auto& e : *v) e = dist(rng);
  testing::RefConvShape r;
  r.C = s.C, r.M = s.M, r.H = s.H, r.W = s.W, r.KH = r.KW = 3, r.PT = s.pt, r.PL = s.pl;
  r.OH = s.out_h(), r.OW = s.out_w();
  d.want = testing::reference_conv(r, d.x, d.w, bias ? d.b : std::vector<float>{},
                                   residual ? d.z : std::vector<float>{}, act);
  return d;
}

WinogradGeometry geometry(const Shape& s) {
  WinogradGeometry g;
  g.in_h = s.H, g.in_w = s.W, g.out_h = s.out_h(), g.out_w = s.out_w(), g.pad_top = s.pt, g.pad_left = s.pl;
  return g;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, int64_t C) {
  ASSERT_EQ(got.size(), want.size());
  // Sums of 9*C products of [-1, 1] values; the transforms add a few roundings.
  const double tol = 2e-5 * (2.0 + std::sqrt(static_cast<double>(9 * C)));
  int bad = 0;
  for (size_t i = 0; i < want.size() && bad < 5; ++i)
    if (!(std::abs(got[i] - want[i]) <= tol * (1 + std::abs(want[i])))) {
      ++bad;
      ADD_FAILURE() << "at " << i << ": " << got[i] << " vs " << want[i];
    }
}

CpuIsa isa_of(SimdWidth w) {
  return w == SimdWidth::k512 ? CpuIsa::kAvx512 : w == SimdWidth::k256 ? CpuIsa::kAvx2 : CpuIsa::kGeneric;
}

class WinogradSimd : public testing::SimdWidthTest {
 protected:
  void SetUp() override {
    SimdWidthTest::SetUp();
    if (IsSkipped()) return;
    isa_ = std::make_unique<ScopedCpuIsa>(isa_of(GetParam()));
  }
  std::unique_ptr<ScopedCpuIsa> isa_;
  ThreadPool pool_{2};
};

// NCHW: y = act(conv + bias + z) through conv_winograd4 at the width under test.
void check_nchw(SimdWidth width, const Shape& s, bool bias, bool residual, ActKind kind, ThreadPool& pool,
                uint32_t seed) {
  SCOPED_TRACE(s.describe() + " width " + simd_width_name(width));
  Activation act;
  act.kind = kind;
  const Data d = make(s, bias, residual, act, seed);
  const auto f = winograd4_filters(d.w.data(), s.M, s.C);
  GemmEpilogue ep;
  ep.act = act;
  ep.row_bias = bias ? d.b.data() : nullptr;
  ep.residual = residual ? d.z.data() : nullptr;
  ep.ldr = s.out_h() * s.out_w();
  std::vector<float> y(d.want.size(), std::numeric_limits<float>::quiet_NaN());
  const uint64_t before = conv_winograd4_runs();
  conv_winograd4(width, *f, geometry(s), d.x.data(), y.data(), ep, pool);
  EXPECT_EQ(conv_winograd4_runs() - before, 1u);
  expect_close(y, d.want, s.C);
}

TEST_P(WinogradSimd, NchwEdgeTiles) {
  const SimdWidth w = GetParam();
  check_nchw(w, {5, 7, 13, 11}, false, false, ActKind::kNone, pool_, 1);  // 13 x 11: 4 x 3 tiles, a partial group
  check_nchw(w, {16, 24, 9, 30, 0, 0, 0, 0}, false, false, ActKind::kNone, pool_, 2);  // unpadded 7 x 28
  check_nchw(w, {8, 9, 10, 10, 2, 2, 2, 2}, false, false, ActKind::kNone, pool_, 3);   // pad 2: 12 x 12
  check_nchw(w, {3, 9, 12, 14, 1, 0, 0, 2}, false, false, ActKind::kNone, pool_, 4);   // asymmetric: 11 x 14
  check_nchw(w, {6, 4, 3, 45}, false, false, ActKind::kNone, pool_, 5);     // one tile row of 12 tiles (3 groups)
  check_nchw(w, {12, 10, 50, 5}, false, false, ActKind::kNone, pool_, 6);   // 2-tile rows: groups span rows
  check_nchw(w, {17, 33, 22, 23}, false, false, ActKind::kNone, pool_, 7);  // 6 x 6 tiles
}

TEST_P(WinogradSimd, NchwEpilogues) {
  const SimdWidth w = GetParam();
  check_nchw(w, {9, 11, 14, 15}, true, false, ActKind::kNone, pool_, 11);
  check_nchw(w, {9, 11, 14, 15}, true, true, ActKind::kRelu, pool_, 12);
  check_nchw(w, {9, 11, 14, 15}, false, true, ActKind::kSigmoid, pool_, 13);
}

TEST_P(WinogradSimd, NchwBlocksOfTileRows) {
  // 36 x (64 + 72) floats per 4x4 tile, 15 x 15 tiles: just over kWinograd4BlockBytes,
  // so two blocks of 8 and 7 tile rows (the last block's V and M rows end early).
  check_nchw(GetParam(), {64, 72, 60, 60}, true, false, ActKind::kRelu, pool_, 21);
}

// Blocked: x and y in [ceil(C/16)][H][W][16]; x's pad lanes hold NaN (they must not be read into y).
void check_blocked(SimdWidth width, const Shape& s, bool residual, ActKind kind, ThreadPool& pool, uint32_t seed) {
  SCOPED_TRACE(s.describe() + " blocked, width " + simd_width_name(width));
  Activation act;
  act.kind = kind;
  const Data d = make(s, true, residual, act, seed);
  const int64_t MB = (s.M + 15) / 16, OH = s.out_h(), OW = s.out_w();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto to_blocked = [](const std::vector<float>& v, int64_t channels, int64_t plane, float fill) {
    std::vector<float> r(static_cast<size_t>((channels + 15) / 16 * plane * 16), fill);
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t p = 0; p < plane; ++p)
        r[static_cast<size_t>(((c / 16) * plane + p) * 16 + c % 16)] = v[c * plane + p];
    return r;
  };
  const std::vector<float> xb = to_blocked(d.x, s.C, s.H * s.W, nan);
  const std::vector<float> zb = to_blocked(d.z, s.M, OH * OW, 0.0f);
  const auto f = winograd4_filters(d.w.data(), s.M, s.C, true);
  std::vector<float> yb(static_cast<size_t>(MB * OH * OW * 16), nan);
  conv_winograd4_blocked(width, *f, geometry(s), xb.data(), yb.data(), d.b.data(), residual ? zb.data() : nullptr, act,
                         pool);
  std::vector<float> y(d.want.size());
  for (int64_t m = 0; m < s.M; ++m)
    for (int64_t p = 0; p < OH * OW; ++p)
      y[m * OH * OW + p] = yb[static_cast<size_t>(((m / 16) * OH * OW + p) * 16 + m % 16)];
  expect_close(y, d.want, s.C);
}

TEST_P(WinogradSimd, BlockedEdgeTiles) {
  const SimdWidth w = GetParam();
  check_blocked(w, {20, 40, 13, 11}, false, ActKind::kNone, pool_, 31);              // partial channel blocks and tiles
  check_blocked(w, {16, 17, 10, 10, 2, 2, 2, 2}, true, ActKind::kRelu, pool_, 32);   // pad 2, clamp in registers
  check_blocked(w, {33, 24, 12, 14, 1, 0, 0, 2}, false, ActKind::kSilu, pool_, 33);  // activation after the stores
  check_blocked(w, {64, 80, 60, 60}, true, ActKind::kNone, pool_, 34);               // two blocks of tile rows
}

INSTANTIATE_TEST_SUITE_P(Widths, WinogradSimd, ::testing::Values(SimdWidth::k128, SimdWidth::k256, SimdWidth::k512),
                         [](const ::testing::TestParamInfo<SimdWidth>& i) {
                           return std::string("w") + simd_width_name(i.param);
                         });

}  // namespace
}  // namespace dlrt::cpu
