#include "backend/plugin_backend.h"

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "core/env.h"
#include "ir/onnx_export.h"

namespace dlrt::backend {

// The table must match plugin.h exactly: a drifted signature is a compile error here.
#define DLRT_PLUGIN_CHECK_SIGNATURE_(name, ret, args) \
  static_assert(std::is_same_v<decltype(&::name), ret(*) args>, #name " does not match plugin.h");
DLRT_PLUGIN_SYMBOLS(DLRT_PLUGIN_CHECK_SIGNATURE_)
#undef DLRT_PLUGIN_CHECK_SIGNATURE_

namespace {

#define DLRT_PLUGIN_VERSION_SYMBOL(X) X(dlrt_plugin_api_version, uint32_t, (void))
DLRT_DYNAMIC_SYMBOL_TABLE(PluginVersionSymbol, DLRT_PLUGIN_VERSION_SYMBOL);

constexpr size_t kErrSize = 2048;
constexpr size_t kHeaderSize = 8;  // u32 num_inputs, u32 num_outputs ahead of the plugin's blob

// A plugin's error code and message as a Status.
Status plugin_status(int code, const char* err, const std::string& context) {
  std::string msg = context + ": " + (err[0] ? err : "no message from the plugin");
  switch (code) {
    case DLRT_PLUGIN_ERR_INVALID_ARGUMENT: return InvalidArgument(msg);
    case DLRT_PLUGIN_ERR_UNSUPPORTED: return Unsupported(msg);
    case DLRT_PLUGIN_ERR_DEVICE_UNAVAILABLE: return Status(StatusCode::kDeviceUnavailable, msg);
    case DLRT_PLUGIN_ERR_OUT_OF_MEMORY: return Status(StatusCode::kOutOfMemory, msg);
    default: return Status(StatusCode::kBackendError, msg + " (plugin error " + std::to_string(code) + ")");
  }
}

bool valid_plugin_name(const std::string& n) {
  if (n.empty() || n.size() > 64) return false;
  for (char c : n)
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_'))
      return false;
  return true;
}

struct PluginExecutable : Executable {
  void* handle = nullptr;
  uint32_t num_inputs = 0;
  uint32_t num_outputs = 0;
  int32_t max_runs = 0;
};

// dlrt's side of dlrt_plugin_output_allocator: allocates each output once.
struct OutputSink {
  std::vector<Tensor> tensors;
  std::vector<bool> made;

  static void* allocate(void* ctx, int32_t index, int32_t dtype, int32_t rank, const int64_t* dims) noexcept {
    auto* self = static_cast<OutputSink*>(ctx);
    if (self == nullptr || index < 0 || static_cast<size_t>(index) >= self->tensors.size() || self->made[index])
      return nullptr;
    if (!dtype_is_valid(dtype) || dtype == static_cast<int32_t>(DType::kString) || dtype == 0) return nullptr;
    if (rank < 0 || rank > 64 || (rank > 0 && dims == nullptr)) return nullptr;
    auto t = Tensor::allocate(static_cast<DType>(dtype), Shape(dims, dims + rank));
    if (!t.ok()) return nullptr;
    self->tensors[index] = std::move(t).value();
    self->made[index] = true;
    alignas(64) static unsigned char empty[64];
    void* p = self->tensors[index].raw_data();
    return p != nullptr ? p : empty;  // zero elements: any non-null pointer will do
  }
};

void put_u32(std::vector<uint8_t>& out, size_t at, uint32_t v) { std::memcpy(out.data() + at, &v, 4); }
uint32_t get_u32(const std::vector<uint8_t>& in, size_t at) {
  uint32_t v;
  std::memcpy(&v, in.data() + at, 4);
  return v;
}

}  // namespace

LibrarySearch plugin_library_search(const std::string& name) {
  std::string upper;
  for (char c : name) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  LibrarySearch s;
  s.what = "dlrt plugin '" + name + "'";
  s.env_var = "DLRT_PLUGIN_" + upper + "_LIB";
  s.names = {"libdlrt_plugin_" + name + ".so"};
  s.fix = "set " + s.env_var + " to libdlrt_plugin_" + name + ".so or its folder, or add its folder to LD_LIBRARY_PATH";
  return s;
}

PluginBackend::PluginBackend(std::string name) : PluginBackend(name, plugin_library_search(name)) {}

PluginBackend::PluginBackend(std::string name, LibrarySearch search)
    : name_(std::move(name)),
      library_(std::move(search), [this](const DynamicLibrary& lib) { return on_load(lib); }) {}

Result<std::string> PluginBackend::on_load(const DynamicLibrary& lib) {
  symbols_ = PluginSymbols{};
  // The version first, alone: a plugin for another ABI may lack (or change) the other symbols.
  PluginVersionSymbol v;
  DLRT_RETURN_IF_ERROR(v.resolve(lib));
  uint32_t version = v.dlrt_plugin_api_version();
  if (version != DLRT_PLUGIN_API_VERSION)
    return Status(StatusCode::kDeviceUnavailable,
                  lib.path() + " implements plugin API version " + std::to_string(version) + ", dlrt needs " +
                      std::to_string(DLRT_PLUGIN_API_VERSION) + ": rebuild the plugin against this dlrt's plugin.h");
  PluginSymbols table;
  DLRT_RETURN_IF_ERROR(table.resolve(lib));
  const char* pname = table.dlrt_plugin_name();
  if (pname == nullptr || name_ != pname)
    return Status(StatusCode::kDeviceUnavailable, lib.path() + " is plugin '" + (pname ? pname : "(null)") +
                                                      "', not '" + name_ + "'");
  char ver[256] = {0};
  char err[kErrSize] = {0};
  int rc = table.dlrt_plugin_is_available(ver, sizeof ver, err, sizeof err);
  if (rc != DLRT_PLUGIN_OK) return plugin_status(rc, err, "plugin '" + name_ + "' reports its runtime unusable");
  ver[sizeof ver - 1] = '\0';
  symbols_ = table;
  return std::string(ver);
}

Availability PluginBackend::is_available(bool refresh) { return library_.get(refresh); }

Result<const PluginSymbols*> PluginBackend::loaded() {
  Availability a = library_.get();
  if (!a.available)
    return Status(StatusCode::kDeviceUnavailable, "backend '" + name_ + "' is unavailable: " + a.reason +
                                                      (a.fix.empty() ? "" : ". Fix: " + a.fix));
  return &symbols_;
}

std::vector<BackendDevice> PluginBackend::devices(const std::vector<Device>& hardware) {
  std::vector<BackendDevice> out;
  auto syms = loaded();
  if (!syms.ok()) return out;
  const PluginSymbols& s = **syms;
  char err[kErrSize] = {0};
  size_t count = 0;
  if (s.dlrt_plugin_devices(nullptr, 0, &count, err, sizeof err) != DLRT_PLUGIN_OK || count == 0) return out;
  std::vector<dlrt_plugin_device> devs(count);
  for (auto& d : devs) d.api_version = DLRT_PLUGIN_API_VERSION;
  if (s.dlrt_plugin_devices(devs.data(), devs.size(), &count, err, sizeof err) != DLRT_PLUGIN_OK) return out;
  devs.resize(std::min(count, devs.size()));
  for (auto& d : devs) {
    d.name[sizeof d.name - 1] = d.vendor[sizeof d.vendor - 1] = d.pci_bus_id[sizeof d.pci_bus_id - 1] = '\0';
    d.driver_version[sizeof d.driver_version - 1] = '\0';
    BackendDevice bd;
    bd.backend = name_;
    bd.name = d.name;
    bd.type = d.type >= 0 && d.type <= DLRT_PLUGIN_DEVICE_ACCELERATOR ? static_cast<DeviceType>(d.type)
                                                                     : DeviceType::kAccelerator;
    bd.is_virtual = d.is_virtual != 0;
    for (const auto& h : hardware)
      if (!bd.is_virtual && d.pci_bus_id[0] && h.meta("pci_bus_id") == d.pci_bus_id) bd.hardware = h;
    if (bd.hardware) bd.metadata = bd.hardware->metadata;
    else bd.metadata["discovered_by"] = name_;
    if (bd.is_virtual) bd.metadata["is_virtual"] = "1";
    if (d.vendor[0]) bd.metadata["vendor"] = d.vendor;
    if (d.pci_bus_id[0]) bd.metadata["pci_bus_id"] = d.pci_bus_id;
    if (d.driver_version[0]) bd.metadata["driver_version"] = d.driver_version;
    if (d.memory_bytes) bd.metadata["memory_bytes"] = std::to_string(d.memory_bytes);
    out.push_back(std::move(bd));
  }
  return out;
}

std::vector<NodeSupport> PluginBackend::supports(const ir::Graph& graph, const BackendDevice& device) {
  std::vector<NodeSupport> out(graph.nodes.size());
  auto syms = loaded();
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (!syms.ok()) {
      out[i].reason = syms.status().message();
      continue;
    }
    const ir::Node& n = graph.nodes[i];
    auto dtypes = [&](const std::vector<ir::ValueId>& ids) {
      std::vector<int32_t> v;
      for (auto id : ids)
        v.push_back(id >= 0 && id < static_cast<ir::ValueId>(graph.values.size())
                        ? static_cast<int32_t>(graph.values[id].type.dtype) : 0);
      return v;
    };
    std::vector<int32_t> in = dtypes(n.inputs), outs = dtypes(n.outputs);
    dlrt_plugin_op_query q{DLRT_PLUGIN_API_VERSION, n.op_type.c_str(), n.domain.c_str(), n.opset,
                           static_cast<int32_t>(in.size()), in.data(), static_cast<int32_t>(outs.size()), outs.data()};
    char err[kErrSize] = {0};
    int rc = (*syms)->dlrt_plugin_supports(device.name.c_str(), &q, err, sizeof err);
    out[i].supported = rc == DLRT_PLUGIN_OK;
    if (!out[i].supported) out[i].reason = err[0] ? err : "plugin '" + name_ + "' does not take " + n.op_type;
  }
  return out;
}

Result<Blob> PluginBackend::compile(const ir::Graph& subgraph, const BackendDevice& device,
                                    const CompileOptions& options) {
  DLRT_ASSIGN_OR_RETURN(const PluginSymbols* s, loaded());
  DLRT_ASSIGN_OR_RETURN(std::string onnx, ir::export_onnx(subgraph, 8, ir::InternalAttributes::kDrop));
  void* data = nullptr;
  size_t size = 0;
  char err[kErrSize] = {0};
  int rc = s->dlrt_plugin_compile(device.name.c_str(), onnx.data(), onnx.size(), options.to_string().c_str(), &data,
                                  &size, err, sizeof err);
  if (rc != DLRT_PLUGIN_OK) {
    s->dlrt_plugin_free(data);
    return plugin_status(rc, err, name_ + ":" + device.name + " compile failed");
  }
  if (data == nullptr && size != 0) return Status(StatusCode::kBackendError, name_ + ": compile returned no blob");
  Blob blob;
  blob.format = blob_format();
  blob.data.resize(kHeaderSize + size);
  put_u32(blob.data, 0, static_cast<uint32_t>(subgraph.inputs.size()));
  put_u32(blob.data, 4, static_cast<uint32_t>(subgraph.outputs.size()));
  if (size) std::memcpy(blob.data.data() + kHeaderSize, data, size);
  s->dlrt_plugin_free(data);
  return blob;
}

Result<Executable*> PluginBackend::init(const Blob& blob, const CompileOptions& options, const BackendDevice& device) {
  if (device.is_virtual)
    return Status(StatusCode::kDeviceUnavailable,
                  device.spec() + " is a virtual device: it can compile, never execute; pick a real device");
  DLRT_ASSIGN_OR_RETURN(const PluginSymbols* s, loaded());
  if (blob.format != blob_format())
    return Status(StatusCode::kBackendError, "blob format '" + blob.format + "' is not " + blob_format() + ": recompile");
  if (blob.data.size() < kHeaderSize)
    return Status(StatusCode::kBackendError, name_ + ": blob is truncated: recompile");
  auto exe = std::make_unique<PluginExecutable>();
  exe->num_inputs = get_u32(blob.data, 0);
  exe->num_outputs = get_u32(blob.data, 4);
  char err[kErrSize] = {0};
  int rc = s->dlrt_plugin_init(device.name.c_str(), blob.data.data() + kHeaderSize, blob.data.size() - kHeaderSize,
                               options.to_string().c_str(), &exe->handle, err, sizeof err);
  if (rc != DLRT_PLUGIN_OK) return plugin_status(rc, err, name_ + ":" + device.name + " init failed");
  if (exe->handle == nullptr) return Status(StatusCode::kBackendError, name_ + ": init returned no handle");
  exe->max_runs = std::max<int32_t>(0, s->dlrt_plugin_max_concurrent_runs(exe->handle));
  return static_cast<Executable*>(exe.release());
}

Result<std::vector<Tensor>> PluginBackend::execute(Executable* exe, std::span<const Tensor> inputs) {
  auto* pe = dynamic_cast<PluginExecutable*>(exe);
  if (pe == nullptr) return InvalidArgument(name_ + ": execute given an executable it did not make");
  if (inputs.size() != pe->num_inputs)
    return InvalidArgument(name_ + ": expected " + std::to_string(pe->num_inputs) + " inputs, got " +
                           std::to_string(inputs.size()));
  std::vector<dlrt_plugin_tensor> in(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    if (!t.valid() || t.dtype() == DType::kString)
      return Unsupported(name_ + ": input " + std::to_string(i) + " is " + (t.valid() ? "a string tensor" : "empty") +
                         "; plugins take numeric tensors only");
    in[i] = {DLRT_PLUGIN_API_VERSION, static_cast<int32_t>(t.dtype()), static_cast<int32_t>(t.rank()),
             t.shape().data(), const_cast<void*>(t.raw_data()), static_cast<uint64_t>(t.nbytes())};
  }
  OutputSink sink;
  sink.tensors.resize(pe->num_outputs);
  sink.made.assign(pe->num_outputs, false);
  dlrt_plugin_output_allocator alloc{DLRT_PLUGIN_API_VERSION, &sink, &OutputSink::allocate};
  char err[kErrSize] = {0};
  // Loaded for sure: init succeeded, and a loaded library is never unloaded.
  int rc = symbols_.dlrt_plugin_execute(pe->handle, in.data(), in.size(), &alloc, pe->num_outputs, err, sizeof err);
  if (rc != DLRT_PLUGIN_OK) return plugin_status(rc, err, name_ + " execute failed");
  for (size_t i = 0; i < sink.made.size(); ++i)
    if (!sink.made[i]) return Status(StatusCode::kBackendError, name_ + ": execute did not produce output " + std::to_string(i));
  return std::move(sink.tensors);
}

int PluginBackend::max_concurrent_runs(const Executable* exe) const {
  auto* pe = dynamic_cast<const PluginExecutable*>(exe);
  return pe ? pe->max_runs : 0;
}

void PluginBackend::destroy(Executable* exe) {
  auto* pe = dynamic_cast<PluginExecutable*>(exe);
  if (pe == nullptr) return;
  if (pe->handle != nullptr) symbols_.dlrt_plugin_destroy(pe->handle);
  delete pe;
}

Status register_plugin_backends_from_env(BackendRegistry& registry) {
  const char* env = env::get("DLRT_PLUGINS");
  if (env == nullptr) return Status::Ok();
  Status first;
  std::string list = env;
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = std::min(list.find(',', pos), list.size());
    std::string n = list.substr(pos, comma - pos);
    pos = comma + 1;
    size_t b = n.find_first_not_of(" \t"), e = n.find_last_not_of(" \t");
    if (b == std::string::npos) continue;
    n = n.substr(b, e - b + 1);
    Status s = valid_plugin_name(n)
                   ? registry.add(std::make_shared<PluginBackend>(n))
                   : InvalidArgument("DLRT_PLUGINS: '" + n + "' is not a plugin name (lowercase letters, digits, _)");
    if (!s.ok() && first.ok()) first = s.with_context("DLRT_PLUGINS");
  }
  return first;
}

}  // namespace dlrt::backend
