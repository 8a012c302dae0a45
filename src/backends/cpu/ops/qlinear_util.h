// What the com.microsoft quantized operators share (quantize_contrib.cpp,
// quantize_qgemm.cpp): MLAS's rounding and requantization, the 8-bit type
// dispatch, and the scale and zero point inputs.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "backends/cpu/kernel.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/ops/quantize_util.h"

namespace dlrt::cpu::qlinear {

// Float to int32 the way cvtps2dq does it: round half to even; NaN and
// values outside int32 give INT32_MIN.
inline int32_t cvt_rne(float v) {
  if (!(v >= -2147483648.0f && v < 2147483648.0f)) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(std::nearbyint(v));
}

template <typename Q>
inline Q saturate(int32_t v) {
  return static_cast<Q>(std::clamp<int32_t>(v, std::numeric_limits<Q>::lowest(), std::numeric_limits<Q>::max()));
}

// MLAS's requantization of a float: clamp to the range the zero point
// leaves, round half to even, add the zero point.
template <typename Q>
inline Q requantize(float v, int32_t zp) {
  const float lo = static_cast<float>(std::numeric_limits<Q>::lowest() - zp);
  const float hi = static_cast<float>(std::numeric_limits<Q>::max() - zp);
  return saturate<Q>(cvt_rne(std::min(std::max(v, lo), hi)) + zp);
}

// Calls f(std::type_identity<Q>{}) for uint8 / int8.
template <typename F>
Status dispatch_8bit(DType t, const KernelContext& ctx, F&& f) {
  switch (t) {
    case DType::kUInt8: return f(std::type_identity<uint8_t>{});
    case DType::kInt8: return f(std::type_identity<int8_t>{});
    default: return ctx.unsupported(std::string("quantized type ") + dtype_name(t) + " is not supported (uint8 or int8)");
  }
}

inline int32_t int8_at(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kUInt8 ? static_cast<int32_t>(t.data<uint8_t>()[i])
                                    : static_cast<int32_t>(t.data<int8_t>()[i]);
}

// A scale input: a float32 scalar (or a 1-element tensor).
inline Result<float> scale_input(const KernelContext& ctx, size_t i, const char* name) {
  const Tensor* t = ctx.input(i);
  if (!t) return ctx.invalid(std::string(name) + " is missing");
  if (t->dtype() != DType::kFloat32) return ctx.invalid(std::string(name) + " must be float32");
  if (t->size() != 1) return ctx.invalid(std::string(name) + " must be a scalar, got shape " + shape_to_string(t->shape()));
  return t->data<float>()[0];
}

// A zero point input of dtype `want`: a scalar, 0 when omitted.
inline Result<int32_t> zero_point_input(const KernelContext& ctx, size_t i, DType want, const char* name) {
  const Tensor* t = ctx.input(i);
  if (!t) return 0;
  if (t->dtype() != want)
    return ctx.invalid(std::string(name) + " has dtype " + dtype_name(t->dtype()) + ", expected " + dtype_name(want));
  if (t->size() != 1) return ctx.invalid(std::string(name) + " must be a scalar, got shape " + shape_to_string(t->shape()));
  return int8_at(*t, 0);
}

// QGemm's kernel (quantize_qgemm.cpp), registered with the other
// com.microsoft ops by register_quantize_contrib_kernels.
KernelDef qgemm_kernel_def();

}  // namespace dlrt::cpu::qlinear
