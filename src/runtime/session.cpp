#include "dlrt/session.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <new>
#include <optional>

#include "backend/registry.h"
#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernel.h"
#include "core/logging.h"
#include "core/memory_limit.h"
#include "core/run_limits.h"
#include "core/thread_pool.h"
#include "dlrt/device.h"
#include "dlrt/model_info.h"
#include "dlrt/model_metadata.h"
#include "exec/executor.h"
#include "exec/kernel_build_options.h"
#include "ir/onnx_import.h"
#include "ir/onnxruntime_order.h"
#include "runtime/backends.h"
#include "runtime/compiled_model.h"
#include "runtime/config.h"
#include "runtime/device_spec.h"
#include "runtime/import.h"
#include "runtime/model_description.h"
#include "runtime/optimize.h"
#include "runtime/output_aliases.h"
#include "runtime/partition_kernel.h"
#include "runtime/placement.h"
#include "runtime/run_options.h"
#include "runtime/select_outputs.h"
#include "runtime/precision_auto.h"
#include "runtime/session_internal.h"
#include "runtime/session_precision.h"
#include "runtime/session_values.h"
#include "runtime/thread_kept_values.h"

namespace dlrt {

class SessionImpl {
 public:
  ir::Model model;
  std::shared_ptr<ir::Graph> run_graph;  // the model's graph with accelerator partitions as com.dlrt.Partition nodes
  std::unique_ptr<ThreadPool> pool;
  std::vector<std::shared_ptr<PartitionState>> accelerated;  // by report index (null for CPU partitions)
  std::vector<int> node_partition;  // run_graph node -> report index
  std::unique_ptr<Executor> executor;
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
  // Which outputs of a run are handed out as copies: those over a constant's
  // storage (an initializer, a folded value, or a view of one), so a caller
  // writing into an output cannot change the model, and those over another
  // output's storage (runtime/output_aliases.h).
  OutputAliases aliases;
  RunReport placement;
  std::vector<NodePlacement> node_placement;  // per node of model.graph, in plan order
  CompiledPartitions compiled;  // com.dlrt.CompiledPartition nodes (dlrt compile), runtime/compiled_model.h
  // The largest tensor a shape may imply (core/memory_limit.h), installed on
  // the thread that builds or runs the session.
  TensorLimit tensor_limit;
  ModelMetadata metadata;  // dlrt::model_metadata()
  ModelInfo info;          // dlrt::model_info(), as imported
  PrecisionChoice precision_choice;  // dlrt::precision_choice()

