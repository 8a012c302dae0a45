#include "runtime/compiled_model.h"
#include "runtime/import.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>

#include "backend/registry.h"
#include "core/hash.h"
#include "core/logging.h"
#include "dlrt/device.h"
#include "ir/onnx_export.h"
#include "ir/onnx_import.h"
#include "runtime/device_spec.h"
#include "runtime/backends.h"

namespace dlrt {

namespace fs = std::filesystem;

namespace {

// Attribute names of a CompiledPartition node (docs/compile.md).
constexpr const char* kAttrFormatVersion = "format_version";
constexpr const char* kAttrBackend = "backend";
constexpr const char* kAttrDevice = "device";
constexpr const char* kAttrDeviceType = "device_type";
constexpr const char* kAttrDeviceVirtual = "device_virtual";
constexpr const char* kAttrDeviceMetadata = "device_metadata";
constexpr const char* kAttrRuntimeVersion = "runtime_version";
constexpr const char* kAttrDriverVersion = "driver_version";
constexpr const char* kAttrOptions = "options";
constexpr const char* kAttrBlobFormat = "blob_format";
constexpr const char* kAttrBlob = "blob";
constexpr const char* kAttrBlobFile = "blob_file";
constexpr const char* kAttrBlobSize = "blob_size";
constexpr const char* kAttrBlobChecksum = "blob_checksum";
constexpr const char* kAttrSubgraph = "subgraph";

std::string driver_of(const backend::BackendDevice& d) {
  auto it = d.metadata.find("driver_version");
  if (it != d.metadata.end() && !it->second.empty()) return it->second;
  return d.hardware ? d.hardware->meta("driver_version") : "";
}

ir::Attribute str_attr(std::string s) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kString;
  a.s = std::move(s);
  return a;
}

ir::Attribute int_attr(int64_t i) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kInt;
  a.i = i;
  return a;
}

ir::Attribute strings_attr(std::vector<std::string> v) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kStrings;
  a.strings = std::move(v);
  return a;
}

}  // namespace

// Everything a CompiledPartition node says, checked (a member of
// CompiledPartitionBackend, which compiled_model.h declares).
struct StoredPartition {
  std::string backend, device, device_type, runtime_version, driver_version, blob_format;
  bool device_virtual = false;
  std::map<std::string, std::string> options;
  std::shared_ptr<ir::Graph> subgraph;
  std::optional<backend::Blob> blob;  // nullopt when it cannot be read (blob_problem says why)
  std::string blob_problem;
  std::vector<std::string> output_names;

  std::string spec() const { return backend + ":" + device; }
};

