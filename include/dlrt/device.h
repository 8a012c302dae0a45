// Hardware devices as dlrt sees them, discovered without any vendor runtime.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "dlrt/export.h"
#include "dlrt/status.h"

namespace dlrt {

enum class DeviceType { kCpu, kGpu, kNpu, kAccelerator };

DLRT_API const char* device_type_name(DeviceType t);  // "cpu", "gpu", "npu", "accelerator"

// One piece of hardware. Metadata keys (all values are strings):
//   discovered_by   who found it: "cpuid", "procfs" (CPU off x86), "sysfs", or a backend name ("openvino")
//   is_virtual      "1" for a device that exists only to compile for (never runs)
//   pci_bus_id      "0000:00:02.0"
//   driver          kernel driver ("i915", "xe", "intel_vpu", "amdgpu", "nvidia")
//   driver_version  as the driver reports it, where it does
//   memory_bytes    device-local memory, where known (host RAM for the CPU)
//   numa_node       NUMA node of a PCI device, where the platform has one
//   cores, threads, isa (cpu)  e.g. isa = "sse4_2 avx avx2 fma avx512f avx512_bf16 amx_tile"
struct Device {
  std::string id;  // stable within a process: "cpu:0", "gpu:0", "npu:0", "accelerator:0"
  DeviceType type = DeviceType::kCpu;
  std::string vendor;  // "Intel", "AMD", "NVIDIA", ...
  std::string name;
  uint32_t vendor_id = 0;  // PCI ids where there are any
  uint32_t device_id = 0;
  std::map<std::string, std::string> metadata;

  std::string meta(const std::string& key, const std::string& def = "") const {
    auto it = metadata.find(key);
    return it == metadata.end() ? def : it->second;
  }
  bool is_virtual() const { return meta("is_virtual") == "1"; }
};

struct DiscoveryOptions {
  // Root of the filesystem to read /proc and /sys from ("" = "/"). Tests
  // point it at a fake tree.
  std::string root;
};

// CPU from cpuid and /proc/cpuinfo, GPUs and NPUs from /sys/class/drm,
// /sys/class/accel and PCI ids. Never fails: what cannot be read is left out.
// Order: the CPU, then drm cards, accel nodes, other PCI display/accelerator
// functions (each physical device once); ids count per type in that order.
// Thread-safe; reads the filesystem on every call.
DLRT_API std::vector<Device> discover_devices(const DiscoveryOptions& options = {});

}  // namespace dlrt
