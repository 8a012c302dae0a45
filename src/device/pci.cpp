// PCI vendor names and a short table of well-known accelerators, so devices
// get readable names without pci.ids or any vendor runtime.
#include <cstdio>
#include <string>

#include "device/device_internal.h"

namespace dlrt::device {
namespace {

struct VendorName {
  uint32_t id;
  const char* name;
};

constexpr VendorName kVendors[] = {
    {0x8086, "Intel"},       {0x1002, "AMD"},         {0x1022, "AMD"},       {0x10de, "NVIDIA"},
    {0x17cb, "Qualcomm"},    {0x5143, "Qualcomm"},    {0x106b, "Apple"},     {0x13b5, "Arm"},
    {0x1da3, "Habana Labs"}, {0x1e52, "Tenstorrent"}, {0x144d, "Samsung"},   {0x1d17, "Zhaoxin"},
    {0x1a03, "ASPEED"},      {0x102b, "Matrox"},      {0x1013, "Cirrus Logic"}, {0x1234, "QEMU"},
    {0x1af4, "Red Hat"},     {0x15ad, "VMware"},      {0x1414, "Microsoft"}, {0x80ee, "VirtualBox"},
};

// Display controllers of server BMCs and virtual machines: they draw a
// console, they do not compute.
constexpr uint32_t kDisplayOnlyVendors[] = {0x1a03, 0x102b, 0x1013, 0x1234, 0x1af4, 0x15ad, 0x1414, 0x80ee};

constexpr KnownDevice kKnownDevices[] = {
    // Intel NPUs (drivers/accel/ivpu).
    {0x8086, 0x7d1d, DeviceType::kNpu, "Intel Meteor Lake NPU"},
    {0x8086, 0xad1d, DeviceType::kNpu, "Intel Arrow Lake NPU"},
    {0x8086, 0x643e, DeviceType::kNpu, "Intel Lunar Lake NPU"},
    {0x8086, 0xb03e, DeviceType::kNpu, "Intel Panther Lake NPU"},
    // AMD NPUs (drivers/accel/amdxdna).
    {0x1022, 0x1502, DeviceType::kNpu, "AMD NPU (Phoenix)"},
    {0x1022, 0x17f0, DeviceType::kNpu, "AMD NPU (Strix)"},
    // Data-centre AI accelerators.
    {0x1da3, 0x1000, DeviceType::kNpu, "Habana Gaudi"},
    {0x1da3, 0x1020, DeviceType::kNpu, "Habana Gaudi2"},
    {0x17cb, 0xa100, DeviceType::kNpu, "Qualcomm Cloud AI 100"},
    // Intel GPUs.
    {0x8086, 0x56a0, DeviceType::kGpu, "Intel Arc A770"},
    {0x8086, 0x56a1, DeviceType::kGpu, "Intel Arc A750"},
    {0x8086, 0x56a5, DeviceType::kGpu, "Intel Arc A380"},
    {0x8086, 0xe20b, DeviceType::kGpu, "Intel Arc B580"},
    {0x8086, 0xe20c, DeviceType::kGpu, "Intel Arc B570"},
    {0x8086, 0x7d55, DeviceType::kGpu, "Intel Meteor Lake Arc Graphics"},
    {0x8086, 0x64a0, DeviceType::kGpu, "Intel Lunar Lake Arc Graphics"},
    {0x8086, 0x9a49, DeviceType::kGpu, "Intel Tiger Lake Iris Xe Graphics"},
    {0x8086, 0x46a6, DeviceType::kGpu, "Intel Alder Lake Iris Xe Graphics"},
    {0x8086, 0xa780, DeviceType::kGpu, "Intel Raptor Lake UHD Graphics 770"},
    {0x8086, 0x0bd5, DeviceType::kGpu, "Intel Data Center GPU Max 1550"},
    // AMD GPUs.
    {0x1002, 0x744c, DeviceType::kGpu, "AMD Radeon RX 7900 XT/XTX"},
    {0x1002, 0x15bf, DeviceType::kGpu, "AMD Radeon 780M"},
    {0x1002, 0x150e, DeviceType::kGpu, "AMD Radeon 890M"},
    {0x1002, 0x740f, DeviceType::kGpu, "AMD Instinct MI210"},
    {0x1002, 0x74a1, DeviceType::kGpu, "AMD Instinct MI300X"},
    // NVIDIA GPUs.
    {0x10de, 0x2330, DeviceType::kGpu, "NVIDIA H100 SXM5 80GB"},
    {0x10de, 0x2331, DeviceType::kGpu, "NVIDIA H100 PCIe"},
    {0x10de, 0x2335, DeviceType::kGpu, "NVIDIA H200"},
    {0x10de, 0x20b0, DeviceType::kGpu, "NVIDIA A100 SXM4 40GB"},
    {0x10de, 0x20b2, DeviceType::kGpu, "NVIDIA A100 SXM4 80GB"},
    {0x10de, 0x20b5, DeviceType::kGpu, "NVIDIA A100 PCIe 80GB"},
    {0x10de, 0x26b9, DeviceType::kGpu, "NVIDIA L40S"},
    {0x10de, 0x27b8, DeviceType::kGpu, "NVIDIA L4"},
    {0x10de, 0x1eb8, DeviceType::kGpu, "NVIDIA T4"},
    {0x10de, 0x2684, DeviceType::kGpu, "NVIDIA GeForce RTX 4090"},
    {0x10de, 0x2204, DeviceType::kGpu, "NVIDIA GeForce RTX 3090"},
};

struct DriverVendor {
  const char* driver;
  const char* vendor;
};

// GPU and NPU drivers of SoCs whose devices are not on PCI.
constexpr DriverVendor kPlatformDrivers[] = {
    {"panfrost", "Arm"}, {"panthor", "Arm"},       {"lima", "Arm"},          {"ethosu", "Arm"},
    {"msm", "Qualcomm"}, {"v3d", "Broadcom"},      {"etnaviv", "Vivante"},   {"asahi", "Apple"},
    {"powervr", "Imagination"}, {"rocket", "Rockchip"},
};

constexpr const char* kNpuDrivers[] = {"intel_vpu", "amdxdna", "habanalabs", "qaic", "ethosu", "rocket"};

}  // namespace

std::string pci_vendor_name(uint32_t vendor_id) {
  for (const auto& v : kVendors)
    if (v.id == vendor_id) return v.name;
  return "";
}

bool is_display_only_vendor(uint32_t vendor_id) {
  for (uint32_t v : kDisplayOnlyVendors)
    if (v == vendor_id) return true;
  return false;
}

const KnownDevice* find_known_device(uint32_t vendor_id, uint32_t device_id) {
  for (const auto& d : kKnownDevices)
    if (d.vendor_id == vendor_id && d.device_id == device_id) return &d;
  return nullptr;
}

std::string device_display_name(const std::string& vendor, uint32_t vendor_id, uint32_t device_id, DeviceType type) {
  if (const KnownDevice* k = find_known_device(vendor_id, device_id)) return k->name;
  const char* kind = type == DeviceType::kGpu ? "GPU" : type == DeviceType::kNpu ? "NPU" : "accelerator";
  char hex[16];
  std::snprintf(hex, sizeof(hex), "0x%04x", device_id);
  return vendor + " " + kind + " " + hex;
}

std::string platform_driver_vendor(const std::string& driver) {
  for (const auto& p : kPlatformDrivers)
    if (driver == p.driver) return p.vendor;
  return "";
}

bool is_npu_driver(const std::string& driver) {
  for (const char* d : kNpuDrivers)
    if (driver == d) return true;
  return false;
}

}  // namespace dlrt::device
