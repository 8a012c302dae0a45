// OpenVINO's C API (libopenvino_c.so) as dlrt uses it, declared here so that
// dlrt builds with no OpenVINO header or library: opaque handle types, the
// value structs reproduced field for field, every function dlrt calls with its
// exact signature, resolved at run time through DynamicLibrary's
// all-or-nothing symbol table (DLRT_DYNAMIC_SYMBOL_TABLE).
//
// Checked against openvinotoolkit/openvino src/bindings/c/include/openvino/c/
// {ov_common,ov_core,ov_model,ov_compiled_model,ov_infer_request,ov_tensor,
// ov_shape,ov_partial_shape,ov_dimension,ov_rank,ov_node}.h of releases
// 2024.2 through 2025.x, and run against the 2024.6.0, 2025.4.1 and 2026.4.1
// PyPI wheels (see tests/openvino/ and scripts/run_tests.sh). The signatures
// below did not change across those releases; what changed is the numbering
// of ov_element_type_e (see OvNumbering; 2026.4.1 keeps the 2025 one), and in
// 2026.x ov_core_import_model stopped copying the bytes it imports (see
// ImportedBytes in openvino_backend.cpp).
//
// The test double in tests/openvino_double/ implements exactly the functions
// of DLRT_OV_SYMBOLS (plus DLRT_OV_VERSION_SYMBOLS and, optionally,
// DLRT_OV_OPTIONAL_SYMBOLS) with these types, so keep the table minimal.
//
// ABI notes: the C enums are int-sized (ov_status_e has negative members, so
// it is `int`; ov_element_type_e starts at 0U, so it is `unsigned int`); the
// structs are plain C structs; `bool` is C99 _Bool (1 byte). Variadic
// functions take (const char* key, const char* value) pairs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "backend/dynamic_library.h"
#include "dlrt/dtype.h"

// ---- Types (global namespace, C layout; names as in OpenVINO's headers) ----

extern "C" {

// ov_common.h: every function returns one of these (OK = 0).
typedef enum : int {
  OV_STATUS_OK = 0,
  OV_STATUS_GENERAL_ERROR = -1,
  OV_STATUS_NOT_IMPLEMENTED = -2,
  OV_STATUS_NETWORK_NOT_LOADED = -3,
  OV_STATUS_PARAMETER_MISMATCH = -4,
  OV_STATUS_NOT_FOUND = -5,
  OV_STATUS_OUT_OF_BOUNDS = -6,
  OV_STATUS_UNEXPECTED = -7,
  OV_STATUS_REQUEST_BUSY = -8,
  OV_STATUS_RESULT_NOT_READY = -9,
  OV_STATUS_NOT_ALLOCATED = -10,
  OV_STATUS_INFER_NOT_STARTED = -11,
  OV_STATUS_NETWORK_NOT_READ = -12,
  OV_STATUS_INFER_CANCELLED = -13,
  OV_STATUS_INVALID_C_PARAM = -14,
  OV_STATUS_UNKNOWN_C_ERROR = -15,
  OV_STATUS_NOT_IMPLEMENT_C_METHOD = -16,
  OV_STATUS_UNKNOW_EXCEPTION = -17,
} ov_status_e;

// ov_common.h's ov_element_type_e. Its numbering depends on the release (see
// OvNumbering below), so it is an integer here, never a fixed enum.
typedef unsigned int ov_element_type_e;

// Opaque handles.
typedef struct ov_core ov_core_t;
typedef struct ov_model ov_model_t;
typedef struct ov_compiled_model ov_compiled_model_t;
typedef struct ov_infer_request ov_infer_request_t;
typedef struct ov_tensor ov_tensor_t;
typedef struct ov_output_const_port ov_output_const_port_t;

// ov_core.h
typedef struct ov_version {
  const char* buildNumber;  // "2025.4.1-20426-82bbf0292c5-releases/2025/4"
  const char* description;  // "OpenVINO Runtime"
} ov_version_t;

typedef struct {
  char** devices;  // "CPU", "GPU.0", "NPU", ...
  size_t size;
} ov_available_devices_t;

// ov_shape.h
typedef struct {
  int64_t rank;
  int64_t* dims;
} ov_shape_t;

// ov_dimension.h / ov_rank.h / ov_partial_shape.h
typedef struct ov_dimension {
  int64_t min;
  int64_t max;
} ov_dimension_t;
typedef ov_dimension_t ov_rank_t;
typedef struct ov_partial_shape {
  ov_rank_t rank;
  ov_dimension_t* dims;
} ov_partial_shape_t;

}  // extern "C"

// ---- Functions: X(name, return type, (argument types)) ----

// Resolved first and alone: the version decides whether the rest is usable.
#define DLRT_OV_VERSION_SYMBOLS(X)                          \
  X(ov_get_openvino_version, ov_status_e, (ov_version_t*)) \
  X(ov_version_free, void, (ov_version_t*))

