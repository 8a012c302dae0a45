#include "backends/openvino/ov_compile.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "backends/openvino/ov_library.h"
#include "core/logging.h"
#include "ir/onnx_export.h"
#include "backend/blob_cache.h"

namespace dlrt::backend::openvino {

namespace {

constexpr char kBlobMagic[4] = {'D', 'L', 'O', 'V'};
constexpr uint32_t kBlobVersion = 1;
constexpr int kMaxProperties = 8;

// Blob layout: "DLOV" u32 version u32 n_inputs u32 n_outputs, u32+bytes OpenVINO build,
// u32+bytes device name, then OpenVINO's exported model.
void put_u32(std::vector<uint8_t>& out, uint32_t v) {
  uint8_t b[4];
  std::memcpy(b, &v, 4);
  out.insert(out.end(), b, b + 4);
}
void put_str(std::vector<uint8_t>& out, const std::string& s) {
  put_u32(out, static_cast<uint32_t>(s.size()));
  out.insert(out.end(), s.begin(), s.end());
}
struct BlobReader {
  const std::vector<uint8_t>& d;
  size_t at = 0;
  bool ok = true;
  uint32_t u32() {
    uint32_t v = 0;
    if (at + 4 > d.size()) {
      ok = false;
      return 0;
    }
    std::memcpy(&v, d.data() + at, 4);
    at += 4;
    return v;
  }
  std::string str() {
    uint32_t n = u32();
    if (!ok || n > d.size() - at) {
      ok = false;
      return "";
    }
    std::string s(reinterpret_cast<const char*>(d.data()) + at, n);
    at += n;
    return s;
  }
};

struct BlobHeader {
  uint32_t n_inputs = 0, n_outputs = 0;
  std::string build, device;
  size_t payload_at = 0;
};

// Compiles `model` for `device` with `props` and returns OpenVINO's export of it.
Result<std::vector<uint8_t>> compile_export(const Runtime& rt, ov_model_t* model, const BackendDevice& device,
                                            const std::vector<std::pair<std::string, std::string>>& props) {
  const OvSymbols& s = rt.s;
  if (props.size() > kMaxProperties)
    return InvalidArgument("openvino: at most " + std::to_string(kMaxProperties) + " compile properties");
  const char* a[2 * kMaxProperties] = {};
  for (size_t i = 0; i < props.size(); ++i) {
    a[2 * i] = props[i].first.c_str();
    a[2 * i + 1] = props[i].second.c_str();
  }
  ov_compiled_model_t* compiled = nullptr;
  // Unused trailing slots are never read: the callee reads property_args_size values.
  ov_status_e st =
      s.ov_core_compile_model(rt.core, model, device.name.c_str(), 2 * props.size(), &compiled, a[0], a[1], a[2], a[3],
                              a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15]);
  if (st != OV_STATUS_OK || compiled == nullptr)
    return rt.error(StatusCode::kBackendError, "OpenVINO compile for " + device.spec() + " failed", st);
  struct CompiledGuard {
    const OvSymbols& s;
    ov_compiled_model_t* c;
    ~CompiledGuard() { s.ov_compiled_model_free(c); }
  } compiled_guard{s, compiled};

