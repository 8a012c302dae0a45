// A conformance double of OpenVINO's C library (libopenvino_c.so) for tests:
// it exports the ov_* functions dlrt's OpenVINO backend calls, with the
// signatures of src/backends/openvino/ov_api.h, and runs the models it is
// given on dlrt's own CPU executor (a private, statically linked copy; only
// ov_* is exported). It pretends to have a CPU and an NPU.
//
// Switches (environment variables, read when the call that uses them runs):
//   OV_DOUBLE_VERSION=2024       report 2024.6.0 and use the 2024 element numbering
//                                (BOOLEAN=2, F32=5); default 2025.1.0, 2025 numbering
//   OV_DOUBLE_VERSION_STRING=S   report build number S (numbering: 2024 if S starts with 2024)
//   OV_DOUBLE_NO_NPU=1           devices: CPU only (an NPU still compiles offline; import and
//                                infer need the device)
//   OV_DOUBLE_DEVICES=A,B        the device list (default CPU,NPU)
//   OV_DOUBLE_COMPILE_FAIL=1|DEV ov_core_compile_model fails (on every device, or on DEV)
//   OV_DOUBLE_COMPILE_SECONDS=N  ov_core_compile_model sleeps N seconds (slow compile)
//   OV_DOUBLE_INFER_FAIL_AT=N    the Nth ov_infer_request_infer call of the process fails
//   OV_DOUBLE_INFER_FAIL_FROM=N  every infer call from the Nth on fails
//   OV_DOUBLE_IMPORT_INCOMPATIBLE=1  ov_core_import_model refuses every blob as incompatible
//   OV_DOUBLE_IMPORT_ZERO_COPY=1 ov_core_import_model keeps reading the caller's bytes, as
//                                OpenVINO 2026.x does: every infer checks that they are
//                                still what was imported, and fails when they are not
//   OV_DOUBLE_INFER_CRASH=1      every infer dies with SIGSEGV (a vendor crash)
//   OV_DOUBLE_INFER_HANG=1       every infer blocks forever (a vendor hang)
//   OV_DOUBLE_INFER_WRONG=1      every infer adds 1 to its float32 outputs (wrong values)
//   OV_DOUBLE_OPTIMAL_REQUESTS=N OPTIMAL_NUMBER_OF_INFER_REQUESTS (default 2)
//   OV_DOUBLE_STATS=FILE         rewrites FILE with counters (cores, compiles, THROUGHPUT-hinted
//                                compiles, imports, infer requests, infers, max parallel
//                                infers, busy errors)
// A blob exported by one version/device is refused on import by another, as
// OpenVINO does. Build variant OV_DOUBLE_OMIT_SYMBOL leaves ov_core_import_model out.
#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <optional>
#include <type_traits>

#include "core/thread_pool.h"
#include "backends/cpu/kernel.h"
#include "exec/executor.h"
#include "ir/onnx_export.h"
#include "ir/onnx_import.h"

#include "backends/openvino/ov_api.h"

#define OV_API extern "C" __attribute__((visibility("default")))

namespace {

constexpr ov_status_e kOk = OV_STATUS_OK;
constexpr ov_status_e kGeneralError = OV_STATUS_GENERAL_ERROR;
constexpr ov_status_e kNotImplemented = OV_STATUS_NOT_IMPLEMENTED;
constexpr ov_status_e kParameterMismatch = OV_STATUS_PARAMETER_MISMATCH;
constexpr ov_status_e kNotFound = OV_STATUS_NOT_FOUND;
constexpr ov_status_e kOutOfBounds = OV_STATUS_OUT_OF_BOUNDS;
constexpr ov_status_e kRequestBusy = OV_STATUS_REQUEST_BUSY;
constexpr ov_status_e kInvalidCParam = OV_STATUS_INVALID_C_PARAM;

using dlrt::DType;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}
long env_int(const char* name, long def) {
  std::string v = env(name);
  if (v.empty()) return def;
  char* end = nullptr;
  long n = std::strtol(v.c_str(), &end, 10);
  return end && *end == '\0' ? n : def;
}

// OpenVINO keeps the last error message process-wide.
std::mutex g_err_mu;
std::string g_last_error;

ov_status_e fail(ov_status_e code, const std::string& msg) {
  std::lock_guard<std::mutex> lk(g_err_mu);
  g_last_error = "[ov double] " + msg;
  return code;
}

char* dup(const std::string& s) {
  char* p = new char[s.size() + 1];
  std::memcpy(p, s.c_str(), s.size() + 1);
  return p;
}

// ---- Version and element numbering ----

std::string version_string() {
  std::string s = env("OV_DOUBLE_VERSION_STRING");
  if (!s.empty()) return s;
  if (env("OV_DOUBLE_VERSION") == "2024") return "2024.6.0-17404-double";
  return "2025.1.0-18503-double";
}
bool numbering_2024() { return version_string().rfind("2024", 0) == 0; }

