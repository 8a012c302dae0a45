// Which map graph inputs dlrt takes (see onnx_map_inputs.h).
#include "ir/onnx_map_inputs.h"

#include <string>

#include "dlrt/dtype.h"

namespace dlrt::ir {

namespace {

// True when a node of g (`nested_only`: of a graph nested in it) reads `name`.
bool graph_reads(const onnx::GraphProto& g, const std::string& name, bool nested_only) {
  for (const auto& n : g.node()) {
    if (!nested_only)
      for (const auto& in : n.input())
        if (in == name) return true;
    for (const auto& a : n.attribute()) {
      if (a.has_g() && graph_reads(a.g(), name, false)) return true;
      for (const auto& sub : a.graphs())
        if (graph_reads(sub, name, false)) return true;
    }
  }
  return false;
}

}  // namespace

Status check_map_input(const onnx::GraphProto& g, const onnx::ValueInfoProto& v, bool main_graph) {
  const auto& m = v.type().map_type();
  const std::string what = "graph input '" + v.name() + "'";
  if (m.key_type() != onnx::TensorProto::INT64 && m.key_type() != onnx::TensorProto::STRING)
    return Unsupported(what + " is a map with keys of type " + std::to_string(m.key_type()) +
                       "; dlrt takes maps with int64 or string keys");
  if (!m.value_type().has_tensor_type() || !dtype_is_valid(m.value_type().tensor_type().elem_type()))
    return Unsupported(what + " is a map whose values are not tensors of a type dlrt has");
  if (!main_graph || graph_reads(g, v.name(), true))
    return Unsupported(what + " is a map read inside a subgraph; dlrt takes map inputs where DictVectorizer reads them");
  for (const auto& n : g.node())
    for (const auto& in : n.input())
      if (in == v.name() && (n.op_type() != "DictVectorizer" || n.domain() != "ai.onnx.ml"))
        return Unsupported(what + " is a map read by " + n.op_type() +
                           "; dlrt takes map inputs where DictVectorizer reads them");
  return Status::Ok();
}

}  // namespace dlrt::ir
