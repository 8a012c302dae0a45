// The OpenCL runtime as dlrt sees it: the ICD loader opened at run time, its
// platforms and devices, and per device a context with dlrt's kernel program
// built once per process (program binaries cached on disk through the blob
// cache, keyed by device, driver version, source hash and build options).
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "backend/backend.h"
#include "backend/dynamic_library.h"
#include "backends/opencl/cl_api.h"
#include "backends/gpu/lowering.h"

namespace dlrt::opencl {

struct ClDeviceInfo {
  int index = 0;  // dlrt's name for the device: "0", "1", ... across platforms
  cl_platform_id platform = nullptr;
  cl_device_id id = nullptr;
  std::string name, vendor, platform_name, platform_version, version, driver_version, c_version, extensions;
  cl_device_type type = 0;
  cl_uint compute_units = 0, vendor_id = 0, clock_mhz = 0;
  cl_ulong global_mem = 0, local_mem = 0, max_alloc = 0;
  size_t max_wg = 0;
  std::string pci_bus_id;  // "0000:01:00.0" when the driver tells
};

// A device's context and built program. Immutable after creation.
struct ClDeviceContext {
  const ClApi* api = nullptr;
  ClDeviceInfo info;
  cl_context context = nullptr;
  cl_program program = nullptr;
  gpu::DeviceParams params;
  std::string build_options;
  bool program_from_cache = false;
  double build_ms = 0;
  ~ClDeviceContext();
};

class ClRuntime {
 public:
  ClRuntime();
  // Loads libOpenCL on first use: $DLRT_OPENCL_LIB (a file or a folder; when
  // set it must be what loads), then libOpenCL.so.1 / libOpenCL.so on the
  // loader path and well-known folders. Needs at least one platform.
  backend::Availability availability(bool refresh = false);
  // The devices found at load time (empty when unavailable).
  std::vector<ClDeviceInfo> devices();
  // The symbol table; valid once availability() said available.
  const ClApi& api() const { return api_; }
  // The context and program of device `index`, built (or read from the
  // program cache) on first use and kept for the life of the process.
  Result<std::shared_ptr<ClDeviceContext>> context(int index);

 private:
  Result<std::string> on_load(const backend::DynamicLibrary& lib);
  Result<std::shared_ptr<ClDeviceContext>> make_context(const ClDeviceInfo& info);

  ClApi api_;  // written once by on_load under the library's lock
  backend::LazyLibrary library_;
  std::mutex mu_;
  std::vector<ClDeviceInfo> devices_;
  std::vector<std::shared_ptr<ClDeviceContext>> contexts_;
  std::string compatibility_;  // Availability::compatibility, set by on_load (guarded by mu_)
};

// "CL_OUT_OF_RESOURCES (-5)" style message for an OpenCL error code.
std::string cl_error(cl_int code);

}  // namespace dlrt::opencl
