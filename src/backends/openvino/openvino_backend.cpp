#include "backends/openvino/openvino_backend.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <unordered_set>

#include "backend/canary.h"
#include "backends/openvino/ov_api.h"
#include "core/large_alloc.h"
#include "core/logging.h"
#include "ir/onnx_export.h"
#include "runtime/blob_cache.h"

namespace dlrt::backend::openvino {

namespace {

constexpr const char* kBlobFormat = "openvino-export-v1";
constexpr char kBlobMagic[4] = {'D', 'L', 'O', 'V'};
constexpr uint32_t kBlobVersion = 1;
constexpr int kMaxProperties = 8;

std::string env_or(const char* name, const std::string& def = "") {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : def;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t e = std::min(s.find(sep, pos), s.size());
    if (e > pos) out.push_back(s.substr(pos, e - pos));
    pos = e + 1;
  }
  return out;
}

// Runs `cmd` through /bin/sh and returns its stdout lines (empty on any failure).
std::vector<std::string> command_lines(const std::string& cmd) {
  std::vector<std::string> out;
  FILE* f = ::popen(cmd.c_str(), "r");
  if (f == nullptr) return out;
  std::string text;
  char buf[1024];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0 && text.size() < 65536) text.append(buf, n);
  int rc = ::pclose(f);
  if (rc != 0) return out;
  for (auto& l : split(text, '\n'))
    if (!l.empty() && l[0] == '/') out.push_back(l);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Which ONNX ops OpenVINO's ONNX frontend converts (default domain), from its operator table.
// Ops with subgraphs, sequences, strings, randomness or training semantics stay on dlrt's CPU.
const std::unordered_set<std::string>& supported_ops() {
  static const std::unordered_set<std::string> ops = {
      "Abs", "Acos", "Acosh", "Add", "And", "ArgMax", "ArgMin", "Asin", "Asinh", "Atan", "Atanh",
      "AveragePool", "BatchNormalization", "BitShift", "BitwiseAnd", "BitwiseNot", "BitwiseOr", "BitwiseXor",
      "BlackmanWindow", "Cast", "CastLike", "Ceil", "Celu", "Clip", "Compress", "Concat", "Constant",
      "ConstantOfShape", "Conv", "ConvInteger", "ConvTranspose", "Cos", "Cosh", "CumSum", "DepthToSpace",
      "DequantizeLinear", "Div", "Dropout", "DynamicQuantizeLinear", "Einsum", "Elu", "Equal", "Erf", "Exp",
      "Expand", "EyeLike", "Flatten", "Floor", "GRU", "Gather", "GatherElements", "GatherND", "Gelu", "Gemm",
      "GlobalAveragePool", "GlobalLpPool", "GlobalMaxPool", "Greater", "GreaterOrEqual", "GridSample",
      "GroupNormalization", "HammingWindow", "HannWindow", "HardSigmoid", "HardSwish", "Hardmax", "Identity",
      "InstanceNormalization", "IsFinite", "IsInf", "IsNaN", "LRN", "LSTM", "LayerNormalization", "LeakyRelu",
      "Less", "LessOrEqual", "Log", "LogSoftmax", "LpNormalization", "MatMul", "MatMulInteger", "Max", "MaxPool",
      "MaxRoiPool", "Mean", "MeanVarianceNormalization", "Min", "Mish", "Mod", "Mul", "Neg", "NonMaxSuppression",
      "NonZero", "Not", "OneHot", "Or", "PRelu", "Pad", "Pow", "QLinearConv", "QLinearMatMul", "QuantizeLinear",
      "RNN", "Range", "Reciprocal", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
      "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare", "Relu", "Reshape", "Resize",
      "ReverseSequence", "RoiAlign", "Round", "STFT", "Scatter", "ScatterElements", "ScatterND", "Selu", "Shape",
      "Shrink", "Sigmoid", "Sign", "Sin", "Sinh", "Size", "Slice", "Softmax", "Softplus", "Softsign",
      "SpaceToDepth", "Split", "Sqrt", "Squeeze", "Sub", "Sum", "Tan", "Tanh", "ThresholdedRelu", "Tile", "TopK",
      "Transpose", "Trilu", "Unique", "Unsqueeze", "Upsample", "Where", "Xor", "DFT"};
  return ops;
}

// ---------------------------------------------------------------------------------------------
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

// ---------------------------------------------------------------------------------------------
// The loaded runtime; immutable once published (loaded_ is set).
struct Runtime {
  std::shared_ptr<DynamicLibrary> lib;
  OvSymbols s;
  OvOptionalSymbols opt;  // null pointers when absent
  OvNumbering numbering = OvNumbering::k2025;
  OvVersion version;
  ov_core_t* core = nullptr;  // one per process, never freed (the library is never unloaded)
  // Held across "set the core's precision, import": the core's settings are process-wide.
  mutable std::mutex import_mu;
  struct Dev {
    std::string name, full_name;
  };
  std::vector<Dev> devices;
  std::string devices_error;