  // `Given` maps input names to RunValues or to Tensors (Session::run's map,
  // read without a copy into another map).
  template <typename Given>
  Status validate_inputs(const Given& given, std::vector<RunValue>& ordered) const;
  // `out_buffers`: see Executor::run.
  template <typename Given>
  Result<std::vector<RunValue>> run(const Given& given, RunReport* report, std::vector<double>* node_ms_out = nullptr,
                                    std::span<Tensor* const> out_buffers = {}) const;
  // The same into `results`, which a caller may keep from run to run.
  template <typename Given>
  Status run_values(const Given& given, std::vector<RunValue>& results, RunReport* report,
                    std::vector<double>* node_ms_out = nullptr, std::span<Tensor* const> out_buffers = {}) const;
  template <typename Given>
  Status run_values_unguarded(const Given& given, std::vector<RunValue>& results, RunReport* report,
                              std::vector<double>* node_ms_out, std::span<Tensor* const> out_buffers) const;
  RunReport current_placement() const;
};

namespace {

// Whether `nodes` of `g` produce half-precision values (float16, bfloat16).
bool holds_half(const ir::Graph& g, const std::vector<int>& nodes) {
  for (int i : nodes)
    for (ir::ValueId v : g.nodes[i].outputs) {
      const DType t = v != ir::kNoValue ? g.values[v].type.dtype : DType::kUndefined;
      if (t == DType::kFloat16 || t == DType::kBFloat16) return true;
    }
  return false;
}

// What CPU partition `p` computes in: its float matmuls' precision (`matmuls`:
// "f32", "bf16x3", "bf16 (amx)", "bf16 (avx512_bf16)", "bf16 (neon-bfmmla)", "f32 (bf16 unavailable: ...)"), then
// ", int8 <kernel>" when the nodes the session runs for it (`tags`: run graph
// node -> partition), so after the rewrites into integer ops (qdq), have
// integer products (the 8-bit GEMM kernel this CPU runs, gemm_int8.h, and
// unless it is amx why not), and ", float16 storage" when the model holds
// half-precision values there (`half`; they are computed in float32).
std::string cpu_partition_precision(const ir::Graph& run, const std::vector<int>& tags, size_t p,
                                    const std::string& matmuls, bool half) {
  bool int8 = false;
  for (size_t i = 0; i < run.nodes.size() && i < tags.size(); ++i) {
    const std::string& op = run.nodes[i].op_type;
    int8 = int8 || (tags[i] == static_cast<int>(p) &&
                    (op == "MatMulInteger" || op == "ConvInteger" || op == "QGemm" || op == "MatMulIntegerToFloat" ||
                     op == "DynamicQuantizeMatMul" || op.rfind("QLinear", 0) == 0));
  }
  return matmuls + (int8 ? ", int8 " + cpu::cpu_int8_gemm_engine() : "") + (half ? ", float16 storage" : "");
}

// Each CPU partition's precision in the report, read from the run graph after
// its fusions (`half`: per partition, whether the model holds half values there).
void label_cpu_partitions(SessionImpl& impl, const std::string& matmuls, const std::vector<char>& half) {
  for (size_t p = 0; p < impl.accelerated.size(); ++p)
    if (!impl.accelerated[p])
      impl.placement.partitions[p].precision =
          cpu_partition_precision(*impl.run_graph, impl.node_partition, p, matmuls, half[p]);
}

TensorInfo info_of(const ir::Value& v) {
  TensorInfo t;
  t.name = v.name;
  t.dtype = v.type.dtype;
  t.is_tensor = v.type.kind == ir::ValueKind::kTensor;
  t.type = onnx_type_string(v.type);
  if (v.type.shape) {
    for (const auto& d : *v.type.shape) {
      t.shape.push_back(d.size);
      t.dim_names.push_back(d.symbol);
    }
  }
  return t;
}

std::string names_of(const std::vector<TensorInfo>& infos) {
  std::string s;
  for (const auto& i : infos) s += (s.empty() ? "" : ", ") + i.name;
  return s.empty() ? "(none)" : s;
}

const std::vector<Device>& hardware() {
  static const std::vector<Device> devices = discover_devices();
  return devices;
}

// The nodes of `nodes`, each with the nodes of its subgraphs (If, Loop, Scan).
int node_count(const ir::Graph& g, const std::vector<int>& nodes) {
  int total = 0;
  for (int i : nodes) {
    const ir::Node& n = g.nodes[i];
    size_t count = 1;
    for (const auto& [k, a] : n.attributes) {
      if (a.g) count += a.g->total_node_count();
      for (const auto& sg : a.graphs) count += sg->total_node_count();
    }
    total += static_cast<int>(count);
  }
  return total;
}

// The com.dlrt.Partition node that stands for accelerator partition p (its
// subgraph `sub`) in the graph the session runs.
ir::Node partition_node(const ir::Graph& g, const ir::Graph& sub, size_t p) {
  ir::Node pn;
  pn.name = "dlrt_partition_" + std::to_string(p);
  pn.op_type = "Partition";
  pn.domain = "com.dlrt";
  pn.opset = 1;
  for (ir::ValueId v : sub.inputs) pn.inputs.push_back(g.find_value(sub.values[v].name));
  for (ir::ValueId v : sub.outputs) pn.outputs.push_back(g.find_value(sub.values[v].name));
  ir::Attribute idx;
  idx.kind = ir::Attribute::Kind::kInt;
  idx.i = static_cast<int64_t>(p);
  pn.attributes["partition"] = idx;
  return pn;
}

// An allocation failure that no kernel boundary caught (reading the model's
// initializers, optimizing the graph, a run's bookkeeping) as kOutOfMemory:
// the caller gets a Status, the process does not abort.
Status allocation_failure(const char* what, const std::exception& e) {
  return Status(StatusCode::kOutOfMemory, std::string("out of memory ") + what + " (" + e.what() +
                                              "); raise the process's memory limit or use a smaller model or input");
}

template <typename F>
auto guard_allocations(const char* what, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::bad_alloc& e) {
    return allocation_failure(what, e);
  } catch (const std::length_error& e) {
    return allocation_failure(what, e);
  }
}

// The options a session cannot be built with, refused before the model is
// read and before any thread starts.
Status check_options(const SessionOptions& options) {
  if (options.threads < 0 || options.threads > kMaxThreads)
    return InvalidArgument("SessionOptions::threads is " + std::to_string(options.threads) + "; use 0 (one per core) to " +
                           std::to_string(kMaxThreads) + " (kMaxThreads)");
  return Status::Ok();
}

Result<std::unique_ptr<SessionImpl>> build(Result<ir::Model> model, ModelMetadata metadata,
                                           const SessionOptions& options) {
  // A kernel family or backend that failed to register is fatal here, by name.
  DLRT_RETURN_IF_ERROR(cpu::builtin_kernels_status());
  DLRT_RETURN_IF_ERROR(dlrt::global_backends_status());
  if (!model.ok()) return model.status();
  auto impl = std::make_unique<SessionImpl>();
  impl->model = std::move(model).value();
  impl->metadata = std::move(metadata);
  const ir::Graph& g = *impl->model.graph;

  // Precedence: options (the CLI's flags), then environment, then config file.
  DLRT_ASSIGN_OR_RETURN(RuntimeConfig config, load_runtime_config());
  const RuntimeEnv env = read_runtime_env();
  impl->tensor_limit = resolve_tensor_limit(options.max_tensor_bytes, config.max_tensor_mb);
  ScopedTensorLimit tensor_limit_scope(&impl->tensor_limit);  // constant folding and compilation below
  std::string spec_text = options.device;
  if (spec_text.empty()) spec_text = env.device ? *env.device : config.device.value_or("auto");
  DLRT_ASSIGN_OR_RETURN(DeviceSpec spec, parse_device_spec(spec_text));
  const bool strict = options.strict || env.strict.value_or(config.strict.value_or(false));
  std::string precision_label;
  DLRT_ASSIGN_OR_RETURN(const exec::GemmPrecision precision, cpu_precision_of(options, env, config, precision_label));
  impl->precision_choice.chosen = exec::gemm_precision_name(precision);
  const int threads = options.threads > 0 ? options.threads : config.threads.value_or(0);
  Resolution res = resolve_devices(spec, dlrt::global_backends(), hardware());
  if (!res.unknown_backends.empty()) {
    std::string known;
    for (const auto& b : dlrt::global_backends().all()) known += (known.empty() ? "" : ", ") + b->name();
    return InvalidArgument("unknown device '" + res.unknown_backends.front() + "' in spec '" + spec_text +
                           "'; use auto, cpu, gpu, npu, a backend of this build (" + known +
                           ") or backend:device, comma-separated as a priority list");
  }
  if (!res.malformed.empty()) return InvalidArgument(res.malformed.front() + " in spec '" + spec_text + "'");
  if (!res.unavailable.empty()) {
    if (strict)
      return Status(StatusCode::kDeviceUnavailable, "device '" + spec_text +
                                                        "' is unavailable and strict mode forbids falling back: " +
                                                        join_unavailable(res.unavailable, true));
    // One line: the reasons without the fixes (`dlrt devices` and strict mode's error give them).
    DLRT_LOG(kWarn, "device '" + spec_text + "': " + join_unavailable(res.unavailable, false) +
                        (res.candidates.empty() ? "; running on cpu" : "") + " (`dlrt devices` says how to fix it)");
  }

  impl->pool = std::make_unique<ThreadPool>(threads);
  const bool optimize = options.optimize && env.optimize;
  if (optimize) DLRT_RETURN_IF_ERROR(optimize_standard(*impl->model.graph, *impl->pool).status());  // standard ONNX ops only
  // Every kernel this session builds from here on this thread (CPU partitions
  // and the accelerators' CPU fallbacks; constant folding above stays fp32)
  // packs its weights for this precision.
  exec::KernelBuildOptions build_options;
  build_options.precision = precision;
  exec::ScopedKernelBuildOptions build_scope(build_options);
  DLRT_ASSIGN_OR_RETURN(PartitionPlan plan, impl->compiled.plan(g, impl->model.base_dir, res, hardware()));
  backend::CompileOptions copts;
  copts.values = options.backend_options;
  copts.values["threads"] = std::to_string(impl->pool->num_threads());

  // The graph the session runs: CPU nodes as they are, each accelerator
  // partition folded into one com.dlrt.Partition node.
  auto rg = std::make_shared<ir::Graph>(g);
  rg->nodes.clear();
  rg->opsets["com.dlrt"] = 1;
  std::vector<char> half_values;  // by partition: the model holds half values there (holds_half)
  for (size_t p = 0; p < plan.partitions.size(); ++p) {
    const PlannedPartition& part = plan.partitions[p];
    for (int i : part.nodes) {
      const ir::Node& n = g.nodes[i];
      std::string why = plan.cpu_reasons[i];
      if (part.candidate < 0 && why.empty() && !res.unavailable.empty()) why = join_unavailable(res.unavailable, false);
      impl->node_placement.push_back({n.name, n.domain.empty() ? n.op_type : n.domain + "." + n.op_type,
                                      static_cast<int>(p), std::move(why)});
    }
    PartitionReport rep;
    rep.node_count = node_count(g, part.nodes);
    half_values.push_back(holds_half(g, part.nodes));
    if (part.candidate < 0) {
      rep.backend = "cpu";
      rep.device = "cpu:0";
      rep.vector_isa = cpu::cpu_kernels_isa_name();
      if (!res.unavailable.empty()) {
        rep.degraded = true;
        rep.reason = join_unavailable(res.unavailable, false);
      } else {
        for (int i : part.nodes)
          if (!plan.cpu_reasons[i].empty()) {
            rep.reason = "not taken by an accelerator: " + g.nodes[i].describe() + ": " + plan.cpu_reasons[i];
            break;
          }
      }
      for (int i : part.nodes) {
        rg->nodes.push_back(g.nodes[i]);
        impl->node_partition.push_back(static_cast<int>(p));
      }
      impl->accelerated.push_back(nullptr);
      impl->placement.partitions.push_back(rep);
      continue;
    }
    auto sub = CompiledPartitions::subgraph_of(g, part);
    if (!sub) sub = extract_partition(g, part.nodes);
    impl->compiled.track(static_cast<int>(p), res.candidates[part.candidate]);
    auto state = std::make_shared<PartitionState>(static_cast<int>(p), res.candidates[part.candidate], sub, strict, copts);
    DLRT_RETURN_IF_ERROR(state->prepare_cpu(*impl->pool));
    if (options.warm_start && !strict) {
      state->prepare_in_background();
    } else {
      Status s = state->prepare();
      if (!s.ok() && strict)
        return Status(StatusCode::kDeviceUnavailable, "partition " + std::to_string(p) + " on " +
                                                          res.candidates[part.candidate].device.spec() +
                                                          " failed and strict mode forbids falling back: " + s.message());
    }
    rg->nodes.push_back(partition_node(g, *sub, p));
    impl->node_partition.push_back(static_cast<int>(p));
    impl->accelerated.push_back(state);
    impl->placement.partitions.push_back(state->placement());
    impl->placement.partitions.back().node_count = rep.node_count;
  }
  DLRT_RETURN_IF_ERROR(rg->topological_sort());
  // From here on the session reads the model's graph for its values' types
  // only: its constants let go of their data, which rg shares, so that the
  // executor can free each weight its kernels packed (below) instead of
  // holding it twice. (Subgraphs are shared with rg: they keep theirs.)
  for (ir::Value& v : impl->model.graph->values)
    if (v.constant && v.constant->valid()) v.constant = exec::freed_constant(*v.constant);
  OptimizeOptions oo;
  oo.node_tags = &impl->node_partition;
  if (optimize) {  // fusions into CPU-only ops: Partition nodes are never matched
    oo.pool = impl->pool.get();
    DLRT_RETURN_IF_ERROR(optimize_cpu_fusions(*rg, oo).status());
  } else {
    widen_half_contrib_graph(*rg, oo);
  }
  impl->run_graph = rg;
  label_cpu_partitions(*impl, precision_label, half_values);

  auto* states = &impl->accelerated;
  auto custom = [states](const ir::Node& n) -> Result<std::unique_ptr<cpu::OpKernel>> {
    if (n.domain != "com.dlrt" || n.op_type != "Partition") return std::unique_ptr<cpu::OpKernel>();
    int64_t p = n.attr_int("partition", -1);
    if (p < 0 || p >= static_cast<int64_t>(states->size()) || !(*states)[p])
      return Internal("partition node '" + n.name + "' refers to no accelerator partition");
    return std::unique_ptr<cpu::OpKernel>(std::make_unique<PartitionKernel>((*states)[p]));
  };
  DLRT_ASSIGN_OR_RETURN(
      impl->executor, Executor::create_freeing_constants(impl->run_graph, *impl->pool, cpu::builtin_kernels(), custom));
  for (ir::ValueId id : g.inputs) impl->inputs.push_back(info_of(g.values[id]));
  for (ir::ValueId id : g.outputs) impl->outputs.push_back(info_of(g.values[id]));
  impl->aliases = OutputAliases(*rg);
  return impl;
}

}  // namespace

