#include <random>

#include "backends/cpu/kernels/depthwise_flat.h"
#include "backends/cpu/kernels/isa.h"
#include "kernel_test_util.h"

namespace dlrt::cpu {
namespace {

using testing::attr_int;
using testing::attr_ints;
using testing::attr_string;
using testing::expect_near;
using testing::run_op;

struct ConvCase {
  int nd;
  int64_t N, C, M, group;
  std::vector<int64_t> in, k, s, d, pb, pe;
};

// Direct convolution, N-D via explicit index arithmetic (up to 3 spatial dims).
std::vector<float> ref_conv(const ConvCase& c, const std::vector<float>& x, const std::vector<float>& w,
                            const std::vector<float>& b, std::vector<int64_t>* out_dims) {
  std::vector<int64_t> in(3, 1), k(3, 1), s(3, 1), d(3, 1), p(3, 0), out(3, 1);
  for (int i = 0; i < c.nd; ++i) {
    const int j = 3 - c.nd + i;
    in[j] = c.in[i], k[j] = c.k[i], s[j] = c.s[i], d[j] = c.d[i], p[j] = c.pb[i];
    out[j] = (c.in[i] + c.pb[i] + c.pe[i] - ((c.k[i] - 1) * c.d[i] + 1)) / c.s[i] + 1;
  }
  out_dims->assign(out.begin() + (3 - c.nd), out.end());
  const int64_t Cg = c.C / c.group, Mg = c.M / c.group;
  std::vector<float> y(c.N * c.M * out[0] * out[1] * out[2]);
  size_t o = 0;
  for (int64_t n = 0; n < c.N; ++n)
    for (int64_t m = 0; m < c.M; ++m)
      for (int64_t z = 0; z < out[0]; ++z)
        for (int64_t yy = 0; yy < out[1]; ++yy)
          for (int64_t xx = 0; xx < out[2]; ++xx, ++o) {
            double acc = b.empty() ? 0.0 : b[m];
            const int64_t g = m / Mg;
            for (int64_t ci = 0; ci < Cg; ++ci)
              for (int64_t a = 0; a < k[0]; ++a)
                for (int64_t bb = 0; bb < k[1]; ++bb)
                  for (int64_t cc = 0; cc < k[2]; ++cc) {
                    const int64_t iz = z * s[0] - p[0] + a * d[0], iy = yy * s[1] - p[1] + bb * d[1],
                                  ix = xx * s[2] - p[2] + cc * d[2];
                    if (iz < 0 || iz >= in[0] || iy < 0 || iy >= in[1] || ix < 0 || ix >= in[2]) continue;
                    const int64_t c_in = g * Cg + ci;
                    acc += static_cast<double>(x[(((n * c.C + c_in) * in[0] + iz) * in[1] + iy) * in[2] + ix]) *
                           w[(((m * Cg + ci) * k[0] + a) * k[1] + bb) * k[2] + cc];
                  }
            y[o] = static_cast<float>(acc);
          }
  return y;
}

void run_conv_case(const ConvCase& c, std::mt19937& rng, bool with_bias) {
  std::uniform_real_distribution<float> dist(-1, 1);
  Shape xs = {c.N, c.C}, ws = {c.M, c.C / c.group};
  xs.insert(xs.end(), c.in.begin(), c.in.end());
  ws.insert(ws.end(), c.k.begin(), c.k.end());
  std::vector<float> x(element_count(xs)), w(element_count(ws)), b;
  for (auto& v : x) v = dist(rng);
  for (auto& v : w) v = dist(rng);
  if (with_bias) {
    b.resize(c.M);
    for (auto& v : b) v = dist(rng);
  }
  std::vector<int64_t> pads = c.pb;
  pads.insert(pads.end(), c.pe.begin(), c.pe.end());
  ir::Attributes attrs = {{"strides", attr_ints(c.s)}, {"dilations", attr_ints(c.d)},
                                                {"pads", attr_ints(pads)}, {"group", attr_int(c.group)}};
  std::vector<Tensor> inputs = {Tensor::from_vector<float>(xs, x), Tensor::from_vector<float>(ws, w)};
  if (with_bias) inputs.push_back(Tensor::from_vector<float>({c.M}, b));
  auto r = run_op("Conv", inputs, attrs);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  std::vector<int64_t> od;
  std::vector<float> want = ref_conv(c, x, w, b, &od);
  Shape ys = {c.N, c.M};
  ys.insert(ys.end(), od.begin(), od.end());
  ASSERT_EQ((*r)[0].shape(), ys);
  expect_near((*r)[0], want, 1e-4f);
}

TEST(Conv, MatchesDirectConvOnRandomShapes) {
  std::mt19937 rng(7);
  for (int it = 0; it < 60; ++it) {
    ConvCase c;
    c.nd = 1 + it % 3;
    c.group = 1 + rng() % 3;
    c.N = 1 + rng() % 2;
    c.C = c.group * (1 + rng() % 3);
    c.M = c.group * (1 + rng() % 4);
    for (int i = 0; i < c.nd; ++i) {
      c.k.push_back(1 + rng() % 3);
      c.s.push_back(1 + rng() % 2);
      c.d.push_back(1 + rng() % 2);
      c.pb.push_back(rng() % 3);
      c.pe.push_back(rng() % 3);
      const int64_t ek = (c.k.back() - 1) * c.d.back() + 1;
      c.in.push_back(std::max<int64_t>(ek, 1 + rng() % (c.nd == 3 ? 6 : 11)));
    }
    SCOPED_TRACE("case " + std::to_string(it));
    run_conv_case(c, rng, it % 2 == 0);
  }
}

TEST(Conv, PointwiseDepthwiseAndLarge) {
  std::mt19937 rng(8);
  // 1x1 stride 1: no im2col.
  run_conv_case({2, 2, 5, 7, 1, {6, 5}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}}, rng, true);
  // Depthwise 3x3, stride 2, padded.
  run_conv_case({2, 1, 6, 6, 6, {9, 8}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}}, rng, true);
  // Depthwise, dilated and asymmetric padding.
  run_conv_case({2, 2, 4, 4, 4, {7, 9}, {3, 2}, {1, 3}, {2, 1}, {2, 0}, {0, 1}}, rng, false);
  // Big enough for several GEMM blocks.
  run_conv_case({2, 1, 32, 40, 1, {20, 18}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}}, rng, true);
}

