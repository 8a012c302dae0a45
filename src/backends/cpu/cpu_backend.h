// The built-in CPU backend behind the common Backend contract: always
// available, takes every node that has a CPU kernel, and is where every
// fallback lands.
#pragma once

#include <memory>

#include "backend/backend.h"

namespace dlrt::cpu {

std::shared_ptr<backend::Backend> make_cpu_backend();

// Why the CPU kernels cannot run `node` (empty when they can).
std::string cpu_unsupported_reason(const ir::Node& node);

}  // namespace dlrt::cpu