  // Export to a temporary file (the C API exports to a path), then read it back.
  std::string tmpl = env_or("TMPDIR", "/tmp") + "/dlrt-openvino-XXXXXX";
  std::vector<char> path(tmpl.begin(), tmpl.end());
  path.push_back('\0');
  int fd = ::mkstemp(path.data());
  if (fd < 0) return IoError("openvino: cannot create a temporary file in " + env_or("TMPDIR", "/tmp"));
  ::close(fd);
  st = s.ov_compiled_model_export_model(compiled, path.data());
  std::vector<uint8_t> exported;
  if (st == OV_STATUS_OK) {
    std::ifstream f(path.data(), std::ios::binary);
    exported.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  ::unlink(path.data());
  if (st != OV_STATUS_OK) return rt.error(StatusCode::kBackendError, "OpenVINO export for " + device.spec(), st);
  if (exported.empty()) return Status(StatusCode::kBackendError, "OpenVINO exported an empty model");
  return exported;
}

// The INFERENCE_PRECISION_HINT for a compile or an import: the `inference_precision` option,
// else f32 on the CPU (OpenVINO's own default there is bf16 where the CPU has it), else the
// device's default.
std::string inference_precision(const CompileOptions& options, const BackendDevice& device) {
  return options.get("inference_precision", device.type == DeviceType::kCpu ? "f32" : "");
}

// The PERFORMANCE_HINT: `performance_hint` when given (a non-LATENCY one is refused on the CPU
// before this), else `default_performance_hint` (the server's THROUGHPUT) except on the CPU
// device, where such blobs crash OpenVINO 2025.4.1 on import (docs/openvino.md), else LATENCY.
std::string performance_hint(const CompileOptions& options, const BackendDevice& device) {
  if (std::string h = options.get("performance_hint"); !h.empty()) return h;
  if (std::string h = options.get("default_performance_hint"); !h.empty() && device.type != DeviceType::kCpu) return h;
  return "LATENCY";
}

// A compiled model's property as text; empty when OpenVINO does not report it.
std::string compiled_property(const Runtime& rt, const ov_compiled_model_t* compiled, const char* key) {
  char* v = nullptr;
  if (rt.s.ov_compiled_model_get_property(compiled, key, &v) != OV_STATUS_OK || v == nullptr) return "";
  std::string out(v);
  rt.s.ov_free(v);
  return out;
}

bool imports(const Runtime& rt, const std::vector<uint8_t>& exported, const std::string& device) {
  ov_compiled_model_t* c = nullptr;
  ov_status_e st = rt.s.ov_core_import_model(rt.core, reinterpret_cast<const char*>(exported.data()), exported.size(),
                                             device.c_str(), &c);
  if (c) rt.s.ov_compiled_model_free(c);
  return st == OV_STATUS_OK && c != nullptr;
}

// Fixes the model's inputs to the partition's shapes, where every one is known.
Status reshape_static(const Runtime& rt, ov_model_t* model, const ir::Graph& g) {
  if (!rt.s.ov_model_is_dynamic(model)) return Status::Ok();
  std::vector<std::vector<int64_t>> shapes;
  for (auto id : g.inputs) {
    const auto& shp = g.values[id].type.shape;
    if (!shp) return Status::Ok();
    std::vector<int64_t> dims;
    for (const auto& d : *shp) {
      if (!d.is_static()) return Status::Ok();  // dynamic: let the device decide
      dims.push_back(d.size);
    }
    shapes.push_back(std::move(dims));
  }
  if (shapes.empty()) return Status::Ok();
  std::vector<ov_partial_shape_t> ps(shapes.size());
  std::vector<size_t> idx(shapes.size());
  size_t made = 0;
  ov_status_e st = OV_STATUS_OK;
  for (; made < shapes.size() && st == OV_STATUS_OK; ++made) {
    idx[made] = made;
    st = rt.s.ov_partial_shape_create_static(static_cast<int64_t>(shapes[made].size()), shapes[made].data(), &ps[made]);
    if (st != OV_STATUS_OK) break;
  }
  if (st == OV_STATUS_OK) st = rt.s.ov_model_reshape_by_port_indexes(model, idx.data(), ps.data(), ps.size());
  for (size_t i = 0; i < made; ++i) rt.s.ov_partial_shape_free(&ps[i]);
  if (st != OV_STATUS_OK) return rt.error(StatusCode::kBackendError, "OpenVINO reshape to input shapes", st);
  return Status::Ok();
}

Result<BlobHeader> parse_header(const Blob& blob) {
  auto bad = [](const std::string& why) {
    return Status(StatusCode::kBackendError, "openvino blob is corrupt (" + why + "): recompile");
  };
  if (blob.data.size() < 4 || std::memcmp(blob.data.data(), kBlobMagic, 4) != 0) return bad("no DLOV magic");
  BlobReader r{blob.data, 4};
  BlobHeader h;
  uint32_t version = r.u32();
  if (r.ok && version != kBlobVersion) return bad("layout version " + std::to_string(version));
  h.n_inputs = r.u32();
  h.n_outputs = r.u32();
  h.build = r.str();
  h.device = r.str();
  if (!r.ok) return bad("truncated header");
  if (r.at >= blob.data.size()) return bad("no model bytes");
  h.payload_at = r.at;
  return h;
}

}  // namespace

Result<Blob> compile_blob(const Runtime& rt_ref, const ir::Graph& subgraph, const BackendDevice& device,
                          const CompileOptions& options) {
  const Runtime* rt = &rt_ref;
  // Known problem (docs/openvino.md): a CPU blob compiled with a throughput
  // hint aborts OpenVINO 2025.4.1 when imported in dlrt's process. Refuse it
  // with a clear error rather than crash later.
  if (const std::string hint = options.get("performance_hint", "LATENCY");
      device.type == DeviceType::kCpu && hint != "LATENCY")
    return InvalidArgument("performance_hint=" + hint + " is refused on " + device.spec() +
                           ": importing such a blob crashes OpenVINO 2025.4.1 in this process (see "
                           "docs/openvino.md, Known problem); use the default LATENCY");
  const OvSymbols& s = rt->s;
  if (device.name.empty()) return InvalidArgument("openvino: no device named for compile");
  for (auto id : subgraph.inputs) {
    DType t = subgraph.values[id].type.dtype;
    if (!to_ov_element(rt->numbering, t))
      return Unsupported("openvino: partition input '" + subgraph.values[id].name + "' has type " + dtype_name(t) +
                         ", which OpenVINO cannot take");
  }
  DLRT_ASSIGN_OR_RETURN(std::string onnx, ir::export_onnx(subgraph, 8, ir::InternalAttributes::kDrop));

  ov_model_t* model = nullptr;
  ov_status_e st = s.ov_core_read_model_from_memory_buffer(rt->core, onnx.data(), onnx.size(), nullptr, &model);
  if (st != OV_STATUS_OK || model == nullptr)
    return rt->error(StatusCode::kUnsupported, "OpenVINO could not read the partition (ONNX)", st);
  struct ModelGuard {
    const OvSymbols& s;
    ov_model_t* m;
    ~ModelGuard() { s.ov_model_free(m); }
  } model_guard{s, model};

  size_t n_model_inputs = 0;
  st = s.ov_model_inputs_size(model, &n_model_inputs);
  if (st != OV_STATUS_OK) return rt->error(StatusCode::kBackendError, "ov_model_inputs_size", st);
  if (n_model_inputs != subgraph.inputs.size())
    return Status(StatusCode::kBackendError, "OpenVINO sees " + std::to_string(n_model_inputs) +
                                                 " model inputs, the partition has " +
                                                 std::to_string(subgraph.inputs.size()));
  DLRT_RETURN_IF_ERROR(reshape_static(*rt, model, subgraph));

  // Properties: key/value pairs for the variadic ov_core_compile_model.
  std::vector<std::pair<std::string, std::string>> props;
  props.emplace_back("PERFORMANCE_HINT", performance_hint(options, device));
  std::string precision = inference_precision(options, device);
  if (!precision.empty()) props.emplace_back("INFERENCE_PRECISION_HINT", precision);
  for (const auto& [k, v] : options.values)
    if (k.rfind("ov.", 0) == 0 && k.size() > 3) props.emplace_back(k.substr(3), v);
  // OpenVINO's CACHE_DIR inside dlrt's cache. Off on the CPU by default: dlrt's blob cache
  // already keeps the compiled model, and (2025.4) a model OpenVINO loaded from its own cache
  // exports a blob ov_core_import_model rejects. Elsewhere the export is checked by importing
  // it, and compiled again without CACHE_DIR when that fails.
  std::string cache_dir;
  std::string want_cache = options.get("openvino_cache_dir", device.type == DeviceType::kCpu ? "0" : "1");
  if (!device.is_virtual && want_cache == "1") {
    BlobCache cache = configured_blob_cache();
    if (cache.enabled()) cache_dir = cache.dir() + "/openvino";
  }
  std::vector<uint8_t> exported;
  if (!cache_dir.empty()) {
    auto with_cache = props;
    with_cache.emplace_back("CACHE_DIR", cache_dir);
    auto e = compile_export(*rt, model, device, with_cache);
    if (e.ok() && imports(*rt, *e, device.name))
      exported = std::move(e).value();
    else
      DLRT_LOG(kInfo, "openvino: compiling " + device.spec() + " again without CACHE_DIR (" +
                          (e.ok() ? std::string("its export did not import") : e.status().message()) + ")");
  }
  if (exported.empty()) {
    DLRT_ASSIGN_OR_RETURN(exported, compile_export(*rt, model, device, props));
  }

  Blob blob;
  blob.format = kBlobFormat;
  blob.data.insert(blob.data.end(), kBlobMagic, kBlobMagic + 4);
  put_u32(blob.data, kBlobVersion);
  put_u32(blob.data, static_cast<uint32_t>(subgraph.inputs.size()));
  put_u32(blob.data, static_cast<uint32_t>(subgraph.outputs.size()));
  put_str(blob.data, rt->version.build);
  put_str(blob.data, device.name);
  blob.data.insert(blob.data.end(), exported.begin(), exported.end());
  return blob;
}

Result<std::unique_ptr<OvExecutable>> import_blob(const Runtime& rt_ref, const Blob& blob,
                                                  const CompileOptions& options, const BackendDevice& device) {
  const Runtime* rt = &rt_ref;
  const OvSymbols& s = rt->s;
  if (blob.format != kBlobFormat)
    return Status(StatusCode::kBackendError, "blob format '" + blob.format + "' is not " + kBlobFormat + ": recompile");
  DLRT_ASSIGN_OR_RETURN(BlobHeader h, parse_header(blob));
  if (h.build != rt->version.build)
    return Status(StatusCode::kBackendError, "blob was compiled by OpenVINO " + h.build + ", this process loaded " +
                                                 rt->version.build + ": recompile");
  if (h.device != device.name)
    return Status(StatusCode::kBackendError,
                  "blob was compiled for " + h.device + ", not " + device.name + ": recompile");

  auto exe = std::make_unique<OvExecutable>();
  exe->rt = rt;
  exe->device = device.spec();
  // The executable keeps its own copy of the payload: the blob is the caller's and may be
  // freed after init, while OpenVINO 2026.x keeps reading the bytes it imported.
  if (!exe->imported.assign(blob.data.data() + h.payload_at, blob.data.size() - h.payload_at))
    return Status(StatusCode::kOutOfMemory, "openvino: no memory for the " +
                                                std::to_string(blob.data.size() - h.payload_at) +
                                                "-byte compiled model of " + device.spec());
  // An exported model does not carry the inference precision it was compiled with: imported
  // as is, OpenVINO's CPU plugin runs it at the device default, bf16 on CPUs with AMX or
  // AVX512-BF16. The precision is a core setting at import time, so set it first, and check
  // what the imported model reports.
  const std::string precision = inference_precision(options, device);
  ov_status_e st = OV_STATUS_OK;
  {
    std::lock_guard<std::mutex> lk(rt->import_mu);
    if (!precision.empty()) {
      st = s.ov_core_set_property(rt->core, device.name.c_str(), "INFERENCE_PRECISION_HINT", precision.c_str());
      if (st != OV_STATUS_OK)
        return rt->error(StatusCode::kBackendError,
                         "OpenVINO refused inference precision '" + precision + "' on " + device.spec(), st);
    }
    st = s.ov_core_import_model(rt->core, exe->imported.data(), exe->imported.size(), device.name.c_str(),
                                &exe->compiled);
  }
  if (st != OV_STATUS_OK || exe->compiled == nullptr)
    return rt->error(StatusCode::kBackendError, "OpenVINO import of the blob on " + device.spec() + " failed", st);
  if (!precision.empty()) {
    std::string got = compiled_property(*rt, exe->compiled, "INFERENCE_PRECISION_HINT");
    if (!got.empty() && got != precision)
      return Status(StatusCode::kBackendError, "OpenVINO imported the blob on " + device.spec() + " at precision " +
                                                   got + ", not the requested " + precision);
  }

  size_t n_in = 0, n_out = 0;
  if ((st = s.ov_compiled_model_inputs_size(exe->compiled, &n_in)) != OV_STATUS_OK ||
      (st = s.ov_compiled_model_outputs_size(exe->compiled, &n_out)) != OV_STATUS_OK)
    return rt->error(StatusCode::kBackendError, "OpenVINO compiled model ports", st);
  if (n_in != h.n_inputs || n_out != h.n_outputs)
    return Status(StatusCode::kBackendError, "imported model has " + std::to_string(n_in) + " inputs and " +
                                                 std::to_string(n_out) + " outputs, the partition " +
                                                 std::to_string(h.n_inputs) + " and " + std::to_string(h.n_outputs));
  for (size_t i = 0; i < n_in + n_out; ++i) {
    bool is_in = i < n_in;
    ov_output_const_port_t* port = nullptr;
    st = is_in ? s.ov_compiled_model_input_by_index(exe->compiled, i, &port)
               : s.ov_compiled_model_output_by_index(exe->compiled, i - n_in, &port);
    if (st != OV_STATUS_OK || port == nullptr) return rt->error(StatusCode::kBackendError, "OpenVINO port", st);
    ov_element_type_e et = 0;
    st = s.ov_port_get_element_type(port, &et);
    s.ov_output_const_port_free(port);
    if (st != OV_STATUS_OK) return rt->error(StatusCode::kBackendError, "OpenVINO port element type", st);
    auto dt = from_ov_element(rt->numbering, et);
    if (!dt)
      return Status(StatusCode::kUnsupported, std::string("OpenVINO ") + (is_in ? "input " : "output ") +
                                                  std::to_string(is_in ? i : i - n_in) + " has element type " +
                                                  std::to_string(et) + ", which dlrt has no dtype for");
    (is_in ? exe->in_types : exe->out_types).push_back(*dt);
  }
  return exe;
}

}  // namespace dlrt::backend::openvino