struct ElementInfo {
  DType dtype;
  const char* name;
};
// Position in the 2025.1+ enum (the 2024 enum has UNDEFINED ahead of DYNAMIC: +1).
const std::vector<std::pair<unsigned, ElementInfo>>& elements_2025() {
  static const std::vector<std::pair<unsigned, ElementInfo>> t = {
      {1, {DType::kBool, "boolean"}},  {2, {DType::kBFloat16, "bf16"}}, {3, {DType::kFloat16, "f16"}},
      {4, {DType::kFloat32, "f32"}},   {5, {DType::kFloat64, "f64"}},   {7, {DType::kInt8, "i8"}},
      {8, {DType::kInt16, "i16"}},     {9, {DType::kInt32, "i32"}},     {10, {DType::kInt64, "i64"}},
      {16, {DType::kUInt8, "u8"}},     {17, {DType::kUInt16, "u16"}},   {18, {DType::kUInt32, "u32"}},
      {19, {DType::kUInt64, "u64"}},
  };
  return t;
}
bool element_to_dtype(ov_element_type_e code, DType& out) {
  unsigned c = numbering_2024() ? code - 1 : code;
  if (numbering_2024() && code == 0) return false;
  for (const auto& [k, info] : elements_2025())
    if (k == c) {
      out = info.dtype;
      return true;
    }
  return false;
}
ov_element_type_e dtype_to_element(DType t) {
  for (const auto& [k, info] : elements_2025())
    if (info.dtype == t) return numbering_2024() ? k + 1 : k;
  return numbering_2024() ? 1 : 0;  // DYNAMIC
}

// ---- Statistics for tests ----

struct Stats {
  std::mutex mu;
  long cores = 0, compiles = 0, throughput_compiles = 0, imports = 0, exports = 0, requests = 0, infers = 0, busy = 0;
  long parallel = 0, max_parallel = 0;
  void write() {  // with mu held
    std::string path = env("OV_DOUBLE_STATS");
    if (path.empty()) return;
    std::string tmp = path + ".tmp" + std::to_string(::getpid());
    {
      std::ofstream f(tmp);
      f << "cores=" << cores << "\ncompiles=" << compiles << "\nthroughput_compiles=" << throughput_compiles << "\nimports=" << imports << "\nexports=" << exports
        << "\ninfer_requests=" << requests << "\ninfers=" << infers << "\nmax_parallel_infers=" << max_parallel
        << "\nbusy_errors=" << busy << "\n";
    }
    std::rename(tmp.c_str(), path.c_str());
  }
};
Stats& stats() {
  static Stats* s = new Stats;  // never destroyed: runtimes may call in during exit
  return *s;
}
template <typename F>
void count(F f) {
  Stats& s = stats();
  std::lock_guard<std::mutex> lk(s.mu);
  f(s);
  s.write();
}

std::vector<std::string> device_list() {
  std::string list = env("OV_DOUBLE_DEVICES");
  if (list.empty()) list = env("OV_DOUBLE_NO_NPU") == "1" ? "CPU" : "CPU,NPU";
  std::vector<std::string> out;
  std::stringstream ss(list);
  for (std::string d; std::getline(ss, d, ',');)
    if (!d.empty()) out.push_back(d);
  return out;
}
bool has_device(const std::string& d) {
  auto l = device_list();
  return std::find(l.begin(), l.end(), d) != l.end();
}

}  // namespace

// ---- Opaque objects ----

struct ov_core {
  std::mutex mu;
  std::map<std::string, std::map<std::string, std::string>> properties;  // device -> key -> value
};

struct ov_model {
  dlrt::ir::Model model;
};

// A port of a compiled model: element type and (possibly dynamic) shape.
struct ov_output_const_port {
  DType dtype = DType::kUndefined;
  std::optional<std::vector<int64_t>> shape;  // nullopt or -1 dims when dynamic
};

struct ov_compiled_model {
  std::string device;
  std::string hint;
  // OV_DOUBLE_IMPORT_ZERO_COPY: the caller's bytes and their hash at import.
  const char* imported_from = nullptr;
  size_t imported_size = 0;
  uint64_t imported_hash = 0;
  std::shared_ptr<dlrt::ir::Graph> graph;
  std::unique_ptr<dlrt::ThreadPool> pool;
  std::unique_ptr<dlrt::Executor> executor;
};

struct TensorImpl {
  DType dtype = DType::kUndefined;
  ov_element_type_e code = 0;
  std::vector<int64_t> shape;
  void* data = nullptr;
  bool owned = false;
  size_t nbytes = 0;
  ~TensorImpl() {
    if (owned) std::free(data);
  }
};

struct ov_tensor {
  std::shared_ptr<TensorImpl> impl;
};

struct ov_infer_request {
  const ov_compiled_model* compiled = nullptr;
  std::vector<std::shared_ptr<TensorImpl>> inputs;
  std::vector<std::shared_ptr<TensorImpl>> outputs;
  std::atomic<bool> busy{false};
};

namespace {

size_t element_count(const std::vector<int64_t>& shape) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  return n;
}

std::vector<int64_t> static_dims(const dlrt::ir::Value& v, bool& is_static) {
  std::vector<int64_t> dims;
  is_static = v.type.shape.has_value();
  if (!v.type.shape) return dims;
  for (const auto& d : *v.type.shape) {
    dims.push_back(d.size);
    if (d.size < 0) is_static = false;
  }
  return dims;
}

ov_status_e finish_compiled(std::shared_ptr<dlrt::ir::Graph> graph, const std::string& device, const std::string& hint,
                            ov_compiled_model_t** out);

// FNV-1a over a byte range.
uint64_t bytes_hash(const char* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<unsigned char>(p[i])) * 1099511628211ull;
  return h;
}

// The blob: "OVDOUBLE1\n" version "\n" device "\n" hint "\n" ONNX bytes.
constexpr const char* kBlobMagic = "OVDOUBLE1";

}  // namespace

