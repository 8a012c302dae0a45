// GPUs and NPUs from sysfs: /sys/class/drm/card*, /sys/class/accel/accel*
// and, for devices without a loaded DRM/accel driver, PCI display and
// processing-accelerator functions in /sys/bus/pci/devices. Only plain file
// reads: no ioctl, no vendor library.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "device/device_internal.h"

namespace dlrt::device {

// ---- Reading files ----

std::string under_root(const std::string& root, const std::string& path) {
  if (root.empty() || root == "/") return path;
  if (root.back() == '/') return root.substr(0, root.size() - 1) + path;
  return root + path;
}

std::string read_file(const std::string& path, size_t max_bytes) {
  // O_NONBLOCK: a FIFO planted in a fake tree must not hang discovery.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return "";
  std::string out;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    char buf[4096];
    while (out.size() < max_bytes) {
      size_t want = std::min(sizeof(buf), max_bytes - out.size());
      ssize_t n = ::read(fd, buf, want);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
  }
  ::close(fd);
  return out;
}

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\0' || c == '\v' || c == '\f'; }

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && is_space(s[b])) ++b;
  while (e > b && is_space(s[e - 1])) --e;
  return s.substr(b, e - b);
}

// Names that may safely become part of a path or a report: "i915", "intel_vpu".
bool is_plain_name(const std::string& s) {
  if (s.empty() || s.size() > 64 || s == "." || s == "..") return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.'))
      return false;
  return true;
}

// "0000:00:02.0"
bool is_pci_address(const std::string& s) {
  if (s.size() != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.') return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i == 4 || i == 7 || i == 10) continue;
    if (!std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

std::string hex4(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%04x", v);
  return buf;
}

}  // namespace

std::string read_trimmed(const std::string& path) { return trim(read_file(path)); }

std::optional<uint64_t> parse_uint(const std::string& text) {
  std::string t = trim(text);
  int base = 10;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
    base = 16;
    t = t.substr(2);
  }
  if (t.empty()) return std::nullopt;
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v, base);
  if (ec != std::errc() || ptr != t.data() + t.size()) return std::nullopt;
  return v;
}

std::optional<uint64_t> read_uint(const std::string& path) { return parse_uint(read_file(path, 256)); }

std::string link_target_name(const std::string& path) {
  char buf[PATH_MAX];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof(buf) - 1);
  if (n <= 0) return "";
  std::string target(buf, static_cast<size_t>(n));
  while (!target.empty() && target.back() == '/') target.pop_back();
  size_t slash = target.rfind('/');
  return slash == std::string::npos ? target : target.substr(slash + 1);
}

