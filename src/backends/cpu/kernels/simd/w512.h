// The 512-bit instantiation of the simd interface (simd.h): AVX-512
// F/BW/DQ/VL + FMA, 16 floats a vector, 32 registers, native masked and
// compressing memory operations. Include only through instantiate.h, inside
// its `#pragma GCC target` region for AVX-512.
#pragma once

#include "backends/cpu/kernels/simd/simd.h"

#if defined(__x86_64__) || defined(__i386__)

namespace dlrt::cpu::simd::w512 {

#define DLRT_SIMD_FN __attribute__((always_inline)) inline

using Vf = __m512;
using Lanes = uint32_t;  // one bit per lane, lane 0 the lowest
inline constexpr int kLanes = 16;
inline constexpr int kBlocks = 4;  // 128-bit blocks of 4 floats
inline constexpr int kRegisters = 32;
inline constexpr bool kNativeCompress = true;
inline constexpr SimdWidth kWidth = SimdWidth::k512;

DLRT_SIMD_FN Vf zero() { return _mm512_setzero_ps(); }
DLRT_SIMD_FN Vf set1(float x) { return _mm512_set1_ps(x); }
DLRT_SIMD_FN Vf loadu(const float* p) { return _mm512_loadu_ps(p); }
DLRT_SIMD_FN void storeu(float* p, Vf v) { _mm512_storeu_ps(p, v); }
DLRT_SIMD_FN __mmask16 first_mask(int64_t n) {
  if (n <= 0) return 0;
  return n >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << n) - 1u);
}
DLRT_SIMD_FN Vf load_first(const float* p, int64_t n) { return _mm512_maskz_loadu_ps(first_mask(n), p); }
DLRT_SIMD_FN void store_first(float* p, Vf v, int64_t n) { _mm512_mask_storeu_ps(p, first_mask(n), v); }
DLRT_SIMD_FN Vf load_lanes(const float* p, int64_t lo, int64_t hi) {
  return _mm512_maskz_loadu_ps(static_cast<__mmask16>(first_mask(hi) & ~first_mask(lo)), p);
}

DLRT_SIMD_FN Vf add(Vf a, Vf b) { return _mm512_add_ps(a, b); }
DLRT_SIMD_FN Vf sub(Vf a, Vf b) { return _mm512_sub_ps(a, b); }
DLRT_SIMD_FN Vf mul(Vf a, Vf b) { return _mm512_mul_ps(a, b); }
DLRT_SIMD_FN Vf div(Vf a, Vf b) { return _mm512_div_ps(a, b); }
DLRT_SIMD_FN Vf fmadd(Vf a, Vf b, Vf c) { return _mm512_fmadd_ps(a, b, c); }
DLRT_SIMD_FN Vf fnmadd(Vf a, Vf b, Vf c) { return _mm512_fnmadd_ps(a, b, c); }
DLRT_SIMD_FN Vf min(Vf a, Vf b) { return _mm512_min_ps(a, b); }
DLRT_SIMD_FN Vf max(Vf a, Vf b) { return _mm512_max_ps(a, b); }
DLRT_SIMD_FN float hsum(Vf v) { return _mm512_reduce_add_ps(v); }
DLRT_SIMD_FN float hmax(Vf v) { return _mm512_reduce_max_ps(v); }

