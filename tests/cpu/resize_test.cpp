#include <cstdio>
#include <cstring>
#include <random>
#include <tuple>

#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/simd/width.h"
#include "kernel_test_util.h"

namespace dlrt::cpu::testing {
namespace {

Tensor empty() { return Tensor(); }
Tensor scales(std::vector<float> v) { return Tensor::from_vector<float>({static_cast<int64_t>(v.size())}, v); }

TEST(Resize, NearestHalfPixelUpsample) {
  Tensor x = Tensor::from_vector<float>({1, 2}, {1, 2});
  auto r = run_op("Resize", {x, empty(), scales({1, 2})}, {}, 1, 13);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{1, 4}));
  expect_near((*r)[0], {1, 1, 2, 2});
}

TEST(Resize, RunsInEveryOpsetAfterItsLastDefinition) {
  // Resize was last defined in opset 19; models of opset 22 to 25 use it (the
  // kernel was registered up to 21 only, so they were refused as Unsupported).
  Tensor x = Tensor::from_vector<float>({1, 2}, {1, 2});
  for (int opset : {19, 21, 22, 23, 25}) {
    auto r = run_op("Resize", {x, empty(), scales({1, 2})}, {}, 1, opset);
    ASSERT_TRUE(r.ok()) << "opset " << opset << ": " << r.status().to_string();
    expect_near((*r)[0], {1, 1, 2, 2});
  }
}

TEST(Resize, LinearHalfPixelAndAlignCorners) {
  Tensor x = Tensor::from_vector<float>({1, 2}, {1, 2});
  auto r = run_op("Resize", {x, empty(), scales({1, 2})}, {{"mode", attr_string("linear")}}, 1, 13);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {1, 1.25f, 1.75f, 2});
  auto a = run_op("Resize", {x, empty(), scales({1, 2})},
                  {{"mode", attr_string("linear")}, {"coordinate_transformation_mode", attr_string("align_corners")}}, 1, 13);
  ASSERT_TRUE(a.ok());
  expect_near((*a)[0], {1, 4.f / 3, 5.f / 3, 2});
}

TEST(Resize, SizesInputNearestDownsample) {
  Tensor x = Tensor::from_vector<float>({1, 4}, {1, 2, 3, 4});
  auto r = run_op("Resize", {x, empty(), empty(), Tensor::from_vector<int64_t>({2}, {1, 2})}, {}, 1, 13);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {1, 3});
}

TEST(Resize, AxesAndIntegerNearest) {
  Tensor x = Tensor::from_vector<int32_t>({2, 2}, {1, 2, 3, 4});
  auto r = run_op("Resize", {x, empty(), scales({2})}, {{"axes", attr_ints({0})}, {"coordinate_transformation_mode", attr_string("asymmetric")}}, 1, 18);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{4, 2}));
  std::vector<int32_t> got((*r)[0].data<int32_t>(), (*r)[0].data<int32_t>() + 8);
  EXPECT_EQ(got, (std::vector<int32_t>{1, 2, 1, 2, 3, 4, 3, 4}));
}

TEST(Resize, Errors) {
  Tensor x = Tensor::from_vector<float>({1, 2}, {1, 2});
  EXPECT_FALSE(run_op("Resize", {x, empty(), scales({1})}, {}, 1, 13).ok());
  EXPECT_FALSE(run_op("Resize", {x, empty(), empty(), empty()}, {}, 1, 13).ok());
  EXPECT_FALSE(run_op("Resize", {x, empty(), scales({1, 2})}, {{"mode", attr_string("bogus")}}, 1, 13).ok());
  EXPECT_FALSE(run_op("Resize", {x, empty(), scales({1, -2})}, {}, 1, 13).ok());
}

// Random bytes of `dtype` (a bool as 0 or 1) in `shape`.
Tensor random_tensor(DType dtype, const Shape& shape, std::mt19937& rng) {
  Tensor t = *Tensor::allocate(dtype, shape);
  auto* p = static_cast<uint8_t*>(t.raw_data());
  for (size_t i = 0; i < t.nbytes(); ++i) p[i] = dtype == DType::kBool ? rng() % 2 : static_cast<uint8_t>(rng());
  return t;
}

