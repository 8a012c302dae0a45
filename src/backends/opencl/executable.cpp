#include "backends/opencl/executable.h"

#include <chrono>
#include <map>

#include "core/env.h"
#include "core/logging.h"

namespace dlrt::opencl {

namespace {

cl_mem as_mem(gpu::DeviceBuffer b) { return reinterpret_cast<cl_mem>(static_cast<uintptr_t>(b)); }
gpu::DeviceBuffer as_buffer(cl_mem m) { return static_cast<gpu::DeviceBuffer>(reinterpret_cast<uintptr_t>(m)); }

struct ClLaunch final : gpu::BoundLaunch {
  const ClApi* api = nullptr;
  cl_kernel kernel = nullptr;
  ~ClLaunch() override {
    if (kernel) api->clReleaseKernel(kernel);
  }
};

class ClKernelDevice final : public gpu::KernelDevice {
 public:
  explicit ClKernelDevice(std::shared_ptr<ClDeviceContext> ctx) : ctx_(std::move(ctx)), api_(*ctx_->api) {}
  ~ClKernelDevice() override {
    if (queue_) api_.clReleaseCommandQueue(queue_);
  }

  Status open() {
    cl_int err = CL_SUCCESS;
    queue_ = api_.clCreateCommandQueue(ctx_->context, ctx_->info.id, 0, &err);
    if (!queue_ || err != CL_SUCCESS)
      return Status(StatusCode::kBackendError, "clCreateCommandQueue failed: " + cl_error(err));
    return Status::Ok();
  }

  std::string name() const override { return "opencl"; }
  const gpu::DeviceParams& params() const override { return ctx_->params; }

  Result<gpu::DeviceBuffer> alloc(size_t bytes) override {
    cl_int err = CL_SUCCESS;
    cl_mem m = api_.clCreateBuffer(ctx_->context, CL_MEM_READ_WRITE, bytes, nullptr, &err);
    if (!m || err != CL_SUCCESS)
      return Status(StatusCode::kOutOfMemory,
                    "opencl: allocating " + std::to_string(bytes) + " bytes failed: " + cl_error(err));
    return as_buffer(m);
  }

  Result<gpu::DeviceBuffer> alloc_constant(const void* data, size_t bytes) override {
    cl_int err = CL_SUCCESS;
    cl_mem m = api_.clCreateBuffer(ctx_->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes,
                                   const_cast<void*>(data), &err);
    if (!m || err != CL_SUCCESS)
      return Status(StatusCode::kOutOfMemory,
                    "opencl: uploading a constant of " + std::to_string(bytes) + " bytes failed: " + cl_error(err));
    return as_buffer(m);
  }

  void release(gpu::DeviceBuffer b) override { api_.clReleaseMemObject(as_mem(b)); }

  Result<std::unique_ptr<gpu::BoundLaunch>> bind(const gpu::Launch& l,
                                                 const std::vector<gpu::DeviceBuffer>& slots) override {
    auto b = std::make_unique<ClLaunch>();
    b->api = &api_;
    cl_int err = CL_SUCCESS;
    b->kernel = api_.clCreateKernel(ctx_->program, l.kernel.c_str(), &err);
    if (!b->kernel || err != CL_SUCCESS)
      return Status(StatusCode::kBackendError, "clCreateKernel(" + l.kernel + ") failed: " + cl_error(err));
    for (size_t a = 0; a < l.args.size(); ++a) {
      const gpu::LArg& arg = l.args[a];
      cl_uint idx = static_cast<cl_uint>(a);
      if (arg.kind == gpu::LArg::Kind::kSlot) {
        cl_mem m = as_mem(slots[arg.slot]);
        err = api_.clSetKernelArg(b->kernel, idx, sizeof(cl_mem), &m);
      } else {
        err = api_.clSetKernelArg(b->kernel, idx, arg.bytes.size(), arg.bytes.data());
      }
      if (err != CL_SUCCESS)
        return Status(StatusCode::kBackendError,
                      "clSetKernelArg(" + l.kernel + ", " + std::to_string(a) + ") failed: " + cl_error(err));
    }
    return std::unique_ptr<gpu::BoundLaunch>(std::move(b));
  }

  Status replay(const std::vector<gpu::Upload>& uploads, gpu::PlanLaunches& plan,
                const std::vector<gpu::Download>& downloads) override {
    auto fail = [&](const std::string& what, cl_int err) {
      api_.clFinish(queue_);
      return Status(StatusCode::kBackendError, "opencl: " + what + " failed: " + cl_error(err));
    };
    for (const auto& u : uploads) {
      cl_int err = api_.clEnqueueWriteBuffer(queue_, as_mem(u.buffer), CL_FALSE, 0, u.bytes, u.data, 0, nullptr, nullptr);
      if (err != CL_SUCCESS) return fail("uploading '" + u.what + "'", err);
    }
    // DLRT_OPENCL_PROFILE=1: finish after every launch and log time per kernel (slow; for tuning).
    static const bool profile = env::get("DLRT_OPENCL_PROFILE") != nullptr;
    std::map<std::string, std::pair<double, int>> prof;
    for (size_t i = 0; i < plan.launches.size(); ++i) {
      const gpu::Launch& l = *plan.launches[i];
      auto t0 = std::chrono::steady_clock::now();
      if (profile) {
        api_.clFinish(queue_);
        t0 = std::chrono::steady_clock::now();
      }
      cl_int err = api_.clEnqueueNDRangeKernel(queue_, static_cast<ClLaunch*>(plan.bound[i])->kernel,
                                               static_cast<cl_uint>(l.dims), nullptr, l.gws, l.lws[0] ? l.lws : nullptr,
                                               0, nullptr, nullptr);
      if (err != CL_SUCCESS) return fail("launching " + l.kernel, err);
      if (profile) {
        api_.clFinish(queue_);
        auto& e = prof[l.kernel];
        e.first += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        e.second++;
      }
    }
    if (profile) {
      std::string msg = "opencl profile:";
      for (auto& [k, v] : prof) msg += " " + k + "=" + std::to_string(v.first) + "ms/" + std::to_string(v.second);
      DLRT_LOG(kWarn, msg);
    }
    for (const auto& d : downloads) {
      cl_int err = api_.clEnqueueReadBuffer(queue_, as_mem(d.buffer), CL_FALSE, 0, d.bytes, d.data, 0, nullptr, nullptr);
      if (err != CL_SUCCESS) return fail("reading '" + d.what + "'", err);
    }
    if (cl_int err = api_.clFinish(queue_); err != CL_SUCCESS) return fail("clFinish", err);
    return Status::Ok();
  }

 private:
  std::shared_ptr<ClDeviceContext> ctx_;
  const ClApi& api_;
  cl_command_queue queue_ = nullptr;
};

}  // namespace

Result<std::unique_ptr<ClExecutable>> ClExecutable::create(std::shared_ptr<ClDeviceContext> device, ir::Model model) {
  auto dev = std::make_unique<ClKernelDevice>(std::move(device));
  DLRT_RETURN_IF_ERROR(dev->open());
  std::unique_ptr<ClExecutable> exe(new ClExecutable());
  DLRT_ASSIGN_OR_RETURN(exe->exec_, gpu::Executor::create(std::move(dev), std::move(model)));
  return exe;
}

}  // namespace dlrt::opencl
