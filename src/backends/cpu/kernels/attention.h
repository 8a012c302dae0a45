// The attention kernels of com.dlrt Attention (ops/transformer.cpp says what
// the op computes): Y = softmax(scale * Q·Kᵀ + mask) · V for one head and a
// block of query rows, portable, one vector kernel for every width
// (attention_simd.h), AMX (precision bf16x3) and AVX512-BF16 (precision bf16).
// Each packs Kᵀ for its head once, then runs blocks of query rows through
// Q·Kᵀ (vectorised along the keys), a fused scale/mask/softmax, and P·V
// (vectorised along the head dim). Thread-safe: scratch is per thread.
#pragma once

#include <cstdint>

#include "backends/cpu/kernels/simd/width.h"

namespace dlrt::cpu::attention {

struct View {
  const float* base = nullptr;
  int64_t sb = 0, sh = 0, ss = 0, sd = 0;  // element strides for batch, head, sequence, dim
};

struct Problem {
  int64_t B = 0, H = 0, Sq = 0, Skv = 0, D = 0, Dv = 0;
  View q, k, v;
  const float* mask = nullptr;
  int64_t mb = 0, mh = 0, mq = 0, mk = 0;
  float* out = nullptr;
  int64_t ob = 0, oh = 0, os = 0;
  float scale = 1;
  // Rows whose softmax is undefined (its sum 0 or NaN: every key masked
  // with -inf) give zeros instead of NaN, as Where(IsNaN(P), 0, P) between
  // the Softmax and P·V makes them (V finite: 0 · NaN would stay NaN there).
  bool zero_undefined_rows = false;

  // Query row i's mask of head (b, h): keys mk floats apart (0: one value
  // for every key); null without a mask.
  const float* mask_row(int64_t b, int64_t h, int64_t i) const {
    return mask ? mask + b * mb + h * mh + i * mq : nullptr;
  }
};

// Query rows per block of the generic and 512-bit paths' callers.
constexpr int kRows = 4;
// Query rows per block of attend_vec at 256 bits: a 6 x 16 tile (12 ymm
// accumulators) for Q·Kᵀ (rows x keys) and for P·V (rows x head dims), as
// the GEMM's (8 x 32 at 512 bits; attention_simd.h's kTileRows).
constexpr int kRowsAvx2 = 6;

// Rows [r0, r1) of head (b, h).
void attend_generic(const Problem& p, int64_t b, int64_t h, int64_t r0, int64_t r1);
// The vector kernel at width w (simd_width() where the vector paths run).
void attend_vec(SimdWidth w, const Problem& p, int64_t b, int64_t h, int64_t r0, int64_t r1);
#if defined(__x86_64__) || defined(__i386__)
// Q·Kᵀ and P·V on AMX tiles; needs Q's and V's head dims contiguous.
void attend_amx(const Problem& p, int64_t b, int64_t h, int64_t r0, int64_t r1);
// The same with one bf16 pass (precision bf16, gemm_bf16.h); the same needs.
void attend_bf16(const Problem& p, int64_t b, int64_t h, int64_t r0, int64_t r1);
#endif

// How many attend_amx calls ran since the process started; for tests.
uint64_t amx_runs();
// How many attend_bf16 calls ran since the process started; for tests.
uint64_t bf16_runs();

}  // namespace dlrt::cpu::attention
