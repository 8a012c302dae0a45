#include "runtime/partition_kernel.h"

#include <cmath>

#include "backends/cpu/kernel.h"
#include "core/logging.h"
#include "runtime/blob_cache.h"

namespace dlrt {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kMaxBackoff = std::chrono::milliseconds(60'000);

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Largest |a-b| / (max|b| + tiny) over all outputs; +inf on a shape mismatch.
double max_relative_error(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].dtype() != b[i].dtype() || a[i].shape() != b[i].shape()) return INFINITY;
    if (a[i].dtype() != DType::kFloat32) {
      if (a[i].nbytes() != b[i].nbytes() ||
          (a[i].nbytes() && std::memcmp(a[i].raw_data(), b[i].raw_data(), a[i].nbytes()) != 0))
        return INFINITY;
      continue;
    }
    const float* x = a[i].data<float>();
    const float* y = b[i].data<float>();
    double scale = 1e-6, err = 0;
    for (int64_t k = 0; k < b[i].size(); ++k) scale = std::max(scale, static_cast<double>(std::abs(y[k])));
    for (int64_t k = 0; k < b[i].size(); ++k) err = std::max(err, static_cast<double>(std::abs(x[k] - y[k])));
    if (std::isnan(err)) return INFINITY;
    worst = std::max(worst, err / scale);
  }
  return worst;
}

constexpr double kAgreeTolerance = 1e-3;

}  // namespace

RunReportSink*& RunReportSink::current() {
  thread_local RunReportSink* sink = nullptr;
  return sink;
}

PartitionState::PartitionState(int report_index, Candidate candidate, std::shared_ptr<ir::Graph> subgraph, bool strict,
                               backend::CompileOptions options)
    : report_index_(report_index), candidate_(std::move(candidate)), subgraph_(std::move(subgraph)),
      strict_(strict), options_(std::move(options)) {}

PartitionState::~PartitionState() {
  if (warm_thread_.joinable()) warm_thread_.join();
  if (auto* e = exe_.exchange(nullptr)) candidate_.backend->destroy(e);
}

Status PartitionState::prepare_cpu(ThreadPool& pool) {
  auto ex = Executor::create(subgraph_, pool, cpu::builtin_kernels());
  if (!ex.ok()) return ex.status();
  cpu_ = std::move(ex).value();
  return Status::Ok();
}

Result<backend::Executable*> PartitionState::compile_and_init() {
  const auto& dev = candidate_.device;
  DLRT_ASSIGN_OR_RETURN(backend::Blob blob, compile_with_cache(*candidate_.backend, *subgraph_, dev, options_));
  return candidate_.backend->init(blob, options_, dev);
}

Status PartitionState::prepare() {
  auto exe = compile_and_init();
  if (!exe.ok()) {
    degrade("compile/init on " + candidate_.device.spec() + " failed: " + exe.status().message());
    return exe.status();
  }
  exe_.store(*exe);
  mode_.store(Mode::kAccelerator);
  return Status::Ok();
}

void PartitionState::prepare_in_background() {
  mode_.store(Mode::kWarming);
  {
    std::lock_guard<std::mutex> lk(mu_);
    reason_ = "warm start: compiling for " + candidate_.device.spec() + "; serving on cpu meanwhile";
  }
  warm_thread_ = std::thread([this] {
    auto exe = compile_and_init();
    if (!exe.ok()) {
      degrade("compile/init on " + candidate_.device.spec() + " failed: " + exe.status().message());
      return;
    }
    exe_.store(*exe);
    verify_pending_.store(true);
  });
}

void PartitionState::degrade(const std::string& reason, bool permanent) {
  bool first;
  {
    std::lock_guard<std::mutex> lk(mu_);
    reason_ = reason;
    never_probe_ = never_probe_ || permanent;
    next_probe_ = Clock::now() + backoff_;
    backoff_ = std::min(backoff_ * 2, kMaxBackoff);
    first = !logged_;
    logged_ = true;
  }
  mode_.store(Mode::kCpuFallback);
  if (first) DLRT_LOG(kWarn, "partition " + std::to_string(report_index_) + " falls back to cpu: " + reason);
}

bool PartitionState::probe_due() {
  std::lock_guard<std::mutex> lk(mu_);
  return !never_probe_ && Clock::now() >= next_probe_;
}

PartitionReport PartitionState::placement() const {
  PartitionReport r;
  r.node_count = static_cast<int>(subgraph_->total_node_count());
  Mode m = mode_.load();
  if (m == Mode::kAccelerator) {
    r.backend = candidate_.backend->name();
    r.device = candidate_.device.spec();
  } else {
    r.backend = "cpu";
    r.device = "cpu:0";
    r.degraded = true;
    std::lock_guard<std::mutex> lk(mu_);
    r.reason = reason_;
  }
  return r;
}

void PartitionState::report(bool on_accelerator, double ms) {
  RunReportSink* sink = RunReportSink::current();
  if (!sink || !sink->partitions || report_index_ >= static_cast<int>(sink->partitions->size())) return;
  PartitionReport& r = (*sink->partitions)[report_index_];
  r.node_count = static_cast<int>(subgraph_->total_node_count());
  r.time_ms += ms;
  if (on_accelerator) {
    r.backend = candidate_.backend->name();
    r.device = candidate_.device.spec();
    r.degraded = false;
    r.reason.clear();
  } else {
    r.backend = "cpu";
    r.device = "cpu:0";
    r.degraded = true;
    std::lock_guard<std::mutex> lk(mu_);
    r.reason = reason_;
  }
}