// Nearest Resize of two adjacent axes (resize_nearest.cpp's one pass, the
// unresized trailing axes, if any, folded into its elements) against the same
// resize with an axis of 1 inserted between the two, which the per-axis
// passes run: the same index maps, so equal bytes, for every
// coordinate_transformation_mode and nearest_mode, integer and fractional
// scales, sizes, up and down, several dtypes, trailing axes (as a blocked
// layout's 16 channels), batch > 1, 1-element axes and 1..4 threads.
TEST(Resize, NearestAdjacentAxesMatchesPerAxisPasses) {
  std::mt19937 rng(5);
  const char* coords[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
                          "tf_half_pixel_for_nn"};
  const char* modes[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  const DType dtypes[] = {DType::kFloat32, DType::kUInt8, DType::kFloat16, DType::kInt64, DType::kBool};
  const float factors[] = {2, 3, 1, 0.5f, 1.5f, 4, 17, 0.75f};
  const int64_t trailing[] = {0, 0, 1, 3, 4, 16};
  int cases = 0;
  for (int it = 0; it < 200; ++it) {
    const int64_t n = 1 + rng() % 2, c = 1 + rng() % 3, h = 1 + rng() % 19, w = 1 + rng() % 37;
    const int64_t t = trailing[rng() % 6];
    const float sh = factors[rng() % 8], sw = factors[rng() % 8];
    const bool use_sizes = rng() % 4 == 0;
    const DType dt = dtypes[rng() % 5];
    ir::Attributes attrs = {{"coordinate_transformation_mode", attr_string(coords[rng() % 6])},
                            {"nearest_mode", attr_string(modes[rng() % 4])}};
    Shape fast_shape = {n, c, h, w}, ref_shape = {n, c, h, 1, w};
    std::vector<float> fast_scales = {1, 1, sh, sw}, ref_scales = {1, 1, sh, 1, sw};
    const int64_t oh = std::max<int64_t>(1, static_cast<int64_t>(h * sh)), ow = 1 + rng() % 70;
    std::vector<int64_t> fast_sizes = {n, c, oh, ow}, ref_sizes = {n, c, oh, 1, ow};
    if (t > 0) {
      fast_shape.push_back(t), ref_shape.push_back(t);
      fast_scales.push_back(1), ref_scales.push_back(1);
      fast_sizes.push_back(t), ref_sizes.push_back(t);
    }
    const Tensor x = random_tensor(dt, fast_shape, rng);
    const Tensor xr = Tensor::view(dt, ref_shape, const_cast<void*>(x.raw_data()));
    auto sizes = [](const std::vector<int64_t>& v) {
      return Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v);
    };
    const std::vector<Tensor> fast_in = use_sizes ? std::vector<Tensor>{x, empty(), empty(), sizes(fast_sizes)}
                                                  : std::vector<Tensor>{x, empty(), scales(fast_scales)};
    const std::vector<Tensor> ref_in = use_sizes ? std::vector<Tensor>{xr, empty(), empty(), sizes(ref_sizes)}
                                                 : std::vector<Tensor>{xr, empty(), scales(ref_scales)};
    auto want = run_op("Resize", ref_in, attrs, 1, 19);
    ASSERT_TRUE(want.ok()) << want.status().to_string();
    if ((*want)[0].size() == 0) continue;
    ++cases;
    for (int threads = 1; threads <= 4; ++threads) {
      auto got = run_op("Resize", fast_in, attrs, 1, 19, "", threads);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      Shape ws = (*want)[0].shape();
      ws.erase(ws.begin() + 3);
      ASSERT_EQ((*got)[0].shape(), ws) << "case " << it;
      ASSERT_EQ((*got)[0].nbytes(), (*want)[0].nbytes());
      EXPECT_EQ(std::memcmp((*got)[0].raw_data(), (*want)[0].raw_data(), (*got)[0].nbytes()), 0)
          << "case " << it << " " << attrs.at("coordinate_transformation_mode").s << " " << attrs.at("nearest_mode").s
          << " scales " << sh << " " << sw << " trailing " << t << " threads " << threads;
    }
  }
  EXPECT_GT(cases, 120);
}

