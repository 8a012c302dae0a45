// The 256-bit instantiation of the simd interface (simd.h): AVX2 + FMA, 8
// floats a vector, 16 registers, no masked memory operations (tails go
// through a small buffer; compress/expand are emulated). Include only
// through instantiate.h, inside its `#pragma GCC target` region for AVX2.
#pragma once

#include "backends/cpu/kernels/simd/simd.h"

#if defined(__x86_64__) || defined(__i386__)

namespace dlrt::cpu::simd::w256 {

#define DLRT_SIMD_FN __attribute__((always_inline)) inline

using Vf = __m256;
using Lanes = uint32_t;
inline constexpr int kLanes = 8;
inline constexpr int kBlocks = 2;
inline constexpr int kRegisters = 16;
inline constexpr bool kNativeCompress = false;
inline constexpr SimdWidth kWidth = SimdWidth::k256;

DLRT_SIMD_FN Vf zero() { return _mm256_setzero_ps(); }
DLRT_SIMD_FN Vf set1(float x) { return _mm256_set1_ps(x); }
DLRT_SIMD_FN Vf loadu(const float* p) { return _mm256_loadu_ps(p); }
DLRT_SIMD_FN void storeu(float* p, Vf v) { _mm256_storeu_ps(p, v); }
DLRT_SIMD_FN __m256i first_mask(int64_t n) {
  const int64_t c = n < 0 ? 0 : n > 8 ? 8 : n;
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(c)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
DLRT_SIMD_FN Vf load_first(const float* p, int64_t n) {
  if (n >= 8) return _mm256_loadu_ps(p);
  return _mm256_maskload_ps(p, first_mask(n));
}
DLRT_SIMD_FN void store_first(float* p, Vf v, int64_t n) {
  if (n >= 8)
    _mm256_storeu_ps(p, v);
  else if (n > 0)
    _mm256_maskstore_ps(p, first_mask(n), v);
}
DLRT_SIMD_FN Vf load_lanes(const float* p, int64_t lo, int64_t hi) {
  return _mm256_maskload_ps(p, _mm256_andnot_si256(first_mask(lo), first_mask(hi)));
}

DLRT_SIMD_FN Vf add(Vf a, Vf b) { return _mm256_add_ps(a, b); }
DLRT_SIMD_FN Vf sub(Vf a, Vf b) { return _mm256_sub_ps(a, b); }
DLRT_SIMD_FN Vf mul(Vf a, Vf b) { return _mm256_mul_ps(a, b); }
DLRT_SIMD_FN Vf div(Vf a, Vf b) { return _mm256_div_ps(a, b); }
DLRT_SIMD_FN Vf fmadd(Vf a, Vf b, Vf c) { return _mm256_fmadd_ps(a, b, c); }
DLRT_SIMD_FN Vf fnmadd(Vf a, Vf b, Vf c) { return _mm256_fnmadd_ps(a, b, c); }
DLRT_SIMD_FN Vf min(Vf a, Vf b) { return _mm256_min_ps(a, b); }
DLRT_SIMD_FN Vf max(Vf a, Vf b) { return _mm256_max_ps(a, b); }
DLRT_SIMD_FN float hsum(Vf v) {
  __m128 m = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_add_ps(m, _mm_movehl_ps(m, m));
  return _mm_cvtss_f32(_mm_add_ss(m, _mm_shuffle_ps(m, m, 1)));
}
DLRT_SIMD_FN float hmax(Vf v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  return _mm_cvtss_f32(_mm_max_ss(m, _mm_shuffle_ps(m, m, 1)));
}

// Lane masks (all bits of a lane set or clear) and the operations behind
// the vector math (simd/math_simd.h).
using Mask = __m256;
DLRT_SIMD_FN Mask lt(Vf a, Vf b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
DLRT_SIMD_FN Mask nlt(Vf a, Vf b) { return _mm256_cmp_ps(a, b, _CMP_NLT_UQ); }
DLRT_SIMD_FN Mask unord(Vf a, Vf b) { return _mm256_cmp_ps(a, b, _CMP_UNORD_Q); }
DLRT_SIMD_FN Vf select(Mask m, Vf t, Vf f) { return _mm256_blendv_ps(f, t, m); }
DLRT_SIMD_FN Vf mul_where(Mask m, Vf a, Vf b, Vf f) { return _mm256_blendv_ps(f, _mm256_mul_ps(a, b), m); }
DLRT_SIMD_FN Vf bit_or(Vf a, Vf b) { return _mm256_or_ps(a, b); }
DLRT_SIMD_FN Vf bit_and(Vf a, Vf b) { return _mm256_and_ps(a, b); }
DLRT_SIMD_FN Vf bit_andnot(Vf a, Vf b) { return _mm256_andnot_ps(a, b); }
DLRT_SIMD_FN Vf round_nearest(Vf v) { return _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
// n integral in [-126, 128]: 2^n built in the exponent field (2^128: inf).
DLRT_SIMD_FN Vf scale2(Vf p, Vf n) {
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}
DLRT_SIMD_FN Vf scale2_where(Mask m, Vf p, Vf n) { return _mm256_and_ps(scale2(p, n), m); }
// 1 / d for d in [1, 2]: the 12-bit estimate and two Newton steps.
DLRT_SIMD_FN Vf recip_1_2(Vf d) {
  __m256 y = _mm256_rcp_ps(d);
  y = _mm256_fmadd_ps(y, _mm256_fnmadd_ps(d, y, _mm256_set1_ps(1.0f)), y);
  return _mm256_fmadd_ps(y, _mm256_fnmadd_ps(d, y, _mm256_set1_ps(1.0f)), y);
}

DLRT_SIMD_FN Mask mask_or(Mask a, Mask b) { return _mm256_or_ps(a, b); }
DLRT_SIMD_FN bool any(Mask m) { return _mm256_movemask_ps(m) != 0; }
DLRT_SIMD_FN Mask first_lanes(int64_t n) { return _mm256_castsi256_ps(first_mask(n)); }

DLRT_SIMD_FN Vf even_lanes(Vf a, Vf c) {
  const __m256 sh = _mm256_shuffle_ps(a, c, _MM_SHUFFLE(2, 0, 2, 0));
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(sh), _MM_SHUFFLE(3, 1, 2, 0)));
}
DLRT_SIMD_FN Vf odd_lanes(Vf a, Vf c) {
  const __m256 sh = _mm256_shuffle_ps(a, c, _MM_SHUFFLE(3, 1, 3, 1));
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(sh), _MM_SHUFFLE(3, 1, 2, 0)));
}
DLRT_SIMD_FN Vf load_strided(const float* p, int32_t s) {
  return _mm256_i32gather_ps(p, _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(s)), 4);
}

