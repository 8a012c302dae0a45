// depthwise_lanes (kernels/depthwise_lanes.h, written once over
// kernels/simd/) at every vector width the build has: 4, 8 and 16 channels
// per call at 128, 256 and 512 bits, widths this CPU cannot run skipped
// with the reason. Against a double-precision depthwise conv: whole and
// partial groups, strides, dilations, kernels wider than the input, pads,
// odd planes, a range of output rows, bias, residual, clamps and other
// activations; the padded-input entry on the same geometries.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "backends/cpu/kernels/depthwise_lanes.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/simd/width.h"
#include "conv_test_util.h"
#include "kernel_test_util.h"
#include "simd_width_test_util.h"

namespace dlrt::cpu {
namespace {

using testing::random_floats;

struct DwCase {
  const char* what;
  int64_t H, W, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
};

DepthwiseGeometry dw_geometry_of(const DwCase& c) {
  DepthwiseGeometry g;
  g.in_h = c.H, g.in_w = c.W, g.kh = c.kh, g.kw = c.kw, g.sh = c.sh, g.sw = c.sw, g.dh = c.dh, g.dw = c.dw;
  g.pad_top = c.pt, g.pad_left = c.pl;
  g.out_h = (c.H + c.pt + c.pb - c.dh * (c.kh - 1) - 1) / c.sh + 1;
  g.out_w = (c.W + c.pl + c.pr - c.dw * (c.kw - 1) - 1) / c.sw + 1;
  return g;
}

// Runs one group of `channels` channels at `width` (whole rows, or rows
// [r0, r1) with the others left untouched; padded: through the padded entry)
// and compares with the reference.
void check_group(SimdWidth width, const DwCase& c, int channels, ActKind kind, bool residual, bool padded,
                 int64_t r0, int64_t r1) {
  const int L = depthwise_lanes_width(width);
  SCOPED_TRACE(std::string(c.what) + ", width " + simd_width_name(width) + ", channels " + std::to_string(channels) +
               (padded ? ", padded input" : "") + ", rows " + std::to_string(r0) + ".." + std::to_string(r1));
  const DepthwiseGeometry g = dw_geometry_of(c);
  ASSERT_GT(g.out_h, 0);
  ASSERT_GT(g.out_w, 0);
  const int64_t in_plane = c.H * c.W, out_plane = g.out_h * g.out_w, kk = c.kh * c.kw;
  const auto x = random_floats(static_cast<size_t>(channels * in_plane), 41);
  const auto w = random_floats(static_cast<size_t>(channels * kk), 42);
  const auto bias = random_floats(static_cast<size_t>(channels), 43);
  const auto z = residual ? random_floats(static_cast<size_t>(channels * out_plane), 44) : std::vector<float>();
  Activation act;
  act.kind = kind;
  if (kind == ActKind::kClip) act.p0 = -0.3f, act.p1 = 0.4f;
  testing::RefConvShape s;
  s.C = s.M = s.group = channels, s.H = c.H, s.W = c.W, s.KH = c.kh, s.KW = c.kw, s.SH = c.sh, s.SW = c.sw;
  s.DH = c.dh, s.DW = c.dw, s.PT = c.pt, s.PL = c.pl, s.OH = g.out_h, s.OW = g.out_w;
  const std::vector<float> want = testing::reference_conv(s, x, w, bias, z, act);
  DepthwiseC8Output o;
  const ClampStage cs = clamp_stage(act);
  o.clamp = cs.clamp, o.lo = cs.lo, o.hi = cs.hi;
  o.act = cs.clamp || act.none() ? nullptr : &act;
  o.bias = bias.data();
  o.residual = residual ? z.data() : nullptr;
  std::vector<float> y(static_cast<size_t>(channels * out_plane), -99.0f);
  if (!padded) {
    depthwise_lanes(width, x.data(), in_plane, w.data(), g, y.data(), out_plane, o, r0, r1, channels);
  } else {
    // [rows][Wp][L]: padded row r = input row r - pad_top, column c = input column c - pad_left.
    const int64_t Hp = (g.out_h - 1) * c.sh + (c.kh - 1) * c.dh + 1, Wp = (g.out_w - 1) * c.sw + (c.kw - 1) * c.dw + 1;
    std::vector<float> buf(static_cast<size_t>(Hp * Wp * L), 0.0f);
    for (int64_t r = 0; r < Hp; ++r)
      for (int64_t q = 0; q < Wp; ++q)
        for (int l = 0; l < channels; ++l) {
          const int64_t ih = r - c.pt, iw = q - c.pl;
          if (ih >= 0 && ih < c.H && iw >= 0 && iw < c.W)
            buf[static_cast<size_t>((r * Wp + q) * L + l)] = x[static_cast<size_t>(l * in_plane + ih * c.W + iw)];
        }
    depthwise_lanes_padded(width, buf.data(), Wp, w.data(), g, y.data(), out_plane, o);
  }
  const int64_t end = r1 < 0 ? g.out_h : r1;
  const float tol = 2e-5f * (2.0f + std::sqrt(static_cast<float>(kk)));
  for (int ch = 0; ch < channels; ++ch)
    for (int64_t p = 0; p < out_plane; ++p) {
      const size_t i = static_cast<size_t>(ch * out_plane + p);
      const int64_t row = p / g.out_w;
      if (row < r0 || row >= end) {
        ASSERT_EQ(y[i], -99.0f) << "row " << row << " outside the range was written";
        continue;
      }
      ASSERT_NEAR(y[i], want[i], tol * (1.0f + std::fabs(want[i]))) << "channel " << ch << " position " << p;
    }
}

class DepthwiseLanes : public testing::SimdWidthTest {};

const std::vector<DwCase>& cases() {
  static const std::vector<DwCase> c = {
      {"3x3 s1 p1 on 14x14", 14, 14, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      {"3x3 s2 p1, odd plane", 15, 23, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
      {"5x5 s1 p2 dilated 2", 20, 19, 5, 5, 1, 1, 2, 2, 4, 4, 4, 4},
      {"7x7 wider than the input", 5, 4, 7, 7, 1, 1, 1, 1, 3, 3, 3, 3},
      {"3x5 stride 3x1, asymmetric pads", 17, 29, 3, 5, 3, 1, 1, 1, 0, 2, 2, 1},
      {"1x1 on one column", 9, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},
      {"3x3 unpadded, wide rows", 6, 61, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0},
  };
  return c;
}

TEST_P(DepthwiseLanes, WholeAndPartialGroupsMatchReference) {
  const SimdWidth width = GetParam();
  const int L = depthwise_lanes_width(width);
  for (const DwCase& c : cases()) {
    check_group(width, c, L, ActKind::kRelu, true, false, 0, -1);
    check_group(width, c, L, ActKind::kHardSwish, false, false, 0, -1);
    if (L > 1) check_group(width, c, L - 1, ActKind::kClip, true, false, 0, -1);
    check_group(width, c, 1, ActKind::kSigmoid, true, false, 0, -1);
  }
}

TEST_P(DepthwiseLanes, RowRangesWriteOnlyTheirRows) {
  const SimdWidth width = GetParam();
  const int L = depthwise_lanes_width(width);
  for (const DwCase& c : cases()) {
    const int64_t OH = dw_geometry_of(c).out_h;
    check_group(width, c, L, ActKind::kNone, true, false, OH / 3, OH - OH / 4);
  }
}

TEST_P(DepthwiseLanes, PaddedInputMatchesReference) {
  const SimdWidth width = GetParam();
  const int L = depthwise_lanes_width(width);
  for (const DwCase& c : cases()) {
    check_group(width, c, L, ActKind::kClip, true, true, 0, -1);
    check_group(width, c, L, ActKind::kSilu, false, true, 0, -1);
  }
}

INSTANTIATE_TEST_SUITE_P(Widths, DepthwiseLanes,
                         ::testing::Values(SimdWidth::k128, SimdWidth::k256, SimdWidth::k512),
                         [](const ::testing::TestParamInfo<SimdWidth>& i) {
                           return std::string("w") + simd_width_name(i.param);
                         });

}  // namespace
}  // namespace dlrt::cpu