// Depthwise at stride 1 with dilation: split into dilation_h x dilation_w undilated convs on
// the fast kernels (depthwise_dilated_plane_f32). Dilations in each direction, kernels up to
// 5x5, asymmetric and zero padding, planes smaller than the dilated window in one direction,
// odd sizes (phases of unequal length), with and without bias.
TEST(Conv, DilatedDepthwiseMatchesReference) {
  std::mt19937 rng(11);
  struct D {
    std::vector<int64_t> in, k, d, pb, pe;
  };
  const std::vector<D> cases = {
      {{20, 20}, {5, 5}, {2, 2}, {4, 4}, {4, 4}},  // lraspp's layers
      {{9, 13}, {3, 3}, {2, 2}, {2, 2}, {2, 2}},   {{11, 7}, {3, 3}, {3, 2}, {3, 1}, {2, 2}},
      {{8, 10}, {3, 2}, {2, 1}, {0, 1}, {1, 0}},   {{7, 17}, {2, 4}, {1, 3}, {1, 4}, {0, 5}},
      {{6, 6}, {3, 3}, {4, 4}, {4, 4}, {4, 4}},    {{12, 12}, {5, 3}, {2, 3}, {0, 0}, {0, 0}},
  };
  int it = 0;
  for (const D& d : cases)
    for (int64_t channels : {3, 17}) {
      ConvCase c;
      c.nd = 2;
      c.N = 1 + it % 2;
      c.C = c.M = c.group = channels;
      c.in = d.in;
      c.k = d.k;
      c.s = {1, 1};
      c.d = d.d;
      c.pb = d.pb;
      c.pe = d.pe;
      SCOPED_TRACE("case " + std::to_string(it));
      run_conv_case(c, rng, it++ % 2 == 0);
    }
}

