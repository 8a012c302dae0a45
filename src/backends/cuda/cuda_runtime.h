// The CUDA runtime as dlrt sees it: the driver (libcuda.so.1), NVRTC and
// (optionally) cuBLAS opened at run time, the driver's devices, and per device
// the retained primary context with dlrt's kernel module loaded into it.
//
// Where the libraries are looked for, in order (docs/cuda.md):
//   1. $DLRT_CUDA_LIB_PATH, when set: a colon-separated list of files and
//      folders, and then the only place searched (a library not there is
//      missing, never taken from elsewhere);
//   2. the system loader (libcuda.so.1; libnvrtc.so.13, .12, ...;
//      libcublas.so.13, .12, ...);
//   3. the driver's usual folders, the CUDA toolkit's (/usr/local/cuda/lib64,
//      /usr/local/cuda-*/lib64, .../targets/<arch>-linux/lib, $CUDA_HOME,
//      $CUDA_PATH);
//   4. NVIDIA's pip wheels in every site-packages found without starting
//      Python: nvidia/cu13/lib (CUDA 13 wheels), nvidia/cuda_nvrtc/lib and
//      nvidia/cublas/lib (cu12 wheels).
// The driver and NVRTC are required; cuBLAS is optional (without it GEMMs run
// on dlrt's own kernels, and the availability's version says so). An NVRTC or
// cuBLAS newer than the driver's CUDA version is passed over for an older one.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/dynamic_library.h"
#include "backends/cuda/cuda_api.h"
#include "dlrt/status.h"

namespace dlrt::cuda {

// The three symbol tables and what was loaded. Written once, before the
// runtime first reports itself available; read-only afterwards.
struct CudaApi {
  CudaDriverApi cu;
  NvrtcApi nvrtc;
  CublasApi cublas;
  bool has_cublas = false;
  int driver_version = 0;  // cuDriverGetVersion: 13000 for CUDA 13.0
  int nvrtc_major = 0, nvrtc_minor = 0;
  int cublas_major = 0;    // from the file name (libcublas.so.13...); 0 when unknown
  std::string driver_path, nvrtc_path, cublas_path;
};

struct CudaDeviceInfo {
  int ordinal = 0;  // the driver's device number; dlrt's name for it ("cuda:0")
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int max_threads_per_block = 0;
  int max_shared_per_block_optin = 0;
  uint64_t total_mem = 0;
  std::string pci_bus_id;  // "0000:01:00.0", lowercase, as sysfs names it; "" when unknown
  std::string uuid_or_empty;  // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi prints it
};

// One per device per process, kept for the life of the process.
struct CudaDeviceContext {
  const CudaApi* api = nullptr;
  CudaDeviceInfo info;
  CUdevice device = 0;
  CUcontext context = nullptr;  // the retained primary context
  CUmodule module = nullptr;    // set by load_kernel_module (cuda_kernels.h)
  bool module_from_cache = false;
  double module_build_ms = 0;
  ~CudaDeviceContext();    // unloads the module, releases the primary context
};

class CudaRuntime {
 public:
  CudaRuntime();
  ~CudaRuntime();
  CudaRuntime(const CudaRuntime&) = delete;
  CudaRuntime& operator=(const CudaRuntime&) = delete;

  // Loads the libraries on first use and keeps the answer; refresh=true
  // searches again after a failure (re-reading the environment). A success is
  // final: the libraries stay loaded for the life of the process.
  backend::Availability availability(bool refresh = false);
  // The devices the driver reported at load time (empty when unavailable).
  std::vector<CudaDeviceInfo> devices();
  // The symbol tables; valid once availability() said available.
  const CudaApi& api() const { return api_; }
  // Device `ordinal`'s context: the primary context retained and made current
  // on the calling thread, and dlrt's kernels loaded (load_kernel_module), on
  // first use; kept for the life of the process. A failure is not kept: the
  // next call tries again.
  Result<std::shared_ptr<CudaDeviceContext>> context(int ordinal);

 private:
  Status load(backend::Availability& a);

  CudaApi api_;
  std::mutex load_mu_;  // guards the fields below it and api_ until loaded_
  bool attempted_ = false;
  bool loaded_ = false;
  backend::Availability availability_;
  std::vector<CudaDeviceInfo> devices_;
  std::mutex ctx_mu_;
  std::vector<std::shared_ptr<CudaDeviceContext>> contexts_;
};

// "CUDA_ERROR_OUT_OF_MEMORY (2): out of memory"; the driver's own words when
// it is loaded, dlrt's table otherwise.
std::string cu_error(const CudaApi& api, CUresult code);
// "NVRTC_ERROR_COMPILATION (6)".
std::string nvrtc_error(const CudaApi& api, nvrtcResult code);
// "13.0" for 13000, "12.8" for 12080.
std::string cuda_version_string(int version);

}  // namespace dlrt::cuda
