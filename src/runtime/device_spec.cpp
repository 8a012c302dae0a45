#include "runtime/device_spec.h"

#include <algorithm>
#include <cctype>

namespace dlrt {

namespace {

std::string trim_lower(std::string s) {
  auto ns = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), ns));
  s.erase(std::find_if(s.rbegin(), s.rend(), ns).base(), s.end());
  return s;
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
    if (auto colon = item.find(':'); colon != std::string::npos) {
      head = item.substr(0, colon);
      tail = item.substr(colon + 1);
    }
    head = lower_ascii(head);
    if (head == "auto" && tail.empty()) c.kind = DeviceChoice::Kind::kAuto;
    else if (head == "gpu" && tail.empty()) c.kind = DeviceChoice::Kind::kGpu;
    else if (head == "npu" && tail.empty()) c.kind = DeviceChoice::Kind::kNpu;
    else if (head == "cpu" && tail.empty()) c.kind = DeviceChoice::Kind::kCpu;
    else if (!head.empty() && std::all_of(head.begin(), head.end(), [](char ch) {
               return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_';
             })) {
      // A backend name; whether this build has it is checked against the registry.
      c.kind = head == "cpu" ? DeviceChoice::Kind::kCpu : DeviceChoice::Kind::kBackend;
      c.backend = head;
      c.device = tail;
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
