#include "backends/cuda/cuda_executable.h"

#include <chrono>
#include <cstring>
#include <map>

#include "backends/cuda/cuda_gemm.h"
#include "core/env.h"
#include "core/logging.h"

namespace dlrt::cuda {

namespace {

constexpr size_t kCublasWorkspace = 32u << 20;  // fixed, so that graph capture never allocates
constexpr unsigned kBlock1d = 256;              // threads per block of a launch whose lws is 0

Status cu_fail(const CudaApi& api, CUresult r, const std::string& what) {
  StatusCode code = r == CUDA_ERROR_OUT_OF_MEMORY ? StatusCode::kOutOfMemory : StatusCode::kBackendError;
  return Status(code, "cuda: " + what + " failed: " + cu_error(api, r));
}

// A kernel of dlrt's module with its arguments packed for cuLaunchKernel.
struct KernelCall {
  CUfunction fn = nullptr;
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  std::vector<std::vector<uint8_t>> storage;  // one per argument
  std::vector<void*> params;                  // pointers into storage
  std::string name;

  void pack(const gpu::Launch& l, const std::vector<gpu::DeviceBuffer>& slots) {
    storage.clear();
    for (const auto& a : l.args) {
      if (a.kind == gpu::LArg::Kind::kSlot) {
        CUdeviceptr p = slots[a.slot];
        std::vector<uint8_t> b(sizeof p);
        std::memcpy(b.data(), &p, sizeof p);
        storage.push_back(std::move(b));
      } else {
        storage.push_back(a.bytes);
      }
    }
    params.clear();
    for (auto& s : storage) params.push_back(s.data());
  }

  Status launch(const CudaApi& api, CUstream s) {
    CUresult r = api.cu.cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], 0, s,
                                       params.data(), nullptr);
    return r == CUDA_SUCCESS ? Status::Ok() : cu_fail(api, r, "launching " + name);
  }
};

struct CudaLaunch final : gpu::BoundLaunch {
  std::vector<BlasCall> blas;  // empty: a kernel
  std::optional<KernelCall> kernel;  // the kernel, or the epilogue after the cuBLAS calls
};

// The device's state for one plan: its launches captured as a graph.
struct GraphState final : gpu::PlanState {
  const CudaApi* api = nullptr;
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  bool capture_failed = false;
  ~GraphState() override {
    if (exec) api->cu.cuGraphExecDestroy(exec);
    if (graph) api->cu.cuGraphDestroy(graph);
  }
};

class CudaKernelDevice final : public gpu::KernelDevice {
 public:
  explicit CudaKernelDevice(std::shared_ptr<CudaDeviceContext> ctx) : ctx_(std::move(ctx)), api_(*ctx_->api) {
    params_.gemm_ts = 64;
    params_.gemm_wpt = 4;
    params_.max_wg = 1024;
  }

  ~CudaKernelDevice() override {
    if (api_.cu.cuCtxSetCurrent(ctx_->context) != CUDA_SUCCESS) return;
    if (stream_) api_.cu.cuStreamSynchronize(stream_);
    if (blas_) api_.cublas.cublasDestroy_v2(blas_);
    if (workspace_) api_.cu.cuMemFree_v2(workspace_);
    if (stream_) api_.cu.cuStreamDestroy_v2(stream_);
  }

