// conv_blocked (kernels/conv_blocked.h) with a kernel, stride, dilation and
// pads of their own along each axis: tall kernels dilated along the rows
// whose padding holds most of their reach (the tiles skip the kernel rows
// outside the input; only column padding is copied), pads past the kernel's
// reach (output rows that read nothing but padding: bias and residual only),
// rows padded but not columns (read in place), column padding on inputs
// whose copy would not fit the L2 beside the input and output (read in
// place, the row ends one position at a time), outputs at most half a tile
// wide (two-row tiles on a copy padded along both axes), channel counts
// below one block and odd sizes. Compared with a plain reference conv on no
// pool and on 1 and 2 threads, the vector kernels at every width the CPU
// runs and the portable loops.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/kernels/conv_blocked.h"
#include "backends/cpu/kernels/isa.h"
#include "device/cpu_caches.h"
#include "isa_test_util.h"
#include "conv_test_util.h"
#include "kernel_test_util.h"

namespace dlrt::testing {
namespace {

using cpu::BlockedConvGeometry;

struct Case {
  const char* what;
  int64_t N, C, H, W, M, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
  bool x_blocked, residual;
};

using cpu::testing::random_floats;

BlockedConvGeometry geometry(const Case& c) {
  BlockedConvGeometry g;
  g.N = c.N, g.C = c.C, g.H = c.H, g.W = c.W, g.M = c.M;
  g.kh = c.kh, g.kw = c.kw, g.sh = c.sh, g.sw = c.sw, g.dh = c.dh, g.dw = c.dw, g.pad_top = c.pt, g.pad_left = c.pl;
  g.OH = (c.H + c.pt + c.pb - c.dh * (c.kh - 1) - 1) / c.sh + 1;
  g.OW = (c.W + c.pl + c.pr - c.dw * (c.kw - 1) - 1) / c.sw + 1;
  return g;
}

// The plain conv, NCHW in and out, with bias and the optional residual (NCHW), summed in double.
std::vector<float> reference(const Case& c, const BlockedConvGeometry& g, const std::vector<float>& x,
                             const std::vector<float>& w, const std::vector<float>& bias, const std::vector<float>& z) {
  cpu::testing::RefConvShape s;
  s.N = c.N, s.C = c.C, s.M = c.M, s.H = c.H, s.W = c.W, s.KH = c.kh, s.KW = c.kw, s.SH = c.sh, s.SW = c.sw;
  s.DH = c.dh, s.DW = c.dw, s.PT = c.pt, s.PL = c.pl, s.OH = g.OH, s.OW = g.OW;
  return cpu::testing::reference_conv(s, x, w, bias, z, cpu::Activation{});
}

// Rows enough that an input of `blocks` channel blocks, W columns, its
// column-padded copy and an output as large exceed the L2 the CPU reports.
int64_t rows_past_l2(int64_t blocks, int64_t W) {
  const int64_t l2 = std::max<int64_t>(device::cpu_caches().l2, 1 << 20);
  return l2 / (3 * blocks * W * 16 * int64_t{sizeof(float)}) + 3;
}

void check_cases(int block) {
  const int64_t tall = rows_past_l2(1, 61), tall2 = rows_past_l2(2, 47);
  std::vector<Case> cases = {
      {"7x1 dilated 17 along rows, pad 51", 1, 12, 128, 37, 12, 7, 1, 1, 1, 17, 1, 51, 0, 51, 0, true, true},
      {"3x1 dilation 40, pad 40 (the outer taps half dead)", 1, 12, 100, 19, 12, 3, 1, 1, 1, 40, 1, 40, 0, 40, 0, true,
       false},
      {"5x1 dilation 27, odd channels", 2, 5, 61, 23, 21, 5, 1, 1, 1, 27, 1, 54, 0, 54, 0, true, false},
      {"pads past the reach: rows of padding only", 1, 12, 9, 30, 12, 3, 1, 1, 1, 4, 1, 20, 0, 13, 0, true, true},
      {"pads past the reach, both axes", 1, 7, 6, 5, 9, 3, 3, 1, 1, 3, 2, 11, 6, 10, 7, true, true},
      {"7x3 dilated 2 along rows, padded both axes", 1, 12, 40, 45, 12, 7, 3, 1, 1, 2, 1, 6, 1, 6, 1, true, true},
      {"7x3, pads 3 and 1", 2, 12, 33, 31, 4, 7, 3, 1, 1, 1, 1, 3, 1, 3, 1, true, false},
      {"tall kernel, asymmetric pads, strided rows", 1, 20, 50, 29, 24, 5, 2, 2, 1, 3, 2, 7, 0, 2, 3, true, false},
      {"only the bottom rows padded", 1, 12, 40, 26, 12, 3, 1, 1, 1, 9, 1, 0, 0, 18, 0, true, false},
      {"narrow output (two-row tiles), rows padded", 1, 17, 21, 6, 19, 5, 1, 1, 1, 4, 1, 8, 0, 8, 0, true, true},
      {"narrow output, dilated both axes", 2, 12, 15, 9, 12, 3, 3, 1, 1, 5, 3, 5, 2, 5, 2, true, false},
      {"NCHW input, dilated along rows", 1, 3, 64, 33, 12, 5, 3, 1, 1, 11, 1, 22, 1, 22, 1, false, false},
      {"single output row", 1, 12, 3, 40, 12, 3, 1, 1, 1, 30, 1, 30, 0, 30, 0, true, false},
      {"7x3 over the L2, read in place", 1, 12, tall, 61, 12, 7, 3, 1, 1, 1, 1, 3, 1, 3, 1, true, true},
      {"over the L2, dilated, two output blocks", 1, 23, tall2, 47, 20, 7, 3, 1, 1, 2, 2, 6, 3, 6, 2, true, false},
  };
  const int64_t b = block;
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.what) + ", block " + std::to_string(block));
    const BlockedConvGeometry g = geometry(c);
    ASSERT_GT(g.OH, 0);
    ASSERT_GT(g.OW, 0);
    const int64_t ocbs = (c.M + b - 1) / b, out_plane = g.OH * g.OW;
    const auto x = random_floats(static_cast<size_t>(c.N * c.C * c.H * c.W), 11);
    const auto w = random_floats(static_cast<size_t>(c.M * c.C * c.kh * c.kw), 12);
    const auto bias = random_floats(static_cast<size_t>(c.M), 13);
    const auto z = c.residual ? random_floats(static_cast<size_t>(c.N * c.M * out_plane), 14) : std::vector<float>();
    const auto packed = cpu::pack_blocked_conv(w.data(), c.M, c.C, c.kh, c.kw, false, block);
    const auto xb = cpu::testing::blocked_copy(x, c.N, c.C, c.H * c.W, block);
    const auto zb = c.residual ? cpu::testing::blocked_copy(z, c.N, c.M, out_plane, block) : std::vector<float>();
    const std::vector<float> want = reference(c, g, x, w, bias, z);
    for (int threads = 0; threads <= 2; ++threads) {
      SCOPED_TRACE("threads " + std::to_string(threads));
      ThreadPool pool(threads > 0 ? threads : 1);
      std::vector<float> y(static_cast<size_t>(c.N * ocbs * out_plane * b), NAN);
      cpu::conv_blocked(packed, g, c.x_blocked ? xb.data() : x.data(), c.x_blocked, bias.data(),
                        c.residual ? zb.data() : nullptr, cpu::Activation{}, y.data(), threads > 0 ? &pool : nullptr);
      std::vector<float> got(want.size());
      cpu::from_blocked(y.data(), c.N, c.M, out_plane, block, got.data(), nullptr);
      for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4f * (1.0f + std::fabs(want[i]))) << i;
    }
  }
}

TEST(ConvBlockedRect, MatchesReference) {
  // 16-channel blocks at every vector width this CPU runs (w128 at generic);
  // 8-channel blocks take the portable loops.
  for (cpu::CpuIsa isa : cpu::testing::runnable_isas()) {
    SCOPED_TRACE(cpu::cpu_isa_name(isa));
    cpu::ScopedCpuIsa cap(isa);
    check_cases(16);
  }
  cpu::ScopedCpuIsa generic(cpu::CpuIsa::kGeneric);
  check_cases(8);
}

}  // namespace
}  // namespace dlrt::testing
