// Finding libopenvino_c.so: where to look (openvino_library_search) and the
// two-pass open (cheap places first, the python3 query only when they fail).
//
// Thread-safety: every function may be called from any thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/dynamic_library.h"

namespace dlrt::backend::openvino {

// Where libopenvino_c.so is looked for, in order:
//   1. $OPENVINO_LIB_PATH (a file, or a folder searched for libopenvino_c.so and libopenvino_c.so.*);
//   2. the loader path: libopenvino_c.so (LD_LIBRARY_PATH, ld.so.cache), then each LD_LIBRARY_PATH
//      folder for the versioned sonames a pip wheel ships (libopenvino_c.so.2541);
//   3. pip wheel layouts: <site-packages>/openvino/libs of the python3 on PATH (asked with
//      `python3 -c` once per PATH, bounded by a 5 s timeout, and only when every cheaper place
//      failed; DLRT_OPENVINO_NO_PYTHON=1 skips it), then of $VIRTUAL_ENV, $CONDA_PREFIX,
//      ~/.local, ~/venv, ~/.venv, ~/.pyenv/versions/*, /usr/local and /usr. Neither dlrt's own
//      BUILD/venv (where the test suite installs the wheel) nor ./venv is searched: with them,
//      every `auto` session run from the build folder would start using OpenVINO's CPU device;
//      activate the venv (VIRTUAL_ENV) or point OPENVINO_LIB_PATH at it instead;
//   4. /opt/intel/openvino*/runtime/lib/intel64, /usr/lib/x86_64-linux-gnu, /usr/local/lib.
// `with_python` false leaves out the python3 query (it costs a process start).
LibrarySearch openvino_library_search(bool with_python = true);

// The site-packages folders the python3 on PATH reports (empty when it cannot be asked, when
// DLRT_OPENVINO_NO_PYTHON=1, or when python3 does not answer within 5 s).
std::vector<std::string> python_site_packages();

// Opens libopenvino_c.so: the search without python3 first, then only the folders the
// python3 query adds. Null when neither finds it; `tried` gets every path tried, once.
std::shared_ptr<DynamicLibrary> open_openvino_library(std::vector<std::string>* tried);

// An environment variable, or `def` when unset or empty.
std::string env_or(const char* name, const std::string& def = "");

}  // namespace dlrt::backend::openvino
