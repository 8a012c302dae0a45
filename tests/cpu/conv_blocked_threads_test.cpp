// conv_blocked (kernels/conv_blocked.h) on 1 to 5 threads: the split of the
// work over the threads (by output blocks, or by bands of rows where the
// activations outweigh the weights; unit_order.h) gives every
// output the same sums in the same order, so the results equal the
// single-threaded ones bit for bit, and both match a plain reference conv.
// Odd shapes, channel counts that are not multiples of the block, batches
// of several images, strides, pads, dilations, depthwise convs, blocked and
// NCHW inputs, the AVX-512 kernels (where the CPU has them) and the portable
// loops.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <tuple>
#include <string>
#include <vector>

#include "backends/cpu/kernels/conv_blocked.h"
#include "backends/cpu/kernels/conv_blocked_impl.h"
#include "conv_test_util.h"
#include "kernel_test_util.h"
#include "backends/cpu/kernels/unit_order.h"
#include "backends/cpu/kernels/isa.h"

namespace dlrt::testing {
namespace {

using cpu::BlockedConvGeometry;

struct Case {
  int64_t N, C, H, W, M, k, stride, pad, dil;
  bool depthwise, x_blocked, residual;
};

std::string name(const Case& c) {
  return "N" + std::to_string(c.N) + " C" + std::to_string(c.C) + " " + std::to_string(c.H) + "x" +
         std::to_string(c.W) + " M" + std::to_string(c.M) + " k" + std::to_string(c.k) + " s" +
         std::to_string(c.stride) + " p" + std::to_string(c.pad) + " d" + std::to_string(c.dil) +
         (c.depthwise ? " depthwise" : "") + (c.x_blocked ? " blocked" : " nchw") + (c.residual ? " +z" : "");
}

using cpu::testing::random_floats;

// The plain conv, NCHW in and out, with bias and the optional residual (NCHW).
std::vector<float> reference(const Case& c, const BlockedConvGeometry& g, const std::vector<float>& x,
                             const std::vector<float>& w, const std::vector<float>& bias, const std::vector<float>& z) {
  cpu::testing::RefConvShape s;
  s.N = c.N, s.C = c.C, s.M = c.M, s.group = c.depthwise ? c.C : 1, s.H = c.H, s.W = c.W, s.KH = s.KW = c.k;
  s.SH = s.SW = c.stride, s.DH = s.DW = c.dil, s.PT = s.PL = c.pad, s.OH = g.OH, s.OW = g.OW;
  return cpu::testing::reference_conv(s, x, w, bias, z, cpu::Activation{});
}

// Runs every case on `block` with no pool and on pools of 1..5 threads.
void check_cases(int block) {
  const std::vector<Case> cases = {
      {1, 35, 23, 19, 40, 3, 1, 1, 1, false, true, false},   // 3 blocks in and out, padded copy
      {3, 20, 17, 13, 36, 3, 2, 1, 1, false, true, true},    // batch 3, strided, residual
      {2, 24, 9, 31, 50, 1, 1, 0, 1, false, true, false},    // 1x1 (rows run as one)
      {1, 17, 29, 11, 18, 1, 2, 0, 1, false, true, false},   // strided 1x1
      {1, 40, 7, 7, 200, 3, 1, 1, 1, false, true, false},    // the weights outweigh the activations
      {2, 3, 33, 27, 20, 7, 2, 3, 1, false, false, false},   // stem on NCHW input
      {1, 21, 15, 22, 24, 3, 1, 2, 2, false, true, false},   // dilated
      {2, 37, 21, 18, 37, 3, 1, 1, 1, true, true, false},    // depthwise
      {1, 50, 25, 25, 50, 5, 2, 2, 1, true, true, true},     // depthwise 5x5 strided, residual
      {1, 40, 19, 19, 40, 5, 1, 2, 1, true, true, true},     // depthwise 5x5, masked tiles at both row ends
      {2, 16, 6, 3, 16, 5, 1, 2, 1, true, true, false},      // depthwise, no position inside the input
      {1, 33, 14, 30, 33, 3, 2, 1, 1, true, true, false},    // depthwise 3x3 strided, one masked end
      {1, 20, 12, 23, 20, 3, 1, 2, 2, true, true, false},    // depthwise dilated
      {5, 19, 3, 2, 21, 3, 1, 1, 1, false, true, false},     // fewer rows than threads
      // Depthwise on short planes with two blocks per thread or more: by
      // channel blocks on several threads (depthwise_by_rows).
      {1, 77, 7, 7, 77, 5, 1, 2, 1, true, true, false},      // 5x5 on 7x7, 5 blocks (a partial one)
      {2, 100, 7, 9, 100, 3, 1, 1, 1, true, true, true},     // 3x3, batch 2, residual
      {1, 150, 5, 6, 150, 3, 2, 1, 1, true, true, false},    // strided
      // Inputs over half a 2 MiB L2 with 3 output block pairs: on one thread,
      // bands of rows each run for every pair.
      {1, 64, 64, 72, 80, 1, 1, 0, 1, false, true, false},   // 1x1, merged rows
      {1, 64, 14, 14, 64, 1, 1, 0, 1, false, true, true},    // 1x1 by rows, 14 rows (7 per band on 2 threads)
      {1, 48, 96, 96, 40, 3, 1, 1, 1, false, true, true},    // 3x3 padded copy, residual
      // Padded inputs over 4 MiB (more than the L2 of today's CPUs) and
      // outputs wider than a two-row tile: read in place, the row ends as
      // one-position tiles, the rows past the input skipped.
      {1, 48, 170, 160, 24, 3, 2, 1, 1, false, true, false},  // stride-2 stem-like, partial output block
      {1, 48, 150, 150, 8, 3, 1, 1, 1, false, true, true},    // stride 1, residual
      {1, 48, 150, 150, 8, 3, 1, 2, 2, false, true, false},   // dilated
  };
  const int64_t b = block;
  for (const Case& c : cases) {
    SCOPED_TRACE(name(c) + " block " + std::to_string(block));
    BlockedConvGeometry g;
    g.N = c.N, g.C = c.C, g.H = c.H, g.W = c.W, g.M = c.M;
    g.kh = g.kw = c.k, g.sh = g.sw = c.stride, g.dh = g.dw = c.dil, g.pad_top = g.pad_left = c.pad;
    g.OH = (c.H + 2 * c.pad - c.dil * (c.k - 1) - 1) / c.stride + 1;
    g.OW = (c.W + 2 * c.pad - c.dil * (c.k - 1) - 1) / c.stride + 1;
    const int64_t cg = c.depthwise ? 1 : c.C, ocbs = (c.M + b - 1) / b, out_plane = g.OH * g.OW;
    const auto x = random_floats(static_cast<size_t>(c.N * c.C * c.H * c.W), 1);
    const auto w = random_floats(static_cast<size_t>(c.M * cg * c.k * c.k), 2);
    const auto bias = random_floats(static_cast<size_t>(c.M), 3);
    const auto z = c.residual ? random_floats(static_cast<size_t>(c.N * c.M * out_plane), 4) : std::vector<float>();
    const auto packed = cpu::pack_blocked_conv(w.data(), c.M, c.C, c.k, c.k, c.depthwise, block);
    const auto xb = cpu::testing::blocked_copy(x, c.N, c.C, c.H * c.W, block);
    const auto zb = c.residual ? cpu::testing::blocked_copy(z, c.N, c.M, out_plane, block) : std::vector<float>();
    const size_t ysize = static_cast<size_t>(c.N * ocbs * out_plane * b);
    auto run = [&](ThreadPool* pool) {
      std::vector<float> y(ysize, NAN);
      cpu::conv_blocked(packed, g, c.x_blocked ? xb.data() : x.data(), c.x_blocked, bias.data(),
                        c.residual ? zb.data() : nullptr, cpu::Activation{}, y.data(), pool);
      return y;
    };
    const std::vector<float> single = run(nullptr);
    std::vector<float> got(static_cast<size_t>(c.N * c.M * out_plane));
    cpu::from_blocked(single.data(), c.N, c.M, out_plane, block, got.data(), nullptr);
    const std::vector<float> want = reference(c, g, x, w, bias, z);
    for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4f * (1.0f + std::fabs(want[i]))) << i;
    for (int threads = 1; threads <= 5; ++threads) {
      SCOPED_TRACE("threads " + std::to_string(threads));
      ThreadPool pool(threads);
      const std::vector<float> y = run(&pool);
      // Every real lane equals the single-threaded result bit for bit.
      std::vector<float> yn(want.size());
      cpu::from_blocked(y.data(), c.N, c.M, out_plane, block, yn.data(), nullptr);
      ASSERT_EQ(std::memcmp(yn.data(), got.data(), yn.size() * sizeof(float)), 0);
    }
  }
}

TEST(ConvBlockedThreads, SameResultOnAnyThreadCount) {
  check_cases(cpu::blocked_width());
  cpu::ScopedCpuIsa generic(cpu::CpuIsa::kGeneric);
  check_cases(8);
  check_cases(16);
}

// to_blocked and from_blocked on 1 to 5 threads (units by pieces of the
// positions too, so that one channel block spreads over the threads): every
// channel lane lands where the layout puts it, lanes past C are zero, and
// the round trip gives the input back, for positions not a multiple of 16
// and the pieces' edges.
TEST(ConvBlockedThreads, ReordersOnAnyThreadCount) {
  auto check = [](int block) {
    const int64_t b = block;
    for (auto [N, C, hw] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
             {1, 16, 112 * 112}, {1, 5, 1000}, {2, 19, 333}, {3, 40, 33}, {1, 7, 3}, {2, 24, 160}}) {
      SCOPED_TRACE(std::to_string(N) + "x" + std::to_string(C) + "x" + std::to_string(hw) + " block " +
                   std::to_string(block));
      const int64_t cbs = (C + b - 1) / b;
      const auto x = random_floats(static_cast<size_t>(N * C * hw), 7);
      for (int threads = 1; threads <= 5; ++threads) {
        SCOPED_TRACE("threads " + std::to_string(threads));
        ThreadPool pool(threads);
        std::vector<float> xb(static_cast<size_t>(N * cbs * hw * b), NAN);
        cpu::to_blocked(x.data(), N, C, hw, block, xb.data(), &pool);
        for (int64_t n = 0; n < N; ++n)
          for (int64_t c = 0; c < cbs * b; ++c)
            for (int64_t p = 0; p < hw; ++p) {
              const float got = xb[static_cast<size_t>(((n * cbs + c / b) * hw + p) * b + c % b)];
              const float want = c < C ? x[static_cast<size_t>((n * C + c) * hw + p)] : 0.0f;
              ASSERT_EQ(got, want) << n << " " << c << " " << p;
            }
        std::vector<float> back(x.size(), NAN);
        cpu::from_blocked(xb.data(), N, C, hw, block, back.data(), &pool);
        ASSERT_EQ(std::memcmp(back.data(), x.data(), x.size() * sizeof(float)), 0);
      }
    }
  };
  check(cpu::blocked_width());
  cpu::ScopedCpuIsa generic(cpu::CpuIsa::kGeneric);
  check(8);
  check(16);
}

