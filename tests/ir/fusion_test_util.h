// What the epilogue-fusion tests (affine_fusion_test, clamp_fusion_test)
// share: the ISA levels to run, the conv kernel paths a fused activation must
// reach (built as com.dlrt FusedConv graphs), and the check against the
// unfused graph.
#pragma once

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/isa.h"
#include "graph_builder.h"
#include "ir/passes/passes.h"
#include "../cpu/isa_test_util.h"

namespace dlrt::testing {

inline Tensor filled(Shape shape, std::vector<float> v) { return Tensor::from_vector<float>(shape, v); }

using cpu::testing::runnable_isas;  // every ISA level this CPU runs: the kernels pick their paths by it

struct ConvCase {
  const char* what;
  Shape x, w;
  int64_t group, pad, stride;
};

// The conv kernel paths: GEMM (1x1), direct (small 3x3), Winograd (3x3 of 64
// channels), depthwise planes of 8 and 32 channels (plane kernels, the flat
// grid for rows <= 16, the 8/16-channel kernels), strided convs.
inline std::vector<ConvCase> conv_kernel_paths() {
  return {
      {"pointwise", {1, 32, 12, 12}, {48, 32, 1, 1}, 1, 0, 1},
      {"pointwise wide", {1, 16, 32, 32}, {16, 16, 1, 1}, 1, 0, 1},
      {"pointwise wide, partial block", {1, 16, 32, 32}, {24, 16, 1, 1}, 1, 0, 1},
      {"direct 3x3", {1, 8, 20, 20}, {16, 8, 3, 3}, 1, 1, 1},
      {"winograd 3x3", {1, 64, 12, 12}, {64, 64, 3, 3}, 1, 1, 1},
      {"winograd 3x3 large", {1, 64, 28, 28}, {64, 64, 3, 3}, 1, 1, 1},
      {"depthwise wide", {1, 32, 40, 40}, {32, 1, 3, 3}, 32, 1, 1},
      {"depthwise flat", {1, 32, 14, 14}, {32, 1, 3, 3}, 32, 1, 1},
      {"depthwise 8 wide", {1, 8, 40, 40}, {8, 1, 3, 3}, 8, 1, 1},
      {"depthwise 8 flat", {1, 8, 14, 14}, {8, 1, 3, 3}, 8, 1, 1},
      {"depthwise stride 2", {1, 32, 20, 20}, {32, 1, 5, 5}, 32, 2, 2},
      {"strided 3x3", {2, 16, 17, 17}, {24, 16, 3, 3}, 1, 1, 2},
  };
}

// Adds a com.dlrt FusedConv of `cc` to `b` (input "x", random weights and
// bias, the bias of channel 0 NaN when `nan_bias`, a residual input "z" when
// `residual`) with `attrs` besides pads/strides/group; appends the inputs'
// tensors to `inputs` and returns the conv's output.
inline ir::ValueId add_fused_conv(GraphBuilder& b, const ConvCase& cc, ir::Attributes attrs, bool residual,
                                  bool nan_bias, uint32_t& seed, std::vector<Tensor>& inputs) {
  const int64_t pad = cc.pad, M = cc.w[0];
  attrs["pads"] = ais({pad, pad, pad, pad});
  attrs["strides"] = ais({cc.stride, cc.stride});
  attrs["group"] = ai(cc.group);
  const int64_t oh = (cc.x[2] + 2 * pad - cc.w[2]) / cc.stride + 1, ow = (cc.x[3] + 2 * pad - cc.w[3]) / cc.stride + 1;
  Tensor bias = random_tensor({M}, seed++);
  if (nan_bias) bias.data<float>()[0] = std::numeric_limits<float>::quiet_NaN();
  std::vector<ir::ValueId> ins = {b.input("x", cc.x), b.constant("w", random_tensor(cc.w, seed++, -0.3f, 0.3f)),
                                  b.constant("b", bias)};
  inputs.push_back(random_tensor(cc.x, seed++, -3, 3));
  if (residual) {
    ins.push_back(b.input("z", {cc.x[0], M, oh, ow}));
    inputs.push_back(random_tensor({cc.x[0], M, oh, ow}, seed++));
  }
  return b.node("FusedConv", ins, attrs, 1, "com.dlrt");
}

// Within tol, and NaN exactly where `want` has NaN.
inline void expect_close_nan(const Tensor& got, const Tensor& want, float tol) {
  ASSERT_EQ(got.shape(), want.shape());
  for (int64_t i = 0; i < got.size(); ++i) {
    const float g = got.data<float>()[i], w = want.data<float>()[i];
    if (std::isnan(w)) {
      ASSERT_TRUE(std::isnan(g)) << "at " << i << ": " << g;
    } else {
      ASSERT_NEAR(g, w, tol * (1 + std::abs(w))) << "at " << i;
    }
  }
}

// On x [1, 16, 14, 14]: an expand FusedConv 16 -> 32 (1x1, attributes
// `expand`) then a 3x3 depthwise FusedConv with Relu, weights seeded from
// `seed` on; the depthwise conv's output.
inline ir::ValueId add_expand_depthwise(GraphBuilder& b, ir::ValueId x, ir::Attributes expand, uint32_t seed) {
  auto c1 = b.node("FusedConv", {x, b.constant("we", random_tensor({32, 16, 1, 1}, seed))}, std::move(expand), 1,
                   "com.dlrt");
  return b.node("FusedConv", {c1, b.constant("wd", random_tensor({32, 1, 3, 3}, seed + 1))},
                {{"activation", as("Relu")}, {"group", ai(32)}, {"pads", ais({1, 1, 1, 1})}}, 1, "com.dlrt");
}

// A 3x3 Conv of cin -> cout channels padded 1, weights in [-w_range, w_range)
// and a bias, named by `tag`; the seeds drawn from `seed`.
inline ir::ValueId add_conv3x3(GraphBuilder& b, ir::ValueId x, int64_t cin, int64_t cout, const std::string& tag,
                               uint32_t& seed, float w_range) {
  ir::ValueId w = b.constant("w" + tag, random_tensor({cout, cin, 3, 3}, seed++, -w_range, w_range));
  ir::ValueId bias = b.constant("b" + tag, random_tensor({cout}, seed++));
  return b.node("Conv", {x, w, bias}, {{"pads", ais({1, 1, 1, 1})}});
}

// The optimised graph g under every ISA level this CPU runs (each kernel
// path): its one output within tol of `want`.
inline void expect_same_on_every_isa(std::shared_ptr<ir::Graph> g, const std::vector<Tensor>& in, const Tensor& want,
                                     float tol) {
  for (cpu::CpuIsa isa : runnable_isas()) {
    cpu::ScopedCpuIsa cap(isa);
    SCOPED_TRACE(std::string("isa ") + cpu::cpu_isa_name(isa));
    auto got = run_graph(g, in);
    ASSERT_EQ(got.size(), 1u);
    expect_close(got[0], want, tol);
  }
}

// Runs the graph before and after `pass` (named `name` in the pass context's
// counts, which must show expect_fired): the outputs agree within tol, NaN
// where the unrewritten graph has NaN. Returns the rewritten graph.
template <typename Pass>
std::shared_ptr<ir::Graph> check_pass(std::shared_ptr<ir::Graph> g, const std::vector<Tensor>& inputs, Pass pass,
                                      const std::string& name, int expect_fired, float tol = 1e-5f) {
  auto before = run_graph(g, inputs);
  auto opt = std::make_shared<ir::Graph>(*g);
  ir::passes::PassContext ctx = cpu_kernels_context();
  EXPECT_EQ(pass(*opt, ctx), expect_fired) << name;
  EXPECT_EQ(ctx.fired[name], expect_fired) << name;
  EXPECT_TRUE(opt->topological_sort().ok());
  auto after = run_graph(opt, inputs);
  EXPECT_EQ(before.size(), after.size());
  for (size_t i = 0; i < before.size() && i < after.size(); ++i) expect_close_nan(after[i], before[i], tol);
  return opt;
}

}  // namespace dlrt::testing
