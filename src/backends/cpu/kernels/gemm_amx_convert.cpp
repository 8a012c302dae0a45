// The AMX float GEMM's conversions (gemm_amx_convert.h), scalar and AVX-512.
#include "backends/cpu/kernels/gemm_amx_convert.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "backends/cpu/kernels/gemm_bf16.h"
#include "backends/cpu/kernels/gemm_kernels.h"
#include "backends/cpu/kernels/isa_target.h"

#if defined(__x86_64__) && defined(__GNUC__)
#if !defined(__clang__)
// GCC 12's AVX-512 intrinsics start some results from _mm512_undefined_ps(),
// which the uninitialized-use warnings report once inlined: false positives.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>
#define DLRT_AMX_CONVERT_AVX512 1
#endif

namespace dlrt::cpu::amx_float {
namespace {

void split(float x, bool lo, uint16_t* hi, uint16_t* lo_out) {
  *hi = bf16_round(x);
  if (!lo) return;
  const float h = bf16_widen(*hi);
  *lo_out = std::isfinite(h) ? bf16_round(x - h) : 0;
}

void a_block_scalar(const float* A, int64_t lda, bool trans, int64_t i0, int64_t rows, int64_t K, int64_t KS,
                    uint16_t* dst, float* /*row*/, int64_t step, bool lo) {
  for (int64_t r = 0; r < 16; ++r)
    for (int64_t s = 0; s < KS; ++s) {
      uint16_t* t = dst + s * step + r * 32;
      for (int64_t kk = 0; kk < kStep; ++kk) {
        const int64_t k = s * kStep + kk, i = i0 + r;
        const float x = r < rows && k < K ? (trans ? A[k * lda + i] : A[i * lda + k]) : 0.0f;
        split(x, lo, t + kk, t + kTileElems + kk);
      }
    }
}

void b_block_scalar(const float* B, int64_t ldb, int64_t K, int64_t KS, int64_t cols, uint16_t* dst, bool lo) {
  for (int64_t s = 0; s < KS; ++s) {
    uint16_t* set = dst + s * b_set(lo);
    for (int64_t kp = 0; kp < 16; ++kp)
      for (int64_t j = 0; j < kBlockN; ++j)
        for (int64_t e = 0; e < 2; ++e) {
          const int64_t k = s * kStep + 2 * kp + e;
          // Tile j / 16 of the set, row kp, element 2 * (j % 16) + e.
          const int64_t at = (j / 16) * kTileElems + kp * 32 + 2 * (j % 16) + e;
          split(k < K && j < cols ? B[k * ldb + j] : 0.0f, lo, set + at, set + 2 * kTileElems + at);
        }
  }
}

void write_scalar(const float* t, int64_t rows, int64_t cols, float alpha, float beta, float* c, int64_t ldc) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; ++j) {
      float v = alpha * t[r * 32 + j];
      if (beta != 0.0f) v = std::fma(beta, c[r * ldc + j], v);
      c[r * ldc + j] = v;
    }
}

#ifdef DLRT_AMX_CONVERT_AVX512

// Lanes [0, n) of 16 (none when n <= 0).
inline __mmask16 lanes(int64_t n) {
  return static_cast<__mmask16>(n >= 16 ? 0xffffu : n <= 0 ? 0u : (1u << n) - 1);
}

// 16 floats -> their bf16 hi and lo parts (the vector form of split()).
DLRT_AVX512_BF16 inline void split16(__m512 x, __m256i& hi, __m256i& lo) {
  const __m256i h = (__m256i)_mm512_cvtneps_pbh(x);
  const __m512 hf = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  const __mmask16 finite =
      _mm512_cmp_ps_mask(_mm512_abs_ps(hf), _mm512_set1_ps(std::numeric_limits<float>::infinity()), _CMP_LT_OQ);
  hi = h;
  lo = (__m256i)_mm512_cvtneps_pbh(_mm512_maskz_sub_ps(finite, x, hf));
}