// unit_at visits every (image, group, row) once, runs of one (image, group)
// hold consecutive rows, and with bands the units of a band come before the
// next band's.
TEST(ConvBlockedThreads, UnitOrderIsAPermutation) {
  for (int64_t images : {1, 3})
    for (int64_t groups : {1, 2, 5})
      for (int64_t rows : {1, 2, 7, 16})
        for (int64_t band : {0, 1, 3, 4, 7, 16, 40}) {
          SCOPED_TRACE(std::to_string(images) + " " + std::to_string(groups) + " " + std::to_string(rows) + " " +
                       std::to_string(band));
          std::set<std::tuple<int64_t, int64_t, int64_t>> seen;
          const int64_t units = images * groups * rows, bw = band <= 0 ? rows : std::min(band, rows);
          int64_t last_band = -1, last_n = -1;
          for (int64_t u = 0; u < units; ++u) {
            const auto p = cpu::unit_at(u, groups, rows, band);
            ASSERT_TRUE(p.n >= 0 && p.n < images && p.group >= 0 && p.group < groups && p.row >= 0 && p.row < rows);
            ASSERT_TRUE(seen.insert({p.n, p.group, p.row}).second);
            ASSERT_GT(p.end, u);
            ASSERT_LE(p.end, units);
            if (u + 1 < p.end) {
              const auto q = cpu::unit_at(u + 1, groups, rows, band);
              ASSERT_EQ(q.n, p.n);
              ASSERT_EQ(q.group, p.group);
              ASSERT_EQ(q.row, p.row + 1);
            }
            const int64_t bi = p.row / bw;
            if (p.n == last_n) {
              ASSERT_GE(bi, last_band);
            }
            last_band = bi;
            last_n = p.n;
          }
          ASSERT_EQ(static_cast<int64_t>(seen.size()), units);
        }
}

