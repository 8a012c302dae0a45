// src/backends/cuda/cuda_api.h against NVIDIA's own headers: every function of
// the three symbol tables has exactly the type cuda.h / nvrtc.h / cublas_api.h
// declare for it (after mapping dlrt's own type names onto NVIDIA's), and every
// enum value declared there has NVIDIA's value.
//
// Compiled with the toolkit's include folder when tests/cmake/cuda_double.cmake
// finds one (DLRT_CUDA_HEADERS; /usr/local/cuda/include, $CUDA_HOME/include or
// $CUDA_PATH/include): the checks are static_asserts, so a mismatch fails the
// build. Without a toolkit (CI) the test says so and skips.
#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <string>
#include <type_traits>

// dlrt's declarations first: cuda.h defines macros for unversioned API names
// (cuMemAlloc -> cuMemAlloc_v2, ...) that must not rename the table's fields.
#include "backends/cuda/cuda_api.h"

#if defined(DLRT_CUDA_HEADERS)
// Our function pointer types, named before NVIDIA's headers bring their own
// CUresult & co. into the global namespace (the names would be ambiguous after).
#define DLRT_OUR_TYPE(name, ret, args) using our_##name = ret(*) args;
namespace ours {
using namespace dlrt::cuda;
DLRT_CUDA_DRIVER_SYMBOLS(DLRT_OUR_TYPE)
DLRT_NVRTC_SYMBOLS(DLRT_OUR_TYPE)
DLRT_CUBLAS_SYMBOLS(DLRT_OUR_TYPE)
}  // namespace ours

#include <cuda.h>
#include <nvrtc.h>
#include <cublas_api.h>

