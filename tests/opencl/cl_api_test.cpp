// src/backends/opencl/cl_api.h against the Khronos headers Debian ships
// (opencl-c-headers: CL/cl.h, CL/cl_ext.h): every function of the symbol table
// has exactly the type cl.h declares for it, the scalar types are the same
// types, the PCI bus info struct has the same layout, and every constant has
// the header's value. The checks are static_asserts, so a mismatch fails the
// build. tests/cmake/opencl_headers.cmake defines DLRT_OPENCL_HEADERS when the
// headers are installed (scripts/install_deps.sh installs them); without them
// the test says so and skips.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "backends/opencl/cl_api.h"

// Every constant cl_api.h declares that the Khronos headers define.
#define DLRT_CL_CONSTANTS(X)                                                                                     \
  X(CL_SUCCESS) X(CL_DEVICE_NOT_FOUND) X(CL_DEVICE_NOT_AVAILABLE) X(CL_COMPILER_NOT_AVAILABLE)                   \
  X(CL_MEM_OBJECT_ALLOCATION_FAILURE) X(CL_OUT_OF_RESOURCES) X(CL_OUT_OF_HOST_MEMORY) X(CL_BUILD_PROGRAM_FAILURE) \
  X(CL_INVALID_VALUE) X(CL_INVALID_BINARY) X(CL_INVALID_BUILD_OPTIONS) X(CL_INVALID_KERNEL_NAME)                 \
  X(CL_INVALID_ARG_SIZE) X(CL_INVALID_WORK_GROUP_SIZE) X(CL_INVALID_GLOBAL_WORK_SIZE) X(CL_PLATFORM_NOT_FOUND_KHR) \
  X(CL_FALSE) X(CL_TRUE) X(CL_PLATFORM_PROFILE) X(CL_PLATFORM_VERSION) X(CL_PLATFORM_NAME) X(CL_PLATFORM_VENDOR)  \
  X(CL_DEVICE_TYPE_DEFAULT) X(CL_DEVICE_TYPE_CPU) X(CL_DEVICE_TYPE_GPU) X(CL_DEVICE_TYPE_ACCELERATOR)             \
  X(CL_DEVICE_TYPE_ALL) X(CL_DEVICE_TYPE) X(CL_DEVICE_VENDOR_ID) X(CL_DEVICE_MAX_COMPUTE_UNITS)                  \
  X(CL_DEVICE_MAX_WORK_GROUP_SIZE) X(CL_DEVICE_MAX_CLOCK_FREQUENCY) X(CL_DEVICE_MAX_MEM_ALLOC_SIZE)              \
  X(CL_DEVICE_GLOBAL_MEM_SIZE) X(CL_DEVICE_LOCAL_MEM_SIZE) X(CL_DEVICE_AVAILABLE) X(CL_DEVICE_COMPILER_AVAILABLE) \
  X(CL_DEVICE_NAME) X(CL_DEVICE_VENDOR) X(CL_DRIVER_VERSION) X(CL_DEVICE_VERSION) X(CL_DEVICE_EXTENSIONS)        \
  X(CL_DEVICE_OPENCL_C_VERSION) X(CL_DEVICE_PCI_BUS_INFO_KHR) X(CL_CONTEXT_PLATFORM) X(CL_MEM_READ_WRITE)        \
  X(CL_MEM_READ_ONLY) X(CL_MEM_COPY_HOST_PTR) X(CL_PROGRAM_NUM_DEVICES) X(CL_PROGRAM_BINARY_SIZES)               \
  X(CL_PROGRAM_BINARIES) X(CL_PROGRAM_BUILD_LOG) X(CL_KERNEL_WORK_GROUP_SIZE)

// Declared in cl_api.h from NVIDIA's cl_nv_device_attribute_query, which
// Debian's headers do not carry: not checked here.
const std::set<std::string> kNotInKhronosHeaders = {"CL_DEVICE_PCI_BUS_ID_NV", "CL_DEVICE_PCI_SLOT_ID_NV",
                                                    "CL_DEVICE_PCI_DOMAIN_ID_NV"};

#if defined(DLRT_OPENCL_HEADERS)
// Our values and function types, taken before the Khronos headers make the
// constant names macros.
#define DLRT_OUR_VALUE(n) constexpr long long ours_##n = static_cast<long long>(dlrt::opencl::n);
DLRT_CL_CONSTANTS(DLRT_OUR_VALUE)
#define DLRT_OUR_TYPE(name, ret, args) using our_##name = ret(*) args;
namespace ours {
DLRT_CL_SYMBOLS(DLRT_OUR_TYPE)
}  // namespace ours

// The Khronos declarations in a namespace of their own, beside cl_api.h's
// (their struct tags and typedef names are the same). What they include from
// the C library and the compiler is included first, outside it.
#include <stddef.h>
#include <stdint.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>  // cl_platform.h's SSE/AVX vector types (none on other CPUs)
#endif
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS  // clCreateCommandQueue without its deprecation attribute
namespace khr {
#include <CL/cl.h>
#include <CL/cl_ext.h>
}  // namespace khr

