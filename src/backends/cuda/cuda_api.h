// The subset of NVIDIA's CUDA driver API, NVRTC and cuBLAS that dlrt uses,
// declared here so that dlrt builds with no CUDA header or library: the scalar
// and handle types, the enum values, and every function with its exact
// signature, resolved at run time through DynamicLibrary's all-or-nothing
// symbol tables (one per library).
//
// Everything lives in namespace dlrt::cuda (not the global namespace, unlike
// cl_api.h) so that a translation unit may include this header and NVIDIA's
// own headers side by side: tests/cuda/cuda_api_test.cpp does exactly that
// and checks every table entry and enum value below against cuda.h, nvrtc.h
// and cublas_api.h whenever a toolkit is installed.
//
// Exported names (ABI): the driver keeps every versioned entry point it ever
// exported, and the headers map the plain names onto the newest one
// (cuda.h 12.x/13.0: cuMemAlloc -> cuMemAlloc_v2, cuStreamDestroy ->
// cuStreamDestroy_v2, cuGraphInstantiate -> cuGraphInstantiateWithFlags, ...).
// The table names the versioned symbols directly, choosing for each the
// newest one that every CUDA 12.x and 13.x driver exports:
//   - cuEventElapsedTime: cuda.h 13.0 maps it to cuEventElapsedTime_v2, which
//     only drivers from 12.8 on export; the unversioned symbol (same
//     signature) is exported by every 12.x and 13.x driver, so it is used.
//   - cuDeviceGetUuid_v2 (11.4+) rather than cuDeviceGetUuid (removed from
//     cuda.h 13.0's mapping).
//   - no _ptsz/_ptds variants: dlrt uses explicit streams, never the legacy
//     or per-thread default stream.
// Linux x86-64/aarch64 ABI: CUDAAPI is empty; CUdeviceptr is 64 bits; every
// enum is passed as a 32-bit int.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backend/dynamic_library.h"

