// The aarch64 kernels of the 8-bit GEMM (gemm_int8.h): 4 rows x 16 columns on
// the portable byte layouts (A: group g, row i at (g * 4 + i) * 4; B: group g,
// column c at g * 64 + c * 4), raw sums of uint8 A times int8 B, wrapping as
// the portable tile does, so every kernel gives the same bits:
//   i8mm:    USMMLA (uint8 x int8 2x8 by 8x2 blocks) on pairs of groups;
//   dotprod: SDOT by element on A - 128 (int8), plus 128 * sum_k B per column
//            (an SDOT of B with -128, subtracted);
//   neon:    products in int16 (|u8 * s8| <= 32640 cannot wrap), pairs summed
//            into int32 (SADALP).
// The two extensions are compiled per function (target attributes), so the
// baseline armv8-a build runs everywhere; gemm_int8.cpp picks by HWCAP.
#include <cstdint>

#include "backends/cpu/kernels/gemm_int8.h"

#if defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace dlrt::cpu::int8_detail {

#if defined(__aarch64__)
namespace {

__attribute__((target("arch=armv8.2-a+dotprod"))) void int8_dotprod_tile(int64_t kg, const uint8_t* a, const int8_t* b,
                                                                         int64_t, int32_t* acc, bool accumulate) {
  int32x4_t c[4][4], bsum[4];  // c: row i, columns 4q..4q + 3
  for (int i = 0; i < 4; ++i)
    for (int q = 0; q < 4; ++q) c[i][q] = accumulate ? vld1q_s32(acc + i * 16 + q * 4) : vdupq_n_s32(0);
  for (int q = 0; q < 4; ++q) bsum[q] = vdupq_n_s32(0);
  const int8x16_t minus128 = vdupq_n_s8(-128);
  const uint8x16_t flip = vdupq_n_u8(0x80);
  for (int64_t g = 0; g < kg; ++g) {
    const int8x16_t ag = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(a + g * 16), flip));  // A - 128
    const int8_t* bg = b + g * 64;
    for (int q = 0; q < 4; ++q) {
      const int8x16_t bq = vld1q_s8(bg + q * 16);
      bsum[q] = vdotq_s32(bsum[q], bq, minus128);
      c[0][q] = vdotq_laneq_s32(c[0][q], bq, ag, 0);
      c[1][q] = vdotq_laneq_s32(c[1][q], bq, ag, 1);
      c[2][q] = vdotq_laneq_s32(c[2][q], bq, ag, 2);
      c[3][q] = vdotq_laneq_s32(c[3][q], bq, ag, 3);
    }
  }
  // sum A * B = sum (A - 128) * B + 128 * sum B = c - bsum.
  for (int i = 0; i < 4; ++i)
    for (int q = 0; q < 4; ++q) vst1q_s32(acc + i * 16 + q * 4, vsubq_s32(c[i][q], bsum[q]));
}