using Vd = __m256d;
DLRT_SIMD_FN Vd zero_d() { return _mm256_setzero_pd(); }
DLRT_SIMD_FN Vd set1_d(double x) { return _mm256_set1_pd(x); }
DLRT_SIMD_FN Vd add_d(Vd a, Vd b) { return _mm256_add_pd(a, b); }
DLRT_SIMD_FN Vd sub_d(Vd a, Vd b) { return _mm256_sub_pd(a, b); }
DLRT_SIMD_FN Vd div_d(Vd a, Vd b) { return _mm256_div_pd(a, b); }
DLRT_SIMD_FN Vd fmadd_d(Vd a, Vd b, Vd c) { return _mm256_fmadd_pd(a, b, c); }
DLRT_SIMD_FN double hsum_d(Vd v) {
  const __m128d h = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
  return _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
}
DLRT_SIMD_FN void storeu_d(double* p, Vd v) { _mm256_storeu_pd(p, v); }
DLRT_SIMD_FN Vd widen_lo(Vf v) { return _mm256_cvtps_pd(_mm256_castps256_ps128(v)); }
DLRT_SIMD_FN Vd widen_hi(Vf v) { return _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)); }
DLRT_SIMD_FN void load_wide(const float* p, Vd& lo, Vd& hi) {
  lo = _mm256_cvtps_pd(_mm_loadu_ps(p));
  hi = _mm256_cvtps_pd(_mm_loadu_ps(p + 4));
}
DLRT_SIMD_FN Vd abs_d(Vd v) { return _mm256_andnot_pd(_mm256_set1_pd(-0.0), v); }
DLRT_SIMD_FN Vf narrow(Vd lo, Vd hi) {
  return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(lo)), _mm256_cvtpd_ps(hi), 1);
}

