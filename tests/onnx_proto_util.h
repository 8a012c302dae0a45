// Helpers for tests that build ONNX models with ONNX's protobuf classes.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace dlrt::testing {

// Appends node `op` (named "<op>_<out>") reading `in` and writing `out` to `g`.
inline onnx::NodeProto* add_onnx_node(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& in,
                                      const std::string& out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(op + "_" + out);
  for (const auto& i : in) n->add_input(i);
  n->add_output(out);
  return n;
}

}  // namespace dlrt::testing
