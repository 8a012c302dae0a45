// Serializes an ir::Graph back to ONNX (the inverse of onnx_import.h): how a
// partition is handed to a backend that takes ONNX. Constants become
// initializers; subgraphs and their captures are kept.
#pragma once

#include <string>

#include "dlrt/status.h"
#include "ir/graph.h"

namespace dlrt::ir {

Result<std::string> export_onnx(const Graph& graph, int64_t ir_version = 8);

}  // namespace dlrt::ir
