// Conv taps that read padding only at a run's sizes (conv_dead_taps.cpp): the
// kernel runs the cropped conv, with the outputs of the uncropped one (the
// same prepacked conv, the raw W without packing, and the definition), and
// keeps every tap where one is not dead or a removed weight is not finite.
// One executor fed a dynamic-shape graph with H = 1, W = 1 and H > 1 in turn,
// and concurrently.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../ir/graph_builder.h"
#include "backends/cpu/ops/conv_impl.h"
#include "conv_test_util.h"
#include "kernel_test_util.h"

namespace dlrt::cpu {
namespace {

using testing::attr_int;
using testing::attr_ints;

struct Case {
  const char* what;
  int64_t C, M, H, W, kh, kw, sh, sw, dh, dw;
  std::vector<int64_t> pads;  // top, left, bottom, right
  bool cropped;               // whether the run crops
};

std::vector<float> randoms(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> v(n);
  for (auto& f : v) f = dist(rng);
  return v;
}

int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe) {
  return (in + pb + pe - d * (k - 1) - 1) / s + 1;
}

TEST(ConvDeadTaps, CroppedRunsMatchTheUncroppedConv) {
  const std::vector<Case> cases = {
      {"height 1, 3x3 pads 1", 64, 24, 1, 40, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true},
      {"width 1, 3x3 pads 1", 48, 20, 17, 1, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true},
      {"1x1 input, 3x3 pads 1 (runs as a 1x1 conv)", 40, 16, 1, 1, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true},
      {"height 5: every tap reads the input", 32, 16, 5, 12, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, false},
      {"height 1, 5x5 pads 2, stride 2", 24, 12, 1, 23, 5, 5, 2, 2, 1, 1, {2, 2, 2, 2}, true},
      {"height 2, 5x3, stride 2 in height", 16, 8, 2, 14, 5, 3, 2, 1, 1, 1, {2, 1, 2, 1}, true},
      {"height 1, dilation 2, pads 2", 16, 12, 1, 19, 3, 3, 1, 1, 2, 2, {2, 2, 2, 2}, true},
      {"asymmetric pads: only the top row is dead", 16, 8, 2, 9, 3, 3, 1, 1, 1, 1, {1, 1, 0, 1}, true},
      // Rows -1, 1, 3 of 3 and columns reaching both ends: the leading tap would need a pad of -1 and the
      // trailing one a last window short of the input's end: nothing goes.
      {"height 3, dilation 2, stride 2: near miss", 16, 8, 3, 8, 3, 3, 2, 2, 2, 2, {1, 1, 1, 1}, false},
      {"no padding", 16, 8, 3, 9, 3, 3, 1, 1, 1, 1, {0, 0, 0, 0}, false},
  };
  std::mt19937 rng(11);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const int64_t oh = out_size(c.H, c.kh, c.sh, c.dh, c.pads[0], c.pads[2]);
    const int64_t ow = out_size(c.W, c.kw, c.sw, c.dw, c.pads[1], c.pads[3]);
    const std::vector<float> x = randoms(static_cast<size_t>(c.C * c.H * c.W), rng);
    const std::vector<float> w = randoms(static_cast<size_t>(c.M * c.C * c.kh * c.kw), rng);
    const std::vector<float> b = randoms(static_cast<size_t>(c.M), rng);
    const Tensor tx = Tensor::from_vector<float>({1, c.C, c.H, c.W}, x);
    const Tensor tw = Tensor::from_vector<float>({c.M, c.C, c.kh, c.kw}, w);
    const Tensor tb = Tensor::from_vector<float>({c.M}, b);
    ir::Node node;
    node.name = "conv";
    node.op_type = "Conv";
    node.attributes = {{"strides", attr_ints({c.sh, c.sw})},
                       {"dilations", attr_ints({c.dh, c.dw})},
                       {"pads", attr_ints(c.pads)},
                       {"group", attr_int(1)}};
    testing::RefConvShape s;
    s.C = c.C, s.M = c.M, s.H = c.H, s.W = c.W, s.KH = c.kh, s.KW = c.kw, s.SH = c.sh, s.SW = c.sw;
    s.DH = c.dh, s.DW = c.dw, s.PT = c.pads[0], s.PL = c.pads[1], s.OH = oh, s.OW = ow;
    const std::vector<float> want = testing::reference_conv(s, x, w, b, {}, Activation{});
    auto pre = prepack_conv_weights(node, &tw);
    ASSERT_TRUE(pre.ok() && *pre);
    const double tol = 2e-5 * std::sqrt(double(c.C * c.kh * c.kw));
    for (int threads = 1; threads <= 2; ++threads) {
      SCOPED_TRACE("threads " + std::to_string(threads));
      const uint64_t before = conv_cropped_runs();
      auto y = testing::run_conv_with(node, {tx, tw, tb}, Activation{}, threads, pre->get());
      ASSERT_TRUE(y.ok()) << y.status().message();
      EXPECT_EQ(conv_cropped_runs() - before, c.cropped ? 1u : 0u);
      auto plain = testing::run_conv_with(node, {tx, tw, tb}, Activation{}, threads, nullptr);  // W not packed
      ASSERT_TRUE(plain.ok()) << plain.status().message();
      EXPECT_EQ(conv_cropped_runs() - before, c.cropped ? 1u : 0u);
      ASSERT_EQ(y->shape(), (Shape{1, c.M, oh, ow}));
      ASSERT_EQ(plain->shape(), y->shape());
      for (int64_t i = 0; i < y->size(); ++i) {
        ASSERT_NEAR(y->data<float>()[i], want[static_cast<size_t>(i)], tol * (1 + std::abs(want[static_cast<size_t>(i)])))
            << "at " << i;
        ASSERT_NEAR(y->data<float>()[i], plain->data<float>()[i], tol * (1 + std::abs(want[static_cast<size_t>(i)])))
            << "at " << i;
      }
    }
  }
}

