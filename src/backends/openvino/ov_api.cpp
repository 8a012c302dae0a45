#include "backends/openvino/ov_api.h"

#include <cstdlib>
#include <cstring>

#include "core/env.h"

namespace dlrt::backend::openvino {

namespace {

std::optional<OvType> ov_type_of(DType t) {
  switch (t) {
    case DType::kBool: return OvType::kBoolean;
    case DType::kBFloat16: return OvType::kBF16;
    case DType::kFloat16: return OvType::kF16;
    case DType::kFloat32: return OvType::kF32;
    case DType::kFloat64: return OvType::kF64;
    case DType::kInt8: return OvType::kI8;
    case DType::kInt16: return OvType::kI16;
    case DType::kInt32: return OvType::kI32;
    case DType::kInt64: return OvType::kI64;
    case DType::kUInt8: return OvType::kU8;
    case DType::kUInt16: return OvType::kU16;
    case DType::kUInt32: return OvType::kU32;
    case DType::kUInt64: return OvType::kU64;
    default: return std::nullopt;
  }
}

constexpr DType kAllDTypes[] = {DType::kBool,  DType::kBFloat16, DType::kFloat16, DType::kFloat32, DType::kFloat64,
                                DType::kInt8,  DType::kInt16,    DType::kInt32,   DType::kInt64,   DType::kUInt8,
                                DType::kUInt16, DType::kUInt32,  DType::kUInt64};

}  // namespace

std::optional<ov_element_type_e> to_ov_element(OvNumbering n, DType t) {
  auto o = ov_type_of(t);
  if (!o) return std::nullopt;
  return ov_element_code(n, *o);
}

std::optional<DType> from_ov_element(OvNumbering n, ov_element_type_e code) {
  for (DType t : kAllDTypes)
    if (ov_element_code(n, *ov_type_of(t)) == code) return t;
  return std::nullopt;
}

std::optional<OvVersion> parse_ov_version(const std::string& build_number) {
  OvVersion v;
  v.build = build_number;
  const char* p = build_number.c_str();
  int* parts[3] = {&v.major, &v.minor, &v.patch};
  for (int i = 0; i < 3; ++i) {
    if (*p < '0' || *p > '9') {
      if (i < 2) return std::nullopt;  // "2025.4" is enough; "2025" alone is not
      break;
    }
    long x = 0;
    while (*p >= '0' && *p <= '9' && x < 100000) x = x * 10 + (*p++ - '0');
    *parts[i] = static_cast<int>(x);
    if (i < 2) {
      if (*p != '.') {
        if (i == 0) return std::nullopt;
        break;
      }
      ++p;
    }
  }
  if (v.major < 2000) return std::nullopt;  // OpenVINO releases are year.minor.patch
  return v;
}

Result<OvNumbering> numbering_for(const OvVersion& v) {
  if (const char* o = env::get("DLRT_OPENVINO_ELEMENT_NUMBERING"); o && *o) {
    if (std::strcmp(o, "2024") == 0) return OvNumbering::k2024;
    if (std::strcmp(o, "2025") == 0) return OvNumbering::k2025;
    return Status(StatusCode::kDeviceUnavailable,
                  std::string("DLRT_OPENVINO_ELEMENT_NUMBERING='") + o + "' is not 2024 or 2025");
  }
  const std::string name = "OpenVINO " + std::to_string(v.major) + "." + std::to_string(v.minor) + "." +
                           std::to_string(v.patch) + " (" + v.build + ")";
  if (v.major < 2024 || (v.major == 2024 && v.minor < 2))
    return Status(StatusCode::kDeviceUnavailable,
                  name + " is older than 2024.2, the oldest release whose C API element types dlrt knows; "
                         "install OpenVINO 2024.2 or newer (e.g. pip install openvino==2025.4.1)");
  if (v.major > kNewestKnownMajor)
    return Status(StatusCode::kDeviceUnavailable,
                  name + " is newer than the releases this dlrt was checked against (up to " +
                      std::to_string(kNewestKnownMajor) +
                      ".x); its C API element numbering is not known, so dlrt will not guess. Use an OpenVINO "
                      "release up to " + std::to_string(kNewestKnownMajor) +
                      ".x, update dlrt, or set DLRT_OPENVINO_ELEMENT_NUMBERING=2025 to accept the risk");
  if (v.major == 2024 || (v.major == 2025 && v.minor == 0)) return OvNumbering::k2024;
  return OvNumbering::k2025;
}

}  // namespace dlrt::backend::openvino