  // "what failed: <status name> (<code>): <OpenVINO's last message>"
  Status error(StatusCode code, const std::string& what, ov_status_e st) const {
    std::string msg = what + ": OpenVINO status " + std::to_string(static_cast<int>(st));
    if (const char* info = s.ov_get_error_info(st)) msg += std::string(" (") + info + ")";
    if (opt.ov_get_last_err_msg) {
      // OpenVINO allocates the message for the caller, who frees it with ov_free.
      if (const char* last = opt.ov_get_last_err_msg()) {
        if (*last) msg += ": " + std::string(last);
        s.ov_free(last);
      }
    }
    return Status(code, msg);
  }

  std::string get_core_property(const std::string& device, const char* key) const {
    char* value = nullptr;
    if (s.ov_core_get_property(core, device.c_str(), key, &value) != OV_STATUS_OK || value == nullptr) return "";
    std::string v = value;
    s.ov_free(value);
    return v;
  }
};

// The bytes a compiled model was imported from. OpenVINO 2026.x imports
// without copying (the compiled model's weights point into these bytes; 2024.x
// and 2025.x copied them), so they must live exactly as long as the compiled
// model: freed only after it. 64-byte aligned, as OpenVINO's own buffers.
class ImportedBytes {
 public:
  ImportedBytes() = default;
  ImportedBytes(const ImportedBytes&) = delete;
  ImportedBytes& operator=(const ImportedBytes&) = delete;
  ~ImportedBytes() {
    if (p_) buffer_free(p_, cap_);
  }
  // A copy of `n` bytes at `src`; false when there is no memory for it.
  bool assign(const void* src, size_t n) {
    cap_ = (std::max<size_t>(n, 1) + 63) / 64 * 64;
    p_ = buffer_alloc(cap_, false);
    if (!p_) return false;
    std::memcpy(p_, src, n);
    size_ = n;
    return true;
  }
  const char* data() const { return static_cast<const char*>(p_); }
  size_t size() const { return size_; }

 private:
  void* p_ = nullptr;
  size_t size_ = 0, cap_ = 0;
};

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

struct OvExecutable : Executable {
  const Runtime* rt = nullptr;
  ImportedBytes imported;  // declared before `compiled`: destroyed after it
  ov_compiled_model_t* compiled = nullptr;
  std::string device;
  std::vector<DType> in_types, out_types;
  std::vector<ov_infer_request_t*> requests;  // all of them
  std::chrono::milliseconds timeout{60000};

  std::mutex mu;
  std::condition_variable cv;
  std::vector<ov_infer_request_t*> idle;  // guarded by mu

  ~OvExecutable() override {
    for (auto* r : requests) rt->s.ov_infer_request_free(r);
    if (compiled) rt->s.ov_compiled_model_free(compiled);
  }
};

// Holds one infer request of an executable's pool for one execute().
class RequestLease {
 public:
  explicit RequestLease(OvExecutable& e) : e_(e) {}
  ~RequestLease() {
    if (r_ == nullptr) return;
    {
      std::lock_guard<std::mutex> lk(e_.mu);
      e_.idle.push_back(r_);
    }
    e_.cv.notify_one();
  }
  bool acquire() {
    std::unique_lock<std::mutex> lk(e_.mu);
    if (!e_.cv.wait_for(lk, e_.timeout, [&] { return !e_.idle.empty(); })) return false;
    r_ = e_.idle.back();
    e_.idle.pop_back();
    return true;
  }
  ov_infer_request_t* get() const { return r_; }

