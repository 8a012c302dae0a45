// Import of ONNX models into dlrt's Graph. The only place (with its .cpp
// files) that sees ONNX protobuf types.
#pragma once

#include <functional>
#include <string>

#include "core/run_value.h"
#include "dlrt/status.h"
#include "ir/graph.h"

namespace dlrt {
struct ModelMetadata;  // dlrt/model_metadata.h
}

namespace dlrt::ir {

// Opset range of the default domain this importer accepts: kMaxOpset is the
// newest of the ONNX release dlrt is built with (1.23.2; a test checks the two
// agree). Definitions newer than opset 21 are checked op by op
// (onnx_definitions.h).
inline constexpr int kMinOpset = 7;
inline constexpr int kMaxOpset = 28;

// Whether the runtime runs op `op_type` of `domain` ("" for ai.onnx) at `opset`.
using RunsOp = std::function<bool(const std::string& domain, const std::string& op_type, int opset)>;

struct ImportOptions {
  // Whether the runtime runs op `op_type` of `domain` ("" for ai.onnx) at
  // `opset` natively. A main-graph node for which it returns false, of an op
  // ONNX defines as a function of other ops, is replaced by that function's
  // body. Unset: no such expansion.
  RunsOp runs_op;
  // Where to put the model's descriptive fields (producer, domain, doc_string,
  // version, metadata_props, graph name); null: not kept.
  ModelMetadata* metadata = nullptr;
};

// Reads, checks and converts a model file. External data is resolved relative
// to the file's folder and may not escape it. Model-local functions are
// inlined.
// Errors: kIoError (cannot read), kInvalidModel (not ONNX, truncated, broken
// graph, bad external data), kUnsupported (opset out of range, an op
// definition newer than dlrt runs).
Result<Model> import_onnx_file(const std::string& path, const ImportOptions& options = {});

// The same from serialized bytes; `base_dir` is where external data lives
// (empty: models with external data are rejected).
Result<Model> import_onnx_bytes(const std::string& bytes, const std::string& base_dir,
                                const ImportOptions& options = {});

// Reads an ONNX backend-test data file (input_N.pb / output_N.pb): a
// TensorProto, or a SequenceProto / OptionalProto when `kind` says so.
Result<RunValue> load_test_data_file(const std::string& path, ValueKind kind);

}  // namespace dlrt::ir