  Status open() {
    DLRT_RETURN_IF_ERROR(current());
    if (CUresult r = api_.cu.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING); r != CUDA_SUCCESS)
      return cu_fail(api_, r, "creating a stream");
    static const bool no_blas = env::get("DLRT_CUDA_NO_CUBLAS") != nullptr;
    if (api_.has_cublas && !no_blas) {
      cublasStatus_t s = api_.cublas.cublasCreate_v2(&blas_);
      if (s != CUBLAS_STATUS_SUCCESS) {
        blas_ = nullptr;
        DLRT_LOG(kWarn, std::string("cuda: cublasCreate failed (") + cublas_status_name(s) +
                            "); GEMMs run on dlrt's kernels");
      } else {
        CUresult r = api_.cu.cuMemAlloc_v2(&workspace_, kCublasWorkspace);
        if (r != CUDA_SUCCESS) return cu_fail(api_, r, "allocating cuBLAS's workspace");
        if (api_.cublas.cublasSetStream_v2(blas_, stream_) != CUBLAS_STATUS_SUCCESS ||
            api_.cublas.cublasSetWorkspace_v2(blas_, reinterpret_cast<void*>(workspace_), kCublasWorkspace) !=
                CUBLAS_STATUS_SUCCESS ||
            api_.cublas.cublasSetMathMode(blas_, CUBLAS_DEFAULT_MATH) != CUBLAS_STATUS_SUCCESS)
          return Status(StatusCode::kBackendError, "cuda: configuring the cuBLAS handle failed");
      }
    }
    return Status::Ok();
  }

  std::string name() const override { return "cuda"; }
  const gpu::DeviceParams& params() const override { return params_; }

  Result<gpu::DeviceBuffer> alloc(size_t bytes) override {
    DLRT_RETURN_IF_ERROR(current());
    CUdeviceptr p = 0;
    if (CUresult r = api_.cu.cuMemAlloc_v2(&p, bytes); r != CUDA_SUCCESS)
      return cu_fail(api_, r, "allocating " + std::to_string(bytes) + " bytes");
    return static_cast<gpu::DeviceBuffer>(p);
  }

  Result<gpu::DeviceBuffer> alloc_constant(const void* data, size_t bytes) override {
    DLRT_ASSIGN_OR_RETURN(gpu::DeviceBuffer b, alloc(bytes));
    CUresult r = api_.cu.cuMemcpyHtoDAsync_v2(b, data, bytes, stream_);
    if (r == CUDA_SUCCESS) r = api_.cu.cuStreamSynchronize(stream_);
    if (r != CUDA_SUCCESS) {
      release(b);
      return cu_fail(api_, r, "uploading a constant of " + std::to_string(bytes) + " bytes");
    }
    return b;
  }

  // Page-locked memory: the copy back is one DMA at full bus speed, with no
  // page faults in the caller's fresh pages.
  std::shared_ptr<void> host_buffer(size_t bytes) override {
    if (!current().ok()) return nullptr;
    void* p = nullptr;
    if (api_.cu.cuMemAllocHost_v2(&p, bytes) != CUDA_SUCCESS || !p) return nullptr;
    std::shared_ptr<CudaDeviceContext> ctx = ctx_;
    return std::shared_ptr<void>(p, [ctx](void* q) {
      ctx->api->cu.cuCtxSetCurrent(ctx->context);
      ctx->api->cu.cuMemFreeHost(q);
    });
  }

  void release(gpu::DeviceBuffer b) override {
    if (current().ok()) api_.cu.cuMemFree_v2(static_cast<CUdeviceptr>(b));
  }

  Result<std::unique_ptr<gpu::BoundLaunch>> bind(const gpu::Launch& l,
                                                 const std::vector<gpu::DeviceBuffer>& slots) override {
    auto b = std::make_unique<CudaLaunch>();
    if (l.kernel == "gemm_f32" && blas_ && l.args.size() == 5 && l.args[4].bytes.size() == sizeof(gpu::GemmArgs)) {
      gpu::GemmArgs p;
      std::memcpy(&p, l.args[4].bytes.data(), sizeof p);
      int batch = static_cast<int>(l.gws[2]);
      b->blas = blas_calls(p, batch, slots[l.args[0].slot], slots[l.args[1].slot], slots[l.args[2].slot]);
      if (!b->blas.empty()) {
        if (p.has_bias || p.act != gpu::kActNone) {
          gpu::Launch e;
          e.kernel = "gemm_epilogue_f32";
          e.args = {l.args[2], l.args[3], l.args[4]};
          e.val(static_cast<int32_t>(batch));
          e.gws[0] = static_cast<size_t>(p.M) * p.N * batch;
          DLRT_ASSIGN_OR_RETURN(KernelCall k, kernel_call(e, slots));
          b->kernel = std::move(k);
        }
        return std::unique_ptr<gpu::BoundLaunch>(std::move(b));
      }
    }
    DLRT_ASSIGN_OR_RETURN(KernelCall k, kernel_call(l, slots));
    b->kernel = std::move(k);
    return std::unique_ptr<gpu::BoundLaunch>(std::move(b));
  }

  Status replay(const std::vector<gpu::Upload>& uploads, gpu::PlanLaunches& plan,
                const std::vector<gpu::Download>& downloads) override {
    DLRT_RETURN_IF_ERROR(current());
    for (const auto& u : uploads) {
      CUresult r = api_.cu.cuMemcpyHtoDAsync_v2(u.buffer, u.data, u.bytes, stream_);
      if (r != CUDA_SUCCESS) return drain(cu_fail(api_, r, "uploading '" + u.what + "'"));
    }
    // DLRT_CUDA_PROFILE=1: synchronise after every launch and log the time per kernel (slow; for tuning).
    static const bool profile = env::get("DLRT_CUDA_PROFILE") != nullptr;
    static const bool no_graphs = env::get("DLRT_CUDA_NO_GRAPHS") != nullptr;
    if (profile) {
      DLRT_RETURN_IF_ERROR(drain(launch_profiled(plan)));
    } else if (no_graphs) {
      DLRT_RETURN_IF_ERROR(drain(launch_all(plan)));
    } else {
      DLRT_RETURN_IF_ERROR(drain(launch_graph(plan)));
    }
    for (const auto& d : downloads) {
      CUresult r = api_.cu.cuMemcpyDtoHAsync_v2(d.data, d.buffer, d.bytes, stream_);
      if (r != CUDA_SUCCESS) return drain(cu_fail(api_, r, "reading '" + d.what + "'"));
    }
    if (CUresult r = api_.cu.cuStreamSynchronize(stream_); r != CUDA_SUCCESS)
      return cu_fail(api_, r, "running the partition");
    return Status::Ok();
  }

 private:
  Status current() {
    CUresult r = api_.cu.cuCtxSetCurrent(ctx_->context);
    return r == CUDA_SUCCESS ? Status::Ok() : cu_fail(api_, r, "making the context current");
  }

  // After a failure: wait for what was enqueued, keep the first error.
  Status drain(Status st) {
    if (!st.ok()) api_.cu.cuStreamSynchronize(stream_);
    return st;
  }

  Result<CUfunction> function(const std::string& name) {
    if (auto it = functions_.find(name); it != functions_.end()) return it->second;
    CUfunction f = nullptr;
    if (!ctx_->module) return Status(StatusCode::kBackendError, "cuda: dlrt's kernels are not loaded");
    if (CUresult r = api_.cu.cuModuleGetFunction(&f, ctx_->module, name.c_str()); r != CUDA_SUCCESS)
      return cu_fail(api_, r, "finding kernel " + name);
    functions_[name] = f;
    return f;
  }

  Result<KernelCall> kernel_call(const gpu::Launch& l, const std::vector<gpu::DeviceBuffer>& slots) {
    KernelCall k;
    k.name = l.kernel;
    DLRT_ASSIGN_OR_RETURN(k.fn, function(l.kernel));
    if (l.lws[0] == 0) {
      if (l.dims != 1) return Internal("cuda: " + l.kernel + " has no work-group size but " + std::to_string(l.dims) + " dims");
      k.block[0] = kBlock1d;
      k.grid[0] = static_cast<unsigned>((l.gws[0] + kBlock1d - 1) / kBlock1d);
    } else {
      for (int d = 0; d < 3; ++d) {
        size_t lw = d < l.dims ? l.lws[d] : 1, gw = d < l.dims ? l.gws[d] : 1;
        if (lw == 0 || gw % lw) return Internal("cuda: " + l.kernel + ": global size not a multiple of the local size");
        k.block[d] = static_cast<unsigned>(lw);
        k.grid[d] = static_cast<unsigned>(gw / lw);
      }
    }
    if (k.grid[0] == 0 || k.grid[1] == 0 || k.grid[2] == 0) k.grid[0] = k.grid[1] = k.grid[2] = 0;
    k.pack(l, slots);
    return k;
  }

  Status enqueue(gpu::BoundLaunch* bl) {
    auto* b = static_cast<CudaLaunch*>(bl);
    for (const BlasCall& c : b->blas) {
      const float zero = 0;
      cublasStatus_t s = c.count == 1
          ? api_.cublas.cublasSgemm_v2(blas_, c.op_b, c.op_a, c.n, c.m, c.k, &c.alpha,
                                       reinterpret_cast<const float*>(c.b), c.ldb, reinterpret_cast<const float*>(c.a),
                                       c.lda, &zero, reinterpret_cast<float*>(c.c), c.ldc)
          : api_.cublas.cublasSgemmStridedBatched(blas_, c.op_b, c.op_a, c.n, c.m, c.k, &c.alpha,
                                                  reinterpret_cast<const float*>(c.b), c.ldb, c.sb,
                                                  reinterpret_cast<const float*>(c.a), c.lda, c.sa, &zero,
                                                  reinterpret_cast<float*>(c.c), c.ldc, c.sc, c.count);
      if (s != CUBLAS_STATUS_SUCCESS)
        return Status(StatusCode::kBackendError, std::string("cuda: cuBLAS SGEMM failed: ") + cublas_status_name(s));
    }
    if (b->kernel && b->kernel->grid[0] > 0) return b->kernel->launch(api_, stream_);
    return Status::Ok();
  }

  Status launch_all(gpu::PlanLaunches& plan) {
    for (auto* b : plan.bound) DLRT_RETURN_IF_ERROR(enqueue(b));
    return Status::Ok();
  }

  // The plan's launches as one graph: captured on the plan's first run, then
  // replayed. A capture that fails (a driver or library that cannot capture)
  // falls back to plain launches for that plan.
  Status launch_graph(gpu::PlanLaunches& plan) {
    if (!*plan.state) {
      auto g = std::make_unique<GraphState>();
      g->api = &api_;
      *plan.state = std::move(g);
    }
    auto* g = static_cast<GraphState*>(plan.state->get());
    if (g->capture_failed) return launch_all(plan);
    if (!g->exec) {
      CUresult r = api_.cu.cuStreamBeginCapture_v2(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
      if (r != CUDA_SUCCESS) {
        g->capture_failed = true;
        DLRT_LOG(kInfo, "cuda: graph capture unavailable (" + cu_error(api_, r) + "); launching kernels one by one");
        return launch_all(plan);
      }
      Status st = launch_all(plan);
      CUgraph graph = nullptr;
      CUresult end = api_.cu.cuStreamEndCapture(stream_, &graph);
      if (!st.ok()) {
        if (graph) api_.cu.cuGraphDestroy(graph);
        return st;
      }
      CUgraphExec exec = nullptr;
      if (end == CUDA_SUCCESS) end = api_.cu.cuGraphInstantiateWithFlags(&exec, graph, 0);
      if (end != CUDA_SUCCESS) {
        if (graph) api_.cu.cuGraphDestroy(graph);
        g->capture_failed = true;
        DLRT_LOG(kInfo, "cuda: graph capture failed (" + cu_error(api_, end) + "); launching kernels one by one");
        return launch_all(plan);
      }
      g->graph = graph;
      g->exec = exec;
    }
    CUresult r = api_.cu.cuGraphLaunch(g->exec, stream_);
    return r == CUDA_SUCCESS ? Status::Ok() : cu_fail(api_, r, "launching the partition's graph");
  }

  Status launch_profiled(gpu::PlanLaunches& plan) {
    std::map<std::string, std::pair<double, int>> prof;
    for (size_t i = 0; i < plan.bound.size(); ++i) {
      api_.cu.cuStreamSynchronize(stream_);
      auto t0 = std::chrono::steady_clock::now();
      DLRT_RETURN_IF_ERROR(enqueue(plan.bound[i]));
      if (CUresult r = api_.cu.cuStreamSynchronize(stream_); r != CUDA_SUCCESS)
        return cu_fail(api_, r, "running " + plan.launches[i]->kernel);
      auto* b = static_cast<CudaLaunch*>(plan.bound[i]);
      auto& e = prof[b->blas.empty() ? plan.launches[i]->kernel : "cublas_sgemm"];
      e.first += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      e.second++;
    }
    std::string msg = "cuda profile:";
    for (auto& [k, v] : prof) msg += " " + k + "=" + std::to_string(v.first) + "ms/" + std::to_string(v.second);
    DLRT_LOG(kWarn, msg);
    return Status::Ok();
  }

  std::shared_ptr<CudaDeviceContext> ctx_;
  const CudaApi& api_;
  gpu::DeviceParams params_;
  CUstream stream_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  CUdeviceptr workspace_ = 0;
  std::map<std::string, CUfunction> functions_;
};

}  // namespace

