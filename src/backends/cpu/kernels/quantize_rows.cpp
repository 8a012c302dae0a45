// Vector loops of the quantization kernels (quantize_rows.h).
#include "backends/cpu/kernels/isa_target.h"
#include "backends/cpu/kernels/quantize_rows.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "backends/cpu/kernels/isa.h"
#include "device/cpu_features.h"

#if defined(__x86_64__) || defined(__i386__)
#include "backends/cpu/kernels/x86_intrinsics.h"  // <immintrin.h>

#define DLRT_QROWS_X86 1
#endif

namespace dlrt::cpu {
namespace {

bool min_max_generic(const float* x, int64_t n, float& lo, float& hi) {
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(x[i])) return false;
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  return true;
}

uint8_t quantize_one(float x, float scale, float zp) {
  const float r = std::nearbyint(x / scale) + zp;
  if (!(r >= 0.0f)) return 0;  // (NaN saturates to 0 as well)
  return r > 255.0f ? 255 : static_cast<uint8_t>(r);
}

// requantize_u8/s8's portable loop. Rounding adds and subtracts 1.5 * 2^23,
// exact for |v| < 2^22, which the clamp guarantees.
template <typename Q>
void requantize_generic(const int32_t* acc, int64_t n, int32_t bias, float mult, int32_t zp, Q* dst) {
  const float lo = static_cast<float>(std::numeric_limits<Q>::lowest() - zp);
  const float hi = static_cast<float>(std::numeric_limits<Q>::max() - zp);
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23
  for (int64_t i = 0; i < n; ++i) {
    const int32_t a = static_cast<int32_t>(static_cast<uint32_t>(acc[i]) + static_cast<uint32_t>(bias));
    float v = static_cast<float>(a) * mult;
    v = std::min(std::max(v, lo), hi);
    const float r = (v + kRound) - kRound;
    dst[i] = static_cast<Q>(static_cast<int32_t>(r) + zp);
  }
}

template <typename Q>
void quantize_linear_generic(const float* x, int64_t n, float scale, int32_t zp, Q* dst) {
  const float lo = static_cast<float>(std::numeric_limits<Q>::lowest() - zp);
  const float hi = static_cast<float>(std::numeric_limits<Q>::max() - zp);
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i] / scale;
    const float c = std::min(std::max(lo, v), hi);
    const float r = (c + 12582912.0f) - 12582912.0f;  // exact for the clamped values
    dst[i] = v == v ? static_cast<Q>(static_cast<int32_t>(r) + zp) : Q(0);
  }
}

#ifdef DLRT_QROWS_X86
DLRT_AVX512 void copy_stride2_avx512(const uint8_t* src, int64_t n, uint8_t* dst) {
  const __m512i low = _mm512_set1_epi16(0xFF);
  for (int64_t i = 0; i < n; i += 32) {
    const int64_t c = std::min<int64_t>(32, n - i), bytes = 2 * c - 1;
    const __m512i v = _mm512_maskz_loadu_epi8((~__mmask64{0}) >> (64 - bytes), src + 2 * i);
    // The even bytes are the low bytes of the 16-bit lanes.
    const __mmask32 k = c == 32 ? ~__mmask32{0} : static_cast<__mmask32>((1u << c) - 1);
    _mm512_mask_cvtepi16_storeu_epi8(dst + i, k, _mm512_and_si512(v, low));
  }
}


// table[idx] for 64 indices: bits 0-6 pick one of 128 bytes, bit 7 the half.
DLRT_AVX512_VBMI inline __m512i lookup64_vbmi(__m512i idx, __m512i t0, __m512i t1, __m512i t2, __m512i t3) {
  const __m512i lo = _mm512_permutex2var_epi8(t0, idx, t1), hi = _mm512_permutex2var_epi8(t2, idx, t3);
  return _mm512_mask_blend_epi8(_mm512_movepi8_mask(idx), lo, hi);
}

