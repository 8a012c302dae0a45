// Finding NVIDIA's libraries: the CUDA driver, NVRTC and cuBLAS, each by the
// search order cuda_runtime.h describes, with every miss recorded and each
// candidate accepted only when the caller's check (symbol table, versions)
// passes, so that a too-new NVRTC is passed over for an older one.
//
// Thread-safety: find_library and the helpers are reentrant; they read the
// environment (DLRT_CUDA_LIB_PATH, PATH, PYTHONPATH, VIRTUAL_ENV, CONDA_PREFIX,
// HOME, CUDA_HOME, CUDA_PATH) on every call, so a refresh sees a fixed one.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend/dynamic_library.h"
#include "dlrt/status.h"

namespace dlrt::cuda {

enum class CudaLib { kDriver, kNvrtc, kCublas };

struct CudaLibSpec {
  CudaLib lib;
  std::string label;                   // "CUDA driver (libcuda.so.1)"
  std::string stem;                    // "libcuda.so": files named stem or stem.* qualify
  std::vector<std::string> sonames;    // tried with the system loader, in order
  std::vector<std::string> folders;    // folders or glob patterns, in order
};

// The search for `lib` as the environment stands now.
CudaLibSpec cuda_lib_spec(CudaLib lib);

// site-packages (and dist-packages) folders found without starting Python:
// $VIRTUAL_ENV, $CONDA_PREFIX, $PYTHONPATH's entries, the lib/python3*/
// folders beside every python3 on $PATH, ~/.local, ~/.pyenv, /usr/local/lib, /usr/lib.
// Glob patterns; duplicates removed.
std::vector<std::string> python_site_patterns();

// $DLRT_CUDA_LIB_PATH split at ':'; empty when unset or empty.
std::vector<std::string> cuda_lib_path_entries();

// Checks a loaded candidate; an error passes it over (its message goes to the
// tried list) and the search goes on.
using AcceptFn = std::function<Status(const backend::DynamicLibrary&)>;

// Searches for `spec`; every attempt is appended to `tried` as
// "<label>: <path>: <outcome>". kDeviceUnavailable when nothing qualifies.
Result<std::shared_ptr<backend::DynamicLibrary>> find_library(const CudaLibSpec& spec, const AcceptFn& accept,
                                                              std::vector<std::string>& tried);

}  // namespace dlrt::cuda