namespace {

Status check_string(const ir::Node& n, const char* name, bool required, std::string& out) {
  const ir::Attribute* a = n.attr(name);
  if (!a) {
    if (required) return InvalidModel(n.describe() + " lacks attribute '" + name + "' (written by `dlrt compile`)");
    return Status::Ok();
  }
  if (a->kind != ir::Attribute::Kind::kString) return InvalidModel(n.describe() + " attribute '" + name + "' must be a string");
  out = a->s;
  return Status::Ok();
}

Result<std::vector<uint8_t>> read_side_file(const std::string& base_dir, const std::string& file) {
  if (file.empty() || file.find('/') != std::string::npos || file == "." || file == "..")
    return InvalidModel("blob_file '" + file + "' must be a plain file name next to the model");
  if (base_dir.empty()) return IoError("the model was loaded from memory, so its blob side file '" + file + "' cannot be found");
  fs::path p = fs::path(base_dir) / file;
  std::ifstream in(p, std::ios::binary);
  if (!in) return IoError("blob side file " + p.string() + " is missing or unreadable");
  std::vector<uint8_t> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return IoError("reading blob side file " + p.string() + " failed");
  return data;
}

Result<StoredPartition> read_node(const ir::Node& n, const std::string& base_dir, const ir::Graph& graph) {
  StoredPartition s;
  int64_t version = n.attr_int(kAttrFormatVersion, 0);
  if (version != kCompiledFormatVersion)
    return Unsupported(n.describe() + " has format_version " + std::to_string(version) + "; this dlrt reads version " +
                       std::to_string(kCompiledFormatVersion) + " (recompile the model with this dlrt's `dlrt compile`)");
  DLRT_RETURN_IF_ERROR(check_string(n, kAttrBackend, true, s.backend));
  DLRT_RETURN_IF_ERROR(check_string(n, kAttrDevice, true, s.device));
  DLRT_RETURN_IF_ERROR(check_string(n, kAttrDeviceType, false, s.device_type));
  DLRT_RETURN_IF_ERROR(check_string(n, kAttrRuntimeVersion, false, s.runtime_version));
  DLRT_RETURN_IF_ERROR(check_string(n, kAttrDriverVersion, false, s.driver_version));
  DLRT_RETURN_IF_ERROR(check_string(n, kAttrBlobFormat, false, s.blob_format));
  s.device_virtual = n.attr_int(kAttrDeviceVirtual, 0) != 0;
  for (const auto& kv : n.attr_strings(kAttrOptions)) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) return InvalidModel(n.describe() + " option '" + kv + "' is not KEY=VALUE");
    s.options[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  const ir::Attribute* sg = n.attr(kAttrSubgraph);
  if (!sg || sg->kind != ir::Attribute::Kind::kGraph || !sg->g)
    return InvalidModel(n.describe() + " lacks its graph attribute 'subgraph' (the partition to recompile from)");
  s.subgraph = sg->g;
  const ir::Graph& sub = *s.subgraph;
  if (!sub.captures.empty())
    return InvalidModel(n.describe() + ": its subgraph reads '" + sub.values[sub.captures[0]].name +
                        "' from the enclosing graph; a compiled partition's subgraph must be self-contained");
  auto same_names = [&](const std::vector<ir::ValueId>& mine, const std::vector<ir::ValueId>& outer) {
    if (mine.size() != outer.size()) return false;
    for (size_t i = 0; i < mine.size(); ++i)
      if (outer[i] == ir::kNoValue || sub.values[mine[i]].name != graph.values[outer[i]].name) return false;
    return true;
  };
  if (!same_names(sub.inputs, n.inputs) || !same_names(sub.outputs, n.outputs))
    return InvalidModel(n.describe() + ": the inputs and outputs of its subgraph must be the node's, in the same order");
  for (ir::ValueId o : n.outputs) s.output_names.push_back(graph.values[o].name);

  // The blob: embedded, or a side file next to the model. Problems here only
  // mean recompiling, so they are kept as a reason, not returned.
  std::string checksum;
  DLRT_RETURN_IF_ERROR(check_string(n, kAttrBlobChecksum, false, checksum));
  std::vector<uint8_t> data;
  if (const ir::Attribute* b = n.attr(kAttrBlob)) {
    if (b->kind != ir::Attribute::Kind::kTensor || (b->t.dtype() != DType::kUInt8 && b->t.valid()))
      return InvalidModel(n.describe() + " attribute 'blob' must be a uint8 tensor");
    if (b->t.valid() && b->t.nbytes() > 0) {
      const auto* p = static_cast<const uint8_t*>(b->t.raw_data());
      data.assign(p, p + b->t.nbytes());
    }
  } else if (n.has_attr(kAttrBlobFile)) {
    std::string file;
    DLRT_RETURN_IF_ERROR(check_string(n, kAttrBlobFile, true, file));
    auto r = read_side_file(base_dir, file);
    if (!r.ok()) s.blob_problem = r.status().message();
    else data = std::move(r).value();
    int64_t size = n.attr_int(kAttrBlobSize, -1);
    if (s.blob_problem.empty() && size >= 0 && static_cast<uint64_t>(size) != data.size())
      s.blob_problem = "blob side file " + file + " has " + std::to_string(data.size()) + " bytes, the model says " +
                       std::to_string(size) + " (truncated or replaced)";
  } else {
    s.blob_problem = "the node carries no blob";
  }
  if (s.blob_problem.empty() && !checksum.empty() && hex64(fnv1a(data.data(), data.size())) != checksum)
    s.blob_problem = "the blob's checksum does not match (corrupt)";
  if (s.blob_problem.empty()) {
    backend::Blob blob;
    blob.format = s.blob_format;
    blob.data = std::move(data);
    s.blob = std::move(blob);
  }
  return s;
}

}  // namespace

