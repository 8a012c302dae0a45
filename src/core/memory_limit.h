// The memory budget of one tensor: every tensor a model's shapes imply (a
// kernel's output, an input dlrt makes, a planned buffer) is checked against
// it before it is allocated, so that a hostile or mistaken shape (a Resize
// scale of 1e10) fails with a clear error instead of an OOM kill or an abort.
//
// The limit of a session (resolved once, at create): SessionOptions::
// max_tensor_bytes, else DLRT_MAX_TENSOR_MB (read once per process), else the
// config file's max_tensor_mb, else half the machine's physical memory and
// never less than 1 GiB. The session installs it (ScopedTensorLimit) on the
// thread that builds or runs it; elsewhere the process default applies
// (DLRT_MAX_TENSOR_MB, else half the physical memory).
//
// Thread-safety: safe to call from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "dlrt/status.h"

namespace dlrt {

struct TensorLimit {
  uint64_t bytes = 0;
  std::string source;  // where it came from, for messages: "DLRT_MAX_TENSOR_MB"
};

// DLRT_MAX_TENSOR_MB in bytes, when set to a valid value (read once per process).
std::optional<uint64_t> env_max_tensor_bytes();
// The process default: DLRT_MAX_TENSOR_MB, else half the physical memory (at least 1 GiB).
const TensorLimit& default_tensor_limit();
// A session's limit from its option, the environment and the config file (0: not set).
TensorLimit resolve_tensor_limit(uint64_t option_bytes, std::optional<uint64_t> config_mb);

// The limit in force on this thread, in bytes.
uint64_t max_tensor_bytes();

// Installs `limit` on this thread until the scope ends (null: keep the current one).
class ScopedTensorLimit {
 public:
  explicit ScopedTensorLimit(const TensorLimit* limit);
  ~ScopedTensorLimit();
  ScopedTensorLimit(const ScopedTensorLimit&) = delete;
  ScopedTensorLimit& operator=(const ScopedTensorLimit&) = delete;

 private:
  const TensorLimit* previous_;
};

// "19.2 GiB", "512 MiB", "300 B".
std::string format_bytes(uint64_t bytes);

// Ok when `bytes` is within the limit; otherwise kOutOfMemory:
// "<what> would allocate 19.2 GiB, over the 12.0 GiB limit (DLRT_MAX_TENSOR_MB)".
Status check_tensor_bytes(uint64_t bytes, const std::string& what);

}  // namespace dlrt