// An infinity in a tap that reads padding only: 0 * inf is NaN in the
// uncropped conv, so that conv keeps its taps (and its NaNs).
TEST(ConvDeadTaps, NonFiniteWeightInADeadTapKeepsTheTaps) {
  std::mt19937 rng(5);
  const int64_t C = 8, M = 4, Wd = 10;
  std::vector<float> w = randoms(static_cast<size_t>(M * C * 9), rng);
  w[2 * 9 + 0] = std::numeric_limits<float>::infinity();  // output channel 0, input channel 2, top-left tap
  const Tensor tw = Tensor::from_vector<float>({M, C, 3, 3}, w);
  const Tensor tx = Tensor::from_vector<float>({1, C, 1, Wd}, randoms(static_cast<size_t>(C * Wd), rng));
  ir::Node node;
  node.name = "conv";
  node.op_type = "Conv";
  node.attributes = {{"pads", attr_ints({1, 1, 1, 1})}};
  auto pre = prepack_conv_weights(node, &tw);
  ASSERT_TRUE(pre.ok() && *pre);
  const uint64_t before = conv_cropped_runs();
  auto y = testing::run_conv_with(node, {tx, tw, Tensor()}, Activation{}, 2, pre->get());
  ASSERT_TRUE(y.ok()) << y.status().message();
  EXPECT_EQ(conv_cropped_runs(), before);
  // Output channel 0 is NaN everywhere (its top row reads padding at every position), the others finite.
  for (int64_t m = 0; m < M; ++m)
    for (int64_t o = 0; o < Wd; ++o)
      EXPECT_EQ(std::isnan(y->data<float>()[m * Wd + o]), m == 0) << m << " " << o;
  // A second run takes the same decision (the failed crop is remembered, not retried differently).
  auto again = testing::run_conv_with(node, {tx, tw, Tensor()}, Activation{}, 1, pre->get());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(conv_cropped_runs(), before);
  EXPECT_TRUE(std::isnan(again->data<float>()[0]));
}

// A [1, C, H, W] graph with dynamic H and W: Conv (constant W, prepacked)
// then Relu, and the same graph with W as an input (no packing, no crop) as
// the reference.
std::shared_ptr<ir::Graph> dynamic_conv(const Tensor& w, bool w_input, ir::Attributes attrs) {
  dlrt::testing::GraphBuilder b;
  auto x = b.input("x", {1, w.dim(1), -1, -1}, DType::kFloat32, {"", "", "h", "w"});
  const ir::ValueId wv = w_input ? b.input("w", {w.dim(0), w.dim(1), w.dim(2), w.dim(3)}) : b.constant("w", w);
  auto bias = b.constant("b", dlrt::testing::random_tensor({w.dim(0)}, 3));
  b.output(b.node("Relu", {b.node("Conv", {x, wv, bias}, std::move(attrs))}));
  return b.graph();
}

// One run of a conv with dynamic sizes: its inputs, and whether it must take
// the cropped conv.
struct CropFeed {
  std::vector<Tensor> inputs;
  bool cropped;
};

