// Running a partition on a GPU through the shared kernels (lowering.h), for
// every backend that drives such a device (OpenCL, CUDA).
//
// Every node of a partition is either
//   - a device node: float32 work lowered to kernel launches, its outputs
//     live in device buffers; or
//   - a host node: shape arithmetic (Shape, Size, and ops whose inputs are all
//     host values and that touch no floating-point tensor, or whose inputs are
//     all constants) evaluated on the host with dlrt's CPU kernels, as GPU
//     runtimes do for shape subgraphs. Constant host nodes run once at create.
// Host values that a device node reads as data are uploaded (constants once
// per executor, others once per run, both small in practice); device values
// never come back to the host except as partition outputs.
//
// Memory: per distinct input signature, a plan holds the launches prepared by
// the device (kernels with their arguments bound) and device buffers assigned
// by liveness (a buffer is reused as soon as its last reader has been
// enqueued); runs with the same shapes reuse the plan. A run uploads the
// per-run host values, replays the plan's launches in order and reads the
// outputs back.
//
// What differs between backends is behind KernelDevice: buffers, binding a
// launch, and replaying a plan (CUDA captures the replay into a graph).
//
// Thread-safety: Executor::run serialises on the executor.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "backends/cpu/kernel.h"
#include "backends/gpu/lowering.h"
#include "core/thread_pool.h"
#include "ir/graph.h"

namespace dlrt::gpu {

enum class NodeClass { kHost, kDevice, kUnsupported };

struct Classification {
  std::vector<NodeClass> cls;        // per node
  std::vector<std::string> reason;   // per unsupported node: why
};

// Classifies every node of `graph` (topological order). Values produced
// outside the graph (inputs, constants, unsupported nodes) count as host values.
Classification classify(const ir::Graph& graph);

// A device buffer as the backend names it (a cl_mem or a CUdeviceptr).
using DeviceBuffer = uint64_t;

// A launch bound to its plan's buffers; what it holds is the device's business.
class BoundLaunch {
 public:
  virtual ~BoundLaunch() = default;
};

// The device's own state for one plan (e.g. a captured CUDA graph).
class PlanState {
 public:
  virtual ~PlanState() = default;
};

// One host-to-device copy of a run.
struct Upload {
  DeviceBuffer buffer = 0;
  const void* data = nullptr;
  size_t bytes = 0;
  std::string what;  // the value's name, for messages
};

// One device-to-host copy of a run.
struct Download {
  DeviceBuffer buffer = 0;
  void* data = nullptr;
  size_t bytes = 0;
  std::string what;
};

// The launches of a plan, in order, as replay() receives them.
struct PlanLaunches {
  std::vector<const Launch*> launches;
  std::vector<BoundLaunch*> bound;
  std::unique_ptr<PlanState>* state = nullptr;  // the device may keep state here across runs
};

// What a GPU backend supplies to the executor. Used by one executor, under its lock.
class KernelDevice {
 public:
  virtual ~KernelDevice() = default;
  // "opencl", "cuda": prefixes messages.
  virtual std::string name() const = 0;
  virtual const DeviceParams& params() const = 0;
  // A read-write buffer of `bytes` (kOutOfMemory when the device has no room).
  virtual Result<DeviceBuffer> alloc(size_t bytes) = 0;
  // A buffer holding a copy of `bytes` of host data, for constants.
  virtual Result<DeviceBuffer> alloc_constant(const void* data, size_t bytes) = 0;
  virtual void release(DeviceBuffer b) = 0;
  // Binds `l` to the buffers of its slot arguments (slot_buffers[slot]).
  virtual Result<std::unique_ptr<BoundLaunch>> bind(const Launch& l, const std::vector<DeviceBuffer>& slot_buffers) = 0;
  // `bytes` of host memory the device copies into fastest (e.g. page-locked),
  // freed when the last holder drops it; null: the executor uses plain memory.
  virtual std::shared_ptr<void> host_buffer(size_t bytes) { return nullptr; }
  // One run: the uploads, then every launch in order, then the downloads;
  // returns once the downloads are on the host.
  virtual Status replay(const std::vector<Upload>& uploads, PlanLaunches& plan,
                        const std::vector<Download>& downloads) = 0;
};

struct Plan;

// Device copies of a model's constants, shared by the executors that run the
// same model on the same device concurrently (each with its own stream and
// buffers). Frees them through `release` when the last executor is gone.
// Thread-safe.
class ConstantBuffers {
 public:
  explicit ConstantBuffers(std::function<void(DeviceBuffer)> release) : release_(std::move(release)) {}
  ~ConstantBuffers();
  ConstantBuffers(const ConstantBuffers&) = delete;
  ConstantBuffers& operator=(const ConstantBuffers&) = delete;
  // The buffer of value v, made by `make` on first use.
  Result<DeviceBuffer> get(ir::ValueId v, const std::function<Result<DeviceBuffer>()>& make);

 private:
  std::function<void(DeviceBuffer)> release_;
  std::mutex mu_;
  std::map<ir::ValueId, DeviceBuffer> buffers_;
};

class Executor {
 public:
  // Fails with kUnsupported when a node of the model cannot run on the device.
  // `constants` (optional) shares the model's constant buffers with other
  // executors of the same model on the same device; by default they are the
  // executor's own.
  static Result<std::unique_ptr<Executor>> create(std::unique_ptr<KernelDevice> device, ir::Model model,
                                                  std::shared_ptr<ConstantBuffers> constants = nullptr);
  ~Executor();

  // Runs on host tensors in graph-input order; returns the graph outputs.
  Result<std::vector<Tensor>> run(std::span<const Tensor> inputs);

  // How many plans (input signatures) are cached.
  size_t plan_count() const;

 private:
  friend class RunLowering;
  Executor() = default;
  Status prepare();
  Result<Plan*> plan_for(const std::string& key, class RunLowering& low);
  Result<DeviceBuffer> const_buffer(ir::ValueId v, const Tensor& t);
  // A host tensor for graph output k of a run, in a recycled device host buffer when one is free.
  Result<Tensor> output_tensor(size_t k, DType dtype, const Shape& shape);

  std::unique_ptr<KernelDevice> dev_;
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
  mutable std::mutex mu_;
  std::shared_ptr<ConstantBuffers> constants_;
  std::map<std::string, std::unique_ptr<Plan>> plans_;
  // Per graph output, host buffers from the device (host_buffer) that earlier
  // runs returned; one the caller has dropped again is used for the next run.
  std::vector<std::vector<std::pair<std::shared_ptr<void>, size_t>>> out_pool_;
};

}  // namespace dlrt::gpu
