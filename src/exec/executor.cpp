#include "exec/executor.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <new>
#include <stdexcept>

#include "core/fp_mode.h"
#include "core/large_alloc.h"
#include "core/logging.h"
#include "core/run_limits.h"

namespace dlrt {

namespace {

std::string domain_name(const std::string& d) { return d.empty() ? "ai.onnx" : d; }

// Finds a captured value by name in the enclosing frames.
const RunValue* lookup_capture(const std::string& name, const Frame* f) {
  for (; f; f = f->parent) {
    ir::ValueId id = f->graph->find_value(name);
    if (id == ir::kNoValue) continue;
    const RunValue* v = f->find(id);
    if (v && v->present()) return v;
  }
  return nullptr;
}

bool points_into(const Tensor& t, const void* base, size_t bytes) {
  auto p = static_cast<const uint8_t*>(t.raw_data());
  auto b = static_cast<const uint8_t*>(base);
  return b && t.nbytes() > 0 && p >= b && p < b + bytes;
}

// Arena plans are kept per input signature (dtypes and shapes); only runs
// whose inputs are all tensors are planned.
bool plannable(std::span<const RunValue> inputs) {
  for (const auto& v : inputs)
    if (v.kind != RunValue::Kind::kTensor) return false;
  return true;
}

bool same_signature(const std::vector<std::pair<DType, Shape>>& key, std::span<const RunValue> inputs) {
  if (key.size() != inputs.size()) return false;
  for (size_t i = 0; i < key.size(); ++i)
    if (key[i].first != inputs[i].tensor.dtype() || key[i].second != inputs[i].tensor.shape()) return false;
  return true;
}

// An allocation that failed inside a kernel (operator new's std::bad_alloc, a
// std::vector past max_size) as kOutOfMemory naming the node: `what` is
// "its compute" or "building its kernel".
Status allocation_failure(const ir::Node& node, const std::exception& e, const std::string& what) {
  return Status(StatusCode::kOutOfMemory, node.describe() + ": out of memory in " + what + " (" + e.what() +
                                              "); lower the inputs' sizes or raise the process's memory limit");
}

}  // namespace

// The main graph's per-run vectors, kept between runs (Executor::scratch_)
// so that a steady-state run does not allocate them again.
struct RunScratch {
  std::vector<RunValue> values;  // the frame's, all kNone between runs
  std::vector<const RunValue*> in_ptrs;
  std::vector<RunValue> outs;
  std::vector<char> used;
};

// Memory state of one run of the main graph: recording sizes, or placing
// planned intermediates in an arena.
struct RunMemory {
  bool recording = false;
  std::vector<ValueRecord> record;
  ArenaPlan* plan = nullptr;
  uint8_t* arena = nullptr;
  size_t arena_bytes = 0;
  RunScratch* scratch = nullptr;  // null: run_graph makes its own vectors
  // Caller buffers for the main graph's outputs (Executor::run), by output index.
  const std::vector<ir::ValueId>* graph_outputs = nullptr;
  OutputRecycler* recycler = nullptr;  // planned runs: large graph outputs reuse earlier runs' buffers
  std::span<Tensor* const> out_buffers;

  // The caller's buffer for output `k` when it holds exactly `dtype` and `shape`.
  Tensor* buffer_for_output(size_t k, DType dtype, const Shape& shape) const {
    Tensor* b = k < out_buffers.size() ? out_buffers[k] : nullptr;
    return b && b->valid() && dtype != DType::kString && b->dtype() == dtype && b->shape() == shape ? b : nullptr;
  }
};

namespace {

class NodeAllocator final : public exec::OutputAllocator {
 public:
  // `used` is the run's scratch flag vector (its capacity kept across nodes).
  NodeAllocator(RunMemory& mem, const ir::Node& node, int index, std::vector<char>& used)
      : mem_(mem), node_(node), index_(index), used_(used) {
    used_.assign(node.outputs.size(), 0);
  }

  Result<Tensor> allocate(size_t i, DType dtype, Shape shape) override { return place(i, dtype, std::move(shape), true); }
  Result<Tensor> allocate_uninitialized(size_t i, DType dtype, Shape shape) override {
    return place(i, dtype, std::move(shape), false);
  }

