// The public dlrt C++ API in one include.
#pragma once

#include "dlrt/backends.h"
#include "dlrt/compile.h"
#include "dlrt/cpu_precision.h"
#include "dlrt/dtype.h"
#include "dlrt/export.h"
#include "dlrt/memory.h"
#include "dlrt/model_info.h"
#include "dlrt/model_metadata.h"
#include "dlrt/onnx_data.h"
#include "dlrt/placement.h"
#include "dlrt/precision_choice.h"
#include "dlrt/profile.h"
#include "dlrt/session.h"
#include "dlrt/shape.h"
#include "dlrt/status.h"
#include "dlrt/tensor.h"
#include "dlrt/version.h"

namespace dlrt {

// The version of the dlrt library loaded (DLRT_VERSION_STRING of the build
// that made it, e.g. "0.2.0"); compare with DLRT_VERSION_STRING, the
// version of the headers compiled against.
DLRT_API const char* version();

}  // namespace dlrt
