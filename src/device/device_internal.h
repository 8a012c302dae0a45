// Pieces of hardware discovery shared by the files of src/device/. Every
// reader here takes the filesystem root from DiscoveryOptions and never fails:
// a missing, empty, unreadable or garbled file reads as "nothing".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dlrt/device.h"

namespace dlrt::device {

// ---- Reading /proc and /sys (sysfs.cpp) ----

// `root` + `path` ("" or "/" root = the real filesystem). `path` starts with '/'.
std::string under_root(const std::string& root, const std::string& path);

// The contents of a regular file, at most `max_bytes` (FIFOs, devices and
// directories read as ""); never blocks.
std::string read_file(const std::string& path, size_t max_bytes = 64 * 1024);
// read_file() with surrounding whitespace (and NULs) removed.
std::string read_trimmed(const std::string& path);
// An unsigned number written in decimal or as 0x-hex ("0x8086\n", "17163091968").
std::optional<uint64_t> parse_uint(const std::string& text);
std::optional<uint64_t> read_uint(const std::string& path);
// How many CPUs a list like "0-3,5,7-8" names (7); 0 when malformed.
int count_cpu_list(const std::string& list);
// The last path component a symlink points at ("../../bus/pci/drivers/i915" -> "i915"); "" if not a link.
std::string link_target_name(const std::string& path);
// The names in a directory (no "." or ".."), sorted; empty when it cannot be read.
std::vector<std::string> list_dir(const std::string& path);
// Value of KEY in a "KEY=VALUE" per line file such as uevent.
std::string uevent_value(const std::string& uevent_text, const std::string& key);

// ---- PCI ids (pci.cpp) ----

// "Intel", "AMD", "NVIDIA", ...; "" when the vendor id is not known.
std::string pci_vendor_name(uint32_t vendor_id);
// Vendors whose PCI display devices only drive a screen (server BMCs,
// emulated VGA); they are not offered as GPUs.
bool is_display_only_vendor(uint32_t vendor_id);
// A device dlrt knows by its PCI ids.
struct KnownDevice {
  uint32_t vendor_id;
  uint32_t device_id;
  DeviceType type;
  const char* name;  // "Intel Meteor Lake NPU"
};
// nullptr when the pair is not in the built-in table.
const KnownDevice* find_known_device(uint32_t vendor_id, uint32_t device_id);
// The known name, else "<Vendor> GPU 0x56a0" style.
std::string device_display_name(const std::string& vendor, uint32_t vendor_id, uint32_t device_id, DeviceType type);
// Vendor implied by the kernel driver of a non-PCI (platform) device: "panfrost" -> "Arm".
std::string platform_driver_vendor(const std::string& driver);
// Drivers of AI accelerators that are NPUs ("intel_vpu", "amdxdna", ...).
bool is_npu_driver(const std::string& driver);

// ---- Discovery per kind (cpu.cpp, sysfs.cpp) ----

// The CPU: cpuid on x86 (brand, ISA), /proc/cpuinfo and /sys for the rest.
// Leaves `id` empty; discover_devices() numbers devices.
Device discover_cpu(const std::string& root);

// GPUs, NPUs and other accelerators from /sys/class/drm, /sys/class/accel and
// /sys/bus/pci/devices, each physical device once, in that order. Ids empty.
std::vector<Device> discover_bus_devices(const std::string& root);

}  // namespace dlrt::device
