// The real OpenVINO runtime for tests: the pinned PyPI wheel, installed at test time (never at
// build time) into <build>/venv by scripts/setup_venv.sh. Tests that need it GTEST_SKIP with the
// reason when pip cannot install it (no network, unsupported platform).
#pragma once

#include <glob.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "../tools/cli_test_util.h"

namespace dlrt::testing {

// The pinned release; DLRT_OPENVINO_TEST_VERSION overrides it (e.g. 2024.6.0 to exercise the
// pre-2025.1 element numbering) with its own venv, <build>/venv-openvino-<version>.
inline std::string openvino_test_version() {
  const char* v = std::getenv("DLRT_OPENVINO_TEST_VERSION");
  return v && *v ? v : "2025.4.1";
}

struct OpenVinoWheel {
  std::string venv;      // <build>/venv (or venv-openvino-<version>)
  std::string libs;      // <venv>/lib/python3.X/site-packages/openvino/libs
  std::string error;     // why there is none
};

inline const OpenVinoWheel& openvino_wheel() {
  static std::once_flag once;
  static OpenVinoWheel w;
  std::call_once(once, [] {
    const std::string version = openvino_test_version();
    const std::string build = std::string(DLRT_BINARY_DIR) +
                              (std::getenv("DLRT_OPENVINO_TEST_VERSION") ? "/venv-openvino-" + version : "");
    const std::string pin = "openvino==" + version;
    // setup_venv.sh makes <dir>/venv; a custom version gets a folder of its own.
    const std::string setup_dir = build;
    const std::string script = std::string(DLRT_TEST_DIR) + "/../scripts/setup_venv.sh";
    CommandResult r = run_command("bash " + quote(script) + " " + quote(setup_dir) + " " + quote(pin));
    w.venv = setup_dir + "/venv";
    if (r.exit_code != 0) {
      // setup_venv.sh stops (set -o pipefail) when `pip show` finds the package missing; install
      // directly with the venv's pip when the venv exists.
      CommandResult r2 = run_command(quote(w.venv + "/bin/python") + " -m pip install --disable-pip-version-check -q " +
                                     quote(pin));
      if (r2.exit_code != 0) {
        w.error = "cannot install " + pin + " with scripts/setup_venv.sh (" + r.output + ") nor pip (" + r2.output + ")";
        return;
      }
    }
    glob_t g{};
    std::string pattern = w.venv + "/lib/python3*/site-packages/openvino/libs";
    if (::glob(pattern.c_str(), 0, nullptr, &g) == 0 && g.gl_pathc > 0) w.libs = g.gl_pathv[0];
    ::globfree(&g);
    if (w.libs.empty()) w.error = pin + " installed, but " + pattern + " does not exist";
  });
  return w;
}

}  // namespace dlrt::testing
