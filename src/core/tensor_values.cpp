#include "core/tensor_values.h"

#include <cstdint>

#include "core/narrow_types.h"

namespace dlrt {

double element_as_double(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kFloat32: return t.data<float>()[i];
    case DType::kFloat64: return t.data<double>()[i];
    case DType::kFloat16: return static_cast<float>(t.data<Float16>()[i]);
    case DType::kBFloat16: return static_cast<float>(t.data<BFloat16>()[i]);
    case DType::kInt8: return t.data<int8_t>()[i];
    case DType::kInt16: return t.data<int16_t>()[i];
    case DType::kInt32: return t.data<int32_t>()[i];
    case DType::kInt64: return static_cast<double>(t.data<int64_t>()[i]);
    case DType::kUInt8: return t.data<uint8_t>()[i];
    case DType::kUInt16: return t.data<uint16_t>()[i];
    case DType::kUInt32: return t.data<uint32_t>()[i];
    case DType::kUInt64: return static_cast<double>(t.data<uint64_t>()[i]);
    case DType::kBool: return static_cast<const uint8_t*>(t.raw_data())[i] ? 1.0 : 0.0;
    default:
      if (dtype_is_narrow(t.dtype())) return narrow_to_double(t.dtype(), static_cast<const uint8_t*>(t.raw_data())[i]);
      return 0.0;
  }
}

int64_t element_as_int64(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kInt64: return t.data<int64_t>()[i];
    case DType::kUInt64: {
      const uint64_t v = t.data<uint64_t>()[i];
      return v > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(v);
    }
    default: {
      // Floats (float8/float4 included) saturate, NaN gives 0; the narrower
      // integers and bool are exact.
      const double d = element_as_double(t, i);
      if (!(d == d)) return 0;
      if (d >= 9223372036854775807.0) return INT64_MAX;  // (2^63: the first double past the range)
      if (d <= -9223372036854775808.0) return INT64_MIN;
      return static_cast<int64_t>(d);
    }
  }
}

bool set_element_from_double(Tensor& t, int64_t i, double v) {
  const auto n = static_cast<int64_t>(v);
  switch (t.dtype()) {
    case DType::kFloat32: t.data<float>()[i] = static_cast<float>(v); return true;
    case DType::kFloat64: t.data<double>()[i] = v; return true;
    case DType::kFloat16: t.data<Float16>()[i] = Float16(static_cast<float>(v)); return true;
    case DType::kBFloat16: t.data<BFloat16>()[i] = BFloat16(static_cast<float>(v)); return true;
    case DType::kInt8: t.data<int8_t>()[i] = static_cast<int8_t>(n); return true;
    case DType::kInt16: t.data<int16_t>()[i] = static_cast<int16_t>(n); return true;
    case DType::kInt32: t.data<int32_t>()[i] = static_cast<int32_t>(n); return true;
    case DType::kInt64: t.data<int64_t>()[i] = n; return true;
    case DType::kUInt8: t.data<uint8_t>()[i] = static_cast<uint8_t>(n); return true;
    case DType::kUInt16: t.data<uint16_t>()[i] = static_cast<uint16_t>(n); return true;
    case DType::kUInt32: t.data<uint32_t>()[i] = static_cast<uint32_t>(n); return true;
    case DType::kUInt64: t.data<uint64_t>()[i] = static_cast<uint64_t>(n); return true;
    case DType::kBool: static_cast<uint8_t*>(t.raw_data())[i] = v != 0; return true;
    default: return false;
  }
}

}  // namespace dlrt
