#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/pool_planes.h"
#include "kernel_test_util.h"

namespace dlrt::cpu {
namespace {

using testing::attr_int;
using testing::attr_ints;
using testing::attr_string;
using testing::expect_near;
using testing::run_op;

Tensor iota_4x4() {
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[i] = static_cast<float>(i + 1);
  return Tensor::from_vector<float>({1, 1, 4, 4}, v);
}

TEST(MaxPool, StridesAndIndices) {
  auto r = run_op("MaxPool", {iota_4x4()}, {{"kernel_shape", attr_ints({2, 2})}, {"strides", attr_ints({2, 2})}}, 2);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{1, 1, 2, 2}));
  expect_near((*r)[0], {6, 8, 14, 16});
  const int64_t* idx = (*r)[1].data<int64_t>();
  EXPECT_EQ(idx[0], 5);
  EXPECT_EQ(idx[3], 15);
  // Column-major indices: (h=1, w=1) -> 1 + 1*4.
  r = run_op("MaxPool", {iota_4x4()},
             {{"kernel_shape", attr_ints({2, 2})}, {"strides", attr_ints({2, 2})}, {"storage_order", attr_int(1)}}, 2);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[1].data<int64_t>()[0], 5);
  EXPECT_EQ((*r)[1].data<int64_t>()[1], 1 + 3 * 4);
}

