// Import of ONNX models into dlrt's Graph. The only place (with its .cpp
// files) that sees ONNX protobuf types.
#pragma once

#include <string>

#include "core/run_value.h"
#include "dlrt/status.h"
#include "ir/graph.h"

namespace dlrt::ir {

// Opset range of the default domain this importer accepts.
inline constexpr int kMinOpset = 7;
inline constexpr int kMaxOpset = 21;

// Reads, checks and converts a model file. External data is resolved relative
// to the file's folder and may not escape it.
// Errors: kIoError (cannot read), kInvalidModel (not ONNX, truncated, broken
// graph, bad external data), kUnsupported (opset out of range).
Result<Model> import_onnx_file(const std::string& path);

// The same from serialized bytes; `base_dir` is where external data lives
// (empty: models with external data are rejected).
Result<Model> import_onnx_bytes(const std::string& bytes, const std::string& base_dir);

// Reads an ONNX backend-test data file (input_N.pb / output_N.pb): a
// TensorProto, or a SequenceProto / OptionalProto when `kind` says so.
Result<RunValue> load_test_data_file(const std::string& path, ValueKind kind);

}  // namespace dlrt::ir