// ---- Version, errors ----

OV_API ov_status_e ov_get_openvino_version(ov_version_t* version) {
  if (!version) return fail(kInvalidCParam, "ov_get_openvino_version: null argument");
  version->buildNumber = dup(version_string());
  version->description = dup("OpenVINO Runtime (dlrt test double)");
  return kOk;
}

OV_API void ov_version_free(ov_version_t* version) {
  if (!version) return;
  delete[] version->buildNumber;
  delete[] version->description;
  version->buildNumber = version->description = nullptr;
}

OV_API const char* ov_get_error_info(ov_status_e status) {
  switch (status) {
    case kOk: return "";
    case kGeneralError: return "general error";
    case kNotImplemented: return "not implemented";
    case kParameterMismatch: return "parameter mismatch";
    case kNotFound: return "not found";
    case kOutOfBounds: return "out of bounds";
    case kRequestBusy: return "request busy";
    case kInvalidCParam: return "invalid c input parameters";
    default: return "unknown error";
  }
}

// Copies handed out by ov_get_last_err_msg that the caller has not ov_free'd yet. OpenVINO
// allocates them too (the caller must ov_free them); the double keeps them reachable so a
// caller that forgets does not fail LeakSanitizer runs.
std::set<const char*>& outstanding_messages() {
  static auto* s = new std::set<const char*>;
  return *s;
}

OV_API void ov_free(const char* content) {
  if (!content) return;
  {
    std::lock_guard<std::mutex> lk(g_err_mu);
    outstanding_messages().erase(content);
  }
  delete[] content;
}

OV_API const char* ov_get_last_err_msg() {
  std::lock_guard<std::mutex> lk(g_err_mu);
  if (g_last_error.empty()) return nullptr;
  char* copy = dup(g_last_error);
  outstanding_messages().insert(copy);
  return copy;
}

// ---- Core ----

OV_API ov_status_e ov_core_create(ov_core_t** core) {
  if (!core) return fail(kInvalidCParam, "ov_core_create: null argument");
  *core = new ov_core;
  count([](Stats& s) { ++s.cores; });
  return kOk;
}

OV_API void ov_core_free(ov_core_t* core) { delete core; }

OV_API ov_status_e ov_core_get_available_devices(const ov_core_t* core, ov_available_devices_t* devices) {
  if (!core || !devices) return fail(kInvalidCParam, "ov_core_get_available_devices: null argument");
  auto list = device_list();
  devices->size = list.size();
  devices->devices = new char*[list.size()];
  for (size_t i = 0; i < list.size(); ++i) devices->devices[i] = dup(list[i]);
  return kOk;
}

OV_API void ov_available_devices_free(ov_available_devices_t* devices) {
  if (!devices || !devices->devices) return;
  for (size_t i = 0; i < devices->size; ++i) delete[] devices->devices[i];
  delete[] devices->devices;
  devices->devices = nullptr;
  devices->size = 0;
}

OV_API ov_status_e ov_core_get_property(const ov_core_t* core, const char* device_name, const char* key, char** value) {
  if (!core || !device_name || !key || !value) return fail(kInvalidCParam, "ov_core_get_property: null argument");
  std::string dev = device_name, k = key;
  if (!has_device(dev)) return fail(kGeneralError, "Device with \"" + dev + "\" name is not registered in the OpenVINO Runtime");
  bool npu = dev.rfind("NPU", 0) == 0;
  std::map<std::string, std::string> props = {
      {"FULL_DEVICE_NAME", npu ? "Intel(R) AI Boost (dlrt double)" : "Intel(R) Double CPU (dlrt double)"},
      {"DEVICE_ARCHITECTURE", npu ? "3720" : "intel64"},
      {"DEVICE_TYPE", "integrated"},
      {"OPTIMIZATION_CAPABILITIES", npu ? "FP16 INT8 EXPORT_IMPORT" : "FP32 FP16 INT8 BIN EXPORT_IMPORT"},
      {"RANGE_FOR_ASYNC_INFER_REQUESTS", "1 8 1"},
      {"OPTIMAL_NUMBER_OF_INFER_REQUESTS", std::to_string(env_int("OV_DOUBLE_OPTIMAL_REQUESTS", 2))},
      {"AVAILABLE_DEVICES", ""},
  };
  if (npu) {
    props["NPU_DRIVER_VERSION"] = "1.10.0.double";
    props["DRIVER_VERSION"] = "1.10.0.double";
  }
  std::string supported;
  for (const auto& [name, v] : props) supported += (supported.empty() ? "" : " ") + name;
  props["SUPPORTED_PROPERTIES"] = supported;
  auto it = props.find(k);
  if (it == props.end()) return fail(kNotFound, "Unsupported property " + k + " by " + dev + " plugin");
  *value = dup(it->second);
  return kOk;
}

// ---- Models ----

OV_API ov_status_e ov_core_read_model_from_memory_buffer(const ov_core_t* core, const char* model_str, const size_t str_len,
                                                        const ov_tensor_t* weights, ov_model_t** model) {
  if (!core || !model_str || !model) return fail(kInvalidCParam, "ov_core_read_model_from_memory_buffer: null argument");
  auto m = dlrt::ir::import_onnx_bytes(std::string(model_str, str_len), "");
  if (!m.ok()) return fail(kGeneralError, "cannot read the model: " + m.status().message());
  auto* out = new ov_model;
  out->model = std::move(m).value();
  *model = out;
  return kOk;
}

