// The 128-bit instantiation of the simd interface (simd.h): 4 floats a
// vector in GCC/Clang vector extensions, so it compiles to SSE on x86 and
// to NEON on aarch64 with no intrinsics but fmadd / fnmadd (NEON's fmla /
// fmls; a multiply and an add on x86's baseline, which has no FMA). It is the
// width of NEON and runs on every x86 CPU,
// so a kernel written over simd.h is testable at 128 bits anywhere. Include
// only through instantiate.h.
#pragma once

#include <cstring>

#if defined(__aarch64__)
#include <arm_neon.h>
#endif

#include "backends/cpu/kernels/simd/simd.h"

namespace dlrt::cpu::simd::w128 {

#define DLRT_SIMD_FN __attribute__((always_inline)) inline

using Vf = float __attribute__((vector_size(16), aligned(16)));
using Lanes = uint32_t;
inline constexpr int kLanes = 4;
inline constexpr int kBlocks = 1;
#if defined(__aarch64__)
inline constexpr int kRegisters = 32;  // NEON's v0-v31
#else
inline constexpr int kRegisters = 16;  // SSE's xmm0-15
#endif
inline constexpr bool kNativeCompress = false;
inline constexpr SimdWidth kWidth = SimdWidth::k128;

DLRT_SIMD_FN Vf zero() { return Vf{0.0f, 0.0f, 0.0f, 0.0f}; }
DLRT_SIMD_FN Vf set1(float x) { return Vf{x, x, x, x}; }
DLRT_SIMD_FN Vf loadu(const float* p) {
  Vf v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
DLRT_SIMD_FN void storeu(float* p, Vf v) { std::memcpy(p, &v, sizeof v); }
DLRT_SIMD_FN Vf load_first(const float* p, int64_t n) {
  if (n >= 4) return loadu(p);
  Vf v = zero();
  for (int64_t i = 0; i < n; ++i) v[i] = p[i];
  return v;
}
DLRT_SIMD_FN void store_first(float* p, Vf v, int64_t n) {
  if (n >= 4) return storeu(p, v);
  for (int64_t i = 0; i < n; ++i) p[i] = v[i];
}
DLRT_SIMD_FN Vf load_lanes(const float* p, int64_t lo, int64_t hi) {
  Vf v = zero();
  for (int64_t i = lo < 0 ? 0 : lo; i < hi && i < 4; ++i) v[i] = p[i];
  return v;
}

DLRT_SIMD_FN Vf add(Vf a, Vf b) { return a + b; }
DLRT_SIMD_FN Vf sub(Vf a, Vf b) { return a - b; }
DLRT_SIMD_FN Vf mul(Vf a, Vf b) { return a * b; }
DLRT_SIMD_FN Vf div(Vf a, Vf b) { return a / b; }
#if defined(__aarch64__)
// Fused (fmla / fmls): aarch64 builds with -ffp-contract=off, so a*b + c is never fused implicitly.
DLRT_SIMD_FN Vf fmadd(Vf a, Vf b, Vf c) {
  return reinterpret_cast<Vf>(vfmaq_f32(reinterpret_cast<float32x4_t>(c), reinterpret_cast<float32x4_t>(a),
                                        reinterpret_cast<float32x4_t>(b)));
}
DLRT_SIMD_FN Vf fnmadd(Vf a, Vf b, Vf c) {
  return reinterpret_cast<Vf>(vfmsq_f32(reinterpret_cast<float32x4_t>(c), reinterpret_cast<float32x4_t>(a),
                                        reinterpret_cast<float32x4_t>(b)));
}
#else
// x86's baseline (SSE2) has no FMA: a multiply and an add.
DLRT_SIMD_FN Vf fmadd(Vf a, Vf b, Vf c) { return a * b + c; }
DLRT_SIMD_FN Vf fnmadd(Vf a, Vf b, Vf c) { return c - a * b; }
#endif
// x86 semantics: the second operand where either is NaN or they are equal.
DLRT_SIMD_FN Vf min(Vf a, Vf b) { return a < b ? a : b; }
DLRT_SIMD_FN Vf max(Vf a, Vf b) { return a > b ? a : b; }
DLRT_SIMD_FN float hsum(Vf v) { return (v[0] + v[2]) + (v[1] + v[3]); }
DLRT_SIMD_FN float hmax(Vf v) {
  const float a = v[0] > v[2] ? v[0] : v[2], b = v[1] > v[3] ? v[1] : v[3];
  return a > b ? a : b;
}

// Lane masks (all bits of a lane set or clear) and the operations behind
// the vector math (simd/math_simd.h).
using Vi = int32_t __attribute__((vector_size(16), aligned(16)));
using Mask = Vi;
DLRT_SIMD_FN Mask lt(Vf a, Vf b) { return a < b; }
DLRT_SIMD_FN Mask nlt(Vf a, Vf b) { return ~(a < b); }
DLRT_SIMD_FN Mask unord(Vf a, Vf b) { return (a != a) | (b != b); }
DLRT_SIMD_FN Vf select(Mask m, Vf t, Vf f) { return m ? t : f; }
DLRT_SIMD_FN Vf mul_where(Mask m, Vf a, Vf b, Vf f) { return m ? a * b : f; }
DLRT_SIMD_FN Vf bits(Vi v) { return reinterpret_cast<Vf>(v); }
DLRT_SIMD_FN Vi ibits(Vf v) { return reinterpret_cast<Vi>(v); }
DLRT_SIMD_FN Vf bit_or(Vf a, Vf b) { return bits(ibits(a) | ibits(b)); }
DLRT_SIMD_FN Vf bit_and(Vf a, Vf b) { return bits(ibits(a) & ibits(b)); }
DLRT_SIMD_FN Vf bit_andnot(Vf a, Vf b) { return bits(~ibits(a) & ibits(b)); }
// Ties to even for |v| < 2^22 (adding and removing 1.5 * 2^23 in the default rounding mode).
DLRT_SIMD_FN Vf round_nearest(Vf v) {
  const Vf magic = set1(12582912.0f);
  return (v + magic) - magic;
}
// n integral in [-126, 128]: 2^n built in the exponent field (2^128: inf).
DLRT_SIMD_FN Vf scale2(Vf p, Vf n) {
  const Vi k = __builtin_convertvector(min(max(n, set1(-127.0f)), set1(128.0f)), Vi);  // in range for NaN too
  return p * bits((k + 127) << 23);
}
DLRT_SIMD_FN Vf scale2_where(Mask m, Vf p, Vf n) { return bit_and(scale2(p, n), bits(m)); }
DLRT_SIMD_FN Vf recip_1_2(Vf d) { return set1(1.0f) / d; }

DLRT_SIMD_FN Mask mask_or(Mask a, Mask b) { return a | b; }
DLRT_SIMD_FN bool any(Mask m) { return (m[0] | m[1] | m[2] | m[3]) != 0; }
DLRT_SIMD_FN Mask first_lanes(int64_t n) {
  const int32_t c = static_cast<int32_t>(n < 0 ? 0 : n > 4 ? 4 : n);
  return Vi{0, 1, 2, 3} < Vi{c, c, c, c};
}

DLRT_SIMD_FN Vf even_lanes(Vf a, Vf c) { return __builtin_shufflevector(a, c, 0, 2, 4, 6); }
DLRT_SIMD_FN Vf odd_lanes(Vf a, Vf c) { return __builtin_shufflevector(a, c, 1, 3, 5, 7); }
DLRT_SIMD_FN Vf load_strided(const float* p, int32_t s) { return Vf{p[0], p[s], p[2 * s], p[3 * s]}; }

using Vd = double __attribute__((vector_size(16), aligned(16)));
DLRT_SIMD_FN Vd zero_d() { return Vd{0.0, 0.0}; }
DLRT_SIMD_FN Vd set1_d(double x) { return Vd{x, x}; }
DLRT_SIMD_FN Vd add_d(Vd a, Vd b) { return a + b; }
DLRT_SIMD_FN Vd sub_d(Vd a, Vd b) { return a - b; }
DLRT_SIMD_FN Vd div_d(Vd a, Vd b) { return a / b; }
#if defined(__aarch64__)
DLRT_SIMD_FN Vd fmadd_d(Vd a, Vd b, Vd c) {
  return reinterpret_cast<Vd>(vfmaq_f64(reinterpret_cast<float64x2_t>(c), reinterpret_cast<float64x2_t>(a),
                                        reinterpret_cast<float64x2_t>(b)));
}
#else
DLRT_SIMD_FN Vd fmadd_d(Vd a, Vd b, Vd c) { return a * b + c; }
#endif
DLRT_SIMD_FN double hsum_d(Vd v) { return v[0] + v[1]; }
DLRT_SIMD_FN void storeu_d(double* p, Vd v) { std::memcpy(p, &v, sizeof v); }
DLRT_SIMD_FN Vd widen_lo(Vf v) { return Vd{v[0], v[1]}; }
DLRT_SIMD_FN Vd widen_hi(Vf v) { return Vd{v[2], v[3]}; }
DLRT_SIMD_FN void load_wide(const float* p, Vd& lo, Vd& hi) {
  const Vf v = loadu(p);
  lo = widen_lo(v);
  hi = widen_hi(v);
}
DLRT_SIMD_FN Vd abs_d(Vd v) { return v < 0 ? -v : v; }
DLRT_SIMD_FN Vf narrow(Vd lo, Vd hi) {
  return Vf{static_cast<float>(lo[0]), static_cast<float>(lo[1]), static_cast<float>(hi[0]), static_cast<float>(hi[1])};
}

DLRT_SIMD_FN void compress_store(float* p, Lanes m, Vf v) {
  for (int i = 0; i < 4; ++i)
    if (m >> i & 1u) *p++ = v[i];
}
DLRT_SIMD_FN Vf expand_load(const float* p, Lanes m) {
  Vf v = zero();
  for (int i = 0; i < 4; ++i)
    if (m >> i & 1u) v[i] = *p++;
  return v;
}
DLRT_SIMD_FN Vf load_blocks(const float* const (&p)[kBlocks]) { return loadu(p[0]); }
DLRT_SIMD_FN void store_block(float* p, Vf v, int) { storeu(p, v); }

namespace detail {
DLRT_SIMD_FN void transpose4(const Vf (&b)[4], Vf (&x)[4]) {
  for (int q = 0; q < 4; ++q) x[q] = Vf{b[0][q], b[1][q], b[2][q], b[3][q]};
}
}  // namespace detail

// x[q] lane s = p[0][4s + q].
DLRT_SIMD_FN void deinterleave4(const float* const (&p)[kBlocks], Vf (&x)[4]) {
  const Vf b[4] = {loadu(p[0]), loadu(p[0] + 4), loadu(p[0] + 8), loadu(p[0] + 12)};
  detail::transpose4(b, x);
}

// o[s] float l = y[l] lane s: the group's 16 floats in order.
DLRT_SIMD_FN void interleave4(const Vf (&y)[4], Vf (&o)[4]) { detail::transpose4(y, o); }

// r[i] lane j <-> r[j] lane i: a 4 x 4 transpose.
DLRT_SIMD_FN void transpose_square(Vf (&r)[kLanes]) {
  const Vf b[4] = {r[0], r[1], r[2], r[3]};
  detail::transpose4(b, r);
}

// e = the even floats of a | b (a's first), o = the odd ones.
DLRT_SIMD_FN void deinterleave2(Vf a, Vf b, Vf& e, Vf& o) {
  e = __builtin_shufflevector(a, b, 0, 2, 4, 6);
  o = __builtin_shufflevector(a, b, 1, 3, 5, 7);
}

// v, from a register: a load the compiler would fold into each of v's uses
// (one load per use instead of one) stays a single load.
DLRT_SIMD_FN Vf in_register(Vf v) {
#if defined(__aarch64__)
  __asm__("" : "+w"(v));
#else
  __asm__("" : "+x"(v));
#endif
  return v;
}

// Lane permutes (simd.h). aarch64: Index holds the byte indexes of NEON's
// table lookups (tbl), lane index j as bytes 4j .. 4j + 3 and 0xff (a zero
// byte) outside [0, 16); x86's baseline has no variable permute of floats
// (kNativePermute false: kernels take their portable loops there).
#if defined(__aarch64__)
using Index = uint8x16_t;
inline constexpr bool kNativePermute = true;
DLRT_SIMD_FN Index index_of(uint32x4_t j) {
  const uint32x4_t bytes = vmlaq_n_u32(vdupq_n_u32(0x03020100u), j, 0x04040404u);
  return vreinterpretq_u8_u32(vorrq_u32(bytes, vmvnq_u32(vcltq_u32(j, vdupq_n_u32(16)))));
}
DLRT_SIMD_FN Index load_index(const int32_t* p) { return index_of(vreinterpretq_u32_s32(vld1q_s32(p))); }
DLRT_SIMD_FN Index index_ramp(int32_t start, int32_t wrap) {
  const uint32x4_t ramp = {0, 1, 2, 3};
  return index_of(vandq_u32(vaddq_u32(ramp, vdupq_n_u32(static_cast<uint32_t>(start))),
                            vdupq_n_u32(static_cast<uint32_t>(wrap))));
}
DLRT_SIMD_FN uint8x16_t bytes_of(Vf v) { return vreinterpretq_u8_f32(reinterpret_cast<float32x4_t>(v)); }
DLRT_SIMD_FN Vf from_bytes(uint8x16_t b) { return reinterpret_cast<Vf>(vreinterpretq_f32_u8(b)); }
DLRT_SIMD_FN Vf permute(Vf v, Index ix) { return from_bytes(vqtbl1q_u8(bytes_of(v), ix)); }
DLRT_SIMD_FN Vf permute2(Vf a, Vf b, Index ix) {
  const uint8x16x2_t t = {{bytes_of(a), bytes_of(b)}};
  return from_bytes(vqtbl2q_u8(t, ix));
}
DLRT_SIMD_FN Vf lookup4(const Vf (&v)[4], Index ix) {
  const uint8x16x4_t t = {{bytes_of(v[0]), bytes_of(v[1]), bytes_of(v[2]), bytes_of(v[3])}};
  return from_bytes(vqtbl4q_u8(t, ix));
}
#else
using Index = Vi;
inline constexpr bool kNativePermute = false;
DLRT_SIMD_FN Index load_index(const int32_t* p) {
  Index v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
DLRT_SIMD_FN Index index_ramp(int32_t start, int32_t wrap) { return (Vi{0, 1, 2, 3} + start) & wrap; }
DLRT_SIMD_FN Vf permute(Vf v, Index ix) { return Vf{v[ix[0] & 3], v[ix[1] & 3], v[ix[2] & 3], v[ix[3] & 3]}; }
DLRT_SIMD_FN Vf permute2(Vf a, Vf b, Index ix) {
  Vf r;
  for (int i = 0; i < 4; ++i) r[i] = ix[i] & 4 ? b[ix[i] & 3] : a[ix[i] & 3];
  return r;
}
DLRT_SIMD_FN Vf lookup4(const Vf (&v)[4], Index ix) {
  Vf r;
  for (int i = 0; i < 4; ++i) r[i] = ix[i] < 0 ? 0.0f : v[ix[i] >> 2 & 3][ix[i] & 3];
  return r;
}
#endif
// lo = a0 b0 a1 b1, hi = a2 b2 a3 b3 (NEON's zip1 / zip2).
DLRT_SIMD_FN void interleave2(Vf a, Vf b, Vf& lo, Vf& hi) {
  lo = __builtin_shufflevector(a, b, 0, 4, 1, 5);
  hi = __builtin_shufflevector(a, b, 2, 6, 3, 7);
}

// Activations (activation_simd.h): recip_est(d) (1 / d for d in [1, 4]; a
// division here), lookup32(t, i) (t[i] per lane for integral i in [0, 31]).
DLRT_SIMD_FN Vf recip_est(Vf d) { return set1(1.0f) / d; }
DLRT_SIMD_FN Vf lookup32(const float* t, Vf i) {
  return Vf{t[static_cast<int>(i[0])], t[static_cast<int>(i[1])], t[static_cast<int>(i[2])], t[static_cast<int>(i[3])]};
}

// Half vectors (Vh: kHalfLanes = kLanes / 2 floats), lane-range masks and
// moves through a Mask (simd.h).
using Vh = float __attribute__((vector_size(8), aligned(8)));
inline constexpr int kHalfLanes = 2;
DLRT_SIMD_FN Vh zero_h() { return Vh{0.0f, 0.0f}; }
DLRT_SIMD_FN Vh set1_h(float x) { return Vh{x, x}; }
DLRT_SIMD_FN Vh loadu_h(const float* p) {
  Vh v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
DLRT_SIMD_FN void storeu_h(float* p, Vh v) { std::memcpy(p, &v, sizeof v); }
DLRT_SIMD_FN Vh add_h(Vh a, Vh b) { return a + b; }
DLRT_SIMD_FN Vh mul_h(Vh a, Vh b) { return a * b; }
#if defined(__aarch64__)
DLRT_SIMD_FN Vh fmadd_h(Vh a, Vh b, Vh c) {
  return reinterpret_cast<Vh>(vfma_f32(reinterpret_cast<float32x2_t>(c), reinterpret_cast<float32x2_t>(a),
                                       reinterpret_cast<float32x2_t>(b)));
}
#else
DLRT_SIMD_FN Vh fmadd_h(Vh a, Vh b, Vh c) { return a * b + c; }
#endif
// r[i] lane j <-> r[j] lane i (2 x 2).
DLRT_SIMD_FN void transpose_half(Vh (&r)[kHalfLanes]) {
  const Vh a = r[0];
  r[0] = __builtin_shufflevector(a, r[1], 0, 2);
  r[1] = __builtin_shufflevector(a, r[1], 1, 3);
}
DLRT_SIMD_FN Mask lanes_range(int64_t lo, int64_t hi) { return ~first_lanes(lo) & first_lanes(hi); }
DLRT_SIMD_FN Vf load_where(Mask m, const float* p) {
  Vf v = zero();
  for (int i = 0; i < 4; ++i)
    if (m[i]) v[i] = p[i];
  return v;
}
DLRT_SIMD_FN void store_where(float* p, Mask m, Vf v) {
  for (int i = 0; i < 4; ++i)
    if (m[i]) p[i] = v[i];
}

// Quantization rows (quantize_rows_simd.h): hmin, int32 vectors (Vi32, adds
// wrap) converted to floats, integral floats in [-128, 255] stored as bytes
// (each lane's int32 low byte).
DLRT_SIMD_FN float hmin(Vf v) {
  const float a = v[0] < v[2] ? v[0] : v[2], b = v[1] < v[3] ? v[1] : v[3];
  return a < b ? a : b;
}
using Vi32 = Vi;
using Vu32 = uint32_t __attribute__((vector_size(16), aligned(16)));
DLRT_SIMD_FN Vi32 set1_i32(int32_t x) { return Vi32{x, x, x, x}; }
DLRT_SIMD_FN Vi32 loadu_i32(const int32_t* p) {
  Vi32 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
DLRT_SIMD_FN Vi32 load_first_i32(const int32_t* p, int64_t n) {
  if (n >= 4) return loadu_i32(p);
  Vi32 v = set1_i32(0);
  for (int64_t i = 0; i < n; ++i) v[i] = p[i];
  return v;
}
DLRT_SIMD_FN Vi32 add_i32(Vi32 a, Vi32 b) { return reinterpret_cast<Vi32>(reinterpret_cast<Vu32>(a) + reinterpret_cast<Vu32>(b)); }
DLRT_SIMD_FN Vi32 sub_i32(Vi32 a, Vi32 b) { return reinterpret_cast<Vi32>(reinterpret_cast<Vu32>(a) - reinterpret_cast<Vu32>(b)); }
DLRT_SIMD_FN Vf to_float(Vi32 v) { return __builtin_convertvector(v, Vf); }
DLRT_SIMD_FN void store_bytes(void* p, Vf v, int64_t n) {
  const Vi32 q = __builtin_convertvector(select(unord(v, v), zero(), v), Vi32);  // NaN: 0, defined
  for (int64_t i = 0; i < n && i < 4; ++i) static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(q[i]);
}

// Integer sums (depthwise_int8_simd.h): int16 widened to int32, low halves
// of products (wrapping), int32 stores.
using Vi16x4 = int16_t __attribute__((vector_size(8), aligned(8)));
DLRT_SIMD_FN Vi32 load_i16_i32(const int16_t* p) {
  Vi16x4 h;
  std::memcpy(&h, p, sizeof h);
  return __builtin_convertvector(h, Vi32);
}
DLRT_SIMD_FN Vi32 load_first_i16_i32(const int16_t* p, int64_t n) {
  if (n >= 4) return load_i16_i32(p);
  Vi32 v = set1_i32(0);
  for (int64_t i = 0; i < n; ++i) v[i] = p[i];
  return v;
}
DLRT_SIMD_FN Vi32 mullo_i32(Vi32 a, Vi32 b) {
  return reinterpret_cast<Vi32>(reinterpret_cast<Vu32>(a) * reinterpret_cast<Vu32>(b));
}
DLRT_SIMD_FN void storeu_i32(int32_t* p, Vi32 v) { std::memcpy(p, &v, sizeof v); }
DLRT_SIMD_FN void store_first_i32(int32_t* p, Vi32 v, int64_t n) {
  if (n >= 4) return storeu_i32(p, v);
  for (int64_t i = 0; i < n; ++i) p[i] = v[i];
}

#undef DLRT_SIMD_FN

}  // namespace dlrt::cpu::simd::w128