// Everything else dlrt needs; all or nothing.
#define DLRT_OV_SYMBOLS(X)                                                                                   \
  X(ov_get_error_info, const char*, (ov_status_e))                                                           \
  X(ov_free, void, (const char*))                                                                            \
  X(ov_core_create, ov_status_e, (ov_core_t**))                                                              \
  X(ov_core_free, void, (ov_core_t*))                                                                        \
  X(ov_core_get_available_devices, ov_status_e, (const ov_core_t*, ov_available_devices_t*))                 \
  X(ov_available_devices_free, void, (ov_available_devices_t*))                                              \
  /* (core, device_name, property_key, property_value out; free it with ov_free) */                          \
  X(ov_core_get_property, ov_status_e, (const ov_core_t*, const char*, const char*, char**))                 \
  /* (core, device_name, key, value): exactly one key/value pair per call */                                  \
  X(ov_core_set_property, ov_status_e, (const ov_core_t*, const char*, ...))                                  \
  /* (core, model bytes, byte count, weights (nullptr for ONNX), model out) */                                \
  X(ov_core_read_model_from_memory_buffer, ov_status_e,                                                      \
    (const ov_core_t*, const char*, const size_t, const ov_tensor_t*, ov_model_t**))                         \
  /* (core, model, device_name, property_args_size = 2 x pairs, compiled out, key, value, ...) */           \
  X(ov_core_compile_model, ov_status_e,                                                                      \
    (const ov_core_t*, const ov_model_t*, const char*, const size_t, ov_compiled_model_t**, ...))            \
  /* (core, exported bytes, byte count, device_name, compiled out) */                                        \
  X(ov_core_import_model, ov_status_e,                                                                       \
    (const ov_core_t*, const char*, const size_t, const char*, ov_compiled_model_t**))                       \
  X(ov_model_free, void, (ov_model_t*))                                                                      \
  X(ov_model_is_dynamic, bool, (const ov_model_t*))                                                          \
  X(ov_model_inputs_size, ov_status_e, (const ov_model_t*, size_t*))                                         \
  X(ov_model_reshape_by_port_indexes, ov_status_e,                                                           \
    (const ov_model_t*, const size_t*, const ov_partial_shape_t*, size_t))                                   \
  X(ov_partial_shape_create_static, ov_status_e, (const int64_t, const int64_t*, ov_partial_shape_t*))       \
  X(ov_partial_shape_free, void, (ov_partial_shape_t*))                                                      \
  X(ov_compiled_model_inputs_size, ov_status_e, (const ov_compiled_model_t*, size_t*))                       \
  X(ov_compiled_model_outputs_size, ov_status_e, (const ov_compiled_model_t*, size_t*))                      \
  X(ov_compiled_model_input_by_index, ov_status_e,                                                           \
    (const ov_compiled_model_t*, const size_t, ov_output_const_port_t**))                                    \
  X(ov_compiled_model_output_by_index, ov_status_e,                                                          \
    (const ov_compiled_model_t*, const size_t, ov_output_const_port_t**))                                    \
  X(ov_compiled_model_get_property, ov_status_e, (const ov_compiled_model_t*, const char*, char**))          \
  X(ov_compiled_model_create_infer_request, ov_status_e, (const ov_compiled_model_t*, ov_infer_request_t**)) \
  /* writes the blob to a file path */                                                                       \
  X(ov_compiled_model_export_model, ov_status_e, (const ov_compiled_model_t*, const char*))                  \
  X(ov_compiled_model_free, void, (ov_compiled_model_t*))                                                    \
  X(ov_const_port_get_shape, ov_status_e, (const ov_output_const_port_t*, ov_shape_t*))                      \
  X(ov_port_get_element_type, ov_status_e, (const ov_output_const_port_t*, ov_element_type_e*))             \
  X(ov_output_const_port_free, void, (ov_output_const_port_t*))                                              \
  X(ov_infer_request_set_input_tensor_by_index, ov_status_e,                                                 \
    (ov_infer_request_t*, const size_t, const ov_tensor_t*))                                                 \
  X(ov_infer_request_get_output_tensor_by_index, ov_status_e,                                                \
    (const ov_infer_request_t*, const size_t, ov_tensor_t**))                                                \
  X(ov_infer_request_infer, ov_status_e, (ov_infer_request_t*))                                              \
  X(ov_infer_request_free, void, (ov_infer_request_t*))                                                      \
  X(ov_tensor_create_from_host_ptr, ov_status_e, (const ov_element_type_e, const ov_shape_t, void*, ov_tensor_t**)) \
  X(ov_tensor_create, ov_status_e, (const ov_element_type_e, const ov_shape_t, ov_tensor_t**))              \
  X(ov_tensor_get_shape, ov_status_e, (const ov_tensor_t*, ov_shape_t*))                                     \
  X(ov_tensor_get_element_type, ov_status_e, (const ov_tensor_t*, ov_element_type_e*))                      \
  X(ov_tensor_get_byte_size, ov_status_e, (const ov_tensor_t*, size_t*))                                     \
  X(ov_tensor_data, ov_status_e, (const ov_tensor_t*, void**))                                               \
  X(ov_tensor_free, void, (ov_tensor_t*))                                                                    \
  X(ov_shape_create, ov_status_e, (const int64_t, const int64_t*, ov_shape_t*))                              \
  X(ov_shape_free, ov_status_e, (ov_shape_t*))

