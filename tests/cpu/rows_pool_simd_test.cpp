// The row, pooling and reduction kernels of the vector layer
// (kernels/rows_vec.h, kernels/pool_planes.h, kernels/reduce_rows.h) at
// every width this CPU runs (the others skipped, saying so), against
// references in double or the portable code: Softmax and LogSoftmax along
// rows and down columns, LayerNorm rows, the separable pools, the 3x3/2
// MaxPool, the global pools and the row reductions, with tails of every
// length and nothing written past the end.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/kernels/pool_planes.h"
#include "backends/cpu/kernels/reduce_rows.h"
#include "backends/cpu/kernels/rows_vec.h"
#include "backends/cpu/kernels/simd/width.h"
#include "simd_width_test_util.h"

namespace dlrt::cpu {
namespace {

constexpr float kSentinel = 7.25f;

std::vector<float> rnd(int64_t n, uint32_t seed, float lo = -4.0f, float hi = 4.0f) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = u(g);
  return v;
}

class RowsPoolSimd : public testing::SimdWidthTest {};

// Softmax (log: LogSoftmax) of x[0, n) in double.
std::vector<double> ref_softmax(const float* x, int64_t n, int64_t stride, bool log) {
  double mx = -std::numeric_limits<double>::infinity(), sum = 0;
  for (int64_t i = 0; i < n; ++i) mx = std::max(mx, static_cast<double>(x[i * stride]));
  for (int64_t i = 0; i < n; ++i) sum += std::exp(static_cast<double>(x[i * stride]) - mx);
  std::vector<double> r(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(x[i * stride]) - mx;
    r[static_cast<size_t>(i)] = log ? d - std::log(sum) : std::exp(d) / sum;
  }
  return r;
}

void expect_softmax_near(float got, double want, bool log, const std::string& where) {
  const double tol = log ? 2e-6 * (1 + std::fabs(want)) : 2e-6 * want + 1e-30;
  ASSERT_NEAR(got, want, tol) << where;
}

TEST_P(RowsPoolSimd, SoftmaxRowsEveryTail) {
  const SimdWidth w = GetParam();
  for (bool log : {false, true}) {
    for (int64_t n : {1, 2, 3, 5, 7, 15, 16, 17, 31, 33, 63, 64, 65, 79, 127, 128, 129, 200, 1000}) {
      const std::vector<float> x = rnd(n, static_cast<uint32_t>(n) + (log ? 500 : 0));
      std::vector<float> y(static_cast<size_t>(n) + 20, kSentinel);
      softmax_row_vec(w, log, x.data(), y.data(), n);
      const std::vector<double> want = ref_softmax(x.data(), n, 1, log);
      for (int64_t i = 0; i < n; ++i)
        expect_softmax_near(y[static_cast<size_t>(i)], want[static_cast<size_t>(i)], log,
                            "n " + std::to_string(n) + " i " + std::to_string(i));
      for (size_t i = static_cast<size_t>(n); i < y.size(); ++i) ASSERT_EQ(y[i], kSentinel) << "wrote past n " << n;
    }
  }
}

TEST_P(RowsPoolSimd, SoftmaxRowsSpecials) {
  const SimdWidth w = GetParam();
  const float inf = std::numeric_limits<float>::infinity();
  // -inf inputs get 0 (their exp), the rest share the sum; a NaN makes the whole row NaN.
  std::vector<float> x = rnd(37, 3);
  x[4] = -inf;
  x[36] = -inf;
  std::vector<float> y(37);
  softmax_row_vec(w, false, x.data(), y.data(), 37);
  EXPECT_EQ(y[4], 0.0f);
  EXPECT_EQ(y[36], 0.0f);
  double s = 0;
  for (float v : y) s += v;
  EXPECT_NEAR(s, 1.0, 1e-5);
  x[10] = std::numeric_limits<float>::quiet_NaN();
  softmax_row_vec(w, false, x.data(), y.data(), 37);
  for (float v : y) EXPECT_TRUE(std::isnan(v));
}

TEST_P(RowsPoolSimd, SoftmaxColumnsEveryWidth) {
  const SimdWidth w = GetParam();
  const int64_t step = softmax_cols_step(w), inner = step + 9;
  for (bool log : {false, true}) {
    for (int64_t n : {1, 3, 12}) {
      const std::vector<float> x = rnd(n * inner, static_cast<uint32_t>(n * 31 + (log ? 1 : 0)));
      for (int64_t cols = 1; cols <= step; ++cols) {
        std::vector<float> y(static_cast<size_t>(n * inner), kSentinel);
        softmax_cols_vec(w, log, x.data(), y.data(), n, inner, cols);
        for (int64_t c = 0; c < inner; ++c) {
          const std::vector<double> want = ref_softmax(x.data() + c, n, inner, log);
          for (int64_t r = 0; r < n; ++r) {
            const float got = y[static_cast<size_t>(r * inner + c)];
            if (c >= cols) {
              ASSERT_EQ(got, kSentinel) << "column " << c << " past cols " << cols;
              continue;
            }
            expect_softmax_near(got, want[static_cast<size_t>(r)], log,
                                "n " + std::to_string(n) + " cols " + std::to_string(cols) + " r " +
                                    std::to_string(r) + " c " + std::to_string(c));
          }
        }
      }
    }
  }
}

TEST_P(RowsPoolSimd, LayerNormRowsEveryTail) {
  const SimdWidth w = GetParam();
  for (int64_t n : {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 64, 65, 192, 384, 385}) {
    for (float offset : {0.0f, 1000.0f}) {  // 1000: the shifted sums' cancellation
      std::vector<float> x = rnd(n, static_cast<uint32_t>(n) + 7);
      for (auto& v : x) v += offset;
      const std::vector<float> s = rnd(n, 11, 0.5f, 1.5f), b = rnd(n, 12);
      for (bool with_b : {true, false}) {
        std::vector<float> y(static_cast<size_t>(n) + 20, kSentinel);
        double mean = 0, inv = 0;
        layer_norm_row_vec(w, x.data(), s.data(), with_b ? b.data() : nullptr, n, 1e-5, y.data(), &mean, &inv);
        double m = 0, var = 0;
        for (float v : x) m += v;
        m /= static_cast<double>(n);
        for (float v : x) var += (v - m) * (v - m);
        var /= static_cast<double>(n);
        const double want_inv = 1.0 / std::sqrt(var + 1e-5);
        ASSERT_NEAR(mean, m, 1e-9 * (1 + std::fabs(m))) << n;
        ASSERT_NEAR(inv, want_inv, 1e-6 * want_inv) << n << " offset " << offset;
        for (int64_t i = 0; i < n; ++i) {
          const size_t k = static_cast<size_t>(i);
          const double want = (x[k] - m) * want_inv * s[k] + (with_b ? b[k] : 0.0f);
          // The output rounds (x - mean) in float: an ulp of x, times inv.
          const double tol = 2e-6 * (1 + std::fabs(want)) + 1.2e-7 * std::fabs(x[k]) * want_inv * s[k];
          ASSERT_NEAR(y[k], want, tol) << "n " << n << " i " << i;
        }
        for (size_t i = static_cast<size_t>(n); i < y.size(); ++i) ASSERT_EQ(y[i], kSentinel) << "wrote past n " << n;
      }
    }
  }
}

pool_impl::Window3 window2d(int64_t h, int64_t w, int64_t k, int64_t s, int64_t pad, bool ceil) {
  const int64_t oh = ceil ? (h + 2 * pad - k + s - 1) / s + 1 : (h + 2 * pad - k) / s + 1;
  const int64_t ow = ceil ? (w + 2 * pad - k + s - 1) / s + 1 : (w + 2 * pad - k) / s + 1;
  pool_impl::Window3 g{};
  const int64_t in[3] = {1, h, w}, out[3] = {1, oh, ow}, kk[3] = {1, k, k}, ss[3] = {1, s, s}, p[3] = {0, pad, pad};
  for (int i = 0; i < 3; ++i) g.in[i] = in[i], g.out[i] = out[i], g.k[i] = kk[i], g.s[i] = ss[i], g.pb[i] = p[i], g.pe[i] = p[i];
  return g;
}

// The separable pools at this width against the portable code: MaxPool the
// same floats, AveragePool the same sums in the same order.
TEST_P(RowsPoolSimd, PoolsMatchPortable) {
  const SimdWidth w = GetParam();
  uint32_t seed = 40;
  for (int64_t k : {1, 2, 3, 5})
    for (int64_t s : {1, 2, 3})
      for (int64_t pad : {0, 1})
        for (int64_t hw : {5, 9, 17, 40}) {
          if (pad >= k) continue;
          for (bool ceil : {false, true}) {
            const pool_impl::Window3 g = window2d(hw, hw + 3, k, s, pad, ceil);
            if (!pool_impl::fast_window_ok(g)) continue;
            const int64_t in = g.in[1] * g.in[2], out = g.out[1] * g.out[2];
            const std::vector<float> x = rnd(3 * in, seed++);
            for (int mode = 0; mode < 3; ++mode) {
              SCOPED_TRACE("k " + std::to_string(k) + " s " + std::to_string(s) + " pad " + std::to_string(pad) +
                           " hw " + std::to_string(hw) + (ceil ? " ceil" : "") + " mode " + std::to_string(mode));
              std::vector<float> y0(static_cast<size_t>(3 * out)), y1(y0.size());
              pool_impl::pool_planes_f32(mode == 0, mode == 2, g, x.data(), y0.data(), 0, 3, std::nullopt);
              pool_impl::pool_planes_f32(mode == 0, mode == 2, g, x.data(), y1.data(), 0, 3, w);
              for (size_t i = 0; i < y0.size(); ++i) ASSERT_EQ(y0[i], y1[i]) << i;
            }
          }
        }
}

// The 3x3/2 MaxPool kernel (picked at 512 bits) at this width against the portable passes.
TEST_P(RowsPoolSimd, MaxPool3x3Stride2MatchesPortable) {
  const SimdWidth w = GetParam();
  uint32_t seed = 90;
  for (int64_t hw : {3, 4, 7, 16, 33, 56, 112})
    for (int64_t pad : {0, 1})
      for (bool ceil : {false, true}) {
        const pool_impl::Window3 g = window2d(hw, hw + 1, 3, 2, pad, ceil);
        if (!pool_impl::fast_window_ok(g)) continue;
        SCOPED_TRACE("hw " + std::to_string(hw) + " pad " + std::to_string(pad) + (ceil ? " ceil" : ""));
        const int64_t in = g.in[1] * g.in[2], out = g.out[1] * g.out[2];
        const std::vector<float> x = rnd(2 * in, seed++);
        std::vector<float> y0(static_cast<size_t>(2 * out)), y1(y0.size() + 20, kSentinel);
        pool_impl::pool_planes_f32(true, false, g, x.data(), y0.data(), 0, 2, std::nullopt);
        pool_impl::maxpool3s2_f32(w, g, x.data(), y1.data(), 0, 2);
        for (size_t i = 0; i < y0.size(); ++i) ASSERT_EQ(y0[i], y1[i]) << i;
        for (size_t i = y0.size(); i < y1.size(); ++i) ASSERT_EQ(y1[i], kSentinel) << "wrote past the planes";
      }
}

TEST_P(RowsPoolSimd, GlobalPoolsMatchReference) {
  const SimdWidth w = GetParam();
  for (int64_t size : {1, 3, 4, 5, 8, 15, 16, 17, 49, 50, 3137}) {
    const std::vector<float> x = rnd(4 * size, static_cast<uint32_t>(size));
    for (bool is_max : {true, false}) {
      std::vector<float> y(4);
      pool_impl::global_pool_planes_f32(is_max, x.data(), y.data(), size, 0, 4, w);
      for (int64_t p = 0; p < 4; ++p) {
        const float* xp = x.data() + p * size;
        if (is_max) {
          EXPECT_EQ(y[static_cast<size_t>(p)], *std::max_element(xp, xp + size)) << size;
        } else {
          double sum = 0;
          for (int64_t i = 0; i < size; ++i) sum += xp[i];
          EXPECT_NEAR(y[static_cast<size_t>(p)], sum / static_cast<double>(size), 1e-6) << size;
        }
      }
    }
  }
}

// The contiguous reductions: sums (in double) within rounding of the
// portable chain, max and min exact, a NaN anywhere making them NaN.
TEST_P(RowsPoolSimd, RowReductionsMatchPortable) {
  const SimdWidth w = GetParam();
  for (int64_t n : {1, 3, 7, 8, 15, 16, 31, 32, 33, 63, 64, 65, 127, 129, 1000}) {
    std::vector<float> x = rnd(3 * n, static_cast<uint32_t>(n) + 3);
    for (RowReduce op : {RowReduce::kSum, RowReduce::kSumSquare, RowReduce::kAbsSum, RowReduce::kMax, RowReduce::kMin}) {
      SCOPED_TRACE("n " + std::to_string(n) + " op " + std::to_string(static_cast<int>(op)));
      double got[3];
      reduce_rows_f32(w, op, x.data(), n, 3, got);
      for (int64_t r = 0; r < 3; ++r) {
        const double want = reduce_rows_detail::reduce_generic(op, x.data() + r * n, n);
        if (op == RowReduce::kMax || op == RowReduce::kMin) {
          EXPECT_EQ(got[r], want);
        } else {
          double mag = 0;
          for (int64_t i = 0; i < n; ++i) mag += std::fabs(static_cast<double>(x[static_cast<size_t>(r * n + i)]));
          EXPECT_NEAR(got[r], want, 1e-13 * (mag + 1) * (op == RowReduce::kSumSquare ? 16 : 1));
        }
      }
    }
    // A NaN in the middle row (at its last element: a tail when n is not a multiple of the step).
    x[static_cast<size_t>(2 * n - 1)] = std::numeric_limits<float>::quiet_NaN();
    for (RowReduce op : {RowReduce::kMax, RowReduce::kMin}) {
      double got[3];
      reduce_rows_f32(w, op, x.data(), n, 3, got);
      EXPECT_FALSE(std::isnan(got[0])) << n;
      EXPECT_TRUE(std::isnan(got[1])) << n;
      EXPECT_FALSE(std::isnan(got[2])) << n;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Widths, RowsPoolSimd, ::testing::Values(SimdWidth::k128, SimdWidth::k256, SimdWidth::k512),
                         [](const ::testing::TestParamInfo<SimdWidth>& i) {
                           return std::string("w") + simd_width_name(i.param);
                         });

}  // namespace
}  // namespace dlrt::cpu