// Lane masks and the operations behind the vector math (simd/math_simd.h).
using Mask = __mmask16;
DLRT_SIMD_FN Mask lt(Vf a, Vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }   // false on NaN
DLRT_SIMD_FN Mask nlt(Vf a, Vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_NLT_UQ); }  // true on NaN
DLRT_SIMD_FN Mask unord(Vf a, Vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q); }
DLRT_SIMD_FN Vf select(Mask m, Vf t, Vf f) { return _mm512_mask_mov_ps(f, m, t); }
DLRT_SIMD_FN Vf mul_where(Mask m, Vf a, Vf b, Vf f) { return _mm512_mask_mul_ps(f, m, a, b); }
DLRT_SIMD_FN Vf bit_or(Vf a, Vf b) { return _mm512_or_ps(a, b); }
DLRT_SIMD_FN Vf bit_and(Vf a, Vf b) { return _mm512_and_ps(a, b); }
DLRT_SIMD_FN Vf bit_andnot(Vf a, Vf b) { return _mm512_andnot_ps(a, b); }
DLRT_SIMD_FN Vf round_nearest(Vf v) { return _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
DLRT_SIMD_FN Vf scale2_where(Mask m, Vf p, Vf n) { return _mm512_maskz_scalef_ps(m, p, n); }
DLRT_SIMD_FN Vf scale2(Vf p, Vf n) { return _mm512_scalef_ps(p, n); }
// 1 / d for d in [1, 2]: the 14-bit estimate and one Newton step.
DLRT_SIMD_FN Vf recip_1_2(Vf d) {
  const Vf y = _mm512_rcp14_ps(d);
  return _mm512_fmadd_ps(y, _mm512_fnmadd_ps(d, y, _mm512_set1_ps(1.0f)), y);
}

DLRT_SIMD_FN Mask mask_or(Mask a, Mask b) { return static_cast<Mask>(a | b); }
DLRT_SIMD_FN bool any(Mask m) { return m != 0; }
// Lanes [0, n) set (n clamped to [0, kLanes]).
DLRT_SIMD_FN Mask first_lanes(int64_t n) { return first_mask(n); }

DLRT_SIMD_FN Vf even_lanes(Vf a, Vf c) {
  return _mm512_permutex2var_ps(a, _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), c);
}
DLRT_SIMD_FN Vf odd_lanes(Vf a, Vf c) {
  return _mm512_permutex2var_ps(a, _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31), c);
}
DLRT_SIMD_FN Vf load_strided(const float* p, int32_t s) {
  return _mm512_i32gather_ps(_mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                                _mm512_set1_epi32(s)),
                             p, 4);
}

// Doubles, for sums of floats: kLanes / 2 a vector; widen_lo / widen_hi
// convert a float vector's lower / upper half exactly, narrow rounds back.
using Vd = __m512d;
DLRT_SIMD_FN Vd zero_d() { return _mm512_setzero_pd(); }
DLRT_SIMD_FN Vd set1_d(double x) { return _mm512_set1_pd(x); }
DLRT_SIMD_FN Vd add_d(Vd a, Vd b) { return _mm512_add_pd(a, b); }
DLRT_SIMD_FN Vd sub_d(Vd a, Vd b) { return _mm512_sub_pd(a, b); }
DLRT_SIMD_FN Vd div_d(Vd a, Vd b) { return _mm512_div_pd(a, b); }
DLRT_SIMD_FN Vd fmadd_d(Vd a, Vd b, Vd c) { return _mm512_fmadd_pd(a, b, c); }
DLRT_SIMD_FN double hsum_d(Vd v) { return _mm512_reduce_add_pd(v); }
DLRT_SIMD_FN void storeu_d(double* p, Vd v) { _mm512_storeu_pd(p, v); }
DLRT_SIMD_FN Vd widen_lo(Vf v) { return _mm512_cvtps_pd(_mm512_castps512_ps256(v)); }
DLRT_SIMD_FN Vd widen_hi(Vf v) { return _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1)); }
DLRT_SIMD_FN void load_wide(const float* p, Vd& lo, Vd& hi) {
  lo = _mm512_cvtps_pd(_mm256_loadu_ps(p));
  hi = _mm512_cvtps_pd(_mm256_loadu_ps(p + 8));
}
DLRT_SIMD_FN Vd abs_d(Vd v) { return _mm512_andnot_pd(_mm512_set1_pd(-0.0), v); }
DLRT_SIMD_FN Vf narrow(Vd lo, Vd hi) {
  return _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(lo)), _mm512_cvtpd_ps(hi), 1);
}

DLRT_SIMD_FN void compress_store(float* p, Lanes m, Vf v) {
  _mm512_mask_compressstoreu_ps(p, static_cast<__mmask16>(m), v);
}
DLRT_SIMD_FN Vf expand_load(const float* p, Lanes m) {
  return _mm512_maskz_expandloadu_ps(static_cast<__mmask16>(m), p);
}
DLRT_SIMD_FN Vf load_blocks(const float* const (&p)[kBlocks]) {
  const __m256 lo = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(p[0])), _mm_loadu_ps(p[1]), 1);
  const __m256 hi = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(p[2])), _mm_loadu_ps(p[3]), 1);
  return _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1);
}
DLRT_SIMD_FN void store_block(float* p, Vf v, int b) {
  switch (b) {
    case 0:
      _mm_storeu_ps(p, _mm512_castps512_ps128(v));
      break;
    case 1:
      _mm_storeu_ps(p, _mm512_extractf32x4_ps(v, 1));
      break;
    case 2:
      _mm_storeu_ps(p, _mm512_extractf32x4_ps(v, 2));
      break;
    default:
      _mm_storeu_ps(p, _mm512_extractf32x4_ps(v, 3));
      break;
  }
}

