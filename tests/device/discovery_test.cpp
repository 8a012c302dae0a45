// Hardware discovery against a fake /sys + /proc tree built in a temp dir
// (GPU and NPU found on machines that have neither), against garbage, and
// against the real CPU.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "device/cpu_features.h"
#include "device/device_internal.h"
#include "dlrt/device.h"
#include "fake_sysfs.h"

namespace dlrt {
namespace {

namespace fs = std::filesystem;
using testing::build_machine;
using testing::FakeTree;

const Device* find(const std::vector<Device>& devs, const std::string& id) {
  for (const auto& d : devs)
    if (d.id == id) return &d;
  return nullptr;
}

TEST(DeviceDiscovery, FindsGpuNpuAndNvidiaInFakeSysfs) {
  FakeTree t;
  ASSERT_FALSE(t.root().empty());
  build_machine(t);
  std::vector<Device> devs = discover_devices({t.root()});

  ASSERT_EQ(devs.size(), 4u) << "cpu, Intel GPU, Intel NPU, NVIDIA GPU; nothing twice, no BMC VGA or bridge";
  EXPECT_EQ(devs[0].id, "cpu:0");
  EXPECT_EQ(devs[1].id, "gpu:0");
  EXPECT_EQ(devs[2].id, "npu:0");
  EXPECT_EQ(devs[3].id, "gpu:1");

  const Device* gpu = find(devs, "gpu:0");
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->type, DeviceType::kGpu);
  EXPECT_EQ(gpu->vendor, "Intel");
  EXPECT_EQ(gpu->name, "Intel Arc A770");
  EXPECT_EQ(gpu->vendor_id, 0x8086u);
  EXPECT_EQ(gpu->device_id, 0x56a0u);
  EXPECT_EQ(gpu->meta("discovered_by"), "sysfs");
  EXPECT_EQ(gpu->meta("driver"), "i915");
  EXPECT_EQ(gpu->meta("pci_bus_id"), "0000:03:00.0");
  EXPECT_EQ(gpu->meta("memory_bytes"), "17163091968");
  EXPECT_EQ(gpu->meta("numa_node"), "0");
  EXPECT_EQ(gpu->metadata.count("driver_version"), 0u) << "i915 has no module version file";
  EXPECT_FALSE(gpu->is_virtual());

  const Device* npu = find(devs, "npu:0");
  ASSERT_NE(npu, nullptr);
  EXPECT_EQ(npu->type, DeviceType::kNpu);
  EXPECT_EQ(npu->vendor, "Intel");
  EXPECT_EQ(npu->name, "Intel Meteor Lake NPU");
  EXPECT_EQ(npu->vendor_id, 0x8086u);
  EXPECT_EQ(npu->device_id, 0x7d1du);
  EXPECT_EQ(npu->meta("driver"), "intel_vpu");
  EXPECT_EQ(npu->meta("pci_bus_id"), "0000:00:0b.0") << "from the resolved device link, uevent has no slot";
  EXPECT_EQ(npu->meta("driver_version"), "1.0.0");
  EXPECT_EQ(npu->metadata.count("numa_node"), 0u) << "numa_node -1 means none";

