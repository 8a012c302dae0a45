// ONNX functions expanded at import: a model's local functions (FunctionProto,
// which the torch.onnx dynamo exporter writes), and ops that ONNX defines as a
// function of other ops (e.g. RMSNormalization, Swish, Attention of opset 23+)
// where the runtime has no kernel for them.
#pragma once

#include <string>

#include <onnx/onnx_pb.h>

#include "dlrt/status.h"
#include "ir/onnx_import.h"

namespace dlrt::ir {

// A domain as ONNX's schema registry names it: "ai.onnx" is the default domain, "".
inline std::string normalize_domain(const std::string& d) { return d == "ai.onnx" ? "" : d; }

// Replaces every call of a model-local function by the function's body.
// kInvalidModel when a function cannot be inlined.
Status inline_local_functions(onnx::ModelProto& m);

// Replaces each main-graph node whose op `runs_op` says the runtime does not
// run, and which ONNX defines as a function at the model's opset, by that
// function's body; then reruns ONNX's shape inference. Subgraphs keep such
// nodes (the runtime then names the op). No-op when `runs_op` is empty.
Status inline_function_ops(onnx::ModelProto& m, const RunsOp& runs_op);

}  // namespace dlrt::ir