TEST(MaxPool, PadsCeilModeDilations) {
  auto r = run_op("MaxPool", {iota_4x4()},
                  {{"kernel_shape", attr_ints({3, 3})}, {"strides", attr_ints({2, 2})}, {"ceil_mode", attr_int(1)}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (Shape{1, 1, 2, 2}));
  expect_near((*r)[0], {11, 12, 15, 16});
  r = run_op("MaxPool", {iota_4x4()}, {{"kernel_shape", attr_ints({2, 2})}, {"dilations", attr_ints({2, 2})}});
  ASSERT_TRUE(r.ok());
  expect_near((*r)[0], {11, 12, 15, 16});
  r = run_op("MaxPool", {iota_4x4()}, {{"kernel_shape", attr_ints({3, 3})}, {"pads", attr_ints({1, 1, 1, 1})}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (Shape{1, 1, 4, 4}));
  EXPECT_EQ((*r)[0].data<float>()[0], 6.0f);
  r = run_op("MaxPool", {iota_4x4()}, {{"kernel_shape", attr_ints({3, 3})}, {"auto_pad", attr_string("SAME_UPPER")}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (Shape{1, 1, 4, 4}));
}

TEST(MaxPool, Uint8AndErrors) {
  auto x = Tensor::from_vector<uint8_t>({1, 1, 1, 4}, {3, 250, 7, 1});
  auto r = run_op("MaxPool", {x}, {{"kernel_shape", attr_ints({1, 2})}, {"strides", attr_ints({1, 2})}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].data<uint8_t>()[0], 250);
  EXPECT_EQ((*r)[0].data<uint8_t>()[1], 7);
  EXPECT_FALSE(run_op("MaxPool", {iota_4x4()}, {}).ok());  // kernel_shape missing
  EXPECT_FALSE(run_op("MaxPool", {iota_4x4()}, {{"kernel_shape", attr_ints({5, 5})}}).ok());
  EXPECT_FALSE(run_op("MaxPool", {iota_4x4()}, {{"kernel_shape", attr_ints({2, 2})}, {"strides", attr_ints({0, 1})}}).ok());
}

// The 8-bit path (vectorised over output columns, strided loads too) against
// a naive window max, on the portable loops and on each vector ISA.
TEST(MaxPool, EightBitMatchesNaiveOnEveryIsa) {
  struct Case {
    int64_t H, W, k, stride, pad;
  };
  const Case cases[] = {{112, 112, 3, 2, 1}, {13, 70, 3, 1, 1}, {9, 11, 2, 2, 0}, {20, 31, 5, 3, 2}, {7, 100, 3, 2, 0}};
  std::mt19937 rng(5);
  std::vector<CpuIsa> isas{CpuIsa::kGeneric};
  if (detected_cpu_isa() >= CpuIsa::kAvx2) isas.push_back(CpuIsa::kAvx2);
  if (detected_cpu_isa() >= CpuIsa::kAvx512) isas.push_back(CpuIsa::kAvx512);
  for (const Case& c : cases) {
    const int64_t C = 3, OH = (c.H + 2 * c.pad - c.k) / c.stride + 1, OW = (c.W + 2 * c.pad - c.k) / c.stride + 1;
    std::vector<int8_t> xv(static_cast<size_t>(C * c.H * c.W));
    for (auto& v : xv) v = static_cast<int8_t>(rng());
    const ir::Attributes a = {{"kernel_shape", attr_ints({c.k, c.k})},
                              {"strides", attr_ints({c.stride, c.stride})},
                              {"pads", attr_ints({c.pad, c.pad, c.pad, c.pad})}};
    for (CpuIsa isa : isas) {
      SCOPED_TRACE(std::string(cpu_isa_name(isa)) + " " + std::to_string(c.H) + "x" + std::to_string(c.W) + " k " +
                   std::to_string(c.k) + " s " + std::to_string(c.stride));
      ScopedCpuIsa cap(isa);
      auto r = run_op("MaxPool", {Tensor::from_vector<int8_t>({1, C, c.H, c.W}, xv)}, a);
      ASSERT_TRUE(r.ok()) << r.status().to_string();
      ASSERT_EQ((*r)[0].shape(), (Shape{1, C, OH, OW}));
      const int8_t* got = (*r)[0].data<int8_t>();
      for (int64_t p = 0; p < C; ++p)
        for (int64_t oh = 0; oh < OH; ++oh)
          for (int64_t ow = 0; ow < OW; ++ow) {
            int want = -129;
            for (int64_t kh = 0; kh < c.k; ++kh)
              for (int64_t kw = 0; kw < c.k; ++kw) {
                const int64_t ih = oh * c.stride - c.pad + kh, iw = ow * c.stride - c.pad + kw;
                if (ih >= 0 && ih < c.H && iw >= 0 && iw < c.W)
                  want = std::max(want, int{xv[static_cast<size_t>((p * c.H + ih) * c.W + iw)]});
              }
            ASSERT_EQ(int{got[(p * OH + oh) * OW + ow]}, want) << p << "," << oh << "," << ow;
          }
    }
  }
}

TEST(AveragePool, CountIncludePad) {
  ir::Attributes a = {{"kernel_shape", attr_ints({3, 3})}, {"pads", attr_ints({1, 1, 1, 1})}};
  auto r = run_op("AveragePool", {iota_4x4()}, a);
  ASSERT_TRUE(r.ok());
  EXPECT_FLOAT_EQ((*r)[0].data<float>()[0], (1 + 2 + 5 + 6) / 4.0f);
  a["count_include_pad"] = attr_int(1);
  r = run_op("AveragePool", {iota_4x4()}, a);
  ASSERT_TRUE(r.ok());
  EXPECT_FLOAT_EQ((*r)[0].data<float>()[0], (1 + 2 + 5 + 6) / 9.0f);
  EXPECT_FLOAT_EQ((*r)[0].data<float>()[5], (1 + 2 + 3 + 5 + 6 + 7 + 9 + 10 + 11) / 9.0f);
}

TEST(AveragePool, OneDAndThreeD) {
  auto r = run_op("AveragePool", {Tensor::from_vector<float>({1, 1, 5}, {1, 2, 3, 4, 5})},
                  {{"kernel_shape", attr_ints({2})}, {"strides", attr_ints({2})}, {"ceil_mode", attr_int(1)}});
  ASSERT_TRUE(r.ok());
  expect_near((*r)[0], {1.5f, 3.5f, 5});
  r = run_op("AveragePool", {Tensor::from_vector<float>({1, 1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8})},
             {{"kernel_shape", attr_ints({2, 2, 2})}});
  ASSERT_TRUE(r.ok());
  expect_near((*r)[0], {4.5f});
}

TEST(GlobalPools, AverageMaxLp) {
  auto x = Tensor::from_vector<float>({1, 2, 2, 1}, {1, -3, 2, 4});
  auto r = run_op("GlobalAveragePool", {x});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (Shape{1, 2, 1, 1}));
  expect_near((*r)[0], {-1, 3});
  r = run_op("GlobalMaxPool", {x});
  ASSERT_TRUE(r.ok());
  expect_near((*r)[0], {1, 4});
  r = run_op("GlobalLpPool", {x});
  ASSERT_TRUE(r.ok());
  expect_near((*r)[0], {std::sqrt(10.0f), std::sqrt(20.0f)});
}

TEST(LpPool, P1AndP2) {
  auto x = Tensor::from_vector<float>({1, 1, 4}, {1, -2, 3, -4});
  auto r = run_op("LpPool", {x}, {{"kernel_shape", attr_ints({2})}, {"strides", attr_ints({2})}, {"p", attr_int(1)}});
  ASSERT_TRUE(r.ok());
  expect_near((*r)[0], {3, 7});
  r = run_op("LpPool", {x}, {{"kernel_shape", attr_ints({2})}, {"strides", attr_ints({2})}});
  ASSERT_TRUE(r.ok());
  expect_near((*r)[0], {std::sqrt(5.0f), 5});
}

TEST(MaxUnpool, ScattersAndChecksIndices) {
  auto pooled = run_op("MaxPool", {iota_4x4()}, {{"kernel_shape", attr_ints({2, 2})}, {"strides", attr_ints({2, 2})}}, 2);
  ASSERT_TRUE(pooled.ok());
  ir::Attributes a = {{"kernel_shape", attr_ints({2, 2})}, {"strides", attr_ints({2, 2})}};
  auto r = run_op("MaxUnpool", {(*pooled)[0], (*pooled)[1]}, a);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{1, 1, 4, 4}));
  expect_near((*r)[0], {0, 0, 0, 0, 0, 6, 0, 8, 0, 0, 0, 0, 0, 14, 0, 16});
  r = run_op("MaxUnpool", {(*pooled)[0], (*pooled)[1], Tensor::from_vector<int64_t>({4}, {1, 1, 5, 5})}, a);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (Shape{1, 1, 5, 5}));
  auto bad = Tensor::from_vector<int64_t>({1, 1, 2, 2}, {0, 1, 2, 99});
  EXPECT_FALSE(run_op("MaxUnpool", {(*pooled)[0], bad}, a).ok());
}

