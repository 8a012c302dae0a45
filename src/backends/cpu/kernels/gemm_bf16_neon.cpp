// The bf16 GEMM's BFMMLA engine (contracts in gemm_bf16.h): the scalar model
// of the instruction's arithmetic (any CPU, so x86 tests it too) and, on
// aarch64, the NEON register tile on the packed layouts every CPU shares.
//
// BFMMLA multiplies a 2x4 bf16 block by a 4x2 one into a 2x2 fp32 block; the
// packed layouts keep K in pairs per row (A) and per column (B), so one ZIP1 /
// ZIP2 of pairs 2q and 2q + 1 gives two rows' (or two columns') four k each.
// The tile holds 8 rows x 8 columns (16 accumulators of 2x2) for the whole K
// and walks the 48-column B panel in blocks of 8.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "backends/cpu/kernels/gemm_bf16.h"

#if defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace dlrt::cpu {
namespace {

constexpr uint32_t kDefaultNan = 0x7fc00000u;

// A BFUnpack'ed operand: denormals are zeros of their sign, every NaN quiet.
struct Operand {
  enum Kind : uint8_t { kZero, kFinite, kInf, kNan } kind;
  bool neg;
  double value;  // kFinite only (signed)
};

Operand unpack(uint32_t u) {
  const uint32_t exp = (u >> 23) & 0xffu;
  const bool neg = (u >> 31) != 0;
  if (exp == 0) return {Operand::kZero, neg, 0.0};
  if (exp == 0xffu) return {(u & 0x7fffffu) ? Operand::kNan : Operand::kInf, neg, 0.0};
  return {Operand::kFinite, neg, static_cast<double>(std::bit_cast<float>(u))};
}

float signed_value(bool neg, uint32_t magnitude) { return std::bit_cast<float>((neg ? 0x80000000u : 0u) | magnitude); }

// BFRound of the exact nonzero value s + e (e: TwoSum's error of s, |e| <= half
// an ulp of s; 0 when s is exact): below 2^-126 a zero of its sign, from 2^128
// an infinity, else rounded to odd (the value when it fits 24 bits, else of the
// two floats around it the one whose last mantissa bit is 1).
float round_odd(double s, double e) {
  const bool neg = s < 0;
  const double m = neg ? -s : s, me = neg ? -e : e;  // |value| = m + me
  constexpr double kMinNormal = 0x1p-126, kOverflow = 0x1p128;
  if (m < kMinNormal || (m == kMinNormal && me < 0)) return signed_value(neg, 0);
  if (m > kOverflow || (m == kOverflow && me >= 0)) return signed_value(neg, 0x7f800000u);
  if (m == kOverflow) return signed_value(neg, 0x7f7fffffu);
  // m truncated to a float's 24 significant bits (m's exponent is a float's here).
  const double t = std::bit_cast<double>(std::bit_cast<uint64_t>(m) & ~((uint64_t{1} << 29) - 1));
  uint32_t r = std::bit_cast<uint32_t>(static_cast<float>(t));
  const double rest = m - t;  // exact; when nonzero it outweighs me
  if (rest == 0 && me < 0)
    r = (r - 1) | 1u;  // the value lies just below t
  else if (rest != 0 || me != 0)
    r |= 1u;
  return signed_value(neg, r);
}

// BFMul of two bf16 values (each the high half of x, y).
float bf_mul(uint32_t x, uint32_t y) {
  const Operand a = unpack(x), b = unpack(y);
  const bool neg = a.neg != b.neg;
  if (a.kind == Operand::kNan || b.kind == Operand::kNan) return std::bit_cast<float>(kDefaultNan);
  if ((a.kind == Operand::kInf && b.kind == Operand::kZero) || (a.kind == Operand::kZero && b.kind == Operand::kInf))
    return std::bit_cast<float>(kDefaultNan);
  if (a.kind == Operand::kInf || b.kind == Operand::kInf) return signed_value(neg, 0x7f800000u);
  if (a.kind == Operand::kZero || b.kind == Operand::kZero) return signed_value(neg, 0);
  return round_odd(a.value * b.value, 0.0);  // 8-bit significands: the product is exact in double
}

// BFAdd of two fp32 values.
float bf_add(float x, float y) {
  const Operand a = unpack(std::bit_cast<uint32_t>(x)), b = unpack(std::bit_cast<uint32_t>(y));
  if (a.kind == Operand::kNan || b.kind == Operand::kNan) return std::bit_cast<float>(kDefaultNan);
  if (a.kind == Operand::kInf && b.kind == Operand::kInf && a.neg != b.neg) return std::bit_cast<float>(kDefaultNan);
  if (a.kind == Operand::kInf) return signed_value(a.neg, 0x7f800000u);
  if (b.kind == Operand::kInf) return signed_value(b.neg, 0x7f800000u);
  if (a.kind == Operand::kZero && b.kind == Operand::kZero && a.neg == b.neg) return signed_value(a.neg, 0);
  const double u = a.kind == Operand::kZero ? 0.0 : a.value, v = b.kind == Operand::kZero ? 0.0 : b.value;
  const double s = u + v, bv = s - u, e = (u - (s - bv)) + (v - bv);  // TwoSum: s + e == u + v exactly
  if (s == 0) return 0.0f;                                            // an exact zero is +0
  return round_odd(s, e);
}

}  // namespace