namespace dlrt::cuda {

// ---- Driver API (cuda.h) ----

enum CUresult : int {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_DEINITIALIZED = 4,
  CUDA_ERROR_STUB_LIBRARY = 34,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
  CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
  CUDA_ERROR_JIT_COMPILER_NOT_FOUND = 221,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
  CUDA_ERROR_LAUNCH_TIMEOUT = 702,
  CUDA_ERROR_LAUNCH_FAILED = 719,
  CUDA_ERROR_NOT_PERMITTED = 800,
  CUDA_ERROR_NOT_SUPPORTED = 801,
  CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803,
  CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804,
  CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
  CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
  CUDA_ERROR_UNKNOWN = 999,
};

enum CUdevice_attribute : int {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
  CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
  CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,
  CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39,
  CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
};

enum CUfunction_attribute : int {
  CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
  CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
  CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};

enum CUjit_option : int {
  CU_JIT_MAX_REGISTERS = 0,
  CU_JIT_WALL_TIME = 2,
  CU_JIT_INFO_LOG_BUFFER = 3,
  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_JIT_OPTIMIZATION_LEVEL = 7,
  CU_JIT_LOG_VERBOSE = 12,
};

enum CUstreamCaptureMode : int {
  CU_STREAM_CAPTURE_MODE_GLOBAL = 0,
  CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
  CU_STREAM_CAPTURE_MODE_RELAXED = 2,
};

// Flag values (plain unsigned parameters in the API).
inline constexpr unsigned CU_STREAM_DEFAULT = 0x0;
inline constexpr unsigned CU_STREAM_NON_BLOCKING = 0x1;
inline constexpr unsigned CU_EVENT_DEFAULT = 0x0;
inline constexpr unsigned CU_EVENT_BLOCKING_SYNC = 0x1;
inline constexpr unsigned CU_EVENT_DISABLE_TIMING = 0x2;

typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st* CUcontext;
typedef struct CUmod_st* CUmodule;
typedef struct CUfunc_st* CUfunction;
typedef struct CUstream_st* CUstream;
typedef struct CUevent_st* CUevent;
typedef struct CUgraph_st* CUgraph;
typedef struct CUgraphExec_st* CUgraphExec;
struct CUuuid {
  char bytes[16];
};

// X(name, return type, (argument types))
#define DLRT_CUDA_DRIVER_SYMBOLS(X)                                                                           \
  X(cuInit, CUresult, (unsigned))                                                                             \
  X(cuDriverGetVersion, CUresult, (int*))                                                                     \
  X(cuDeviceGetCount, CUresult, (int*))                                                                       \
  X(cuDeviceGet, CUresult, (CUdevice*, int))                                                                  \
  X(cuDeviceGetName, CUresult, (char*, int, CUdevice))                                                        \
  X(cuDeviceGetAttribute, CUresult, (int*, CUdevice_attribute, CUdevice))                                     \
  X(cuDeviceTotalMem_v2, CUresult, (size_t*, CUdevice))                                                       \
  X(cuDeviceGetPCIBusId, CUresult, (char*, int, CUdevice))                                                    \
  X(cuDeviceGetUuid_v2, CUresult, (CUuuid*, CUdevice))                                                        \
  X(cuDevicePrimaryCtxRetain, CUresult, (CUcontext*, CUdevice))                                               \
  X(cuDevicePrimaryCtxRelease_v2, CUresult, (CUdevice))                                                       \
  X(cuCtxSetCurrent, CUresult, (CUcontext))                                                                   \
  X(cuCtxGetCurrent, CUresult, (CUcontext*))                                                                  \
  X(cuCtxSynchronize, CUresult, ())                                                                           \
  X(cuStreamCreate, CUresult, (CUstream*, unsigned))                                                          \
  X(cuStreamDestroy_v2, CUresult, (CUstream))                                                                 \
  X(cuStreamSynchronize, CUresult, (CUstream))                                                                \
  X(cuMemAlloc_v2, CUresult, (CUdeviceptr*, size_t))                                                          \
  X(cuMemFree_v2, CUresult, (CUdeviceptr))                                                                    \
  X(cuMemGetInfo_v2, CUresult, (size_t*, size_t*))                                                            \
  X(cuMemcpyHtoDAsync_v2, CUresult, (CUdeviceptr, const void*, size_t, CUstream))                             \
  X(cuMemcpyDtoHAsync_v2, CUresult, (void*, CUdeviceptr, size_t, CUstream))                                   \
  X(cuMemcpyDtoDAsync_v2, CUresult, (CUdeviceptr, CUdeviceptr, size_t, CUstream))                             \
  X(cuMemsetD8Async, CUresult, (CUdeviceptr, unsigned char, size_t, CUstream))                                \
  X(cuMemAllocHost_v2, CUresult, (void**, size_t))                                                            \
  X(cuMemFreeHost, CUresult, (void*))                                                                         \
  X(cuModuleLoadData, CUresult, (CUmodule*, const void*))                                                     \
  X(cuModuleLoadDataEx, CUresult, (CUmodule*, const void*, unsigned, CUjit_option*, void**))                  \
  X(cuModuleUnload, CUresult, (CUmodule))                                                                     \
  X(cuModuleGetFunction, CUresult, (CUfunction*, CUmodule, const char*))                                      \
  X(cuFuncSetAttribute, CUresult, (CUfunction, CUfunction_attribute, int))                                    \
  X(cuLaunchKernel, CUresult,                                                                                 \
    (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void**, void**)) \
  X(cuGetErrorName, CUresult, (CUresult, const char**))                                                       \
  X(cuGetErrorString, CUresult, (CUresult, const char**))                                                     \
  X(cuStreamBeginCapture_v2, CUresult, (CUstream, CUstreamCaptureMode))                                       \
  X(cuStreamEndCapture, CUresult, (CUstream, CUgraph*))                                                       \
  X(cuGraphInstantiateWithFlags, CUresult, (CUgraphExec*, CUgraph, unsigned long long))                       \
  X(cuGraphLaunch, CUresult, (CUgraphExec, CUstream))                                                         \
  X(cuGraphExecDestroy, CUresult, (CUgraphExec))                                                              \
  X(cuGraphDestroy, CUresult, (CUgraph))                                                                      \
  X(cuEventCreate, CUresult, (CUevent*, unsigned))                                                            \
  X(cuEventDestroy_v2, CUresult, (CUevent))                                                                   \
  X(cuEventRecord, CUresult, (CUevent, CUstream))                                                             \
  X(cuEventSynchronize, CUresult, (CUevent))                                                                  \
  X(cuEventElapsedTime, CUresult, (float*, CUevent, CUevent))

DLRT_DYNAMIC_SYMBOL_TABLE(CudaDriverApi, DLRT_CUDA_DRIVER_SYMBOLS);

// ---- NVRTC (nvrtc.h) ----

enum nvrtcResult : int {
  NVRTC_SUCCESS = 0,
  NVRTC_ERROR_OUT_OF_MEMORY = 1,
  NVRTC_ERROR_PROGRAM_CREATION_FAILURE = 2,
  NVRTC_ERROR_INVALID_INPUT = 3,
  NVRTC_ERROR_INVALID_PROGRAM = 4,
  NVRTC_ERROR_INVALID_OPTION = 5,
  NVRTC_ERROR_COMPILATION = 6,
  NVRTC_ERROR_BUILTIN_OPERATION_FAILURE = 7,
  NVRTC_ERROR_INTERNAL_ERROR = 11,
};

typedef struct _nvrtcProgram* nvrtcProgram;

#define DLRT_NVRTC_SYMBOLS(X)                                                                                        \
  X(nvrtcVersion, nvrtcResult, (int*, int*))                                                                         \
  X(nvrtcCreateProgram, nvrtcResult,                                                                                 \
    (nvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*))                           \
  X(nvrtcCompileProgram, nvrtcResult, (nvrtcProgram, int, const char* const*))                                       \
  X(nvrtcGetProgramLogSize, nvrtcResult, (nvrtcProgram, size_t*))                                                    \
  X(nvrtcGetProgramLog, nvrtcResult, (nvrtcProgram, char*))                                                          \
  X(nvrtcGetPTXSize, nvrtcResult, (nvrtcProgram, size_t*))                                                           \
  X(nvrtcGetPTX, nvrtcResult, (nvrtcProgram, char*))                                                                 \
  X(nvrtcGetCUBINSize, nvrtcResult, (nvrtcProgram, size_t*))                                                         \
  X(nvrtcGetCUBIN, nvrtcResult, (nvrtcProgram, char*))                                                               \
  X(nvrtcDestroyProgram, nvrtcResult, (nvrtcProgram*))                                                               \
  X(nvrtcGetErrorString, const char*, (nvrtcResult))

DLRT_DYNAMIC_SYMBOL_TABLE(NvrtcApi, DLRT_NVRTC_SYMBOLS);

// ---- cuBLAS (cublas_api.h, the _v2 API) ----

enum cublasStatus_t : int {
  CUBLAS_STATUS_SUCCESS = 0,
  CUBLAS_STATUS_NOT_INITIALIZED = 1,
  CUBLAS_STATUS_ALLOC_FAILED = 3,
  CUBLAS_STATUS_INVALID_VALUE = 7,
  CUBLAS_STATUS_ARCH_MISMATCH = 8,
  CUBLAS_STATUS_MAPPING_ERROR = 11,
  CUBLAS_STATUS_EXECUTION_FAILED = 13,
  CUBLAS_STATUS_INTERNAL_ERROR = 14,
  CUBLAS_STATUS_NOT_SUPPORTED = 15,
  CUBLAS_STATUS_LICENSE_ERROR = 16,
};

enum cublasOperation_t : int {
  CUBLAS_OP_N = 0,
  CUBLAS_OP_T = 1,
};

enum cublasMath_t : int {
  CUBLAS_DEFAULT_MATH = 0,
  CUBLAS_PEDANTIC_MATH = 2,
  CUBLAS_TF32_TENSOR_OP_MATH = 3,
};

typedef struct cublasContext* cublasHandle_t;

#define DLRT_CUBLAS_SYMBOLS(X)                                                                                      \
  X(cublasCreate_v2, cublasStatus_t, (cublasHandle_t*))                                                             \
  X(cublasDestroy_v2, cublasStatus_t, (cublasHandle_t))                                                             \
  X(cublasSetStream_v2, cublasStatus_t, (cublasHandle_t, CUstream))                                                 \
  X(cublasSetMathMode, cublasStatus_t, (cublasHandle_t, cublasMath_t))                                              \
  X(cublasGetVersion_v2, cublasStatus_t, (cublasHandle_t, int*))                                                    \
  X(cublasSetWorkspace_v2, cublasStatus_t, (cublasHandle_t, void*, size_t))                                         \
  X(cublasSgemm_v2, cublasStatus_t,                                                                                 \
    (cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const float*, const float*, int,          \
     const float*, int, const float*, float*, int))                                                                  \
  X(cublasSgemmStridedBatched, cublasStatus_t,                                                                      \
    (cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const float*, const float*, int,          \
     long long, const float*, int, long long, const float*, float*, int, long long, int))

DLRT_DYNAMIC_SYMBOL_TABLE(CublasApi, DLRT_CUBLAS_SYMBOLS);

// "CUBLAS_STATUS_ALLOC_FAILED (3)" for messages.
const char* cublas_status_name(cublasStatus_t s);

}  // namespace dlrt::cuda