DLRT_SIMD_FN void compress_store(float* p, Lanes m, Vf v) {
  alignas(32) float t[8];
  _mm256_store_ps(t, v);
  for (int i = 0; i < 8; ++i)
    if (m >> i & 1u) *p++ = t[i];
}
DLRT_SIMD_FN Vf expand_load(const float* p, Lanes m) {
  alignas(32) float t[8];
  for (int i = 0; i < 8; ++i) t[i] = m >> i & 1u ? *p++ : 0.0f;
  return _mm256_load_ps(t);
}
DLRT_SIMD_FN Vf load_blocks(const float* const (&p)[kBlocks]) {
  return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(p[0])), _mm_loadu_ps(p[1]), 1);
}
DLRT_SIMD_FN void store_block(float* p, Vf v, int b) {
  _mm_storeu_ps(p, b == 0 ? _mm256_castps256_ps128(v) : _mm256_extractf128_ps(v, 1));
}

namespace detail {
// The 4 x 4 transpose within each 128-bit block: x[q] float s = b[s] float q.
DLRT_SIMD_FN void transpose_blocks(const Vf (&b)[4], Vf (&x)[4]) {
  const __m256 t0 = _mm256_unpacklo_ps(b[0], b[1]), t1 = _mm256_unpackhi_ps(b[0], b[1]);
  const __m256 t2 = _mm256_unpacklo_ps(b[2], b[3]), t3 = _mm256_unpackhi_ps(b[2], b[3]);
  x[0] = _mm256_shuffle_ps(t0, t2, 0x44);
  x[1] = _mm256_shuffle_ps(t0, t2, 0xEE);
  x[2] = _mm256_shuffle_ps(t1, t3, 0x44);
  x[3] = _mm256_shuffle_ps(t1, t3, 0xEE);
}
}  // namespace detail

// x[q] lane 4a + s = p[a][4s + q]: block a of b_s loaded from p[a] + 4s,
// then the floats within each block transposed.
DLRT_SIMD_FN void deinterleave4(const float* const (&p)[kBlocks], Vf (&x)[4]) {
  Vf b[4];
  for (int s = 0; s < 4; ++s) b[s] = load_blocks({p[0] + 4 * s, p[1] + 4 * s});
  detail::transpose_blocks(b, x);
}

// Group a's 16 floats (o[2a], o[2a + 1]): float 4s + l = y[l] lane 4a + s.
DLRT_SIMD_FN void interleave4(const Vf (&y)[4], Vf (&o)[4]) {
  Vf w[4];  // block a of w_s: tile s of group a, its 4 columns
  detail::transpose_blocks(y, w);
  o[0] = _mm256_permute2f128_ps(w[0], w[1], 0x20);
  o[1] = _mm256_permute2f128_ps(w[2], w[3], 0x20);
  o[2] = _mm256_permute2f128_ps(w[0], w[1], 0x31);
  o[3] = _mm256_permute2f128_ps(w[2], w[3], 0x31);
}

// r[i] lane j <-> r[j] lane i: an 8 x 8 transpose in registers.
DLRT_SIMD_FN void transpose_square(Vf (&r)[kLanes]) {
  Vf b[4], x[4];
  Vf lo[4], hi[4];  // 4 x 4 transposes within the 128-bit halves, rows 0-3 and 4-7
  for (int i = 0; i < 4; ++i) b[i] = r[i];
  detail::transpose_blocks(b, lo);
  for (int i = 0; i < 4; ++i) b[i] = r[4 + i];
  detail::transpose_blocks(b, hi);
  // lo[q] half h: column 4h + q of rows 0-3; hi[q] half h: of rows 4-7.
  for (int q = 0; q < 4; ++q) {
    x[q] = _mm256_permute2f128_ps(lo[q], hi[q], 0x20);
    r[4 + q] = _mm256_permute2f128_ps(lo[q], hi[q], 0x31);
  }
  for (int q = 0; q < 4; ++q) r[q] = x[q];
}

// e = the even floats of a | b (a's first), o = the odd ones: shuffles
// within the 128-bit halves ([a0 a2 b0 b2 | a4 a6 b4 b6]), then the 64-bit
// pieces in order.
DLRT_SIMD_FN void deinterleave2(Vf a, Vf b, Vf& e, Vf& o) {
  e = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88)), 0xD8));
  o = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0xDD)), 0xD8));
}