bool is_compiled_partition(const ir::Node& node) {
  return node.domain == kCompiledDomain && node.op_type == kCompiledOp;
}

// ---------------------------------------------------------------------------
// Reading: a backend that stands for one compiled node. It takes exactly that
// node, hands out the node's blob instead of compiling (recompiling the kept
// subgraph when the blob does not fit), and otherwise is the backend it wraps.
class CompiledPartitionBackend final : public backend::Backend {
 public:
  CompiledPartitionBackend(std::shared_ptr<backend::Backend> real, StoredPartition stored, std::string unusable,
                           bool on_cpu_instead)
      : real_(std::move(real)), stored_(std::move(stored)), unusable_(std::move(unusable)),
        on_cpu_instead_(on_cpu_instead) {
    if (on_cpu_instead_) note_ = unusable_;
  }

  std::string name() const override { return real_->name(); }
  backend::Availability is_available(bool refresh) override { return real_->is_available(refresh); }
  std::vector<backend::BackendDevice> devices(const std::vector<Device>& hw) override { return real_->devices(hw); }

  std::vector<backend::NodeSupport> supports(const ir::Graph& graph, const backend::BackendDevice&) override {
    std::vector<backend::NodeSupport> r;
    for (const auto& n : graph.nodes) {
      bool mine = is_compiled_partition(n) && n.outputs.size() == stored_.output_names.size();
      for (size_t i = 0; mine && i < n.outputs.size(); ++i)
        mine = n.outputs[i] != ir::kNoValue && graph.values[n.outputs[i]].name == stored_.output_names[i];
      r.push_back({mine, mine ? "" : "another compiled partition's device"});
    }
    return r;
  }

  Result<backend::Blob> compile(const ir::Graph&, const backend::BackendDevice& device,
                                const backend::CompileOptions& options) override {
    if (unusable_.empty() && stored_.blob && refused().empty()) return *stored_.blob;
    return real_->compile(*stored_.subgraph, device, merged(options));
  }

  Result<backend::Executable*> init(const backend::Blob& blob, const backend::CompileOptions& options,
                                    const backend::BackendDevice& device) override {
    const bool embedded = stored_.blob && blob.format == stored_.blob->format && blob.data == stored_.blob->data;
    auto exe = real_->init(blob, merged(options), device);
    if (exe.ok()) {
      const std::string why_not = unusable_.empty() ? refused() : unusable_;
      if (on_cpu_instead_) set_note(unusable_);
      else if (embedded) set_note("compiled blob used (" + stored_.backend + " " + stored_.runtime_version + ", compiled for " +
                                  stored_.spec() + (stored_.device_virtual ? " on a virtual device" : "") + ")");
      else if (!why_not.empty()) set_note("compiled blob not used: " + why_not + "; recompiled from the kept subgraph");
      else set_note("compiled from the kept subgraph (blob cache entry)");
      return exe;
    }
    if (!embedded) return exe.status();
    // The runtime refused the blob (e.g. built by another version): recompile, now and later.
    {
      std::lock_guard<std::mutex> lk(mu_);
      refused_ = "the runtime refused the compiled blob: " + exe.status().message();
    }
    DLRT_LOG(kWarn, "compiled partition for " + stored_.spec() + ": " + refused() + "; recompiling from the kept subgraph");
    DLRT_ASSIGN_OR_RETURN(backend::Blob fresh, real_->compile(*stored_.subgraph, device, merged(options)));
    auto again = real_->init(fresh, merged(options), device);
    if (again.ok()) set_note("compiled blob not used: " + refused() + "; recompiled from the kept subgraph");
    return again;
  }

