// The memory budget of one tensor: every tensor a model's shapes imply (a
// kernel's output, an input dlrt makes, a planned buffer) is checked against
// it before it is allocated, so that a hostile or mistaken shape (a Resize
// scale of 1e10) fails with a clear error instead of an OOM kill or an abort.
//
// The limit: DLRT_MAX_TENSOR_MB (read once per process), else half the
// machine's physical memory, and never less than 1 GiB.
//
// Thread-safety: safe to call from any thread.
#pragma once

#include <cstdint>
#include <string>

#include "dlrt/status.h"

namespace dlrt {

// The limit in bytes.
uint64_t max_tensor_bytes();

// "19.2 GiB", "512 MiB", "300 B".
std::string format_bytes(uint64_t bytes);

// Ok when `bytes` is within the limit; otherwise kOutOfMemory:
// "<what> would allocate 19.2 GiB, over the 12.0 GiB limit (DLRT_MAX_TENSOR_MB)".
Status check_tensor_bytes(uint64_t bytes, const std::string& what);

}  // namespace dlrt
