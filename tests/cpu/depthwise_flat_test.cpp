// The flat-grid depthwise kernel (depthwise_flat.h) at every vector width
// against a double-precision conv: kernel shapes from 1x1 to 7x7 with
// asymmetric pads, output rows from 1 to 16 floats wide (grids that are and
// are not whole vectors), bias, residual and activations in registers
// (512 bits) or after the store (narrower), with post-stages.
#include "backends/cpu/kernels/depthwise_flat.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/kernels/isa.h"
#include "simd_width_test_util.h"

namespace dlrt::cpu {
namespace {

class DepthwiseFlatWidths : public testing::SimdWidthTest {};

Activation act_of(int which) {
  Activation a;
  switch (which % 5) {
    case 0:
      break;
    case 1:
      a.kind = ActKind::kRelu;
      break;
    case 2:
      a.kind = ActKind::kSigmoid;
      break;
    case 3:
      a.kind = ActKind::kHardSwish;
      a.affine = true, a.scale = 0.5f, a.shift = 0.25f;
      break;
    default:
      a.kind = ActKind::kClip, a.p0 = -0.5f, a.p1 = 0.75f;
      a.bounded = true, a.lo = -0.25f, a.hi = 0.5f;
      break;
  }
  return a;
}

TEST_P(DepthwiseFlatWidths, MatchesReference) {
  const SimdWidth width = GetParam();
  // apply_activation (the narrower widths' activation) at the same level.
  const ScopedCpuIsa cap(width == SimdWidth::k512   ? CpuIsa::kAvx512
                         : width == SimdWidth::k256 ? CpuIsa::kAvx2
                                                    : CpuIsa::kGeneric);
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const int shapes[][2] = {{1, 1}, {3, 3}, {5, 5}, {3, 1}, {1, 4}, {7, 7}, {2, 6}};
  int it = 0;
  for (const auto& k : shapes) {
    for (int64_t out_w : {1, 5, 7, 14, 16}) {
      ++it;
      DepthwiseFlatGeometry g;
      g.kh = k[0], g.kw = k[1];
      g.pad_top = it % 3, g.pad_left = (it + 1) % 3;
      g.out_h = 1 + it % 9, g.out_w = out_w;
      // Inputs a little narrower than out + k - 1 - pad: the bottom and right padding is implied.
      g.in_h = std::max<int64_t>(1, g.out_h + g.kh - 1 - g.pad_top - it % 2);
      g.in_w = std::max<int64_t>(1, g.out_w + g.kw - 1 - g.pad_left - (it + 1) % 2);
      DepthwiseFlatPlan plan;
      ASSERT_TRUE(depthwise_flat_fits(g, &plan));
      std::vector<float> x(static_cast<size_t>(g.in_h * g.in_w)), w(static_cast<size_t>(g.kh * g.kw));
      std::vector<float> res(static_cast<size_t>(g.out_h * g.out_w));
      for (float& v : x) v = u(rng);
      for (float& v : w) v = u(rng);
      for (float& v : res) v = u(rng);
      DepthwiseFlatOutput o;
      o.bias = u(rng);
      o.residual = it % 2 ? res.data() : nullptr;
      o.act = act_of(it);
      std::vector<float> y(res.size() + 5, 9.0f);
      depthwise_flat(width, x.data(), w.data(), plan, y.data(), o);
      SCOPED_TRACE("case " + std::to_string(it) + " width " + simd_width_name(width));
      for (int64_t oh = 0; oh < g.out_h; ++oh)
        for (int64_t ow = 0; ow < g.out_w; ++ow) {
          double s = o.bias;
          for (int64_t i = 0; i < g.kh; ++i)
            for (int64_t j = 0; j < g.kw; ++j) {
              const int64_t ih = oh + i - g.pad_top, iw = ow + j - g.pad_left;
              if (ih >= 0 && ih < g.in_h && iw >= 0 && iw < g.in_w)
                s += double{w[static_cast<size_t>(i * g.kw + j)]} * x[static_cast<size_t>(ih * g.in_w + iw)];
            }
          const size_t at = static_cast<size_t>(oh * g.out_w + ow);
          if (o.residual) s += res[at];
          const float want = activate(o.act, static_cast<float>(s));
          ASSERT_NEAR(y[at], want, 2e-5 * (1 + std::abs(want))) << "at " << oh << ", " << ow;
        }
      for (size_t i = res.size(); i < y.size(); ++i) ASSERT_EQ(y[i], 9.0f) << "wrote past the plane";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Widths, DepthwiseFlatWidths,
                         ::testing::Values(SimdWidth::k128, SimdWidth::k256, SimdWidth::k512),
                         [](const ::testing::TestParamInfo<SimdWidth>& i) {
                           return std::string("w") + simd_width_name(i.param);
                         });

}  // namespace
}  // namespace dlrt::cpu
