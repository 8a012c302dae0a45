#include "ir/onnx_arity.h"

#include <onnx/defs/schema.h>

#include <limits>
#include <string>

namespace dlrt::ir {

namespace {

// The newest default-domain opset the installed libonnx (1.12) has schemas for.
constexpr int kLibOnnxSchemaOpset = 17;

// Ops whose input count changed after opset 17: for a newer model libonnx
// returns its opset-17 schema, so the newer bounds come from here (the ONNX
// operator changelog). Output counts did not change.
struct NewerInputs {
  const char* op;
  int since;
  int min_inputs, max_inputs;
};
constexpr NewerInputs kNewerInputs[] = {
    {"ReduceL1", 18, 1, 2},        {"ReduceL2", 18, 1, 2},       {"ReduceLogSum", 18, 1, 2},
    {"ReduceLogSumExp", 18, 1, 2}, {"ReduceMax", 18, 1, 2},      {"ReduceMean", 18, 1, 2},
    {"ReduceMin", 18, 1, 2},       {"ReduceProd", 18, 1, 2},     {"ReduceSumSquare", 18, 1, 2},
    {"Pad", 18, 2, 4},             {"OptionalHasElement", 18, 0, 1}, {"DFT", 20, 1, 3},
};

std::string count(int n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

std::string range(int lo, int hi, const char* what) {
  if (lo == hi) return count(lo, what);
  if (hi == std::numeric_limits<int>::max()) return std::to_string(lo) + " or more " + what + "s";
  return std::to_string(lo) + " to " + std::to_string(hi) + " " + what + "s";
}

Status check_node(const onnx::NodeProto& n, int opset) {
  const std::string& domain = n.domain();
  if (!domain.empty() && domain != "ai.onnx") return Status::Ok();
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(n.op_type(), opset, "");
  if (!schema || schema->deprecated()) return Status::Ok();  // unknown or deprecated: the runtime names it
  int min_in = schema->min_input(), max_in = schema->max_input();
  bool newer = false;
  if (opset > kLibOnnxSchemaOpset)
    for (const NewerInputs& e : kNewerInputs)
      if (n.op_type() == e.op && opset >= e.since) min_in = e.min_inputs, max_in = e.max_inputs, newer = true;
  const std::string what = "node '" + (n.name().empty() ? (n.output_size() ? n.output(0) : std::string()) : n.name()) +
                           "' (" + n.op_type() + ")";
  const std::string fix = ": fix the graph (or re-export the model)";
  if (n.input_size() < min_in || n.input_size() > max_in)
    return InvalidModel(what + " has " + count(n.input_size(), "input") + "; " + n.op_type() + " takes " +
                        range(min_in, max_in, "input") + fix);
  if (n.output_size() < schema->min_output() || n.output_size() > schema->max_output())
    return InvalidModel(what + " has " + count(n.output_size(), "output") + "; " + n.op_type() + " makes " +
                        range(schema->min_output(), schema->max_output(), "output") + fix);
  // An empty name stands for an omitted optional value: not allowed where the
  // schema requires one (a variadic list's values are all given).
  const auto& formal_in = schema->inputs();
  for (int i = 0; i < n.input_size() && !newer && i < static_cast<int>(formal_in.size()); ++i)
    if (n.input(i).empty() && formal_in[i].GetOption() == onnx::OpSchema::Single)
      return InvalidModel(what + ": input " + std::to_string(i) + " ('" + formal_in[i].GetName() +
                          "') is required but has no name" + fix);
  const auto& formal_out = schema->outputs();
  for (int i = 0; i < n.output_size() && i < static_cast<int>(formal_out.size()); ++i)
    if (n.output(i).empty() && formal_out[i].GetOption() == onnx::OpSchema::Single)
      return InvalidModel(what + ": output " + std::to_string(i) + " ('" + formal_out[i].GetName() +
                          "') is required but has no name" + fix);
  return Status::Ok();
}

}  // namespace

Status check_node_arity(const onnx::GraphProto& g, int opset) {
  for (const auto& n : g.node()) {
    DLRT_RETURN_IF_ERROR(check_node(n, opset));
    for (const auto& a : n.attribute()) {
      if (a.type() == onnx::AttributeProto::GRAPH) DLRT_RETURN_IF_ERROR(check_node_arity(a.g(), opset));
      for (const auto& sub : a.graphs()) DLRT_RETURN_IF_ERROR(check_node_arity(sub, opset));
    }
  }
  return Status::Ok();
}

}  // namespace dlrt::ir