// pointwise_merge_rows: by bands of rows on several threads, the merge that
// leaves the busiest thread the fewest rows (14 rows on 2 threads: unmerged,
// 7 and 7; merged by 2, bands of 4 and 3 merged rows, 8 and 6), the largest
// such; elsewhere the largest merge that leaves each thread a few units.
TEST(ConvBlockedThreads, PointwiseMergeBalancesBands) {
  auto geometry = [](int64_t n, int64_t oh, int64_t ow) {
    BlockedConvGeometry g;
    g.N = n, g.C = 256, g.M = 256, g.H = g.OH = oh, g.W = g.OW = ow;
    return g;
  };
  EXPECT_EQ(cpu::blocked_detail::band_output_rows(14, 14, 2, 2), 8);
  EXPECT_EQ(cpu::blocked_detail::band_output_rows(14, 14, 1, 2), 7);
  EXPECT_EQ(cpu::blocked_detail::pointwise_merge_rows(geometry(1, 14, 14), 8, 2, true, 0, 0), 1);
  EXPECT_EQ(cpu::blocked_detail::pointwise_merge_rows(geometry(1, 56, 56), 8, 2, true, 0, 0), 14);
  EXPECT_EQ(cpu::blocked_detail::pointwise_merge_rows(geometry(1, 28, 28), 8, 2, true, 0, 0), 7);
  EXPECT_EQ(cpu::blocked_detail::pointwise_merge_rows(geometry(1, 10, 10), 8, 2, true, 0, 0), 1);
  EXPECT_EQ(cpu::blocked_detail::pointwise_merge_rows(geometry(1, 30, 30), 8, 3, true, 0, 0), 5);
  // By output blocks, or on one thread: the largest merge that fits.
  EXPECT_EQ(cpu::blocked_detail::pointwise_merge_rows(geometry(1, 14, 14), 8, 2, false, 0, 0), 14);
  EXPECT_EQ(cpu::blocked_detail::pointwise_merge_rows(geometry(1, 14, 14), 8, 1, true, 0, 0), 14);
  EXPECT_EQ(cpu::blocked_detail::pointwise_merge_rows(geometry(1, 14, 14), 8, 1, true, 1 << 20, 64 << 10), 2);
  for (int64_t threads : {2, 3, 4})
    for (int64_t oh : {6, 7, 12, 14, 20, 28, 30, 56, 112}) {
      const int64_t k = cpu::blocked_detail::pointwise_merge_rows(geometry(1, oh, oh), 8, threads, true, 0, 0);
      ASSERT_EQ(oh % k, 0);
      for (int64_t c = 1; c <= oh; ++c) {
        if (oh % c != 0 || (c > 1 && oh / c < 2 * threads)) continue;
        ASSERT_LE(cpu::blocked_detail::band_output_rows(oh, oh, k, threads),
                  cpu::blocked_detail::band_output_rows(oh, oh, c, threads))
            << oh << " rows, " << threads << " threads, k " << k << " against " << c;
      }
    }
}

