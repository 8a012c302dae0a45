#include "backends/cuda/cuda_kernels.h"

#include <chrono>
#include <string>
#include <vector>

#include "backends/cuda/cuda_runtime.h"
#include "backends/gpu/kernel_source.h"
#include "core/hash.h"
#include "core/logging.h"
#include "backend/blob_cache.h"

namespace dlrt::cuda {

namespace {

// Maps the kernels' OpenCL C dialect (see backends/gpu/kernels/common.cl) onto
// CUDA C++. Functions without a qualifier become device functions through
// NVRTC's -default-device.
constexpr const char kPrelude[] = R"dlrtcu(
#define DLRT_CUDA 1
#define __kernel extern "C" __global__
#define __global
#define __local __shared__
#define LOCAL_PTR
#define REQD_WG_SIZE(x, y, z) __launch_bounds__((x) * (y) * (z))
#define CLK_LOCAL_MEM_FENCE 0
#define CLK_GLOBAL_MEM_FENCE 0
#define barrier(flags) __syncthreads()
#define INFINITY __int_as_float(0x7f800000)
#define NAN __int_as_float(0x7fffffff)
#define as_uint(x) __float_as_uint(x)
#define as_float(x) __uint_as_float(x)
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
static __device__ __forceinline__ int get_local_id(int d) { return d == 0 ? threadIdx.x : d == 1 ? threadIdx.y : threadIdx.z; }
static __device__ __forceinline__ int get_local_size(int d) { return d == 0 ? blockDim.x : d == 1 ? blockDim.y : blockDim.z; }
static __device__ __forceinline__ int get_group_id(int d) { return d == 0 ? blockIdx.x : d == 1 ? blockIdx.y : blockIdx.z; }
static __device__ __forceinline__ int get_global_id(int d) { return get_group_id(d) * get_local_size(d) + get_local_id(d); }
static __device__ __forceinline__ int clamp(int x, int lo, int hi) { return min(max(x, lo), hi); }
static __device__ __forceinline__ float clamp(float x, float lo, float hi) { return fminf(fmaxf(x, lo), hi); }
)dlrtcu";

constexpr const char kModuleFormat[] = "dlrt-cuda-module-v1";

std::string nvrtc_log(const NvrtcApi& nv, nvrtcProgram p) {
  size_t n = 0;
  if (nv.nvrtcGetProgramLogSize(p, &n) != NVRTC_SUCCESS || n <= 1) return "";
  std::string log(n, '\0');
  if (nv.nvrtcGetProgramLog(p, log.data()) != NVRTC_SUCCESS) return "";
  log.resize(n - 1);
  if (log.size() > 4000) log = log.substr(0, 4000) + "...";
  return log;
}

// Compiles the kernels: CUBIN for the device's own architecture when NVRTC
// knows it, else PTX for the newest virtual architecture it offers, which the
// driver compiles at load.
Result<backend::Blob> compile(const CudaApi& api, const CudaDeviceInfo& info, const std::string& source,
                              const std::vector<std::string>& common_opts) {
  const NvrtcApi& nv = api.nvrtc;
  std::string arch = std::to_string(info.cc_major) + std::to_string(info.cc_minor);
  struct Attempt {
    std::string arch_opt;
    bool cubin;
  };
  std::vector<Attempt> attempts = {{"-arch=sm_" + arch, true}, {"-arch=compute_" + arch, false}};
  std::string errors;
  for (const Attempt& at : attempts) {
    nvrtcProgram prog = nullptr;
    nvrtcResult r = nv.nvrtcCreateProgram(&prog, source.c_str(), "dlrt_kernels.cu", 0, nullptr, nullptr);
    if (r != NVRTC_SUCCESS) return Status(StatusCode::kBackendError, "nvrtcCreateProgram failed: " + nvrtc_error(api, r));
    std::vector<std::string> opts = common_opts;
    opts.push_back(at.arch_opt);
    std::vector<const char*> argv;
    for (const auto& o : opts) argv.push_back(o.c_str());
    r = nv.nvrtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
    std::string log = nvrtc_log(nv, prog);
    if (r != NVRTC_SUCCESS) {
      errors += "\n" + at.arch_opt + ": " + nvrtc_error(api, r) + (log.empty() ? "" : "\n" + log);
      nv.nvrtcDestroyProgram(&prog);
      if (r == NVRTC_ERROR_INVALID_OPTION) continue;  // an architecture this NVRTC does not know
      break;
    }
    size_t n = 0;
    backend::Blob blob;
    blob.format = kModuleFormat;
    r = at.cubin ? nv.nvrtcGetCUBINSize(prog, &n) : nv.nvrtcGetPTXSize(prog, &n);
    if (r == NVRTC_SUCCESS && n > 0) {
      blob.data.resize(n);
      r = at.cubin ? nv.nvrtcGetCUBIN(prog, reinterpret_cast<char*>(blob.data.data()))
                   : nv.nvrtcGetPTX(prog, reinterpret_cast<char*>(blob.data.data()));
    }
    nv.nvrtcDestroyProgram(&prog);
    if (r != NVRTC_SUCCESS || n == 0)
      return Status(StatusCode::kBackendError, "NVRTC gave no " + std::string(at.cubin ? "CUBIN" : "PTX") + ": " +
                                                   nvrtc_error(api, r));
    return blob;
  }
  return Status(StatusCode::kBackendError, "compiling dlrt's CUDA kernels with NVRTC " +
                                               std::to_string(api.nvrtc_major) + "." + std::to_string(api.nvrtc_minor) +
                                               " for compute capability " + std::to_string(info.cc_major) + "." +
                                               std::to_string(info.cc_minor) + " failed:" + errors);
}

Status load(CudaDeviceContext& ctx, const backend::Blob& blob) {
  const CudaDriverApi& cu = ctx.api->cu;
  CUmodule m = nullptr;
  CUresult r = cu.cuModuleLoadData(&m, blob.data.data());
  if (r != CUDA_SUCCESS)
    return Status(StatusCode::kBackendError, "loading dlrt's CUDA kernels on '" + ctx.info.name +
                                                 "' failed: " + cu_error(*ctx.api, r) +
                                                 ". Fix: update the NVIDIA driver to one at least as new as NVRTC");
  ctx.module = m;
  return Status::Ok();
}

}  // namespace

