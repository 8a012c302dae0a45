// Node arity against the ONNX schema, for every opset: a default-domain node
// with too few or too many inputs or outputs (an Add with one input, a Conv
// without weights, a Relu with two outputs), or an empty name for an input
// the schema requires, is refused at load with the reason, in dlrt's words,
// before ONNX's checker runs (which stops at the first problem of any kind).
// Subgraphs are checked too.
#pragma once

#include <onnx/onnx_pb.h>

#include "dlrt/status.h"

namespace dlrt::ir {

// kInvalidModel "node 'a' (Add) has 1 input; Add takes 2 inputs: ..." for the
// first node of `g` (or of its subgraphs) that breaks its op's schema at
// `opset` (the model's default-domain opset). Ops ONNX has no schema for
// (other domains) are left to the runtime.
Status check_node_arity(const onnx::GraphProto& g, int opset);

}  // namespace dlrt::ir
