// Vector loops of the quantization kernels, chosen at run time through
// cpu_isa() (isa.h); the float rows written once for every vector width. Every path gives the same bits: IEEE division, rounding
// half to even, saturation.
#pragma once

#include <cstdint>

#include "backends/cpu/kernels/simd/width.h"

namespace dlrt::cpu {

// The minimum and maximum of x[0, n) (both 0 when n is 0); false when x holds a NaN.
bool min_max(const float* x, int64_t n, float& lo, float& hi);

// y[i] = saturate_uint8(round_half_even(x[i] / scale) + zero_point).
void quantize_u8(const float* x, int64_t n, float scale, uint8_t zero_point, uint8_t* y);

// QuantizeLinear's per-tensor float32 to 8 bits: x / scale clamped to the
// range the zero point leaves, rounded half to even, + zp; NaN gives 0.
void quantize_linear_u8(const float* x, int64_t n, float scale, int32_t zp, uint8_t* dst);
void quantize_linear_s8(const float* x, int64_t n, float scale, int32_t zp, int8_t* dst);

// The requantization of an integer product (QLinearConv, QLinearMatMul):
// dst[i] = clamp(float(acc[i] + bias) * mult) rounded half to even + zp, the
// clamp to the range the zero point leaves (as MLAS does; the same integers
// as rounding, then saturating). acc + bias wraps as uint32.
void requantize_u8(const int32_t* acc, int64_t n, int32_t bias, float mult, int32_t zp, uint8_t* dst);
void requantize_s8(const int32_t* acc, int64_t n, int32_t bias, float mult, int32_t zp, int8_t* dst);
// The same with a bias (or none) and a multiplier per element.
void requantize_cols_u8(const int32_t* acc, int64_t n, const int32_t* bias, const float* mult, int32_t zp,
                        uint8_t* dst);
void requantize_cols_s8(const int32_t* acc, int64_t n, const int32_t* bias, const float* mult, int32_t zp,
                        int8_t* dst);

// Each of the above at vector width w (quantize_rows_simd.h): what they run
// at simd_width() where cpu_has_simd_kernels() (isa.h), the portable loops
// elsewhere; the same bits. For tests of every width; w must run here
// (simd_width_runs).
bool min_max(SimdWidth w, const float* x, int64_t n, float& lo, float& hi);
void quantize_u8(SimdWidth w, const float* x, int64_t n, float scale, uint8_t zero_point, uint8_t* y);
void quantize_linear_u8(SimdWidth w, const float* x, int64_t n, float scale, int32_t zp, uint8_t* dst);
void quantize_linear_s8(SimdWidth w, const float* x, int64_t n, float scale, int32_t zp, int8_t* dst);
void requantize_u8(SimdWidth w, const int32_t* acc, int64_t n, int32_t bias, float mult, int32_t zp, uint8_t* dst);
void requantize_s8(SimdWidth w, const int32_t* acc, int64_t n, int32_t bias, float mult, int32_t zp, int8_t* dst);
void requantize_cols_u8(SimdWidth w, const int32_t* acc, int64_t n, const int32_t* bias, const float* mult,
                        int32_t zp, uint8_t* dst);
void requantize_cols_s8(SimdWidth w, const int32_t* acc, int64_t n, const int32_t* bias, const float* mult,
                        int32_t zp, int8_t* dst);

// dst[i] = src[i * stride] for i < n (im2col rows of strided convs): AVX-512
// for stride 2, which reads src[0, 2n - 1) only.
void copy_strided_bytes(const uint8_t* src, int64_t stride, int64_t n, uint8_t* dst);

// dst[i] = table[src[i]] for i < n (the 256-entry tables of the 8-bit
// activations): AVX512-VBMI byte permutes where the CPU has them.
void lookup_bytes(const uint8_t* table, const uint8_t* src, int64_t n, uint8_t* dst);

}  // namespace dlrt::cpu