// ---- Fast float32 path vs the reference window walk ----------------------

Tensor random_tensor(const Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-10.0f, 10.0f);
  std::vector<float> v(static_cast<size_t>(element_count(shape)));
  for (auto& x : v) x = dist(rng);
  // Some ties and negative values everywhere so a zero padding would show.
  for (size_t i = 0; i < v.size(); i += 7) v[i] = -20.0f;
  for (size_t i = 3; i < v.size(); i += 11) v[i] = v[i - 1];
  return Tensor::from_vector<float>(shape, v);
}

struct Case2D {
  int64_t h, w, kh, kw, sh, sw, pt, pl, pb, pr;
  int ceil;
};

std::vector<Case2D> fast_cases() {
  std::vector<Case2D> cases;
  for (int64_t k : {1, 2, 3, 5})
    for (int64_t s : {1, 2, 3})
      for (int64_t pad = 0; pad < std::min<int64_t>(k, 3); ++pad)
        for (int ceil : {0, 1}) {
          cases.push_back({13, 29, k, k, s, s, pad, pad, pad, pad, ceil});  // odd sizes, tails of 8-wide vectors
          cases.push_back({7, 8 + k, k, k, s, s, pad, pad, 0, pad, ceil});
        }
  cases.push_back({112, 112, 3, 3, 2, 2, 1, 1, 1, 1, 0});  // resnet's MaxPool
  cases.push_back({9, 40, 2, 3, 1, 2, 1, 0, 0, 2, 1});     // asymmetric kernel, strides and pads
  cases.push_back({5, 33, 3, 1, 3, 1, 2, 0, 1, 0, 0});
  cases.push_back({6, 37, 1, 4, 2, 3, 0, 3, 0, 1, 1});
  return cases;
}

ir::Attributes attrs_2d(const Case2D& c) {
  return {{"kernel_shape", attr_ints({c.kh, c.kw})},
          {"strides", attr_ints({c.sh, c.sw})},
          {"pads", attr_ints({c.pt, c.pl, c.pb, c.pr})},
          {"ceil_mode", attr_int(c.ceil)}};
}

