// The backends this process knows, by name. The built-in ones are added in
// one place (builtin_backends.cpp) the first time the registry is used; no
// vendor code runs at registration (loading happens in is_available()).
//
// Thread-safety: every call may be made from any thread.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend/backend.h"

namespace dlrt::backend {

class BackendRegistry {
 public:
  // Adds a backend. kInvalidArgument when its name is already taken.
  Status add(std::shared_ptr<Backend> backend);
  // nullptr when there is none of that name.
  std::shared_ptr<Backend> find(const std::string& name) const;
  // In registration order (cpu first).
  std::vector<std::shared_ptr<Backend>> all() const;

  // The process-wide registry, with the built-in backends registered.
  static BackendRegistry& global();
  // Why registering the built-in and DLRT_PLUGINS backends into global()
  // failed, or ok. Session::create (and the CLI at start) return it: a
  // backend that failed to register is fatal, not a log line. Thread-safe.
  static Status global_status();

 private:
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<Backend>> backends_;
};

// Registers dlrt's built-in backends (cpu, then the accelerators) and any
// plugin backends named in DLRT_PLUGINS. Called once by global().
Status register_builtin_backends(BackendRegistry& registry);

}  // namespace dlrt::backend
