// A CUDA partition ready to run: the shared GPU executor (backends/gpu/
// executor.h) over a CUDA device. Buffers are device allocations made once
// per plan; kernels come from the module NVRTC compiled for the device
// (cuda_kernels.h); GEMMs go to cuBLAS when it is installed and the operands'
// strides fit its layouts (else dlrt's own GEMM kernel runs); every run after
// a plan's first replays the plan's launches as one CUDA graph.
//
// Thread-safety: run() serialises on the executable (max_concurrent_runs = 1);
// each executable has its own stream and cuBLAS handle.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "backend/backend.h"
#include "backends/cuda/cuda_runtime.h"
#include "backends/gpu/executor.h"
#include "ir/graph.h"

namespace dlrt::cuda {

class CudaExecutable final : public backend::Executable {
 public:
  static Result<std::unique_ptr<CudaExecutable>> create(std::shared_ptr<CudaDeviceContext> device, ir::Model model);

  // Runs on host tensors in graph-input order; returns the graph outputs.
  Result<std::vector<Tensor>> run(std::span<const Tensor> inputs) { return exec_->run(inputs); }

  // How many plans (input signatures) are cached.
  size_t plan_count() const { return exec_->plan_count(); }

 private:
  std::unique_ptr<gpu::Executor> exec_;
};

}  // namespace dlrt::cuda