OV_API void ov_model_free(ov_model_t* model) { delete model; }

OV_API bool ov_model_is_dynamic(const ov_model_t* model) {
  if (!model) return false;
  const auto& g = *model->model.graph;
  for (auto id : g.inputs) {
    bool st;
    static_dims(g.values[id], st);
    if (!st) return true;
  }
  return false;
}

OV_API ov_status_e ov_model_inputs_size(const ov_model_t* model, size_t* size) {
  if (!model || !size) return fail(kInvalidCParam, "ov_model_inputs_size: null argument");
  *size = model->model.graph->inputs.size();
  return kOk;
}

OV_API ov_status_e ov_model_reshape_by_port_indexes(const ov_model_t* model, const size_t* port_indexes,
                                                   const ov_partial_shape_t* partial_shapes, size_t size) {
  if (!model || (size && (!port_indexes || !partial_shapes))) return fail(kInvalidCParam, "ov_model_reshape_by_port_indexes: null argument");
  auto& g = *model->model.graph;
  for (size_t i = 0; i < size; ++i) {
    if (port_indexes[i] >= g.inputs.size()) return fail(kOutOfBounds, "reshape: no input port " + std::to_string(port_indexes[i]));
    const ov_partial_shape_t& ps = partial_shapes[i];
    if (ps.rank.min != ps.rank.max || ps.rank.min < 0) return fail(kGeneralError, "reshape: dynamic rank is not supported");
    auto& v = g.values[g.inputs[port_indexes[i]]];
    if (v.type.shape && static_cast<int64_t>(v.type.shape->size()) != ps.rank.min)
      return fail(kGeneralError, "reshape: input '" + v.name + "' has rank " + std::to_string(v.type.shape->size()) +
                                     ", not " + std::to_string(ps.rank.min));
    std::vector<dlrt::ir::Dim> dims;
    for (int64_t d = 0; d < ps.rank.min; ++d) {
      const auto& dim = ps.dims[d];
      int64_t old = v.type.shape ? (*v.type.shape)[d].size : -1;
      int64_t want = dim.min == dim.max ? dim.min : -1;
      if (old >= 0 && want >= 0 && old != want)
        return fail(kGeneralError, "reshape: input '" + v.name + "' dim " + std::to_string(d) + " is " + std::to_string(old) +
                                       ", cannot become " + std::to_string(want));
      dims.push_back(dlrt::ir::Dim{want, ""});
    }
    v.type.shape = dims;
  }
  return kOk;
}

OV_API ov_status_e ov_partial_shape_create_static(const int64_t rank, const int64_t* dims, ov_partial_shape_t* partial_shape) {
  if (!partial_shape || rank < 0 || (rank > 0 && !dims)) return fail(kInvalidCParam, "ov_partial_shape_create_static: bad argument");
  partial_shape->rank = {rank, rank};
  partial_shape->dims = new ov_dimension_t[static_cast<size_t>(rank) + 1];
  for (int64_t i = 0; i < rank; ++i) {
    if (dims[i] < 0) {
      delete[] partial_shape->dims;
      partial_shape->dims = nullptr;
      return fail(kInvalidCParam, "ov_partial_shape_create_static: negative dim");
    }
    partial_shape->dims[i] = {dims[i], dims[i]};
  }
  return kOk;
}

OV_API void ov_partial_shape_free(ov_partial_shape_t* partial_shape) {
  if (!partial_shape) return;
  delete[] partial_shape->dims;
  partial_shape->dims = nullptr;
}

// ---- Compile, export, import ----

namespace {

ov_status_e finish_compiled(std::shared_ptr<dlrt::ir::Graph> graph, const std::string& device, const std::string& hint,
                            ov_compiled_model_t** out) {
  auto cm = std::make_unique<ov_compiled_model>();
  cm->device = device;
  cm->hint = hint;
  cm->graph = std::move(graph);
  cm->pool = std::make_unique<dlrt::ThreadPool>(1);
  auto ex = dlrt::Executor::create(cm->graph, *cm->pool, dlrt::cpu::builtin_kernels());
  if (!ex.ok()) return fail(kGeneralError, device + " plugin cannot compile the model: " + ex.status().message());
  cm->executor = std::move(ex).value();
  *out = cm.release();
  return kOk;
}

}  // namespace