// The integer replication written directly: asymmetric floor by 2 on rows and
// by k on columns (the constant-factor loops 2, 3, 4, 8, the lane permutes of
// resize_nearest_simd.h and the loop over k), 5, 18 and 37 columns (tails of
// 4, 8 and 16 lanes), float and uint8, at each vector width this CPU runs and
// in portable code.
TEST(Resize, NearestIntegerReplication) {
  const std::tuple<CpuIsa, SimdWidth, const char*> isas[] = {{CpuIsa::kAvx512, SimdWidth::k512, "avx512"},
                                                             {CpuIsa::kAvx2, SimdWidth::k256, "avx2"},
                                                             {CpuIsa::kNeon, SimdWidth::k128, "neon"},
                                                             {CpuIsa::kGeneric, SimdWidth::k128, "generic"}};
  for (const auto& [isa, width, name] : isas) {
    if (!simd_width_runs(width)) {
      std::printf("skipped %s: this CPU cannot run the %s-bit instantiation\n", name, simd_width_name(width));
      continue;
    }
    ScopedCpuIsa cap(isa);
    for (int64_t w : {5, 18, 37})
      for (int64_t k : {2, 3, 4, 5, 6, 8, 16, 17})
        for (DType dt : {DType::kFloat32, DType::kUInt8}) {
          std::vector<float> v(static_cast<size_t>(2 * 3 * w));
          for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 251);
          Tensor x = Tensor::from_vector<float>({2, 3, w}, v);
          if (dt == DType::kUInt8) {
            std::vector<uint8_t> b(v.begin(), v.end());
            x = Tensor::from_vector<uint8_t>({2, 3, w}, b);
          }
          auto r = run_op("Resize", {x, empty(), scales({1, 2, static_cast<float>(k)})},
                          {{"coordinate_transformation_mode", attr_string("asymmetric")},
                           {"nearest_mode", attr_string("floor")}},
                          1, 13);
          ASSERT_TRUE(r.ok()) << r.status().to_string();
          const int64_t ow = w * k;
          ASSERT_EQ((*r)[0].shape(), (Shape{2, 6, ow}));
          for (int64_t o = 0; o < 2; ++o)
            for (int64_t j = 0; j < 6; ++j)
              for (int64_t i = 0; i < ow; ++i) {
                const int64_t at = (o * 6 + j) * ow + i;
                const float got = dt == DType::kUInt8 ? (*r)[0].data<uint8_t>()[at] : (*r)[0].data<float>()[at];
                ASSERT_EQ(got, v[static_cast<size_t>((o * 3 + j / 2) * w + i / k)])
                    << name << " w " << w << " k " << k << " at " << o << " " << j << " " << i;
              }
        }
  }
}

TEST(Upsample, NearestOpset9) {
  Tensor x = Tensor::from_vector<float>({1, 2}, {1, 2});
  auto r = run_op("Upsample", {x, scales({1, 2})}, {}, 1, 9);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {1, 1, 2, 2});
  auto a = run_op("Upsample", {x}, {{"scales", attr_floats({1, 2})}, {"mode", attr_string("linear")}}, 1, 7);
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  expect_near((*a)[0], {1, 1.5f, 2, 2});
}

TEST(GridSample, BilinearAndPadding) {
  Tensor x = Tensor::from_vector<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor grid = Tensor::from_vector<float>({1, 1, 2, 2}, {0, 0, -1, -1});
  auto r = run_op("GridSample", {x, grid}, {}, 1, 16);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {2.5f, 0.25f});
  auto b = run_op("GridSample", {x, grid}, {{"padding_mode", attr_string("border")}}, 1, 16);
  ASSERT_TRUE(b.ok());
  expect_near((*b)[0], {2.5f, 1});
  auto a = run_op("GridSample", {x, grid}, {{"align_corners", attr_int(1)}, {"mode", attr_string("nearest")}}, 1, 16);
  ASSERT_TRUE(a.ok());
  // center (0.5, 0.5) rounds half to even -> (0, 0)
  expect_near((*a)[0], {1, 1});
  EXPECT_FALSE(run_op("GridSample", {x, Tensor::from_vector<float>({1, 1, 1, 3}, {0, 0, 0})}, {}, 1, 16).ok());
}

}  // namespace
}  // namespace dlrt::cpu::testing