  Result<std::vector<Tensor>> execute(backend::Executable* exe, std::span<const Tensor> inputs) override {
    return real_->execute(exe, inputs);
  }
  int max_concurrent_runs(const backend::Executable* exe) const override { return real_->max_concurrent_runs(exe); }
  void destroy(backend::Executable* exe) override { real_->destroy(exe); }

  std::string note() const {
    std::lock_guard<std::mutex> lk(mu_);
    return note_;
  }
  bool on_cpu_instead() const { return on_cpu_instead_; }
  int node_count() const { return static_cast<int>(stored_.subgraph->total_node_count()); }

 private:
  // The options it was compiled with, plus the session's (threads).
  backend::CompileOptions merged(const backend::CompileOptions& session) const {
    backend::CompileOptions o;
    o.values = stored_.options;
    for (const auto& [k, v] : session.values) o.values[k] = v;
    return o;
  }
  std::string refused() const {
    std::lock_guard<std::mutex> lk(mu_);
    return refused_;
  }
  void set_note(std::string s) {
    std::lock_guard<std::mutex> lk(mu_);
    note_ = std::move(s);
  }

  const std::shared_ptr<backend::Backend> real_;
  const StoredPartition stored_;
  const std::string unusable_;  // why the blob cannot be used here ("" = use it)
  const bool on_cpu_instead_;   // the compiled device is not used by this run: the subgraph runs on the CPU
  mutable std::mutex mu_;
  std::string note_;
  std::string refused_;  // why the runtime refused the blob at init ("" = it did not)
};

Result<PartitionPlan> CompiledPartitions::plan(const ir::Graph& graph, const std::string& base_dir, Resolution& res,
                                               const std::vector<Device>& hardware) {
  auto& registry = dlrt::global_backends();
  std::vector<Candidate> mine;
  for (const ir::Node& n : graph.nodes) {
    if (!is_compiled_partition(n)) continue;
    DLRT_ASSIGN_OR_RETURN(StoredPartition s, read_node(n, base_dir, graph));
    auto cpu = registry.find("cpu");
    if (!cpu) return Internal("no cpu backend registered");
    std::shared_ptr<backend::Backend> real;
    std::optional<backend::BackendDevice> device;
    std::string not_here;  // why the compiled device is not used by this run
    if (s.backend == "cpu") {
      real = cpu;
      auto devs = cpu->devices(hardware);
      if (!devs.empty()) device = devs.front();
    } else {
      for (int pass = 0; pass < 2 && !device; ++pass)
        for (const auto& c : res.candidates) {
          if (c.backend->name() != s.backend) continue;
          bool match = pass == 0 ? lower_ascii(c.device.name) == lower_ascii(s.device)
                                 : !s.device_type.empty() && device_type_name(c.device.type) == s.device_type;
          if (match) {
            real = c.backend;
            device = c.device;
            break;
          }
        }
      if (!device) {
        auto b = registry.find(s.backend);
        if (!b) {
          not_here = "this build has no backend '" + s.backend + "'";
        } else if (auto a = b->is_available(); !a.available) {
          not_here = s.backend + " is unavailable: " + a.reason;
        } else {
          bool present = false;
          for (const auto& d : b->devices(hardware))
            present = present || (!d.is_virtual && lower_ascii(d.name) == lower_ascii(s.device));
          not_here = present ? "this run's device spec does not select " + s.spec()
                             : s.backend + " has no device '" + s.device + "' on this machine";
        }
      }
    }
    std::string unusable;
    bool on_cpu_instead = false;
    if (!device) {
      real = cpu;
      auto devs = cpu->devices(hardware);
      if (devs.empty()) return Internal("the cpu backend offers no device");
      device = devs.front();
      on_cpu_instead = true;
      unusable = "compiled for " + s.spec() + ", which this run does not use (" + not_here + "); the kept subgraph runs on cpu";
    } else if (!s.blob) {
      unusable = s.blob_problem;
    } else {
      std::string version = real->is_available().version;
      std::string driver = driver_of(*device);
      if (version != s.runtime_version)
        unusable = "it was compiled with " + s.backend + " " + (s.runtime_version.empty() ? "(unknown version)" : s.runtime_version) +
                   ", this machine has " + (version.empty() ? "an unknown version" : version);
      else if (lower_ascii(device->name) != lower_ascii(s.device))
        unusable = "it was compiled for " + s.spec() + ", this run uses " + device->spec();
      else if (!s.driver_version.empty() && !driver.empty() && driver != s.driver_version)
        unusable = "it was compiled for driver " + s.driver_version + ", this machine has " + driver;
    }
    auto wrapper = std::make_shared<CompiledPartitionBackend>(real, std::move(s), unusable, on_cpu_instead);
    mine.push_back({wrapper, *device});
  }
  res.candidates.insert(res.candidates.begin(), mine.begin(), mine.end());
  return plan_partitions(graph, res.candidates);
}

