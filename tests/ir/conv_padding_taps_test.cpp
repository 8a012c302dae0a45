// conv-padding-taps: Conv kernel taps that read padding only are cropped out
// of W. Each case runs the graph before and after the pass (the outputs must
// agree) and checks the new W's shape and pads, with the near misses that
// must stay as they are.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "core/thread_pool.h"
#include "graph_builder.h"
#include "ir/passes/passes.h"
#include "runtime/optimize.h"

namespace dlrt::testing {
namespace {

namespace p = ir::passes;

// Equal shapes, values within tol, NaN where the reference has NaN.
void expect_same(const Tensor& got, const Tensor& want, float tol = 1e-5f) {
  ASSERT_EQ(got.shape(), want.shape());
  for (int64_t i = 0; i < got.size(); ++i) {
    const float g = got.data<float>()[i], w = want.data<float>()[i];
    if (std::isnan(w)) {
      ASSERT_TRUE(std::isnan(g)) << "at " << i;
      continue;
    }
    ASSERT_NEAR(g, w, tol * (1 + std::abs(w))) << "at " << i;
  }
}

// Runs g before and after crop_padding_taps on `inputs`; returns the
// rewritten graph.
std::shared_ptr<ir::Graph> check(std::shared_ptr<ir::Graph> g, const std::vector<Tensor>& inputs, int expect_fired) {
  auto before = run_graph(g, inputs);
  auto opt = std::make_shared<ir::Graph>(*g);
  p::PassContext ctx = cpu_kernels_context();
  EXPECT_EQ(p::crop_padding_taps(*opt, ctx), expect_fired);
  EXPECT_EQ(ctx.fired["conv-padding-taps"], expect_fired);
  EXPECT_TRUE(opt->topological_sort().ok());
  auto after = run_graph(opt, inputs);
  EXPECT_EQ(before.size(), after.size());
  for (size_t i = 0; i < before.size() && i < after.size(); ++i) expect_same(after[i], before[i]);
  // A second run finds nothing more to crop.
  p::PassContext again = cpu_kernels_context();
  EXPECT_EQ(p::crop_padding_taps(*opt, again), 0);
  return opt;
}

// The i-th Conv of g.
const ir::Node& conv(const ir::Graph& g, int i = 0) {
  for (const auto& n : g.nodes)
    if (n.op_type == "Conv" && i-- == 0) return n;
  ADD_FAILURE() << "no such conv";
  return g.nodes[0];
}
Shape w_shape(const ir::Graph& g, int i = 0) { return g.values[conv(g, i).inputs[1]].constant->shape(); }
std::vector<int64_t> pads(const ir::Graph& g, int i = 0) { return conv(g, i).attr_ints("pads"); }

struct Case {
  const char* what;
  Shape x, w;
  ir::Attributes attrs;
  Shape want_w;                    // W's shape after the pass (== w: nothing cropped)
  std::vector<int64_t> want_pads;  // pads after the pass (empty: not checked)
};

std::shared_ptr<ir::Graph> one_conv(const Case& k, uint32_t seed, std::vector<std::string> syms = {}) {
  GraphBuilder b;
  std::vector<int64_t> dims(k.x.begin(), k.x.end());
  for (size_t i = 0; i < syms.size(); ++i)
    if (!syms[i].empty()) dims[i] = -1;
  auto x = b.input("x", dims, DType::kFloat32, syms);
  auto bias = b.constant("b", random_tensor({k.w[0]}, seed + 1));
  b.output(b.node("Relu", {b.node("Conv", {x, b.constant("w", random_tensor(k.w, seed)), bias}, k.attrs)}));
  return b.graph();
}

// Height 1 and width 1 (the text recognisers' neck), strides, dilations,
// asymmetric pads, auto_pad, kernel_shape, 1-D and 3-D: the dead taps go, the
// output stays.
TEST(ConvPaddingTaps, CropsTapsThatReadPaddingOnly) {
  const std::vector<Case> cases = {
      {"height 1, 3x3 pads 1", {1, 8, 1, 10}, {6, 8, 3, 3}, {{"pads", ais({1, 1, 1, 1})}}, {6, 8, 1, 3}, {0, 1, 0, 1}},
      {"width 1, 3x3 pads 1", {2, 4, 9, 1}, {5, 4, 3, 3}, {{"pads", ais({1, 1, 1, 1})}}, {5, 4, 3, 1}, {1, 0, 1, 0}},
      {"height 1, 5x5 pads 2, stride 2",
       {1, 3, 1, 11},
       {4, 3, 5, 5},
       {{"pads", ais({2, 2, 2, 2})}, {"strides", ais({2, 2})}},
       {4, 3, 1, 5},
       {0, 2, 0, 2}},
      // H 2, kernel 5, pads 2, stride 2: one output row reading rows -2..2: taps 0, 1 and 4 dead.
      {"height 2, stride 2",
       {1, 3, 2, 6},
       {4, 3, 5, 3},
       {{"pads", ais({2, 1, 2, 1})}, {"strides", ais({2, 1})}},
       {4, 3, 2, 3},
       {0, 1, 1, 1}},
      // H 1, dilation 2, pads 2: rows -2, 0, 2.
      {"dilation 2",
       {1, 3, 1, 8},
       {4, 3, 3, 3},
       {{"pads", ais({2, 2, 2, 2})}, {"dilations", ais({2, 2})}},
       {4, 3, 1, 3},
       {0, 2, 0, 2}},
      // H 3, dilation 2, stride 2, pads 1: rows -1, 1, 3; a leading crop would need pad_begin -1, so only
      // the last row goes (pad_end 1 -> 0 keeps the one output row).
      {"dilation 2, leading tap kept",
       {1, 2, 3, 5},
       {3, 2, 3, 3},
       {{"pads", ais({1, 1, 1, 1})}, {"dilations", ais({2, 1})}, {"strides", ais({2, 1})}},
       {3, 2, 2, 3},
       {1, 1, 0, 1}},
      // Asymmetric pads: H 1 with 2 rows of padding above and none below.
      {"asymmetric pads", {1, 3, 1, 9}, {4, 3, 3, 3}, {{"pads", ais({2, 1, 0, 1})}}, {4, 3, 1, 3}, {0, 1, 0, 1}},
      // H 2, stride 2, pads 1: one output row reading rows -1, 0, 1: the first tap only.
      {"leading tap only",
       {1, 3, 2, 4},
       {2, 3, 3, 3},
       {{"pads", ais({1, 1, 1, 1})}, {"strides", ais({2, 1})}},
       {2, 3, 2, 3},
       {0, 1, 1, 1}},
      {"auto_pad SAME_UPPER", {1, 3, 1, 7}, {4, 3, 3, 3}, {{"auto_pad", as("SAME_UPPER")}}, {4, 3, 1, 3}, {0, 1, 0, 1}},
      // Kernel 4, stride 2 on H 1 and W 5: total padding 3 on both axes (1 before, 2 after for UPPER;
      // 2 before, 1 after for LOWER); the width keeps its taps.
      {"auto_pad SAME_UPPER, even kernel",
       {1, 2, 1, 5},
       {3, 2, 4, 4},
       {{"auto_pad", as("SAME_UPPER")}, {"strides", ais({2, 2})}},
       {3, 2, 1, 4},
       {0, 1, 0, 2}},
      {"auto_pad SAME_LOWER, even kernel",
       {1, 2, 1, 5},
       {3, 2, 4, 4},
       {{"auto_pad", as("SAME_LOWER")}, {"strides", ais({2, 2})}},
       {3, 2, 1, 4},
       {0, 2, 0, 1}},
      {"kernel_shape given",
       {1, 4, 1, 6},
       {2, 4, 3, 3},
       {{"pads", ais({1, 1, 1, 1})}, {"kernel_shape", ais({3, 3})}},
       {2, 4, 1, 3},
       {0, 1, 0, 1}},
      {"grouped",
       {1, 4, 1, 6},
       {4, 2, 3, 3},
       {{"pads", ais({1, 1, 1, 1})}, {"group", ai(2)}},
       {4, 2, 1, 3},
       {0, 1, 0, 1}},
      {"1-D", {1, 3, 1}, {2, 3, 3}, {{"pads", ais({1, 1})}}, {2, 3, 1}, {0, 0}},
      {"3-D",
       {1, 2, 1, 5, 1},
       {3, 2, 3, 3, 3},
       {{"pads", ais({1, 1, 1, 1, 1, 1})}},
       {3, 2, 1, 3, 1},
       {0, 1, 0, 0, 1, 0}},
  };
  uint32_t seed = 1;
  for (const Case& k : cases) {
    SCOPED_TRACE(k.what);
    auto opt = check(one_conv(k, seed), {random_tensor(k.x, seed + 2)}, 1);
    seed += 3;
    EXPECT_EQ(w_shape(*opt), k.want_w);
    EXPECT_EQ(pads(*opt), k.want_pads);
    EXPECT_FALSE(conv(*opt).has_attr("auto_pad"));
    if (conv(*opt).has_attr("kernel_shape")) {
      const auto ks = conv(*opt).attr_ints("kernel_shape");
      EXPECT_EQ(Shape(ks.begin(), ks.end()), Shape(k.want_w.begin() + 2, k.want_w.end()));
    }
  }
}

// Every small 1-D geometry (input 1..5, kernel 1..4, stride and dilation
// 1..3, pads 0..3 each side): the rewritten conv computes the same output.
TEST(ConvPaddingTaps, SmallGeometriesSweep) {
  int fired = 0, cases = 0;
  uint32_t seed = 200;
  for (int64_t in = 1; in <= 5; ++in)
    for (int64_t k = 1; k <= 4; ++k)
      for (int64_t s = 1; s <= 3; ++s)
        for (int64_t d = 1; d <= 3; ++d)
          for (int64_t pb = 0; pb <= 3; ++pb)
            for (int64_t pe = 0; pe <= 3; ++pe) {
              if (in + pb + pe < (k - 1) * d + 1) continue;  // no output: the kernel rejects it
              SCOPED_TRACE("in " + std::to_string(in) + " kernel " + std::to_string(k) + " stride " +
                           std::to_string(s) + " dilation " + std::to_string(d) + " pads " + std::to_string(pb) + "," +
                           std::to_string(pe));
              GraphBuilder b;
              auto x = b.input("x", {1, 2, in});
              b.output(b.node("Conv", {x, b.constant("w", random_tensor({2, 2, k}, seed))},
                              {{"pads", ais({pb, pe})}, {"strides", ais({s})}, {"dilations", ais({d})}}));
              auto g = b.graph();
              auto before = run_graph(g, {random_tensor({1, 2, in}, seed + 1)});
              p::PassContext ctx = cpu_kernels_context();
              fired += p::crop_padding_taps(*g, ctx);
              auto after = run_graph(g, {random_tensor({1, 2, in}, seed + 1)});
              ASSERT_EQ(after.size(), 1u);
              expect_same(after[0], before[0]);
              ++cases;
              seed += 2;
            }
  EXPECT_GT(fired, cases / 10);  // many geometries have padding-only taps
  EXPECT_LT(fired, cases);       // and many have none
}

// Taps that some output position reads, no padding, VALID: nothing changes.
TEST(ConvPaddingTaps, LiveTapsStay) {
  const std::vector<Case> cases = {
      // H 3, pads 1: the top row is padding for output row 0 only.
      {"dead for some outputs only", {1, 3, 3, 8}, {4, 3, 3, 3}, {{"pads", ais({1, 1, 1, 1})}}, {4, 3, 3, 3}, {}},
      // H 2, pads 1, stride 1: rows -1..1 and 0..2: every tap reads a real row somewhere.
      {"dead at one end of each output", {1, 3, 2, 5}, {4, 3, 3, 3}, {{"pads", ais({1, 1, 1, 1})}}, {4, 3, 3, 3}, {}},
      // H 4, dilation 2, pads 0 / 1: rows 0, 2, 4: the last tap reads padding only, but without it the
      // kernel would span 3 rows, and with no padding left to take off the output would get a second row.
      {"trailing crop would add an output",
       {1, 2, 4, 3},
       {3, 2, 3, 1},
       {{"pads", ais({0, 0, 1, 0})}, {"dilations", ais({2, 1})}},
       {3, 2, 3, 1},
       {}},
      {"no padding", {1, 3, 3, 3}, {4, 3, 3, 3}, {}, {4, 3, 3, 3}, {}},
      {"auto_pad VALID", {1, 3, 3, 5}, {4, 3, 3, 3}, {{"auto_pad", as("VALID")}}, {4, 3, 3, 3}, {}},
      {"1x1 kernel", {1, 3, 1, 5}, {4, 3, 1, 1}, {}, {4, 3, 1, 1}, {}},
  };
  uint32_t seed = 100;
  for (const Case& k : cases) {
    SCOPED_TRACE(k.what);
    auto opt = check(one_conv(k, seed), {random_tensor(k.x, seed + 2)}, 0);
    seed += 3;
    EXPECT_EQ(w_shape(*opt), k.want_w);
  }
}

// An infinity or NaN in a tap that reads padding only: 0 * inf is NaN, so the
// tap is not dead and the conv stays (its outputs are NaN either way).
TEST(ConvPaddingTaps, NonFiniteWeightInADeadTapStays) {
  for (float bad : {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    SCOPED_TRACE(bad);
    GraphBuilder b;
    auto x = b.input("x", {1, 2, 1, 5});
    Tensor w = random_tensor({3, 2, 3, 3}, 7);
    w.data<float>()[1 * 18 + 0 * 9 + 0 * 3 + 1] = bad;  // channel 1, row 0 (padding only)
    b.output(b.node("Conv", {x, b.constant("w", w)}, {{"pads", ais({1, 1, 1, 1})}}));
    auto opt = check(b.graph(), {random_tensor({1, 2, 1, 5}, 8)}, 0);
    EXPECT_EQ(w_shape(*opt), Shape({3, 2, 3, 3}));
  }
}

// Huge pads (a hostile model): the pass decides at once, without visiting
// every output position, and leaves attributes past 2^31 to the kernel.
TEST(ConvPaddingTaps, HugePadsDecidedWithoutALoopOverOutputs) {
  for (int64_t pad : {int64_t{1} << 30, int64_t{1} << 40}) {
    SCOPED_TRACE(pad);
    GraphBuilder b;
    auto x = b.input("x", {1, 1, 1, 1});
    b.output(b.node("Conv", {x, b.constant("w", random_tensor({1, 1, 3, 1}, 60))}, {{"pads", ais({pad, 0, pad, 0})}}));
    auto g = b.graph();
    p::PassContext ctx = cpu_kernels_context();
    EXPECT_EQ(p::crop_padding_taps(*g, ctx), 0);  // every tap reads the one input row for some output row
    EXPECT_EQ(w_shape(*g), Shape({1, 1, 3, 1}));
  }
}

// Symbolic spatial dims: those axes keep their taps; a static axis beside one
// is still cropped.
TEST(ConvPaddingTaps, UnknownSizesKeepTheirAxis) {
  const Case all{"height and width symbolic",   {1, 4, 1, 1}, {5, 4, 3, 3},
                 {{"pads", ais({1, 1, 1, 1})}}, {5, 4, 3, 3}, {}};
  auto opt = check(one_conv(all, 30, {"", "", "h", "w"}), {random_tensor({1, 4, 1, 1}, 31)}, 0);
  EXPECT_EQ(w_shape(*opt), Shape({5, 4, 3, 3}));

  const Case half{"height symbolic, width 1", {1, 4, 1, 1}, {5, 4, 3, 3}, {{"pads", ais({1, 1, 1, 1})}}, {}, {}};
  opt = check(one_conv(half, 32, {"", "", "h", ""}), {random_tensor({1, 4, 1, 1}, 33)}, 1);
  EXPECT_EQ(w_shape(*opt), Shape({5, 4, 3, 1}));
  EXPECT_EQ(pads(*opt), std::vector<int64_t>({1, 0, 1, 0}));
  // Fed a height other than 1, the kept axis still computes the full conv.
  auto before = run_graph(one_conv(half, 32, {"", "", "h", ""}), {random_tensor({1, 4, 4, 1}, 34)});
  auto after = run_graph(opt, {random_tensor({1, 4, 4, 1}, 34)});
  ASSERT_EQ(after.size(), 1u);
  expect_same(after[0], before[0]);
}

// A W read by two convs: the height-1 one gets a new, cropped W; the other
// still reads the full one.
TEST(ConvPaddingTaps, SharedWeightsKeptForOtherReaders) {
  GraphBuilder b;
  auto x1 = b.input("x1", {1, 3, 1, 4});
  auto x2 = b.input("x2", {1, 3, 4, 4});
  auto w = b.constant("w", random_tensor({3, 3, 3, 3}, 40));
  b.output(b.node("Conv", {x1, w}, {{"pads", ais({1, 1, 1, 1})}}));
  b.output(b.node("Conv", {x2, w}, {{"pads", ais({1, 1, 1, 1})}}));
  auto g = b.graph();
  auto opt = check(g, {random_tensor({1, 3, 1, 4}, 41), random_tensor({1, 3, 4, 4}, 42)}, 1);
  EXPECT_EQ(w_shape(*opt, 0), Shape({3, 3, 1, 3}));
  EXPECT_EQ(w_shape(*opt, 1), Shape({3, 3, 3, 3}));
  EXPECT_EQ(conv(*opt, 1).inputs[1], w);
}

// Registered as a standard pass: optimize_standard crops the conv (after
// shape inference gave the input's height), DLRT_DISABLE_PASSES keeps it.
TEST(ConvPaddingTaps, StandardPassAndItsSwitch) {
  const Case k{"height 1", {1, 8, 1, 10}, {6, 8, 3, 3}, {{"pads", ais({1, 1, 1, 1})}}, {}, {}};
  ThreadPool pool(1);
  {
    auto g = one_conv(k, 50);
    auto fired = optimize_standard(*g, pool);
    ASSERT_TRUE(fired.ok());
    EXPECT_EQ((*fired)["conv-padding-taps"], 1);
    EXPECT_EQ(w_shape(*g), Shape({6, 8, 1, 3}));
  }
  {
    const char* old = std::getenv("DLRT_DISABLE_PASSES");
    const std::string saved = old ? old : "";
    setenv("DLRT_DISABLE_PASSES", "conv-padding-taps", 1);  // NOLINT(concurrency-mt-unsafe)
    auto g = one_conv(k, 50);
    auto fired = optimize_standard(*g, pool);
    if (old)
      setenv("DLRT_DISABLE_PASSES", saved.c_str(), 1);  // NOLINT(concurrency-mt-unsafe)
    else
      unsetenv("DLRT_DISABLE_PASSES");  // NOLINT(concurrency-mt-unsafe)
    ASSERT_TRUE(fired.ok());
    EXPECT_EQ((*fired)["conv-padding-taps"], 0);
    EXPECT_EQ(w_shape(*g), Shape({6, 8, 3, 3}));
  }
}

}  // namespace
}  // namespace dlrt::testing