namespace {

namespace d = dlrt::cuda;

// Our type -> NVIDIA's type, through pointers, const and function types.
template <typename T>
struct Real {
  using type = T;
};
template <typename T>
struct Real<T*> {
  using type = typename Real<T>::type*;
};
template <typename T>
struct Real<const T> {
  using type = const typename Real<T>::type;
};
template <typename R, typename... A>
struct Real<R (*)(A...)> {
  using type = typename Real<R>::type (*)(typename Real<A>::type...);
};
#define DLRT_REAL(ours, theirs)   \
  template <>                     \
  struct Real<ours> {             \
    using type = theirs;          \
  };
DLRT_REAL(d::CUresult, ::CUresult)
DLRT_REAL(d::CUdevice_attribute, ::CUdevice_attribute)
DLRT_REAL(d::CUfunction_attribute, ::CUfunction_attribute)
DLRT_REAL(d::CUjit_option, ::CUjit_option)
DLRT_REAL(d::CUstreamCaptureMode, ::CUstreamCaptureMode)
DLRT_REAL(d::CUctx_st, ::CUctx_st)
DLRT_REAL(d::CUmod_st, ::CUmod_st)
DLRT_REAL(d::CUfunc_st, ::CUfunc_st)
DLRT_REAL(d::CUstream_st, ::CUstream_st)
DLRT_REAL(d::CUevent_st, ::CUevent_st)
DLRT_REAL(d::CUgraph_st, ::CUgraph_st)
DLRT_REAL(d::CUgraphExec_st, ::CUgraphExec_st)
DLRT_REAL(d::CUuuid, ::CUuuid)
DLRT_REAL(d::nvrtcResult, ::nvrtcResult)
DLRT_REAL(d::_nvrtcProgram, ::_nvrtcProgram)
DLRT_REAL(d::cublasStatus_t, ::cublasStatus_t)
DLRT_REAL(d::cublasOperation_t, ::cublasOperation_t)
DLRT_REAL(d::cublasMath_t, ::cublasMath_t)
DLRT_REAL(d::cublasContext, ::cublasContext)
#undef DLRT_REAL

// Same size for the enums we redeclare (all are passed as 32-bit ints).
static_assert(sizeof(d::CUresult) == sizeof(::CUresult));
static_assert(sizeof(d::CUdevice_attribute) == sizeof(::CUdevice_attribute));
static_assert(sizeof(d::CUfunction_attribute) == sizeof(::CUfunction_attribute));
static_assert(sizeof(d::CUjit_option) == sizeof(::CUjit_option));
static_assert(sizeof(d::CUstreamCaptureMode) == sizeof(::CUstreamCaptureMode));
static_assert(sizeof(d::nvrtcResult) == sizeof(::nvrtcResult));
static_assert(sizeof(d::cublasStatus_t) == sizeof(::cublasStatus_t));
static_assert(sizeof(d::cublasOperation_t) == sizeof(::cublasOperation_t));
static_assert(sizeof(d::cublasMath_t) == sizeof(::cublasMath_t));
static_assert(std::is_same_v<d::CUdevice, ::CUdevice>);
static_assert(std::is_same_v<d::CUdeviceptr, ::CUdeviceptr>);
static_assert(sizeof(d::CUuuid) == sizeof(::CUuuid));
static_assert(std::is_same_v<::cudaStream_t, ::CUstream>, "cuBLAS's stream is the driver's CUstream");

// Each table entry: our pointer type, mapped, is the type of NVIDIA's function
// of that name. cuda.h's macros apply to `::name` on purpose (the name a program
// built against this header would call); they never touch the member names,
// which are spelled through the token-pasted aliases below.
#define DLRT_CHECK_SYMBOL(name, ret, args)                                                      \
  static_assert(std::is_same_v<Real<ours::our_##name>::type, decltype(&::name)>,               \
                "cuda_api.h: " #name " differs from NVIDIA's declaration");
DLRT_CUDA_DRIVER_SYMBOLS(DLRT_CHECK_SYMBOL)
DLRT_NVRTC_SYMBOLS(DLRT_CHECK_SYMBOL)
DLRT_CUBLAS_SYMBOLS(DLRT_CHECK_SYMBOL)

// cuda.h 12.x/13.0 maps these plain names onto a versioned symbol newer than
// what dlrt resolves; the signatures must still agree (checked above through the
// macro) and the names dlrt resolves must be the ABI every 12.x/13.x driver has.
static_assert(std::is_same_v<decltype(&::cuEventElapsedTime), ::CUresult (*)(float*, ::CUevent, ::CUevent)>);

// Enum values.
#define DLRT_SAME_VALUE(v) static_assert(static_cast<long long>(d::v) == static_cast<long long>(::v), #v);
DLRT_SAME_VALUE(CUDA_SUCCESS)
DLRT_SAME_VALUE(CUDA_ERROR_INVALID_VALUE)
DLRT_SAME_VALUE(CUDA_ERROR_OUT_OF_MEMORY)
DLRT_SAME_VALUE(CUDA_ERROR_NOT_INITIALIZED)
DLRT_SAME_VALUE(CUDA_ERROR_DEINITIALIZED)
DLRT_SAME_VALUE(CUDA_ERROR_STUB_LIBRARY)
DLRT_SAME_VALUE(CUDA_ERROR_NO_DEVICE)
DLRT_SAME_VALUE(CUDA_ERROR_INVALID_DEVICE)
DLRT_SAME_VALUE(CUDA_ERROR_INVALID_IMAGE)
DLRT_SAME_VALUE(CUDA_ERROR_INVALID_CONTEXT)
DLRT_SAME_VALUE(CUDA_ERROR_NO_BINARY_FOR_GPU)
DLRT_SAME_VALUE(CUDA_ERROR_INVALID_PTX)
DLRT_SAME_VALUE(CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
DLRT_SAME_VALUE(CUDA_ERROR_JIT_COMPILER_NOT_FOUND)
DLRT_SAME_VALUE(CUDA_ERROR_INVALID_HANDLE)
DLRT_SAME_VALUE(CUDA_ERROR_NOT_FOUND)
DLRT_SAME_VALUE(CUDA_ERROR_NOT_READY)
DLRT_SAME_VALUE(CUDA_ERROR_ILLEGAL_ADDRESS)
DLRT_SAME_VALUE(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)
DLRT_SAME_VALUE(CUDA_ERROR_LAUNCH_TIMEOUT)
DLRT_SAME_VALUE(CUDA_ERROR_LAUNCH_FAILED)
DLRT_SAME_VALUE(CUDA_ERROR_NOT_PERMITTED)
DLRT_SAME_VALUE(CUDA_ERROR_NOT_SUPPORTED)
DLRT_SAME_VALUE(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH)
DLRT_SAME_VALUE(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE)
DLRT_SAME_VALUE(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
DLRT_SAME_VALUE(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
DLRT_SAME_VALUE(CUDA_ERROR_UNKNOWN)
DLRT_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
DLRT_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)
DLRT_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)
DLRT_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)
DLRT_SAME_VALUE(CU_DEVICE_ATTRIBUTE_WARP_SIZE)
DLRT_SAME_VALUE(CU_DEVICE_ATTRIBUTE_CLOCK_RATE)
DLRT_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
DLRT_SAME_VALUE(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID)
DLRT_SAME_VALUE(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID)
DLRT_SAME_VALUE(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)
DLRT_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)
DLRT_SAME_VALUE(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID)
DLRT_SAME_VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
DLRT_SAME_VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
DLRT_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)
DLRT_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
DLRT_SAME_VALUE(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
DLRT_SAME_VALUE(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
DLRT_SAME_VALUE(CU_FUNC_ATTRIBUTE_NUM_REGS)
DLRT_SAME_VALUE(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
DLRT_SAME_VALUE(CU_JIT_MAX_REGISTERS)
DLRT_SAME_VALUE(CU_JIT_WALL_TIME)
DLRT_SAME_VALUE(CU_JIT_INFO_LOG_BUFFER)
DLRT_SAME_VALUE(CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES)
DLRT_SAME_VALUE(CU_JIT_ERROR_LOG_BUFFER)
DLRT_SAME_VALUE(CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
DLRT_SAME_VALUE(CU_JIT_OPTIMIZATION_LEVEL)
DLRT_SAME_VALUE(CU_JIT_LOG_VERBOSE)
DLRT_SAME_VALUE(CU_STREAM_CAPTURE_MODE_GLOBAL)
DLRT_SAME_VALUE(CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
DLRT_SAME_VALUE(CU_STREAM_CAPTURE_MODE_RELAXED)
DLRT_SAME_VALUE(CU_STREAM_DEFAULT)
DLRT_SAME_VALUE(CU_STREAM_NON_BLOCKING)
DLRT_SAME_VALUE(CU_EVENT_DEFAULT)
DLRT_SAME_VALUE(CU_EVENT_BLOCKING_SYNC)
DLRT_SAME_VALUE(CU_EVENT_DISABLE_TIMING)
DLRT_SAME_VALUE(NVRTC_SUCCESS)
DLRT_SAME_VALUE(NVRTC_ERROR_OUT_OF_MEMORY)
DLRT_SAME_VALUE(NVRTC_ERROR_PROGRAM_CREATION_FAILURE)
DLRT_SAME_VALUE(NVRTC_ERROR_INVALID_INPUT)
DLRT_SAME_VALUE(NVRTC_ERROR_INVALID_PROGRAM)
DLRT_SAME_VALUE(NVRTC_ERROR_INVALID_OPTION)
DLRT_SAME_VALUE(NVRTC_ERROR_COMPILATION)
DLRT_SAME_VALUE(NVRTC_ERROR_BUILTIN_OPERATION_FAILURE)
DLRT_SAME_VALUE(NVRTC_ERROR_INTERNAL_ERROR)
DLRT_SAME_VALUE(CUBLAS_STATUS_SUCCESS)
DLRT_SAME_VALUE(CUBLAS_STATUS_NOT_INITIALIZED)
DLRT_SAME_VALUE(CUBLAS_STATUS_ALLOC_FAILED)
DLRT_SAME_VALUE(CUBLAS_STATUS_INVALID_VALUE)
DLRT_SAME_VALUE(CUBLAS_STATUS_ARCH_MISMATCH)
DLRT_SAME_VALUE(CUBLAS_STATUS_MAPPING_ERROR)
DLRT_SAME_VALUE(CUBLAS_STATUS_EXECUTION_FAILED)
DLRT_SAME_VALUE(CUBLAS_STATUS_INTERNAL_ERROR)
DLRT_SAME_VALUE(CUBLAS_STATUS_NOT_SUPPORTED)
DLRT_SAME_VALUE(CUBLAS_STATUS_LICENSE_ERROR)
DLRT_SAME_VALUE(CUBLAS_OP_N)
DLRT_SAME_VALUE(CUBLAS_OP_T)
DLRT_SAME_VALUE(CUBLAS_DEFAULT_MATH)
DLRT_SAME_VALUE(CUBLAS_PEDANTIC_MATH)
DLRT_SAME_VALUE(CUBLAS_TF32_TENSOR_OP_MATH)
#undef DLRT_SAME_VALUE

}  // namespace
#endif  // DLRT_CUDA_HEADERS

namespace dlrt {
namespace {

TEST(CudaApi, TablesMatchNvidiaHeaders) {
#if defined(DLRT_CUDA_HEADERS)
  // The static_asserts above did the work; say which headers they held against.
  std::printf("checked %zu driver, %zu NVRTC and %zu cuBLAS functions against CUDA %d.%d headers (%s)\n",
              cuda::CudaDriverApi::symbol_names().size(), cuda::NvrtcApi::symbol_names().size(),
              cuda::CublasApi::symbol_names().size(), CUDA_VERSION / 1000, (CUDA_VERSION % 1000) / 10,
              DLRT_CUDA_HEADERS_DIR);
  SUCCEED();
#else
  GTEST_SKIP() << "no CUDA toolkit headers at build time (/usr/local/cuda/include, $CUDA_HOME/include): "
                  "cuda_api.h's tables were not checked against cuda.h, nvrtc.h and cublas_api.h";
#endif
}

TEST(CudaApi, TablesNameEachSymbolOnce) {
  for (const auto& names : {cuda::CudaDriverApi::symbol_names(), cuda::NvrtcApi::symbol_names(),
                            cuda::CublasApi::symbol_names()}) {
    std::set<std::string> seen(names.begin(), names.end());
    EXPECT_EQ(seen.size(), names.size());
  }
  EXPECT_EQ(std::string(cuda::cublas_status_name(cuda::CUBLAS_STATUS_ALLOC_FAILED)), "CUBLAS_STATUS_ALLOC_FAILED");
}

}  // namespace
}  // namespace dlrt