std::shared_ptr<ir::Graph> CompiledPartitions::subgraph_of(const ir::Graph& graph, const PlannedPartition& part) {
  if (part.nodes.size() != 1) return nullptr;
  const ir::Node& n = graph.nodes[part.nodes[0]];
  if (!is_compiled_partition(n)) return nullptr;
  const ir::Attribute* a = n.attr(kAttrSubgraph);
  return a && a->kind == ir::Attribute::Kind::kGraph ? a->g : nullptr;
}

void CompiledPartitions::track(int report_index, const Candidate& c) {
  if (auto w = std::dynamic_pointer_cast<CompiledPartitionBackend>(c.backend)) tracked_.push_back({report_index, w});
}

void CompiledPartitions::annotate(RunReport& report) const {
  for (const auto& [index, w] : tracked_) {
    if (index < 0 || index >= static_cast<int>(report.partitions.size())) continue;
    PartitionReport& p = report.partitions[index];
    p.node_count = w->node_count();
    if (p.degraded) continue;  // the partition's own fallback reason stands
    std::string note = w->note();
    if (note.empty()) continue;
    p.reason = note;
    p.degraded = w->on_cpu_instead();
  }
}

// ---------------------------------------------------------------------------
// Writing.

namespace {

// Writes n bytes to `path` through a temporary in the same folder, renamed
// over it: a reader never sees a half-written file.
Status write_file_atomic(const fs::path& path, const char* data, size_t n) {
  static std::atomic<uint64_t> counter{0};
  fs::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return IoError("cannot write " + tmp.string());
    f.write(data, static_cast<std::streamsize>(n));
    if (!f.flush()) {
      std::error_code e;
      fs::remove(tmp, e);
      return IoError("writing " + path.string() + " failed (disk full?)");
    }
  }
  std::error_code e;
  fs::rename(tmp, path, e);
  if (e) {
    fs::remove(tmp, e);
    return IoError("cannot move " + tmp.string() + " to " + path.string());
  }
  return Status::Ok();
}

}  // namespace

