// Runs a graph node by node on the CPU kernels, freeing each intermediate
// value after its last use (the liveness plan is computed once, at create).
//
// Thread-safety: run() may be called concurrently; each call keeps its values
// in its own frame. Kernels are shared and are const.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/cpu/kernel.h"
#include "core/run_value.h"
#include "core/thread_pool.h"
#include "ir/graph.h"

namespace dlrt {

// The values of one graph while it runs; `parent` is the frame of the
// enclosing graph, where captured names are looked up.
struct Frame {
  const ir::Graph* graph = nullptr;
  std::vector<RunValue> values;
  const Frame* parent = nullptr;
};

struct NodeTiming {
  double ms = 0;
};

class Executor {
 public:
  // Creates a kernel for every node of `graph` and of its subgraphs.
  // kUnsupported names the first op without a CPU kernel (op, domain, opset, node).
  static Result<std::unique_ptr<Executor>> create(std::shared_ptr<const ir::Graph> graph, ThreadPool& pool);

  // Runs the main graph; `inputs` are in graph->inputs order.
  Result<std::vector<RunValue>> run(std::vector<RunValue> inputs) const;

  const ir::Graph& graph() const { return *graph_; }

 private:
  struct NodePlan {
    std::unique_ptr<cpu::OpKernel> kernel;
    std::vector<ir::ValueId> release_after;  // values whose last reader is this node
  };
  struct GraphPlan {
    std::vector<NodePlan> nodes;
  };

  Executor(std::shared_ptr<const ir::Graph> graph, ThreadPool& pool) : graph_(std::move(graph)), pool_(pool) {}
  Status plan_graph(const ir::Graph& g);
  Result<std::vector<RunValue>> run_graph(const ir::Graph& g, std::vector<RunValue> inputs, const Frame* parent) const;

  std::shared_ptr<const ir::Graph> graph_;
  ThreadPool& pool_;
  std::map<const ir::Graph*, GraphPlan> plans_;
};

}  // namespace dlrt
