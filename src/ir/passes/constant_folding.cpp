// Dead-node elimination and constant folding.
#include <algorithm>
#include <cmath>
#include <set>

#include "ir/passes/rewriter.h"

namespace dlrt::ir::passes {

namespace {

bool has_subgraph(const Node& n) {
  for (const auto& [k, a] : n.attributes)
    if (a.g || !a.graphs.empty()) return true;
  return false;
}

// Ops whose result is not a function of their inputs, or that have effects.
bool foldable(const Node& n) {
  if (!n.domain.empty() && n.domain != "ai.onnx") return false;
  static const std::set<std::string> never = {
      "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Multinomial", "Bernoulli",
      "Dropout",  // training mode may be an input; left to the kernel
      "If", "Loop", "Scan", "SequenceConstruct", "SequenceEmpty", "SequenceInsert", "SequenceErase",
      "SplitToSequence", "ConcatFromSequence", "SequenceAt", "SequenceLength", "SequenceMap", "Optional",
      "OptionalGetElement", "OptionalHasElement"};
  return !never.count(n.op_type) && !has_subgraph(n);
}

// Ops whose output can be far larger than their inputs: fold only when the
// output size, computed from the inputs, stays under the limit.
bool small_enough(const Node& n, const std::vector<const Tensor*>& in, int64_t max_bytes) {
  const std::string& op = n.op_type;
  auto product = [](const Tensor* t) -> double {
    double p = 1;
    for (int64_t i = 0; t && i < t->size(); ++i) p *= std::max(1.0, element_as_double(*t, i));
    return p;
  };
  double elems = 0;
  if (op == "ConstantOfShape") elems = in.empty() ? 1 : product(in[0]);
  else if (op == "Expand") elems = in.size() > 1 && in[0] ? std::max<double>(product(in[1]), static_cast<double>(in[0]->size())) * 2 : 0;
  else if (op == "Tile") elems = in.size() > 1 && in[0] ? product(in[1]) * static_cast<double>(in[0]->size()) : 0;
  else if (op == "Range") {
    if (in.size() < 3 || !in[0] || !in[1] || !in[2] || in[0]->size() != 1) return false;
    double d = element_as_double(*in[2]);
    elems = d == 0 ? 0 : std::abs((element_as_double(*in[1]) - element_as_double(*in[0])) / d);
  } else if (op == "Resize" || op == "Upsample" || op == "Pad" || op == "OneHot" || op == "EyeLike") {
    return false;
  } else {
    return true;
  }
  return elems * 8 <= static_cast<double>(max_bytes);
}

}  // namespace

int eliminate_dead_nodes(Graph& g, PassContext& ctx) {
  // Backwards sweep: a node is live when one of its outputs is read by a live
  // node, is a graph output, or is captured by a subgraph of a live node.
  const size_t nv = g.values.size();
  std::vector<bool> needed(nv, false);
  for (ValueId v : g.outputs)
    if (v >= 0) needed[v] = true;
  std::vector<bool> live(g.nodes.size(), false);
  int removed = 0;
  for (size_t k = g.nodes.size(); k-- > 0;) {
    const Node& n = g.nodes[k];
    bool any = false;
    for (ValueId o : n.outputs) any = any || (o >= 0 && needed[o]);
    if (!any) {
      ++removed;
      continue;
    }
    live[k] = true;
    for (ValueId in : n.inputs)
      if (in >= 0) needed[in] = true;
    if (has_subgraph(n))
      for (ValueId c : g.implicit_inputs(n)) needed[c] = true;
  }
  if (removed > 0) {
    Rewriter rw(g, ctx);
    for (size_t k = 0; k < live.size(); ++k)
      if (!live[k]) {
        log_fired("dead-nodes", "removed " + g.nodes[k].describe());
        rw.remove(static_cast<int>(k));
      }
    rw.commit();
  }
  // Constants nobody reads any more (folded-away weights) free their memory.
  std::vector<bool> is_input(nv, false);
  for (ValueId v : g.inputs)
    if (v >= 0) is_input[v] = true;
  for (size_t v = 0; v < nv; ++v)
    if (!needed[v] && !is_input[v] && g.values[v].constant && g.values[v].producer_node < 0) g.values[v].constant.reset();
  ctx.count("dead-nodes", removed);
  return removed;
}

int fold_constants(Graph& g, PassContext& ctx) {
  if (!ctx.evaluate) return 0;
  Rewriter rw(g, ctx);
  int folded = 0;
  for (int i = 0; i < rw.size(); ++i) {
    const Node& n = rw.node(i);
    if (!foldable(n) || n.outputs.empty()) continue;
    if (ctx.keep_dequantize_linear && n.op_type == "DequantizeLinear") continue;
    std::vector<const Tensor*> inputs;
    bool all_const = true;
    int64_t in_bytes = 0;
    for (ValueId in : n.inputs) {
      if (in == kNoValue) {
        inputs.push_back(nullptr);
        continue;
      }
      const Tensor* t = rw.constant(in);
      if (!t) {
        all_const = false;
        break;
      }
      in_bytes += static_cast<int64_t>(t->nbytes());
      inputs.push_back(t);
    }
    if (!all_const) continue;
    if (!small_enough(n, inputs, ctx.max_fold_bytes)) continue;
    // Nodes without inputs other than Constant (handled by the importer) are
    // generators (e.g. EyeLike needs an input anyway); skip them.
    if (n.inputs.empty()) continue;
    auto out = ctx.evaluate(n, inputs);
    if (!out.ok()) {
      log_fired("constant-folding", "left " + n.describe() + " to run time: " + out.status().message());
      continue;
    }
    std::vector<Tensor>& res = out.value();
    if (res.size() < n.outputs.size()) continue;
    int64_t out_bytes = 0;
    bool valid = true;
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      if (n.outputs[k] == kNoValue) continue;
      if (!res[k].valid()) valid = false;
      else out_bytes += static_cast<int64_t>(res[k].nbytes());
    }
    if (!valid || (out_bytes > ctx.max_fold_bytes && out_bytes > in_bytes)) continue;
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      ValueId o = n.outputs[k];
      if (o == kNoValue) continue;
      Value& v = g.values[o];
      // Keep results independent of input storage (views of a constant).
      auto owned = res[k].clone();
      if (!owned.ok()) {
        valid = false;
        break;
      }
      v.constant = std::move(owned).value();
      v.type.kind = ValueKind::kTensor;
      v.type.dtype = v.constant->dtype();
      std::vector<Dim> dims;
      for (int64_t d : v.constant->shape()) dims.push_back(Dim{d, ""});
      v.type.shape = dims;
    }
    if (!valid) continue;
    log_fired("constant-folding", "folded " + n.describe());
    rw.remove(i);
    ++folded;
  }
  rw.commit();
  ctx.count("constant-folding", folded);
  return folded;
}

}  // namespace dlrt::ir::passes
