// The loaded OpenVINO runtime: its API table (ov_api.h), the version gate
// (which element-type numbering the release uses, refused when unknown), the
// one ov_core of the process and its devices, and the compatibility check of
// a release dlrt was not tested with (backend/canary.h).
//
// Thread-safety: a Runtime is immutable once load_runtime() returns it, but
// for import_mu, which serialises "set a core property, import".
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/dynamic_library.h"
#include "backends/openvino/ov_api.h"

namespace dlrt::backend::openvino {

// The loaded runtime; immutable once published (loaded_ is set).
struct Runtime {
  std::shared_ptr<DynamicLibrary> lib;
  OvSymbols s;
  OvOptionalSymbols opt;  // null pointers when absent
  OvNumbering numbering = OvNumbering::k2025;
  OvVersion version;
  ov_core_t* core = nullptr;  // one per process, never freed (the library is never unloaded)
  // Held across "set the core's precision, import": the core's settings are process-wide.
  mutable std::mutex import_mu;
  struct Dev {
    std::string name, full_name;
  };
  std::vector<Dev> devices;
  std::string devices_error;

  // "what failed: <status name> (<code>): <OpenVINO's last message>"
  Status error(StatusCode code, const std::string& what, ov_status_e st) const {
    std::string msg = what + ": OpenVINO status " + std::to_string(static_cast<int>(st));
    if (const char* info = s.ov_get_error_info(st)) msg += std::string(" (") + info + ")";
    if (opt.ov_get_last_err_msg) {
      // OpenVINO allocates the message for the caller, who frees it with ov_free.
      if (const char* last = opt.ov_get_last_err_msg()) {
        if (*last) msg += ": " + std::string(last);
        s.ov_free(last);
      }
    }
    return Status(code, msg);
  }

  std::string get_core_property(const std::string& device, const char* key) const {
    char* value = nullptr;
    if (s.ov_core_get_property(core, device.c_str(), key, &value) != OV_STATUS_OK || value == nullptr) return "";
    std::string v = value;
    s.ov_free(value);
    return v;
  }
};

// Finds, opens and starts OpenVINO: the library (ov_library.h), its version and
// numbering, every symbol (all or nothing), the core, the numbering checked
// against the library, the devices; then, for a release outside the tested
// list, the compatibility check in a child process. On success `out` holds
// the runtime and the result is available; otherwise the result says why and
// how to fix it. Called under the backend's lock; may take seconds (python3
// query, canary child).
Availability load_runtime(std::unique_ptr<Runtime>* out);

}  // namespace dlrt::backend::openvino
