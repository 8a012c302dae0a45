// An OpenCL partition ready to run: the shared GPU executor (backends/gpu/
// executor.h) over an OpenCL device: buffers are cl_mem, a bound launch is a
// cl_kernel with its arguments set, and a run enqueues on one in-order
// command queue per executable.
//
// Thread-safety: run() serialises on the executable (max_concurrent_runs = 1).
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "backend/backend.h"
#include "backends/gpu/executor.h"
#include "backends/opencl/cl_runtime.h"
#include "ir/graph.h"

namespace dlrt::opencl {

class ClExecutable final : public backend::Executable {
 public:
  static Result<std::unique_ptr<ClExecutable>> create(std::shared_ptr<ClDeviceContext> device, ir::Model model);

  // Runs on host tensors in graph-input order; returns the graph outputs.
  Result<std::vector<Tensor>> run(std::span<const Tensor> inputs) { return exec_->run(inputs); }

  // How many plans (input signatures) are cached.
  size_t plan_count() const { return exec_->plan_count(); }

 private:
  std::unique_ptr<gpu::Executor> exec_;
};

}  // namespace dlrt::opencl
