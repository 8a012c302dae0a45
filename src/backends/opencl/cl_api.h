// The subset of the OpenCL C API dlrt uses, declared here so that dlrt builds
// with no OpenCL header or library: the scalar and handle types, the enum
// values, and every function dlrt calls with its exact signature, resolved at
// run time from the ICD loader (libOpenCL.so.1) through DynamicLibrary's
// all-or-nothing symbol table.
//
// Checked against the Khronos OpenCL 1.2 and 3.0 API specifications and
// KhronosGroup/OpenCL-Headers CL/cl.h, CL/cl_platform.h and CL/cl_ext.h
// (cl_khr_pci_bus_info, cl_nv_device_attribute_query): the values and
// signatures below are identical in 1.2 and 3.0. Everything used is core
// OpenCL 1.2 (clCreateCommandQueue is deprecated by 2.0 but every ICD loader
// and driver still exports it, which keeps 1.2 devices usable); the two PCI
// queries are extensions asked for only when the device lists them.
//
// ABI notes (Linux): CL_CALLBACK and CL_API_CALL are empty; cl_int is int32_t,
// cl_uint uint32_t, cl_ulong uint64_t, cl_bitfield cl_ulong; the handles are
// pointers to opaque structs; cl_context_properties is intptr_t.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backend/dynamic_library.h"

extern "C" {

typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_ulong;
typedef cl_uint cl_bool;
typedef cl_ulong cl_bitfield;
typedef cl_bitfield cl_device_type;
typedef cl_uint cl_platform_info;
typedef cl_uint cl_device_info;
typedef cl_bitfield cl_mem_flags;
typedef cl_bitfield cl_command_queue_properties;
typedef intptr_t cl_context_properties;
typedef cl_uint cl_program_info;
typedef cl_uint cl_program_build_info;
typedef cl_uint cl_kernel_work_group_info;

typedef struct _cl_platform_id* cl_platform_id;
typedef struct _cl_device_id* cl_device_id;
typedef struct _cl_context* cl_context;
typedef struct _cl_command_queue* cl_command_queue;
typedef struct _cl_mem* cl_mem;
typedef struct _cl_program* cl_program;
typedef struct _cl_kernel* cl_kernel;
typedef struct _cl_event* cl_event;

// cl_khr_pci_bus_info
typedef struct {
  cl_uint pci_domain;
  cl_uint pci_bus;
  cl_uint pci_device;
  cl_uint pci_function;
} cl_device_pci_bus_info_khr;

typedef void (*cl_context_notify_fn)(const char* errinfo, const void* private_info, size_t cb, void* user_data);
typedef void (*cl_program_notify_fn)(cl_program program, void* user_data);

}  // extern "C"