DLRT_AVX512_VBMI void lookup_vbmi(const uint8_t* table, const uint8_t* src, int64_t n, uint8_t* dst) {
  const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64);
  const __m512i t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) _mm512_storeu_si512(dst + i, lookup64_vbmi(_mm512_loadu_si512(src + i), t0, t1, t2, t3));
  if (i < n) {
    const __mmask64 k = (~__mmask64{0}) >> (64 - (n - i));
    _mm512_mask_storeu_epi8(dst + i, k, lookup64_vbmi(_mm512_maskz_loadu_epi8(k, src + i), t0, t1, t2, t3));
  }
}

#endif

// The portable loops' bounds for Q and zp, as floats (exact: 8-bit ranges).
template <typename Q>
float low_of(int32_t zp) {
  return static_cast<float>(std::numeric_limits<Q>::lowest() - zp);
}
template <typename Q>
float high_of(int32_t zp) {
  return static_cast<float>(std::numeric_limits<Q>::max() - zp);
}

}  // namespace
}  // namespace dlrt::cpu

#define DLRT_SIMD_BODY "backends/cpu/kernels/quantize_rows_simd.h"
#include "backends/cpu/kernels/simd/instantiate.h"

namespace dlrt::cpu {

// The vector rows at width w, without DLRT_SIMD_CALL's call counter (an
// atomic add per call, a tenth of a 4K-float row's time); tests call the
// width overloads instead.
#define DLRT_QROWS_AT(w, entry, ...) DLRT_SIMD_PICK(w, entry, __VA_ARGS__)

void quantize_linear_u8(SimdWidth w, const float* x, int64_t n, float scale, int32_t zp, uint8_t* dst) {
  DLRT_QROWS_AT(w, quantize_linear_row, x, n, scale, low_of<uint8_t>(zp), high_of<uint8_t>(zp), static_cast<float>(zp),
                dst);
}
void quantize_linear_s8(SimdWidth w, const float* x, int64_t n, float scale, int32_t zp, int8_t* dst) {
  DLRT_QROWS_AT(w, quantize_linear_row, x, n, scale, low_of<int8_t>(zp), high_of<int8_t>(zp), static_cast<float>(zp),
                dst);
}
void requantize_u8(SimdWidth w, const int32_t* acc, int64_t n, int32_t bias, float mult, int32_t zp, uint8_t* dst) {
  DLRT_QROWS_AT(w, requantize_row, acc, n, nullptr, bias, nullptr, mult, low_of<uint8_t>(zp), high_of<uint8_t>(zp),
                static_cast<float>(zp), dst);
}
void requantize_s8(SimdWidth w, const int32_t* acc, int64_t n, int32_t bias, float mult, int32_t zp, int8_t* dst) {
  DLRT_QROWS_AT(w, requantize_row, acc, n, nullptr, bias, nullptr, mult, low_of<int8_t>(zp), high_of<int8_t>(zp),
                static_cast<float>(zp), dst);
}
void requantize_cols_u8(SimdWidth w, const int32_t* acc, int64_t n, const int32_t* bias, const float* mult,
                        int32_t zp, uint8_t* dst) {
  DLRT_QROWS_AT(w, requantize_row, acc, n, bias, 0, mult, 0.0f, low_of<uint8_t>(zp), high_of<uint8_t>(zp),
                static_cast<float>(zp), dst);
}
void requantize_cols_s8(SimdWidth w, const int32_t* acc, int64_t n, const int32_t* bias, const float* mult,
                        int32_t zp, int8_t* dst) {
  DLRT_QROWS_AT(w, requantize_row, acc, n, bias, 0, mult, 0.0f, low_of<int8_t>(zp), high_of<int8_t>(zp),
                static_cast<float>(zp), dst);
}
bool min_max(SimdWidth w, const float* x, int64_t n, float& lo, float& hi) {
  lo = 0.0f;
  hi = 0.0f;
  if (n <= 0) return true;
  lo = hi = x[0];
  int64_t done = 0;
  if (!DLRT_QROWS_AT(w, min_max_row, x, n, lo, hi, done)) return false;
  return min_max_generic(x + done, n - done, lo, hi);
}
void quantize_u8(SimdWidth w, const float* x, int64_t n, float scale, uint8_t zero_point, uint8_t* y) {
  for (int64_t i = DLRT_QROWS_AT(w, quantize_u8_row, x, n, scale, static_cast<float>(zero_point), y); i < n; ++i)
    y[i] = quantize_one(x[i], scale, zero_point);
}

void quantize_linear_u8(const float* x, int64_t n, float scale, int32_t zp, uint8_t* dst) {
  if (cpu_has_simd_kernels()) return quantize_linear_u8(simd_width(), x, n, scale, zp, dst);
  quantize_linear_generic(x, n, scale, zp, dst);
}

void quantize_linear_s8(const float* x, int64_t n, float scale, int32_t zp, int8_t* dst) {
  if (cpu_has_simd_kernels()) return quantize_linear_s8(simd_width(), x, n, scale, zp, dst);
  quantize_linear_generic(x, n, scale, zp, dst);
}

void requantize_u8(const int32_t* acc, int64_t n, int32_t bias, float mult, int32_t zp, uint8_t* dst) {
  if (cpu_has_simd_kernels()) return requantize_u8(simd_width(), acc, n, bias, mult, zp, dst);
  requantize_generic(acc, n, bias, mult, zp, dst);
}

void requantize_s8(const int32_t* acc, int64_t n, int32_t bias, float mult, int32_t zp, int8_t* dst) {
  if (cpu_has_simd_kernels()) return requantize_s8(simd_width(), acc, n, bias, mult, zp, dst);
  requantize_generic(acc, n, bias, mult, zp, dst);
}

void copy_strided_bytes(const uint8_t* src, int64_t stride, int64_t n, uint8_t* dst) {
  if (n <= 0) return;
  if (stride == 1) {
    std::memcpy(dst, src, static_cast<size_t>(n));
    return;
  }
#ifdef DLRT_QROWS_X86
  if (stride == 2 && cpu_isa() >= CpuIsa::kAvx512) return copy_stride2_avx512(src, n, dst);
#endif
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i * stride];
}

