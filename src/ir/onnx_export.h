// Serializes an ir::Graph back to ONNX (the inverse of onnx_import.h): how a
// partition is handed to a backend that takes ONNX. Constants become
// initializers; subgraphs and their captures are kept.
#pragma once

#include <string>

#include "dlrt/status.h"
#include "ir/graph.h"

namespace dlrt::ir {

// Node attributes whose names start with this are dlrt's own (kernel choices
// recorded on the graph, e.g. onnxruntime_order.h's tag): kept when dlrt
// reads the export back, dropped for a consumer outside dlrt (OpenVINO, a
// plugin), whose ONNX checks may refuse an attribute the operator lacks.
inline constexpr const char* kInternalAttributePrefix = "_dlrt_";

enum class InternalAttributes { kKeep, kDrop };

Result<std::string> export_onnx(const Graph& graph, int64_t ir_version = 8,
                                InternalAttributes internal = InternalAttributes::kKeep);

}  // namespace dlrt::ir