DLRT_AVX512_BF16 void a_block_avx512(const float* A, int64_t lda, bool trans, int64_t i0, int64_t rows, int64_t K,
                                     int64_t KS, uint16_t* dst, float* row, int64_t step, bool lo) {
  for (int64_t r = 0; r < 16; ++r) {
    if (r >= rows) {
      for (int64_t s = 0; s < KS; ++s) {
        _mm512_store_si512(dst + s * step + r * 32, _mm512_setzero_si512());
        if (lo) _mm512_store_si512(dst + s * step + kTileElems + r * 32, _mm512_setzero_si512());
      }
      continue;
    }
    const float* a = A + (i0 + r) * lda;
    if (trans) {
      for (int64_t k = 0; k < K; ++k) row[k] = A[k * lda + i0 + r];
      a = row;
    }
    for (int64_t s = 0; s < KS; ++s) {
      const int64_t k0 = s * kStep, n = std::min<int64_t>(kStep, K - k0);
      __m256i h0, l0, h1, l1;
      split16(_mm512_maskz_loadu_ps(lanes(n), a + k0), h0, l0);
      split16(_mm512_maskz_loadu_ps(lanes(n - 16), a + k0 + 16), h1, l1);
      uint16_t* t = dst + s * step + r * 32;
      _mm512_store_si512(t, _mm512_inserti64x4(_mm512_castsi256_si512(h0), h1, 1));
      if (lo) _mm512_store_si512(t + kTileElems, _mm512_inserti64x4(_mm512_castsi256_si512(l0), l1, 1));
    }
  }
}

// 16 bf16 of row 2p (even) and of row 2p + 1 (odd) as 16 k pairs.
DLRT_AVX512_BF16 inline __m512i pairs(__m256i even, __m256i odd) {
  return _mm512_or_si512(_mm512_cvtepu16_epi32(even), _mm512_slli_epi32(_mm512_cvtepu16_epi32(odd), 16));
}

// One K step of one column block: rows [0, krows) and columns [0, cols).
DLRT_AVX512_BF16 void pack_set(const float* B, int64_t ldb, int64_t krows, int64_t cols, uint16_t* set, bool lo) {
  const __mmask16 m[2] = {lanes(cols), lanes(cols - 16)};
  for (int64_t kp = 0; kp < 16; ++kp) {
    const int64_t k = 2 * kp;
    for (int64_t t = 0; t < 2; ++t) {
      const __m512 x0 = k < krows ? _mm512_maskz_loadu_ps(m[t], B + k * ldb + 16 * t) : _mm512_setzero_ps();
      const __m512 x1 = k + 1 < krows ? _mm512_maskz_loadu_ps(m[t], B + (k + 1) * ldb + 16 * t) : _mm512_setzero_ps();
      __m256i h0, l0, h1, l1;
      split16(x0, h0, l0);
      split16(x1, h1, l1);
      _mm512_store_si512(set + t * kTileElems + kp * 32, pairs(h0, h1));
      if (lo) _mm512_store_si512(set + (2 + t) * kTileElems + kp * 32, pairs(l0, l1));
    }
  }
}

DLRT_AVX512_BF16 void b_block_avx512(const float* B, int64_t ldb, int64_t K, int64_t KS, int64_t cols,
                                     uint16_t* dst, bool lo) {
  for (int64_t s = 0; s < KS; ++s)
    pack_set(B + s * kStep * ldb, ldb, std::min(kStep, K - s * kStep), cols, dst + s * b_set(lo), lo);
}

DLRT_AVX512_BF16 void write_avx512(const float* t, int64_t rows, int64_t cols, float alpha, float beta, float* c,
                                   int64_t ldc) {
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < cols; j += 16) {
      const __mmask16 m = lanes(cols - j);
      __m512 v = _mm512_mul_ps(va, _mm512_load_ps(t + r * 32 + j));
      if (beta != 0.0f) v = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m, c + r * ldc + j), v);
      _mm512_mask_storeu_ps(c + r * ldc + j, m, v);
    }
  }
}

#endif  // DLRT_AMX_CONVERT_AVX512

}  // namespace

Convert convert_scalar() { return Convert{a_block_scalar, b_block_scalar, write_scalar, apply_epilogue}; }

Convert convert_best() {
#ifdef DLRT_AMX_CONVERT_AVX512
  if (bf16_dot_available()) return Convert{a_block_avx512, b_block_avx512, write_avx512, apply_epilogue_zmm_tile};
#endif
  return convert_scalar();
}

}  // namespace dlrt::cpu::amx_float
