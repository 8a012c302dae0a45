// ConvTranspose with stride == kernel and no padding (the disjoint path of
// conv_transpose_disjoint.cpp) and its near misses (the col2im path), against
// a scatter reference, on 1-D, 2-D and 3-D shapes, at 1..4 threads.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/simd/width.h"
#include "kernel_test_util.h"

namespace dlrt::cpu::testing {
namespace {

struct Case {
  int64_t N, group, Cg, Mg;
  std::vector<int64_t> in, k, s, d, pads, outpad;  // spatial, pads: begins then ends
  bool bias;
};

// Every input element scattered through the kernel, in double.
std::vector<float> reference(const Case& c, const std::vector<float>& x, const std::vector<float>& w,
                             const std::vector<float>& b, Shape& out_shape) {
  const size_t nd = c.in.size();
  // Pad to 3 spatial dims.
  int64_t in[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, d[3] = {1, 1, 1}, p[3] = {0, 0, 0}, out[3] = {1, 1, 1};
  const size_t off = 3 - nd;
  for (size_t i = 0; i < nd; ++i) {
    in[off + i] = c.in[i];
    k[off + i] = c.k[i];
    s[off + i] = c.s[i];
    d[off + i] = c.d[i];
    p[off + i] = c.pads[i];
    out[off + i] = s[off + i] * (in[off + i] - 1) + c.outpad[i] + (k[off + i] - 1) * d[off + i] + 1 - c.pads[i] -
                   c.pads[nd + i];
  }
  const int64_t C = c.group * c.Cg, M = c.group * c.Mg;
  out_shape = {c.N, M};
  for (size_t i = 0; i < nd; ++i) out_shape.push_back(out[off + i]);
  const int64_t osz = out[0] * out[1] * out[2], isz = in[0] * in[1] * in[2], ksz = k[0] * k[1] * k[2];
  std::vector<double> y(static_cast<size_t>(c.N * M * osz), 0.0);
  for (int64_t n = 0; n < c.N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t i = 0; i < osz; ++i) y[(n * M + m) * osz + i] = c.bias ? b[m] : 0.0;
  for (int64_t n = 0; n < c.N; ++n)
    for (int64_t ci = 0; ci < C; ++ci)
      for (int64_t q = 0; q < isz; ++q) {
        const int64_t i0 = q / (in[1] * in[2]), i1 = q / in[2] % in[1], i2 = q % in[2];
        const double xv = x[(n * C + ci) * isz + q];
        for (int64_t mg = 0; mg < c.Mg; ++mg)
          for (int64_t kk = 0; kk < ksz; ++kk) {
            const int64_t a0 = kk / (k[1] * k[2]), a1 = kk / k[2] % k[1], a2 = kk % k[2];
            const int64_t o0 = i0 * s[0] - p[0] + a0 * d[0], o1 = i1 * s[1] - p[1] + a1 * d[1],
                          o2 = i2 * s[2] - p[2] + a2 * d[2];
            if (o0 < 0 || o0 >= out[0] || o1 < 0 || o1 >= out[1] || o2 < 0 || o2 >= out[2]) continue;
            const int64_t m = (ci / c.Cg) * c.Mg + mg;
            y[(n * M + m) * osz + (o0 * out[1] + o1) * out[2] + o2] += xv * w[(ci * c.Mg + mg) * ksz + kk];
          }
      }
  return std::vector<float>(y.begin(), y.end());
}

void check(const Case& c, std::mt19937& rng, const std::string& what) {
  std::uniform_real_distribution<float> dist(-1, 1);
  const size_t nd = c.in.size();
  int64_t isz = 1, ksz = 1;
  for (size_t i = 0; i < nd; ++i) isz *= c.in[i], ksz *= c.k[i];
  const int64_t C = c.group * c.Cg, M = c.group * c.Mg;
  std::vector<float> x(static_cast<size_t>(c.N * C * isz)), w(static_cast<size_t>(C * c.Mg * ksz)), b(M);
  for (auto& v : x) v = dist(rng);
  for (auto& v : w) v = dist(rng);
  for (auto& v : b) v = dist(rng);
  Shape out_shape;
  const std::vector<float> want = reference(c, x, w, b, out_shape);
  Shape xs = {c.N, C}, ws = {C, c.Mg};
  for (size_t i = 0; i < nd; ++i) xs.push_back(c.in[i]), ws.push_back(c.k[i]);
  std::vector<Tensor> inputs = {Tensor::from_vector<float>(xs, x), Tensor::from_vector<float>(ws, w)};
  if (c.bias) inputs.push_back(Tensor::from_vector<float>({M}, b));
  for (int threads = 1; threads <= 4; ++threads) {
    auto r = run_op("ConvTranspose", inputs,
                    {{"strides", attr_ints(c.s)}, {"dilations", attr_ints(c.d)}, {"group", attr_int(c.group)},
                     {"pads", attr_ints(c.pads)}, {"output_padding", attr_ints(c.outpad)}},
                    1, 17, "", threads);
    ASSERT_TRUE(r.ok()) << what << ": " << r.status().to_string();
    ASSERT_EQ((*r)[0].shape(), out_shape) << what;
    SCOPED_TRACE(what + " threads " + std::to_string(threads));
    expect_near((*r)[0], want, 1e-4f);
  }
}

TEST(ConvTranspose, DisjointStrideEqualsKernelMatchesReference) {
  std::mt19937 rng(11);
  for (int it = 0; it < 40; ++it) {
    const size_t nd = 1 + it % 3;
    Case c;
    c.N = 1 + rng() % 2;
    c.group = 1 + rng() % 3;
    c.Cg = 1 + rng() % 20;
    c.Mg = 1 + rng() % 20;
    c.bias = rng() % 2 == 0;
    for (size_t i = 0; i < nd; ++i) {
      c.in.push_back(1 + rng() % (nd == 3 ? 6 : 37));
      c.k.push_back(1 + rng() % 3);
      c.s.push_back(c.k.back());
      c.d.push_back(c.k.back() == 1 ? 1 + rng() % 2 : 1);  // dilation is moot for a kernel of 1
      c.outpad.push_back(0);
    }
    c.pads.assign(2 * nd, 0);
    check(c, rng, "case " + std::to_string(it));
  }
}

// Shapes one step from the disjoint path (padding, output padding, stride
// unlike the kernel, dilation): the general path, with the same answers.
TEST(ConvTranspose, DisjointNearMissesMatchReference) {
  std::mt19937 rng(12);
  const Case base = {2, 2, 5, 3, {9, 17}, {2, 2}, {2, 2}, {1, 1}, {0, 0, 0, 0}, {0, 0}, true};
  const std::vector<std::pair<std::string, std::function<void(Case&)>>> changes = {
      {"disjoint", [](Case&) {}},
      {"pads", [](Case& c) { c.pads = {0, 1, 0, 1}; }},
      {"output_padding", [](Case& c) { c.outpad = {1, 0}; }},
      {"stride 3 kernel 2", [](Case& c) { c.s = {2, 3}; }},
      {"dilation 2, stride == kernel", [](Case& c) { c.d = {1, 2}; }},
      {"kernel 1 stride 2", [](Case& c) { c.k = {1, 2}, c.s = {2, 2}; }},
      {"no input channels", [](Case& c) { c.Cg = 0; }},  // the output is the bias alone
  };
  for (const auto& [what, change] : changes) {
    Case c = base;
    change(c);
    check(c, rng, what);
  }
  // A one-channel head (few product rows), 24 input channels, rows not a multiple of 32.
  check({1, 1, 24, 1, {7, 37}, {2, 2}, {2, 2}, {1, 1}, {0, 0, 0, 0}, {0, 0}, true}, rng, "24 -> 1");
  check({2, 2, 9, 2, {3, 70}, {1, 3}, {1, 3}, {1, 1}, {0, 0, 0, 0}, {0, 0}, false}, rng, "6 product rows");
}

// The few-row products (2 to 8 = Mg * kernel size) and the kernel-width-2 rows
// at each vector width this CPU runs: bit for bit the product chain
// fma(w, x, acc) over the input channels in order (a multiply and an add at
// x86's 128-bit baseline, which has no FMA) plus the bias, what the former
// AVX-512-only loops computed; column counts with every tail length.
TEST(ConvTranspose, FewRowsBitExactAtEveryWidth) {
  const std::pair<CpuIsa, SimdWidth> isas[] = {
      {CpuIsa::kAvx512, SimdWidth::k512}, {CpuIsa::kAvx2, SimdWidth::k256}, {CpuIsa::kNeon, SimdWidth::k128}};
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (const auto& [isa, width] : isas) {
    if (!simd_width_runs(width)) {
      std::printf("skipped: this CPU cannot run the %s-bit instantiation\n", simd_width_name(width));
      continue;
    }
#if defined(__x86_64__) || defined(__i386__)
    const bool fused = width != SimdWidth::k128;
#else
    const bool fused = true;
#endif
    ScopedCpuIsa cap(isa);
    const uint64_t calls0 = simd_calls("conv_transpose_few_rows", width);
    for (int it = 0; it < 60; ++it) {
      // 1-D (kernel 1..8) or 2-D (2 x 2, 1 x 2); in_w 1..70 covers every tail of 16, 8 and 4 lanes.
      const bool two_d = it % 2 == 1;
      const int64_t kh = two_d ? 1 + it % 4 / 2 : 1, kw = two_d ? 2 : 1 + it % 8;
      // 2-8 product rows (one row takes the GEMM below 512 bits: few_rows_win).
      const int64_t Mg = std::max<int64_t>(kh * kw == 1 ? 2 : 1, static_cast<int64_t>(rng() % (8 / (kh * kw) + 1)));
      const int64_t Cg = 1 + rng() % 24, N = 1 + rng() % 2, ih = two_d ? 1 + rng() % 5 : 1, iw = 1 + rng() % 70;
      std::vector<float> x(static_cast<size_t>(N * Cg * ih * iw)), w(static_cast<size_t>(Cg * Mg * kh * kw)), b(Mg);
      for (auto& v : x) v = dist(rng);
      for (auto& v : w) v = dist(rng);
      for (auto& v : b) v = dist(rng);
      const int64_t oh = ih * kh, ow = iw * kw;
      std::vector<float> want(static_cast<size_t>(N * Mg * oh * ow));
      for (int64_t n = 0; n < N; ++n)
        for (int64_t m = 0; m < Mg; ++m)
          for (int64_t i = 0; i < ih; ++i)
            for (int64_t j = 0; j < iw; ++j)
              for (int64_t a = 0; a < kh; ++a)
                for (int64_t e = 0; e < kw; ++e) {
                  float acc = 0.0f;
                  for (int64_t c = 0; c < Cg; ++c) {
                    const float wv = w[static_cast<size_t>(((c * Mg + m) * kh + a) * kw + e)];
                    const float xv = x[static_cast<size_t>(((n * Cg + c) * ih + i) * iw + j)];
                    acc = fused ? std::fma(wv, xv, acc) : wv * xv + acc;
                  }
                  want[static_cast<size_t>(((n * Mg + m) * oh + i * kh + a) * ow + j * kw + e)] = acc + b[m];
                }
      Shape xs = two_d ? Shape{N, Cg, ih, iw} : Shape{N, Cg, iw}, ws = two_d ? Shape{Cg, Mg, kh, kw} : Shape{Cg, Mg, kw};
      auto r = run_op("ConvTranspose",
                      {Tensor::from_vector<float>(xs, x), Tensor::from_vector<float>(ws, w),
                       Tensor::from_vector<float>({Mg}, b)},
                      {{"strides", attr_ints(two_d ? std::vector<int64_t>{kh, kw} : std::vector<int64_t>{kw})}}, 1, 17,
                      "", 1 + it % 3);
      ASSERT_TRUE(r.ok()) << r.status().to_string();
      const float* y = (*r)[0].data<float>();
      for (size_t q = 0; q < want.size(); ++q)
        ASSERT_EQ(0, std::memcmp(&y[q], &want[q], 4))
            << simd_width_name(width) << " case " << it << " at " << q << ": " << y[q] << " vs " << want[q];
    }
    EXPECT_GT(simd_calls("conv_transpose_few_rows", width), calls0) << simd_width_name(width);
  }
}

}  // namespace
}  // namespace dlrt::cpu::testing