  Result<Tensor> place(size_t i, DType dtype, Shape shape, bool zero) {
    ir::ValueId id = i < node_.outputs.size() ? node_.outputs[i] : ir::kNoValue;
    if (id != ir::kNoValue) used_[i] = 1;
    if (Tensor* b = caller_buffer(id, dtype, shape)) {
      if (zero) std::memset(b->raw_data(), 0, b->nbytes());
      return Tensor::view(dtype, std::move(shape), b->raw_data());
    }
    if (mem_.plan && id != ir::kNoValue && dtype != DType::kString && mem_.plan->offset(id) != ArenaPlan::kUnplanned) {
      auto n = checked_element_count(shape);
      if (n.ok() && static_cast<size_t>(*n) * dtype_size(dtype) == mem_.plan->bytes(id)) {
        void* p = mem_.arena + mem_.plan->offset(id);
        if (zero) std::memset(p, 0, mem_.plan->bytes(id));
        return Tensor::view(dtype, std::move(shape), p);
      }
    }
    if (Tensor t = recycled(id, dtype, shape, zero); t.valid()) return t;
    auto t = zero ? Tensor::allocate(dtype, std::move(shape)) : Tensor::allocate_uninitialized(dtype, std::move(shape));
    if (mem_.recording && id != ir::kNoValue && t.ok() && dtype != DType::kString) {
      mem_.record[id].bytes = t->nbytes();
      mem_.record[id].allocated = true;
    }
    return t;
  }
  bool used(size_t i) const { return used_[i] != 0; }

 private:
  // The caller's buffer for graph output `id` when it fits exactly (planned runs only).
  Tensor* caller_buffer(ir::ValueId id, DType dtype, const Shape& shape) const {
    if (mem_.out_buffers.empty() || mem_.recording || id == ir::kNoValue) return nullptr;
    const auto& outs = *mem_.graph_outputs;
    for (size_t k = 0; k < outs.size(); ++k)
      if (outs[k] == id)
        if (Tensor* b = mem_.buffer_for_output(k, dtype, shape)) return b;
    return nullptr;
  }

  // Graph output `id` of kLargeAllocBytes or more in a buffer from the
  // recycler (planned runs), or an invalid tensor.
  Tensor recycled(ir::ValueId id, DType dtype, const Shape& shape, bool zero) const {
    if (!mem_.recycler || id == ir::kNoValue || dtype == DType::kString) return Tensor();
    auto n = checked_element_count(shape);
    if (!n.ok()) return Tensor();
    const size_t bytes = static_cast<size_t>(*n) * dtype_size(dtype);
    if (bytes < kLargeAllocBytes) return Tensor();
    const auto& outs = *mem_.graph_outputs;
    for (size_t k = 0; k < outs.size(); ++k) {
      if (outs[k] != id) continue;
      bool reused = false;
      std::shared_ptr<void> owner = mem_.recycler->take(k, bytes, &reused);
      if (!owner) return Tensor();
      if (reused && zero) std::memset(owner.get(), 0, bytes);
      void* p = owner.get();
      return Tensor::adopt(dtype, shape, std::move(owner), p);
    }
    return Tensor();
  }