std::string describe(const Case2D& c) {
  return "in " + std::to_string(c.h) + "x" + std::to_string(c.w) + " k " + std::to_string(c.kh) + "x" +
         std::to_string(c.kw) + " s " + std::to_string(c.sh) + "x" + std::to_string(c.sw) + " pads " +
         std::to_string(c.pt) + "," + std::to_string(c.pl) + "," + std::to_string(c.pb) + "," + std::to_string(c.pr) +
         " ceil " + std::to_string(c.ceil);
}

// AveragePool computed independently (double sums) for explicit pads.
std::vector<float> naive_avg(const Tensor& x, const Shape& out, const Case2D& c, bool include_pad) {
  const int64_t planes = x.dim(0) * x.dim(1), oh_n = out[2], ow_n = out[3];
  const float* X = x.data<float>();
  std::vector<float> y;
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oh = 0; oh < oh_n; ++oh)
      for (int64_t ow = 0; ow < ow_n; ++ow) {
        double sum = 0;
        int64_t valid = 0, padded = 0;
        for (int64_t i = 0; i < c.kh; ++i)
          for (int64_t j = 0; j < c.kw; ++j) {
            const int64_t ih = oh * c.sh - c.pt + i, iw = ow * c.sw - c.pl + j;
            if (ih >= c.h + c.pb || iw >= c.w + c.pr) continue;
            ++padded;
            if (ih < 0 || iw < 0 || ih >= c.h || iw >= c.w) continue;
            ++valid;
            sum += X[(p * c.h + ih) * c.w + iw];
          }
        y.push_back(static_cast<float>(sum / static_cast<double>(include_pad ? padded : valid)));
      }
  return y;
}

TEST(PoolFastPath, MaxPoolMatchesReferenceWalk) {
  uint32_t seed = 1;
  for (const Case2D& c : fast_cases()) {
    SCOPED_TRACE(describe(c));
    const Tensor x = random_tensor({2, 3, c.h, c.w}, seed++);
    auto fast = run_op("MaxPool", {x}, attrs_2d(c));      // Y only: fast path
    auto ref = run_op("MaxPool", {x}, attrs_2d(c), 2);    // Y and Indices: reference walk
    ASSERT_TRUE(fast.ok()) << fast.status().to_string();
    ASSERT_TRUE(ref.ok()) << ref.status().to_string();
    ASSERT_EQ((*fast)[0].shape(), (*ref)[0].shape());
    const float* a = (*fast)[0].data<float>();
    const float* b = (*ref)[0].data<float>();
    for (int64_t i = 0; i < (*ref)[0].size(); ++i) ASSERT_EQ(a[i], b[i]) << "at " << i;
  }
}

TEST(PoolFastPath, AveragePoolMatchesNaive) {
  uint32_t seed = 100;
  for (const Case2D& c : fast_cases()) {
    for (int include_pad : {0, 1}) {
      SCOPED_TRACE(describe(c) + " count_include_pad " + std::to_string(include_pad));
      const Tensor x = random_tensor({1, 3, c.h, c.w}, seed++);
      auto a = attrs_2d(c);
      a["count_include_pad"] = attr_int(include_pad);
      auto r = run_op("AveragePool", {x}, a);
      ASSERT_TRUE(r.ok()) << r.status().to_string();
      expect_near((*r)[0], naive_avg(x, (*r)[0].shape(), c, include_pad != 0), 1e-5f);
    }
  }
}

TEST(PoolFastPath, OneDAndThreeDMaxPoolMatchReference) {
  const Tensor x1 = random_tensor({2, 2, 31}, 7);
  for (int64_t s : {1, 2, 3}) {
    ir::Attributes a = {
        {"kernel_shape", attr_ints({3})}, {"strides", attr_ints({s})}, {"pads", attr_ints({1, 2})}, {"ceil_mode", attr_int(1)}};
    auto fast = run_op("MaxPool", {x1}, a);
    auto ref = run_op("MaxPool", {x1}, a, 2);
    ASSERT_TRUE(fast.ok() && ref.ok());
    expect_near((*fast)[0], std::vector<float>((*ref)[0].data<float>(), (*ref)[0].data<float>() + (*ref)[0].size()), 0);
  }
  const Tensor x3 = random_tensor({1, 2, 5, 6, 19}, 8);
  ir::Attributes a = {{"kernel_shape", attr_ints({2, 3, 3})},
                                            {"strides", attr_ints({2, 1, 2})},
                                            {"pads", attr_ints({1, 1, 1, 0, 1, 1})}};
  auto fast = run_op("MaxPool", {x3}, a);
  auto ref = run_op("MaxPool", {x3}, a, 2);
  ASSERT_TRUE(fast.ok() && ref.ok());
  EXPECT_EQ((*fast)[0].shape(), (*ref)[0].shape());
  expect_near((*fast)[0], std::vector<float>((*ref)[0].data<float>(), (*ref)[0].data<float>() + (*ref)[0].size()), 0);
}