namespace {

// The handle types need no mapping: cl.h's `typedef struct _cl_mem* cl_mem`
// inside khr finds cl_api.h's global struct tags, so both name the same
// structs, and a type that differs in any other way fails below.

// The scalar typedefs name the same types.
#define DLRT_SAME_TYPE(t) static_assert(std::is_same_v<::t, khr::t>, "cl_api.h: " #t " differs from cl.h");
DLRT_SAME_TYPE(cl_int)
DLRT_SAME_TYPE(cl_uint)
DLRT_SAME_TYPE(cl_ulong)
DLRT_SAME_TYPE(cl_bool)
DLRT_SAME_TYPE(cl_bitfield)
DLRT_SAME_TYPE(cl_device_type)
DLRT_SAME_TYPE(cl_platform_info)
DLRT_SAME_TYPE(cl_device_info)
DLRT_SAME_TYPE(cl_mem_flags)
DLRT_SAME_TYPE(cl_command_queue_properties)
DLRT_SAME_TYPE(cl_context_properties)
DLRT_SAME_TYPE(cl_program_info)
DLRT_SAME_TYPE(cl_program_build_info)
DLRT_SAME_TYPE(cl_kernel_work_group_info)
#undef DLRT_SAME_TYPE

// cl_khr_pci_bus_info's struct, field by field.
static_assert(sizeof(::cl_device_pci_bus_info_khr) == sizeof(khr::cl_device_pci_bus_info_khr));
#define DLRT_SAME_FIELD(f)                                                                              \
  static_assert(offsetof(::cl_device_pci_bus_info_khr, f) == offsetof(khr::cl_device_pci_bus_info_khr, f) && \
                std::is_same_v<decltype(::cl_device_pci_bus_info_khr::f), decltype(khr::cl_device_pci_bus_info_khr::f)>);
DLRT_SAME_FIELD(pci_domain)
DLRT_SAME_FIELD(pci_bus)
DLRT_SAME_FIELD(pci_device)
DLRT_SAME_FIELD(pci_function)
#undef DLRT_SAME_FIELD

// Each function of the table: our pointer type is the type of the header's
// function of that name.
#define DLRT_CHECK_SYMBOL(name, ret, args)                                             \
  static_assert(std::is_same_v<ours::our_##name, decltype(&khr::name)>,                  \
                "cl_api.h: " #name " differs from cl.h's declaration");
DLRT_CL_SYMBOLS(DLRT_CHECK_SYMBOL)
#undef DLRT_CHECK_SYMBOL

// Each constant: the header's macro has our value.
#define DLRT_SAME_VALUE(n) static_assert(ours_##n == static_cast<long long>(n), "cl_api.h: " #n " differs from the header");
DLRT_CL_CONSTANTS(DLRT_SAME_VALUE)
#undef DLRT_SAME_VALUE

}  // namespace
#endif  // DLRT_OPENCL_HEADERS

namespace {

#define DLRT_NAME(n) #n,
const std::set<std::string> kChecked = {DLRT_CL_CONSTANTS(DLRT_NAME)};
#undef DLRT_NAME

// Every constant cl_api.h declares is in the checked list above (or named as
// not in the Khronos headers): a new one cannot skip the check.
TEST(ClApi, EveryConstantIsChecked) {
  std::ifstream in(std::string(DLRT_TEST_DIR) + "/../src/backends/opencl/cl_api.h");
  ASSERT_TRUE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  int declared = 0;
  for (size_t at = s.find("inline constexpr "); at != std::string::npos; at = s.find("inline constexpr ", at + 1)) {
    std::istringstream decl(s.substr(at, s.find('=', at) - at));
    std::string inline_kw, constexpr_kw, type, name;
    decl >> inline_kw >> constexpr_kw >> type >> name;
    ++declared;
    EXPECT_TRUE(kChecked.count(name) || kNotInKhronosHeaders.count(name))
        << name << " is declared in cl_api.h but not checked: add it to DLRT_CL_CONSTANTS in " << __FILE__;
  }
  EXPECT_EQ(declared, static_cast<int>(kChecked.size() + kNotInKhronosHeaders.size()));
}

TEST(ClApi, TablesMatchKhronosHeaders) {
#if defined(DLRT_OPENCL_HEADERS)
  // The work was done by the static_asserts above; count what they covered.
  int functions = 0;
#define DLRT_COUNT(name, ret, args) ++functions;
  DLRT_CL_SYMBOLS(DLRT_COUNT)
#undef DLRT_COUNT
  std::printf("cl_api.h matches %s: %d functions, %zu constants (%zu NVIDIA constants not in it)\n",
              DLRT_OPENCL_HEADERS_DIR "/CL/cl.h", functions, kChecked.size(), kNotInKhronosHeaders.size());
  EXPECT_GT(functions, 20);
#else
  GTEST_SKIP() << "CL/cl.h not found when configuring: install Debian's opencl-c-headers (scripts/install_deps.sh) "
                  "and re-run cmake";
#endif
}

}  // namespace
