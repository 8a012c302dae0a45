#include "backends/opencl/cl_runtime.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "backend/canary.h"
#include "backends/gpu/kernel_source.h"
#include "core/env.h"
#include "core/hash.h"
#include "core/logging.h"
#include "backend/blob_cache.h"

namespace dlrt::opencl {

namespace {

constexpr const char* kProgramFormat = "dlrt-opencl-program-v1";

backend::LibrarySearch opencl_search() {
  backend::LibrarySearch s;
  s.what = "OpenCL ICD loader (libOpenCL)";
  s.env_var = "DLRT_OPENCL_LIB";
  s.names = {"libOpenCL.so.1", "libOpenCL.so"};
  s.folders = {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/local/lib",
               "/usr/local/cuda*/lib64", "/opt/rocm*/lib", "/opt/intel/oneapi/compiler/latest/lib"};
  s.fix = "install an OpenCL ICD loader and a driver (Debian/Ubuntu: apt install ocl-icd-libopencl1 plus "
          "pocl-opencl-icd for CPUs, or your GPU vendor's OpenCL driver), or set DLRT_OPENCL_LIB to "
          "libOpenCL.so.1 or its folder";
  return s;
}

std::string platform_string(const ClApi& api, cl_platform_id p, cl_platform_info what) {
  size_t n = 0;
  if (api.clGetPlatformInfo(p, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
  std::string s(n, '\0');
  if (api.clGetPlatformInfo(p, what, n, s.data(), nullptr) != CL_SUCCESS) return "";
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

std::string device_string(const ClApi& api, cl_device_id d, cl_device_info what) {
  size_t n = 0;
  if (api.clGetDeviceInfo(d, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
  std::string s(n, '\0');
  if (api.clGetDeviceInfo(d, what, n, s.data(), nullptr) != CL_SUCCESS) return "";
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

template <typename T>
T device_value(const ClApi& api, cl_device_id d, cl_device_info what) {
  T v{};
  if (api.clGetDeviceInfo(d, what, sizeof v, &v, nullptr) != CL_SUCCESS) return T{};
  return v;
}

bool has_extension(const std::string& list, const std::string& ext) {
  size_t pos = 0;
  while ((pos = list.find(ext, pos)) != std::string::npos) {
    size_t end = pos + ext.size();
    if ((pos == 0 || list[pos - 1] == ' ') && (end == list.size() || list[end] == ' ')) return true;
    pos = end;
  }
  return false;
}

std::string pci_bus_id(const ClApi& api, cl_device_id d, const std::string& ext) {
  char buf[32];
  if (has_extension(ext, "cl_khr_pci_bus_info")) {
    cl_device_pci_bus_info_khr info{};
    if (api.clGetDeviceInfo(d, CL_DEVICE_PCI_BUS_INFO_KHR, sizeof info, &info, nullptr) == CL_SUCCESS) {
      std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", info.pci_domain, info.pci_bus, info.pci_device,
                    info.pci_function);
      return buf;
    }
  }
  if (has_extension(ext, "cl_nv_device_attribute_query")) {
    cl_uint bus = 0, slot = 0, domain = 0;
    if (api.clGetDeviceInfo(d, CL_DEVICE_PCI_BUS_ID_NV, sizeof bus, &bus, nullptr) == CL_SUCCESS &&
        api.clGetDeviceInfo(d, CL_DEVICE_PCI_SLOT_ID_NV, sizeof slot, &slot, nullptr) == CL_SUCCESS) {
      api.clGetDeviceInfo(d, CL_DEVICE_PCI_DOMAIN_ID_NV, sizeof domain, &domain, nullptr);
      std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", domain, bus, slot >> 3, slot & 7);
      return buf;
    }
  }
  return "";
}

// Tile sizes from the device's limits (GEMM_TS x GEMM_TS tiles, (TS/WPT)^2 work-items).
gpu::DeviceParams params_for(const ClDeviceInfo& d) {
  gpu::DeviceParams p;
  p.max_wg = d.max_wg;
  p.gemm_wpt = 4;
  if (d.max_wg >= 256 && d.local_mem >= 16 * 1024) p.gemm_ts = 64;
  else if (d.max_wg >= 64 && d.local_mem >= 8 * 1024) p.gemm_ts = 32;
  else {
    p.gemm_ts = 16;
    p.gemm_wpt = d.max_wg >= 16 ? 4 : 8;
  }
  return p;
}

// The drivers dlrt is tested with: CI runs the OpenCL tests on PoCL 3.1 (Debian 12's
// pocl-opencl-icd) on the CPU.
bool tested_drivers(const std::vector<ClDeviceInfo>& devs) {
  for (const auto& d : devs)
    if (d.platform_name != "Portable Computing Language" || d.driver_version.rfind("3.1", 0) != 0) return false;
  return true;
}

// "Portable Computing Language 3.1+debian; NVIDIA CUDA 550.54.14": the verdict's cache key.
std::string driver_identity(const std::vector<ClDeviceInfo>& devs) {
  std::set<std::string> seen;
  std::string out;
  for (const auto& d : devs) {
    std::string id = d.platform_name + " " + d.driver_version;
    if (seen.insert(id).second) out += (out.empty() ? "" : "; ") + id;
  }
  return out;
}

}  // namespace

std::string cl_error(cl_int code) { return std::string(cl_error_name(code)) + " (" + std::to_string(code) + ")"; }

const char* cl_error_name(cl_int code) {
  switch (code) {
    case CL_SUCCESS: return "CL_SUCCESS";
    case CL_DEVICE_NOT_FOUND: return "CL_DEVICE_NOT_FOUND";
    case CL_DEVICE_NOT_AVAILABLE: return "CL_DEVICE_NOT_AVAILABLE";
    case CL_COMPILER_NOT_AVAILABLE: return "CL_COMPILER_NOT_AVAILABLE";
    case CL_MEM_OBJECT_ALLOCATION_FAILURE: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case CL_OUT_OF_RESOURCES: return "CL_OUT_OF_RESOURCES";
    case CL_OUT_OF_HOST_MEMORY: return "CL_OUT_OF_HOST_MEMORY";
    case CL_BUILD_PROGRAM_FAILURE: return "CL_BUILD_PROGRAM_FAILURE";
    case CL_INVALID_VALUE: return "CL_INVALID_VALUE";
    case CL_INVALID_BINARY: return "CL_INVALID_BINARY";
    case CL_INVALID_BUILD_OPTIONS: return "CL_INVALID_BUILD_OPTIONS";
    case CL_INVALID_KERNEL_NAME: return "CL_INVALID_KERNEL_NAME";
    case CL_INVALID_ARG_SIZE: return "CL_INVALID_ARG_SIZE";
    case CL_INVALID_WORK_GROUP_SIZE: return "CL_INVALID_WORK_GROUP_SIZE";
    case CL_INVALID_GLOBAL_WORK_SIZE: return "CL_INVALID_GLOBAL_WORK_SIZE";
    case CL_PLATFORM_NOT_FOUND_KHR: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "CL error";
  }
}

ClDeviceContext::~ClDeviceContext() {
  if (program) api->clReleaseProgram(program);
  if (context) api->clReleaseContext(context);
}

ClRuntime::ClRuntime()
    : library_(opencl_search(), [this](const backend::DynamicLibrary& lib) { return on_load(lib); }) {}

Result<std::string> ClRuntime::on_load(const backend::DynamicLibrary& lib) {
  namespace fs = std::filesystem;
  // An explicit DLRT_OPENCL_LIB is authoritative: never silently use another libOpenCL.
  if (const char* env = env::get("DLRT_OPENCL_LIB"); env && *env) {
    std::error_code ec;
    fs::path want = fs::weakly_canonical(env, ec), got = fs::weakly_canonical(lib.path(), ec);
    bool ok = fs::is_directory(want, ec) ? got.parent_path() == want : got == want;
    if (!ok)
      return Status(StatusCode::kDeviceUnavailable, std::string("DLRT_OPENCL_LIB=") + env +
                                                        " does not load (found " + lib.path() +
                                                        " elsewhere, which an explicit DLRT_OPENCL_LIB forbids)");
  }
  ClApi table;
  DLRT_RETURN_IF_ERROR(table.resolve(lib));
  cl_uint np = 0;
  cl_int rc = table.clGetPlatformIDs(0, nullptr, &np);
  if (rc != CL_SUCCESS || np == 0)
    return Status(StatusCode::kDeviceUnavailable,
                  lib.path() + " found no OpenCL platform (" + (rc == CL_SUCCESS ? "0 platforms" : cl_error(rc)) +
                      "): no OpenCL driver (ICD) is installed or /etc/OpenCL/vendors is empty");
  std::vector<cl_platform_id> plats(np);
  table.clGetPlatformIDs(np, plats.data(), nullptr);
  std::vector<ClDeviceInfo> devs;
  std::string version;
  for (cl_platform_id p : plats) {
    std::string pname = platform_string(table, p, CL_PLATFORM_NAME);
    std::string pver = platform_string(table, p, CL_PLATFORM_VERSION);
    if (!version.empty()) version += "; ";
    version += pver.empty() ? pname : pver;
    cl_uint nd = 0;
    if (table.clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) != CL_SUCCESS || nd == 0) continue;
    std::vector<cl_device_id> ids(nd);
    if (table.clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, ids.data(), nullptr) != CL_SUCCESS) continue;
    for (cl_device_id d : ids) {
      if (!device_value<cl_bool>(table, d, CL_DEVICE_AVAILABLE)) continue;
      ClDeviceInfo info;
      info.index = static_cast<int>(devs.size());
      info.platform = p;
      info.id = d;
      info.platform_name = pname;
      info.platform_version = pver;
      info.name = device_string(table, d, CL_DEVICE_NAME);
      info.vendor = device_string(table, d, CL_DEVICE_VENDOR);
      info.version = device_string(table, d, CL_DEVICE_VERSION);
      info.driver_version = device_string(table, d, CL_DRIVER_VERSION);
      info.c_version = device_string(table, d, CL_DEVICE_OPENCL_C_VERSION);
      info.extensions = device_string(table, d, CL_DEVICE_EXTENSIONS);
      info.type = device_value<cl_device_type>(table, d, CL_DEVICE_TYPE);
      info.compute_units = device_value<cl_uint>(table, d, CL_DEVICE_MAX_COMPUTE_UNITS);
      info.vendor_id = device_value<cl_uint>(table, d, CL_DEVICE_VENDOR_ID);
      info.clock_mhz = device_value<cl_uint>(table, d, CL_DEVICE_MAX_CLOCK_FREQUENCY);
      info.global_mem = device_value<cl_ulong>(table, d, CL_DEVICE_GLOBAL_MEM_SIZE);
      info.local_mem = device_value<cl_ulong>(table, d, CL_DEVICE_LOCAL_MEM_SIZE);
      info.max_alloc = device_value<cl_ulong>(table, d, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
      info.max_wg = device_value<size_t>(table, d, CL_DEVICE_MAX_WORK_GROUP_SIZE);
      info.pci_bus_id = pci_bus_id(table, d, info.extensions);
      devs.push_back(std::move(info));
    }
  }
  if (devs.empty())
    return Status(StatusCode::kDeviceUnavailable,
                  lib.path() + ": " + std::to_string(np) + " OpenCL platform(s) (" + version + ") but no usable device");
  // Drivers dlrt was not tested with are checked in a child process first (backend/canary.h).
  std::string compatibility;
  if (!backend::in_canary_child()) {
    std::string drivers = driver_identity(devs);
    if (tested_drivers(devs)) {
      compatibility = "tested driver";
    } else {
      BlobCache cache = configured_blob_cache();
      backend::CanaryVerdict v =
          backend::check_release({"opencl", "OpenCL driver", drivers, cache.enabled() ? cache.dir() : ""});
      compatibility = v.summary();
      if (v.kind == backend::CanaryVerdict::Kind::kFailed)
        return Status(StatusCode::kDeviceUnavailable,
                      "OpenCL driver " + drivers + " failed dlrt's compatibility check: " + v.reason +
                          " (DLRT_CANARY=recheck checks it again, DLRT_CANARY=skip trusts it unchecked)");
    }
  }
  api_ = table;
  std::lock_guard<std::mutex> lk(mu_);
  compatibility_ = compatibility;
  devices_ = std::move(devs);
  contexts_.assign(devices_.size(), nullptr);
  return version;
}

backend::Availability ClRuntime::availability(bool refresh) {
  backend::Availability a = library_.get(refresh);
  if (a.available) {
    std::lock_guard<std::mutex> lk(mu_);
    a.compatibility = compatibility_;
  }
  return a;
}

std::vector<ClDeviceInfo> ClRuntime::devices() {
  if (!library_.get().available) return {};
  std::lock_guard<std::mutex> lk(mu_);
  return devices_;
}

Result<std::shared_ptr<ClDeviceContext>> ClRuntime::context(int index) {
  backend::Availability a = library_.get();
  if (!a.available)
    return Status(StatusCode::kDeviceUnavailable, "opencl is unavailable: " + a.reason + ". Fix: " + a.fix);
  ClDeviceInfo info;
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (index < 0 || index >= static_cast<int>(devices_.size()))
      return Status(StatusCode::kDeviceUnavailable, "opencl has no device " + std::to_string(index));
    if (contexts_[index]) return contexts_[index];
    info = devices_[index];
  }
  // Built outside the lock (PoCL builds take seconds); the first one stored wins.
  static std::mutex build_mu;  // one build at a time per process keeps PoCL's compiler from thrashing
  std::lock_guard<std::mutex> build_lock(build_mu);
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (contexts_[index]) return contexts_[index];
  }
  DLRT_ASSIGN_OR_RETURN(auto ctx, make_context(info));
  std::lock_guard<std::mutex> lk(mu_);
  if (!contexts_[index]) contexts_[index] = ctx;
  return contexts_[index];
}

Result<std::shared_ptr<ClDeviceContext>> ClRuntime::make_context(const ClDeviceInfo& info) {
  const ClApi& api = api_;
  auto ctx = std::make_shared<ClDeviceContext>();
  ctx->api = &api_;
  ctx->info = info;
  ctx->params = params_for(info);
  cl_int err = CL_SUCCESS;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(info.platform), 0};
  ctx->context = api.clCreateContext(props, 1, &info.id, nullptr, nullptr, &err);
  if (!ctx->context || err != CL_SUCCESS)
    return Status(StatusCode::kBackendError, "clCreateContext on '" + info.name + "' failed: " + cl_error(err));

  ctx->build_options = "-cl-std=CL1.2 -DGEMM_TS=" + std::to_string(ctx->params.gemm_ts) +
                       " -DGEMM_WPT=" + std::to_string(ctx->params.gemm_wpt);
  std::string_view src = gpu::embedded_kernel_source();
  std::string key = std::string(kProgramFormat) + "|" + info.platform_name + "|" + info.name + "|" + info.vendor +
                    "|" + info.version + "|driver " + info.driver_version + "|src " + hex64(fnv1a(src)) + "|opts " +
                    ctx->build_options;
  auto t0 = std::chrono::steady_clock::now();
  BlobCache cache = configured_blob_cache();

  // Warm: a cached binary for exactly this device, driver, source and options.
  if (cache.enabled()) {
    std::string why;
    if (auto blob = cache.load(key, &why); blob && blob->format == kProgramFormat && !blob->data.empty()) {
      size_t size = blob->data.size();
      const unsigned char* bin = blob->data.data();
      cl_int bin_status = CL_SUCCESS;
      cl_program p = api.clCreateProgramWithBinary(ctx->context, 1, &info.id, &size, &bin, &bin_status, &err);
      if (p && err == CL_SUCCESS && bin_status == CL_SUCCESS &&
          api.clBuildProgram(p, 1, &info.id, ctx->build_options.c_str(), nullptr, nullptr) == CL_SUCCESS) {
        ctx->program = p;
        ctx->program_from_cache = true;
      } else {
        if (p) api.clReleaseProgram(p);
        DLRT_LOG(kWarn, "opencl: cached program binary for '" + info.name + "' was rejected; rebuilding from source");
      }
    }
  }
  // Cold: build from the embedded source, then cache the binary.
  if (!ctx->program) {
    const char* s = src.data();
    size_t len = src.size();
    cl_program p = api.clCreateProgramWithSource(ctx->context, 1, &s, &len, &err);
    if (!p || err != CL_SUCCESS)
      return Status(StatusCode::kBackendError, "clCreateProgramWithSource failed: " + cl_error(err));
    err = api.clBuildProgram(p, 1, &info.id, ctx->build_options.c_str(), nullptr, nullptr);
    if (err != CL_SUCCESS) {
      size_t n = 0;
      std::string log;
      if (api.clGetProgramBuildInfo(p, info.id, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n) == CL_SUCCESS && n > 1) {
        log.resize(n);
        api.clGetProgramBuildInfo(p, info.id, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
        if (log.size() > 4000) log = log.substr(0, 4000) + "...";
      }
      api.clReleaseProgram(p);
      return Status(StatusCode::kBackendError,
                    "building dlrt's OpenCL kernels for '" + info.name + "' failed: " + cl_error(err) + "\n" + log);
    }
    ctx->program = p;
    if (cache.enabled()) {
      size_t bin_size = 0;
      if (api.clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof bin_size, &bin_size, nullptr) == CL_SUCCESS &&
          bin_size > 0) {
        backend::Blob blob;
        blob.format = kProgramFormat;
        blob.data.resize(bin_size);
        unsigned char* ptr = blob.data.data();
        if (api.clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof ptr, &ptr, nullptr) == CL_SUCCESS) {
          Status st = cache.store(key, blob);
          if (!st.ok()) DLRT_LOG(kWarn, "opencl: could not cache the program binary: " + st.message());
        }
      }
    }
  }
  ctx->build_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  DLRT_LOG(kInfo, "opencl: program for '" + info.name + "' " + (ctx->program_from_cache ? "loaded from cache" : "built") +
                      " in " + std::to_string(static_cast<int>(ctx->build_ms)) + " ms");
  return ctx;
}

}  // namespace dlrt::opencl
