// Which ai.onnx operator definitions dlrt runs. dlrt's kernels implement the
// operators as defined up to opset kVerifiedOpset; a model of a newer opset
// loads when each of its ops is either unchanged since then (its definition's
// since_version <= kVerifiedOpset) or has a newer definition dlrt has been
// checked against (the table in onnx_definitions.cpp: new element types only,
// or a change its kernel implements). Any other newer definition is refused
// at load with what changed, instead of running with the older semantics.
#pragma once

#include <onnx/onnx_pb.h>

#include "dlrt/status.h"

namespace dlrt::ir {

// The newest opset whose ai.onnx definitions dlrt's kernels were written for.
inline constexpr int kVerifiedOpset = 21;

// kUnsupported for the first default-domain node of `g` (or of its
// subgraphs) whose definition at `opset` is newer than kVerifiedOpset and not
// one dlrt runs. Ops ONNX does not define at `opset` are left to the runtime.
Status check_newer_definitions(const onnx::GraphProto& g, int opset);

// The newest ai.onnx opset of the ONNX library dlrt is built with.
int onnx_library_max_opset();

}  // namespace dlrt::ir