std::vector<std::string> list_dir(const std::string& path) {
  std::vector<std::string> names;
  DIR* d = ::opendir(path.c_str());
  if (!d) return names;
  while (struct dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(std::move(n));
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

std::string uevent_value(const std::string& uevent_text, const std::string& key) {
  size_t pos = 0;
  while (pos < uevent_text.size()) {
    size_t end = uevent_text.find('\n', pos);
    if (end == std::string::npos) end = uevent_text.size();
    if (end - pos > key.size() && uevent_text.compare(pos, key.size(), key) == 0 && uevent_text[pos + key.size()] == '=')
      return trim(uevent_text.substr(pos + key.size() + 1, end - pos - key.size() - 1));
    pos = end + 1;
  }
  return "";
}

// ---- Devices ----

namespace {

enum class Source { kDrm, kAccel, kPci };

// Entries "<prefix><number>" of a class directory, in numeric order
// ("card0", "card1", "card10"; not "card0-DP-1" connectors or "renderD128").
std::vector<std::string> numbered_entries(const std::string& dir, const std::string& prefix) {
  std::vector<std::pair<unsigned long, std::string>> found;
  for (const std::string& n : list_dir(dir)) {
    if (n.size() <= prefix.size() || n.size() > prefix.size() + 6 || n.compare(0, prefix.size(), prefix) != 0) continue;
    std::string digits = n.substr(prefix.size());
    if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
    found.emplace_back(std::stoul(digits), n);
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

// Device-local memory as the driver publishes it, 0 when it does not:
// amdgpu mem_info_vram_total, i915 lmem_total_bytes (on the PCI device or the
// drm card), xe per-tile physical_vram_size_bytes (summed).
uint64_t local_memory_bytes(const std::string& dev_dir, const std::string& node_dir) {
  for (const std::string& path : {dev_dir + "/mem_info_vram_total", dev_dir + "/lmem_total_bytes",
                                  node_dir.empty() ? std::string() : node_dir + "/lmem_total_bytes"}) {
    if (path.empty()) continue;
    if (auto bytes = read_uint(path); bytes && *bytes > 0 && *bytes < (1ull << 50)) return *bytes;
  }
  uint64_t total = 0;
  for (const std::string& tile : numbered_entries(dev_dir, "tile")) {
    auto bytes = read_uint(dev_dir + "/" + tile + "/physical_vram_size_bytes");
    if (!bytes) bytes = read_uint(dev_dir + "/" + tile + "/memory/physical_vram_size_bytes");
    if (bytes && *bytes < (1ull << 50)) total += *bytes;
  }
  return total;
}

// Reads one device directory (the "device" link of a drm/accel node
// `node_dir`, or a /sys/bus/pci/devices entry). Returns nothing for what is not a GPU/NPU.
std::optional<Device> probe(const std::string& root, const std::string& dev_dir, const std::string& node_dir, Source source,
                            std::string& key) {
  struct stat st {};
  if (::stat(dev_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return std::nullopt;

  const std::string uevent = read_file(dev_dir + "/uevent");
  std::string driver = link_target_name(dev_dir + "/driver");
  if (driver.empty()) driver = uevent_value(uevent, "DRIVER");
  if (!is_plain_name(driver)) driver.clear();

  // The PCI address: uevent, else the name the device directory resolves to.
  std::string bus_id = uevent_value(uevent, "PCI_SLOT_NAME");
  if (!is_pci_address(bus_id)) {
    bus_id.clear();
    char real[PATH_MAX];
    if (::realpath(dev_dir.c_str(), real)) {
      std::string r = real;
      std::string base = r.substr(r.rfind('/') + 1);
      if (is_pci_address(base)) bus_id = base;
      key = r;
    }
  }
  if (key.empty()) key = dev_dir;
  if (!bus_id.empty()) key = "pci:" + bus_id;

  std::optional<uint64_t> vendor_id = read_uint(dev_dir + "/vendor");
  std::optional<uint64_t> device_id = read_uint(dev_dir + "/device");
  std::optional<uint64_t> pci_class = read_uint(dev_dir + "/class");
  const bool is_pci = vendor_id && *vendor_id != 0 && *vendor_id < 0xffff && device_id && *device_id <= 0xffff;
  const uint32_t base_class = pci_class && *pci_class <= 0xffffff ? static_cast<uint32_t>(*pci_class >> 16) : 0xff;
  const uint32_t sub_class = pci_class && *pci_class <= 0xffffff ? static_cast<uint32_t>((*pci_class >> 8) & 0xff) : 0xff;

  Device d;
  d.metadata["discovered_by"] = "sysfs";
  if (!driver.empty()) d.metadata["driver"] = driver;
  if (!bus_id.empty()) d.metadata["pci_bus_id"] = bus_id;

  if (is_pci) {
    d.vendor_id = static_cast<uint32_t>(*vendor_id);
    d.device_id = static_cast<uint32_t>(*device_id);
    if (is_display_only_vendor(d.vendor_id)) return std::nullopt;
    const KnownDevice* known = find_known_device(d.vendor_id, d.device_id);
    if (known) d.type = known->type;
    else if (is_npu_driver(driver) || source == Source::kAccel) d.type = DeviceType::kNpu;
    else if (base_class == 0x03 || source == Source::kDrm) d.type = DeviceType::kGpu;
    else if (base_class == 0x12) d.type = DeviceType::kAccelerator;
    else return std::nullopt;  // some other PCI function (bridge, NIC, ...)
    // PCI fallback: only display controllers, processing accelerators and
    // signal-processing functions that are NPUs (AMD XDNA is class 0x1180).
    if (source == Source::kPci && !known && base_class != 0x03 && base_class != 0x12 &&
        !(base_class == 0x11 && sub_class == 0x80 && is_npu_driver(driver)))
      return std::nullopt;
    d.vendor = pci_vendor_name(d.vendor_id);
    if (d.vendor.empty()) d.vendor = "PCI vendor " + hex4(d.vendor_id);
    d.name = device_display_name(d.vendor, d.vendor_id, d.device_id, d.type);
  } else {
    // A platform (SoC) device: only drivers known to drive a GPU/NPU count;
    // simpledrm, vkms and the like do not.
    if (source == Source::kPci) return std::nullopt;
    d.vendor = platform_driver_vendor(driver);
    if (d.vendor.empty() && source == Source::kDrm) return std::nullopt;
    if (d.vendor.empty() && driver.empty()) return std::nullopt;
    if (d.vendor.empty()) d.vendor = driver;
    d.type = (source == Source::kAccel || is_npu_driver(driver)) ? DeviceType::kNpu : DeviceType::kGpu;
    d.name = d.vendor + (d.type == DeviceType::kNpu ? " NPU" : " GPU") + (driver.empty() ? "" : " (" + driver + ")");
  }

  if (auto numa = read_uint(dev_dir + "/numa_node"); numa && *numa < 4096)  // "-1" (no NUMA) is left out
    d.metadata["numa_node"] = std::to_string(*numa);
  if (uint64_t bytes = local_memory_bytes(dev_dir, node_dir)) d.metadata["memory_bytes"] = std::to_string(bytes);
  // The module may be named differently from the driver; the driver's
  // "module" link says which.
  std::string module = link_target_name(dev_dir + "/driver/module");
  if (!is_plain_name(module)) module = driver;
  if (!module.empty()) {
    std::string version = read_trimmed(under_root(root, "/sys/module/" + module + "/version"));
    if (!version.empty() && version.size() <= 64 && version.find('\n') == std::string::npos &&
        std::all_of(version.begin(), version.end(), [](char c) { return c >= 0x20 && c < 0x7f; }))
      d.metadata["driver_version"] = version;
  }
  return d;
}

}  // namespace

std::vector<Device> discover_bus_devices(const std::string& root) {
  std::vector<Device> out;
  std::set<std::string> seen;  // "pci:<bus id>" or a resolved path
  auto take = [&](const std::string& node_dir, const std::string& dev_dir, Source source) {
    std::string key;
    std::optional<Device> d = probe(root, dev_dir, node_dir, source, key);
    if (d && seen.insert(key).second) out.push_back(std::move(*d));
  };

  const std::string drm = under_root(root, "/sys/class/drm");
  for (const std::string& card : numbered_entries(drm, "card")) take(drm + "/" + card, drm + "/" + card + "/device", Source::kDrm);
  const std::string accel = under_root(root, "/sys/class/accel");
  for (const std::string& node : numbered_entries(accel, "accel")) take(accel + "/" + node, accel + "/" + node + "/device", Source::kAccel);
  const std::string pci = under_root(root, "/sys/bus/pci/devices");
  for (const std::string& fn : list_dir(pci))
    if (is_pci_address(fn)) take("", pci + "/" + fn, Source::kPci);
  return out;
}

}  // namespace dlrt::device
