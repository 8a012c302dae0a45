// depthwise_plane (kernels/depthwise_plane.h, written once over
// kernels/simd/) at every vector width the build has, widths this CPU
// cannot run skipped with the reason. Against a double-precision depthwise
// conv: strides 1 and 2 (the even/odd split), the constant-shape 3x3 steps,
// 3-wide and general kernels, rows that end in a partial vector or span
// several steps, odd row counts, pads wider than the kernel, bias, residual
// and clamps; every output written. The 256- and 512-bit instantiations
// take their sums in the same order with fused multiply-adds: bit-identical.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "backends/cpu/kernels/depthwise_plane.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/simd/width.h"
#include "conv_test_util.h"
#include "kernel_test_util.h"
#include "simd_width_test_util.h"

namespace dlrt::cpu {
namespace {

using testing::random_floats;

struct PlaneCase {
  const char* what;
  int64_t H, W, kh, kw, sh, sw, pt, pl, pb, pr;
};

DepthwiseGeometry plane_geometry(const PlaneCase& c) {
  DepthwiseGeometry g;
  g.in_h = c.H, g.in_w = c.W, g.kh = c.kh, g.kw = c.kw, g.sh = c.sh, g.sw = c.sw;
  g.pad_top = c.pt, g.pad_left = c.pl;
  g.out_h = (c.H + c.pt + c.pb - c.kh) / c.sh + 1;
  g.out_w = (c.W + c.pl + c.pr - c.kw) / c.sw + 1;
  return g;
}

const std::vector<PlaneCase>& plane_cases() {
  static const std::vector<PlaneCase> c = {
      {"3x3 s1 p1 14x14", 14, 14, 3, 3, 1, 1, 1, 1, 1, 1},
      {"3x3 s2 p1 odd plane", 15, 23, 3, 3, 2, 2, 1, 1, 1, 1},
      {"3x3 s1, 70 wide (two steps and a tail)", 5, 70, 3, 3, 1, 1, 1, 1, 1, 1},
      {"3x3 s2, 131 wide", 6, 131, 3, 3, 2, 2, 0, 1, 1, 1},
      {"5x3 stride 2x1 (3 wide, run-time rows)", 17, 29, 5, 3, 2, 1, 2, 1, 2, 1},
      {"5x5 s2 p2", 20, 19, 5, 5, 2, 2, 2, 2, 2, 2},
      {"7x7 wider than the input", 5, 4, 7, 7, 1, 1, 3, 3, 3, 3},
      {"1x1 one column", 9, 1, 1, 1, 1, 1, 0, 0, 0, 0},
      {"2x4 stride 3x2, pad left 3", 13, 33, 2, 4, 3, 2, 0, 3, 1, 0},
      {"3x3 s1, 8 wide", 9, 8, 3, 3, 1, 1, 1, 1, 1, 1},
      {"16x16 kernel", 20, 37, 16, 16, 1, 1, 2, 5, 1, 4},
  };
  return c;
}

// y of one plane at `width` (every element set before the call to NaN, so
// an element left unwritten fails the comparison).
std::vector<float> run_plane(SimdWidth width, const PlaneCase& c, bool clamp, bool residual) {
  const DepthwiseGeometry g = plane_geometry(c);
  const auto x = random_floats(static_cast<size_t>(c.H * c.W), 51);
  const auto w = random_floats(static_cast<size_t>(c.kh * c.kw), 52);
  const auto z = random_floats(static_cast<size_t>(g.out_h * g.out_w), 53);
  DepthwiseOutput o;
  o.bias = 0.25f;
  o.residual = residual ? z.data() : nullptr;
  o.clamp = clamp;
  o.lo = -0.3f, o.hi = 0.4f;
  std::vector<float> y(static_cast<size_t>(g.out_h * g.out_w), std::numeric_limits<float>::quiet_NaN());
  depthwise_plane(width, x.data(), w.data(), g, y.data(), o);
  return y;
}

std::vector<float> reference_plane(const PlaneCase& c, bool clamp, bool residual) {
  const DepthwiseGeometry g = plane_geometry(c);
  testing::RefConvShape s;
  s.H = c.H, s.W = c.W, s.KH = c.kh, s.KW = c.kw, s.SH = c.sh, s.SW = c.sw, s.PT = c.pt, s.PL = c.pl;
  s.OH = g.out_h, s.OW = g.out_w;
  Activation act;
  if (clamp) act.kind = ActKind::kClip, act.p0 = -0.3f, act.p1 = 0.4f;
  const auto x = random_floats(static_cast<size_t>(c.H * c.W), 51);
  const auto w = random_floats(static_cast<size_t>(c.kh * c.kw), 52);
  const auto z = random_floats(static_cast<size_t>(g.out_h * g.out_w), 53);
  return testing::reference_conv(s, x, w, {0.25f}, residual ? z : std::vector<float>(), act);
}

class DepthwisePlane : public testing::SimdWidthTest {};

TEST_P(DepthwisePlane, MatchesReference) {
  const SimdWidth width = GetParam();
  for (const PlaneCase& c : plane_cases()) {
    ASSERT_TRUE(depthwise_plane_ok(plane_geometry(c))) << c.what;
    for (int variant = 0; variant < 3; ++variant) {
      const bool clamp = variant == 1, residual = variant != 0;
      SCOPED_TRACE(std::string(c.what) + ", width " + simd_width_name(width) + (clamp ? ", clamp" : "") +
                   (residual ? ", residual" : ""));
      const auto got = run_plane(width, c, clamp, residual);
      const auto want = reference_plane(c, clamp, residual);
      ASSERT_EQ(got.size(), want.size());
      const float tol = 2e-5f * (2.0f + std::sqrt(static_cast<float>(c.kh * c.kw)));
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_NEAR(got[i], want[i], tol * (1.0f + std::fabs(want[i]))) << "output " << i;
    }
  }
}

// The x86 widths against each other, bit for bit (both fuse every
// multiply-add and sum the taps in the same order).
TEST(DepthwisePlaneWidths, X86WidthsBitIdentical) {
  if (!simd_width_runs(SimdWidth::k512) || !simd_width_runs(SimdWidth::k256))
    GTEST_SKIP() << "needs a CPU that runs both the 256- and the 512-bit instantiations";
  for (const PlaneCase& c : plane_cases()) {
    const auto a = run_plane(SimdWidth::k256, c, false, true);
    const auto b = run_plane(SimdWidth::k512, c, false, true);
    ASSERT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << c.what;
  }
}

INSTANTIATE_TEST_SUITE_P(Widths, DepthwisePlane, ::testing::Values(SimdWidth::k128, SimdWidth::k256, SimdWidth::k512),
                         [](const ::testing::TestParamInfo<SimdWidth>& i) {
                           return std::string("w") + simd_width_name(i.param);
                         });

}  // namespace
}  // namespace dlrt::cpu