// v, from a register: a load the compiler would fold into each of v's uses
// (one load per use instead of one) stays a single load.
DLRT_SIMD_FN Vf in_register(Vf v) {
  __asm__("" : "+x"(v));
  return v;
}

// Lane permutes (simd.h): Index holds kLanes int32 lane indexes; a choice
// between two permutes by an index bit moved into the sign bit (blendv).
using Index = __m256i;
inline constexpr bool kNativePermute = true;
DLRT_SIMD_FN Index load_index(const int32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
DLRT_SIMD_FN Index index_ramp(int32_t start, int32_t wrap) {
  return _mm256_and_si256(_mm256_add_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(start)),
                          _mm256_set1_epi32(wrap));
}
DLRT_SIMD_FN Vf permute(Vf v, Index ix) { return _mm256_permutevar8x32_ps(v, ix); }
DLRT_SIMD_FN Vf permute2(Vf a, Vf b, Index ix) {
  return _mm256_blendv_ps(_mm256_permutevar8x32_ps(a, ix), _mm256_permutevar8x32_ps(b, ix),
                          _mm256_castsi256_ps(_mm256_slli_epi32(ix, 28)));
}
DLRT_SIMD_FN Vf lookup4(const Vf (&v)[4], Index ix) {
  const __m256 r = _mm256_blendv_ps(permute2(v[0], v[1], ix), permute2(v[2], v[3], ix),
                                    _mm256_castsi256_ps(_mm256_slli_epi32(ix, 27)));
  return _mm256_andnot_ps(_mm256_castsi256_ps(_mm256_srai_epi32(ix, 31)), r);
}
DLRT_SIMD_FN void interleave2(Vf a, Vf b, Vf& lo, Vf& hi) {
  const __m256 u0 = _mm256_unpacklo_ps(a, b), u1 = _mm256_unpackhi_ps(a, b);  // a0 b0 a1 b1 | a4 b4 a5 b5, ...
  lo = _mm256_permute2f128_ps(u0, u1, 0x20);
  hi = _mm256_permute2f128_ps(u0, u1, 0x31);
}

// Activations (activation_simd.h): recip_est(d) (1 / d for d in [1, 4]:
// the 12-bit estimate and one Newton step), lookup32(t, i) (t[i] per lane
// for integral i in [0, 31]: a gather).
DLRT_SIMD_FN Vf recip_est(Vf d) {
  const __m256 y = _mm256_rcp_ps(d);
  return _mm256_mul_ps(y, _mm256_fnmadd_ps(d, y, _mm256_set1_ps(2.0f)));
}
DLRT_SIMD_FN Vf lookup32(const float* t, Vf i) { return _mm256_i32gather_ps(t, _mm256_cvttps_epi32(i), 4); }

// Half vectors (Vh: kHalfLanes = kLanes / 2 floats, an xmm here), lane-range
// masks and moves through a Mask (simd.h).
using Vh = __m128;
inline constexpr int kHalfLanes = 4;
DLRT_SIMD_FN Vh zero_h() { return _mm_setzero_ps(); }
DLRT_SIMD_FN Vh set1_h(float x) { return _mm_set1_ps(x); }
DLRT_SIMD_FN Vh loadu_h(const float* p) { return _mm_loadu_ps(p); }
DLRT_SIMD_FN void storeu_h(float* p, Vh v) { _mm_storeu_ps(p, v); }
DLRT_SIMD_FN Vh add_h(Vh a, Vh b) { return _mm_add_ps(a, b); }
DLRT_SIMD_FN Vh mul_h(Vh a, Vh b) { return _mm_mul_ps(a, b); }
DLRT_SIMD_FN Vh fmadd_h(Vh a, Vh b, Vh c) { return _mm_fmadd_ps(a, b, c); }
// r[i] lane j <-> r[j] lane i (4 x 4).
DLRT_SIMD_FN void transpose_half(Vh (&r)[kHalfLanes]) {
  const __m128 t0 = _mm_unpacklo_ps(r[0], r[1]), t1 = _mm_unpackhi_ps(r[0], r[1]);
  const __m128 t2 = _mm_unpacklo_ps(r[2], r[3]), t3 = _mm_unpackhi_ps(r[2], r[3]);
  r[0] = _mm_movelh_ps(t0, t2);
  r[1] = _mm_movehl_ps(t2, t0);
  r[2] = _mm_movelh_ps(t1, t3);
  r[3] = _mm_movehl_ps(t3, t1);
}
DLRT_SIMD_FN Mask lanes_range(int64_t lo, int64_t hi) {
  return _mm256_castsi256_ps(_mm256_andnot_si256(first_mask(lo), first_mask(hi)));
}
DLRT_SIMD_FN Vf load_where(Mask m, const float* p) { return _mm256_maskload_ps(p, _mm256_castps_si256(m)); }
DLRT_SIMD_FN void store_where(float* p, Mask m, Vf v) { _mm256_maskstore_ps(p, _mm256_castps_si256(m), v); }

