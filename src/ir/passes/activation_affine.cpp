// Scalar Mul/Add after a fused activation -> the fused op's post-affine
// (passes.h: fuse_activation_affine).
#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "ir/passes/rewriter.h"

namespace dlrt::ir::passes {
namespace {

bool is_fused_with_activation(const Node& n) {
  if (n.domain != "com.dlrt" || n.outputs.size() != 1) return false;
  if (n.op_type != "FusedConv" && n.op_type != "FusedGemm" && n.op_type != "FusedMatMul") return false;
  return !n.attr_string("activation", "").empty() && !n.has_attr("activation_affine");
}

// The rank of the fused op's output where it is known, else -1.
int64_t output_rank(const Rewriter& rw, const Graph& g, const Node& n) {
  if (n.op_type == "FusedGemm") return 2;
  if (n.op_type == "FusedConv" && n.inputs.size() > 1) {
    if (const Tensor* w = rw.constant(n.inputs[1])) return w->rank();
  }
  const auto& s = g.values[static_cast<size_t>(n.outputs[0])].type.shape;
  if (s) return static_cast<int64_t>(s->size());
  if (n.op_type == "FusedMatMul" && n.inputs.size() > 1 && n.inputs[0] != kNoValue) {
    // Both operands of rank >= 2: the output has the larger rank.
    const auto& a = g.values[static_cast<size_t>(n.inputs[0])].type.shape;
    const Tensor* b = rw.constant(n.inputs[1]);
    if (a && b && a->size() >= 2 && b->rank() >= 2)
      return std::max<int64_t>(static_cast<int64_t>(a->size()), b->rank());
  }
  return -1;
}

// A finite float32 constant of one element whose rank does not exceed
// `rank` (so broadcasting it leaves the shape as it is).
std::optional<double> scalar_operand(const Rewriter& rw, ValueId v, int64_t rank) {
  const Tensor* c = rw.constant(v);
  if (!c || c->dtype() != DType::kFloat32 || c->size() != 1 || c->rank() > std::max<int64_t>(rank, 0))
    return std::nullopt;
  const double x = element_as_double(*c, 0);
  if (!std::isfinite(x)) return std::nullopt;
  return x;
}

}  // namespace

int fuse_activation_affine(Graph& g, PassContext& ctx) {
  Rewriter rw(g, ctx);
  int fired = 0;
  for (int i = 0; i < rw.size(); ++i) {
    if (rw.dead(i) || !is_fused_with_activation(rw.node(i))) continue;
    const int64_t rank = output_rank(rw, g, rw.node(i));
    ValueId out = rw.node(i).outputs[0];
    double scale = 1.0, shift = 0.0;
    bool shifted = false;
    std::vector<int> chain;
    while (rw.single_use(out)) {
      const int k = rw.consumers(out)[0];
      const Node& n = rw.node(k);
      const bool mul = is_op(n, "Mul"), add = is_op(n, "Add"), sub = is_op(n, "Sub");
      if ((!mul && !add && !sub) || n.inputs.size() != 2 || n.outputs.size() != 1) break;
      if (sub && n.inputs[0] != out) break;  // c - y
      const ValueId other = other_input(n, out);
      if (other == out) break;
      const auto c = scalar_operand(rw, other, rank);
      if (!c) break;
      if (mul) {
        scale *= *c;
        shift *= *c;
      } else {
        shift += sub ? -*c : *c;
        shifted = true;
      }
      chain.push_back(k);
      out = n.outputs[0];
    }
    if (chain.empty() || !std::isfinite(static_cast<float>(scale)) || !std::isfinite(static_cast<float>(shift)))
      continue;
    Node fused = rw.node(i);
    // Without an Add the shift is -0, the identity of every sum (+0 would turn -0 into +0).
    fused.attributes["activation_affine"] =
        make_attr_floats({static_cast<float>(scale), shifted ? static_cast<float>(shift) : -0.0f});
    fused.outputs = {out};
    log_fired("activation-affine",
              "fused " + std::to_string(chain.size()) + " scalar Mul/Add into " + rw.node(i).describe());
    const int last = chain.back();
    rw.remove(i);
    for (int k : chain)
      if (k != last) rw.remove(k);
    rw.replace(last, std::move(fused));
    ++fired;
  }
  rw.commit();
  ctx.count("activation-affine", fired);
  return fired;
}

}  // namespace dlrt::ir::passes