OV_API ov_status_e ov_core_compile_model(const ov_core_t* core, const ov_model_t* model, const char* device_name,
                                        const size_t property_args_size, ov_compiled_model_t** compiled_model, ...) {
  if (!core || !model || !device_name || !compiled_model) return fail(kInvalidCParam, "ov_core_compile_model: null argument");
  if (property_args_size % 2 != 0) return fail(kInvalidCParam, "ov_core_compile_model: property_args_size must be even");
  std::map<std::string, std::string> props;
  va_list ap;
  va_start(ap, compiled_model);
  for (size_t i = 0; i < property_args_size / 2; ++i) {
    const char* k = va_arg(ap, const char*);
    const char* v = va_arg(ap, const char*);
    if (!k || !v) {
      va_end(ap);
      return fail(kInvalidCParam, "ov_core_compile_model: null property key or value");
    }
    props[k] = v;
  }
  va_end(ap);
  const std::string dev = device_name;
  // Like OpenVINO with its NPU plugin installed, an NPU compiles offline (ahead of time) on a
  // machine without one; other devices must be present.
  if (!has_device(dev) && dev != "NPU")
    return fail(kGeneralError, "Device with \"" + dev + "\" name is not registered in the OpenVINO Runtime");
  if (long s = env_int("OV_DOUBLE_COMPILE_SECONDS", 0); s > 0) std::this_thread::sleep_for(std::chrono::seconds(s));
  std::string f = env("OV_DOUBLE_COMPILE_FAIL");
  if (f == "1" || (!f.empty() && f == dev)) return fail(kGeneralError, dev + " plugin: compilation failed (OV_DOUBLE_COMPILE_FAIL)");
  static const char* known[] = {"PERFORMANCE_HINT", "INFERENCE_PRECISION_HINT", "CACHE_DIR", "NUM_STREAMS",
                                "PERFORMANCE_HINT_NUM_REQUESTS", "INFERENCE_NUM_THREADS", "ENABLE_PROFILING",
                                "NPU_PLATFORM", "NPU_COMPILATION_MODE_PARAMS", "EXECUTION_MODE_HINT"};
  for (const auto& [k, v] : props)
    if (std::find(std::begin(known), std::end(known), k) == std::end(known))
      return fail(kNotFound, "Unsupported property " + k + " by " + dev + " plugin");
  auto graph = std::make_shared<dlrt::ir::Graph>(*model->model.graph);
  const std::string hint = props.count("PERFORMANCE_HINT") ? props["PERFORMANCE_HINT"] : "LATENCY";
  ov_status_e st = finish_compiled(graph, dev, hint, compiled_model);
  if (st == kOk) count([&](Stats& s) { ++s.compiles; s.throughput_compiles += hint == "THROUGHPUT"; });
  return st;
}

OV_API ov_status_e ov_compiled_model_export_model(const ov_compiled_model_t* compiled_model, const char* export_model_path) {
  if (!compiled_model || !export_model_path) return fail(kInvalidCParam, "ov_compiled_model_export_model: null argument");
  auto bytes = dlrt::ir::export_onnx(*compiled_model->graph);
  if (!bytes.ok()) return fail(kGeneralError, "export failed: " + bytes.status().message());
  std::ofstream f(export_model_path, std::ios::binary | std::ios::trunc);
  if (!f) return fail(kGeneralError, std::string("cannot open ") + export_model_path);
  f << kBlobMagic << "\n" << version_string() << "\n" << compiled_model->device << "\n" << compiled_model->hint << "\n" << *bytes;
  if (!f.flush()) return fail(kGeneralError, std::string("cannot write ") + export_model_path);
  count([](Stats& s) { ++s.exports; });
  return kOk;
}

#ifndef OV_DOUBLE_OMIT_SYMBOL
OV_API ov_status_e ov_core_import_model(const ov_core_t* core, const char* content, const size_t content_size,
                                       const char* device_name, ov_compiled_model_t** compiled_model) {
  if (!core || !content || !device_name || !compiled_model) return fail(kInvalidCParam, "ov_core_import_model: null argument");
  const std::string dev = device_name;
  if (!has_device(dev)) return fail(kGeneralError, "Device with \"" + dev + "\" name is not registered in the OpenVINO Runtime");
  std::string blob(content, content_size);
  std::vector<std::string> head;
  size_t pos = 0;
  for (int i = 0; i < 4; ++i) {
    size_t nl = blob.find('\n', pos);
    if (nl == std::string::npos) return fail(kGeneralError, "import: the blob is not an exported model (truncated header)");
    head.push_back(blob.substr(pos, nl - pos));
    pos = nl + 1;
  }
  if (head[0] != kBlobMagic) return fail(kGeneralError, "import: the blob is not an exported model of this runtime");
  if (env("OV_DOUBLE_IMPORT_INCOMPATIBLE") == "1")
    return fail(kGeneralError, "import: the blob is incompatible with this runtime or driver (OV_DOUBLE_IMPORT_INCOMPATIBLE)");
  if (head[1] != version_string())
    return fail(kGeneralError, "import: the blob was exported by OpenVINO " + head[1] + ", this is " + version_string());
  if (head[2] != dev) return fail(kGeneralError, "import: the blob was compiled for " + head[2] + ", not " + dev);
  auto m = dlrt::ir::import_onnx_bytes(blob.substr(pos), "");
  if (!m.ok()) return fail(kGeneralError, "import: corrupt blob: " + m.status().message());
  ov_status_e st = finish_compiled(m->graph, dev, head[3], compiled_model);
  if (st == kOk) count([](Stats& s) { ++s.imports; });
  if (st == kOk && env("OV_DOUBLE_IMPORT_ZERO_COPY") == "1") {
    (*compiled_model)->imported_from = content;
    (*compiled_model)->imported_size = content_size;
    (*compiled_model)->imported_hash = bytes_hash(content, content_size);
  }
  return st;
}
#endif

OV_API void ov_compiled_model_free(ov_compiled_model_t* compiled_model) { delete compiled_model; }

OV_API ov_status_e ov_compiled_model_inputs_size(const ov_compiled_model_t* compiled_model, size_t* size) {
  if (!compiled_model || !size) return fail(kInvalidCParam, "ov_compiled_model_inputs_size: null argument");
  *size = compiled_model->graph->inputs.size();
  return kOk;
}

