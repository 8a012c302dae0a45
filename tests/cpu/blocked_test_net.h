// What the blocked-layout tests share (blocked_layout_test, blocked_concat_test,
// blocked_split_test): random float32 conv nets with seeded weights, and the
// check that blocked_layout leaves a graph's outputs as they were.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "../ir/graph_builder.h"
#include "ir/passes/passes.h"
#include "kernel_test_util.h"

namespace dlrt::testing {

struct BlockedNet {
  GraphBuilder b;
  uint32_t seed = 1;
  ir::ValueId weights(int64_t m, int64_t cg, int64_t k) {
    const uint32_t s = seed++;
    return b.constant("w" + std::to_string(s), random_tensor({m, cg, k, k}, s, -0.3f, 0.3f));
  }
  ir::ValueId bias(int64_t m) {
    const uint32_t s = seed++;
    return b.constant("b" + std::to_string(s), random_tensor({m}, s));
  }
  // A k x k Conv of c -> m channels, padded dil * (k / 2) on every side (pad
  // when >= 0), with a bias.
  ir::ValueId conv(ir::ValueId x, int64_t c, int64_t m, int64_t k, int64_t stride = 1, int64_t group = 1,
                   int64_t dil = 1, int64_t pad = -1) {
    const int64_t pd = pad >= 0 ? pad : dil * (k / 2);
    return b.node("Conv", {x, weights(m, c / group, k), bias(m)},
                  {{"pads", ais({pd, pd, pd, pd})},
                   {"strides", ais({stride, stride})},
                   {"dilations", ais({dil, dil})},
                   {"group", ai(group)}});
  }
  ir::ValueId relu(ir::ValueId x) { return b.node("Relu", {x}); }
  // Relu(conv), the conv padded k / 2 or (same_upper) by auto_pad SAME_UPPER.
  ir::ValueId conv_relu(ir::ValueId x, int64_t c, int64_t m, int64_t k, int64_t stride = 1, bool same_upper = false) {
    if (!same_upper) return relu(conv(x, c, m, k, stride));
    return relu(b.node("Conv", {x, weights(m, c, k), bias(m)},
                       {{"strides", ais({stride, stride})}, {"auto_pad", as("SAME_UPPER")}}));
  }
};

// Runs g as built and after blocked_layout(block) and expects the same
// outputs (close: the convs sum in another order). The converted graph; its
// outputs in *got and the pass's count of rewrites in *rewrites when given.
inline std::shared_ptr<ir::Graph> convert_blocked(std::shared_ptr<ir::Graph> g, const std::vector<Tensor>& inputs,
                                                  int block, std::vector<Tensor>* got = nullptr,
                                                  int* rewrites = nullptr) {
  auto blocked = std::make_shared<ir::Graph>(*g);
  ir::passes::PassContext ctx = cpu_kernels_context();
  const int r = ir::passes::blocked_layout(*blocked, ctx, block);
  if (rewrites) *rewrites = r;
  EXPECT_TRUE(blocked->topological_sort().ok());
  auto want = run_graph(g, inputs), out = run_graph(blocked, inputs);
  EXPECT_EQ(want.size(), out.size());
  for (size_t i = 0; i < want.size() && i < out.size(); ++i) expect_close(out[i], want[i], 2e-4f);
  if (got) *got = std::move(out);
  return blocked;
}

}  // namespace dlrt::testing