 private:
  OvExecutable& e_;
  ov_infer_request_t* r_ = nullptr;
};

std::atomic<uint64_t> g_zero_copy_inputs{0};
std::atomic<uint64_t> g_copied_inputs{0};

DeviceType ov_device_type(const std::string& name) {
  if (name.rfind("CPU", 0) == 0) return DeviceType::kCpu;
  if (name.rfind("GPU", 0) == 0) return DeviceType::kGpu;
  if (name.rfind("NPU", 0) == 0) return DeviceType::kNpu;
  return DeviceType::kAccelerator;
}

// "GPU.1" -> 1, "GPU" -> 0.
int device_index(const std::string& name) {
  size_t dot = name.find('.');
  if (dot == std::string::npos) return 0;
  return std::atoi(name.c_str() + dot + 1);
}

class OpenVinoBackend final : public Backend {
 public:
  std::string name() const override { return "openvino"; }

  Availability is_available(bool refresh) override {
    std::lock_guard<std::mutex> lk(mu_);
    if (attempted_ && (availability_.available || !refresh)) return availability_;
    attempted_ = true;
    availability_ = load();
    return availability_;
  }

  std::vector<BackendDevice> devices(const std::vector<Device>& hardware) override {
    std::vector<BackendDevice> out;
    const Runtime* rt = runtime();
    if (rt == nullptr) return out;
    std::vector<const Device*> gpus, npus;
    const Device* cpu = nullptr;
    for (const auto& h : hardware) {
      if (h.is_virtual()) continue;
      bool intel = h.vendor_id == 0x8086 || h.vendor == "Intel";
      if (h.type == DeviceType::kCpu && cpu == nullptr) cpu = &h;
      if (h.type == DeviceType::kGpu && intel) gpus.push_back(&h);
      if (h.type == DeviceType::kNpu && intel) npus.push_back(&h);
    }
    bool have_gpu = false, have_npu = false;
    for (const auto& d : rt->devices) {
      BackendDevice bd;
      bd.backend = name();
      bd.name = d.name;
      bd.type = ov_device_type(d.name);
      size_t idx = static_cast<size_t>(std::max(0, device_index(d.name)));
      if (bd.type == DeviceType::kCpu && cpu) bd.hardware = *cpu;
      if (bd.type == DeviceType::kGpu && idx < gpus.size()) bd.hardware = *gpus[idx];
      if (bd.type == DeviceType::kNpu && idx < npus.size()) bd.hardware = *npus[idx];
      if (bd.hardware) bd.metadata = bd.hardware->metadata;
      else bd.metadata["discovered_by"] = name();
      if (!d.full_name.empty()) bd.metadata["full_device_name"] = d.full_name;
      have_gpu = have_gpu || bd.type == DeviceType::kGpu;
      have_npu = have_npu || bd.type == DeviceType::kNpu;
      out.push_back(std::move(bd));
    }
    // Ahead-of-time targets for machines without the hardware: compile only.
    auto add_virtual = [&](const char* n, DeviceType t) {
      BackendDevice bd;
      bd.backend = name();
      bd.name = n;
      bd.type = t;
      bd.is_virtual = true;
      bd.metadata["discovered_by"] = name();
      bd.metadata["is_virtual"] = "1";
      out.push_back(std::move(bd));
    };
    if (!have_npu) add_virtual("NPU", DeviceType::kNpu);
    if (!have_gpu) add_virtual("GPU", DeviceType::kGpu);
    return out;
  }

