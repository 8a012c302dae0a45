// Helpers for tests that drive the built `dlrt` binary as a user would.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>

namespace dlrt::testing {

struct CommandResult {
  int exit_code = -1;   // valid when !signaled
  bool signaled = false;
  int signal = 0;
  std::string output;   // stdout and stderr together
};

// Runs `command` through /bin/sh, capturing stdout and stderr.
// A shell prefix that limits a command's address space to 4 GB, so that a read without a
// bound fails fast instead of filling the machine's memory; empty under AddressSanitizer,
// whose shadow memory needs far more address space.
inline std::string memory_limit_prefix() {
#if defined(__SANITIZE_ADDRESS__)
  return "";
#else
  return "ulimit -v 4000000; ";
#endif
}

inline CommandResult run_command(const std::string& command) {
  CommandResult r;
  std::string full = "(" + command + ") 2>&1";
  FILE* p = ::popen(full.c_str(), "r");
  if (!p) {
    r.output = "popen failed";
    return r;
  }
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  int status = ::pclose(p);
  if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
    // The shell reports a child killed by a signal as 128 + signal.
    if (r.exit_code > 128 && r.exit_code < 160) {
      r.signaled = true;
      r.signal = r.exit_code - 128;
    }
  } else if (WIFSIGNALED(status)) {
    r.signaled = true;
    r.signal = WTERMSIG(status);
  }
  return r;
}

inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// The built `dlrt`, or $DLRT_TEST_DLRT when set: a command that runs it, such as a
// wrapper that execs it under qemu-aarch64 (scripts/test_arm64.sh; no binfmt_misc needed).
inline std::string dlrt_binary() {
  const char* cmd = std::getenv("DLRT_TEST_DLRT");
  return cmd && *cmd ? std::string(cmd) : std::string(DLRT_BINARY_DIR) + "/dlrt";
}

// Folder of the models tests/models/make_test_models.py writes: $DLRT_TEST_MODELS,
// else <build>/test_models, generated on first use when missing. Empty (and
// `error` set) when it cannot be made.
inline std::string test_models_dir(std::string* error = nullptr) {
  static std::once_flag once;
  static std::string dir, err;
  std::call_once(once, [] {
    const char* env = std::getenv("DLRT_TEST_MODELS");
    dir = env && *env ? env : std::string(DLRT_BINARY_DIR) + "/test_models";
    if (std::filesystem::exists(dir + "/STAMP")) return;
    std::string cmd = "/usr/bin/python3 " + quote(std::string(DLRT_TEST_DIR) + "/models/make_test_models.py") + " --if-missing " + quote(dir);
    CommandResult r = run_command(cmd);
    if (r.exit_code != 0 || !std::filesystem::exists(dir + "/STAMP")) {
      err = "cannot generate test models with `" + cmd + "` (needs python3-onnx, python3-numpy: run scripts/install_deps.sh):\n" + r.output;
      dir.clear();
    }
  });
  if (error) *error = err;
  return dir;
}

}  // namespace dlrt::testing
