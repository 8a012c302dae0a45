// An accelerator partition inside the main graph: one "com.dlrt.Partition" node
// whose kernel runs the partition on its backend, and on the CPU when the
// backend is missing, failed, or is still compiling (warm start).
//
// Thread-safety: compute() may run concurrently; the mode switches
// (accelerator <-> CPU) are atomic and each run reports what ran it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "backend/backend.h"
#include "dlrt/session.h"
#include "exec/executor.h"
#include "runtime/placement.h"

namespace dlrt {

// Collects per-run partition entries; set by Session::run for its thread.
struct RunReportSink {
  std::vector<PartitionReport>* partitions = nullptr;
  static RunReportSink*& current();
};

class PartitionState {
 public:
  enum class Mode { kAccelerator, kCpuFallback, kWarming };

  PartitionState(int report_index, Candidate candidate, std::shared_ptr<ir::Graph> subgraph, bool strict,
                 backend::CompileOptions options);
  ~PartitionState();

  // Compiles and inits on the backend now. On failure the partition runs on
  // the CPU (reason recorded); the Status is returned for strict mode.
  Status prepare();
  // Compiles and inits on a background thread; until it is done and its first
  // result agrees with the CPU's, runs go to the CPU.
  void prepare_in_background();
  // Builds the CPU executor the fallback uses.
  Status prepare_cpu(ThreadPool& pool);

  Status run(std::span<const Tensor> inputs, std::vector<Tensor>& outputs);

  PartitionReport placement() const;  // as planned/now, without times
  const std::shared_ptr<ir::Graph>& subgraph() const { return subgraph_; }

 private:
  Result<std::vector<Tensor>> run_on_cpu(std::span<const Tensor> inputs);
  Result<backend::Executable*> compile_and_init();
  // Moves runs to the CPU; `permanent` stops probing (wrong results, not a fault).
  void degrade(const std::string& reason, bool permanent = false);
  bool probe_due();
  void report(bool on_accelerator, double ms);

  const int report_index_;
  const Candidate candidate_;
  const std::shared_ptr<ir::Graph> subgraph_;
  const bool strict_;
  const backend::CompileOptions options_;
  std::unique_ptr<Executor> cpu_;

  std::atomic<Mode> mode_{Mode::kCpuFallback};
  std::atomic<backend::Executable*> exe_{nullptr};
  std::atomic<bool> verify_pending_{false};  // warm start: compare the first accelerator result with the CPU's
  std::atomic<bool> probing_{false};

  mutable std::mutex mu_;  // guards reason_, next_probe_, backoff_, logged_
  std::string reason_;
  std::chrono::steady_clock::time_point next_probe_{};
  std::chrono::milliseconds backoff_{500};
  bool logged_ = false;
  bool never_probe_ = false;

  // Limits concurrent execute() calls when the backend asks for it.
  std::mutex slots_mu_;
  std::condition_variable slots_cv_;
  int busy_ = 0;

  std::thread warm_thread_;
};

// The kernel the executor runs for a "com.dlrt.Partition" node.
class PartitionKernel final : public exec::OpKernel {
 public:
  explicit PartitionKernel(std::shared_ptr<PartitionState> state) : state_(std::move(state)) {}
  Status compute(exec::KernelContext& ctx) const override;

 private:
  std::shared_ptr<PartitionState> state_;
};

}  // namespace dlrt