namespace {
RunValue value_of(const RunValue& v) { return v; }
RunValue value_of(const Tensor& t) { return RunValue::of(t); }

constexpr int kOrderedInputs = 0, kRunIntoResults = 1;
}  // namespace

template <typename Given>
Status SessionImpl::validate_inputs(const Given& given, std::vector<RunValue>& ordered) const {
  const ir::Graph& g = *model.graph;
  for (const auto& [name, v] : given) {
    bool known = false;
    for (const auto& i : inputs) known = known || i.name == name;
    if (!known) return InvalidArgument("the model has no input named '" + name + "'; its inputs are: " + names_of(inputs));
  }
  // Symbolic dim -> size seen: a list on the stack (on the heap past 32
  // symbols), not a map, as the run path allocates nothing it can avoid.
  struct Bound {
    const std::string* symbol;
    int64_t size;
  };
  constexpr size_t kStackBound = 32;
  Bound on_stack[kStackBound];
  std::vector<Bound> on_heap;
  size_t n_bound = 0;
  auto bound_at = [&](size_t j) -> Bound& { return j < kStackBound ? on_stack[j] : on_heap[j - kStackBound]; };
  ordered.clear();
  ordered.reserve(inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    const TensorInfo& info = inputs[k];
    auto it = given.find(info.name);
    if (it == given.end()) {
      const auto& type = g.values[g.inputs[k]].type;
      if (type.kind == ir::ValueKind::kOptional) {
        ordered.push_back(RunValue::optional_none(type.dtype));
        continue;
      }
      return InvalidArgument("input '" + info.name + "' is missing; the model's inputs are: " + names_of(inputs));
    }
    RunValue v = value_of(it->second);
    const ir::ValueKind declared = g.values[g.inputs[k]].type.kind;
    const bool is_map = v.kind == RunValue::Kind::kMap || v.kind == RunValue::Kind::kMapSequence;
    if ((declared == ir::ValueKind::kMap) != is_map ||
        (declared == ir::ValueKind::kSequence && v.kind != RunValue::Kind::kSequence) ||
        (declared == ir::ValueKind::kTensor && v.kind != RunValue::Kind::kTensor))
      return InvalidArgument("input '" + info.name + "' must be a " + info.type + " value");
    if (is_map) {
      const auto& type = g.values[g.inputs[k]].type;
      if (!v.map_keys.valid() || !v.map_values.valid() || v.map_keys.rank() != 1 || v.map_values.rank() != 1 ||
          v.map_keys.size() != v.map_values.size())
        return InvalidArgument("input '" + info.name + "': a map's keys and values must be 1-D tensors of one length");
      if (v.map_keys.dtype() != type.key_dtype || v.map_values.dtype() != type.dtype)
        return InvalidArgument("input '" + info.name + "' must be a " + info.type + ", got map(" +
                               dtype_name(v.map_keys.dtype()) + ",tensor(" + dtype_name(v.map_values.dtype()) + "))");
    }
    if (v.kind == RunValue::Kind::kTensor) {
      const Tensor& t = v.tensor;
      if (!t.valid()) return InvalidArgument("input '" + info.name + "' is an empty tensor");
      if (info.dtype != DType::kUndefined && t.dtype() != info.dtype)
        return InvalidArgument("input '" + info.name + "' must be " + dtype_name(info.dtype) + ", got " + dtype_name(t.dtype()));
      const auto& type = g.values[g.inputs[k]].type;
      if (type.shape && type.kind == ir::ValueKind::kTensor) {
        if (t.rank() != info.shape.size())
          return InvalidArgument("input '" + info.name + "' must have rank " + std::to_string(info.shape.size()) +
                                 ", got shape " + shape_to_string(t.shape()));
        for (size_t d = 0; d < t.rank(); ++d) {
          if (info.shape[d] >= 0 && info.shape[d] != t.dim(d))
            return InvalidArgument("input '" + info.name + "' dim " + std::to_string(d) + " must be " +
                                   std::to_string(info.shape[d]) + ", got shape " + shape_to_string(t.shape()));
          // A named dim must have one size across the inputs, except names
          // exporters use for "unknown" ("?", paddle2onnx: each is its own).
          const std::string& sym = info.dim_names[d];
          if (info.shape[d] < 0 && !sym.empty() && sym != "?") {
            const Bound* b = nullptr;
            for (size_t j = 0; j < n_bound && !b; ++j)
              if (*bound_at(j).symbol == sym) b = &bound_at(j);
            if (b && b->size != t.dim(d))
              return InvalidArgument("dim '" + sym + "' is " + std::to_string(b->size) + " in one input but " +
                                     std::to_string(t.dim(d)) + " in input '" + info.name + "'");
            if (!b) {
              if (n_bound < kStackBound) on_stack[n_bound] = {&sym, t.dim(d)};
              else on_heap.push_back({&sym, t.dim(d)});
              ++n_bound;
            }
          }
        }
      }
    }
    ordered.push_back(std::move(v));
  }
  return Status::Ok();
}

