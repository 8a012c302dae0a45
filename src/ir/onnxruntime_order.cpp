#include "ir/onnxruntime_order.h"

#include <vector>

namespace dlrt::ir {
namespace {

bool dynamic_quantizer(const Node& n) {
  return (n.domain.empty() && n.op_type == "DynamicQuantizeLinear") ||
         (n.domain == "com.microsoft" && n.op_type == "DynamicQuantizeMatMul");
}

bool ort_order_op(const Node& n) {
  if (n.domain.empty()) return n.op_type == "LayerNormalization" || n.op_type == "Softmax" || n.op_type == "MatMul";
  return n.domain == "com.microsoft" && (n.op_type == "SkipLayerNormalization" || n.op_type == "BiasGelu");
}

}  // namespace

int mark_onnxruntime_order(Graph& g) {
  bool contrib = false;
  for (const Node& n : g.nodes) contrib = contrib || n.domain == "com.microsoft";
  if (!contrib) return 0;
  // The values a dynamic quantizer reads, and those they are computed from.
  std::vector<bool> feeds(g.values.size(), false);
  std::vector<ValueId> work;
  for (const Node& n : g.nodes)
    if (dynamic_quantizer(n) && !n.inputs.empty()) work.push_back(n.inputs[0]);
  while (!work.empty()) {
    const ValueId v = work.back();
    work.pop_back();
    if (v < 0 || static_cast<size_t>(v) >= feeds.size() || feeds[v]) continue;
    feeds[v] = true;
    const ValueId p = g.values[v].producer_node;
    if (p < 0) continue;
    for (ValueId in : g.nodes[p].inputs) work.push_back(in);
  }
  int tagged = 0;
  for (Node& n : g.nodes) {
    if (!ort_order_op(n) || n.outputs.empty()) continue;
    const ValueId y = n.outputs[0];
    if (y < 0 || static_cast<size_t>(y) >= feeds.size() || !feeds[y]) continue;
    Attribute a;
    a.kind = Attribute::Kind::kInt;
    a.i = 1;
    n.attributes[kOnnxRuntimeOrderAttr] = std::move(a);
    ++tagged;
  }
  return tagged;
}

}  // namespace dlrt::ir