Status load_kernel_module(CudaDeviceContext& ctx) {
  const CudaApi& api = *ctx.api;
  const CudaDeviceInfo& info = ctx.info;
  std::string source = std::string(kPrelude) + std::string(gpu::embedded_kernel_source());
  std::vector<std::string> opts = {"-default-device", "-std=c++17", "-DGEMM_TS=64", "-DGEMM_WPT=4"};
  std::string key = std::string(kModuleFormat) + "|" + info.name + "|cc " + std::to_string(info.cc_major) + "." +
                    std::to_string(info.cc_minor) + "|driver " + std::to_string(api.driver_version) + "|nvrtc " +
                    std::to_string(api.nvrtc_major) + "." + std::to_string(api.nvrtc_minor) + "|src " +
                    hex64(fnv1a(source)) + "|opts";
  for (const auto& o : opts) key += " " + o;
  auto t0 = std::chrono::steady_clock::now();
  BlobCache cache = configured_blob_cache();
  if (cache.enabled()) {
    if (auto blob = cache.load(key); blob && blob->format == kModuleFormat && !blob->data.empty()) {
      if (load(ctx, *blob).ok()) ctx.module_from_cache = true;
      else DLRT_LOG(kWarn, "cuda: cached kernels for '" + info.name + "' were rejected; compiling again");
    }
  }
  if (!ctx.module) {
    DLRT_ASSIGN_OR_RETURN(backend::Blob blob, compile(api, info, source, opts));
    DLRT_RETURN_IF_ERROR(load(ctx, blob));
    if (cache.enabled()) {
      Status st = cache.store(key, blob);
      if (!st.ok()) DLRT_LOG(kWarn, "cuda: could not cache the compiled kernels: " + st.message());
    }
  }
  ctx.module_build_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  DLRT_LOG(kInfo, "cuda: kernels for '" + info.name + "' " + (ctx.module_from_cache ? "loaded from cache" : "compiled") +
                      " in " + std::to_string(static_cast<int>(ctx.module_build_ms)) + " ms");
  return Status::Ok();
}

}  // namespace dlrt::cuda
