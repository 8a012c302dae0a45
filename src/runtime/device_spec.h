// Parsing of device specs: auto | cpu | gpu | npu | BACKEND | BACKEND:DEVICE,
// comma-separated as a priority list.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dlrt/status.h"

namespace dlrt {

struct DeviceChoice {
  enum class Kind { kAuto, kCpu, kGpu, kNpu, kBackend };
  Kind kind = Kind::kAuto;
  std::string backend;  // for kBackend: "openvino", "opencl", "cuda", "cpu"
  std::string device;   // optional device after ':' ("NPU", "0"; an index in canonical form)
  std::string text;     // as written
};

struct DeviceSpec {
  std::vector<DeviceChoice> choices;
};

// The largest device index a spec may name ("cuda:2147483647").
inline constexpr int64_t kMaxDeviceIndex = 2147483647;

// kInvalidArgument for an empty entry, an unknown name or a malformed device
// after ':' (an index that is not a non-negative integer up to
// kMaxDeviceIndex, an empty or malformed name), listing the valid forms.
Result<DeviceSpec> parse_device_spec(const std::string& text);

// `s` in ASCII lower case: device and backend names compare case-insensitively.
std::string lower_ascii(std::string s);

}  // namespace dlrt
