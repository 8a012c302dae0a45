// Scalar Mul/Add after a fused activation -> the fused op's post-affine
// (passes.h: fuse_activation_affine); scalar Max/Min after a fused op (or a
// plain Conv / Gemm / MatMul) -> its post-clamp (fuse_activation_clamp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "ir/passes/rewriter.h"

namespace dlrt::ir::passes {
namespace {

bool is_fused_with_activation(const Node& n) {
  if (n.domain != "com.dlrt" || n.outputs.size() != 1) return false;
  if (n.op_type != "FusedConv" && n.op_type != "FusedGemm" && n.op_type != "FusedMatMul") return false;
  return !n.attr_string("activation", "").empty() && !n.has_attr("activation_affine") &&
         !n.has_attr("activation_clamp");
}

// The rank of the fused op's output where it is known, else -1.
int64_t output_rank(const Rewriter& rw, const Graph& g, const Node& n) {
  if (n.op_type == "FusedGemm" || n.op_type == "Gemm") return 2;
  if ((n.op_type == "FusedConv" || n.op_type == "Conv") && n.inputs.size() > 1) {
    if (const Tensor* w = rw.constant(n.inputs[1])) return w->rank();
  }
  const auto& s = g.values[static_cast<size_t>(n.outputs[0])].type.shape;
  if (s) return static_cast<int64_t>(s->size());
  if ((n.op_type == "FusedMatMul" || n.op_type == "MatMul") && n.inputs.size() > 1 && n.inputs[0] != kNoValue) {
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

// A float32 constant of one element, not NaN, whose rank does not exceed `rank`.
std::optional<float> bound_operand(const Rewriter& rw, ValueId v, int64_t rank) {
  const Tensor* c = rw.constant(v);
  if (!c || c->dtype() != DType::kFloat32 || c->size() != 1 || c->rank() > std::max<int64_t>(rank, 0))
    return std::nullopt;
  const float x = c->data<float>()[0];
  if (std::isnan(x)) return std::nullopt;
  return x;
}

// The op the post-clamp goes on: a com.dlrt FusedConv / FusedGemm /
// FusedMatMul without one, or a plain Conv / Gemm / MatMul that can become
// one (the checks of fuse_bias_activation); its fused op name, else null.
const char* clamp_host(const Rewriter& rw, const Graph& g, const Node& n) {
  if (n.outputs.size() != 1 || n.has_attr("activation_clamp")) return nullptr;
  if (n.domain == "com.dlrt")
    return n.op_type == "FusedConv" || n.op_type == "FusedGemm" || n.op_type == "FusedMatMul" ? n.op_type.c_str()
                                                                                              : nullptr;
  const char* op = is_op(n, "Conv")     ? "FusedConv"
                   : is_op(n, "Gemm")   ? "FusedGemm"
                   : is_op(n, "MatMul") ? "FusedMatMul"
                                        : nullptr;
  if (!op || n.inputs.size() < 2 || n.inputs[0] == kNoValue || n.inputs[1] == kNoValue) return nullptr;
  if (is_op(n, "MatMul") && n.inputs.size() != 2) return nullptr;
  const Tensor* w = rw.constant(n.inputs[1]);
  if (!is_float32(g, n.inputs[0]) && !(w && w->dtype() == DType::kFloat32)) return nullptr;
  return op;
}

// Clamp [lo, hi] (y -> min(max(y, lo), hi)) followed by Max(., c) (is_max)
// or Min(., c), where the Max/Min keeps its first operand, y, on ties: the
// composed clamp, or false where a tie of +0 and -0 makes the order matter.
bool compose_bound(float& lo, float& hi, float c, bool is_max) {
  auto same = [](float a, float b) { return a != b || std::signbit(a) == std::signbit(b); };
  if (!same(c, lo) || !same(c, hi)) return false;
  if (is_max) {
    if (c > lo) lo = c;
    if (c > hi) hi = c;  // every value is c
  } else {
    if (c < hi) hi = c;
    if (c < lo) lo = c;
  }
  return true;
}

// Node i and the chain of nodes after it become `fused`, in the place of the
// chain's last node (whose output it now writes).
void replace_chain(Rewriter& rw, int i, const std::vector<int>& chain, Node fused) {
  const int last = chain.back();
  rw.remove(i);
  for (int k : chain)
    if (k != last) rw.remove(k);
  rw.replace(last, std::move(fused));
}

}  // namespace

int fuse_activation_clamp(Graph& g, PassContext& ctx) {
  Rewriter rw(g, ctx);
  int fired = 0;
  for (int i = 0; i < rw.size(); ++i) {
    if (rw.dead(i)) continue;
    const char* op = clamp_host(rw, g, rw.node(i));
    if (!op || !ctx.can_run(op, "com.dlrt", 1)) continue;
    const int64_t rank = output_rank(rw, g, rw.node(i));
    ValueId out = rw.node(i).outputs[0];
    float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
    std::vector<int> chain;
    while (rw.single_use(out)) {
      const int k = rw.consumers(out)[0];
      const Node& n = rw.node(k);
      const bool is_max = is_op(n, "Max");
      if ((!is_max && !is_op(n, "Min")) || n.inputs.size() != 2 || n.outputs.size() != 1) break;
      const ValueId other = other_input(n, out);
      if (other == out) break;
      const auto c = bound_operand(rw, other, rank);
      // dlrt's Max/Min return their first operand on ties: with the constant
      // first, a zero constant meeting a zero of the other sign comes out
      // (the clamp keeps y), so only a nonzero one fuses there.
      if (!c || (n.inputs[0] != out && *c == 0.0f)) break;
      float l = lo, h = hi;
      if (!compose_bound(l, h, *c, is_max)) break;
      lo = l, hi = h;
      chain.push_back(k);
      out = n.outputs[0];
    }
    if (chain.empty() || ctx.keeps_rounding(out)) continue;
    Node fused = rw.node(i);
    if (fused.domain != "com.dlrt") {
      fused.name += "_fused";
      fused.op_type = op;
      fused.domain = "com.dlrt";
      fused.opset = 1;
    }
    fused.attributes["activation_clamp"] = make_attr_floats({lo, hi});
    fused.outputs = {out};
    log_fired("activation-clamp",
              "fused " + std::to_string(chain.size()) + " scalar Max/Min into " + rw.node(i).describe());
    replace_chain(rw, i, chain, std::move(fused));
    ++fired;
  }
  rw.commit();
  ctx.count("activation-clamp", fired);
  return fired;
}

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
    if (chain.empty() || !std::isfinite(static_cast<float>(scale)) || !std::isfinite(static_cast<float>(shift)) ||
        ctx.keeps_rounding(out))
      continue;
    Node fused = rw.node(i);
    // Without an Add the shift is -0, the identity of every sum (+0 would turn -0 into +0).
    fused.attributes["activation_affine"] =
        make_attr_floats({static_cast<float>(scale), shifted ? static_cast<float>(shift) : -0.0f});
    fused.outputs = {out};
    log_fired("activation-affine",
              "fused " + std::to_string(chain.size()) + " scalar Mul/Add into " + rw.node(i).describe());
    replace_chain(rw, i, chain, std::move(fused));
    ++fired;
  }
  rw.commit();
  ctx.count("activation-affine", fired);
  return fired;
}

}  // namespace dlrt::ir::passes
