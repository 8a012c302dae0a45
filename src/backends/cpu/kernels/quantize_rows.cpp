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
#if defined(__GNUC__) && !defined(__clang__)
// GCC 12's AVX-512 intrinsics start some results from _mm512_undefined_ps(),
// which the uninitialized-use warnings report once inlined: false positives.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

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
template <typename Q>
DLRT_AVX512 void quantize_linear_avx512(const float* x, int64_t n, float scale, int32_t zp, Q* dst) {
  const __m512 s = _mm512_set1_ps(scale);
  const __m512 lo = _mm512_set1_ps(static_cast<float>(std::numeric_limits<Q>::lowest() - zp));
  const __m512 hi = _mm512_set1_ps(static_cast<float>(std::numeric_limits<Q>::max() - zp));
  const __m512i z = _mm512_set1_epi32(zp);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = n - i >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512 v = _mm512_div_ps(_mm512_maskz_loadu_ps(k, x + i), s);
    // max(lo, v) then min(hi, .) keep a NaN as std::max / std::min do; a NaN lane gives 0.
    __m512 c = _mm512_min_ps(hi, _mm512_max_ps(lo, v));
    c = _mm512_roundscale_ps(c, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __mmask16 ordered = _mm512_cmp_ps_mask(v, v, _CMP_ORD_Q);
    const __m512i q = _mm512_maskz_add_epi32(ordered, _mm512_cvtps_epi32(c), z);
    _mm512_mask_cvtepi32_storeu_epi8(dst + i, k, q);
  }
}

// 16 values of requantize_generic: the same operations in the same order
// (max(lo, v) and min(hi, v) keep a NaN as std::max / std::min do).
DLRT_AVX512 inline __m512i requantize16_avx512(__m512i a, __m512 mult, __m512 lo, __m512 hi, __m512i zp) {
  __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(a), mult);
  v = _mm512_min_ps(hi, _mm512_max_ps(lo, v));
  v = _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  return _mm512_add_epi32(_mm512_cvtps_epi32(v), zp);
}

template <typename Q>
DLRT_AVX512 void requantize_avx512(const int32_t* acc, int64_t n, int32_t bias, float mult, int32_t zp, Q* dst) {
  const __m512 m = _mm512_set1_ps(mult);
  const __m512 lo = _mm512_set1_ps(static_cast<float>(std::numeric_limits<Q>::lowest() - zp));
  const __m512 hi = _mm512_set1_ps(static_cast<float>(std::numeric_limits<Q>::max() - zp));
  const __m512i b = _mm512_set1_epi32(bias), z = _mm512_set1_epi32(zp);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i a = _mm512_add_epi32(_mm512_loadu_si512(acc + i), b);
    // In range after the clamp: truncating to 8 bits keeps the value.
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm512_cvtepi32_epi8(requantize16_avx512(a, m, lo, hi, z)));
  }
  if (i < n) {
    const __mmask16 k = static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512i a = _mm512_add_epi32(_mm512_maskz_loadu_epi32(k, acc + i), b);
    _mm512_mask_cvtepi32_storeu_epi8(dst + i, k, requantize16_avx512(a, m, lo, hi, z));
  }
}

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

DLRT_AVX512 bool min_max_avx512(const float* x, int64_t n, float& lo, float& hi) {
  __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  __mmask16 nan = 0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    vlo = _mm512_min_ps(vlo, v);
    vhi = _mm512_max_ps(vhi, v);
  }
  if (nan) return false;
  lo = _mm512_reduce_min_ps(vlo);
  hi = _mm512_reduce_max_ps(vhi);
  return min_max_generic(x + i, n - i, lo, hi);
}

DLRT_AVX512 void quantize_u8_avx512(const float* x, int64_t n, float scale, uint8_t zero_point, uint8_t* y) {
  const __m512 s = _mm512_set1_ps(scale), z = _mm512_set1_ps(zero_point);
  const __m512 top = _mm512_set1_ps(255.0f), bottom = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 r = _mm512_roundscale_ps(_mm512_div_ps(_mm512_loadu_ps(x + i), s), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    r = _mm512_add_ps(r, z);
    // max(., 0) first so that NaN (x / scale undefined) becomes 0 as in quantize_one.
    r = _mm512_min_ps(_mm512_max_ps(r, bottom), top);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), _mm512_cvtusepi32_epi8(_mm512_cvtps_epu32(r)));
  }
  for (; i < n; ++i) y[i] = quantize_one(x[i], scale, zero_point);
}

