// What an ONNX model declares and what it is made of: its inputs and outputs
// (types, shapes with their symbolic dims), opsets, descriptive fields and
// metadata_props, node and op counts (subgraphs of If/Loop/Scan included) and
// parameter size. What `dlrt inspect` prints.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "dlrt/dtype.h"
#include "dlrt/export.h"
#include "dlrt/model_metadata.h"
#include "dlrt/status.h"

namespace dlrt {

class Session;

// One graph input or output as the model declares it.
struct ModelValueInfo {
  std::string name;
  std::string kind = "tensor";  // "tensor", "sequence", "optional", "map" or "unknown"
  // The element type: the tensor's, that of a sequence's or optional's
  // tensors, a map's values'.
  DType dtype = DType::kUndefined;
  DType key_dtype = DType::kUndefined;  // maps (and sequences of maps): the key type
  bool has_shape = false;               // false: the model does not give the rank
  std::vector<int64_t> shape;           // -1 where the dim is not fixed
  std::vector<std::string> dim_names;   // each dim's symbol ("batch"), "" where it has none
  std::string type;                     // as ONNX writes it: "tensor(float)", "seq(map(int64,tensor(float)))"
};

// Nodes of one op, over the main graph and every subgraph.
struct OpCount {
  std::string domain;  // as the model writes it; "" for ai.onnx
  std::string op_type;
  int64_t count = 0;
};

struct ModelInfo {
  int64_t ir_version = 0;
  std::map<std::string, int> opsets;  // domain ("" for ai.onnx, as the model writes it) -> version
  ModelMetadata metadata;             // producer, domain, doc strings, model_version, metadata_props
  std::vector<ModelValueInfo> inputs;
  std::vector<ModelValueInfo> outputs;
  int64_t node_count = 0;      // nodes of the main graph and of every subgraph
  int64_t subgraph_count = 0;  // graph attributes (If branches, Loop and Scan bodies)
  std::vector<OpCount> ops;    // by (domain, op_type)
  int64_t parameter_count = 0;  // elements of initializers and Constant values
  int64_t parameter_bytes = 0;  // their bytes (a string's length for string tensors)
};

// Reads the model at `path` without creating a session (no device is
// touched). Errors: those of Session::create's import (kIoError,
// kInvalidModel, kUnsupported).
DLRT_API Result<ModelInfo> read_model_info(const std::string& path);

// The model `session` was created from, as imported: before graph
// optimisation, with ONNX function ops the runtime does not run natively
// counted as their bodies. Valid as long as the session.
DLRT_API const ModelInfo& model_info(const Session& session);

}  // namespace dlrt
