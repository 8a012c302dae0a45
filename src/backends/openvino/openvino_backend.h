// The OpenVINO backend: Intel CPUs, GPUs and NPUs through OpenVINO's C API
// (libopenvino_c.so), loaded at run time; dlrt is built without OpenVINO.
//
// Loading (first is_available() or any call that needs the library): the
// library is searched as openvino_library_search() says, the version is read
// first (ov_get_openvino_version) and refused unless its element-type
// numbering is known (ov_api.h), then every other symbol is resolved (all or
// nothing), one ov_core is created for the process and the element numbering
// is checked against the library (tensor byte sizes). The devices and their
// FULL_DEVICE_NAME are read once, then; later calls are cheap.
//
// Compile: partition -> ONNX bytes -> ov_core_read_model_from_memory_buffer,
// reshaped to the static input shapes when they are known, compiled with
// PERFORMANCE_HINT (option performance_hint, LATENCY by default), exported
// (ov_compiled_model_export_model) as the blob. init imports the blob
// (ov_core_import_model). OpenVINO's CACHE_DIR is <dlrt blob cache>/openvino (off on the CPU by
// default, see openvino_cache_dir).
//
// Compile options read (CompileOptions::values):
//   performance_hint     LATENCY (default) | THROUGHPUT | CUMULATIVE_THROUGHPUT
//   inference_precision  OpenVINO INFERENCE_PRECISION_HINT; default f32 on CPU (results match
//                        dlrt's CPU backend), the device's own default elsewhere
//   infer_requests       size of each executable's infer-request pool (default: the compiled
//                        model's OPTIMAL_NUMBER_OF_INFER_REQUESTS; env DLRT_OPENVINO_INFER_REQUESTS)
//   request_timeout_ms   how long execute() waits for a free infer request (default 60000; env
//                        DLRT_OPENVINO_REQUEST_TIMEOUT_MS); then execute() fails with kBackendError
//   openvino_cache_dir   1: compile with CACHE_DIR=<dlrt cache>/openvino (default off on CPU,
//                        where dlrt's blob cache already keeps the model and OpenVINO 2025.4's
//                        export of a model loaded from its own cache does not import; on
//                        elsewhere, with the export checked by importing it)
//   ov.<KEY>             passed to ov_core_compile_model as property KEY (e.g. ov.NPU_PLATFORM)
//
// Files, one concern each: ov_library (finding libopenvino_c.so), ov_api and
// ov_runtime (the API table, version gate, core and devices), ov_compile
// (compile, blob, import), ov_requests (the infer-request pool and execute).
//
// Thread-safety: every method may be called from any thread; execute() on one
// Executable from many threads shares its pool of infer requests.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/dynamic_library.h"
#include "backends/openvino/ov_library.h"

namespace dlrt::backend::openvino {

std::shared_ptr<Backend> make_openvino_backend();

// Process-wide counts of how execute() handed inputs to OpenVINO (tests, diagnostics).
struct OpenVinoStats {
  uint64_t zero_copy_inputs = 0;  // wrapped with ov_tensor_create_from_host_ptr
  uint64_t copied_inputs = 0;     // copied into an OpenVINO-allocated tensor
};
OpenVinoStats openvino_stats();

}  // namespace dlrt::backend::openvino
