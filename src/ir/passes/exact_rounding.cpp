// Which values must keep the float rounding of the ops as written: those a
// dynamic quantizer reads, directly or through the ops that compute them.
#include <string_view>

#include "ir/passes/passes.h"

namespace dlrt::ir::passes {
namespace {

// The float inputs of `n` that it quantizes with a scale computed from their
// own values at run time (none for other ops).
std::vector<ValueId> dynamically_quantized_inputs(const Node& n) {
  auto first = [&]() -> std::vector<ValueId> {
    if (n.inputs.empty() || n.inputs[0] == kNoValue) return {};
    return {n.inputs[0]};
  };
  if (n.domain.empty() && n.op_type == "DynamicQuantizeLinear") return first();
  if (n.domain == "com.microsoft" && n.op_type == "DynamicQuantizeMatMul") return first();
  if (n.domain == "com.microsoft" && n.op_type == "DynamicQuantizeLSTM") {
    // X, and the initial hidden state (input 5), which the cell quantizes with X's scheme.
    std::vector<ValueId> v = first();
    if (n.inputs.size() > 5 && n.inputs[5] != kNoValue) v.push_back(n.inputs[5]);
    return v;
  }
  return {};
}

}  // namespace

int mark_dynamic_quantizer_inputs(const Graph& g, PassContext& ctx) {
  ctx.exact_values.assign(g.values.size(), false);
  std::vector<ValueId> work;
  for (const Node& n : g.nodes)
    for (ValueId v : dynamically_quantized_inputs(n)) work.push_back(v);
  int marked = 0;
  while (!work.empty()) {
    const ValueId v = work.back();
    work.pop_back();
    if (v < 0 || static_cast<size_t>(v) >= g.values.size() || ctx.exact_values[v]) continue;
    ctx.exact_values[v] = true;
    ++marked;
    const ValueId p = g.values[v].producer_node;
    if (p < 0) continue;
    const Node& n = g.nodes[p];
    for (ValueId in : n.inputs) work.push_back(in);
    for (ValueId in : g.implicit_inputs(n)) work.push_back(in);
  }
  return marked;
}

}  // namespace dlrt::ir::passes