OV_API ov_status_e ov_compiled_model_outputs_size(const ov_compiled_model_t* compiled_model, size_t* size) {
  if (!compiled_model || !size) return fail(kInvalidCParam, "ov_compiled_model_outputs_size: null argument");
  *size = compiled_model->graph->outputs.size();
  return kOk;
}

namespace {
ov_status_e make_port(const dlrt::ir::Graph& g, dlrt::ir::ValueId id, ov_output_const_port_t** port) {
  auto p = std::make_unique<ov_output_const_port>();
  const auto& v = g.values[id];
  p->dtype = v.type.dtype;
  if (v.type.shape) {
    std::vector<int64_t> dims;
    for (const auto& d : *v.type.shape) dims.push_back(d.size);
    p->shape = dims;
  }
  *port = p.release();
  return kOk;
}
}  // namespace

OV_API ov_status_e ov_compiled_model_input_by_index(const ov_compiled_model_t* compiled_model, const size_t index,
                                                   ov_output_const_port_t** input_port) {
  if (!compiled_model || !input_port) return fail(kInvalidCParam, "ov_compiled_model_input_by_index: null argument");
  const auto& g = *compiled_model->graph;
  if (index >= g.inputs.size()) return fail(kOutOfBounds, "no input " + std::to_string(index));
  return make_port(g, g.inputs[index], input_port);
}

OV_API ov_status_e ov_compiled_model_output_by_index(const ov_compiled_model_t* compiled_model, const size_t index,
                                                    ov_output_const_port_t** output_port) {
  if (!compiled_model || !output_port) return fail(kInvalidCParam, "ov_compiled_model_output_by_index: null argument");
  const auto& g = *compiled_model->graph;
  if (index >= g.outputs.size()) return fail(kOutOfBounds, "no output " + std::to_string(index));
  return make_port(g, g.outputs[index], output_port);
}

// As OpenVINO 2023.1+: exactly one key/value pair after the device name.
OV_API ov_status_e ov_core_set_property(const ov_core_t* core, const char* device_name, ...) {
  if (!core) return fail(kInvalidCParam, "ov_core_set_property: null core");
  va_list args;
  va_start(args, device_name);
  const char* key = va_arg(args, const char*);
  const char* value = va_arg(args, const char*);
  va_end(args);
  if (!key || !value) return fail(kInvalidCParam, "ov_core_set_property: null key or value");
  std::string dev = device_name ? device_name : "";
  if (!dev.empty() && !has_device(dev))
    return fail(kGeneralError, "Device with \"" + dev + "\" name is not registered in the OpenVINO Runtime");
  auto* c = const_cast<ov_core_t*>(core);
  std::lock_guard<std::mutex> lk(c->mu);
  c->properties[dev][key] = value;
  return kOk;
}

OV_API ov_status_e ov_compiled_model_get_property(const ov_compiled_model_t* compiled_model, const char* property_key,
                                                 char** property_value) {
  if (!compiled_model || !property_key || !property_value) return fail(kInvalidCParam, "ov_compiled_model_get_property: null argument");
  std::string k = property_key;
  std::string v;
  if (k == "OPTIMAL_NUMBER_OF_INFER_REQUESTS") v = std::to_string(env_int("OV_DOUBLE_OPTIMAL_REQUESTS", 2));
  else if (k == "EXECUTION_DEVICES") v = compiled_model->device;
  else if (k == "PERFORMANCE_HINT") v = compiled_model->hint;
  else if (k == "NETWORK_NAME") v = compiled_model->graph->name;
  else return fail(kNotFound, "Unsupported property " + k + " by the compiled model");
  *property_value = dup(v);
  return kOk;
}

OV_API ov_status_e ov_compiled_model_create_infer_request(const ov_compiled_model_t* compiled_model,
                                                         ov_infer_request_t** infer_request) {
  if (!compiled_model || !infer_request) return fail(kInvalidCParam, "ov_compiled_model_create_infer_request: null argument");
  auto* r = new ov_infer_request;
  r->compiled = compiled_model;
  r->inputs.resize(compiled_model->graph->inputs.size());
  r->outputs.resize(compiled_model->graph->outputs.size());
  *infer_request = r;
  count([](Stats& s) { ++s.requests; });
  return kOk;
}

// ---- Ports ----

OV_API ov_status_e ov_const_port_get_shape(const ov_output_const_port_t* port, ov_shape_t* tensor_shape) {
  if (!port || !tensor_shape) return fail(kInvalidCParam, "ov_const_port_get_shape: null argument");
  if (!port->shape) return fail(kGeneralError, "get_shape was called on a descriptor::Tensor with dynamic shape");
  for (int64_t d : *port->shape)
    if (d < 0) return fail(kGeneralError, "get_shape was called on a descriptor::Tensor with dynamic shape");
  tensor_shape->rank = static_cast<int64_t>(port->shape->size());
  tensor_shape->dims = new int64_t[port->shape->size() + 1];
  std::copy(port->shape->begin(), port->shape->end(), tensor_shape->dims);
  return kOk;
}

OV_API ov_status_e ov_port_get_element_type(const ov_output_const_port_t* port, ov_element_type_e* tensor_type) {
  if (!port || !tensor_type) return fail(kInvalidCParam, "ov_port_get_element_type: null argument");
  *tensor_type = dtype_to_element(port->dtype);
  return kOk;
}

OV_API void ov_output_const_port_free(ov_output_const_port_t* port) { delete port; }