Result<CompileModelResult> compile_model_file(const std::string& model_path, const std::string& out_path,
                                              const CompileModelOptions& options) {
  if (out_path.empty()) return InvalidArgument("no output path given");
  std::error_code ec;
  if (fs::exists(model_path, ec) && fs::exists(out_path, ec) && fs::equivalent(model_path, out_path, ec))
    return InvalidArgument("the output " + out_path + " is the input model; write the compiled model elsewhere");
  DLRT_ASSIGN_OR_RETURN(ir::Model model, ir::import_onnx_file(model_path, runtime_import_options()));
  const ir::Graph& g = *model.graph;

  DLRT_ASSIGN_OR_RETURN(DeviceSpec spec, parse_device_spec(options.device.empty() ? "auto" : options.device));
  auto& registry = dlrt::global_backends();
  const std::vector<Device> hardware = discover_devices();
  Resolution res = resolve_devices(spec, registry, hardware, /*for_compile=*/true);
  if (!res.unknown_backends.empty()) {
    std::string known;
    for (const auto& b : registry.all()) known += (known.empty() ? "" : ", ") + b->name();
    return InvalidArgument("unknown device '" + res.unknown_backends.front() + "' in spec '" + options.device +
                           "'; backends of this build: " + known);
  }
  if (!res.malformed.empty()) return InvalidArgument(res.malformed.front() + " in spec '" + options.device + "'");
  CompileModelResult result;
  std::string why_unavailable;
  for (const auto& u : res.unavailable) {
    std::string line = u.requested + ": " + u.reason + (u.fix.empty() ? "" : " (fix: " + u.fix + ")");
    result.unavailable.push_back(line);
    why_unavailable += (why_unavailable.empty() ? "" : "; ") + line;
  }
  std::vector<Candidate> candidates = res.candidates;
  if (candidates.empty()) {
    if (!res.cpu_requested)
      return Status(StatusCode::kDeviceUnavailable, "no device of '" + options.device + "' can compile: " + why_unavailable);
    // `cpu` (or `auto` with no accelerator): the CPU backend compiles.
    auto cpu = registry.find("cpu");
    if (!cpu) return Internal("no cpu backend registered");
    auto devs = cpu->devices(hardware);
    if (devs.empty()) return Internal("the cpu backend offers no device");
    candidates.push_back({cpu, devs.front()});
  } else if (options.strict && !res.unavailable.empty()) {
    return Status(StatusCode::kDeviceUnavailable, "strict: " + why_unavailable);
  }

  PartitionPlan plan = plan_partitions(g, candidates);
  auto out = std::make_shared<ir::Graph>(g);
  out->nodes.clear();
  out->opsets[kCompiledDomain] = 1;
  const fs::path out_dir = fs::path(out_path).parent_path();
  const std::string out_name = fs::path(out_path).filename().string();
  std::vector<std::pair<fs::path, std::vector<uint8_t>>> side_files;

  int compiled_index = 0;
  for (const PlannedPartition& part : plan.partitions) {
    auto keep_plain = [&] {
      for (int i : part.nodes) out->nodes.push_back(g.nodes[i]);
      result.plain_nodes += static_cast<int>(part.nodes.size());
    };
    if (part.candidate < 0) {
      keep_plain();
      continue;
    }
    const Candidate& c = candidates[part.candidate];
    auto sub = extract_partition(g, part.nodes);
    CompiledPartitionSummary sum;
    sum.backend = c.backend->name();
    sum.device = c.device.spec();
    sum.is_virtual = c.device.is_virtual;
    sum.node_count = static_cast<int>(sub->total_node_count());
    if (sub->outputs.empty()) {  // dead code: nothing reads it
      keep_plain();
      continue;
    }
    backend::CompileOptions compile_options;
    compile_options.values = options.options;
    auto blob = c.backend->compile(*sub, c.device, compile_options);
    if (!blob.ok()) {
      if (options.strict)
        return blob.status().with_context("compiling partition " + std::to_string(result.partitions.size()) + " for " + sum.device);
      DLRT_LOG(kWarn, "partition for " + sum.device + " did not compile (" + blob.status().message() +
                          "); its nodes stay as they are");
      sum.error = blob.status().message();
      result.partitions.push_back(sum);
      keep_plain();
      continue;
    }
    sum.compiled = true;
    sum.blob_bytes = blob->data.size();

    ir::Node node;
    node.name = "dlrt_compiled_" + std::to_string(compiled_index++);
    node.op_type = kCompiledOp;
    node.domain = kCompiledDomain;
    node.opset = 1;
    for (ir::ValueId v : sub->inputs) node.inputs.push_back(g.find_value(sub->values[v].name));
    for (ir::ValueId v : sub->outputs) node.outputs.push_back(g.find_value(sub->values[v].name));
    auto& at = node.attributes;
    at[kAttrFormatVersion] = int_attr(kCompiledFormatVersion);
    at[kAttrBackend] = str_attr(sum.backend);
    at[kAttrDevice] = str_attr(c.device.name);
    at[kAttrDeviceType] = str_attr(device_type_name(c.device.type));
    at[kAttrDeviceVirtual] = int_attr(c.device.is_virtual ? 1 : 0);
    std::vector<std::string> meta;
    for (const auto& [k, v] : c.device.metadata) meta.push_back(k + "=" + v);
    at[kAttrDeviceMetadata] = strings_attr(meta);
    at[kAttrRuntimeVersion] = str_attr(c.backend->is_available().version);
    at[kAttrDriverVersion] = str_attr(driver_of(c.device));
    std::vector<std::string> opts;
    for (const auto& [k, v] : options.options) opts.push_back(k + "=" + v);
    at[kAttrOptions] = strings_attr(opts);
    at[kAttrBlobFormat] = str_attr(blob->format);
    at[kAttrBlobChecksum] = str_attr(hex64(fnv1a(blob->data.data(), blob->data.size())));
    if (blob->data.size() <= options.max_embedded_bytes) {
      ir::Attribute t;
      t.kind = ir::Attribute::Kind::kTensor;
      auto tensor = Tensor::allocate(DType::kUInt8, {static_cast<int64_t>(blob->data.size())});
      if (!tensor.ok()) return tensor.status();
      t.t = std::move(tensor).value();
      if (!blob->data.empty()) std::memcpy(t.t.raw_data(), blob->data.data(), blob->data.size());
      at[kAttrBlob] = std::move(t);
    } else {
      std::string file = out_name + "." + node.name + ".blob";
      at[kAttrBlobFile] = str_attr(file);
      at[kAttrBlobSize] = int_attr(static_cast<int64_t>(blob->data.size()));
      sum.blob_file = (out_dir / file).string();
      side_files.push_back({out_dir / file, std::move(blob->data)});
    }
    ir::Attribute sg;
    sg.kind = ir::Attribute::Kind::kGraph;
    sg.g = sub;
    at[kAttrSubgraph] = std::move(sg);
    out->nodes.push_back(std::move(node));
    result.partitions.push_back(sum);
  }

  // Constants only the compiled partitions read now live in their subgraphs.
  std::set<ir::ValueId> read(out->outputs.begin(), out->outputs.end());
  for (const auto& n : out->nodes) {
    for (ir::ValueId v : n.inputs) read.insert(v);
    for (ir::ValueId v : out->implicit_inputs(n)) read.insert(v);
  }
  for (size_t v = 0; v < out->values.size(); ++v)
    if (out->values[v].constant && !read.count(static_cast<ir::ValueId>(v))) out->values[v].constant.reset();
  DLRT_RETURN_IF_ERROR(out->topological_sort());
  DLRT_ASSIGN_OR_RETURN(std::string bytes, ir::export_onnx(*out, std::max<int64_t>(model.ir_version, 8)));

  // Side files first, then the model (each written to a temporary and renamed).
  for (const auto& [path, data] : side_files)
    DLRT_RETURN_IF_ERROR(write_file_atomic(path, reinterpret_cast<const char*>(data.data()), data.size()));
  DLRT_RETURN_IF_ERROR(write_file_atomic(out_path, bytes.data(), bytes.size()));
  return result;
}

}  // namespace dlrt
