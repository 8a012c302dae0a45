// A fake /sys + /proc tree in a temp dir for discovery tests
// (DiscoveryOptions::root and `dlrt devices --root`), laid out as Linux does.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace dlrt::testing {

namespace fs = std::filesystem;

class FakeTree {
 public:
  FakeTree() {
    std::string tmpl = (fs::temp_directory_path() / "dlrt-sysfs-XXXXXX").string();
    char* made = ::mkdtemp(tmpl.data());
    root_ = made ? made : "";
  }
  ~FakeTree() {
    std::error_code ec;
    if (!root_.empty()) fs::remove_all(root_, ec);
  }
  FakeTree(const FakeTree&) = delete;
  FakeTree& operator=(const FakeTree&) = delete;

  const std::string& root() const { return root_; }
  fs::path path(const std::string& rel) const { return fs::path(root_) / rel; }

  void write(const std::string& rel, const std::string& content) {
    fs::create_directories(path(rel).parent_path());
    std::ofstream(path(rel), std::ios::binary) << content;
  }
  void mkdir(const std::string& rel) { fs::create_directories(path(rel)); }
  // A symlink at `rel` whose target is written exactly as given (relative, like sysfs).
  void link(const std::string& rel, const std::string& target) {
    fs::create_directories(path(rel).parent_path());
    fs::create_symlink(target, path(rel));
  }

  // A PCI function the way Linux lays it out: the device under
  // /sys/devices/pci0000:00/ADDR, a /sys/bus/pci/devices/ADDR link to it, and
  // its driver link to /sys/bus/pci/drivers/DRIVER (whose module link names
  // /sys/module/DRIVER).
  void add_pci(const std::string& addr, const std::string& vendor, const std::string& device, const std::string& cls,
               const std::string& driver, bool slot_in_uevent = true) {
    const std::string dir = "sys/devices/pci0000:00/" + addr;
    write(dir + "/vendor", vendor + "\n");
    write(dir + "/device", device + "\n");
    write(dir + "/class", cls + "\n");
    write(dir + "/numa_node", "-1\n");
    std::string uevent = driver.empty() ? "" : "DRIVER=" + driver + "\n";
    uevent += "PCI_CLASS=" + cls.substr(2) + "\nPCI_ID=" + vendor.substr(2) + ":" + device.substr(2) + "\n";
    if (slot_in_uevent) uevent += "PCI_SLOT_NAME=" + addr + "\n";
    write(dir + "/uevent", uevent);
    if (!driver.empty()) {
      mkdir("sys/module/" + driver);
      if (!fs::exists(path("sys/bus/pci/drivers/" + driver)))
        link("sys/bus/pci/drivers/" + driver + "/module", "../../../../module/" + driver);
      link(dir + "/driver", "../../../bus/pci/drivers/" + driver);
    }
    link("sys/bus/pci/devices/" + addr, "../../../devices/pci0000:00/" + addr);
  }
  // /sys/class/CLASS/NODE/device -> the PCI function at ADDR.
  void add_class_node(const std::string& cls, const std::string& node, const std::string& addr) {
    link("sys/class/" + cls + "/" + node + "/device", "../../../devices/pci0000:00/" + addr);
  }

 private:
  std::string root_;
};

// A laptop-ish machine: an Intel Arc GPU on i915 (drm card0 plus connectors),
// a Meteor Lake NPU on intel_vpu (accel0), an NVIDIA H100 that only PCI lists
// (no nvidia-drm), a BMC's VGA and a host bridge.
inline void build_machine(FakeTree& t) {
  t.add_pci("0000:03:00.0", "0x8086", "0x56a0", "0x030000", "i915");
  t.write("sys/devices/pci0000:00/0000:03:00.0/lmem_total_bytes", "17163091968\n");
  t.write("sys/devices/pci0000:00/0000:03:00.0/numa_node", "0\n");
  t.add_class_node("drm", "card0", "0000:03:00.0");
  t.mkdir("sys/class/drm/card0-DP-1");
  t.add_class_node("drm", "renderD128", "0000:03:00.0");
  t.write("sys/class/drm/version", "drm 1.1.0 20060810\n");

  t.add_pci("0000:00:0b.0", "0x8086", "0x7d1d", "0x120000", "intel_vpu", /*slot_in_uevent=*/false);
  t.add_class_node("accel", "accel0", "0000:00:0b.0");
  t.write("sys/module/intel_vpu/version", "1.0.0\n");

  t.add_pci("0000:17:00.0", "0x10de", "0x2330", "0x030200", "nvidia");
  t.write("sys/module/nvidia/version", "550.54.14\n");

  t.add_pci("0000:02:00.0", "0x1a03", "0x2000", "0x030000", "ast");  // ASPEED BMC VGA
  t.add_pci("0000:00:00.0", "0x8086", "0x7d01", "0x060000", "");     // host bridge
}

}  // namespace dlrt::testing