Result<std::unique_ptr<CudaExecutable>> CudaExecutable::create(std::shared_ptr<CudaDeviceContext> device,
                                                               ir::Model model) {
  std::unique_ptr<CudaExecutable> exe(new CudaExecutable());
  exe->ctx_ = std::move(device);
  exe->model_ = std::move(model);
  std::shared_ptr<CudaDeviceContext> ctx = exe->ctx_;
  exe->constants_ = std::make_shared<gpu::ConstantBuffers>([ctx](gpu::DeviceBuffer b) {
    ctx->api->cu.cuCtxSetCurrent(ctx->context);
    ctx->api->cu.cuMemFree_v2(static_cast<CUdeviceptr>(b));
  });
  // The first executor now, so that a model the kernels cannot run, or a
  // device that cannot give it a stream, fails init rather than a run.
  DLRT_ASSIGN_OR_RETURN(auto first, exe->make_executor());
  exe->idle_.push_back(std::move(first));
  return exe;
}

Result<std::unique_ptr<gpu::Executor>> CudaExecutable::make_executor() {
  auto dev = std::make_unique<CudaKernelDevice>(ctx_);
  DLRT_RETURN_IF_ERROR(dev->open());
  return gpu::Executor::create(std::move(dev), model_, constants_);
}

Result<std::vector<Tensor>> CudaExecutable::run(std::span<const Tensor> inputs) {
  std::unique_ptr<gpu::Executor> exec;
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (!idle_.empty()) {
      exec = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  // Every executor busy: one more (the backend's max_concurrent_runs bounds how many).
  if (!exec) {
    DLRT_ASSIGN_OR_RETURN(exec, make_executor());
  }
  auto result = exec->run(inputs);
  std::lock_guard<std::mutex> lk(mu_);
  idle_.push_back(std::move(exec));
  return result;
}

}  // namespace dlrt::cuda