  RunMemory& mem_;
  const ir::Node& node_;
  int index_;
  std::vector<char>& used_;
};

// After a node ran: note views (recording) or move unexpected arena views to
// the heap (planned run), so no value outlives the arena slot it points into.
Status settle_outputs(RunMemory& mem, const ir::Node& node, int index, const NodeAllocator& alloc,
                      std::span<const RunValue* const> inputs, std::vector<RunValue>& outs) {
  for (size_t o = 0; o < node.outputs.size(); ++o) {
    ir::ValueId id = node.outputs[o];
    if (id == ir::kNoValue) continue;
    RunValue& v = outs[o];
    if (mem.recording) {
      mem.record[id].producer = index;
      if (alloc.used(o) || v.kind != RunValue::Kind::kTensor) continue;
      for (size_t k = 0; k < inputs.size(); ++k) {
        const RunValue* in = inputs[k];
        if (in && in->kind == RunValue::Kind::kTensor && node.inputs[k] != ir::kNoValue &&
            points_into(v.tensor, in->tensor.raw_data(), in->tensor.nbytes())) {
          mem.record[id].alias_of = node.inputs[k];
          break;
        }
      }
      continue;
    }
    if (!mem.arena) continue;
    if (v.kind == RunValue::Kind::kTensor) {
      if (!alloc.used(o) && !mem.plan->expects_alias(id) && points_into(v.tensor, mem.arena, mem.arena_bytes)) {
        DLRT_ASSIGN_OR_RETURN(v.tensor, v.tensor.clone());
      }
    } else {
      for (auto& t : v.sequence)
        if (points_into(t, mem.arena, mem.arena_bytes)) {
          DLRT_ASSIGN_OR_RETURN(t, t.clone());
        }
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<Executor>> Executor::create(std::shared_ptr<const ir::Graph> graph, ThreadPool& pool,
                                                  const exec::KernelRegistry& kernels, CustomKernelFactory custom) {
  std::unique_ptr<Executor> ex(new Executor(std::move(graph), pool, kernels, std::move(custom)));
  DLRT_RETURN_IF_ERROR(ex->plan_graph(*ex->graph_, nullptr));
  return ex;
}

Result<std::unique_ptr<Executor>> Executor::create_freeing_constants(std::shared_ptr<ir::Graph> graph, ThreadPool& pool,
                                                                     const exec::KernelRegistry& kernels,
                                                                     CustomKernelFactory custom) {
  ir::Graph* owned = graph.get();
  std::unique_ptr<Executor> ex(new Executor(std::move(graph), pool, kernels, std::move(custom)));
  DLRT_RETURN_IF_ERROR(ex->plan_graph(*owned, owned));
  return ex;
}

void Executor::free_constant(GraphPlan& plan, ir::Graph& g, ir::ValueId v,
                             const std::vector<std::pair<int, size_t>>& readers) {
  for (const auto& [node, input] : readers) plan.nodes[node].kernel->drop_constant(input);
  std::optional<Tensor>& c = g.values[v].constant;
  freed_constants_ += 1;
  freed_constant_bytes_ += c->nbytes();
  c = exec::freed_constant(*c);
  plan.constants[v] = RunValue::of(*c);
}

void Executor::free_if_dropped(GraphPlan& plan, ir::Graph& g, const std::vector<ir::ValueId>& candidates,
                               const std::vector<std::vector<std::pair<int, size_t>>>& readers) {
  for (ir::ValueId v : candidates) {
    bool all = true;
    for (const auto& [node, input] : readers[v]) all = all && plan.nodes[node].kernel->can_drop_constant(input);
    if (all) free_constant(plan, g, v, readers[v]);
  }
}

Status Executor::plan_graph(const ir::Graph& g, ir::Graph* owned) {
  GraphPlan plan;
  // last reader of each value; graph outputs are never released
  std::vector<int> last_use(g.values.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& node = g.nodes[i];
    for (ir::ValueId in : node.inputs)
      if (in != ir::kNoValue) last_use[in] = static_cast<int>(i);
    for (ir::ValueId in : g.implicit_inputs(node)) last_use[in] = static_cast<int>(i);
    // An output nobody reads is released right after its producer.
    for (ir::ValueId out : node.outputs)
      if (out != ir::kNoValue && last_use[out] < static_cast<int>(i)) last_use[out] = static_cast<int>(i);
  }
  for (ir::ValueId o : g.outputs) last_use[o] = -1;
  plan.last_use = last_use;
  plan.constants.resize(g.values.size());
  for (size_t v = 0; v < g.values.size(); ++v)
    if (g.values[v].constant) plan.constants[v] = RunValue::of(*g.values[v].constant);
  for (const ir::Node& node : g.nodes) {
    plan.max_inputs = std::max(plan.max_inputs, node.inputs.size());
    plan.max_outputs = std::max(plan.max_outputs, node.outputs.size());
  }
  plan.nodes.resize(g.nodes.size());
  plan.in_place.assign(g.nodes.size(), 0);
  plan.flush.assign(g.nodes.size(), 0);
  for (size_t v = 0; v < g.values.size(); ++v)
    if (last_use[v] >= 0 && !g.values[v].constant) plan.nodes[last_use[v]].release_after.push_back(static_cast<ir::ValueId>(v));

  // Freeing constants (owned): the nodes reading each one and the inputs
  // they read it at; a constant that is a graph output or that a subgraph
  // captures is kept (kept[v]). One that nothing reads goes now, the others
  // after their last reader's kernel is built (free_after, by node).
  std::vector<std::vector<std::pair<int, size_t>>> readers;
  std::vector<char> kept;
  std::vector<std::vector<ir::ValueId>> free_after;
  if (owned) {
    readers.resize(g.values.size());
    kept.assign(g.values.size(), 0);
    free_after.resize(g.nodes.size());
    for (ir::ValueId o : g.outputs) kept[o] = 1;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const ir::Node& node = g.nodes[i];
      for (size_t k = 0; k < node.inputs.size(); ++k)
        if (node.inputs[k] != ir::kNoValue) readers[node.inputs[k]].emplace_back(static_cast<int>(i), k);
      for (ir::ValueId in : g.implicit_inputs(node)) kept[in] = 1;
    }
    for (size_t v = 0; v < g.values.size(); ++v) {
      const auto& c = g.values[v].constant;
      if (!c || kept[v] || c->nbytes() == 0 || !c->raw_data()) continue;
      if (readers[v].empty())
        free_constant(plan, *owned, static_cast<ir::ValueId>(v), readers[v]);
      else
        free_after[last_use[v]].push_back(static_cast<ir::ValueId>(v));
    }
  }

  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& node = g.nodes[i];
    if (custom_) {
      auto custom_kernel = [&]() -> Result<std::unique_ptr<exec::OpKernel>> {
        try {
          return custom_(node);
        } catch (const std::bad_alloc& e) {
          return allocation_failure(node, e, "building its kernel");
        }
      };
      DLRT_ASSIGN_OR_RETURN(auto k, custom_kernel());
      if (k) {
        plan.nodes[i].kernel = std::move(k);
        if (owned) free_if_dropped(plan, *owned, free_after[i], readers);
        continue;
      }
    }
    const exec::KernelDef* def = kernels_.find(node.op_type, node.domain, node.opset);
    if (!def)
      return Unsupported("op '" + node.op_type + "' (domain '" + domain_name(node.domain) + "', opset " +
                         std::to_string(node.opset) + ") of node '" + node.name +
                         "' is not supported by the CPU backend");
    auto kernel = [&]() -> Result<std::unique_ptr<exec::OpKernel>> {
      // A kernel packs its weights here: an allocation failing in it is kOutOfMemory, not an abort.
      try {
        if (!def->factory_with_constants) return def->factory(node);
        // Initializers and folded constants of this graph (a subgraph's own constants work the same way).
        exec::ConstantInputs constants = [&g, &node](size_t k) -> const Tensor* {
          if (k >= node.inputs.size() || node.inputs[k] == ir::kNoValue) return nullptr;
          const auto& c = g.values[node.inputs[k]].constant;
          return c && c->valid() && !exec::is_freed_constant(*c) ? &*c : nullptr;
        };
        return def->factory_with_constants(node, constants);
      } catch (const std::bad_alloc& e) {
        return allocation_failure(node, e, "building its kernel (packing its weights)");
      } catch (const std::length_error& e) {
        return allocation_failure(node, e, "building its kernel (packing its weights)");
      }
    }();
    if (!kernel.ok()) {
      const Status& s = kernel.status();
      if (s.message().find(node.describe()) != std::string::npos) return s;
      return s.with_context(node.describe());
    }
    plan.nodes[i].kernel = std::move(kernel).value();
    plan.in_place[i] = def->in_place_inputs;
    plan.flush[i] = def->flush_subnormals && flush_subnormals_enabled();
    for (const auto& [name, a] : node.attributes) {
      if (a.g) DLRT_RETURN_IF_ERROR(plan_graph(*a.g, owned ? a.g.get() : nullptr));
      for (const auto& sg : a.graphs) DLRT_RETURN_IF_ERROR(plan_graph(*sg, owned ? sg.get() : nullptr));
    }
    if (owned) free_if_dropped(plan, *owned, free_after[i], readers);
  }
  plans_[&g] = std::move(plan);
  return Status::Ok();
}

std::shared_ptr<ArenaPlan> Executor::find_arena_plan(std::span<const RunValue> inputs) const {
  std::lock_guard<std::mutex> lk(arena_mu_);
  for (const auto& [k, p] : arena_plans_)
    if (same_signature(k, inputs)) return p;
  return nullptr;
}

void Executor::store_arena_plan(std::span<const RunValue> inputs, std::shared_ptr<ArenaPlan> plan) const {
  std::lock_guard<std::mutex> lk(arena_mu_);
  for (const auto& [k, p] : arena_plans_)
    if (same_signature(k, inputs)) return;  // another run planned it first
  if (arena_plans_.size() >= kMaxArenaPlans) arena_plans_.erase(arena_plans_.begin());
  std::vector<std::pair<DType, Shape>> key;
  for (const auto& v : inputs) key.emplace_back(v.tensor.dtype(), v.tensor.shape());
  arena_plans_.emplace_back(std::move(key), std::move(plan));
}

std::optional<ir::MemoryPlan> Executor::memory_stats() const {
  std::lock_guard<std::mutex> lk(arena_mu_);
  if (arena_plans_.empty()) return std::nullopt;
  return arena_plans_.back().second->stats();
}

Result<std::vector<RunValue>> Executor::run(std::vector<RunValue> inputs, std::vector<double>* node_ms,
                                            std::span<Tensor* const> out_buffers) const {
  std::vector<RunValue> results;
  DLRT_RETURN_IF_ERROR(run_into(inputs, results, node_ms, out_buffers));
  return results;
}

Status Executor::run_into(std::span<const RunValue> inputs, std::vector<RunValue>& results,
                          std::vector<double>* node_ms, std::span<Tensor* const> out_buffers) const {
  if (!plannable(inputs)) return run_graph(*graph_, inputs, nullptr, nullptr, results, node_ms);
  RunMemory mem;
  std::shared_ptr<ArenaPlan> plan = find_arena_plan(inputs);
  if (!plan) {
    mem.recording = true;
    mem.record.resize(graph_->values.size());
    Status s = run_graph(*graph_, inputs, nullptr, &mem, results, node_ms);
    if (s.ok()) {
      const GraphPlan& gp = plans_.at(graph_.get());
      auto arena = ArenaPlan::build(mem.record, gp.last_use, *graph_, gp.in_place);
      const ir::MemoryPlan& st = arena->stats();
      DLRT_LOG(kDebug, "cpu: arena plan for graph '" + graph_->name + "': " + std::to_string(st.arena_bytes) +
                           " bytes (lower bound " + std::to_string(st.peak_live_bytes) + ", without reuse " +
                           std::to_string(st.total_bytes) + "), " + std::to_string(st.in_place) +
                           " outputs written over an input");
      store_arena_plan(inputs, std::move(arena));
    }
    return s;
  }
  mem.plan = plan.get();
  mem.graph_outputs = &graph_->outputs;
  mem.out_buffers = out_buffers;
  mem.recycler = &output_recycler_;
  mem.arena_bytes = plan->stats().arena_bytes;
  const ArenaPool::Arena arena = arena_pool_.acquire(plan->arena_alloc_bytes());
  mem.arena = static_cast<uint8_t*>(arena.data);
  if (!mem.arena) return Status(StatusCode::kOutOfMemory, "cannot allocate the " + std::to_string(mem.arena_bytes) + "-byte arena for a run");
  std::unique_ptr<RunScratch> scratch;
  {
    std::lock_guard<std::mutex> lk(arena_mu_);
    if (!scratch_.empty()) {
      scratch = std::move(scratch_.back());
      scratch_.pop_back();
    }
  }
  if (!scratch) scratch = std::make_unique<RunScratch>();
  mem.scratch = scratch.get();
  Status s = run_graph(*graph_, inputs, nullptr, &mem, results, node_ms);
  arena_pool_.release(arena);
  {
    std::lock_guard<std::mutex> lk(arena_mu_);
    scratch_.push_back(std::move(scratch));
  }
  return s;
}

Executor::Executor(std::shared_ptr<const ir::Graph> graph, ThreadPool& pool, const exec::KernelRegistry& kernels,
                   CustomKernelFactory custom)
    : graph_(std::move(graph)), pool_(pool), kernels_(kernels), custom_(std::move(custom)) {}
Executor::~Executor() = default;

Status Executor::run_graph(const ir::Graph& g, std::span<const RunValue> inputs, const Frame* parent,
                           RunMemory* memory, std::vector<RunValue>& result, std::vector<double>* node_ms) const {
  auto pit = plans_.find(&g);
  if (pit == plans_.end()) return Internal("graph '" + g.name + "' was not planned");
  const GraphPlan& plan = pit->second;

  // Per-node scratch, sized once so that the node loop allocates nothing of
  // its own (the kernels' outputs come from the arena when planned): the
  // executor's kept scratch on a planned run, where the run allocates none
  // of it, else the run's own.
  RunScratch own;
  RunScratch& sc = memory && memory->scratch ? *memory->scratch : own;
  std::vector<const RunValue*>& in_ptrs = sc.in_ptrs;
  std::vector<RunValue>& outs = sc.outs;
  Frame frame;
  frame.values.swap(sc.values);
  // Hands the frame's values back, every one released, however the run ends.
  struct GiveBack {
    RunScratch& sc;
    Frame& frame;
    ~GiveBack() {
      for (auto& v : frame.values) v = RunValue{};
      sc.outs.clear();
      sc.values.swap(frame.values);
    }
  } give_back{sc, frame};
  frame.graph = &g;
  frame.parent = parent;
  frame.values.resize(g.values.size());
  frame.constants = &plan.constants;
  if (inputs.size() != g.inputs.size())
    return InvalidArgument("graph '" + g.name + "' takes " + std::to_string(g.inputs.size()) + " inputs, got " +
                           std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) frame.values[g.inputs[i]] = inputs[i];
  for (ir::ValueId c : g.captures) {
    const RunValue* v = lookup_capture(g.values[c].name, parent);
    if (!v) return InvalidModel("subgraph '" + g.name + "' reads '" + g.values[c].name + "', which has no value when it runs");
    frame.values[c] = *v;
  }

  exec::SubgraphRunner runner = [this, &frame](const ir::Graph& sub,
                                             std::vector<RunValue> in) -> Result<std::vector<RunValue>> {
    std::vector<RunValue> out;
    DLRT_RETURN_IF_ERROR(run_graph(sub, in, &frame, nullptr, out));
    return out;
  };
  in_ptrs.reserve(plan.max_inputs);
  outs.reserve(plan.max_outputs);
  sc.used.reserve(plan.max_outputs);
  if (node_ms) node_ms->assign(g.nodes.size(), 0.0);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& node = g.nodes[i];
    DLRT_RETURN_IF_ERROR(check_run_limits());  // RunOptions: timeout, cancel
    auto t0 = node_ms ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    in_ptrs.clear();
    for (ir::ValueId in : node.inputs) {
      const RunValue* v = in == ir::kNoValue ? nullptr : frame.find(in);
      if (in != ir::kNoValue && !v) {
        // A capture of a nested subgraph resolved from an outer frame.
        v = lookup_capture(g.values[in].name, parent);
        if (!v) return Internal(node.describe() + ": input '" + g.values[in].name + "' has no value");
      }
      in_ptrs.push_back(v);
    }
    outs.clear();
    outs.resize(node.outputs.size());
    std::optional<NodeAllocator> alloc;
    if (memory) alloc.emplace(*memory, node, static_cast<int>(i), sc.used);
    exec::KernelContext ctx(node, in_ptrs, outs, pool_, runner, alloc ? &*alloc : nullptr);
    Status s;
    try {
      ScopedFlushSubnormals fp(plan.flush[i] != 0);
      s = plan.nodes[i].kernel->compute(ctx);
    } catch (const std::bad_alloc& e) {
      s = allocation_failure(node, e, "its compute");
    } catch (const std::length_error& e) {
      s = allocation_failure(node, e, "its compute");
    }
    if (!s.ok()) {
      if (s.message().find(node.describe()) == std::string::npos) s = s.with_context(node.describe());
      return s;
    }
    if (memory) DLRT_RETURN_IF_ERROR(settle_outputs(*memory, node, static_cast<int>(i), *alloc, in_ptrs, outs));
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      ir::ValueId id = node.outputs[o];
      if (id == ir::kNoValue) continue;
      if (outs[o].kind == RunValue::Kind::kNone)
        return Internal(node.describe() + " did not produce its output " + std::to_string(o) + " ('" + g.values[id].name + "')");
      frame.values[id] = std::move(outs[o]);
    }
    for (ir::ValueId r : plan.nodes[i].release_after) frame.values[r] = RunValue{};
    if (node_ms) (*node_ms)[i] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }

  result.clear();
  result.reserve(g.outputs.size());
  for (ir::ValueId o : g.outputs) {
    const RunValue* v = frame.find(o);
    if (!v) {
      const RunValue* cap = lookup_capture(g.values[o].name, parent);
      if (!cap) return Internal("graph output '" + g.values[o].name + "' has no value");
      result.push_back(*cap);
    } else {
      result.push_back(*v);
    }
    // Nothing handed back may point into this run's arena: a view into it
    // (an Identity or Reshape output) is copied out, into the caller's
    // buffer for this output when one fits.
    if (memory && memory->arena && result.back().kind == RunValue::Kind::kTensor &&
        points_into(result.back().tensor, memory->arena, memory->arena_bytes)) {
      Tensor& t = result.back().tensor;
      if (Tensor* b = memory->buffer_for_output(result.size() - 1, t.dtype(), t.shape())) {
        DLRT_RETURN_IF_ERROR(b->copy_from(t));
        t = Tensor::view(t.dtype(), t.shape(), b->raw_data());
      } else {
        DLRT_ASSIGN_OR_RETURN(t, t.clone());
      }
    }
  }
  return Status::Ok();
}

}  // namespace dlrt