Result<std::vector<Tensor>> PartitionState::run_on_cpu(std::span<const Tensor> inputs) {
  if (!cpu_) return Internal("partition " + std::to_string(report_index_) + " has no CPU fallback");
  std::vector<RunValue> in;
  for (const auto& t : inputs) in.push_back(RunValue::of(t));
  DLRT_ASSIGN_OR_RETURN(auto out, cpu_->run(std::move(in)));
  std::vector<Tensor> r;
  for (auto& v : out) r.push_back(std::move(v.tensor));
  return r;
}

Status PartitionState::run(std::span<const Tensor> inputs, std::vector<Tensor>& outputs) {
  auto t0 = Clock::now();
  backend::Backend& be = *candidate_.backend;

  // Warm start finished: the first accelerator result must agree with the CPU's.
  if (verify_pending_.exchange(false)) {
    auto acc = be.execute(exe_.load(), inputs);
    DLRT_ASSIGN_OR_RETURN(auto ref, run_on_cpu(inputs));
    if (!acc.ok()) {
      degrade("first run on " + candidate_.device.spec() + " failed: " + acc.status().message());
    } else if (double err = max_relative_error(*acc, ref); err > kAgreeTolerance) {
      degrade("first result on " + candidate_.device.spec() + " differs from cpu (max relative error " +
                  std::to_string(err) + "); not retried",
              /*permanent=*/true);
    } else {
      mode_.store(Mode::kAccelerator);
      DLRT_LOG(kInfo, "partition " + std::to_string(report_index_) + " switched to " + candidate_.device.spec());
    }
    outputs = std::move(ref);
    report(false, ms_since(t0));
    return Status::Ok();
  }

  // Degraded: probe the backend again once the backoff has passed (one thread at a time).
  if (mode_.load() == Mode::kCpuFallback && !verify_pending_.load() && probe_due() && !probing_.exchange(true)) {
    bool recovered = false;
    if (be.is_available(true).available) {
      if (!exe_.load()) {
        auto exe = compile_and_init();
        if (exe.ok()) exe_.store(*exe);
        else degrade("compile/init on " + candidate_.device.spec() + " failed again: " + exe.status().message());
      }
      if (exe_.load()) {
        auto acc = be.execute(exe_.load(), inputs);
        if (acc.ok()) {
          {
            std::lock_guard<std::mutex> lk(mu_);
            backoff_ = std::chrono::milliseconds(500);
            reason_.clear();
          }
          mode_.store(Mode::kAccelerator);
          outputs = std::move(acc).value();
          recovered = true;
        } else {
          degrade("probe of " + candidate_.device.spec() + " failed: " + acc.status().message());
        }
      }
    } else {
      degrade(be.name() + " is still unavailable: " + be.is_available().reason);
    }
    probing_.store(false);
    if (recovered) {
      report(true, ms_since(t0));
      return Status::Ok();
    }
  }

  if (mode_.load() == Mode::kAccelerator) {
    int limit = be.max_concurrent_runs(exe_.load());
    if (limit > 0) {
      std::unique_lock<std::mutex> lk(slots_mu_);
      slots_cv_.wait(lk, [&] { return busy_ < limit; });
      ++busy_;
    }
    auto acc = be.execute(exe_.load(), inputs);
    if (limit > 0) {
      std::lock_guard<std::mutex> lk(slots_mu_);
      --busy_;
      slots_cv_.notify_one();
    }
    if (acc.ok()) {
      outputs = std::move(acc).value();
      report(true, ms_since(t0));
      return Status::Ok();
    }
    if (strict_)
      return Status(StatusCode::kBackendError, "partition on " + candidate_.device.spec() +
                                                   " failed and strict mode forbids falling back to cpu: " +
                                                   acc.status().message());
    degrade("execute on " + candidate_.device.spec() + " failed: " + acc.status().message());
  } else if (strict_ && mode_.load() == Mode::kCpuFallback) {
    std::lock_guard<std::mutex> lk(mu_);
    return Status(StatusCode::kDeviceUnavailable,
                  "partition cannot run on " + candidate_.device.spec() + " and strict mode forbids cpu: " + reason_);
  }
  DLRT_ASSIGN_OR_RETURN(outputs, run_on_cpu(inputs));
  report(false, ms_since(t0));
  return Status::Ok();
}

Status PartitionKernel::compute(exec::KernelContext& ctx) const {
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor* t = ctx.input(i);
    if (!t) return ctx.invalid("partition input " + std::to_string(i) + " is missing or not a tensor");
    inputs.push_back(*t);
  }
  std::vector<Tensor> outputs;
  DLRT_RETURN_IF_ERROR(state_->run(inputs, outputs));
  if (outputs.size() != ctx.num_outputs())
    return ctx.error(StatusCode::kBackendError, "partition returned " + std::to_string(outputs.size()) +
                                                    " outputs, expected " + std::to_string(ctx.num_outputs()));
  for (size_t i = 0; i < outputs.size(); ++i) ctx.set_output(i, std::move(outputs[i]));
  return Status::Ok();
}

}  // namespace dlrt
