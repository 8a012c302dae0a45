// conv_direct_whole_k (conv_direct.h), the direct conv over 8-row weight
// panels, at every vector width it is built for (8 x 48 at 512 bits, 8 x 8
// at 256, 8 x 4 / 8 x 12 at 128), called directly on plans of both layouts:
// against the definition in double, and at 256 bits bit for bit against 512
// where both run (the same FMA chains per output). The shapes reach each
// width's edge cases: partial and 1-4-column tiles, the last column riding
// on the last full tile, stores straddling two grid rows, tiles stored
// through the buffer, copied small planes, private copies on 2 threads,
// partial K ranges.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/kernels/conv_direct.h"
#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/isa.h"
#include "core/thread_pool.h"
#include "simd_width_test_util.h"

namespace dlrt::cpu {
namespace {

struct Shape {
  int64_t C, M, H, W, k, s, d, pad;
};

// The shapes' tiles at 512 / 256 / 128 (x86) bits: 1x1 7x7 (49 columns: the
// 49th riding, or 1 narrow), 1x1 4x13 (52: a 4-column narrow tile at 512),
// 3x3 on 7x7, 8x8 and 4x4 (copied small planes: 64 floats fit 4 vectors at
// 512 bits, 16 at 128, 25 of 5x5 at 256), 3x3 pad 1 on 9x22 (out_w 22:
// two-row stores), 3x3 on 5x5 (out_w 3 < lanes: through the buffer), 5x5/2
// on 15x15, dilated 3x3, 3x3/2 with 32 channels on 20x20 (private copies on
// 2 threads), M 11 and 5 (a partial last panel).
const Shape kShapes[] = {{5, 11, 7, 7, 1, 1, 1, 0},   {6, 9, 4, 13, 1, 1, 1, 0},  {4, 16, 7, 7, 3, 1, 1, 1},
                         {3, 8, 8, 8, 3, 1, 1, 1},    {5, 11, 9, 22, 3, 1, 1, 1}, {4, 5, 5, 5, 3, 1, 1, 0},
                         {3, 13, 15, 15, 5, 2, 1, 2}, {4, 9, 11, 12, 3, 1, 2, 2}, {32, 24, 20, 20, 3, 2, 1, 1},
                         {7, 17, 14, 14, 1, 1, 1, 0}, {6, 10, 4, 4, 3, 1, 1, 1}};

ConvDirectGeometry geometry(const Shape& sh) {
  ConvDirectGeometry g;
  g.channels = sh.C, g.in_h = sh.H, g.in_w = sh.W, g.kh = g.kw = sh.k, g.sh = g.sw = sh.s, g.dh = g.dw = sh.d;
  g.pad_top = g.pad_left = sh.pad;
  const int64_t span = (sh.k - 1) * sh.d + 1;
  g.out_h = (sh.H + 2 * sh.pad - span) / sh.s + 1, g.out_w = (sh.W + 2 * sh.pad - span) / sh.s + 1;
  return g;
}

struct Data {
  std::vector<float> x, w, bias, z;
};

Data make_data(const Shape& sh, const ConvDirectGeometry& g, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1, 1);
  Data d;
  d.x.resize(static_cast<size_t>(sh.C * sh.H * sh.W));
  d.w.resize(static_cast<size_t>(sh.M * sh.C * sh.k * sh.k));
  d.bias.resize(static_cast<size_t>(sh.M));
  d.z.resize(static_cast<size_t>(sh.M * g.out_h * g.out_w));
  for (auto* v : {&d.x, &d.w, &d.bias, &d.z})
    for (float& f : *v) f = dist(rng);
  return d;
}

// Terms [k0, k1) of the sum, plus bias and residual when `epilogue`, through `act`, in double.
double expect_at(const Shape& sh, const ConvDirectGeometry& g, const Data& d, int64_t m, int64_t o, int64_t k0,
                 int64_t k1, bool epilogue, ActKind act) {
  const int64_t oh = o / g.out_w, ow = o % g.out_w, taps = sh.k * sh.k;
  double acc = 0;
  for (int64_t p = k0; p < k1; ++p) {
    const int64_t c = p / taps, i = p % taps / sh.k, j = p % sh.k;
    const int64_t ih = oh * sh.s - sh.pad + i * sh.d, iw = ow * sh.s - sh.pad + j * sh.d;
    if (ih < 0 || ih >= sh.H || iw < 0 || iw >= sh.W) continue;
    acc += static_cast<double>(d.x[static_cast<size_t>((c * sh.H + ih) * sh.W + iw)]) *
           d.w[static_cast<size_t>(m * sh.C * taps + p)];
  }
  if (!epilogue) return acc;
  acc += d.bias[static_cast<size_t>(m)] + d.z[static_cast<size_t>(m * g.out_h * g.out_w + o)];
  if (act == ActKind::kRelu) return std::max(0.0, acc);
  if (act == ActKind::kSigmoid) return 1.0 / (1.0 + std::exp(-acc));
  return acc;
}

class ConvDirectWholeK : public testing::SimdWidthTest {
 protected:
  void SetUp() override {
    SimdWidthTest::SetUp();
    if (IsSkipped()) return;
    const float one = 1.0f;
    if (PackedMatrix::pack_a(false, 1, 1, &one, 1)->mr() != 8)
      GTEST_SKIP() << "weights are packed in 8-row panels only at cpu_isa() avx512 (here " << cpu_isa_name(cpu_isa())
                   << ")";
  }
};

// The grid columns a tile of nr columns (vectors of `lanes`) leaves to a
// 1-4-column narrow tile, which sums in U partial sums; every other column
// is one FMA chain over K (a last single column riding on the last full
// tile where that tile stores from the registers too).
int64_t narrow_columns(const ConvDirectPlan& p, int64_t nr, int64_t lanes) {
  const bool from_registers = p.wq == p.g.out_w || p.g.out_w >= lanes;
  const int64_t r = p.grid % nr;
  if (from_registers && p.grid > nr && r == 1) return 0;
  return r >= 1 && r <= 4 ? r : 0;
}

// Runs every shape in both layouts under each epilogue (none, Relu with
// bias and residual, Sigmoid: an activation in registers) on 1
// and 2 threads, and a partial K range; returns in order the outputs of
// the plans whose columns sum in the same order at 512 and 256 bits.
std::vector<float> run_all(SimdWidth width, bool check_reference) {
  std::vector<float> all;
  std::mt19937 rng(81);
  ThreadPool pool(2);
  for (const Shape& sh : kShapes) {
    const ConvDirectGeometry g = geometry(sh);
    const Data d = make_data(sh, g, rng);
    const bool spatial = sh.k > 1 || sh.s > 1;
    for (int layout = 0; layout < (spatial ? 2 : 1); ++layout) {
      ConvDirectPlan plan;
      EXPECT_TRUE(conv_direct_plan(g, &plan, false, layout == 1));
      std::vector<int64_t> off(static_cast<size_t>(plan.k));
      conv_direct_offsets(plan, off.data());
      auto packed = PackedMatrix::pack_a(false, sh.M, plan.k, d.w.data(), plan.k);
      const int64_t plane = g.out_h * g.out_w;
      for (int variant = 0; variant < 5; ++variant) {
        SCOPED_TRACE("C " + std::to_string(sh.C) + " M " + std::to_string(sh.M) + " in " + std::to_string(sh.H) + "x" +
                     std::to_string(sh.W) + " k " + std::to_string(sh.k) + " s " + std::to_string(sh.s) + " d " +
                     std::to_string(sh.d) + " layout " + std::to_string(layout) + " variant " +
                     std::to_string(variant));
        const ActKind act = variant == 1 || variant == 3 ? ActKind::kRelu
                            : variant == 2               ? ActKind::kSigmoid
                                                         : ActKind::kNone;
        const bool epilogue = variant >= 1 && variant <= 3;
        const bool threads = variant == 3;
        // variant 4: terms [k/3, 2k/3) of the sum alone (a caller adding partials).
        const int64_t k0 = variant == 4 ? plan.k / 3 : 0, k1 = variant == 4 ? 2 * plan.k / 3 : plan.k;
        GemmEpilogue ep;
        if (epilogue) {
          ep.row_bias = d.bias.data();
          ep.residual = d.z.data();
          ep.ldr = plane;
          ep.act.kind = act;
        }
        std::vector<float> y(static_cast<size_t>(sh.M * plane), -7.0f);
        const uint64_t before = conv_direct_runs();
        conv_direct_whole_k(width, plan, off.data(), d.x.data(), *packed, y.data(), ep, threads ? &pool : nullptr, 0,
                            k0, variant == 4 ? k1 : -1);
        EXPECT_EQ(conv_direct_runs() - before, 1u);
        if (check_reference) {
          const double tol = 2e-5 * std::sqrt(static_cast<double>(plan.k)) + 1e-6;
          int bad = 0;
          for (int64_t m = 0; m < sh.M && bad < 3; ++m)
            for (int64_t o = 0; o < plane && bad < 3; ++o) {
              const double want = expect_at(sh, g, d, m, o, k0, k1, epilogue, act);
              const float got = y[static_cast<size_t>(m * plane + o)];
              if (!(std::abs(got - want) <= tol * (1 + std::abs(want)))) {
                ++bad;
                ADD_FAILURE() << "m " << m << " o " << o << ": " << got << " want " << want;
              }
            }
        }
        if (act != ActKind::kSigmoid && narrow_columns(plan, 48, 16) == narrow_columns(plan, 8, 8))
          all.insert(all.end(), y.begin(), y.end());
      }
    }
  }
  return all;
}

TEST_P(ConvDirectWholeK, MatchesDefinitionOnEveryTileKind) { run_all(GetParam(), true); }

// The 256-bit tile sums each output in the order of the 512-bit one (one
// FMA chain per output over K) but where one width leaves a column to a
// narrow tile and the other does not, so where both run those outputs
// are the same bits (Sigmoid left out: its reciprocal estimate is the
// width's, simd.h's recip_1_2).
TEST(ConvDirectWholeKWidths, Bits256Equal512) {
  if (!simd_width_runs(SimdWidth::k512) || !simd_width_runs(SimdWidth::k256))
    GTEST_SKIP() << "needs both the 512- and 256-bit instantiations to run here";
  const float one = 1.0f;
  if (PackedMatrix::pack_a(false, 1, 1, &one, 1)->mr() != 8)
    GTEST_SKIP() << "weights are packed in 8-row panels only at cpu_isa() avx512";
  const std::vector<float> a = run_all(SimdWidth::k512, false), b = run_all(SimdWidth::k256, false);
  ASSERT_EQ(a.size(), b.size());
  ASSERT_GT(a.size(), 10000u);
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
}

INSTANTIATE_TEST_SUITE_P(Widths, ConvDirectWholeK, ::testing::Values(SimdWidth::k128, SimdWidth::k256, SimdWidth::k512),
                         [](const ::testing::TestParamInfo<SimdWidth>& i) {
                           return std::string("w") + simd_width_name(i.param);
                         });

}  // namespace
}  // namespace dlrt::cpu