// Runs each feed through `test` (the conv under test) and `ref` (the same
// computation with W as its last input: nothing packed, nothing cropped): the
// outputs agree, and exactly the feeds marked cropped ran cropped.
void expect_crops(Executor& test, Executor& ref, const Tensor& w, const std::vector<CropFeed>& feeds) {
  for (const CropFeed& f : feeds) {
    SCOPED_TRACE(shape_to_string(f.inputs[0].shape()));
    std::vector<RunValue> in, ref_in;
    for (const Tensor& t : f.inputs) in.push_back(RunValue::of(t)), ref_in.push_back(RunValue::of(t));
    ref_in.push_back(RunValue::of(w));
    const uint64_t before = conv_cropped_runs();
    auto got = test.run(in);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    EXPECT_EQ(conv_cropped_runs() - before, f.cropped ? 1u : 0u);
    auto want = ref.run(ref_in);
    ASSERT_TRUE(want.ok()) << want.status().to_string();
    dlrt::testing::expect_close((*got)[0].tensor, (*want)[0].tensor, 1e-4f);
  }
}

TEST(ConvDeadTaps, OneExecutorFedHeightOneWidthOneAndFullSizes) {
  const Tensor w = dlrt::testing::random_tensor({24, 32, 3, 3}, 9);
  const ir::Attributes attrs = {{"pads", attr_ints({1, 1, 1, 1})}};
  ThreadPool pool(2);
  auto ex = Executor::create(dynamic_conv(w, false, attrs), pool, builtin_kernels());
  ASSERT_TRUE(ex.ok()) << ex.status().to_string();
  auto ref = Executor::create(dynamic_conv(w, true, attrs), pool, builtin_kernels());
  ASSERT_TRUE(ref.ok()) << ref.status().to_string();
  const std::vector<std::pair<Shape, bool>> shapes = {
      {{1, 32, 1, 40}, true}, {{1, 32, 17, 1}, true}, {{1, 32, 6, 20}, false}, {{1, 32, 1, 40}, true},
      {{1, 32, 1, 1}, true},  {{1, 32, 2, 9}, false},
  };
  std::vector<CropFeed> feeds;
  uint32_t seed = 20;
  for (const auto& [shape, cropped] : shapes) feeds.push_back({{dlrt::testing::random_tensor(shape, seed++)}, cropped});
  expect_crops(**ex, **ref, w, feeds);
}

// Concurrent runs of one executor at sizes that crop differently (and not at
// all): each matches its own single-threaded reference.
TEST(ConvDeadTaps, ConcurrentRunsAtDifferentSizes) {
  const Tensor w = dlrt::testing::random_tensor({16, 24, 3, 3}, 4);
  const ir::Attributes attrs = {{"pads", attr_ints({1, 1, 1, 1})}};
  ThreadPool pool(2);
  auto ex = Executor::create(dynamic_conv(w, false, attrs), pool, builtin_kernels());
  auto ref = Executor::create(dynamic_conv(w, true, attrs), pool, builtin_kernels());
  ASSERT_TRUE(ex.ok() && ref.ok());
  const std::vector<Shape> shapes = {{1, 24, 1, 30}, {1, 24, 13, 1}, {1, 24, 1, 1}, {1, 24, 7, 11}};
  std::vector<Tensor> xs, want;
  for (size_t i = 0; i < shapes.size(); ++i) {
    xs.push_back(dlrt::testing::random_tensor(shapes[i], 40 + static_cast<uint32_t>(i)));
    auto r = (*ref)->run({RunValue::of(xs.back()), RunValue::of(w)});
    ASSERT_TRUE(r.ok());
    want.push_back((*r)[0].tensor);
  }
  std::vector<std::thread> threads;
  std::vector<int> failures(8, 0);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 20; ++rep) {
        const size_t i = static_cast<size_t>(t + rep) % shapes.size();
        auto r = (*ex)->run({RunValue::of(xs[i])});
        if (!r.ok() || (*r)[0].tensor.shape() != want[i].shape()) {
          ++failures[static_cast<size_t>(t)];
          continue;
        }
        const Tensor& y = (*r)[0].tensor;
        for (int64_t k = 0; k < y.size(); ++k)
          if (std::abs(y.data<float>()[k] - want[i].data<float>()[k]) > 1e-4f * (1 + std::abs(want[i].data<float>()[k]))) {
            ++failures[static_cast<size_t>(t)];
            break;
          }
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(failures[static_cast<size_t>(t)], 0) << "thread " << t;
}

