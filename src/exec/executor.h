// Runs a graph node by node on the kernels of a registry, freeing each intermediate
// value after its last use (the liveness plan is computed once, at create).
//
// Thread-safety: run() may be called concurrently; each call keeps its values
// in its own frame. Kernels are shared and are const.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/run_value.h"
#include "core/thread_pool.h"
#include "exec/arena.h"
#include "exec/kernel.h"
#include "exec/output_recycler.h"
#include "ir/graph.h"
#include "ir/memory_plan.h"

namespace dlrt {

// The values of one graph while it runs; `parent` is the frame of the
// enclosing graph, where captured names are looked up.
// Constants are not copied into `values` (they would be on every run): they
// are read from `constants`, made once per graph at create.
struct Frame {
  const ir::Graph* graph = nullptr;
  std::vector<RunValue> values;
  const std::vector<RunValue>* constants = nullptr;  // by value id; kNone where not constant
  const Frame* parent = nullptr;

  // The value of `id` in this frame, or nullptr when it has none (yet).
  const RunValue* find(ir::ValueId id) const {
    if (values[id].kind != RunValue::Kind::kNone) return &values[id];
    const RunValue& c = (*constants)[id];
    return c.kind == RunValue::Kind::kNone ? nullptr : &c;
  }
};

struct RunMemory;
struct RunScratch;

// Makes the kernel for nodes the registry does not cover (the runtime's
// partition nodes); returns nullptr for nodes it does not handle either.
using CustomKernelFactory = std::function<Result<std::unique_ptr<exec::OpKernel>>(const ir::Node& node)>;

class Executor {
 public:
  // Creates a kernel for every node of `graph` and of its subgraphs, from
  // `custom` first and then `kernels` (which must outlive the executor).
  // kUnsupported names the first op without a kernel (op, domain, opset, node).
  static Result<std::unique_ptr<Executor>> create(std::shared_ptr<const ir::Graph> graph, ThreadPool& pool,
                                                  const exec::KernelRegistry& kernels,
                                                  CustomKernelFactory custom = nullptr);
  // The same for a graph whose constants the executor may change: a
  // constant that every node reading it keeps its own copy of (packed
  // weights: OpKernel::can_drop_constant) is freed as soon as the last of
  // those kernels is built, so that the weights are not held twice, nor
  // both copies at once while the kernels are built. Its Value::constant
  // (here and in the executor) becomes its stand-in (freed_constant), so
  // its storage goes once nothing else shares it (the caller's other
  // copies of the graph must have let go of it). Constants that no node
  // reads go too; graph outputs and values a subgraph captures stay.
  static Result<std::unique_ptr<Executor>> create_freeing_constants(std::shared_ptr<ir::Graph> graph, ThreadPool& pool,
                                                                    const exec::KernelRegistry& kernels,
                                                                    CustomKernelFactory custom = nullptr);

  // Runs the main graph; `inputs` are in graph->inputs order. With
  // `node_ms`, also returns the wall time of each main-graph node.
  // `out_buffers` (empty, or one per graph output, null where none): tensors
  // the caller owns. A graph output that a kernel allocates with exactly a
  // buffer's dtype and shape is written into it (the result is then a view
  // of it) once the run's shapes are planned; others are allocated as usual.
  // A buffer must not overlap the inputs.
  Result<std::vector<RunValue>> run(std::vector<RunValue> inputs, std::vector<double>* node_ms = nullptr,
                                    std::span<Tensor* const> out_buffers = {}) const;
  // The same into `results` (cleared first), whose capacity a caller can keep
  // from run to run: with it a planned run allocates nothing here.
  Status run_into(std::span<const RunValue> inputs, std::vector<RunValue>& results,
                  std::vector<double>* node_ms = nullptr, std::span<Tensor* const> out_buffers = {}) const;

  const ir::Graph& graph() const { return *graph_; }
  ~Executor();

  // Statistics of the arena plan of the most recent input shapes, if any run
  // has been planned yet: arena size, lower bound, bytes without reuse.
  std::optional<ir::MemoryPlan> memory_stats() const;
  // The constants create_freeing_constants freed (in every graph): how
  // many, and their bytes.
  size_t freed_constants() const { return freed_constants_; }
  size_t freed_constant_bytes() const { return freed_constant_bytes_; }

 private:
  struct NodePlan {
    std::unique_ptr<exec::OpKernel> kernel;
    std::vector<ir::ValueId> release_after;  // values whose last reader is this node
  };
  struct GraphPlan {
    std::vector<NodePlan> nodes;
    std::vector<int> last_use;  // per value: last reading node, -1 for graph outputs and unread values
    std::vector<RunValue> constants;  // per value: the graph's constant, kNone for computed values
    std::vector<uint32_t> in_place;  // per node: KernelDef::in_place_inputs (0 for custom kernels)
    std::vector<char> flush;         // per node: KernelDef::flush_subnormals, when enabled
    size_t max_inputs = 0, max_outputs = 0;  // over the nodes, to size the run's scratch vectors once
  };

  Executor(std::shared_ptr<const ir::Graph> graph, ThreadPool& pool, const exec::KernelRegistry& kernels,
           CustomKernelFactory custom);
  // `owned`: &g when the executor may free g's constants, else null.
  Status plan_graph(const ir::Graph& g, ir::Graph* owned);
  // Frees constant `v` of `g` (create_freeing_constants): its readers' kernels let go of it, then the plan and the
  // graph.
  void free_constant(GraphPlan& plan, ir::Graph& g, ir::ValueId v, const std::vector<std::pair<int, size_t>>& readers);
  // Frees those of `candidates` (constants whose last reader was just built) that every reader's kernel can do without.
  void free_if_dropped(GraphPlan& plan, ir::Graph& g, const std::vector<ir::ValueId>& candidates,
                       const std::vector<std::vector<std::pair<int, size_t>>>& readers);
  Status run_graph(const ir::Graph& g, std::span<const RunValue> inputs, const Frame* parent, RunMemory* memory,
                   std::vector<RunValue>& result, std::vector<double>* node_ms = nullptr) const;
  // The plan for runs with these inputs' dtypes and shapes, or null.
  std::shared_ptr<ArenaPlan> find_arena_plan(std::span<const RunValue> inputs) const;
  void store_arena_plan(std::span<const RunValue> inputs, std::shared_ptr<ArenaPlan> plan) const;

  std::shared_ptr<const ir::Graph> graph_;
  ThreadPool& pool_;
  const exec::KernelRegistry& kernels_;
  CustomKernelFactory custom_;
  std::map<const ir::Graph*, GraphPlan> plans_;
  size_t freed_constants_ = 0, freed_constant_bytes_ = 0;

  // Arena plans by input-shape signature, oldest evicted; a plan is only
  // offsets (its memory comes from arena_pool_), so keeping many costs little
  // and a model run at many sequence lengths records each shape once.
  static constexpr size_t kMaxArenaPlans = 64;
  mutable std::mutex arena_mu_;
  mutable std::vector<std::pair<std::vector<std::pair<DType, Shape>>, std::shared_ptr<ArenaPlan>>> arena_plans_;
  // Per-run vectors of finished planned runs, for the next ones (one per
  // concurrent run at most); under arena_mu_.
  mutable std::vector<std::unique_ptr<RunScratch>> scratch_;
  // The arenas of planned runs, whichever plan they serve.
  mutable ArenaPool arena_pool_;
  // Large graph outputs' buffers, reused once their caller dropped them.
  mutable OutputRecycler output_recycler_;
};

}  // namespace dlrt