// x[q] lane 4a + s = p[a][4s + q]: 4 x 4 blocks of 128 bits transposed, then
// the floats within each block.
DLRT_SIMD_FN void deinterleave4(const float* const (&p)[kBlocks], Vf (&x)[4]) {
  const __m512 l0 = _mm512_loadu_ps(p[0]), l1 = _mm512_loadu_ps(p[1]), l2 = _mm512_loadu_ps(p[2]),
               l3 = _mm512_loadu_ps(p[3]);
  // Block a of b_s: block s of l_a.
  const __m512 u0 = _mm512_shuffle_f32x4(l0, l1, 0x44), u1 = _mm512_shuffle_f32x4(l0, l1, 0xEE);
  const __m512 u2 = _mm512_shuffle_f32x4(l2, l3, 0x44), u3 = _mm512_shuffle_f32x4(l2, l3, 0xEE);
  const __m512 b0 = _mm512_shuffle_f32x4(u0, u2, 0x88), b1 = _mm512_shuffle_f32x4(u0, u2, 0xDD);
  const __m512 b2 = _mm512_shuffle_f32x4(u1, u3, 0x88), b3 = _mm512_shuffle_f32x4(u1, u3, 0xDD);
  const __m512 t0 = _mm512_unpacklo_ps(b0, b1), t1 = _mm512_unpackhi_ps(b0, b1);
  const __m512 t2 = _mm512_unpacklo_ps(b2, b3), t3 = _mm512_unpackhi_ps(b2, b3);
  x[0] = _mm512_shuffle_ps(t0, t2, 0x44);
  x[1] = _mm512_shuffle_ps(t0, t2, 0xEE);
  x[2] = _mm512_shuffle_ps(t1, t3, 0x44);
  x[3] = _mm512_shuffle_ps(t1, t3, 0xEE);
}

// o[a] float 4s + l = y[l] lane 4a + s (the inverse of deinterleave4, in registers).
DLRT_SIMD_FN void interleave4(const Vf (&y)[4], Vf (&o)[kBlocks]) {
  const __m512 u0 = _mm512_unpacklo_ps(y[0], y[1]), u1 = _mm512_unpackhi_ps(y[0], y[1]);
  const __m512 u2 = _mm512_unpacklo_ps(y[2], y[3]), u3 = _mm512_unpackhi_ps(y[2], y[3]);
  const __m512 w0 = _mm512_shuffle_ps(u0, u2, 0x44), w1 = _mm512_shuffle_ps(u0, u2, 0xEE);
  const __m512 w2 = _mm512_shuffle_ps(u1, u3, 0x44), w3 = _mm512_shuffle_ps(u1, u3, 0xEE);
  const __m512 v0 = _mm512_shuffle_f32x4(w0, w1, 0x44), v1 = _mm512_shuffle_f32x4(w0, w1, 0xEE);
  const __m512 v2 = _mm512_shuffle_f32x4(w2, w3, 0x44), v3 = _mm512_shuffle_f32x4(w2, w3, 0xEE);
  o[0] = _mm512_shuffle_f32x4(v0, v2, 0x88);
  o[1] = _mm512_shuffle_f32x4(v0, v2, 0xDD);
  o[2] = _mm512_shuffle_f32x4(v1, v3, 0x88);
  o[3] = _mm512_shuffle_f32x4(v1, v3, 0xDD);
}

