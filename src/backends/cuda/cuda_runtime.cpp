#include "backends/cuda/cuda_runtime.h"

#include <limits.h>
#include <stdlib.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "backends/cuda/cuda_kernels.h"
#include "backends/cuda/cuda_library.h"
#include "core/logging.h"

namespace dlrt::cuda {

namespace {

const char* cu_error_name_fallback(CUresult code) {
  switch (code) {
    case CUDA_SUCCESS: return "CUDA_SUCCESS";
    case CUDA_ERROR_INVALID_VALUE: return "CUDA_ERROR_INVALID_VALUE";
    case CUDA_ERROR_OUT_OF_MEMORY: return "CUDA_ERROR_OUT_OF_MEMORY";
    case CUDA_ERROR_NOT_INITIALIZED: return "CUDA_ERROR_NOT_INITIALIZED";
    case CUDA_ERROR_DEINITIALIZED: return "CUDA_ERROR_DEINITIALIZED";
    case CUDA_ERROR_STUB_LIBRARY: return "CUDA_ERROR_STUB_LIBRARY";
    case CUDA_ERROR_NO_DEVICE: return "CUDA_ERROR_NO_DEVICE";
    case CUDA_ERROR_INVALID_DEVICE: return "CUDA_ERROR_INVALID_DEVICE";
    case CUDA_ERROR_INVALID_IMAGE: return "CUDA_ERROR_INVALID_IMAGE";
    case CUDA_ERROR_INVALID_CONTEXT: return "CUDA_ERROR_INVALID_CONTEXT";
    case CUDA_ERROR_NO_BINARY_FOR_GPU: return "CUDA_ERROR_NO_BINARY_FOR_GPU";
    case CUDA_ERROR_INVALID_PTX: return "CUDA_ERROR_INVALID_PTX";
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION: return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
    case CUDA_ERROR_JIT_COMPILER_NOT_FOUND: return "CUDA_ERROR_JIT_COMPILER_NOT_FOUND";
    case CUDA_ERROR_INVALID_HANDLE: return "CUDA_ERROR_INVALID_HANDLE";
    case CUDA_ERROR_NOT_FOUND: return "CUDA_ERROR_NOT_FOUND";
    case CUDA_ERROR_NOT_READY: return "CUDA_ERROR_NOT_READY";
    case CUDA_ERROR_ILLEGAL_ADDRESS: return "CUDA_ERROR_ILLEGAL_ADDRESS";
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: return "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
    case CUDA_ERROR_LAUNCH_TIMEOUT: return "CUDA_ERROR_LAUNCH_TIMEOUT";
    case CUDA_ERROR_LAUNCH_FAILED: return "CUDA_ERROR_LAUNCH_FAILED";
    case CUDA_ERROR_NOT_PERMITTED: return "CUDA_ERROR_NOT_PERMITTED";
    case CUDA_ERROR_NOT_SUPPORTED: return "CUDA_ERROR_NOT_SUPPORTED";
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE: return "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE";
    case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: return "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED";
    case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED: return "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED";
    case CUDA_ERROR_UNKNOWN: return "CUDA_ERROR_UNKNOWN";
  }
  return "CUDA error";
}

// "0000:3B:00.0" or "00000000:3b:00.0" -> "0000:3b:00.0" (sysfs's spelling); "" when malformed.
std::string normalize_bus_id(const std::string& s) {
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  char tail = 0;
  if (std::sscanf(s.c_str(), "%x:%x:%x.%x%c", &domain, &bus, &dev, &fn, &tail) != 4) return "";
  if (domain > 0xffff || bus > 0xff || dev > 0x1f || fn > 7) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", domain, bus, dev, fn);
  return buf;
}

std::string format_uuid(const CUuuid& u) {
  const auto* b = reinterpret_cast<const unsigned char*>(u.bytes);
  char buf[64];
  std::snprintf(buf, sizeof buf, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  bool all_zero = true;
  for (int i = 0; i < 16; ++i) all_zero = all_zero && b[i] == 0;
  return all_zero ? "" : buf;
}

// The major version in a file name: ".../libcublas.so.13.0.2.14" -> 13; 0 when there is none.
int soname_major(const std::string& path) {
  char buf[PATH_MAX];
  std::string real = ::realpath(path.c_str(), buf) ? std::string(buf) : path;
  for (const std::string& p : {real, path}) {
    size_t at = p.rfind(".so.");
    if (at == std::string::npos) continue;
    int v = std::atoi(p.c_str() + at + 4);
    if (v > 0) return v;
  }
  return 0;
}

// What to do about a cuInit failure.
std::string cuinit_advice(CUresult rc, const std::string& path) {
  switch (rc) {
    case CUDA_ERROR_NO_DEVICE:
      return "the driver sees no NVIDIA GPU (check `nvidia-smi`, CUDA_VISIBLE_DEVICES, and in a container "
             "--gpus / the NVIDIA Container Toolkit)";
    case CUDA_ERROR_STUB_LIBRARY:
      return path + " is the CUDA toolkit's stub library, not the driver: install the NVIDIA driver, and keep "
                    "lib64/stubs off LD_LIBRARY_PATH";
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
      return path + " is a CUDA forward-compatibility library this GPU cannot use: remove it from the library "
                    "path, or update the NVIDIA driver itself";
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
      return "the kernel module and " + path + " come from different driver releases: reinstall the driver "
                                                "or reboot after an update";
    default:
      return "check `nvidia-smi` and the kernel log (dmesg) for the driver's state";
  }
}

std::string pip_suffix(int driver_major) { return driver_major >= 13 ? "" : "-cu" + std::to_string(driver_major); }

}  // namespace

std::string cuda_version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

std::string cu_error(const CudaApi& api, CUresult code) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.cu.cuGetErrorName == nullptr || api.cu.cuGetErrorName(code, &name) != CUDA_SUCCESS || name == nullptr)
    name = cu_error_name_fallback(code);
  if (api.cu.cuGetErrorString != nullptr && (api.cu.cuGetErrorString(code, &text) != CUDA_SUCCESS)) text = nullptr;
  std::string s = std::string(name) + " (" + std::to_string(static_cast<int>(code)) + ")";
  if (text != nullptr && *text) s += std::string(": ") + text;
  return s;
}