namespace dlrt::opencl {

// Error codes (cl.h).
inline constexpr cl_int CL_SUCCESS = 0;
inline constexpr cl_int CL_DEVICE_NOT_FOUND = -1;
inline constexpr cl_int CL_DEVICE_NOT_AVAILABLE = -2;
inline constexpr cl_int CL_COMPILER_NOT_AVAILABLE = -3;
inline constexpr cl_int CL_MEM_OBJECT_ALLOCATION_FAILURE = -4;
inline constexpr cl_int CL_OUT_OF_RESOURCES = -5;
inline constexpr cl_int CL_OUT_OF_HOST_MEMORY = -6;
inline constexpr cl_int CL_BUILD_PROGRAM_FAILURE = -11;
inline constexpr cl_int CL_INVALID_VALUE = -30;
inline constexpr cl_int CL_INVALID_BINARY = -42;
inline constexpr cl_int CL_INVALID_BUILD_OPTIONS = -43;
inline constexpr cl_int CL_INVALID_KERNEL_NAME = -46;
inline constexpr cl_int CL_INVALID_ARG_SIZE = -51;
inline constexpr cl_int CL_INVALID_WORK_GROUP_SIZE = -54;
inline constexpr cl_int CL_INVALID_GLOBAL_WORK_SIZE = -63;
inline constexpr cl_int CL_PLATFORM_NOT_FOUND_KHR = -1001;  // cl_khr_icd: the loader found no platform

inline constexpr cl_bool CL_FALSE = 0;
inline constexpr cl_bool CL_TRUE = 1;

// cl_platform_info
inline constexpr cl_platform_info CL_PLATFORM_PROFILE = 0x0900;
inline constexpr cl_platform_info CL_PLATFORM_VERSION = 0x0901;
inline constexpr cl_platform_info CL_PLATFORM_NAME = 0x0902;
inline constexpr cl_platform_info CL_PLATFORM_VENDOR = 0x0903;

// cl_device_type
inline constexpr cl_device_type CL_DEVICE_TYPE_DEFAULT = 1 << 0;
inline constexpr cl_device_type CL_DEVICE_TYPE_CPU = 1 << 1;
inline constexpr cl_device_type CL_DEVICE_TYPE_GPU = 1 << 2;
inline constexpr cl_device_type CL_DEVICE_TYPE_ACCELERATOR = 1 << 3;
inline constexpr cl_device_type CL_DEVICE_TYPE_ALL = 0xFFFFFFFF;

// cl_device_info
inline constexpr cl_device_info CL_DEVICE_TYPE = 0x1000;
inline constexpr cl_device_info CL_DEVICE_VENDOR_ID = 0x1001;
inline constexpr cl_device_info CL_DEVICE_MAX_COMPUTE_UNITS = 0x1002;
inline constexpr cl_device_info CL_DEVICE_MAX_WORK_GROUP_SIZE = 0x1004;
inline constexpr cl_device_info CL_DEVICE_MAX_CLOCK_FREQUENCY = 0x100C;
inline constexpr cl_device_info CL_DEVICE_MAX_MEM_ALLOC_SIZE = 0x1010;
inline constexpr cl_device_info CL_DEVICE_GLOBAL_MEM_SIZE = 0x101F;
inline constexpr cl_device_info CL_DEVICE_LOCAL_MEM_SIZE = 0x1023;
inline constexpr cl_device_info CL_DEVICE_AVAILABLE = 0x1027;
inline constexpr cl_device_info CL_DEVICE_COMPILER_AVAILABLE = 0x1028;
inline constexpr cl_device_info CL_DEVICE_NAME = 0x102B;
inline constexpr cl_device_info CL_DEVICE_VENDOR = 0x102C;
inline constexpr cl_device_info CL_DRIVER_VERSION = 0x102D;
inline constexpr cl_device_info CL_DEVICE_VERSION = 0x102F;
inline constexpr cl_device_info CL_DEVICE_EXTENSIONS = 0x1030;
inline constexpr cl_device_info CL_DEVICE_OPENCL_C_VERSION = 0x103D;
inline constexpr cl_device_info CL_DEVICE_PCI_BUS_INFO_KHR = 0x410F;  // cl_khr_pci_bus_info
inline constexpr cl_device_info CL_DEVICE_PCI_BUS_ID_NV = 0x4008;     // cl_nv_device_attribute_query
inline constexpr cl_device_info CL_DEVICE_PCI_SLOT_ID_NV = 0x4009;
inline constexpr cl_device_info CL_DEVICE_PCI_DOMAIN_ID_NV = 0x400A;

// cl_context_properties
inline constexpr cl_context_properties CL_CONTEXT_PLATFORM = 0x1084;

// cl_mem_flags
inline constexpr cl_mem_flags CL_MEM_READ_WRITE = 1 << 0;
inline constexpr cl_mem_flags CL_MEM_READ_ONLY = 1 << 2;
inline constexpr cl_mem_flags CL_MEM_COPY_HOST_PTR = 1 << 5;

// cl_program_info / cl_program_build_info
inline constexpr cl_program_info CL_PROGRAM_NUM_DEVICES = 0x1162;
inline constexpr cl_program_info CL_PROGRAM_BINARY_SIZES = 0x1165;
inline constexpr cl_program_info CL_PROGRAM_BINARIES = 0x1166;
inline constexpr cl_program_build_info CL_PROGRAM_BUILD_LOG = 0x1183;

// cl_kernel_work_group_info
inline constexpr cl_kernel_work_group_info CL_KERNEL_WORK_GROUP_SIZE = 0x11B0;

// ---- Functions: X(name, return type, (argument types)) ----
#define DLRT_CL_SYMBOLS(X)                                                                                      \
  X(clGetPlatformIDs, cl_int, (cl_uint, cl_platform_id*, cl_uint*))                                              \
  X(clGetPlatformInfo, cl_int, (cl_platform_id, cl_platform_info, size_t, void*, size_t*))                       \
  X(clGetDeviceIDs, cl_int, (cl_platform_id, cl_device_type, cl_uint, cl_device_id*, cl_uint*))                  \
  X(clGetDeviceInfo, cl_int, (cl_device_id, cl_device_info, size_t, void*, size_t*))                             \
  X(clCreateContext, cl_context,                                                                                 \
    (const cl_context_properties*, cl_uint, const cl_device_id*, cl_context_notify_fn, void*, cl_int*))          \
  X(clReleaseContext, cl_int, (cl_context))                                                                      \
  X(clCreateCommandQueue, cl_command_queue, (cl_context, cl_device_id, cl_command_queue_properties, cl_int*))    \
  X(clReleaseCommandQueue, cl_int, (cl_command_queue))                                                           \
  X(clCreateBuffer, cl_mem, (cl_context, cl_mem_flags, size_t, void*, cl_int*))                                 \
  X(clReleaseMemObject, cl_int, (cl_mem))                                                                        \
  X(clCreateProgramWithSource, cl_program, (cl_context, cl_uint, const char**, const size_t*, cl_int*))          \
  X(clCreateProgramWithBinary, cl_program,                                                                       \
    (cl_context, cl_uint, const cl_device_id*, const size_t*, const unsigned char**, cl_int*, cl_int*))          \
  X(clBuildProgram, cl_int, (cl_program, cl_uint, const cl_device_id*, const char*, cl_program_notify_fn, void*)) \
  X(clGetProgramInfo, cl_int, (cl_program, cl_program_info, size_t, void*, size_t*))                             \
  X(clGetProgramBuildInfo, cl_int, (cl_program, cl_device_id, cl_program_build_info, size_t, void*, size_t*))    \
  X(clReleaseProgram, cl_int, (cl_program))                                                                      \
  X(clCreateKernel, cl_kernel, (cl_program, const char*, cl_int*))                                               \
  X(clReleaseKernel, cl_int, (cl_kernel))                                                                        \
  X(clSetKernelArg, cl_int, (cl_kernel, cl_uint, size_t, const void*))                                           \
  X(clGetKernelWorkGroupInfo, cl_int, (cl_kernel, cl_device_id, cl_kernel_work_group_info, size_t, void*, size_t*)) \
  X(clEnqueueNDRangeKernel, cl_int,                                                                              \
    (cl_command_queue, cl_kernel, cl_uint, const size_t*, const size_t*, const size_t*, cl_uint, const cl_event*, \
     cl_event*))                                                                                                 \
  X(clEnqueueWriteBuffer, cl_int,                                                                                \
    (cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void*, cl_uint, const cl_event*, cl_event*))       \
  X(clEnqueueReadBuffer, cl_int,                                                                                 \
    (cl_command_queue, cl_mem, cl_bool, size_t, size_t, void*, cl_uint, const cl_event*, cl_event*))             \
  X(clFinish, cl_int, (cl_command_queue))

DLRT_DYNAMIC_SYMBOL_TABLE(ClApi, DLRT_CL_SYMBOLS);

// "CL_OUT_OF_RESOURCES (-5)" for messages.
const char* cl_error_name(cl_int code);

}  // namespace dlrt::opencl