// Depthwise, stride 1, output rows of at most 16: the flat-grid kernel
// (depthwise_flat.h) where the CPU has AVX-512, the row kernels elsewhere.
TEST(Conv, DepthwiseShortRowsMatchReference) {
  std::mt19937 rng(9);
  const std::vector<std::vector<int64_t>> kernels = {{1, 1}, {3, 3}, {5, 5}, {3, 1}, {1, 4}, {7, 7}};
  int it = 0;
  for (const auto& k : kernels) {
    for (int rep = 0; rep < 4; ++rep, ++it) {
      ConvCase c;
      c.nd = 2;
      c.N = 1 + it % 2;
      c.C = c.M = c.group = 3 + it % 5;
      c.k = k;
      c.s = {1, 1};
      c.d = {1, 1};
      c.pb = {static_cast<int64_t>(rng() % 4), static_cast<int64_t>(rng() % 4)};
      c.pe = {static_cast<int64_t>(rng() % 4), static_cast<int64_t>(rng() % 4)};
      // Output widths from 1 to 16 (the kernel's limit) and one past it.
      const int64_t out_w = rep == 3 ? 17 : 1 + static_cast<int64_t>(rng() % 16);
      c.in = {std::max<int64_t>(1, static_cast<int64_t>(1 + rng() % 12) + k[0] - 1 - c.pb[0] - c.pe[0]),
              std::max<int64_t>(1, out_w + k[1] - 1 - c.pb[1] - c.pe[1])};
      SCOPED_TRACE("case " + std::to_string(it));
      run_conv_case(c, rng, it % 3 != 0);
    }
  }
}

TEST(DepthwiseFlat, PlanAcceptsMobilenetPlanesAndRejectsWhatItCannotDo) {
  if (!cpu_has_avx512()) GTEST_SKIP() << "this CPU (or DLRT_CPU_ISA) has no AVX-512: the flat-grid kernel is never used";
  DepthwiseFlatPlan p;
  // mobilenet_v2's 7x7 plane, 3x3 pad 1: rows of 9, 63 grid floats rounded to 64.
  ASSERT_TRUE(depthwise_flat_plan({7, 7, 7, 7, 3, 3, 1, 1}, &p));
  EXPECT_EQ(p.wq, 9);
  EXPECT_EQ(p.hq, 9);
  EXPECT_EQ(p.grid, 64);
  EXPECT_EQ(p.taps, 9);
  EXPECT_EQ(p.off[4], 9 + 1);  // tap (1, 1): one row and one column down the padded plane
  EXPECT_FALSE(depthwise_flat_plan({20, 20, 12, 12, 9, 9, 0, 0}, &p));      // 81 taps
  EXPECT_FALSE(depthwise_flat_plan({400, 400, 400, 400, 3, 3, 1, 1}, &p));  // plane too large
}

