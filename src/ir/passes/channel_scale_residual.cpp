// Squeeze-excite's residual form on the blocked layout (passes.h:
// channel_scale_residual): y + y * s, with y * s a ChannelScaleBlocked read
// by nothing but the Add, becomes one ChannelScaleBlocked(y, s, y), which
// computes y * s + y in one pass over y instead of a second pass for the Add.
#include "ir/passes/passes.h"
#include "ir/passes/rewriter.h"

namespace dlrt::ir::passes {

int channel_scale_residual(Graph& g, PassContext& ctx) {
  Rewriter rw(g, ctx);
  int rewrites = 0;
  for (int i = 0; i < rw.size(); ++i) {
    if (rw.dead(i)) continue;
    const Node& scale = rw.node(i);
    if (scale.domain != "com.dlrt" || scale.op_type != "ChannelScaleBlocked" || scale.inputs.size() != 2 ||
        scale.outputs.size() != 1)
      continue;
    const ValueId y = scale.inputs[0], ys = scale.outputs[0];
    const int add = sole_consumer(rw, ys, "Add");
    if (add < 0 || rw.node(add).outputs.size() != 1 || other_input(rw.node(add), ys) != y || y == ys) continue;
    Node fused = scale;
    fused.inputs.push_back(y);
    fused.outputs = rw.node(add).outputs;
    fused.name = rw.node(add).name;
    rw.remove(i);
    rw.replace(add, std::move(fused));
    ++rewrites;
  }
  rw.commit();
  ctx.count("channel-scale-residual", rewrites);
  return rewrites;
}

}  // namespace dlrt::ir::passes