template <typename Given>
Result<std::vector<RunValue>> SessionImpl::run(const Given& given, RunReport* report, std::vector<double>* node_ms_out,
                                               std::span<Tensor* const> out_buffers) const {
  std::vector<RunValue> results;
  DLRT_RETURN_IF_ERROR(run_values(given, results, report, node_ms_out, out_buffers));
  return results;
}

template <typename Given>
Status SessionImpl::run_values(const Given& given, std::vector<RunValue>& results, RunReport* report,
                               std::vector<double>* node_ms_out, std::span<Tensor* const> out_buffers) const {
  return guard_allocations("in a run", [&] { return run_values_unguarded(given, results, report, node_ms_out, out_buffers); });
}

template <typename Given>
Status SessionImpl::run_values_unguarded(const Given& given, std::vector<RunValue>& results, RunReport* report,
                                         std::vector<double>* node_ms_out, std::span<Tensor* const> out_buffers) const {
  ScopedTensorLimit tensor_limit_scope(&tensor_limit);
  ThreadKeptValues<kOrderedInputs> kept;
  std::vector<RunValue>& ordered = kept.get();
  DLRT_RETURN_IF_ERROR(validate_inputs(given, ordered));
  if (!report && !node_ms_out)  // nothing to report: no report to build (it would allocate)
    return executor->run_into(ordered, results, nullptr, out_buffers);
  RunReport local = current_placement();
  for (auto& p : local.partitions) p.time_ms = 0;
  RunReportSink sink{&local.partitions};
  RunReportSink* previous = RunReportSink::current();
  RunReportSink::current() = &sink;
  std::vector<double> node_ms;
  auto t0 = std::chrono::steady_clock::now();
  Status out = executor->run_into(ordered, results, report || node_ms_out ? &node_ms : nullptr, out_buffers);
  RunReportSink::current() = previous;
  if (node_ms_out) *node_ms_out = node_ms;
  if (report) {
    local.run_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    for (size_t i = 0; i < node_ms.size() && i < node_partition.size(); ++i)
      if (!accelerated[node_partition[i]]) local.partitions[node_partition[i]].time_ms += node_ms[i];
    compiled.annotate(local);
    *report = std::move(local);
  }
  return out;
}