// ---- Tensors and shapes ----

OV_API ov_status_e ov_shape_create(const int64_t rank, const int64_t* dims, ov_shape_t* shape) {
  if (!shape || rank < 0 || (rank > 0 && !dims)) return fail(kInvalidCParam, "ov_shape_create: bad argument");
  shape->rank = rank;
  shape->dims = new int64_t[static_cast<size_t>(rank) + 1];
  for (int64_t i = 0; i < rank; ++i) {
    if (dims[i] < 0) {
      delete[] shape->dims;
      shape->dims = nullptr;
      return fail(kInvalidCParam, "ov_shape_create: negative dim");
    }
    shape->dims[i] = dims[i];
  }
  return kOk;
}

OV_API ov_status_e ov_shape_free(ov_shape_t* shape) {
  if (!shape) return fail(kInvalidCParam, "ov_shape_free: null argument");
  delete[] shape->dims;
  shape->dims = nullptr;
  return kOk;
}

namespace {
ov_status_e new_tensor(ov_element_type_e type, const ov_shape_t& shape, void* host, ov_tensor_t** tensor) {
  if (!tensor || shape.rank < 0 || (shape.rank > 0 && !shape.dims)) return fail(kInvalidCParam, "tensor: bad argument");
  auto impl = std::make_shared<TensorImpl>();
  if (!element_to_dtype(type, impl->dtype))
    return fail(kGeneralError, "tensor: element type " + std::to_string(type) + " is not supported by this double (" +
                                   (numbering_2024() ? "2024" : "2025") + " numbering)");
  impl->code = type;
  for (int64_t i = 0; i < shape.rank; ++i) {
    if (shape.dims[i] < 0) return fail(kInvalidCParam, "tensor: negative dim");
    impl->shape.push_back(shape.dims[i]);
  }
  impl->nbytes = element_count(impl->shape) * dlrt::dtype_size(impl->dtype);
  if (host) {
    impl->data = host;
  } else {
    impl->data = std::aligned_alloc(64, (impl->nbytes + 63) / 64 * 64 + 64);
    if (!impl->data) return fail(kGeneralError, "tensor: out of memory");
    impl->owned = true;
  }
  *tensor = new ov_tensor{impl};
  return kOk;
}
}  // namespace

OV_API ov_status_e ov_tensor_create_from_host_ptr(const ov_element_type_e type, const ov_shape_t shape, void* host_ptr,
                                                 ov_tensor_t** tensor) {
  if (!host_ptr) return fail(kInvalidCParam, "ov_tensor_create_from_host_ptr: null host pointer");
  return new_tensor(type, shape, host_ptr, tensor);
}

OV_API ov_status_e ov_tensor_create(const ov_element_type_e type, const ov_shape_t shape, ov_tensor_t** tensor) {
  return new_tensor(type, shape, nullptr, tensor);
}

OV_API ov_status_e ov_tensor_get_shape(const ov_tensor_t* tensor, ov_shape_t* shape) {
  if (!tensor || !shape) return fail(kInvalidCParam, "ov_tensor_get_shape: null argument");
  shape->rank = static_cast<int64_t>(tensor->impl->shape.size());
  shape->dims = new int64_t[tensor->impl->shape.size() + 1];
  std::copy(tensor->impl->shape.begin(), tensor->impl->shape.end(), shape->dims);
  return kOk;
}

OV_API ov_status_e ov_tensor_get_element_type(const ov_tensor_t* tensor, ov_element_type_e* type) {
  if (!tensor || !type) return fail(kInvalidCParam, "ov_tensor_get_element_type: null argument");
  *type = tensor->impl->code;
  return kOk;
}

OV_API ov_status_e ov_tensor_get_byte_size(const ov_tensor_t* tensor, size_t* byte_size) {
  if (!tensor || !byte_size) return fail(kInvalidCParam, "ov_tensor_get_byte_size: null argument");
  *byte_size = tensor->impl->nbytes;
  return kOk;
}

OV_API ov_status_e ov_tensor_data(const ov_tensor_t* tensor, void** data) {
  if (!tensor || !data) return fail(kInvalidCParam, "ov_tensor_data: null argument");
  *data = tensor->impl->data;
  return kOk;
}

OV_API void ov_tensor_free(ov_tensor_t* tensor) { delete tensor; }

// ---- Inference ----

OV_API ov_status_e ov_infer_request_set_input_tensor_by_index(ov_infer_request_t* infer_request, const size_t idx,
                                                             const ov_tensor_t* tensor) {
  if (!infer_request || !tensor) return fail(kInvalidCParam, "ov_infer_request_set_input_tensor_by_index: null argument");
  if (idx >= infer_request->inputs.size()) return fail(kOutOfBounds, "no input " + std::to_string(idx));
  const auto& g = *infer_request->compiled->graph;
  const auto& v = g.values[g.inputs[idx]];
  if (v.type.dtype != DType::kUndefined && tensor->impl->dtype != v.type.dtype)
    return fail(kParameterMismatch, "input '" + v.name + "' is " + dlrt::dtype_name(v.type.dtype) + ", got a " +
                                        dlrt::dtype_name(tensor->impl->dtype) + " tensor (element code " +
                                        std::to_string(tensor->impl->code) + ")");
  if (v.type.shape) {
    const auto& dims = *v.type.shape;
    bool ok = dims.size() == tensor->impl->shape.size();
    for (size_t i = 0; ok && i < dims.size(); ++i) ok = dims[i].size < 0 || dims[i].size == tensor->impl->shape[i];
    if (!ok) return fail(kParameterMismatch, "input '" + v.name + "': the tensor's shape does not match the compiled model's");
  }
  if (infer_request->busy.load()) return fail(kRequestBusy, "set_input_tensor on a request that is running");
  infer_request->inputs[idx] = tensor->impl;
  return kOk;
}