// com.dlrt FusedConv (bias, residual Z, Relu) on dynamic sizes: the same
// crop, the fused stage unchanged; against Conv + Z + Relu with W an input.
TEST(ConvDeadTaps, FusedConvCropsWithItsResidualAndActivation) {
  const int64_t C = 40, M = 24;
  const Tensor w = dlrt::testing::random_tensor({M, C, 3, 3}, 14);
  const Tensor bias = dlrt::testing::random_tensor({M}, 15);
  const ir::Attributes pads = {{"pads", attr_ints({1, 1, 1, 1})}};
  dlrt::testing::GraphBuilder b;
  auto x = b.input("x", {1, C, -1, -1}, DType::kFloat32, {"", "", "h", "w"});
  auto z = b.input("z", {1, M, -1, -1}, DType::kFloat32, {"", "", "h", "w"});
  ir::Attributes fattrs = pads;
  fattrs["activation"] = testing::attr_string("Relu");
  b.output(b.node("FusedConv", {x, b.constant("w", w), b.constant("b", bias), z}, fattrs, 1, "com.dlrt"));
  dlrt::testing::GraphBuilder r;
  auto rx = r.input("x", {1, C, -1, -1}, DType::kFloat32, {"", "", "h", "w"});
  auto rz = r.input("z", {1, M, -1, -1}, DType::kFloat32, {"", "", "h", "w"});
  auto rw = r.input("w", {M, C, 3, 3});
  r.output(r.node("Relu", {r.node("Add", {r.node("Conv", {rx, rw, r.constant("b", bias)}, pads), rz})}));
  ThreadPool pool(2);
  auto ex = Executor::create(b.graph(), pool, builtin_kernels());
  ASSERT_TRUE(ex.ok()) << ex.status().to_string();
  auto ref = Executor::create(r.graph(), pool, builtin_kernels());
  ASSERT_TRUE(ref.ok()) << ref.status().to_string();
  const std::vector<std::pair<std::pair<int64_t, int64_t>, bool>> sizes = {
      {{1, 33}, true}, {{9, 1}, true}, {{3, 8}, false}, {{1, 33}, true}};
  std::vector<CropFeed> feeds;
  uint32_t seed = 80;
  for (const auto& [hw, cropped] : sizes) {
    const Tensor xt = dlrt::testing::random_tensor({1, C, hw.first, hw.second}, seed++);
    const Tensor zt = dlrt::testing::random_tensor({1, M, hw.first, hw.second}, seed++);
    feeds.push_back({{xt, zt}, cropped});
  }
  expect_crops(**ex, **ref, w, feeds);
}

// com.dlrt ConvBlocked (the blocked layout the blocked-layout pass makes):
// a group-1 conv reading NCHW (x_blocked 0) and a depthwise one reading
// blocked input, on dynamic sizes, against plain Conv with W as an input.
TEST(ConvDeadTaps, BlockedConvsCropToo) {
  for (const bool depthwise : {false, true}) {
    SCOPED_TRACE(depthwise ? "depthwise" : "group 1");
    const int64_t C = 24, M = depthwise ? 24 : 20;
    const Tensor w = dlrt::testing::random_tensor({M, depthwise ? 1 : C, 3, 3}, 12);
    const Tensor bias = dlrt::testing::random_tensor({M}, 13);
    ir::Attributes conv_attrs = {{"pads", attr_ints({1, 1, 1, 1})}, {"group", attr_int(depthwise ? C : 1)}};
    dlrt::testing::GraphBuilder b;
    auto x = b.input("x", {1, C, -1, -1}, DType::kFloat32, {"", "", "h", "w"});
    ir::Attributes battrs = conv_attrs;
    battrs["block"] = attr_int(16);
    ir::ValueId in = x;
    if (depthwise) in = b.node("ToBlocked", {x}, {{"block", attr_int(16)}}, 1, "com.dlrt");
    else battrs["x_blocked"] = attr_int(0);
    auto y = b.node("ConvBlocked", {in, b.constant("w", w), b.constant("b", bias)}, battrs, 1, "com.dlrt");
    b.output(b.node("FromBlocked", {y}, {{"block", attr_int(16)}, {"channels", attr_int(M)}}, 1, "com.dlrt"));
    dlrt::testing::GraphBuilder r;
    auto rx = r.input("x", {1, C, -1, -1}, DType::kFloat32, {"", "", "h", "w"});
    auto rw = r.input("w", {w.dim(0), w.dim(1), 3, 3});
    r.output(r.node("Conv", {rx, rw, r.constant("b", bias)}, conv_attrs));
    ThreadPool pool(2);
    auto ex = Executor::create(b.graph(), pool, builtin_kernels());
    ASSERT_TRUE(ex.ok()) << ex.status().to_string();
    auto ref = Executor::create(r.graph(), pool, builtin_kernels());
    ASSERT_TRUE(ref.ok()) << ref.status().to_string();
    const std::vector<std::pair<Shape, bool>> shapes = {
        {{1, C, 1, 37}, true}, {{1, C, 11, 1}, true}, {{1, C, 4, 9}, false}, {{1, C, 1, 1}, true}, {{1, C, 1, 37}, true}};
    std::vector<CropFeed> feeds;
    uint32_t seed = 60;
    for (const auto& [shape, cropped] : shapes) feeds.push_back({{dlrt::testing::random_tensor(shape, seed++)}, cropped});
    expect_crops(**ex, **ref, w, feeds);
  }
}

}  // namespace
}  // namespace dlrt::cpu
