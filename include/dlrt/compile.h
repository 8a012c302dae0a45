// Ahead-of-time compiles (`dlrt compile`): an ONNX model in which each
// partition a backend compiled is one com.dlrt.CompiledPartition node holding
// the backend's blob and the original subgraph; a Session runs it with the
// blob where it fits the machine and recompiles the subgraph where not. See
// docs/compile.md.
//
// Thread-safety: compile_model_file may be called from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "dlrt/export.h"
#include "dlrt/status.h"

namespace dlrt {

struct CompileModelOptions {
  std::string device = "auto";  // device spec, as for SessionOptions::device
  // Handed to the backend's compile (as SessionOptions::backend_options).
  std::map<std::string, std::string> options;
  uint64_t max_embedded_bytes = 64ull << 20;  // larger blobs go to side files next to the output
  bool strict = false;                        // a partition that fails to compile fails the call
};

struct CompiledPartitionSummary {
  std::string backend;      // "openvino"
  std::string device;       // "openvino:NPU"
  bool is_virtual = false;  // compiled on a virtual device
  int node_count = 0;
  bool compiled = false;    // false: the compile failed, the nodes stay as they are (error says why)
  std::string error;
  uint64_t blob_bytes = 0;
  std::string blob_file;    // side file path; empty when embedded
};

struct CompileModelResult {
  std::vector<CompiledPartitionSummary> partitions;  // one per accelerator partition, in graph order
  int plain_nodes = 0;                               // nodes left as ordinary ONNX nodes
  std::vector<std::string> unavailable;              // requested devices that could not be used, with reasons
};

// Compiles every partition the spec's devices take (virtual devices included)
// and writes the model to `out_path` (side files next to it). With the spec
// `cpu` the CPU backend compiles every node it supports. Errors:
// kInvalidArgument (bad spec, output path), model import errors,
// kDeviceUnavailable (no requested device usable), kIoError (writing),
// the backend's error for a failed compile in strict mode.
DLRT_API Result<CompileModelResult> compile_model_file(const std::string& model_path, const std::string& out_path,
                                                       const CompileModelOptions& options);

}  // namespace dlrt