float bf16_mmla_dot_model(float acc, uint32_t a, uint32_t b) {
  const float lo = bf_mul(a << 16, b << 16), hi = bf_mul(a & 0xffff0000u, b & 0xffff0000u);
  return bf_add(acc, bf_add(lo, hi));
}

void bf16_kernel_mmla_model(int64_t kp, const uint32_t* a, const uint32_t* b, float* c, int64_t ldc, float alpha,
                            float beta, int mr, int nr) {
  for (int r = 0; r < mr; ++r)
    for (int j = 0; j < nr; ++j) {
      float acc = 0.0f;
      for (int64_t p = 0; p < kp; ++p) acc = bf16_mmla_dot_model(acc, a[p * kBf16MR + r], b[p * kBf16NR + j]);
      if (kp % 2) acc = bf16_mmla_dot_model(acc, 0u, 0u);  // the zero pair completing the last BFMMLA
      float x = alpha * acc;
      if (beta != 0.0f) x = std::fma(beta, c[r * ldc + j], x);
      c[r * ldc + j] = x;
    }
}

#if defined(__aarch64__)
#define DLRT_NEON_BF16 __attribute__((target("arch=armv8.2-a+bf16")))

namespace {

// One K step of four (pairs p and p + 1 of a and b; with kSecond false pair
// p + 1 is zeros) for RP row pairs and CG groups of four columns.
// acc[r][m]: rows 2r, 2r + 1 by columns 2m, 2m + 1, as BFMMLA leaves them.
template <int RP, int CG, bool kSecond>
DLRT_NEON_BF16 __attribute__((always_inline)) inline void step(float32x4_t (&acc)[RP][2 * CG], const uint32_t* a,
                                                               const uint32_t* b) {
  const uint32x4_t zero = vdupq_n_u32(0);
  bfloat16x8_t av[RP];
  for (int h = 0; 2 * h < RP; ++h) {
    const uint32x4_t p0 = vld1q_u32(a + 4 * h), p1 = kSecond ? vld1q_u32(a + kBf16MR + 4 * h) : zero;
    av[2 * h] = vreinterpretq_bf16_u32(vzip1q_u32(p0, p1));  // rows 4h, 4h + 1: four k each
    if (2 * h + 1 < RP) av[2 * h + 1] = vreinterpretq_bf16_u32(vzip2q_u32(p0, p1));
  }
  for (int g = 0; g < CG; ++g) {
    const uint32x4_t q0 = vld1q_u32(b + 4 * g), q1 = kSecond ? vld1q_u32(b + kBf16NR + 4 * g) : zero;
    const bfloat16x8_t b0 = vreinterpretq_bf16_u32(vzip1q_u32(q0, q1));  // columns 4g, 4g + 1
    const bfloat16x8_t b1 = vreinterpretq_bf16_u32(vzip2q_u32(q0, q1));  // columns 4g + 2, 4g + 3
    for (int r = 0; r < RP; ++r) {
      acc[r][2 * g] = vbfmmlaq_f32(acc[r][2 * g], av[r], b0);
      acc[r][2 * g + 1] = vbfmmlaq_f32(acc[r][2 * g + 1], av[r], b1);
    }
  }
}

// Rows [0, mr) (mr <= 2 * RP) x columns [0, nc) (nc <= 4 * CG) of one block.
template <int RP, int CG>
DLRT_NEON_BF16 void block(int64_t kp, const uint32_t* a, const uint32_t* b, float* c, int64_t ldc, float alpha,
                          float beta, int mr, int nc) {
  float32x4_t acc[RP][2 * CG];
  for (int r = 0; r < RP; ++r)
    for (int m = 0; m < 2 * CG; ++m) acc[r][m] = vdupq_n_f32(0.0f);
  int64_t p = 0;
  for (; p + 1 < kp; p += 2) step<RP, CG, true>(acc, a + p * kBf16MR, b + p * kBf16NR);
  if (p < kp) step<RP, CG, false>(acc, a + p * kBf16MR, b + p * kBf16NR);
  const float32x4_t va = vdupq_n_f32(alpha), vb = vdupq_n_f32(beta);
  for (int r = 0; r < RP; ++r)
    for (int g = 0; g < CG; ++g) {
      const int n = std::min(4, nc - 4 * g);
      if (n <= 0) break;
      const float64x2_t x0 = vreinterpretq_f64_f32(acc[r][2 * g]), x1 = vreinterpretq_f64_f32(acc[r][2 * g + 1]);
      const float32x4_t rows[2] = {vreinterpretq_f32_f64(vzip1q_f64(x0, x1)),
                                   vreinterpretq_f32_f64(vzip2q_f64(x0, x1))};
      for (int h = 0; h < 2; ++h) {
        if (2 * r + h >= mr) break;
        float* out = c + (2 * r + h) * ldc + 4 * g;
        float edge[4] = {0, 0, 0, 0};
        float* io = n == 4 ? out : edge;
        if (n < 4 && beta != 0.0f) std::copy(out, out + n, edge);
        float32x4_t x = vmulq_f32(va, rows[h]);
        if (beta != 0.0f) x = vfmaq_f32(x, vb, vld1q_f32(io));  // fma(beta, c, alpha * ab), as the model
        vst1q_f32(io, x);
        if (n < 4) std::copy(edge, edge + n, out);
      }
    }
}

template <int RP>
DLRT_NEON_BF16 void blocks(int64_t kp, const uint32_t* a, const uint32_t* b, float* c, int64_t ldc, float alpha,
                           float beta, int mr, int nr) {
  for (int j0 = 0; j0 < nr; j0 += 8) {
    const int nc = std::min(8, nr - j0);
    if (nc > 4)
      block<RP, 2>(kp, a, b + j0, c + j0, ldc, alpha, beta, mr, nc);
    else
      block<RP, 1>(kp, a, b + j0, c + j0, ldc, alpha, beta, mr, nc);
  }
}

}  // namespace

DLRT_NEON_BF16 void bf16_kernel_neon(int64_t kp, const uint32_t* a, const uint32_t* b, float* c, int64_t ldc,
                                     float alpha, float beta, int mr, int nr) {
  static_assert(kBf16MR == 8 && kBf16NR % 8 == 0, "the tile is four row pairs by blocks of eight columns");
  // A short edge panel skips the BFMMLAs of its all-padding row pairs.
  switch ((mr + 1) / 2) {
    case 1:
      return blocks<1>(kp, a, b, c, ldc, alpha, beta, mr, nr);
    case 2:
      return blocks<2>(kp, a, b, c, ldc, alpha, beta, mr, nr);
    case 3:
      return blocks<3>(kp, a, b, c, ldc, alpha, beta, mr, nr);
    default:
      return blocks<4>(kp, a, b, c, ldc, alpha, beta, mr, nr);
  }
}
#endif

}  // namespace dlrt::cpu
