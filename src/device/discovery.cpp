// discover_devices(): the CPU first, then GPUs, NPUs and other accelerators
// as sysfs lists them, numbered per type in discovery order.
#include <map>

#include "device/device_internal.h"

namespace dlrt {

const char* device_type_name(DeviceType t) {
  switch (t) {
    case DeviceType::kCpu: return "cpu";
    case DeviceType::kGpu: return "gpu";
    case DeviceType::kNpu: return "npu";
    case DeviceType::kAccelerator: return "accelerator";
  }
  return "unknown";
}

std::vector<Device> discover_devices(const DiscoveryOptions& options) {
  std::vector<Device> devices;
  devices.push_back(device::discover_cpu(options.root));
  for (Device& d : device::discover_bus_devices(options.root)) devices.push_back(std::move(d));
  std::map<DeviceType, int> next;
  for (Device& d : devices) d.id = std::string(device_type_name(d.type)) + ":" + std::to_string(next[d.type]++);
  return devices;
}

}  // namespace dlrt
