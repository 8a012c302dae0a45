// The names SessionOptions::cpu_precision accepts, for callers that check a
// user's choice before creating a session (the CLI's --precision).
#pragma once

#include <string>

#include "dlrt/export.h"

namespace dlrt {

// True for a precision name a session takes ("f32", "bf16", "bf16x3", "auto"; see
// SessionOptions::cpu_precision); false for anything else, "" included.
DLRT_API bool is_cpu_precision(const std::string& name);

}  // namespace dlrt
