// A CUDA partition ready to run: the shared GPU executor (backends/gpu/
// executor.h) over a CUDA device. Buffers are device allocations made once
// per plan; kernels come from the module NVRTC compiled for the device
// (cuda_kernels.h); GEMMs go to cuBLAS when it is installed and the operands'
// strides fit its layouts (else dlrt's own GEMM kernel runs); every run after
// a plan's first replays the plan's launches as one CUDA graph.
//
// Concurrent callers: up to kMaxStreams runs at once, each on an executor of
// its own (its own stream, cuBLAS handle, plans and buffers), made when a
// caller finds every existing one busy; the model's constants are on the
// device once, shared by all of them.
//
// Thread-safety: run() may be called from any number of threads; the backend
// reports max_concurrent_runs() = kMaxStreams so callers beyond that wait.
#pragma once

#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "backend/backend.h"
#include "backends/cuda/cuda_runtime.h"
#include "backends/gpu/executor.h"
#include "ir/graph.h"

namespace dlrt::cuda {

class CudaExecutable final : public backend::Executable {
 public:
  static constexpr int kMaxStreams = 4;

  static Result<std::unique_ptr<CudaExecutable>> create(std::shared_ptr<CudaDeviceContext> device, ir::Model model);

  // Runs on host tensors in graph-input order; returns the graph outputs.
  Result<std::vector<Tensor>> run(std::span<const Tensor> inputs);

 private:
  Result<std::unique_ptr<gpu::Executor>> make_executor();

  std::shared_ptr<CudaDeviceContext> ctx_;
  ir::Model model_;
  std::shared_ptr<gpu::ConstantBuffers> constants_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<gpu::Executor>> idle_;  // free executors
};

}  // namespace dlrt::cuda
