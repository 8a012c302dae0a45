// Compiling a partition into a blob and importing a blob: the partition is
// exported as ONNX, read by OpenVINO, reshaped to static input shapes where
// they are known, compiled with the hints the options ask for (with
// OpenVINO's CACHE_DIR inside dlrt's blob cache where on) and exported; the
// blob is a small dlrt header ("DLOV", layout version, port counts, OpenVINO
// build, device) then OpenVINO's export. Import checks the header against the
// loaded runtime and the device, and the imported ports against the header.
//
// Thread-safety: both functions may be called from any thread.
#pragma once

#include <memory>

#include "backend/backend.h"
#include "backends/openvino/ov_requests.h"
#include "backends/openvino/ov_runtime.h"

namespace dlrt::backend::openvino {

inline constexpr const char* kBlobFormat = "openvino-export-v1";

// The blob for `subgraph` on `device` (options: openvino_backend.h).
Result<Blob> compile_blob(const Runtime& rt, const ir::Graph& subgraph, const BackendDevice& device,
                          const CompileOptions& options);

// The executable for `blob` on `device`, imported, its port types read; its
// request pool is not started yet (start_request_pool).
Result<std::unique_ptr<OvExecutable>> import_blob(const Runtime& rt, const Blob& blob, const CompileOptions& options,
                                                  const BackendDevice& device);

}  // namespace dlrt::backend::openvino