std::string nvrtc_error(const CudaApi& api, nvrtcResult code) {
  const char* name = api.nvrtc.nvrtcGetErrorString ? api.nvrtc.nvrtcGetErrorString(code) : nullptr;
  return std::string(name ? name : "NVRTC error") + " (" + std::to_string(static_cast<int>(code)) + ")";
}

const char* cublas_status_name(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "CUBLAS_STATUS_UNKNOWN";
}

CudaDeviceContext::~CudaDeviceContext() {
  if (api == nullptr) return;
  // At process exit the driver may already be torn down; its errors are of no use then.
  if (module != nullptr && context != nullptr) {
    api->cu.cuCtxSetCurrent(context);
    api->cu.cuModuleUnload(module);
  }
  if (context != nullptr) api->cu.cuDevicePrimaryCtxRelease_v2(device);
}

CudaRuntime::CudaRuntime() = default;
CudaRuntime::~CudaRuntime() = default;

backend::Availability CudaRuntime::availability(bool refresh) {
  std::lock_guard<std::mutex> lk(load_mu_);
  if (attempted_ && (loaded_ || !refresh)) return availability_;
  attempted_ = true;
  backend::Availability a;
  a.checked_at = std::chrono::system_clock::now();
  Status st = load(a);
  if (st.ok()) {
    a.available = true;
    loaded_ = true;
  } else {
    a.available = false;
    a.reason = st.message();
    devices_.clear();
  }
  availability_ = std::move(a);
  return availability_;
}

namespace {

// What the driver reports of device i; nullopt (logged) when it cannot be opened.
std::optional<CudaDeviceInfo> query_device(const CudaApi& api, int i) {
  CudaDeviceInfo d;
  d.ordinal = i;
  CUdevice dev = 0;
  if (CUresult rc = api.cu.cuDeviceGet(&dev, i); rc != CUDA_SUCCESS) {
    DLRT_LOG(kWarn, "cuda: cuDeviceGet(" + std::to_string(i) + ") failed: " + cu_error(api, rc) + "; device skipped");
    return std::nullopt;
  }
  char name[256] = {};
  if (api.cu.cuDeviceGetName(name, sizeof name - 1, dev) == CUDA_SUCCESS) d.name = name;
  auto attr = [&](CUdevice_attribute at) {
    int v = 0;
    return api.cu.cuDeviceGetAttribute(&v, at, dev) == CUDA_SUCCESS ? v : 0;
  };
  d.cc_major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  d.cc_minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  d.sm_count = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  d.max_threads_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  d.max_shared_per_block_optin = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  size_t mem = 0;
  if (api.cu.cuDeviceTotalMem_v2(&mem, dev) == CUDA_SUCCESS) d.total_mem = mem;
  char bus[64] = {};
  if (api.cu.cuDeviceGetPCIBusId(bus, sizeof bus - 1, dev) == CUDA_SUCCESS) d.pci_bus_id = normalize_bus_id(bus);
  if (d.pci_bus_id.empty()) {
    int domain = attr(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID), b = attr(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID),
        slot = attr(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID);
    if (b > 0) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.0", domain, b, slot);
      d.pci_bus_id = buf;
    }
  }
  CUuuid uuid{};
  if (api.cu.cuDeviceGetUuid_v2(&uuid, dev) == CUDA_SUCCESS) d.uuid_or_empty = format_uuid(uuid);
  return d;
}

}  // namespace