// The AVX2 loops: the AVX-512 ones' operations in the same order, 8 lanes.
// The integers, once clamped, fit the 8-bit type, so the saturating packs
// to 8 bits below keep them.
template <typename Q>
DLRT_AVX2_INT inline void store8_avx2(__m256i q, Q* dst) {
  const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
  const __m128i b = std::is_signed_v<Q> ? _mm_packs_epi16(w, w) : _mm_packus_epi16(w, w);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(dst), b);
}

template <typename Q>
DLRT_AVX2_INT void quantize_linear_avx2(const float* x, int64_t n, float scale, int32_t zp, Q* dst) {
  const __m256 s = _mm256_set1_ps(scale);
  const __m256 lo = _mm256_set1_ps(static_cast<float>(std::numeric_limits<Q>::lowest() - zp));
  const __m256 hi = _mm256_set1_ps(static_cast<float>(std::numeric_limits<Q>::max() - zp));
  const __m256i z = _mm256_set1_epi32(zp);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_div_ps(_mm256_loadu_ps(x + i), s);
    __m256 c = _mm256_min_ps(hi, _mm256_max_ps(lo, v));
    c = _mm256_round_ps(c, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256i ordered = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_ORD_Q));
    store8_avx2(_mm256_and_si256(_mm256_add_epi32(_mm256_cvtps_epi32(c), z), ordered), dst + i);
  }
  quantize_linear_generic(x + i, n - i, scale, zp, dst + i);
}

template <typename Q>
DLRT_AVX2_INT void requantize_avx2(const int32_t* acc, int64_t n, int32_t bias, float mult, int32_t zp, Q* dst) {
  const __m256 m = _mm256_set1_ps(mult);
  const __m256 lo = _mm256_set1_ps(static_cast<float>(std::numeric_limits<Q>::lowest() - zp));
  const __m256 hi = _mm256_set1_ps(static_cast<float>(std::numeric_limits<Q>::max() - zp));
  const __m256i b = _mm256_set1_epi32(bias), z = _mm256_set1_epi32(zp);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i a = _mm256_add_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc + i)), b);
    __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(a), m);
    v = _mm256_min_ps(hi, _mm256_max_ps(lo, v));
    v = _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    store8_avx2(_mm256_add_epi32(_mm256_cvtps_epi32(v), z), dst + i);
  }
  requantize_generic(acc + i, n - i, bias, mult, zp, dst + i);
}

// requantize_avx2 with a bias (or none) and a multiplier per element.
template <typename Q>
DLRT_AVX2_INT void requantize_cols_avx2(const int32_t* acc, int64_t n, const int32_t* bias, const float* mult,
                                        int32_t zp, Q* dst) {
  const __m256 lo = _mm256_set1_ps(static_cast<float>(std::numeric_limits<Q>::lowest() - zp));
  const __m256 hi = _mm256_set1_ps(static_cast<float>(std::numeric_limits<Q>::max() - zp));
  const __m256i z = _mm256_set1_epi32(zp);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc + i));
    if (bias) a = _mm256_add_epi32(a, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bias + i)));
    __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(a), _mm256_loadu_ps(mult + i));
    v = _mm256_min_ps(hi, _mm256_max_ps(lo, v));
    v = _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    store8_avx2(_mm256_add_epi32(_mm256_cvtps_epi32(v), z), dst + i);
  }
  for (; i < n; ++i) requantize_generic(acc + i, 1, bias ? bias[i] : 0, mult[i], zp, dst + i);
}

DLRT_AVX2_INT bool min_max_avx2(const float* x, int64_t n, float& lo, float& hi) {
  __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi), nan = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    vlo = _mm256_min_ps(vlo, v);
    vhi = _mm256_max_ps(vhi, v);
  }
  if (_mm256_movemask_ps(nan)) return false;
  alignas(32) float l[8], h[8];
  _mm256_store_ps(l, vlo);
  _mm256_store_ps(h, vhi);
  for (int j = 0; j < 8; ++j) {
    lo = std::min(lo, l[j]);
    hi = std::max(hi, h[j]);
  }
  return min_max_generic(x + i, n - i, lo, hi);
}