  std::vector<NodeSupport> supports(const ir::Graph& graph, const BackendDevice& device) override {
    std::vector<NodeSupport> out(graph.nodes.size());
    const Runtime* rt = runtime();
    const bool f64_ok = device.type == DeviceType::kCpu;
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      const ir::Node& n = graph.nodes[i];
      NodeSupport& r = out[i];
      if (rt == nullptr) {
        r.reason = "OpenVINO is unavailable: " + availability_reason();
        continue;
      }
      if (!(n.domain.empty() || n.domain == "ai.onnx")) {
        r.reason = "domain '" + n.domain + "' is not handed to OpenVINO";
        continue;
      }
      if (!supported_ops().count(n.op_type)) {
        r.reason = "op " + n.op_type + " is not handed to OpenVINO";
        continue;
      }
      if (!n.attributes.empty()) {
        bool has_graph = false;
        for (const auto& [k, a] : n.attributes) has_graph = has_graph || a.g || !a.graphs.empty();
        if (has_graph) {
          r.reason = "nodes with subgraphs stay on cpu";
          continue;
        }
      }
      std::string bad;
      auto check = [&](ir::ValueId id) {
        if (id < 0 || id >= static_cast<ir::ValueId>(graph.values.size()) || !bad.empty()) return;
        const ir::TypeInfo& t = graph.values[id].type;
        if (t.kind != ir::ValueKind::kTensor) bad = "value '" + graph.values[id].name + "' is not a tensor";
        else if (t.dtype == DType::kString) bad = "string tensors are not supported by OpenVINO";
        else if (t.dtype == DType::kFloat64 && !f64_ok) bad = "float64 is not supported on " + device.spec();
        else if (t.dtype != DType::kUndefined && !to_ov_element(rt->numbering, t.dtype))
          bad = std::string(dtype_name(t.dtype)) + " has no OpenVINO element type";
      };
      for (auto id : n.inputs) check(id);
      for (auto id : n.outputs) check(id);
      if (!bad.empty()) {
        r.reason = bad;
        continue;
      }
      r.supported = true;
    }
    return out;
  }