__attribute__((target("arch=armv8.2-a+i8mm"))) void int8_i8mm_tile(int64_t kg, const uint8_t* a, const int8_t* b,
                                                                   int64_t, int32_t* acc, bool accumulate) {
  // c[p][m]: rows 2p, 2p + 1 by columns 2m, 2m + 1, as USMMLA leaves them.
  int32x4_t c[2][8];
  for (int p = 0; p < 2; ++p)
    for (int m = 0; m < 8; ++m) c[p][m] = vdupq_n_s32(0);
  for (int64_t g = 0; g < kg; g += 2) {
    // Two groups side by side: 8 k per row (A) and per column (B); a missing
    // second group is zeros.
    const bool pair = g + 1 < kg;
    const uint32x4_t a0 = vreinterpretq_u32_u8(vld1q_u8(a + g * 16));
    const uint32x4_t a1 = pair ? vreinterpretq_u32_u8(vld1q_u8(a + g * 16 + 16)) : vdupq_n_u32(0);
    const uint8x16_t rows01 = vreinterpretq_u8_u32(vzip1q_u32(a0, a1));
    const uint8x16_t rows23 = vreinterpretq_u8_u32(vzip2q_u32(a0, a1));
    for (int q = 0; q < 4; ++q) {
      const uint32x4_t b0 = vreinterpretq_u32_s8(vld1q_s8(b + g * 64 + q * 16));
      const uint32x4_t b1 = pair ? vreinterpretq_u32_s8(vld1q_s8(b + g * 64 + 64 + q * 16)) : vdupq_n_u32(0);
      const int8x16_t lo = vreinterpretq_s8_u32(vzip1q_u32(b0, b1));  // columns 4q, 4q + 1
      const int8x16_t hi = vreinterpretq_s8_u32(vzip2q_u32(b0, b1));  // columns 4q + 2, 4q + 3
      c[0][2 * q] = vusmmlaq_s32(c[0][2 * q], rows01, lo);
      c[0][2 * q + 1] = vusmmlaq_s32(c[0][2 * q + 1], rows01, hi);
      c[1][2 * q] = vusmmlaq_s32(c[1][2 * q], rows23, lo);
      c[1][2 * q + 1] = vusmmlaq_s32(c[1][2 * q + 1], rows23, hi);
    }
  }
  for (int p = 0; p < 2; ++p)
    for (int q = 0; q < 4; ++q) {
      const int64x2_t l = vreinterpretq_s64_s32(c[p][2 * q]), h = vreinterpretq_s64_s32(c[p][2 * q + 1]);
      int32_t* top = acc + (2 * p) * 16 + q * 4;
      int32_t* bottom = top + 16;
      int32x4_t t = vreinterpretq_s32_s64(vzip1q_s64(l, h)), u = vreinterpretq_s32_s64(vzip2q_s64(l, h));
      if (accumulate) {
        t = vaddq_s32(t, vld1q_s32(top));
        u = vaddq_s32(u, vld1q_s32(bottom));
      }
      vst1q_s32(top, t);
      vst1q_s32(bottom, u);
    }
}

// Baseline Advanced SIMD: 8 columns at a time (16 accumulators of column
// pairs' half sums), int16 products summed pairwise into int32.
void int8_neon_tile(int64_t kg, const uint8_t* a, const int8_t* b, int64_t, int32_t* acc, bool accumulate) {
  for (int h = 0; h < 2; ++h) {
    int32x4_t c[4][4];  // row i, vector v: columns 8h + 2v, 8h + 2v + 1, two half sums each
    for (int i = 0; i < 4; ++i)
      for (int v = 0; v < 4; ++v) c[i][v] = vdupq_n_s32(0);
    for (int64_t g = 0; g < kg; ++g) {
      const uint8x16_t ag = vld1q_u8(a + g * 16);
      const uint64x2_t a01 = vreinterpretq_u64_u16(vmovl_u8(vget_low_u8(ag)));
      const uint64x2_t a23 = vreinterpretq_u64_u16(vmovl_u8(vget_high_u8(ag)));
      const int16x8_t ar[4] = {
          vreinterpretq_s16_u64(vdupq_laneq_u64(a01, 0)), vreinterpretq_s16_u64(vdupq_laneq_u64(a01, 1)),
          vreinterpretq_s16_u64(vdupq_laneq_u64(a23, 0)), vreinterpretq_s16_u64(vdupq_laneq_u64(a23, 1))};
      const int8x16_t b0 = vld1q_s8(b + g * 64 + h * 32), b1 = vld1q_s8(b + g * 64 + h * 32 + 16);
      const int16x8_t bw[4] = {vmovl_s8(vget_low_s8(b0)), vmovl_s8(vget_high_s8(b0)), vmovl_s8(vget_low_s8(b1)),
                               vmovl_s8(vget_high_s8(b1))};
      for (int i = 0; i < 4; ++i)
        for (int v = 0; v < 4; ++v) c[i][v] = vpadalq_s16(c[i][v], vmulq_s16(ar[i], bw[v]));
    }
    for (int i = 0; i < 4; ++i)
      for (int v = 0; v < 4; v += 2) {
        int32_t* dst = acc + i * 16 + h * 8 + v * 2;
        const int32x4_t s = vpaddq_s32(c[i][v], c[i][v + 1]);
        vst1q_s32(dst, accumulate ? vaddq_s32(s, vld1q_s32(dst)) : s);
      }
  }
}

}  // namespace

TileFn neon_i8mm_tile() { return int8_i8mm_tile; }
TileFn neon_dotprod_tile() { return int8_dotprod_tile; }
TileFn neon_tile() { return int8_neon_tile; }
#else
TileFn neon_i8mm_tile() { return nullptr; }
TileFn neon_dotprod_tile() { return nullptr; }
TileFn neon_tile() { return nullptr; }
#endif

}  // namespace dlrt::cpu::int8_detail
