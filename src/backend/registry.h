// A set of backends, by name. The process-wide one, with dlrt's built-in
// backends, is the runtime's (runtime/backends.h); no vendor code runs at
// registration (loading happens in is_available()).
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

 private:
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<Backend>> backends_;
};

}  // namespace dlrt::backend