  Result<Blob> compile(const ir::Graph& subgraph, const BackendDevice& device,
                       const CompileOptions& options) override {
    DLRT_ASSIGN_OR_RETURN(const Runtime* rt, loaded());
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
    DLRT_ASSIGN_OR_RETURN(std::string onnx, ir::export_onnx(subgraph));

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
      BlobCache cache = BlobCache::from_env();
      if (cache.enabled()) cache_dir = cache.dir() + "/openvino";
    }
    std::vector<uint8_t> exported;
    if (!cache_dir.empty()) {
      auto with_cache = props;
      with_cache.emplace_back("CACHE_DIR", cache_dir);
      auto e = compile_export(*rt, model, device, with_cache);
      if (e.ok() && imports(*rt, *e, device.name)) exported = std::move(e).value();
      else DLRT_LOG(kInfo, "openvino: compiling " + device.spec() + " again without CACHE_DIR (" +
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

  Result<Executable*> init(const Blob& blob, const CompileOptions& options, const BackendDevice& device) override {
    if (device.is_virtual)
      return Status(StatusCode::kDeviceUnavailable,
                    device.spec() + " is a virtual device: it can compile ahead of time, never execute; run on a "
                                    "machine with the device or pick a real one (dlrt devices lists them)");
    DLRT_ASSIGN_OR_RETURN(const Runtime* rt, loaded());
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

    // The pool: OPTIMAL_NUMBER_OF_INFER_REQUESTS unless overridden.
    int pool = 0;
    std::string want = options.get("infer_requests", env_or("DLRT_OPENVINO_INFER_REQUESTS"));
    if (!want.empty()) {
      pool = std::atoi(want.c_str());
      if (pool <= 0 || pool > 1024) return InvalidArgument("openvino: infer_requests='" + want + "' is not 1..1024");
    } else {
      char* v = nullptr;
      if (s.ov_compiled_model_get_property(exe->compiled, "OPTIMAL_NUMBER_OF_INFER_REQUESTS", &v) == OV_STATUS_OK &&
          v != nullptr) {
        pool = std::atoi(v);
        s.ov_free(v);
      }
      pool = std::clamp(pool, 1, 64);
    }
    std::string timeout = options.get("request_timeout_ms", env_or("DLRT_OPENVINO_REQUEST_TIMEOUT_MS"));
    if (!timeout.empty()) {
      long ms = std::atol(timeout.c_str());
      if (ms <= 0) return InvalidArgument("openvino: request_timeout_ms='" + timeout + "' is not a positive number");
      exe->timeout = std::chrono::milliseconds(ms);
    }
    for (int i = 0; i < pool; ++i) {
      ov_infer_request_t* r = nullptr;
      st = s.ov_compiled_model_create_infer_request(exe->compiled, &r);
      if (st != OV_STATUS_OK || r == nullptr)
        return rt->error(StatusCode::kBackendError, "OpenVINO infer request " + std::to_string(i), st);
      exe->requests.push_back(r);
    }
    exe->idle = exe->requests;
    return static_cast<Executable*>(exe.release());
  }

  Result<std::vector<Tensor>> execute(Executable* exe_base, std::span<const Tensor> inputs) override {
    auto* exe = dynamic_cast<OvExecutable*>(exe_base);
    if (exe == nullptr) return InvalidArgument("openvino: execute given an executable it did not make");
    const Runtime* rt = exe->rt;
    const OvSymbols& s = rt->s;
    if (inputs.size() != exe->in_types.size())
      return InvalidArgument("openvino: expected " + std::to_string(exe->in_types.size()) + " inputs, got " +
                             std::to_string(inputs.size()));
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i].dtype() != exe->in_types[i])
        return InvalidArgument("openvino: input " + std::to_string(i) + " is " + dtype_name(inputs[i].dtype()) +
                               ", the compiled model takes " + dtype_name(exe->in_types[i]));

    RequestLease lease(*exe);
    if (!lease.acquire())
      return Status(StatusCode::kBackendError,
                    "openvino: no free infer request on " + exe->device + " within " +
                        std::to_string(exe->timeout.count()) + " ms (pool of " + std::to_string(exe->requests.size()) +
                        "); raise infer_requests or DLRT_OPENVINO_REQUEST_TIMEOUT_MS");
    ov_infer_request_t* req = lease.get();

    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor& t = inputs[i];
      ov_element_type_e et = *to_ov_element(rt->numbering, t.dtype());
      ov_shape_t shape{};
      ov_status_e st = s.ov_shape_create(static_cast<int64_t>(t.rank()), t.shape().data(), &shape);
      if (st != OV_STATUS_OK) return rt->error(StatusCode::kBackendError, "ov_shape_create", st);
      ov_tensor_t* ot = nullptr;
      void* p = const_cast<void*>(t.raw_data());
      // Zero-copy when the data is there and aligned as OpenVINO's own allocations are.
      bool zero_copy = p != nullptr && t.nbytes() > 0 && reinterpret_cast<uintptr_t>(p) % 64 == 0;
      st = zero_copy ? s.ov_tensor_create_from_host_ptr(et, shape, p, &ot) : s.ov_tensor_create(et, shape, &ot);
      s.ov_shape_free(&shape);
      if (st != OV_STATUS_OK || ot == nullptr) {
        if (ot) s.ov_tensor_free(ot);
        return rt->error(StatusCode::kBackendError, "OpenVINO input tensor " + std::to_string(i), st);
      }
      // Before OpenVINO reads our buffer (zero-copy) or we write its own: both must hold exactly
      // the tensor's bytes, or one side would read or write past the other's end.
      size_t vendor_bytes = 0;
      void* vendor_data = nullptr;
      st = s.ov_tensor_get_byte_size(ot, &vendor_bytes);
      if (st == OV_STATUS_OK && t.nbytes() > 0) st = s.ov_tensor_data(ot, &vendor_data);
      if (st != OV_STATUS_OK || vendor_bytes != t.nbytes() || (t.nbytes() > 0 && vendor_data == nullptr) ||
          (zero_copy && vendor_data != p)) {
        s.ov_tensor_free(ot);
        if (st != OV_STATUS_OK) return rt->error(StatusCode::kBackendError, "OpenVINO input tensor " + std::to_string(i), st);
        return Status(StatusCode::kBackendError,
                      "OpenVINO's tensor for input " + std::to_string(i) + " (" + dtype_name(t.dtype()) + " " +
                          shape_to_string(t.shape()) + ") holds " + std::to_string(vendor_bytes) + " bytes, not " +
                          std::to_string(t.nbytes()) + (zero_copy && vendor_data != p ? ", or not at our buffer" : "") +
                          ": the element types disagree; not handing it over");
      }
      if (!zero_copy && t.nbytes() > 0) std::memcpy(vendor_data, p, t.nbytes());
      (zero_copy ? g_zero_copy_inputs : g_copied_inputs).fetch_add(1, std::memory_order_relaxed);
      st = s.ov_infer_request_set_input_tensor_by_index(req, i, ot);
      s.ov_tensor_free(ot);  // the request keeps its own reference
      if (st != OV_STATUS_OK) return rt->error(StatusCode::kBackendError, "OpenVINO set input " + std::to_string(i), st);
    }
    ov_status_e st = s.ov_infer_request_infer(req);
    if (st != OV_STATUS_OK) return rt->error(StatusCode::kBackendError, "OpenVINO inference on " + exe->device, st);