// r[i] lane j <-> r[j] lane i: a 16 x 16 transpose in registers.
DLRT_SIMD_FN void transpose_square(Vf (&r)[kLanes]) {
  __m512 t[16];
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // r[4i + k], 128-bit lane L: column 4L + k of rows 4i .. 4i + 3.
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    const __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 1]);
    const __m512d c = _mm512_castps_pd(t[4 * i + 2]), d = _mm512_castps_pd(t[4 * i + 3]);
    r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    t[k] = _mm512_shuffle_f32x4(r[k], r[4 + k], 0x88);
    t[4 + k] = _mm512_shuffle_f32x4(r[k], r[4 + k], 0xdd);
    t[8 + k] = _mm512_shuffle_f32x4(r[8 + k], r[12 + k], 0x88);
    t[12 + k] = _mm512_shuffle_f32x4(r[8 + k], r[12 + k], 0xdd);
  }
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    r[k] = _mm512_shuffle_f32x4(t[k], t[8 + k], 0x88);
    r[8 + k] = _mm512_shuffle_f32x4(t[k], t[8 + k], 0xdd);
    r[4 + k] = _mm512_shuffle_f32x4(t[4 + k], t[12 + k], 0x88);
    r[12 + k] = _mm512_shuffle_f32x4(t[4 + k], t[12 + k], 0xdd);
  }
}

// e = the even floats of a | b (a's first), o = the odd ones.
DLRT_SIMD_FN void deinterleave2(Vf a, Vf b, Vf& e, Vf& o) {
  e = _mm512_permutex2var_ps(a, _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), b);
  o = _mm512_permutex2var_ps(a, _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31), b);
}

// v, from a register: a load the compiler would fold into each of v's uses
// (one load per use instead of one) stays a single load.
DLRT_SIMD_FN Vf in_register(Vf v) {
  __asm__("" : "+v"(v));
  return v;
}

// Lane permutes (simd.h): Index holds kLanes int32 lane indexes.
using Index = __m512i;
inline constexpr bool kNativePermute = true;
DLRT_SIMD_FN Index load_index(const int32_t* p) { return _mm512_loadu_si512(p); }
DLRT_SIMD_FN Index index_ramp(int32_t start, int32_t wrap) {
  return _mm512_and_si512(
      _mm512_add_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), _mm512_set1_epi32(start)),
      _mm512_set1_epi32(wrap));
}
DLRT_SIMD_FN Vf permute(Vf v, Index ix) { return _mm512_permutexvar_ps(ix, v); }
DLRT_SIMD_FN Vf permute2(Vf a, Vf b, Index ix) { return _mm512_permutex2var_ps(a, ix, b); }
DLRT_SIMD_FN Vf lookup4(const Vf (&v)[4], Index ix) {
  const __mmask16 real = _mm512_cmpge_epi32_mask(ix, _mm512_setzero_si512());
  const __mmask16 high = _mm512_cmpge_epi32_mask(ix, _mm512_set1_epi32(32));
  const __m512 lo = _mm512_permutex2var_ps(v[0], ix, v[1]), hi = _mm512_permutex2var_ps(v[2], ix, v[3]);
  return _mm512_maskz_mov_ps(real, _mm512_mask_blend_ps(high, lo, hi));
}
DLRT_SIMD_FN void interleave2(Vf a, Vf b, Vf& lo, Vf& hi) {
  lo = _mm512_permutex2var_ps(a, _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23), b);
  hi = _mm512_permutex2var_ps(a, _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31), b);
}

// Activations (activation_simd.h): recip_est(d) (1 / d for d in [1, 4]:
// the 14-bit estimate and one Newton step), lookup32(t, i) (t[i] per lane
// for integral i in [0, 31], t 64-byte aligned: one vpermt2ps).
DLRT_SIMD_FN Vf recip_est(Vf d) {
  const Vf y = _mm512_rcp14_ps(d);
  return _mm512_mul_ps(y, _mm512_fnmadd_ps(d, y, _mm512_set1_ps(2.0f)));
}
DLRT_SIMD_FN Vf lookup32(const float* t, Vf i) {
  return _mm512_permutex2var_ps(_mm512_load_ps(t), _mm512_cvttps_epi32(i), _mm512_load_ps(t + 16));
}

