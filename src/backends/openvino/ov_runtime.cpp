#include "backends/openvino/ov_runtime.h"

#include <chrono>
#include <string>

#include "backend/canary.h"
#include "backend/search_summary.h"
#include "backends/openvino/ov_library.h"
#include "core/logging.h"
#include "backend/blob_cache.h"

namespace dlrt::backend::openvino {

namespace {

// The releases `make test` runs the real-wheel suite against (scripts/run_tests.sh); any other
// is checked in a child process before it is trusted (backend/canary.h).
constexpr const char* kTestedReleases[] = {"2024.6.0", "2025.4.1", "2026.4.1"};
constexpr const char* kTestedReleaseList = "2024.6.0, 2025.4.1, 2026.4.1";

bool tested_release(const OvVersion& v) {
  const std::string mmp = std::to_string(v.major) + "." + std::to_string(v.minor) + "." + std::to_string(v.patch);
  for (const char* t : kTestedReleases)
    if (mmp == t) return true;
  return false;
}

// The numbering chosen from the version must agree with the library: byte sizes of 16-element
// tensors of a few types.
Status check_numbering(const Runtime& rt) {
  const std::pair<DType, size_t> probes[] = {
      {DType::kFloat32, 64}, {DType::kUInt8, 16}, {DType::kInt64, 128}, {DType::kBool, 16}, {DType::kFloat16, 32}};
  int64_t dim = 16;
  ov_shape_t shape{};
  if (rt.s.ov_shape_create(1, &dim, &shape) != OV_STATUS_OK)
    return Status(StatusCode::kDeviceUnavailable, "OpenVINO: ov_shape_create failed during the element-type check");
  Status result = Status::Ok();
  for (auto [dt, bytes] : probes) {
    ov_tensor_t* t = nullptr;
    size_t got = 0;
    ov_element_type_e code = *to_ov_element(rt.numbering, dt);
    ov_status_e st = rt.s.ov_tensor_create(code, shape, &t);
    if (st == OV_STATUS_OK && t) st = rt.s.ov_tensor_get_byte_size(t, &got);
    if (t) rt.s.ov_tensor_free(t);
    if (st != OV_STATUS_OK || got != bytes) {
      result = Status(StatusCode::kDeviceUnavailable, "OpenVINO " + rt.version.build + " does not use the " +
                                                          (rt.numbering == OvNumbering::k2024 ? "2024" : "2025") +
                                                          " element-type numbering its version implies: element code " +
                                                          std::to_string(code) + " (" + dtype_name(dt) + ") gives " +
                                                          std::to_string(got) + " bytes for 16 elements, not " +
                                                          std::to_string(bytes) + "; refusing to guess");
      break;
    }
  }
  rt.s.ov_shape_free(&shape);
  return result;
}

Status start_runtime(Runtime& rt) {
  const DynamicLibrary& lib = *rt.lib;
  OvVersionSymbols vs;
  DLRT_RETURN_IF_ERROR(vs.resolve(lib));
  ov_version_t v{};
  ov_status_e st = vs.ov_get_openvino_version(&v);
  if (st != OV_STATUS_OK || v.buildNumber == nullptr)
    return Status(StatusCode::kDeviceUnavailable, lib.path() + ": ov_get_openvino_version failed (status " +
                                                      std::to_string(static_cast<int>(st)) + ")");
  std::string build = v.buildNumber;
  vs.ov_version_free(&v);
  auto parsed = parse_ov_version(build);
  if (!parsed)
    return Status(StatusCode::kDeviceUnavailable,
                  lib.path() + " reports version '" + build + "', which is not an OpenVINO year.minor.patch release");
  rt.version = *parsed;
  DLRT_ASSIGN_OR_RETURN(rt.numbering, numbering_for(rt.version));
  DLRT_RETURN_IF_ERROR(rt.s.resolve(lib));
  (void)rt.opt.resolve(lib);  // optional: all-or-nothing, null when absent
  st = rt.s.ov_core_create(&rt.core);
  if (st != OV_STATUS_OK || rt.core == nullptr)
    return Status(StatusCode::kDeviceUnavailable, "OpenVINO " + build + ": ov_core_create failed (status " +
                                                      std::to_string(static_cast<int>(st)) + ")");
  DLRT_RETURN_IF_ERROR(check_numbering(rt));
  ov_available_devices_t devs{};
  st = rt.s.ov_core_get_available_devices(rt.core, &devs);
  if (st == OV_STATUS_OK) {
    for (size_t i = 0; i < devs.size; ++i)
      if (devs.devices && devs.devices[i]) rt.devices.push_back({devs.devices[i], ""});
    rt.s.ov_available_devices_free(&devs);
    for (auto& d : rt.devices) d.full_name = rt.get_core_property(d.name, "FULL_DEVICE_NAME");
  } else {
    rt.devices_error = rt.error(StatusCode::kBackendError, "ov_core_get_available_devices", st).message();
    DLRT_LOG(kWarn, "openvino: " + rt.devices_error);
  }
  return Status::Ok();
}

}  // namespace

Availability load_runtime(std::unique_ptr<Runtime>* out) {
  Availability a;
  a.checked_at = std::chrono::system_clock::now();
  std::vector<std::string> tried;
  std::shared_ptr<DynamicLibrary> lib = open_openvino_library(&tried);
  a.tried = tried;
  if (!lib) {
    a.reason = backend::search_failure_summary("OpenVINO runtime (libopenvino_c.so)", tried);
    a.fix = openvino_library_search(false).fix;
    return a;
  }
  a.library_path = lib->path();
  auto rt = std::make_unique<Runtime>();
  rt->lib = lib;
  // A runtime that is not kept frees its core (a kept one never does, see Runtime::core).
  struct Discard {
    std::unique_ptr<Runtime>& rt;
    ~Discard() {
      if (rt && rt->core) rt->s.ov_core_free(rt->core);
    }
  } discard{rt};
  Status st = start_runtime(*rt);
  if (!st.ok()) {
    a.reason = st.message();
    a.fix = std::string("use an OpenVINO release dlrt is tested with (") + kTestedReleaseList +
            "), e.g. pip install openvino==2026.4.1, or point OPENVINO_LIB_PATH at one";
    if (!rt->version.build.empty()) a.version = rt->version.build;
    return a;
  }
  a.version = rt->version.build;
  if (!in_canary_child()) {
    if (tested_release(rt->version)) {
      a.compatibility = "tested release";
    } else {
      BlobCache cache = configured_blob_cache();
      CanaryVerdict v = check_release({"openvino", "OpenVINO", rt->version.build, cache.enabled() ? cache.dir() : ""});
      a.compatibility = v.summary();
      if (v.kind == CanaryVerdict::Kind::kFailed) {
        a.reason = "OpenVINO " + rt->version.build + " failed dlrt's compatibility check: " + v.reason;
        a.fix = std::string("use a release dlrt is tested with (") + kTestedReleaseList +
                "); DLRT_CANARY=recheck checks this one again, DLRT_CANARY=skip trusts it unchecked";
        return a;
      }
    }
  }
  a.available = true;
  *out = std::move(rt);
  return a;
}

}  // namespace dlrt::backend::openvino