    std::vector<Tensor> outputs;
    outputs.reserve(exe->out_types.size());
    for (size_t i = 0; i < exe->out_types.size(); ++i) {
      ov_tensor_t* ot = nullptr;
      st = s.ov_infer_request_get_output_tensor_by_index(req, i, &ot);
      if (st != OV_STATUS_OK || ot == nullptr)
        return rt->error(StatusCode::kBackendError, "OpenVINO output " + std::to_string(i), st);
      auto out = copy_out(*rt, ot, exe->out_types[i], i);
      s.ov_tensor_free(ot);
      if (!out.ok()) return out.status();
      outputs.push_back(std::move(out).value());
    }
    return outputs;
  }

  void destroy(Executable* exe) override { delete dynamic_cast<OvExecutable*>(exe); }

 private:
  // ---- loading ----
  Availability load() {
    Availability a;
    a.checked_at = std::chrono::system_clock::now();
    std::vector<std::string> tried;
    std::shared_ptr<DynamicLibrary> lib;
    Status st = Status::Ok();
    // Cheap places first; the python3 query only when they fail.
    for (bool with_python : {false, true}) {
      LibrarySearch search = openvino_library_search(with_python);
      if (with_python) {
        search.env_var.clear();
        // Only the folders the first pass did not already try (names stay: folders are searched for them).
        LibrarySearch first = openvino_library_search(false);
        std::set<std::string> seen(first.folders.begin(), first.folders.end());
        std::vector<std::string> rest;
        for (auto& f : search.folders)
          if (seen.insert(f).second) rest.push_back(f);
        search.folders = rest;
        if (search.folders.empty()) break;
      }
      std::vector<std::string> t;
      auto r = DynamicLibrary::open(search, &t);
      for (auto& entry : t)
        if (std::find(tried.begin(), tried.end(), entry) == tried.end()) tried.push_back(std::move(entry));
      if (r.ok()) {
        lib = std::move(r).value();
        break;
      }
    }
    a.tried = tried;
    if (!lib) {
      std::string msg = "OpenVINO runtime (libopenvino_c.so) not found or not loadable. Tried: ";
      for (size_t i = 0; i < tried.size(); ++i) msg += (i ? "; " : "") + tried[i];
      a.reason = msg;
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
    st = start_runtime(*rt);
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
        BlobCache cache = BlobCache::from_env();
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
    runtime_ = std::move(rt);
    loaded_.store(runtime_.get(), std::memory_order_release);
    return a;
  }

  static Status start_runtime(Runtime& rt) {
    const DynamicLibrary& lib = *rt.lib;
    OvVersionSymbols vs;
    DLRT_RETURN_IF_ERROR(vs.resolve(lib));
    ov_version_t v{};
    ov_status_e st = vs.ov_get_openvino_version(&v);
    if (st != OV_STATUS_OK || v.buildNumber == nullptr)
      return Status(StatusCode::kDeviceUnavailable,
                    lib.path() + ": ov_get_openvino_version failed (status " + std::to_string(static_cast<int>(st)) + ")");
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

  // The numbering chosen from the version must agree with the library: byte sizes of 16-element
  // tensors of a few types.
  static Status check_numbering(const Runtime& rt) {
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
        result = Status(StatusCode::kDeviceUnavailable,
                        "OpenVINO " + rt.version.build + " does not use the " +
                            (rt.numbering == OvNumbering::k2024 ? "2024" : "2025") +
                            " element-type numbering its version implies: element code " + std::to_string(code) +
                            " (" + dtype_name(dt) + ") gives " + std::to_string(got) + " bytes for 16 elements, not " +
                            std::to_string(bytes) + "; refusing to guess");
        break;
      }
    }
    rt.s.ov_shape_free(&shape);
    return result;
  }

  const Runtime* runtime() {
    const Runtime* rt = loaded_.load(std::memory_order_acquire);
    if (rt) return rt;
    is_available(false);
    return loaded_.load(std::memory_order_acquire);
  }

  Result<const Runtime*> loaded() {
    if (const Runtime* rt = runtime()) return rt;
    return Status(StatusCode::kDeviceUnavailable, "backend 'openvino' is unavailable: " + availability_reason());
  }

  std::string availability_reason() {
    Availability a = is_available(false);
    return a.reason + (a.fix.empty() ? "" : ". Fix: " + a.fix);
  }

  // Compiles `model` for `device` with `props` and returns OpenVINO's export of it.
  static Result<std::vector<uint8_t>> compile_export(const Runtime& rt, ov_model_t* model, const BackendDevice& device,
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
        s.ov_core_compile_model(rt.core, model, device.name.c_str(), 2 * props.size(), &compiled, a[0], a[1], a[2],
                                a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15]);
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
  static std::string inference_precision(const CompileOptions& options, const BackendDevice& device) {
    return options.get("inference_precision", device.type == DeviceType::kCpu ? "f32" : "");
  }

  // The PERFORMANCE_HINT: `performance_hint` when given (a non-LATENCY one is refused on the CPU
  // before this), else `default_performance_hint` (the server's THROUGHPUT) except on the CPU
  // device, where such blobs crash OpenVINO 2025.4.1 on import (docs/openvino.md), else LATENCY.
  static std::string performance_hint(const CompileOptions& options, const BackendDevice& device) {
    if (std::string h = options.get("performance_hint"); !h.empty()) return h;
    if (std::string h = options.get("default_performance_hint"); !h.empty() && device.type != DeviceType::kCpu) return h;
    return "LATENCY";
  }

  // A compiled model's property as text; empty when OpenVINO does not report it.
  static std::string compiled_property(const Runtime& rt, const ov_compiled_model_t* compiled, const char* key) {
    char* v = nullptr;
    if (rt.s.ov_compiled_model_get_property(compiled, key, &v) != OV_STATUS_OK || v == nullptr) return "";
    std::string out(v);
    rt.s.ov_free(v);
    return out;
  }

  static bool imports(const Runtime& rt, const std::vector<uint8_t>& exported, const std::string& device) {
    ov_compiled_model_t* c = nullptr;
    ov_status_e st = rt.s.ov_core_import_model(rt.core, reinterpret_cast<const char*>(exported.data()), exported.size(),
                                               device.c_str(), &c);
    if (c) rt.s.ov_compiled_model_free(c);
    return st == OV_STATUS_OK && c != nullptr;
  }

  // Fixes the model's inputs to the partition's static shapes, where every one is known.
  static Status reshape_static(const Runtime& rt, ov_model_t* model, const ir::Graph& g) {
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
    if (st != OV_STATUS_OK) return rt.error(StatusCode::kBackendError, "OpenVINO reshape to static input shapes", st);
    return Status::Ok();
  }

  static Result<BlobHeader> parse_header(const Blob& blob) {
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

  static Result<Tensor> copy_out(const Runtime& rt, ov_tensor_t* ot, DType want, size_t index) {
    const OvSymbols& s = rt.s;
    ov_shape_t shape{};
    ov_status_e st = s.ov_tensor_get_shape(ot, &shape);
    if (st != OV_STATUS_OK) return rt.error(StatusCode::kBackendError, "OpenVINO output shape", st);
    Shape dims;
    if (shape.rank < 0 || shape.rank > 64 || (shape.rank > 0 && shape.dims == nullptr)) {
      s.ov_shape_free(&shape);
      return Status(StatusCode::kBackendError, "OpenVINO output " + std::to_string(index) + " has an invalid shape");
    }
    dims.assign(shape.dims, shape.dims + shape.rank);
    s.ov_shape_free(&shape);
    ov_element_type_e et = 0;
    st = s.ov_tensor_get_element_type(ot, &et);
    if (st != OV_STATUS_OK) return rt.error(StatusCode::kBackendError, "OpenVINO output element type", st);
    auto dt = from_ov_element(rt.numbering, et);
    if (!dt || *dt != want)
      return Status(StatusCode::kBackendError, "OpenVINO output " + std::to_string(index) + " has element code " +
                                                   std::to_string(et) + ", expected " + dtype_name(want));
    DLRT_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(want, dims));
    size_t bytes = 0;
    void* src = nullptr;
    if ((st = s.ov_tensor_get_byte_size(ot, &bytes)) != OV_STATUS_OK ||
        (st = s.ov_tensor_data(ot, &src)) != OV_STATUS_OK)
      return rt.error(StatusCode::kBackendError, "OpenVINO output data", st);
    if (bytes != t.nbytes() || (bytes > 0 && src == nullptr))
      return Status(StatusCode::kBackendError, "OpenVINO output " + std::to_string(index) + " holds " +
                                                   std::to_string(bytes) + " bytes for shape " + shape_to_string(dims) +
                                                   ", expected " + std::to_string(t.nbytes()));
    if (bytes) std::memcpy(t.raw_data(), src, bytes);
    return t;
  }

  std::mutex mu_;  // guards attempted_, availability_, runtime_ (writes)
  bool attempted_ = false;
  Availability availability_;
  std::unique_ptr<Runtime> runtime_;        // set once, never reset (pointers into it are in use)
  std::atomic<const Runtime*> loaded_{nullptr};
};

}  // namespace