Status CudaRuntime::load(backend::Availability& a) {
  CudaApi api;
  const bool explicit_path = !cuda_lib_path_entries().empty();
  const std::string path_fix = explicit_path ? "fix DLRT_CUDA_LIB_PATH (a colon-separated list of files or folders; "
                                               "when set, nothing else is searched) or unset it"
                                             : "or set DLRT_CUDA_LIB_PATH to the folder(s) holding it";

  // 1. The driver.
  auto driver = find_library(
      cuda_lib_spec(CudaLib::kDriver),
      [&](const backend::DynamicLibrary& lib) {
        Status st = api.cu.resolve(lib);
        if (!st.ok())
          return Status(StatusCode::kDeviceUnavailable, st.message() + " (dlrt needs a driver for CUDA 12.0 or newer)");
        return Status::Ok();
      },
      a.tried);
  if (!driver.ok()) {
    a.fix = "install the NVIDIA driver (it provides libcuda.so.1; in a container use the NVIDIA Container Toolkit), " +
            path_fix;
    return driver.status();
  }
  api.driver_path = (*driver)->path();
  a.library_path = api.driver_path;

  CUresult rc = api.cu.cuInit(0);
  if (rc != CUDA_SUCCESS) {
    a.fix = cuinit_advice(rc, api.driver_path);
    return Status(StatusCode::kDeviceUnavailable,
                  "cuInit(0) in " + api.driver_path + " failed: " + cu_error(api, rc));
  }
  rc = api.cu.cuDriverGetVersion(&api.driver_version);
  if (rc != CUDA_SUCCESS || api.driver_version <= 0) {
    a.fix = "reinstall the NVIDIA driver";
    return Status(StatusCode::kDeviceUnavailable, "cuDriverGetVersion failed: " + cu_error(api, rc));
  }
  if (api.driver_version < 12000) {
    a.fix = "update the NVIDIA driver to one for CUDA 12.0 or newer (525 or newer)";
    return Status(StatusCode::kDeviceUnavailable,
                  "the driver supports CUDA " + cuda_version_string(api.driver_version) + "; dlrt needs CUDA 12.0 or newer");
  }
  const int driver_major = api.driver_version / 1000, driver_minor = (api.driver_version % 1000) / 10;
  const std::string driver_cuda = "CUDA " + cuda_version_string(api.driver_version);

  int count = 0;
  rc = api.cu.cuDeviceGetCount(&count);
  if (rc != CUDA_SUCCESS || count <= 0) {
    a.fix = cuinit_advice(CUDA_ERROR_NO_DEVICE, api.driver_path);
    return Status(StatusCode::kDeviceUnavailable,
                  "the CUDA driver (" + driver_cuda + ") reports no device" +
                      (rc == CUDA_SUCCESS ? std::string() : ": " + cu_error(api, rc)));
  }
  std::vector<CudaDeviceInfo> devs;
  for (int i = 0; i < count; ++i)
    if (std::optional<CudaDeviceInfo> d = query_device(api, i)) devs.push_back(std::move(*d));
  if (devs.empty()) {
    a.fix = "check `nvidia-smi`";
    return Status(StatusCode::kDeviceUnavailable,
                  "the CUDA driver reports " + std::to_string(count) + " device(s) but none could be opened");
  }

  // 2. NVRTC, no newer than the driver: the driver cannot load what a newer NVRTC makes.
  auto nvrtc = find_library(
      cuda_lib_spec(CudaLib::kNvrtc),
      [&](const backend::DynamicLibrary& lib) {
        NvrtcApi t;
        DLRT_RETURN_IF_ERROR(t.resolve(lib));
        int major = 0, minor = 0;
        if (t.nvrtcVersion(&major, &minor) != NVRTC_SUCCESS || major <= 0)
          return Status(StatusCode::kDeviceUnavailable, "nvrtcVersion failed");
        if (major > driver_major || (major == driver_major && minor > driver_minor))
          return Status(StatusCode::kDeviceUnavailable,
                        "NVRTC " + std::to_string(major) + "." + std::to_string(minor) +
                            " is newer than the driver (" + driver_cuda + "), which cannot load the code it makes");
        api.nvrtc = t;
        api.nvrtc_major = major;
        api.nvrtc_minor = minor;
        return Status::Ok();
      },
      a.tried);
  if (!nvrtc.ok()) {
    a.fix = "pip install nvidia-cuda-nvrtc" + pip_suffix(driver_major) + "==" + std::to_string(driver_major) + "." +
            std::to_string(driver_minor) + ".* (NVRTC no newer than the driver's " + driver_cuda +
            "), or install the CUDA toolkit, or update the NVIDIA driver, " + path_fix;
    return Status(StatusCode::kDeviceUnavailable, "the CUDA driver (" + driver_cuda + ") loaded, but " +
                                                      nvrtc.status().message());
  }
  api.nvrtc_path = (*nvrtc)->path();

  // 3. cuBLAS, optional: a major version the driver supports.
  std::vector<std::string> cublas_tried;
  auto cublas = find_library(
      cuda_lib_spec(CudaLib::kCublas),
      [&](const backend::DynamicLibrary& lib) {
        CublasApi t;
        DLRT_RETURN_IF_ERROR(t.resolve(lib));
        int major = soname_major(lib.path());
        if (major > driver_major)
          return Status(StatusCode::kDeviceUnavailable, "cuBLAS " + std::to_string(major) +
                                                            " needs a CUDA " + std::to_string(major) +
                                                            " driver; this one is " + driver_cuda);
        api.cublas = t;
        api.cublas_major = major;
        return Status::Ok();
      },
      cublas_tried);
  a.tried.insert(a.tried.end(), cublas_tried.begin(), cublas_tried.end());
  api.has_cublas = cublas.ok();
  if (api.has_cublas) api.cublas_path = (*cublas)->path();

  a.version = driver_cuda + " driver, NVRTC " + std::to_string(api.nvrtc_major) + "." +
              std::to_string(api.nvrtc_minor) +
              (api.has_cublas ? ", cuBLAS " + (api.cublas_major ? std::to_string(api.cublas_major) : std::string("?"))
                              : ", no cuBLAS (GEMMs run on dlrt's own kernels; pip install nvidia-cublas" +
                                    pip_suffix(driver_major) + ", or " + path_fix + ")");
  if (!api.has_cublas)
    DLRT_LOG(kInfo, "cuda: cuBLAS not found, GEMMs run on dlrt's own kernels: " + cublas.status().message());
  api_ = api;
  devices_ = std::move(devs);
  {
    std::lock_guard<std::mutex> ck(ctx_mu_);
    contexts_.assign(devices_.size(), nullptr);
  }
  return Status::Ok();
}

