// Element conversions of the narrow types (dtype_is_narrow): float8 E4M3FN,
// E4M3FNUZ, E5M2, E5M2FNUZ and E8M0, float4 E2M1, int4/uint4 and int2/uint2,
// each held in one byte (the float types as their bit patterns, the integers
// unpacked). The rounding and overflow rules are those of ONNX's Cast (its
// reference implementation, which uses ml_dtypes' conversions), and for the
// sub-byte integers those of ONNX's technical notes on them (the reference
// implementation truncates toward zero there instead).
#pragma once

#include <cstdint>

#include "dlrt/dtype.h"

namespace dlrt {

// How float8e8m0 rounds a value between two powers of two (Cast's round_mode).
enum class E8M0Rounding { kUp, kDown, kNearest };

// The value of element `v` of narrow type `t` (NaN where the pattern is one).
double narrow_to_double(DType t, uint8_t v);

// `x` as an element of narrow type `t`:
// - float8 E4M3/E5M2 kinds and float4: rounded to nearest, ties to even. With
//   `saturate`, values beyond the largest finite one (and infinities) become
//   it; without, they become infinity (E5M2) or NaN (the kinds without
//   infinity). float4 has neither and always saturates; its NaN is 0x8.
// - float8e8m0: the power of two of float32(x) (sign ignored), rounded as
//   `rounding` says; NaN and infinities give NaN (0xFF), and so does rounding
//   past the largest value unless `saturate`.
// - int4/uint4/int2/uint2: rounded to nearest, ties to even, then wrapped to
//   the type's width (its low bits kept: 7.9 -> 8 -> -8 as int4), as ONNX's
//   notes on these types specify; NaN and infinities give 0.
uint8_t narrow_from_double(DType t, double x, bool saturate, E8M0Rounding rounding = E8M0Rounding::kUp);

}  // namespace dlrt
