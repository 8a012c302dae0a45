// Private helpers for the passes: who reads what, constants, and node
// removal/replacement that keeps the topological order and the node tags.
#pragma once

#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/passes/passes.h"
#include "core/tensor_values.h"

namespace dlrt::ir::passes {

class Rewriter {
 public:
  Rewriter(Graph& g, PassContext& ctx);

  Graph& graph() { return g_; }
  const Graph& graph() const { return g_; }
  Node& node(int i) { return g_.nodes[i]; }
  const Node& node(int i) const { return g_.nodes[i]; }
  int size() const { return static_cast<int>(g_.nodes.size()); }
  bool dead(int i) const { return dead_[i]; }

  // Index of the live node producing v, or -1.
  int producer(ValueId v) const;
  // The live node producing v when it is op_type in the ONNX domain, else -1.
  int producer_op(ValueId v, const std::string& op_type) const;
  // Live nodes reading v (a node reading it twice appears twice).
  std::vector<int> consumers(ValueId v) const;
  // True when v is a graph output or captured by a subgraph.
  bool escapes(ValueId v) const;
  // Exactly one live reader (once), and not a graph output or capture: the
  // value may disappear into a fusion.
  bool single_use(ValueId v) const;

  // The constant held by v (an initializer or folded value), unless v is a
  // graph input (whose default the caller may override).
  const Tensor* constant(ValueId v) const;
  // A constant with exactly one element, as double.
  std::optional<double> scalar(ValueId v) const;
  bool is_graph_input(ValueId v) const;

  // A new value with a unique name derived from `base`.
  ValueId new_value(const std::string& base, TypeInfo type = {});
  ValueId new_constant(const std::string& base, Tensor t);

  // Makes every live reader of `from` read `to` instead; false (and nothing
  // changed) when `from` escapes (graph output, subgraph capture).
  bool replace_uses(ValueId from, ValueId to);
  // Removes node i (its outputs lose their producer).
  void remove(int i);
  // Replaces node i by `n` at the same position (i keeps its tag).
  void replace(int i, Node n);
  // Adds a node right before node `before` (tag of `before`).
  void insert_before(int before, Node n);

  // Applies the edits: drops removed nodes (and their tags), places inserted
  // nodes, recomputes producer_node. Rewriter must not be used afterwards.
  void commit();

 private:
  void index_uses();

  Graph& g_;
  PassContext& ctx_;
  std::vector<bool> dead_;
  std::vector<int> producer_;             // per value
  std::vector<std::vector<int>> users_;   // per value
  std::vector<bool> escapes_;             // per value
  std::vector<bool> is_input_;            // per value
  std::vector<std::pair<int, Node>> inserted_;
};

// element_as_double (core/tensor_values.h) reads constants' values.
using dlrt::element_as_double;
using dlrt::element_as_int64;

// "Op" with the ONNX domain.
inline bool is_op(const Node& n, const char* op) { return n.domain.empty() && n.op_type == op; }

inline bool is_8bit(DType t) { return t == DType::kUInt8 || t == DType::kInt8; }

// Whether `v` is a float32 value (false for an omitted optional input, -1).
inline bool is_float32(const Graph& g, ValueId v) {
  return v >= 0 && g.values[static_cast<size_t>(v)].type.dtype == DType::kFloat32;
}

// A BatchNormalization in inference mode with per-channel statistics and no
// running-statistics outputs: the form a conv before it can absorb.
inline bool inference_batchnorm(const Node& bn) {
  if (bn.inputs.size() < 5 || bn.attr_int("training_mode", 0) != 0) return false;
  if (bn.opset < 9 && bn.attr_int("spatial", 1) == 0) return false;  // per-element statistics
  for (size_t k = 1; k < bn.outputs.size(); ++k)
    if (bn.outputs[k] != kNoValue) return false;
  return true;
}

// The other input of a two-input node, given one of them (v itself when the
// node reads v twice); kNoValue when n has not two inputs or does not read v.
inline ValueId other_input(const Node& n, ValueId v) {
  if (n.inputs.size() != 2) return kNoValue;
  if (n.inputs[0] == v) return n.inputs[1];
  if (n.inputs[1] == v) return n.inputs[0];
  return kNoValue;
}

// The single live reader of v when it is `op` (ONNX domain), else -1.
inline int sole_consumer(const Rewriter& rw, ValueId v, const char* op) {
  if (!rw.single_use(v)) return -1;
  const int c = rw.consumers(v)[0];
  return is_op(rw.node(c), op) ? c : -1;
}

inline Attribute make_attr_int(int64_t v) {
  Attribute a;
  a.kind = Attribute::Kind::kInt;
  a.i = v;
  return a;
}
inline Attribute make_attr_float(float v) {
  Attribute a;
  a.kind = Attribute::Kind::kFloat;
  a.f = v;
  return a;
}
inline Attribute make_attr_string(std::string v) {
  Attribute a;
  a.kind = Attribute::Kind::kString;
  a.s = std::move(v);
  return a;
}
inline Attribute make_attr_ints(std::vector<int64_t> v) {
  Attribute a;
  a.kind = Attribute::Kind::kInts;
  a.ints = std::move(v);
  return a;
}
inline Attribute make_attr_floats(std::vector<float> v) {
  Attribute a;
  a.kind = Attribute::Kind::kFloats;
  a.floats = std::move(v);
  return a;
}

inline bool near(double a, double b, double rel = 1e-4) { return std::abs(a - b) <= rel * std::max(1.0, std::abs(b)); }

// Debug log line "opt: <pass>: <what>".
void log_fired(const std::string& pass, const std::string& what);

}  // namespace dlrt::ir::passes