TEST(PoolFastPath, AllNegativeInfinityAndPadding) {
  // Every tap of the corner windows is -inf or padding: the result is -inf
  // (the reference keeps the first real tap), never the padding.
  const float inf = std::numeric_limits<float>::infinity();
  auto x = Tensor::from_vector<float>({1, 1, 2, 2}, {-inf, -inf, -inf, 5});
  ir::Attributes a = {{"kernel_shape", attr_ints({2, 2})}, {"pads", attr_ints({1, 1, 1, 1})}};
  auto r = run_op("MaxPool", {x}, a);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].data<float>()[0], -inf);
  EXPECT_EQ((*r)[0].data<float>()[4], 5.0f);
  // Pads >= kernel leave windows wholly in the padding: the reference walk
  // handles those (lowest float), and its result is unchanged.
  a = {{"kernel_shape", attr_ints({2, 2})}, {"pads", attr_ints({2, 2, 0, 0})}};
  r = run_op("MaxPool", {x}, a);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].data<float>()[0], std::numeric_limits<float>::lowest());
}

// The vector layer at the width this process picks (and on AVX-512 CPUs the
// 3x3/2 MaxPool kernel) against the portable kernels; every width:
// rows_pool_simd_test.cpp.
TEST(PoolFastPath, VectorAndPortableKernelsAgree) {
  const std::optional<SimdWidth> width = pool_impl::vector_width();
  if (!width) GTEST_SKIP() << "the vector layer is not selected here (DLRT_CPU_ISA=generic, or no vector ISA)";
  uint32_t seed = 500;
  for (const Case2D& c : fast_cases()) {
    SCOPED_TRACE(describe(c));
    pool_impl::Window3 w{};
    const int64_t oh = c.ceil ? (c.h + c.pt + c.pb - c.kh + c.sh - 1) / c.sh + 1 : (c.h + c.pt + c.pb - c.kh) / c.sh + 1;
    const int64_t ow = c.ceil ? (c.w + c.pl + c.pr - c.kw + c.sw - 1) / c.sw + 1 : (c.w + c.pl + c.pr - c.kw) / c.sw + 1;
    const int64_t in[3] = {1, c.h, c.w}, out[3] = {1, oh, ow}, k[3] = {1, c.kh, c.kw}, s[3] = {1, c.sh, c.sw},
                  pb[3] = {0, c.pt, c.pl}, pe[3] = {0, c.pb, c.pr};
    for (int i = 0; i < 3; ++i) {
      w.in[i] = in[i], w.out[i] = out[i], w.k[i] = k[i], w.s[i] = s[i], w.pb[i] = pb[i], w.pe[i] = pe[i];
    }
    if (!pool_impl::fast_window_ok(w)) continue;  // a ceil_mode window starting past the input
    const Tensor x = random_tensor({3, c.h, c.w}, seed++);
    const size_t n = static_cast<size_t>(3 * oh * ow);
    for (int mode = 0; mode < 3; ++mode) {
      std::vector<float> y0(n), y1(n);
      pool_impl::pool_planes_f32(mode == 0, mode == 2, w, x.data<float>(), y0.data(), 0, 3, std::nullopt);
      pool_impl::pool_planes_f32(mode == 0, mode == 2, w, x.data<float>(), y1.data(), 0, 3, width);
      for (size_t i = 0; i < n; ++i) ASSERT_NEAR(y0[i], y1[i], mode == 0 ? 0.0f : 1e-5f) << "mode " << mode << " at " << i;
    }
  }
  for (int64_t size : {1, 5, 8, 49, 50, 3137}) {
    const Tensor x = random_tensor({4, size}, seed++);
    for (bool is_max : {true, false}) {
      std::vector<float> y0(4), y1(4);
      pool_impl::global_pool_planes_f32(is_max, x.data<float>(), y0.data(), size, 0, 4, std::nullopt);
      pool_impl::global_pool_planes_f32(is_max, x.data<float>(), y1.data(), size, 0, 4, width);
      for (int i = 0; i < 4; ++i) EXPECT_NEAR(y0[i], y1[i], 1e-5f) << size;
    }
  }
}

