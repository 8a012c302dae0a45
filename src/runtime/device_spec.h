// Parsing of device specs: auto | cpu | gpu | npu | BACKEND | BACKEND:DEVICE,
// comma-separated as a priority list.
#pragma once

#include <string>
#include <vector>

#include "dlrt/status.h"

namespace dlrt {

struct DeviceChoice {
  enum class Kind { kAuto, kCpu, kGpu, kNpu, kBackend };
  Kind kind = Kind::kAuto;
  std::string backend;  // for kBackend: "openvino", "opencl", "cuda", "cpu"
  std::string device;   // optional device after ':' ("NPU", "0")
  std::string text;     // as written
};

struct DeviceSpec {
  std::vector<DeviceChoice> choices;
};

// kInvalidArgument for an empty entry or an unknown name, listing the valid forms.
Result<DeviceSpec> parse_device_spec(const std::string& text);

// `s` in ASCII lower case: device and backend names compare case-insensitively.
std::string lower_ascii(std::string s);

}  // namespace dlrt