// Half vectors (Vh: kHalfLanes = kLanes / 2 floats, a ymm here), for the
// 8 floats of a packed 8-row panel column: the former AVX-512 kernels' ymm
// sequences (narrow edges, the A panel packing). Lane-range masks and moves
// through a Mask (the direct conv's stores that straddle two grid rows).
using Vh = __m256;
inline constexpr int kHalfLanes = 8;
DLRT_SIMD_FN Vh zero_h() { return _mm256_setzero_ps(); }
DLRT_SIMD_FN Vh set1_h(float x) { return _mm256_set1_ps(x); }
DLRT_SIMD_FN Vh loadu_h(const float* p) { return _mm256_loadu_ps(p); }
DLRT_SIMD_FN void storeu_h(float* p, Vh v) { _mm256_storeu_ps(p, v); }
DLRT_SIMD_FN Vh add_h(Vh a, Vh b) { return _mm256_add_ps(a, b); }
DLRT_SIMD_FN Vh mul_h(Vh a, Vh b) { return _mm256_mul_ps(a, b); }
DLRT_SIMD_FN Vh fmadd_h(Vh a, Vh b, Vh c) { return _mm256_fmadd_ps(a, b, c); }
// r[i] lane j <-> r[j] lane i (8 x 8).
DLRT_SIMD_FN void transpose_half(Vh (&r)[kHalfLanes]) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
  r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
  r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
  r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
  r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
  r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
  r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
  r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}
// Lanes [lo, hi) (clamped to [0, kLanes]); loads and stores of the lanes set in m only.
DLRT_SIMD_FN Mask lanes_range(int64_t lo, int64_t hi) { return static_cast<Mask>(first_mask(hi) & ~first_mask(lo)); }
DLRT_SIMD_FN Vf load_where(Mask m, const float* p) { return _mm512_maskz_loadu_ps(m, p); }
DLRT_SIMD_FN void store_where(float* p, Mask m, Vf v) { _mm512_mask_storeu_ps(p, m, v); }

// Quantization rows (quantize_rows_simd.h): hmin, int32 vectors (Vi32:
// kLanes lanes, adds wrap) converted to floats, and integral floats in
// [-128, 255] stored as bytes (each lane's int32 low byte).
DLRT_SIMD_FN float hmin(Vf v) { return _mm512_reduce_min_ps(v); }
using Vi32 = __m512i;
DLRT_SIMD_FN Vi32 set1_i32(int32_t x) { return _mm512_set1_epi32(x); }
DLRT_SIMD_FN Vi32 loadu_i32(const int32_t* p) { return _mm512_loadu_si512(p); }
DLRT_SIMD_FN Vi32 load_first_i32(const int32_t* p, int64_t n) { return _mm512_maskz_loadu_epi32(first_mask(n), p); }
DLRT_SIMD_FN Vi32 add_i32(Vi32 a, Vi32 b) { return _mm512_add_epi32(a, b); }
DLRT_SIMD_FN Vi32 sub_i32(Vi32 a, Vi32 b) { return _mm512_sub_epi32(a, b); }
DLRT_SIMD_FN Vf to_float(Vi32 v) { return _mm512_cvtepi32_ps(v); }
DLRT_SIMD_FN void store_bytes(void* p, Vf v, int64_t n) {
  const __m512i q = _mm512_cvtps_epi32(v);
  if (n >= 16)
    _mm_storeu_si128(static_cast<__m128i*>(p), _mm512_cvtepi32_epi8(q));
  else
    _mm512_mask_cvtepi32_storeu_epi8(p, first_mask(n), q);
}

// Integer sums (depthwise_int8_simd.h): int16 widened to int32, low halves
// of products (wrapping), int32 stores.
DLRT_SIMD_FN Vi32 load_i16_i32(const int16_t* p) {
  return _mm512_cvtepi16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
DLRT_SIMD_FN Vi32 load_first_i16_i32(const int16_t* p, int64_t n) {
  return _mm512_cvtepi16_epi32(_mm256_maskz_loadu_epi16(first_mask(n), p));
}
DLRT_SIMD_FN Vi32 mullo_i32(Vi32 a, Vi32 b) { return _mm512_mullo_epi32(a, b); }
DLRT_SIMD_FN void storeu_i32(int32_t* p, Vi32 v) { _mm512_storeu_si512(p, v); }
DLRT_SIMD_FN void store_first_i32(int32_t* p, Vi32 v, int64_t n) { _mm512_mask_storeu_epi32(p, first_mask(n), v); }

#undef DLRT_SIMD_FN

}  // namespace dlrt::cpu::simd::w512

#endif  // x86