std::vector<std::string> python_site_packages() {
  if (env_or("DLRT_OPENVINO_NO_PYTHON") == "1") return {};
  // Asked once per (PATH, VIRTUAL_ENV): a failed load is retried at every session create.
  static std::mutex mu;
  static std::map<std::string, std::vector<std::string>> answers;
  std::string key = env_or("PATH") + "\n" + env_or("VIRTUAL_ENV");
  std::lock_guard<std::mutex> lk(mu);
  if (auto it = answers.find(key); it != answers.end()) return it->second;
  return answers[key] = command_lines(
      "command -v python3 >/dev/null 2>&1 && timeout 5 python3 -c "
      "'import site, sysconfig; p = sysconfig.get_paths(); print(p[\"purelib\"]); print(p[\"platlib\"]); "
      "print(site.getusersitepackages())' 2>/dev/null");
}

LibrarySearch openvino_library_search(bool with_python) {
  LibrarySearch s;
  s.what = "OpenVINO runtime (libopenvino_c.so)";
  s.env_var = "OPENVINO_LIB_PATH";
  s.names = {"libopenvino_c.so"};
  // OpenVINO's C++ core must bind its C++ runtime symbols to its own libstdc++, never to copies
  // a host program exports: with 2025.4.1, binding std::string members that the dlrt executable
  // exports aborted its IR frontend (free(): invalid pointer) while importing some models.
  s.own_symbols_first = true;
  // Versioned sonames (libopenvino_c.so.2541) in the loader's folders.
  for (const auto& d : split(env_or("LD_LIBRARY_PATH"), ':')) s.folders.push_back(d);
  auto add_site = [&](const std::string& site) { s.folders.push_back(site + "/openvino/libs"); };
  if (with_python)
    for (const auto& site : python_site_packages()) add_site(site);
  const std::string py = "/lib/python3*/site-packages";
  for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"})
    if (std::string v = env_or(var); !v.empty()) add_site(v + py);
  if (std::string home = env_or("HOME"); !home.empty()) {
    add_site(home + "/.local" + py);
    add_site(home + "/venv" + py);
    add_site(home + "/.venv" + py);
    add_site(home + "/.pyenv/versions/*" + py);
  }
  add_site("/usr/local" + py);
  add_site("/usr/local/lib/python3*/dist-packages");
  add_site("/usr/lib/python3/dist-packages");
  s.folders.push_back("/opt/intel/openvino*/runtime/lib/intel64");
  s.folders.push_back("/usr/lib/x86_64-linux-gnu");
  s.folders.push_back("/usr/local/lib");
  s.fix = "install OpenVINO (pip install openvino, or Intel's apt/yum packages or archive), or set "
          "OPENVINO_LIB_PATH to libopenvino_c.so or the folder holding it (a pip wheel's "
          "site-packages/openvino/libs)";
  return s;
}

std::shared_ptr<Backend> make_openvino_backend() { return std::make_shared<OpenVinoBackend>(); }

OpenVinoStats openvino_stats() {
  return {g_zero_copy_inputs.load(std::memory_order_relaxed), g_copied_inputs.load(std::memory_order_relaxed)};
}

}  // namespace dlrt::backend::openvino
