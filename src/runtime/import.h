// How the runtime imports ONNX models: ir::ImportOptions with the ops dlrt
// runs natively (the CPU backend's kernels, which run every op of a session
// that no accelerator takes), so that other ops with an ONNX function body are
// expanded into it at load.
#pragma once

#include "ir/onnx_import.h"

namespace dlrt {

ir::ImportOptions runtime_import_options();

}  // namespace dlrt