std::vector<CudaDeviceInfo> CudaRuntime::devices() {
  if (!availability().available) return {};
  std::lock_guard<std::mutex> lk(load_mu_);
  return devices_;
}

Result<std::shared_ptr<CudaDeviceContext>> CudaRuntime::context(int ordinal) {
  backend::Availability a = availability();
  if (!a.available)
    return Status(StatusCode::kDeviceUnavailable, "cuda is unavailable: " + a.reason + ". Fix: " + a.fix);
  CudaDeviceInfo info;
  {
    std::lock_guard<std::mutex> lk(load_mu_);
    if (ordinal < 0 || ordinal >= static_cast<int>(devices_.size()))
      return Status(StatusCode::kDeviceUnavailable, "cuda has no device " + std::to_string(ordinal) + " (it has " +
                                                        std::to_string(devices_.size()) + ")");
    info = devices_[ordinal];
  }
  // One context made at a time (kernel builds take seconds); the first stored is kept.
  std::lock_guard<std::mutex> ck(ctx_mu_);
  if (contexts_[ordinal]) {
    // Current on this thread too, as the contract says.
    api_.cu.cuCtxSetCurrent(contexts_[ordinal]->context);
    return contexts_[ordinal];
  }
  auto ctx = std::make_shared<CudaDeviceContext>();
  ctx->api = &api_;
  ctx->info = info;
  const std::string where = "cuda:" + std::to_string(ordinal) + " (" + info.name + ")";
  CUresult rc = api_.cu.cuDeviceGet(&ctx->device, info.ordinal);
  if (rc != CUDA_SUCCESS)
    return Status(StatusCode::kBackendError, "cuDeviceGet for " + where + " failed: " + cu_error(api_, rc));
  CUcontext c = nullptr;
  rc = api_.cu.cuDevicePrimaryCtxRetain(&c, ctx->device);
  if (rc != CUDA_SUCCESS || c == nullptr)
    return Status(rc == CUDA_ERROR_OUT_OF_MEMORY ? StatusCode::kOutOfMemory : StatusCode::kBackendError,
                  "cuDevicePrimaryCtxRetain on " + where + " failed: " + cu_error(api_, rc) +
                      " (is the GPU in exclusive-process mode and used by another process? see `nvidia-smi`)");
  ctx->context = c;
  rc = api_.cu.cuCtxSetCurrent(c);
  if (rc != CUDA_SUCCESS)
    return Status(StatusCode::kBackendError, "cuCtxSetCurrent on " + where + " failed: " + cu_error(api_, rc));
  DLRT_RETURN_IF_ERROR(load_kernel_module(*ctx));  // its message names the device
  contexts_[ordinal] = ctx;
  return ctx;
}

}  // namespace dlrt::cuda
