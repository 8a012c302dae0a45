// The backends compiled into dlrt (cpu, cuda, opencl, openvino) and those
// named in DLRT_PLUGINS: whether each can be used here and, when not, why and
// how to fix it; and the devices each one drives. What `dlrt devices` prints.
//
// Thread-safety: every function may be called from any thread.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dlrt/device.h"
#include "dlrt/export.h"
#include "dlrt/status.h"
#include "dlrt/tensor.h"

namespace dlrt {

// A device as one backend drives it.
struct BackendDeviceInfo {
  std::string spec;     // "openvino:NPU": usable as SessionOptions::device
  std::string backend;  // "openvino"
  std::string name;     // the backend's own name for it: "NPU", "GPU.0", "0", "cpu"
  DeviceType type = DeviceType::kCpu;
  bool is_virtual = false;        // compiles (dlrt compile), never runs
  std::optional<Device> hardware;  // the discovered device it drives, where matched
  std::map<std::string, std::string> metadata;  // the keys of Device::metadata
};

struct BackendInfo {
  std::string name;  // "cpu", "cuda", "opencl", "openvino", or a plugin's
  bool available = false;
  std::string reason;        // unavailable: what is missing ("libopenvino_c.so... not found", "no CUDA device")
  std::string fix;           // unavailable: what to do about it
  std::string library_path;  // the vendor library loaded ("" for built-in code)
  std::string version;       // the vendor runtime's version, where known
  // How far the vendor release is trusted: "tested release", or the verdict
  // of the compatibility check of an untested one (`dlrt canary`).
  std::string compatibility;
  std::vector<std::string> tried;          // where the vendor library was looked for, and the outcome
  std::vector<BackendDeviceInfo> devices;  // empty when unavailable
};

struct BackendsOptions {
  // Retry the backends whose vendor runtime failed to load earlier (the
  // answer is otherwise kept for the process).
  bool refresh = false;
  // Only the backend of this name ("": all). Asking leaves the other
  // backends' vendor runtimes unloaded.
  std::string only;
  // The hardware to pair the backends with; unset: discover_devices().
  std::optional<std::vector<Device>> hardware;
};

// Every registered backend in registration order (cpu first), asking each
// whether it is available (which loads its vendor runtime the first time).
// A name `only` does not know gives an empty list.
DLRT_API std::vector<BackendInfo> backends(const BackendsOptions& options = {});

// The model of the compatibility check of a vendor release dlrt was not
// tested with (`dlrt canary BACKEND` runs it on the backend and on the CPU and
// compares): a large constant weight, a dynamic batch run at two sizes, and
// inputs and outputs of every element type the backends map.
struct BackendCheckModel {
  std::string onnx;                                   // the serialized model
  std::vector<std::map<std::string, Tensor>> feeds;  // one input set per batch size
};
DLRT_API Result<BackendCheckModel> backend_check_model();

}  // namespace dlrt