TEST(PoolFastPath, GlobalPoolsMatchNaive) {
  for (int64_t hw : {1, 7, 9, 56}) {
    const Tensor x = random_tensor({2, 5, hw, hw + 2}, static_cast<uint32_t>(hw));
    auto avg = run_op("GlobalAveragePool", {x});
    auto mx = run_op("GlobalMaxPool", {x});
    ASSERT_TRUE(avg.ok() && mx.ok());
    const int64_t plane = hw * (hw + 2);
    std::vector<float> want_avg, want_max;
    for (int64_t p = 0; p < 10; ++p) {
      double sum = 0;
      float m = -std::numeric_limits<float>::infinity();
      for (int64_t i = 0; i < plane; ++i) {
        const float v = x.data<float>()[p * plane + i];
        sum += v;
        m = std::max(m, v);
      }
      want_avg.push_back(static_cast<float>(sum / static_cast<double>(plane)));
      want_max.push_back(m);
    }
    expect_near((*avg)[0], want_avg, 1e-5f);
    expect_near((*mx)[0], want_max, 0);
  }
}

}  // namespace
}  // namespace dlrt::cpu

namespace dlrt::cpu {
namespace {

// 8-bit MaxPool (quantized models) against a direct maximum over each window:
// strides 1 and 2, padding, uint8 and int8, planes wider than a vector.
TEST(PoolKernels, MaxPool8BitMatchesDirect) {
  struct Case {
    int64_t H, W, k, s, pad;
  };
  const Case cases[] = {{9, 37, 3, 2, 1}, {8, 20, 2, 1, 0}, {7, 7, 3, 1, 1}, {12, 33, 3, 2, 0}};
  std::mt19937 rng(17);
  for (bool is_signed : {false, true})
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(is_signed ? "int8" : "uint8") + " k " + std::to_string(c.k) + " s " +
                   std::to_string(c.s) + " pad " + std::to_string(c.pad));
      const int64_t C = 3, OH = (c.H + 2 * c.pad - c.k) / c.s + 1, OW = (c.W + 2 * c.pad - c.k) / c.s + 1;
      std::vector<uint8_t> raw(static_cast<size_t>(C * c.H * c.W));
      for (auto& v : raw) v = static_cast<uint8_t>(rng());
      Tensor x = is_signed ? Tensor::from_vector<int8_t>({1, C, c.H, c.W}, std::vector<int8_t>(raw.begin(), raw.end()))
                           : Tensor::from_vector<uint8_t>({1, C, c.H, c.W}, raw);
      auto r = run_op("MaxPool", {x},
                      {{"kernel_shape", attr_ints({c.k, c.k})}, {"strides", attr_ints({c.s, c.s})},
                       {"pads", attr_ints({c.pad, c.pad, c.pad, c.pad})}},
                      12);
      ASSERT_TRUE(r.ok()) << r.status().to_string();
      ASSERT_EQ((*r)[0].shape(), (Shape{1, C, OH, OW}));
      const auto* got = static_cast<const uint8_t*>((*r)[0].raw_data());
      for (int64_t ch = 0; ch < C; ++ch)
        for (int64_t oh = 0; oh < OH; ++oh)
          for (int64_t ow = 0; ow < OW; ++ow) {
            int best = -1000;
            for (int64_t kh = 0; kh < c.k; ++kh)
              for (int64_t kw = 0; kw < c.k; ++kw) {
                const int64_t ih = oh * c.s - c.pad + kh, iw = ow * c.s - c.pad + kw;
                if (ih < 0 || ih >= c.H || iw < 0 || iw >= c.W) continue;
                const uint8_t b = raw[static_cast<size_t>((ch * c.H + ih) * c.W + iw)];
                best = std::max(best, is_signed ? int{static_cast<int8_t>(b)} : int{b});
              }
            const uint8_t g = got[(ch * OH + oh) * OW + ow];
            ASSERT_EQ(is_signed ? int{static_cast<int8_t>(g)} : int{g}, best) << ch << "," << oh << "," << ow;
          }
    }
}

}  // namespace
}  // namespace dlrt::cpu

