// Element types. The numeric values equal ONNX's TensorProto.DataType so the
// importer and the .pb/.npy readers can convert without a table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "dlrt/export.h"

namespace dlrt {

enum class DType : int {
  kUndefined = 0,
  kFloat32 = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kFloat64 = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kBFloat16 = 16,
  // 8-bit floats (ONNX opset 19; E8M0 opset 24), held as their bit patterns,
  // one byte per element. Only Cast, CastLike and data movement take them.
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  // Sub-byte types, held unpacked in memory: one element per byte, int4 and
  // int2 sign-extended to int8, uint4 in 0..15, uint2 in 0..3, float4e2m1 as
  // its 4-bit pattern. Model files store them packed (two or four per byte);
  // the importer and exporter convert.
  kUInt4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
  kFloat8E8M0 = 24,
  kUInt2 = 25,
  kInt2 = 26,
};

// Bytes per element; 0 for kUndefined. For kString this is sizeof(std::string).
DLRT_API size_t dtype_size(DType t);
// "float32", "int64", ... (numpy spelling).
DLRT_API const char* dtype_name(DType t);
// Parses dtype_name's spelling; nullopt when unknown.
DLRT_API std::optional<DType> dtype_from_name(std::string_view name);
// True when `value` is one of the enumerators above.
DLRT_API bool dtype_is_valid(int value);
inline bool dtype_is_float(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat64 || t == DType::kFloat16 || t == DType::kBFloat16;
}
inline bool dtype_is_signed_int(DType t) {
  return t == DType::kInt8 || t == DType::kInt16 || t == DType::kInt32 || t == DType::kInt64;
}
inline bool dtype_is_unsigned_int(DType t) {
  return t == DType::kUInt8 || t == DType::kUInt16 || t == DType::kUInt32 || t == DType::kUInt64;
}
inline bool dtype_is_int(DType t) { return dtype_is_signed_int(t) || dtype_is_unsigned_int(t); }
// int4 and uint4 (not counted by the integer predicates above: only the
// quantization ops and data movement take them).
inline bool dtype_is_4bit(DType t) { return t == DType::kInt4 || t == DType::kUInt4; }
// The types above whose model-file form packs several elements per byte: bits
// per element (4 or 2), else 0.
inline int dtype_packed_bits(DType t) {
  if (t == DType::kInt4 || t == DType::kUInt4 || t == DType::kFloat4E2M1) return 4;
  if (t == DType::kInt2 || t == DType::kUInt2) return 2;
  return 0;
}
// The narrow types only casts and data movement take: float8 (all five),
// float4e2m1, int4/uint4, int2/uint2.
inline bool dtype_is_narrow(DType t) {
  const int v = static_cast<int>(t);
  return (v >= 17 && v <= 26);
}

// IEEE 754 half precision, stored as bits. Converts to and from float, so
// templated kernels written for float also compile for it (computing in float).
struct DLRT_API Float16 {
  uint16_t bits = 0;
  Float16() = default;
  Float16(float f) : bits(from_float(f)) {}  // NOLINT: implicit by design
  operator float() const { return to_float(bits); }  // NOLINT
  static uint16_t from_float(float f);
  static float to_float(uint16_t h);
  static Float16 from_bits(uint16_t b) { Float16 r; r.bits = b; return r; }
};

// bfloat16: the upper half of a float32, rounded to nearest even.
struct DLRT_API BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  BFloat16(float f) : bits(from_float(f)) {}  // NOLINT
  operator float() const { return to_float(bits); }  // NOLINT
  static uint16_t from_float(float f);
  static float to_float(uint16_t b) {
    uint32_t u = static_cast<uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
  }
  static BFloat16 from_bits(uint16_t b) { BFloat16 r; r.bits = b; return r; }
};

// C++ type -> DType.
template <typename T> struct DTypeOf;
template <> struct DTypeOf<float> { static constexpr DType value = DType::kFloat32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::kFloat64; };
template <> struct DTypeOf<Float16> { static constexpr DType value = DType::kFloat16; };
template <> struct DTypeOf<BFloat16> { static constexpr DType value = DType::kBFloat16; };
template <> struct DTypeOf<int8_t> { static constexpr DType value = DType::kInt8; };
template <> struct DTypeOf<int16_t> { static constexpr DType value = DType::kInt16; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::kInt32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::kInt64; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::kUInt8; };
template <> struct DTypeOf<uint16_t> { static constexpr DType value = DType::kUInt16; };
template <> struct DTypeOf<uint32_t> { static constexpr DType value = DType::kUInt32; };
template <> struct DTypeOf<uint64_t> { static constexpr DType value = DType::kUInt64; };
template <> struct DTypeOf<bool> { static constexpr DType value = DType::kBool; };
template <> struct DTypeOf<std::string> { static constexpr DType value = DType::kString; };
template <typename T> inline constexpr DType dtype_of = DTypeOf<T>::value;

}  // namespace dlrt
