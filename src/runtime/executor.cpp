#include "runtime/executor.h"

#include <algorithm>

namespace dlrt {

namespace {

std::string domain_name(const std::string& d) { return d.empty() ? "ai.onnx" : d; }

// Finds a captured value by name in the enclosing frames.
const RunValue* lookup_capture(const std::string& name, const Frame* f) {
  for (; f; f = f->parent) {
    ir::ValueId id = f->graph->find_value(name);
    if (id != ir::kNoValue && f->values[id].present()) return &f->values[id];
  }
  return nullptr;
}

}  // namespace

Result<std::unique_ptr<Executor>> Executor::create(std::shared_ptr<const ir::Graph> graph, ThreadPool& pool) {
  std::unique_ptr<Executor> ex(new Executor(std::move(graph), pool));
  DLRT_RETURN_IF_ERROR(ex->plan_graph(*ex->graph_));
  return ex;
}

Status Executor::plan_graph(const ir::Graph& g) {
  GraphPlan plan;
  const auto& registry = cpu::KernelRegistry::builtin();
  // last reader of each value; graph outputs are never released
  std::vector<int> last_use(g.values.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& node = g.nodes[i];
    for (ir::ValueId in : node.inputs)
      if (in != ir::kNoValue) last_use[in] = static_cast<int>(i);
    for (ir::ValueId in : g.implicit_inputs(node)) last_use[in] = static_cast<int>(i);
    // An output nobody reads is released right after its producer.
    for (ir::ValueId out : node.outputs)
      if (out != ir::kNoValue && last_use[out] < static_cast<int>(i)) last_use[out] = static_cast<int>(i);
  }
  for (ir::ValueId o : g.outputs) last_use[o] = -1;
  plan.nodes.resize(g.nodes.size());
  for (size_t v = 0; v < g.values.size(); ++v)
    if (last_use[v] >= 0 && !g.values[v].constant) plan.nodes[last_use[v]].release_after.push_back(static_cast<ir::ValueId>(v));

  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& node = g.nodes[i];
    const cpu::KernelDef* def = registry.find(node.op_type, node.domain, node.opset);
    if (!def)
      return Unsupported("op '" + node.op_type + "' (domain '" + domain_name(node.domain) + "', opset " +
                         std::to_string(node.opset) + ") of node '" + node.name +
                         "' is not supported by the CPU backend");
    auto kernel = def->factory(node);
    if (!kernel.ok()) {
      const Status& s = kernel.status();
      if (s.message().find(node.describe()) != std::string::npos) return s;
      return s.with_context(node.describe());
    }
    plan.nodes[i].kernel = std::move(kernel).value();
    for (const auto& [name, a] : node.attributes) {
      if (a.g) DLRT_RETURN_IF_ERROR(plan_graph(*a.g));
      for (const auto& sg : a.graphs) DLRT_RETURN_IF_ERROR(plan_graph(*sg));
    }
  }
  plans_[&g] = std::move(plan);
  return Status::Ok();
}

Result<std::vector<RunValue>> Executor::run(std::vector<RunValue> inputs) const {
  return run_graph(*graph_, std::move(inputs), nullptr);
}

Result<std::vector<RunValue>> Executor::run_graph(const ir::Graph& g, std::vector<RunValue> inputs,
                                                  const Frame* parent) const {
  auto pit = plans_.find(&g);
  if (pit == plans_.end()) return Internal("graph '" + g.name + "' was not planned");
  const GraphPlan& plan = pit->second;

  Frame frame;
  frame.graph = &g;
  frame.parent = parent;
  frame.values.resize(g.values.size());
  for (size_t v = 0; v < g.values.size(); ++v)
    if (g.values[v].constant) frame.values[v] = RunValue::of(*g.values[v].constant);
  if (inputs.size() != g.inputs.size())
    return InvalidArgument("graph '" + g.name + "' takes " + std::to_string(g.inputs.size()) + " inputs, got " +
                           std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) frame.values[g.inputs[i]] = std::move(inputs[i]);
  for (ir::ValueId c : g.captures) {
    const RunValue* v = lookup_capture(g.values[c].name, parent);
    if (!v) return InvalidModel("subgraph '" + g.name + "' reads '" + g.values[c].name + "', which has no value when it runs");
    frame.values[c] = *v;
  }

  cpu::SubgraphRunner runner = [this, &frame](const ir::Graph& sub, std::vector<RunValue> in) {
    return run_graph(sub, std::move(in), &frame);
  };
  std::vector<const RunValue*> in_ptrs;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& node = g.nodes[i];
    in_ptrs.clear();
    for (ir::ValueId in : node.inputs) {
      const RunValue* v = in == ir::kNoValue ? nullptr : &frame.values[in];
      if (v && v->kind == RunValue::Kind::kNone) {
        // A capture of a nested subgraph resolved from an outer frame.
        v = lookup_capture(g.values[in].name, parent);
        if (!v) return Internal(node.describe() + ": input '" + g.values[in].name + "' has no value");
      }
      in_ptrs.push_back(v);
    }
    std::vector<RunValue> outs(node.outputs.size());
    cpu::KernelContext ctx(node, in_ptrs, outs, pool_, runner);
    Status s = plan.nodes[i].kernel->compute(ctx);
    if (!s.ok()) {
      if (s.message().find(node.describe()) == std::string::npos) s = s.with_context(node.describe());
      return s;
    }
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      ir::ValueId id = node.outputs[o];
      if (id == ir::kNoValue) continue;
      if (outs[o].kind == RunValue::Kind::kNone)
        return Internal(node.describe() + " did not produce its output " + std::to_string(o) + " ('" + g.values[id].name + "')");
      frame.values[id] = std::move(outs[o]);
    }
    for (ir::ValueId r : plan.nodes[i].release_after) frame.values[r] = RunValue{};
  }

  std::vector<RunValue> result;
  result.reserve(g.outputs.size());
  for (ir::ValueId o : g.outputs) {
    const RunValue& v = frame.values[o];
    if (v.kind == RunValue::Kind::kNone) {
      const RunValue* cap = lookup_capture(g.values[o].name, parent);
      if (!cap) return Internal("graph output '" + g.values[o].name + "' has no value");
      result.push_back(*cap);
    } else {
      result.push_back(v);
    }
  }
  return result;
}

}  // namespace dlrt