// com.dlrt MaxPoolNhwc (pool_nhwc.cpp) against MaxPool on the same data,
// transposed, on every ISA; dilations and Indices are refused.
namespace dlrt::cpu {
namespace {

TEST(MaxPool, NhwcMatchesNchwOnEveryIsa) {
  struct Case {
    int64_t N, C, H, W, k, stride, pad, ceil;
  };
  const Case cases[] = {{1, 64, 30, 31, 3, 2, 1, 0}, {2, 5, 9, 11, 2, 2, 0, 1}, {1, 70, 7, 7, 3, 1, 1, 0}};
  std::mt19937 rng(8);
  std::vector<CpuIsa> isas{CpuIsa::kGeneric};
  if (detected_cpu_isa() >= CpuIsa::kAvx2) isas.push_back(CpuIsa::kAvx2);
  if (detected_cpu_isa() >= CpuIsa::kAvx512) isas.push_back(CpuIsa::kAvx512);
  for (const Case& c : cases) {
    std::vector<int8_t> nchw(static_cast<size_t>(c.N * c.C * c.H * c.W));
    for (auto& v : nchw) v = static_cast<int8_t>(rng());
    std::vector<int8_t> nhwc(nchw.size());
    for (int64_t n = 0; n < c.N; ++n)
      for (int64_t ch = 0; ch < c.C; ++ch)
        for (int64_t p = 0; p < c.H * c.W; ++p)
          nhwc[static_cast<size_t>((n * c.H * c.W + p) * c.C + ch)] = nchw[static_cast<size_t>((n * c.C + ch) * c.H * c.W + p)];
    const ir::Attributes a = {{"kernel_shape", attr_ints({c.k, c.k})},
                              {"strides", attr_ints({c.stride, c.stride})},
                              {"pads", attr_ints({c.pad, c.pad, c.pad, c.pad})},
                              {"ceil_mode", attr_int(c.ceil)}};
    auto want = run_op("MaxPool", {Tensor::from_vector<int8_t>({c.N, c.C, c.H, c.W}, nchw)}, a);
    ASSERT_TRUE(want.ok()) << want.status().to_string();
    const Shape ws = (*want)[0].shape();
    for (CpuIsa isa : isas) {
      SCOPED_TRACE(std::string(cpu_isa_name(isa)) + " C " + std::to_string(c.C));
      ScopedCpuIsa cap(isa);
      auto got = run_op("MaxPoolNhwc", {Tensor::from_vector<int8_t>({c.N, c.H, c.W, c.C}, nhwc)}, a, 1, 1, "com.dlrt");
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      ASSERT_EQ((*got)[0].shape(), (Shape{ws[0], ws[2], ws[3], ws[1]}));
      const int8_t* g = (*got)[0].data<int8_t>();
      const int8_t* w = (*want)[0].data<int8_t>();
      const int64_t P = ws[2] * ws[3];
      for (int64_t n = 0; n < ws[0]; ++n)
        for (int64_t ch = 0; ch < ws[1]; ++ch)
          for (int64_t p = 0; p < P; ++p)
            ASSERT_EQ(g[(n * P + p) * ws[1] + ch], w[(n * ws[1] + ch) * P + p]) << n << "," << ch << "," << p;
    }
  }
  auto dilated = run_op("MaxPoolNhwc", {Tensor::from_vector<uint8_t>({1, 5, 5, 2}, std::vector<uint8_t>(50, 1))},
                        {{"kernel_shape", attr_ints({2, 2})}, {"dilations", attr_ints({2, 2})}}, 1, 1, "com.dlrt");
  EXPECT_FALSE(dilated.ok());
  auto floats = run_op("MaxPoolNhwc", {Tensor::from_vector<float>({1, 2, 2, 1}, {1, 2, 3, 4})},
                       {{"kernel_shape", attr_ints({2, 2})}}, 1, 1, "com.dlrt");
  EXPECT_FALSE(floats.ok());
}

}  // namespace
}  // namespace dlrt::cpu