OV_API ov_status_e ov_infer_request_get_output_tensor_by_index(const ov_infer_request_t* infer_request, const size_t idx,
                                                              ov_tensor_t** tensor) {
  if (!infer_request || !tensor) return fail(kInvalidCParam, "ov_infer_request_get_output_tensor_by_index: null argument");
  if (idx >= infer_request->outputs.size()) return fail(kOutOfBounds, "no output " + std::to_string(idx));
  if (!infer_request->outputs[idx]) return fail(kGeneralError, "output " + std::to_string(idx) + " is not ready (no infer yet)");
  *tensor = new ov_tensor{infer_request->outputs[idx]};
  return kOk;
}

OV_API ov_status_e ov_infer_request_infer(ov_infer_request_t* infer_request) {
  if (!infer_request) return fail(kInvalidCParam, "ov_infer_request_infer: null argument");
  if (infer_request->busy.exchange(true)) {
    count([](Stats& s) { ++s.busy; });
    return fail(kRequestBusy, "Infer Request is busy (used by two threads at once)");
  }
  struct Release {
    ov_infer_request_t* r;
    ~Release() {
      r->busy.store(false);
      count([](Stats& s) { --s.parallel; });
    }
  } release{infer_request};
  long n = 0;
  count([&](Stats& s) {
    n = ++s.infers;
    s.max_parallel = std::max(s.max_parallel, ++s.parallel);
  });
  long at = env_int("OV_DOUBLE_INFER_FAIL_AT", 0), from = env_int("OV_DOUBLE_INFER_FAIL_FROM", 0);
  if ((at > 0 && n == at) || (from > 0 && n >= from))
    return fail(kGeneralError, "infer failed: device lost (OV_DOUBLE_INFER_FAIL, call " + std::to_string(n) + ")");

  if (env("OV_DOUBLE_INFER_CRASH") == "1") std::raise(SIGSEGV);
  if (env("OV_DOUBLE_INFER_HANG") == "1")
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  const bool wrong = env("OV_DOUBLE_INFER_WRONG") == "1";
  const ov_compiled_model* cm = infer_request->compiled;
  if (cm->imported_from && bytes_hash(cm->imported_from, cm->imported_size) != cm->imported_hash)
    return fail(kGeneralError, "infer failed: the bytes the model was imported from changed after the import "
                               "(OV_DOUBLE_IMPORT_ZERO_COPY: freed or reused by the caller)");
  std::vector<dlrt::RunValue> in;
  for (size_t i = 0; i < infer_request->inputs.size(); ++i) {
    const auto& t = infer_request->inputs[i];
    if (!t) return fail(kGeneralError, "input " + std::to_string(i) + " was not set");
    in.push_back(dlrt::RunValue::of(dlrt::Tensor::view(t->dtype, t->shape, t->data)));
  }
  auto out = cm->executor->run(std::move(in));
  if (!out.ok()) return fail(kGeneralError, "infer failed: " + out.status().message());
  for (size_t i = 0; i < out->size() && i < infer_request->outputs.size(); ++i) {
    const dlrt::RunValue& v = (*out)[i];
    if (v.kind != dlrt::RunValue::Kind::kTensor) return fail(kGeneralError, "output " + std::to_string(i) + " is not a tensor");
    const dlrt::Tensor& t = v.tensor;
    ov_shape_t shape{static_cast<int64_t>(t.rank()), const_cast<int64_t*>(t.shape().data())};
    ov_tensor_t* made = nullptr;
    ov_status_e st = new_tensor(dtype_to_element(t.dtype()), shape, nullptr, &made);
    if (st != kOk) return st;
    if (t.nbytes()) std::memcpy(made->impl->data, t.raw_data(), t.nbytes());
    if (wrong && t.dtype() == DType::kFloat32)
      for (int64_t k = 0; k < t.size(); ++k) static_cast<float*>(made->impl->data)[k] += 1.0f;
    infer_request->outputs[i] = made->impl;
    delete made;
  }
  return kOk;
}

OV_API void ov_infer_request_free(ov_infer_request_t* infer_request) { delete infer_request; }

// Every function of ov_api.h's tables exists here with exactly its type.
#ifdef OV_DOUBLE_OMIT_SYMBOL
extern "C" ov_status_e ov_core_import_model(const ov_core_t*, const char*, const size_t, const char*, ov_compiled_model_t**);
#endif
#define OV_DOUBLE_CHECK_SIGNATURE(name, ret, args) \
  static_assert(std::is_same_v<decltype(&::name), ret(*) args>, "ov_double: " #name " differs from ov_api.h");
DLRT_OV_VERSION_SYMBOLS(OV_DOUBLE_CHECK_SIGNATURE)
DLRT_OV_SYMBOLS(OV_DOUBLE_CHECK_SIGNATURE)
DLRT_OV_OPTIONAL_SYMBOLS(OV_DOUBLE_CHECK_SIGNATURE)