// Used when present (added in 2024.0; a library without it still works).
#define DLRT_OV_OPTIONAL_SYMBOLS(X) X(ov_get_last_err_msg, const char*, (void))

namespace dlrt::backend::openvino {

DLRT_DYNAMIC_SYMBOL_TABLE(OvVersionSymbols, DLRT_OV_VERSION_SYMBOLS);
DLRT_DYNAMIC_SYMBOL_TABLE(OvSymbols, DLRT_OV_SYMBOLS);
DLRT_DYNAMIC_SYMBOL_TABLE(OvOptionalSymbols, DLRT_OV_OPTIONAL_SYMBOLS);

// ---- ov_element_type_e numberings ----
//
// k2024 (2024.2 .. 2025.0): UNDEFINED=0, DYNAMIC=1, BOOLEAN=2, BF16=3, F16=4, F32=5, F64=6, I4=7,
//   I8=8, I16=9, I32=10, I64=11, U1=12, U2=13, U3=14, U4=15, U6=16, U8=17, U16=18, U32=19, U64=20,
//   NF4=21, F8E4M3=22, F8E5M2=23, STRING=24, F4E2M1=25, F8E8M0=26.
// k2025 (2025.1 and later; `undefined` merged into `dynamic`): DYNAMIC=0, BOOLEAN=1, BF16=2, F16=3,
//   F32=4, F64=5, I4=6, I8=7, I16=8, I32=9, I64=10, U1=11, U2=12, U3=13, U4=14, U6=15, U8=16,
//   U16=17, U32=18, U64=19, NF4=20, F8E4M3=21, F8E5M2=22, STRING=23, F4E2M1=24, F8E8M0=25.
// Releases before 2024.2 (U2/U3/U6 absent from the C enum, and 2024.0/2024.1 mis-converted the
// unsigned types) are refused.
enum class OvNumbering { k2024, k2025 };

// The element types dlrt exchanges with OpenVINO (those that have a dlrt DType).
enum class OvType { kBoolean, kBF16, kF16, kF32, kF64, kI8, kI16, kI32, kI64, kU8, kU16, kU32, kU64 };

constexpr ov_element_type_e ov_element_code(OvNumbering n, OvType t) {
  unsigned base = 0;
  switch (t) {
    case OvType::kBoolean: base = 1; break;
    case OvType::kBF16: base = 2; break;
    case OvType::kF16: base = 3; break;
    case OvType::kF32: base = 4; break;
    case OvType::kF64: base = 5; break;
    case OvType::kI8: base = 7; break;
    case OvType::kI16: base = 8; break;
    case OvType::kI32: base = 9; break;
    case OvType::kI64: base = 10; break;
    case OvType::kU8: base = 16; break;
    case OvType::kU16: base = 17; break;
    case OvType::kU32: base = 18; break;
    case OvType::kU64: base = 19; break;
  }
  return n == OvNumbering::k2024 ? base + 1 : base;  // k2024 has UNDEFINED and DYNAMIC both ahead
}
static_assert(ov_element_code(OvNumbering::k2024, OvType::kBoolean) == 2);
static_assert(ov_element_code(OvNumbering::k2024, OvType::kF32) == 5);
static_assert(ov_element_code(OvNumbering::k2025, OvType::kBoolean) == 1);
static_assert(ov_element_code(OvNumbering::k2025, OvType::kF32) == 4);

// dlrt dtype <-> OpenVINO element code under a numbering; nullopt when there is no counterpart.
std::optional<ov_element_type_e> to_ov_element(OvNumbering n, DType t);
std::optional<DType> from_ov_element(OvNumbering n, ov_element_type_e code);

// A parsed OpenVINO release ("2025.4.1-20426-..." -> 2025, 4, 1).
struct OvVersion {
  int major = 0, minor = 0, patch = 0;
  std::string build;  // the full buildNumber string
};
std::optional<OvVersion> parse_ov_version(const std::string& build_number);

// The numbering of a release, or an error saying why the release is refused (too old, or newer
// than this dlrt knows; DLRT_OPENVINO_ELEMENT_NUMBERING=2024|2025 overrides the refusal).
Result<OvNumbering> numbering_for(const OvVersion& v);

// The newest release this dlrt was checked against (newer majors are refused).
constexpr int kNewestKnownMajor = 2026;

}  // namespace dlrt::backend::openvino
