// An OpenCL partition ready to run, and the node classification it shares
// with supports().
//
// Every node of a partition is either
//   - a device node: float32 work lowered to kernels (ops.h), its outputs
//     live in device buffers; or
//   - a host node: shape arithmetic (Shape, Size, and ops whose inputs are all
//     host values and that touch no floating-point tensor, or whose inputs are
//     all constants) evaluated on the host with dlrt's CPU kernels, as GPU
//     runtimes do for shape subgraphs. Constant host nodes run once at init.
// Host values that a device node reads as data are uploaded (constants once
// per executable, others once per run, both small in practice); device values
// never come back to the host except as partition outputs.
//
// Memory: per distinct input signature, a plan holds the kernels with their
// arguments set and device buffers assigned by liveness (a buffer is reused as
// soon as its last reader has been enqueued); runs with the same shapes reuse
// the plan. One in-order command queue per executable.
//
// Thread-safety: run() serialises on the executable (max_concurrent_runs = 1).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backends/cpu/kernel.h"
#include "backends/opencl/cl_runtime.h"
#include "core/thread_pool.h"
#include "ir/graph.h"

namespace dlrt::opencl {

enum class NodeClass { kHost, kDevice, kUnsupported };

struct Classification {
  std::vector<NodeClass> cls;        // per node
  std::vector<std::string> reason;   // per unsupported node: why
};

// Classifies every node of `graph` (topological order). Values produced
// outside the graph (inputs, constants, unsupported nodes) count as host values.
Classification classify(const ir::Graph& graph);

struct Plan;

class ClExecutable final : public backend::Executable {
 public:
  static Result<std::unique_ptr<ClExecutable>> create(std::shared_ptr<ClDeviceContext> device, ir::Model model);
  ~ClExecutable() override;

  // Runs on host tensors in graph-input order; returns the graph outputs.
  Result<std::vector<Tensor>> run(std::span<const Tensor> inputs);

  // How many plans (input signatures) are cached; device bytes they hold.
  size_t plan_count() const;

 private:
  friend class RunLowering;
  ClExecutable() = default;
  Status prepare();
  Result<Plan*> plan_for(const std::string& key, class RunLowering& low);
  Result<cl_mem> const_buffer(ir::ValueId v, const Tensor& t);

  std::shared_ptr<ClDeviceContext> dev_;
  ir::Model model_;
  const ir::Graph* graph_ = nullptr;
  Classification classes_;
  std::vector<std::unique_ptr<cpu::OpKernel>> host_kernels_;  // per node (host nodes only)
  std::vector<std::optional<Tensor>> const_values_;          // per value: constants and constant host results
  std::vector<bool> is_const_;
  // Fusion: per node, an activation folded in, the value it writes instead
  // of its own output, a bias folded in (MatMul + Add), and nodes folded away.
  std::vector<Epilogue> epilogue_;
  std::vector<ir::ValueId> out_override_;
  std::vector<ir::ValueId> fused_bias_;
  std::vector<bool> skip_;

  std::unique_ptr<ThreadPool> pool_;
  cl_command_queue queue_ = nullptr;
  mutable std::mutex mu_;
  std::map<ir::ValueId, cl_mem> const_mem_;
  std::map<std::string, std::unique_ptr<Plan>> plans_;
};

}  // namespace dlrt::opencl
