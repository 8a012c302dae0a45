// ONNX values serialized outside a model: the data files of ONNX's backend
// tests (test_data_set_N/input_N.pb, output_N.pb), as `dlrt conformance`
// reads them.
#pragma once

#include <string>

#include "dlrt/export.h"
#include "dlrt/session.h"

namespace dlrt {

// Reads a TensorProto file, or a SequenceProto or OptionalProto one when
// `kind` (ModelValueInfo::kind of the input or output it is for: "tensor",
// "sequence" or "optional") says so. An empty optional is Value::Kind::kNone.
// Errors: kIoError (unreadable), kInvalidModel (not such a message),
// kInvalidArgument (another kind).
DLRT_API Result<Value> read_onnx_value_file(const std::string& path, const std::string& kind = "tensor");

}  // namespace dlrt