RunReport SessionImpl::current_placement() const {
  RunReport r = placement;
  for (size_t p = 0; p < accelerated.size() && p < r.partitions.size(); ++p)
    if (accelerated[p]) {
      int count = r.partitions[p].node_count;
      r.partitions[p] = accelerated[p]->placement();
      r.partitions[p].node_count = count;
    }
  compiled.annotate(r);
  return r;
}

Session::Session(std::unique_ptr<SessionImpl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

// Imports through `import` (given runtime_import_options()), keeping the
// model's descriptive fields for model_metadata(), then builds.
template <typename Import>
Result<std::unique_ptr<SessionImpl>> import_and_build(Import import, const SessionOptions& options) {
  ModelMetadata metadata;
  ir::ImportOptions o = runtime_import_options();
  o.metadata = &metadata;
  Result<ir::Model> model = import(o);
  ModelInfo info = model.ok() ? describe_model(*model, metadata) : ModelInfo{};
  if (model.ok()) DLRT_RETURN_IF_ERROR(select_outputs(*model->graph, options.outputs));
  if (model.ok()) ir::mark_onnxruntime_order(*model->graph);  // before optimisation: optimised or not, alike
  DLRT_ASSIGN_OR_RETURN(auto impl, build(std::move(model), std::move(metadata), options));
  impl->info = std::move(info);
  return impl;
}

// Whether the precision in force is "auto" (a config file that fails to load
// is not: build() reports it).
bool wants_auto_precision(const SessionOptions& options) {
  const Result<RuntimeConfig> config = load_runtime_config();
  return config.ok() && requested_cpu_precision(options, read_runtime_env(), *config) == kAutoPrecision;
}

// cpu_precision "auto": sessions made by `create` in each precision, the
// chosen one kept and told what was measured (precision_auto.h).
template <typename Create>
Result<std::unique_ptr<Session>> create_auto(const SessionOptions& options, Create create) {
  auto make = [&](const std::string& precision) {
    SessionOptions o = options;
    o.cpu_precision = precision, o.canary_inputs.clear();
    return create(o);
  };
  DLRT_ASSIGN_OR_RETURN(AutoPrecision chosen, choose_cpu_precision(make, options.canary_inputs));
  // Not shared yet: the choice is part of building it.
  auto& impl = const_cast<SessionImpl&>(session_impl(*chosen.session));
  for (PartitionReport& p : impl.placement.partitions)
    if (p.backend == "cpu") p.precision += "; auto: " + chosen.choice.reason;
  impl.precision_choice = std::move(chosen.choice);
  return std::move(chosen.session);
}

Result<std::unique_ptr<Session>> Session::create(const std::string& path, const SessionOptions& options) {
  DLRT_RETURN_IF_ERROR(check_options(options));
  if (wants_auto_precision(options))
    return create_auto(options, [&](const SessionOptions& o) { return create(path, o); });
  auto impl = guard_allocations("loading the model", [&]() -> Result<std::unique_ptr<SessionImpl>> {
    return import_and_build([&](const ir::ImportOptions& o) { return ir::import_onnx_file(path, o); }, options);
  });
  if (!impl.ok()) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (impl.status().code() == StatusCode::kOutOfMemory && !ec)
      return Status(StatusCode::kOutOfMemory, impl.status().message() + " (the model file holds " + format_bytes(size) + ")");
    return impl.status();
  }
  return std::unique_ptr<Session>(new Session(std::move(impl).value()));
}

