// dlrt::backends() and dlrt::backend_check_model() (dlrt/backends.h) over the
// process-wide registry (runtime/backends.h) and the check model
// (runtime/canary_model.h).
#include "dlrt/backends.h"

#include <memory>

#include "backend/registry.h"
#include "runtime/backends.h"
#include "runtime/canary_model.h"

namespace dlrt {
namespace {

BackendDeviceInfo public_device(backend::BackendDevice d) {
  BackendDeviceInfo out;
  out.spec = d.spec();
  out.backend = std::move(d.backend);
  out.name = std::move(d.name);
  out.type = d.type;
  out.is_virtual = d.is_virtual;
  out.hardware = std::move(d.hardware);
  out.metadata = std::move(d.metadata);
  return out;
}

}  // namespace

std::vector<BackendInfo> backends(const BackendsOptions& options) {
  std::vector<std::shared_ptr<backend::Backend>> registered;
  if (options.only.empty()) {
    registered = global_backends().all();
  } else if (auto b = global_backends().find(options.only)) {
    registered.push_back(std::move(b));
  }
  std::optional<std::vector<Device>> hardware = options.hardware;
  std::vector<BackendInfo> out;
  for (const std::shared_ptr<backend::Backend>& b : registered) {
    backend::Availability a = b->is_available(options.refresh);
    BackendInfo info;
    info.name = b->name();
    info.available = a.available;
    info.reason = std::move(a.reason);
    info.fix = std::move(a.fix);
    info.library_path = std::move(a.library_path);
    info.version = std::move(a.version);
    info.compatibility = std::move(a.compatibility);
    info.tried = std::move(a.tried);
    if (info.available) {
      if (!hardware) hardware = discover_devices();
      for (backend::BackendDevice& d : b->devices(*hardware)) info.devices.push_back(public_device(std::move(d)));
    }
    out.push_back(std::move(info));
  }
  return out;
}

Result<BackendCheckModel> backend_check_model() {
  DLRT_ASSIGN_OR_RETURN(CanaryModel m, make_canary_model());
  return BackendCheckModel{std::move(m.onnx), std::move(m.feeds)};
}

}  // namespace dlrt