// Quantization rows (quantize_rows_simd.h): hmin, int32 vectors (Vi32, adds
// wrap) converted to floats, integral floats in [-128, 255] stored as bytes
// (each lane's int32 low byte).
DLRT_SIMD_FN float hmin(Vf v) {
  __m128 m = _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_min_ps(m, _mm_movehl_ps(m, m));
  return _mm_cvtss_f32(_mm_min_ss(m, _mm_shuffle_ps(m, m, 1)));
}
using Vi32 = __m256i;
DLRT_SIMD_FN Vi32 set1_i32(int32_t x) { return _mm256_set1_epi32(x); }
DLRT_SIMD_FN Vi32 loadu_i32(const int32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
DLRT_SIMD_FN Vi32 load_first_i32(const int32_t* p, int64_t n) {
  if (n >= 8) return loadu_i32(p);
  return _mm256_maskload_epi32(p, first_mask(n));
}
DLRT_SIMD_FN Vi32 add_i32(Vi32 a, Vi32 b) { return _mm256_add_epi32(a, b); }
DLRT_SIMD_FN Vi32 sub_i32(Vi32 a, Vi32 b) { return _mm256_sub_epi32(a, b); }
DLRT_SIMD_FN Vf to_float(Vi32 v) { return _mm256_cvtepi32_ps(v); }
DLRT_SIMD_FN void store_bytes(void* p, Vf v, int64_t n) {
  // Each 128-bit half's 4 low bytes first (pshufb), then the halves side by side.
  const __m256i q = _mm256_shuffle_epi8(_mm256_cvtps_epi32(v),
                                        _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                                         0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1));
  const __m128i b = _mm_unpacklo_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
  if (n >= 8) return _mm_storel_epi64(static_cast<__m128i*>(p), b);
  alignas(16) uint8_t t[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(t), b);
  for (int64_t i = 0; i < n; ++i) static_cast<uint8_t*>(p)[i] = t[i];
}

// Integer sums (depthwise_int8_simd.h): int16 widened to int32, low halves
// of products (wrapping), int32 stores.
DLRT_SIMD_FN Vi32 load_i16_i32(const int16_t* p) {
  return _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
DLRT_SIMD_FN Vi32 load_first_i16_i32(const int16_t* p, int64_t n) {
  if (n >= 8) return load_i16_i32(p);
  if (n <= 0) return _mm256_setzero_si256();
  // AVX2 has no 16-bit masked load: the whole pairs by a 32-bit one, an odd last value blended in.
  const int k = static_cast<int>(n);
  __m128i v = _mm_maskload_epi32(reinterpret_cast<const int*>(p),
                                 _mm_cmpgt_epi32(_mm_set1_epi32(k >> 1), _mm_setr_epi32(0, 1, 2, 3)));
  if (k & 1)
    v = _mm_blendv_epi8(v, _mm_set1_epi16(p[k - 1]),
                        _mm_cmpeq_epi16(_mm_set1_epi16(static_cast<int16_t>(k - 1)), _mm_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7)));
  return _mm256_cvtepi16_epi32(v);
}
DLRT_SIMD_FN Vi32 mullo_i32(Vi32 a, Vi32 b) { return _mm256_mullo_epi32(a, b); }
DLRT_SIMD_FN void storeu_i32(int32_t* p, Vi32 v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
DLRT_SIMD_FN void store_first_i32(int32_t* p, Vi32 v, int64_t n) {
  if (n >= 8)
    storeu_i32(p, v);
  else if (n > 0)
    _mm256_maskstore_epi32(p, first_mask(n), v);
}

#undef DLRT_SIMD_FN

}  // namespace dlrt::cpu::simd::w256

#endif  // x86