  const Device* nv = find(devs, "gpu:1");
  ASSERT_NE(nv, nullptr);
  EXPECT_EQ(nv->type, DeviceType::kGpu);
  EXPECT_EQ(nv->vendor, "NVIDIA");
  EXPECT_EQ(nv->name, "NVIDIA H100 SXM5 80GB");
  EXPECT_EQ(nv->vendor_id, 0x10deu);
  EXPECT_EQ(nv->device_id, 0x2330u);
  EXPECT_EQ(nv->meta("driver"), "nvidia");
  EXPECT_EQ(nv->meta("pci_bus_id"), "0000:17:00.0");
  EXPECT_EQ(nv->meta("driver_version"), "550.54.14");
  EXPECT_EQ(nv->metadata.count("memory_bytes"), 0u);
}

TEST(DeviceDiscovery, GenericNamesAmdNpuThroughPciAndDriverMemoryLayouts) {
  FakeTree t;
  t.add_pci("0000:c3:00.0", "0x8086", "0x1234", "0x038000", "xe");
  t.add_pci("0000:c4:00.1", "0x1022", "0x1502", "0x118000", "amdxdna");  // signal-processing class
  t.add_pci("0000:c5:00.0", "0x1eef", "0x0042", "0x120000", "");         // unknown vendor, accelerator class
  t.add_pci("0000:c6:00.0", "0x1002", "0x73bf", "0x030000", "amdgpu");
  t.write("sys/devices/pci0000:00/0000:c6:00.0/mem_info_vram_total", "17163091968\n");
  t.add_class_node("drm", "card1", "0000:c6:00.0");
  t.add_pci("0000:c7:00.0", "0x1022", "0x14e8", "0x118000", "");  // other AMD signal processing: not an NPU
  t.add_pci("0000:c8:00.0", "0x8086", "0xe20b", "0x030000", "xe");  // two tiles of VRAM
  t.write("sys/devices/pci0000:00/0000:c8:00.0/tile0/physical_vram_size_bytes", "8000000000\n");
  t.write("sys/devices/pci0000:00/0000:c8:00.0/tile1/physical_vram_size_bytes", "4000000000\n");
  t.add_pci("0000:c9:00.0", "0x8086", "0x56a1", "0x030000", "i915");  // lmem on the drm card
  t.add_class_node("drm", "card2", "0000:c9:00.0");
  t.write("sys/class/drm/card2/lmem_total_bytes", "8589934592\n");

  std::vector<Device> devs = discover_devices({t.root()});
  ASSERT_EQ(devs.size(), 7u);
  // drm first, then PCI in address order.
  EXPECT_EQ(devs[1].id, "gpu:0");
  EXPECT_EQ(devs[1].name, "AMD GPU 0x73bf");
  EXPECT_EQ(devs[1].meta("memory_bytes"), "17163091968");
  EXPECT_EQ(devs[2].id, "gpu:1");
  EXPECT_EQ(devs[2].name, "Intel Arc A750");
  EXPECT_EQ(devs[2].meta("memory_bytes"), "8589934592");
  EXPECT_EQ(devs[3].id, "gpu:2");
  EXPECT_EQ(devs[3].name, "Intel GPU 0x1234");
  EXPECT_EQ(devs[3].meta("driver"), "xe");
  EXPECT_EQ(devs[3].metadata.count("memory_bytes"), 0u);
  EXPECT_EQ(devs[4].id, "npu:0");
  EXPECT_EQ(devs[4].vendor, "AMD");
  EXPECT_EQ(devs[4].name, "AMD NPU (Phoenix)");
  EXPECT_EQ(devs[5].id, "accelerator:0");
  EXPECT_EQ(devs[5].type, DeviceType::kAccelerator);
  EXPECT_EQ(devs[5].vendor, "PCI vendor 0x1eef");
  EXPECT_EQ(devs[5].name, "PCI vendor 0x1eef accelerator 0x0042");
  EXPECT_EQ(devs[6].id, "gpu:3");
  EXPECT_EQ(devs[6].name, "Intel Arc B580");
  EXPECT_EQ(devs[6].meta("memory_bytes"), "12000000000");
}

TEST(DeviceDiscovery, PlatformGpuAndNpuWithoutPciIds) {
  FakeTree t;
  t.write("sys/devices/platform/fb000000.gpu/uevent", "DRIVER=panfrost\nOF_NAME=gpu\n");
  t.link("sys/class/drm/card0/device", "../../../devices/platform/fb000000.gpu");
  t.write("sys/devices/platform/simple-framebuffer.0/uevent", "DRIVER=simple-framebuffer\n");
  t.link("sys/class/drm/card1/device", "../../../devices/platform/simple-framebuffer.0");
  t.write("sys/devices/platform/fdab0000.npu/uevent", "DRIVER=rocket\n");
  t.link("sys/class/accel/accel0/device", "../../../devices/platform/fdab0000.npu");

  std::vector<Device> devs = discover_devices({t.root()});
  ASSERT_EQ(devs.size(), 3u) << "the simple framebuffer is not a GPU";
  EXPECT_EQ(devs[1].id, "gpu:0");
  EXPECT_EQ(devs[1].vendor, "Arm");
  EXPECT_EQ(devs[1].name, "Arm GPU (panfrost)");
  EXPECT_EQ(devs[1].vendor_id, 0u);
  EXPECT_EQ(devs[1].metadata.count("pci_bus_id"), 0u);
  EXPECT_EQ(devs[2].id, "npu:0");
  EXPECT_EQ(devs[2].meta("driver"), "rocket");
}

TEST(DeviceDiscovery, CpuTopologyAndMemoryFromProc) {
  FakeTree t;
  std::string cpuinfo;
  for (int p = 0; p < 8; ++p) {
    cpuinfo += "processor\t: " + std::to_string(p) + "\nvendor_id\t: GenuineIntel\nmodel name\t: Fake CPU\n";
    cpuinfo += "physical id\t: " + std::to_string(p / 4) + "\ncore id\t\t: " + std::to_string(p % 2) + "\n\n";
  }
  t.write("proc/cpuinfo", cpuinfo);  // 2 packages x 2 cores x 2 threads
  t.write("proc/meminfo", "MemTotal:       16318200 kB\nMemFree:         1000 kB\n");
  Device cpu = discover_devices({t.root()}).at(0);
  EXPECT_EQ(cpu.id, "cpu:0");
  EXPECT_EQ(cpu.type, DeviceType::kCpu);
  EXPECT_EQ(cpu.meta("threads"), "8");
  EXPECT_EQ(cpu.meta("cores"), "4");
  EXPECT_EQ(cpu.meta("memory_bytes"), std::to_string(16318200ull * 1024));
  EXPECT_FALSE(cpu.name.empty());
}

TEST(DeviceDiscovery, CpuTopologyFromSysWhenCpuinfoHasNone) {
  FakeTree t;
  t.write("proc/cpuinfo", "processor\t: 0\nFeatures\t: fp asimd\n\nprocessor\t: 1\n\nprocessor\t: 2\n\nprocessor\t: 3\n");
  for (int c = 0; c < 4; ++c) {
    std::string dir = "sys/devices/system/cpu/cpu" + std::to_string(c) + "/topology/";
    t.write(dir + "core_id", std::to_string(c / 2) + "\n");
    t.write(dir + "physical_package_id", "0\n");
  }
  t.mkdir("sys/devices/system/cpu/cpufreq");
  Device cpu = discover_devices({t.root()}).at(0);
  EXPECT_EQ(cpu.meta("threads"), "4");
  EXPECT_EQ(cpu.meta("cores"), "2");

  FakeTree only_sys;
  only_sys.write("sys/devices/system/cpu/online", "0-3,6,8-9\n");
  EXPECT_EQ(discover_devices({only_sys.root()}).at(0).meta("threads"), "7");
}

// The running machine's CPU: on aarch64 Linux its features come from HWCAP (every ARMv8-A
// CPU has Advanced SIMD), elsewhere from cpuid or cpuinfo; a fake tree keeps cpuinfo's.
TEST(DeviceDiscovery, CpuIsaOfTheRunningMachine) {
  const Device cpu = discover_devices().at(0);
#if defined(__aarch64__) && defined(__linux__)
  EXPECT_EQ(cpu.meta("discovered_by"), "hwcap");
  const std::string isa = " " + cpu.meta("isa") + " ";
  EXPECT_NE(isa.find(" neon "), std::string::npos) << isa;
  if (isa.find(" sve ") != std::string::npos) {
    EXPECT_FALSE(cpu.meta("sve_vector_bits").empty());
  }
#elif defined(__x86_64__)
  EXPECT_EQ(cpu.meta("discovered_by"), "cpuid");
#endif
  FakeTree t;
  t.write("proc/cpuinfo", "processor\t: 0\nFeatures\t: fp asimd asimddp i8mm\n");
#if !(defined(__x86_64__) || defined(__i386__))
  EXPECT_EQ(discover_devices({t.root()}).at(0).meta("isa"), "neon dotprod i8mm");
#endif
}

TEST(DeviceDiscovery, GarbageNeverCrashes) {
  FakeTree t;
  // card0: device link points at itself (ELOOP).
  t.link("sys/class/drm/card0/device", "device");
  // card1: device is a plain file.
  t.write("sys/class/drm/card1/device", "not a directory");
  // card2: unparsable ids, binary uevent without newlines, hostile driver name.
  std::string noise(100000, '\0');
  for (size_t i = 0; i < noise.size(); ++i) noise[i] = static_cast<char>((i * 131 + 7) & 0xff);
  t.write("sys/devices/pci0000:00/0000:05:00.0/vendor", "zzz");
  t.write("sys/devices/pci0000:00/0000:05:00.0/device", "");
  t.write("sys/devices/pci0000:00/0000:05:00.0/class", noise);
  t.write("sys/devices/pci0000:00/0000:05:00.0/uevent", noise + "DRIVER=../../../etc/passwd\nPCI_SLOT_NAME=garbage");
  t.write("sys/devices/pci0000:00/0000:05:00.0/numa_node", "-1\n");
  t.link("sys/class/drm/card2/device", "../../../devices/pci0000:00/0000:05:00.0");
  // card3: vendor is a FIFO (must not block), device is a directory.
  t.mkdir("sys/devices/pci0000:00/0000:06:00.0/device");
  ASSERT_EQ(::mkfifo(t.path("sys/devices/pci0000:00/0000:06:00.0/vendor").c_str(), 0600), 0);
  t.link("sys/class/drm/card3/device", "../../../devices/pci0000:00/0000:06:00.0");
  // card4: ids overflow; version file huge and binary.
  t.write("sys/devices/pci0000:00/0000:07:00.0/vendor", "0x8086");
  t.write("sys/devices/pci0000:00/0000:07:00.0/device", "0xffffffffffffffffffffffff");
  t.write("sys/devices/pci0000:00/0000:07:00.0/uevent", "DRIVER=i915\n");
  t.write("sys/module/i915/version", noise);
  t.link("sys/class/drm/card4/device", "../../../devices/pci0000:00/0000:07:00.0");
  // accel0: NUL inside the vendor; accel1: no device at all; accel2: dangling link.
  t.write("sys/devices/pci0000:00/0000:08:00.0/vendor", std::string("0x10de\0junk", 11));
  t.link("sys/class/accel/accel0/device", "../../../devices/pci0000:00/0000:08:00.0");
  t.mkdir("sys/class/accel/accel1");
  t.link("sys/class/accel/accel2/device", "../../../nowhere");
  t.mkdir("sys/class/accel/accel99999999999999999999");
  // PCI list: odd names, a dangling link, a file.
  t.mkdir("sys/bus/pci/devices/notanaddress");
  t.link("sys/bus/pci/devices/0000:zz:00.0", "nowhere");
  t.link("sys/bus/pci/devices/0000:09:00.0", "nowhere");
  t.write("sys/bus/pci/devices/0000:0a:00.0", "file");
  // A valid GPU whose version is garbage: found, without driver_version.
  t.add_pci("0000:0b:00.0", "0x8086", "0x56a5", "0x030000", "i915");
  // /proc garbage.
  t.write("proc/cpuinfo", noise);
  t.write("proc/meminfo", "MemTotal: lots\n");
  t.write("sys/devices/system/cpu/online", "3-1,x");

  std::vector<Device> devs = discover_devices({t.root()});
  ASSERT_GE(devs.size(), 1u);
  EXPECT_EQ(devs[0].id, "cpu:0");
  EXPECT_EQ(devs[0].metadata.count("memory_bytes"), 0u);
  for (const Device& d : devs) {
    EXPECT_FALSE(d.id.empty());
    EXPECT_FALSE(d.name.empty());
    EXPECT_EQ(d.meta("driver").find('/'), std::string::npos);
  }
  const Device* arc = nullptr;
  for (const Device& d : devs)
    if (d.device_id == 0x56a5) arc = &d;
  ASSERT_NE(arc, nullptr);
  EXPECT_EQ(arc->name, "Intel Arc A380");
  EXPECT_EQ(arc->metadata.count("driver_version"), 0u);

  // A root that does not exist: just the CPU.
  std::vector<Device> none = discover_devices({t.root() + "/does/not/exist"});
  ASSERT_EQ(none.size(), 1u);
  EXPECT_EQ(none[0].id, "cpu:0");
  EXPECT_FALSE(none[0].meta("threads").empty()) << "falls back to what the process sees";
}

TEST(DeviceDiscovery, ParsingHelpers) {
  EXPECT_EQ(device::parse_uint("0x8086\n"), 0x8086u);
  EXPECT_EQ(device::parse_uint(" 42 "), 42u);
  EXPECT_EQ(device::parse_uint("-1"), std::nullopt);
  EXPECT_EQ(device::parse_uint("0x"), std::nullopt);
  EXPECT_EQ(device::parse_uint("12ab"), std::nullopt);
  EXPECT_EQ(device::parse_uint("99999999999999999999999"), std::nullopt);
  EXPECT_EQ(device::uevent_value("DRIVER=i915\nPCI_SLOT_NAME=0000:00:02.0\n", "PCI_SLOT_NAME"), "0000:00:02.0");
  EXPECT_EQ(device::uevent_value("DRIVERX=a\nDRIVER=b", "DRIVER"), "b");
  EXPECT_EQ(device::uevent_value("DRIVER", "DRIVER"), "");
  EXPECT_STREQ(device_type_name(DeviceType::kNpu), "npu");
  EXPECT_STREQ(device_type_name(DeviceType::kAccelerator), "accelerator");
}

[[maybe_unused]] bool has_isa(const Device& cpu, const std::string& flag) {  // x86 checks only
  std::istringstream in(cpu.meta("isa"));
  for (std::string w; in >> w;)
    if (w == flag) return true;
  return false;
}

TEST(DeviceDiscovery, RealCpuMatchesCompilerCpuSupports) {
  std::vector<Device> devs = discover_devices();
  ASSERT_FALSE(devs.empty());
  const Device& cpu = devs[0];
  EXPECT_EQ(cpu.id, "cpu:0");
  EXPECT_EQ(cpu.type, DeviceType::kCpu);
  EXPECT_FALSE(cpu.name.empty());
  EXPECT_FALSE(cpu.vendor.empty());
  ASSERT_FALSE(cpu.meta("threads").empty());
  EXPECT_GE(std::stoi(cpu.meta("threads")), 1);
  if (!cpu.meta("cores").empty()) {
    EXPECT_LE(std::stoi(cpu.meta("cores")), std::stoi(cpu.meta("threads")));
  }
  for (const auto& d : devs) EXPECT_FALSE(d.is_virtual());
#if defined(__x86_64__) || defined(__i386__)
  EXPECT_EQ(cpu.meta("discovered_by"), "cpuid");
  __builtin_cpu_init();
  const device::CpuFeatures& f = device::cpu_features();
  struct Check {
    const char* isa;
    bool compiler;
    bool ours;
  } checks[] = {
      {"sse4_2", __builtin_cpu_supports("sse4.2") != 0, f.sse4_2},
      {"avx", __builtin_cpu_supports("avx") != 0, f.avx},
      {"avx2", __builtin_cpu_supports("avx2") != 0, f.avx2},
      {"fma", __builtin_cpu_supports("fma") != 0, f.fma},
      {"f16c", __builtin_cpu_supports("f16c") != 0, f.f16c},
      {"avx512f", __builtin_cpu_supports("avx512f") != 0, f.avx512f},
      {"avx512bw", __builtin_cpu_supports("avx512bw") != 0, f.avx512bw},
      {"avx512vl", __builtin_cpu_supports("avx512vl") != 0, f.avx512vl},
      {"avx512_vnni", __builtin_cpu_supports("avx512vnni") != 0, f.avx512_vnni},
      {"avx512_bf16", __builtin_cpu_supports("avx512bf16") != 0, f.avx512_bf16},
      {"avx512_fp16", __builtin_cpu_supports("avx512fp16") != 0, f.avx512_fp16},
      {"amx_tile", __builtin_cpu_supports("amx-tile") != 0, f.amx_tile},
      {"amx_bf16", __builtin_cpu_supports("amx-bf16") != 0, f.amx_bf16},
      {"amx_int8", __builtin_cpu_supports("amx-int8") != 0, f.amx_int8},
      {"avx_vnni", __builtin_cpu_supports("avxvnni") != 0, f.avx_vnni},
      {"avx512_vbmi", __builtin_cpu_supports("avx512vbmi") != 0, f.avx512_vbmi},
  };
  for (const Check& c : checks) {
    EXPECT_EQ(has_isa(cpu, c.isa), c.compiler) << c.isa << " in isa=\"" << cpu.meta("isa") << "\"";
    EXPECT_EQ(c.ours, c.compiler) << c.isa << " in cpu_features()";
  }
  if (!f.amx_tile) {
    EXPECT_FALSE(device::request_amx_permission());
  }
#endif
}

// DLRT_CPU_FEATURES_OFF's parsing: named extensions go off, others stay,
// unknown names and vector-width flags are reported while the rest still apply.
TEST(CpuFeaturesOff, TurnsOffTheNamedFlagsAndNamesUnknownOnes) {
  device::CpuFeatures f;
  f.avx2 = f.fma = f.avx512f = f.avx512_vnni = f.avx_vnni = f.amx_int8 = f.amx_tile = true;
  EXPECT_EQ(device::turn_features_off("avx512_vnni,avx_vnni amx_int8,", &f), "");
  EXPECT_FALSE(f.avx512_vnni);
  EXPECT_FALSE(f.avx_vnni);
  EXPECT_FALSE(f.amx_int8);
  EXPECT_TRUE(f.avx2 && f.fma && f.avx512f && f.amx_tile);
  const std::string err = device::turn_features_off("amx_tile,vnni,avx3", &f);
  EXPECT_NE(err.find("vnni, avx3"), std::string::npos) << err;
  EXPECT_FALSE(f.amx_tile);
  EXPECT_EQ(device::turn_features_off("", &f), "");
  const std::string width = device::turn_features_off("avx2,avx512f", &f);  // DLRT_CPU_ISA's job
  EXPECT_NE(width.find("DLRT_CPU_ISA"), std::string::npos) << width;
  EXPECT_TRUE(f.avx2 && f.avx512f);
  // aarch64's 8-bit extensions (the int8 GEMM's kernels follow them).
  f.dotprod = f.i8mm = true;
  EXPECT_EQ(device::turn_features_off("i8mm", &f), "");
  EXPECT_FALSE(f.i8mm);
  EXPECT_TRUE(f.dotprod);
}

}  // namespace
}  // namespace dlrt
