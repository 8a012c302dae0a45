// The process's log threshold set at run time (core/logging.h reads
// DLRT_LOG_LEVEL once): Python's set_default_logger_severity, as ONNX Runtime's.
#pragma once

#include "core/logging.h"

namespace dlrt {

// From now on, messages below `level` are not written (kOff: none).
void set_log_level(LogLevel level);

}  // namespace dlrt