void lookup_bytes(const uint8_t* table, const uint8_t* src, int64_t n, uint8_t* dst) {
#ifdef DLRT_QROWS_X86
  if (cpu_isa() >= CpuIsa::kAvx512 && device::cpu_features().avx512_vbmi) return lookup_vbmi(table, src, n, dst);
#endif
  for (int64_t i = 0; i < n; ++i) dst[i] = table[src[i]];
}

void requantize_cols_u8(const int32_t* acc, int64_t n, const int32_t* bias, const float* mult, int32_t zp,
                        uint8_t* dst) {
  if (cpu_has_simd_kernels()) return requantize_cols_u8(simd_width(), acc, n, bias, mult, zp, dst);
  for (int64_t i = 0; i < n; ++i) requantize_generic(acc + i, 1, bias ? bias[i] : 0, mult[i], zp, dst + i);
}

void requantize_cols_s8(const int32_t* acc, int64_t n, const int32_t* bias, const float* mult, int32_t zp,
                        int8_t* dst) {
  if (cpu_has_simd_kernels()) return requantize_cols_s8(simd_width(), acc, n, bias, mult, zp, dst);
  for (int64_t i = 0; i < n; ++i) requantize_generic(acc + i, 1, bias ? bias[i] : 0, mult[i], zp, dst + i);
}

bool min_max(const float* x, int64_t n, float& lo, float& hi) {
  if (cpu_has_simd_kernels()) return min_max(simd_width(), x, n, lo, hi);
  lo = 0.0f;
  hi = 0.0f;
  if (n <= 0) return true;
  lo = hi = x[0];
  return min_max_generic(x, n, lo, hi);
}

void quantize_u8(const float* x, int64_t n, float scale, uint8_t zero_point, uint8_t* y) {
  if (cpu_has_simd_kernels()) return quantize_u8(simd_width(), x, n, scale, zero_point, y);
  for (int64_t i = 0; i < n; ++i) y[i] = quantize_one(x[i], scale, zero_point);
}

}  // namespace dlrt::cpu
