// dlrt devices: the hardware dlrt found, each backend and whether it can be
// used (and if not, why and how to fix it), and the devices backends offer.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "core/memory_limit.h"
#include "commands.h"
#include "dlrt/backends.h"
#include "dlrt/device.h"
#include "dlrt/memory.h"
#include "json_out.h"

namespace dlrt::cli {
namespace {

constexpr const char* kDevicesHelp =
    "usage: dlrt devices [options]\n"
    "\n"
    "Lists the hardware dlrt discovered (CPU from cpuid and /proc, GPUs and NPUs from\n"
    "/sys/class/drm, /sys/class/accel and PCI; no vendor runtime is needed), then every\n"
    "backend: available or not, the vendor library and version it loaded, or the reason\n"
    "it cannot be used and the fix; then the devices each backend offers (BACKEND:DEVICE,\n"
    "usable with --device), virtual ones (compile only) marked; last the memory budget: the\n"
    "largest tensor a run may allocate and the memory available to the process that its\n"
    "default (half of it) derives from: the smallest of the physical memory, the memory\n"
    "cgroup's limit (less the resident set) and RLIMIT_AS (less what is mapped).\n"
    "\n"
    "options:\n"
    "  --json          print one JSON object {\"hardware\", \"backends\", \"backend_devices\",\n"
    "                  \"memory\"}\n"
    "  --refresh       retry backends whose runtime failed to load earlier\n"
    "  -v, --verbose   also list every place each backend searched for its vendor library\n"
    "                  (and the outcome), one per line\n"
    "  --root DIR      read /proc and /sys under DIR instead of / (testing)\n"
    "  -h, --help      this help\n";

std::string hex_id(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%04x", v);
  return buf;
}

// "17163091968" -> "16.0 GiB"; "" when not a number.
std::string human_bytes(const std::string& bytes) {
  char* end = nullptr;
  double v = std::strtod(bytes.c_str(), &end);
  if (bytes.empty() || !end || *end != '\0' || v < 0) return "";
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f %s", v, units[u]);
  return buf;
}

std::string metadata_line(const std::map<std::string, std::string>& meta) {
  std::string s;
  for (const auto& [k, v] : meta) {
    if (!s.empty()) s += ' ';
    s += k + "=";
    s += v.find(' ') != std::string::npos || v.empty() ? "\"" + v + "\"" : v;
    if (k == "memory_bytes") {
      std::string h = human_bytes(v);
      if (!h.empty()) s += " (" + h + ")";
    }
  }
  return s;
}

nlohmann::ordered_json device_json(const Device& d) {
  nlohmann::ordered_json j;
  j["id"] = d.id;
  j["type"] = device_type_name(d.type);
  j["vendor"] = d.vendor;
  j["name"] = d.name;
  if (d.vendor_id != 0 || d.device_id != 0) {
    j["vendor_id"] = hex_id(d.vendor_id);
    j["device_id"] = hex_id(d.device_id);
  }
  j["metadata"] = d.metadata;
  return j;
}

nlohmann::ordered_json to_json(const std::vector<Device>& hardware, const std::vector<BackendInfo>& backends,
                               const std::vector<BackendDeviceInfo>& bdevs) {
  nlohmann::ordered_json j;
  j["hardware"] = nlohmann::ordered_json::array();
  for (const Device& d : hardware) j["hardware"].push_back(device_json(d));
  j["backends"] = nlohmann::ordered_json::array();
  for (const BackendInfo& b : backends) {
    const BackendInfo& a = b;
    nlohmann::ordered_json e;
    e["name"] = b.name;
    e["available"] = a.available;
    if (a.available) {
      e["library_path"] = a.library_path;
      e["version"] = a.version;
    } else {
      e["reason"] = a.reason;
      e["fix"] = a.fix;
      if (!a.version.empty()) e["version"] = a.version;
    }
    if (!a.compatibility.empty()) e["compatibility"] = a.compatibility;
    e["tried"] = a.tried;
    j["backends"].push_back(std::move(e));
  }
  j["backend_devices"] = nlohmann::ordered_json::array();
  for (const BackendDeviceInfo& d : bdevs) {
    nlohmann::ordered_json e;
    e["spec"] = d.spec;
    e["backend"] = d.backend;
    e["name"] = d.name;
    e["type"] = device_type_name(d.type);
    e["is_virtual"] = d.is_virtual;
    e["hardware"] = d.hardware ? nlohmann::ordered_json(d.hardware->id) : nlohmann::ordered_json(nullptr);
    e["metadata"] = d.metadata;
    j["backend_devices"].push_back(std::move(e));
  }
  const MemoryInfo b = memory_info();
  auto opt = [](const std::optional<uint64_t>& v) {
    return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
  };
  nlohmann::ordered_json m;
  m["max_tensor_bytes"] = b.max_tensor_bytes;
  m["max_tensor_source"] = b.max_tensor_source;
  m["available_bytes"] = b.available_bytes;
  m["available_source"] = b.available_source;
  m["physical_bytes"] = b.physical_bytes;
  m["cgroup_limit_bytes"] = opt(b.cgroup_limit_bytes);
  m["cgroup_source"] = b.cgroup_limit_bytes ? nlohmann::ordered_json(b.cgroup_source) : nlohmann::ordered_json(nullptr);
  m["rlimit_as_bytes"] = opt(b.rlimit_as_bytes);
  m["rss_bytes"] = b.rss_bytes;
  m["vm_size_bytes"] = b.vm_size_bytes;
  j["memory"] = std::move(m);
  return j;
}

void print_text(const std::vector<Device>& hardware, const std::vector<BackendInfo>& backends,
                const std::vector<BackendDeviceInfo>& bdevs, bool verbose) {
  std::printf("Hardware\n");
  for (const Device& d : hardware) {
    std::string ids = d.vendor_id || d.device_id ? " " + hex_id(d.vendor_id).substr(2) + ":" + hex_id(d.device_id).substr(2) : "";
    std::printf("  %-14s %-4s %s (%s%s)\n", d.id.c_str(), device_type_name(d.type), d.name.c_str(), d.vendor.c_str(),
                ids.c_str());
    if (!d.metadata.empty()) std::printf("  %-14s      %s\n", "", metadata_line(d.metadata).c_str());
  }

  std::printf("\nBackends\n");
  if (backends.empty()) std::printf("  (none registered)\n");
  for (const BackendInfo& b : backends) {
    const BackendInfo& a = b;
    if (a.available) {
      std::string where = a.library_path.empty() ? "built in" : a.library_path;
      std::string version = a.version.empty() ? "" : "  version " + a.version;
      std::printf("  %-14s available    %s%s\n", b.name.c_str(), where.c_str(), version.c_str());
      if (!a.compatibility.empty()) std::printf("  %-14s   %s\n", "", a.compatibility.c_str());
    } else {
      std::printf("  %-14s unavailable  %s\n", b.name.c_str(), a.reason.empty() ? "(no reason given)" : a.reason.c_str());
      if (!a.fix.empty()) std::printf("  %-14s   fix: %s\n", "", a.fix.c_str());
    }
    if (verbose && !a.tried.empty()) {
      std::printf("  %-14s   searched:\n", "");
      for (const std::string& p : a.tried) std::printf("  %-14s     %s\n", "", p.c_str());
    }
  }

  std::printf("\nBackend devices\n");
  if (bdevs.empty()) std::printf("  (none)\n");
  for (const BackendDeviceInfo& d : bdevs) {
    std::string hw = d.hardware ? d.hardware->id : "-";
    std::printf("  %-22s %-4s %-8s hardware %s\n", d.spec.c_str(), device_type_name(d.type), d.is_virtual ? "virtual" : "",
                hw.c_str());
    if (!d.metadata.empty()) std::printf("  %-22s      %s\n", "", metadata_line(d.metadata).c_str());
  }
  const MemoryInfo b = memory_info();
  auto opt = [](const std::optional<uint64_t>& v) { return v ? format_bytes(*v) : std::string("none"); };
  std::printf("\nMemory\n");
  std::printf("  %-22s %s (%s)\n", "largest tensor", format_bytes(b.max_tensor_bytes).c_str(), b.max_tensor_source.c_str());
  std::printf("  %-22s %s (%s)\n", "available", format_bytes(b.available_bytes).c_str(), b.describe.c_str());
  std::printf("  %-22s physical %s, %s %s, RLIMIT_AS %s; resident %s, mapped %s\n", "bounds",
              format_bytes(b.physical_bytes).c_str(), b.cgroup_limit_bytes ? b.cgroup_source.c_str() : "cgroup limit",
              opt(b.cgroup_limit_bytes).c_str(), opt(b.rlimit_as_bytes).c_str(), format_bytes(b.rss_bytes).c_str(),
              format_bytes(b.vm_size_bytes).c_str());
}

}  // namespace

int cmd_devices(int argc, char** argv) {
  const std::vector<FlagSpec> specs = {{"json", false, false}, {"refresh", false, false}, {"root", true, false}, {"verbose", false, false}};
  auto parsed = parse_args(argc, argv, 2, specs);
  if (!parsed.ok()) return usage_error("devices", parsed.status().message());
  const Args& args = *parsed;
  if (args.has("help")) {
    std::fputs(kDevicesHelp, stdout);
    return kExitOk;
  }
  if (!args.positional.empty()) return usage_error("devices", "unexpected argument '" + args.positional[0] + "'");

  DiscoveryOptions options;
  options.root = args.get("root");
  const std::vector<Device> hardware = discover_devices(options);

  BackendsOptions query;
  query.refresh = args.has("refresh");
  query.hardware = hardware;
  std::vector<BackendInfo> backends = dlrt::backends(query);
  std::vector<BackendDeviceInfo> bdevs;
  for (const BackendInfo& b : backends) bdevs.insert(bdevs.end(), b.devices.begin(), b.devices.end());

  if (args.has("json")) {
    print_json(to_json(hardware, backends, bdevs));
  } else {
    print_text(hardware, backends, bdevs, args.has("verbose"));
  }
  return kExitOk;
}

}  // namespace dlrt::cli