TEST(Conv, AutoPadAndKernelShape) {
  // 1x1x5x5 input of 0..24, 3x3 ones, SAME_UPPER stride 2 -> 3x3 (ONNX's test_conv_with_autopad_same).
  std::vector<float> x(25);
  for (int i = 0; i < 25; ++i) x[i] = static_cast<float>(i);
  auto r = run_op("Conv", {Tensor::from_vector<float>({1, 1, 5, 5}, x), Tensor::from_vector<float>({1, 1, 3, 3}, std::vector<float>(9, 1))},
                  {{"auto_pad", attr_string("SAME_LOWER")}, {"kernel_shape", attr_ints({3, 3})}, {"strides", attr_ints({2, 2})}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{1, 1, 3, 3}));
  expect_near((*r)[0], {12, 27, 24, 63, 108, 81, 72, 117, 84});
  r = run_op("Conv", {Tensor::from_vector<float>({1, 1, 5, 5}, x), Tensor::from_vector<float>({1, 1, 3, 3}, std::vector<float>(9, 1))},
             {{"auto_pad", attr_string("VALID")}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (Shape{1, 1, 3, 3}));
  EXPECT_EQ((*r)[0].data<float>()[0], 54.0f);
}

TEST(Conv, RejectsBadInput) {
  auto x = Tensor::from_vector<float>({1, 3, 4, 4}, std::vector<float>(48));
  auto w = Tensor::from_vector<float>({2, 2, 3, 3}, std::vector<float>(36));
  auto r = run_op("Conv", {x, w});
  EXPECT_FALSE(r.ok());  // channel mismatch
  r = run_op("Conv", {x, Tensor::from_vector<float>({2, 3, 5, 5}, std::vector<float>(150))});
  EXPECT_FALSE(r.ok());  // kernel larger than the input
  r = run_op("Conv", {x, Tensor::from_vector<float>({2, 3, 3, 3}, std::vector<float>(54))}, {{"group", attr_int(2)}});
  EXPECT_FALSE(r.ok());
  r = run_op("Conv", {x, Tensor::from_vector<float>({2, 3, 3, 3}, std::vector<float>(54))}, {{"strides", attr_ints({0, 1})}});
  EXPECT_FALSE(r.ok());
}

// Reference ConvTranspose: scatter every input element through the kernel.
TEST(ConvTranspose, MatchesScatterReference) {
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (int it = 0; it < 30; ++it) {
    const int64_t group = 1 + rng() % 2, Cg = 1 + rng() % 3, Mg = 1 + rng() % 3, N = 1 + rng() % 2;
    const int64_t C = group * Cg, M = group * Mg;
    const int64_t H = 1 + rng() % 5, W = 1 + rng() % 6;
    const int64_t kh = 1 + rng() % 3, kw = 1 + rng() % 3, sh = 1 + rng() % 3, sw = 1 + rng() % 2, dh = 1 + rng() % 2,
                  dw = 1;
    const int64_t ph0 = rng() % 2, ph1 = rng() % 2, pw0 = 0, pw1 = rng() % 2, oph = rng() % sh, opw = 0;
    const int64_t OH = sh * (H - 1) + oph + (kh - 1) * dh + 1 - ph0 - ph1;
    const int64_t OW = sw * (W - 1) + opw + (kw - 1) * dw + 1 - pw0 - pw1;
    if (OH <= 0 || OW <= 0) continue;
    std::vector<float> x(N * C * H * W), w(C * Mg * kh * kw), b(M);
    for (auto& v : x) v = dist(rng);
    for (auto& v : w) v = dist(rng);
    for (auto& v : b) v = dist(rng);
    std::vector<double> want(N * M * OH * OW);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t m = 0; m < M; ++m)
        for (int64_t i = 0; i < OH * OW; ++i) want[(n * M + m) * OH * OW + i] = b[m];
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t ih = 0; ih < H; ++ih)
          for (int64_t iw = 0; iw < W; ++iw)
            for (int64_t mg = 0; mg < Mg; ++mg)
              for (int64_t a = 0; a < kh; ++a)
                for (int64_t bb = 0; bb < kw; ++bb) {
                  const int64_t oh = ih * sh - ph0 + a * dh, ow = iw * sw - pw0 + bb * dw;
                  if (oh < 0 || oh >= OH || ow < 0 || ow >= OW) continue;
                  const int64_t m = (c / Cg) * Mg + mg;
                  want[((n * M + m) * OH + oh) * OW + ow] +=
                      static_cast<double>(x[((n * C + c) * H + ih) * W + iw]) * w[((c * Mg + mg) * kh + a) * kw + bb];
                }
    auto r = run_op("ConvTranspose",
                    {Tensor::from_vector<float>({N, C, H, W}, x), Tensor::from_vector<float>({C, Mg, kh, kw}, w),
                     Tensor::from_vector<float>({M}, b)},
                    {{"strides", attr_ints({sh, sw})}, {"dilations", attr_ints({dh, dw})}, {"group", attr_int(group)},
                     {"pads", attr_ints({ph0, pw0, ph1, pw1})}, {"output_padding", attr_ints({oph, opw})}});
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    ASSERT_EQ((*r)[0].shape(), (Shape{N, M, OH, OW})) << "case " << it;
    std::vector<float> wantf(want.begin(), want.end());
    expect_near((*r)[0], wantf, 1e-4f);
  }
}

TEST(ConvTranspose, OutputShapeAndAutoPad) {
  // 1-D: x = [1, 2, 3], w = [1, 1], stride 2 -> full output [1,1,2,2,3,3] (length 6).
  auto x = Tensor::from_vector<float>({1, 1, 3}, {1, 2, 3});
  auto w = Tensor::from_vector<float>({1, 1, 2}, {1, 1});
  auto r = run_op("ConvTranspose", {x, w}, {{"strides", attr_ints({2})}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {1, 1, 2, 2, 3, 3});
  r = run_op("ConvTranspose", {x, w}, {{"strides", attr_ints({2})}, {"output_shape", attr_ints({7})}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (Shape{1, 1, 7}));
  r = run_op("ConvTranspose", {x, w}, {{"strides", attr_ints({2})}, {"auto_pad", attr_string("SAME_UPPER")}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (Shape{1, 1, 6}));
  r = run_op("ConvTranspose", {x, Tensor::from_vector<float>({2, 1, 2}, {1, 1, 1, 1})});
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace dlrt::cpu