Result<std::unique_ptr<Session>> Session::create_from_bytes(const std::string& bytes, const SessionOptions& options,
                                                            const std::string& base_dir) {
  DLRT_RETURN_IF_ERROR(check_options(options));
  if (wants_auto_precision(options))
    return create_auto(options, [&](const SessionOptions& o) { return create_from_bytes(bytes, o, base_dir); });
  DLRT_ASSIGN_OR_RETURN(auto impl, guard_allocations("loading the model", [&]() -> Result<std::unique_ptr<SessionImpl>> {
                          return import_and_build(
                              [&](const ir::ImportOptions& o) { return ir::import_onnx_bytes(bytes, base_dir, o); },
                              options);
                        }));
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

const std::vector<TensorInfo>& Session::inputs() const { return impl_->inputs; }
const std::vector<TensorInfo>& Session::outputs() const { return impl_->outputs; }
RunReport Session::placement() const { return impl_->current_placement(); }
const ModelMetadata& model_metadata(const Session& session) { return session_impl(session).metadata; }
const ModelInfo& model_info(const Session& session) { return session_impl(session).info; }
const PrecisionChoice& precision_choice(const Session& session) { return session_impl(session).precision_choice; }

Result<std::vector<Tensor>> Session::run(const std::map<std::string, Tensor>& inputs, RunReport* report) const {
  DLRT_ASSIGN_OR_RETURN(auto out, impl_->run(inputs, report));
  return as_tensors(std::move(out), impl_->outputs, impl_->aliases);
}

Result<std::vector<Tensor>> Session::run(const std::map<std::string, Tensor>& inputs, const RunOptions& options,
                                         RunReport* report) const {
  DLRT_ASSIGN_OR_RETURN(const RunLimits limits, run_limits_of(options, *this));
  RunLimitsScope scope(&limits);
  return run(inputs, report);
}

Result<std::vector<Value>> Session::run_values(const std::map<std::string, Value>& inputs, const RunOptions& options,
                                               RunReport* report) const {
  DLRT_ASSIGN_OR_RETURN(const RunLimits limits, run_limits_of(options, *this));
  std::map<std::string, RunValue> given;
  for (const auto& [name, v] : inputs) {
    if (v.kind == Value::Kind::kNone) continue;  // an absent optional: as if not given
    given.emplace(name, run_value_of(v));
  }
  RunLimitsScope scope(&limits);
  DLRT_ASSIGN_OR_RETURN(auto out, impl_->run(given, report));
  std::vector<Value> values;
  values.reserve(out.size());
  const OutputCopies copy(impl_->aliases, out);
  for (size_t i = 0; i < out.size(); ++i) {
    DLRT_ASSIGN_OR_RETURN(Value v, public_value_of(std::move(out[i]), copy[i]));
    values.push_back(std::move(v));
  }
  return values;
}

Status Session::run_into(const std::map<std::string, Tensor>& inputs, std::map<std::string, Tensor>& outputs,
                         const RunOptions& options, RunReport* report) const {
  DLRT_ASSIGN_OR_RETURN(const RunLimits limits, run_limits_of(options, *this));
  RunLimitsScope scope(&limits);
  return run_into(inputs, outputs, report);
}

Status Session::run_into(const std::map<std::string, Tensor>& inputs, std::map<std::string, Tensor>& outputs,
                         RunReport* report) const {
  for (const auto& [name, t] : outputs) {
    bool known = false;
    for (const auto& o : impl_->outputs) known = known || o.name == name;
    if (!known) return InvalidArgument("the model has no output named '" + name + "'; its outputs are: " + names_of(impl_->outputs));
  }
  // The caller's buffers, by output index: the kernels that make those
  // outputs write into them directly (from the second run of these shapes).
  // The list is on the stack for up to 16 outputs.
  const size_t n_out = impl_->outputs.size();
  Tensor* on_stack[16] = {};
  std::vector<Tensor*> on_heap(n_out > 16 ? n_out : 0, nullptr);
  const std::span<Tensor*> buffers(n_out > 16 ? on_heap.data() : on_stack, n_out);
  for (size_t i = 0; i < n_out; ++i) {
    auto it = outputs.find(impl_->outputs[i].name);
    if (it != outputs.end() && it->second.valid()) buffers[i] = &it->second;
  }
  ThreadKeptValues<kRunIntoResults> kept;
  std::vector<RunValue>& values = kept.get();
  DLRT_RETURN_IF_ERROR(impl_->run_values(inputs, values, report, nullptr, buffers));
  const OutputCopies copy(impl_->aliases, values);  // which outputs a buffer-less entry gets as a copy
  for (size_t i = 0; i < values.size(); ++i) {
    DLRT_RETURN_IF_ERROR(check_tensor_output(values[i], impl_->outputs[i]));
    auto it = outputs.find(impl_->outputs[i].name);
    if (it == outputs.end()) continue;
    Tensor& dst = it->second;
    const Tensor& got = values[i].tensor;
    if (!dst.valid()) {
      if (copy[i]) {
        DLRT_ASSIGN_OR_RETURN(dst, got.clone());
      } else {
        dst = got;
      }
      continue;
    }
    if (dst.dtype() != got.dtype() || dst.shape() != got.shape())
      return InvalidArgument("output buffer '" + it->first + "' is " + dtype_name(dst.dtype()) + " " +
                             shape_to_string(dst.shape()) + " but the output is " + dtype_name(got.dtype()) + " " +
                             shape_to_string(got.shape()));
    if (dst.raw_data() == got.raw_data()) continue;  // written in place
    DLRT_RETURN_IF_ERROR(dst.copy_from(got));
  }
  return Status::Ok();
}

const SessionImpl& session_impl(const Session& session) { return *session.impl_; }

Result<std::vector<RunValue>> run_session_values(const Session& session, const std::map<std::string, RunValue>& inputs,
                                                 RunReport* report) {
  return session_impl(session).run(inputs, report);
}

const ir::Graph& session_graph(const Session& session) { return *session_impl(session).model.graph; }

const ir::Graph& session_run_graph(const Session& session) { return *session_impl(session).run_graph; }

Result<std::vector<RunValue>> run_session_profiled(const Session& session, const std::map<std::string, RunValue>& inputs,
                                                   std::vector<double>& node_ms, RunReport* report) {
  return session_impl(session).run(inputs, report, &node_ms);
}

const std::vector<NodePlacement>& node_placement(const Session& session) {
  return session_impl(session).node_placement;
}

}  // namespace dlrt