// depthwise_by_rows: by bands of rows, unless a band's halo is half its
// share of the input rows or more and there are two blocks per thread.
TEST(ConvBlockedThreads, DepthwiseSplitsShortPlanesByBlocks) {
  auto geometry = [](int64_t c, int64_t oh, int64_t k, int64_t stride) {
    BlockedConvGeometry g;
    g.C = g.M = c, g.OH = g.OW = oh, g.H = g.W = oh * stride, g.kh = g.kw = k, g.sh = g.sw = stride;
    g.pad_top = g.pad_left = k / 2;
    return g;
  };
  using cpu::blocked_detail::depthwise_by_rows;
  EXPECT_FALSE(depthwise_by_rows(geometry(960, 7, 5, 1), 16, 2));   // bands of 4 rows read 8
  EXPECT_FALSE(depthwise_by_rows(geometry(672, 7, 3, 1), 16, 2));   // 4 read 6
  EXPECT_FALSE(depthwise_by_rows(geometry(672, 14, 5, 1), 16, 2));  // 7 read 11
  EXPECT_TRUE(depthwise_by_rows(geometry(480, 14, 3, 1), 16, 2));   // 7 read 9
  EXPECT_TRUE(depthwise_by_rows(geometry(672, 7, 5, 2), 16, 2));    // 8 input rows read 11
  EXPECT_TRUE(depthwise_by_rows(geometry(144, 28, 3, 1), 16, 2));
  EXPECT_TRUE(depthwise_by_rows(geometry(48, 7, 5, 1), 16, 2));     // 3 blocks: fewer than two per thread
  EXPECT_FALSE(depthwise_by_rows(geometry(48, 7, 5, 1), 8, 2));     // 6 blocks of 8
  EXPECT_TRUE(depthwise_by_rows(geometry(960, 7, 5, 1), 16, 1));    // one thread: one band
}

}  // namespace
}  // namespace dlrt::testing
