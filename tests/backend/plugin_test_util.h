// Helpers for tests that load the test plugins (tests/backends/test_plugin.cpp).
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace dlrt::testing {

// Folder the test plugins are built into, and one plugin's path in it.
inline std::string plugin_dir() { return DLRT_TEST_PLUGIN_DIR; }
inline std::string plugin_path(const std::string& name) { return plugin_dir() + "/libdlrt_plugin_" + name + ".so"; }

// Sets (or, with nullopt, unsets) an environment variable for the life of the object.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, std::optional<std::string> value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) old_ = old;
    set(value);
  }
  ~ScopedEnv() { set(old_); }
  void set(const std::optional<std::string>& v) {
    if (v) ::setenv(name_.c_str(), v->c_str(), 1);
    else ::unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace dlrt::testing