DLRT_AVX2_INT void quantize_u8_avx2(const float* x, int64_t n, float scale, uint8_t zero_point, uint8_t* y) {
  const __m256 s = _mm256_set1_ps(scale), z = _mm256_set1_ps(zero_point);
  const __m256 top = _mm256_set1_ps(255.0f), bottom = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 r = _mm256_round_ps(_mm256_div_ps(_mm256_loadu_ps(x + i), s), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    r = _mm256_add_ps(r, z);
    r = _mm256_min_ps(_mm256_max_ps(r, bottom), top);  // NaN -> 0, as quantize_one
    store8_avx2(_mm256_cvtps_epi32(r), y + i);
  }
  for (; i < n; ++i) y[i] = quantize_one(x[i], scale, zero_point);
}
#endif

}  // namespace

void quantize_linear_u8(const float* x, int64_t n, float scale, int32_t zp, uint8_t* dst) {
#ifdef DLRT_QROWS_X86
  if (cpu_isa() >= CpuIsa::kAvx512) return quantize_linear_avx512(x, n, scale, zp, dst);
  if (cpu_isa() >= CpuIsa::kAvx2) return quantize_linear_avx2(x, n, scale, zp, dst);
#endif
  quantize_linear_generic(x, n, scale, zp, dst);
}

void quantize_linear_s8(const float* x, int64_t n, float scale, int32_t zp, int8_t* dst) {
#ifdef DLRT_QROWS_X86
  if (cpu_isa() >= CpuIsa::kAvx512) return quantize_linear_avx512(x, n, scale, zp, dst);
  if (cpu_isa() >= CpuIsa::kAvx2) return quantize_linear_avx2(x, n, scale, zp, dst);
#endif
  quantize_linear_generic(x, n, scale, zp, dst);
}

void requantize_u8(const int32_t* acc, int64_t n, int32_t bias, float mult, int32_t zp, uint8_t* dst) {
#ifdef DLRT_QROWS_X86
  if (cpu_isa() >= CpuIsa::kAvx512) return requantize_avx512(acc, n, bias, mult, zp, dst);
  if (cpu_isa() >= CpuIsa::kAvx2) return requantize_avx2(acc, n, bias, mult, zp, dst);
#endif
  requantize_generic(acc, n, bias, mult, zp, dst);
}

void requantize_s8(const int32_t* acc, int64_t n, int32_t bias, float mult, int32_t zp, int8_t* dst) {
#ifdef DLRT_QROWS_X86
  if (cpu_isa() >= CpuIsa::kAvx512) return requantize_avx512(acc, n, bias, mult, zp, dst);
  if (cpu_isa() >= CpuIsa::kAvx2) return requantize_avx2(acc, n, bias, mult, zp, dst);
#endif
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
#ifdef DLRT_QROWS_X86
  if (cpu_isa() >= CpuIsa::kAvx2) return requantize_cols_avx2(acc, n, bias, mult, zp, dst);
#endif
  for (int64_t i = 0; i < n; ++i) requantize_generic(acc + i, 1, bias ? bias[i] : 0, mult[i], zp, dst + i);
}

void requantize_cols_s8(const int32_t* acc, int64_t n, const int32_t* bias, const float* mult, int32_t zp,
                        int8_t* dst) {
#ifdef DLRT_QROWS_X86
  if (cpu_isa() >= CpuIsa::kAvx2) return requantize_cols_avx2(acc, n, bias, mult, zp, dst);
#endif
  for (int64_t i = 0; i < n; ++i) requantize_generic(acc + i, 1, bias ? bias[i] : 0, mult[i], zp, dst + i);
}

bool min_max(const float* x, int64_t n, float& lo, float& hi) {
  lo = 0.0f;
  hi = 0.0f;
  if (n <= 0) return true;
  lo = hi = x[0];
#ifdef DLRT_QROWS_X86
  if (cpu_isa() >= CpuIsa::kAvx512) return min_max_avx512(x, n, lo, hi);
  if (cpu_isa() >= CpuIsa::kAvx2) return min_max_avx2(x, n, lo, hi);
#endif
  return min_max_generic(x, n, lo, hi);
}

void quantize_u8(const float* x, int64_t n, float scale, uint8_t zero_point, uint8_t* y) {
#ifdef DLRT_QROWS_X86
  if (cpu_isa() >= CpuIsa::kAvx512) return quantize_u8_avx512(x, n, scale, zero_point, y);
  if (cpu_isa() >= CpuIsa::kAvx2) return quantize_u8_avx2(x, n, scale, zero_point, y);
#endif
  for (int64_t i = 0; i < n; ++i) y[i] = quantize_one(x[i], scale, zero_point);
}

}  // namespace dlrt::cpu
