#include "runtime/device_spec.h"

#include <algorithm>
#include <cctype>
#include <cstdint>

namespace dlrt {

namespace {

std::string trim_lower(std::string s) {
  auto ns = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), ns));
  s.erase(std::find_if(s.rbegin(), s.rend(), ns).base(), s.end());
  return s;
}

// The part after "backend:": an index (digits only, at most kMaxDeviceIndex,
// kept in canonical form so "x:00" names device "0") or a name ("GPU.0",
// "NPU": a letter, then letters, digits, '.', '_' and '-'). Anything else
// ("-1", "1.5", an index past 2^31, "", a space) names no device of any backend.
Result<std::string> device_part(const std::string& tail, const std::string& item, const std::string& text) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument("malformed device '" + item + "' in spec '" + text + "': " + why +
                           "; use backend:INDEX (a non-negative integer, e.g. cuda:0) or backend:NAME (e.g. "
                           "openvino:GPU.0)");
  };
  if (tail.empty()) return bad("nothing after ':'");
  const unsigned char first = static_cast<unsigned char>(tail[0]);
  if (std::isdigit(first) || tail[0] == '-' || tail[0] == '+') {
    int64_t index = 0;
    for (char ch : tail) {
      if (!std::isdigit(static_cast<unsigned char>(ch))) return bad("a device index is digits only");
      index = index * 10 + (ch - '0');
      if (index > kMaxDeviceIndex) return bad("a device index is at most " + std::to_string(kMaxDeviceIndex));
    }
    return std::to_string(index);
  }
  const bool name_ok = std::isalpha(first) && std::all_of(tail.begin(), tail.end(), [](char ch) {
                         return std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '_' || ch == '-';
                       });
  if (!name_ok) return bad("a device name is letters, digits, '.', '_' and '-', starting with a letter");
  return tail;
}

}  // namespace

std::string lower_ascii(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

Result<DeviceSpec> parse_device_spec(const std::string& text) {
  DeviceSpec spec;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string item = trim_lower(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    start = comma == std::string::npos ? text.size() + 1 : comma + 1;
    if (item.empty()) return InvalidArgument("device spec '" + text + "' has an empty entry");
    DeviceChoice c;
    c.text = item;
    std::string head = item, tail;
    const bool colon_seen = item.find(':') != std::string::npos;
    if (auto colon = item.find(':'); colon != std::string::npos) {
      head = item.substr(0, colon);
      tail = item.substr(colon + 1);
    }
    head = lower_ascii(head);
    if (head == "auto" && !colon_seen) c.kind = DeviceChoice::Kind::kAuto;
    else if (head == "gpu" && !colon_seen) c.kind = DeviceChoice::Kind::kGpu;
    else if (head == "npu" && !colon_seen) c.kind = DeviceChoice::Kind::kNpu;
    else if (head == "cpu" && !colon_seen) c.kind = DeviceChoice::Kind::kCpu;
    else if (!head.empty() && std::all_of(head.begin(), head.end(), [](char ch) {
               return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_';
             })) {
      // A backend name; whether this build has it is checked against the registry.
      c.kind = head == "cpu" ? DeviceChoice::Kind::kCpu : DeviceChoice::Kind::kBackend;
      c.backend = head;
      if (colon_seen) {
        DLRT_ASSIGN_OR_RETURN(c.device, device_part(tail, item, text));
      }
    } else {
      return InvalidArgument("malformed device '" + item + "' in spec '" + text +
                             "'; use auto, cpu, gpu, npu, a backend name (openvino, opencl, ...) or backend:device, "
                             "comma-separated as a priority list");
    }
    spec.choices.push_back(c);
  }
  return spec;
}

}  // namespace dlrt
