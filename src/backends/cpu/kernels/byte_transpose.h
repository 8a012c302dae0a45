// Transposes of byte matrices (the layout changes of 8-bit tensors): 16 x 16
// tiles by SSE2 unpacks on x86, plain loops elsewhere.
#pragma once

#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <emmintrin.h>
#endif

namespace dlrt::cpu {

// dst[c * dst_stride + r] = src[r * src_stride + c] for r < rows, c < cols.
void transpose_bytes(const uint8_t* src, int64_t src_stride, int64_t rows, int64_t cols, uint8_t* dst,
                     int64_t dst_stride);

#if defined(__x86_64__) || defined(__i386__)
// out[c] = column c of the 16 x 16 bytes at src (row stride ss): four rounds of unpacks (SSE2).
inline void transpose16x16_regs(const uint8_t* src, int64_t ss, __m128i out[16]) {
  __m128i a[16], t[16];
  for (int i = 0; i < 16; ++i) a[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i * ss));
  for (int i = 0; i < 8; ++i) {  // byte pairs of rows 2i, 2i + 1
    t[2 * i] = _mm_unpacklo_epi8(a[2 * i], a[2 * i + 1]);
    t[2 * i + 1] = _mm_unpackhi_epi8(a[2 * i], a[2 * i + 1]);
  }
  for (int j = 0; j < 4; ++j) {  // rows 4j .. 4j + 3, four columns per register
    a[4 * j] = _mm_unpacklo_epi16(t[4 * j], t[4 * j + 2]);
    a[4 * j + 1] = _mm_unpackhi_epi16(t[4 * j], t[4 * j + 2]);
    a[4 * j + 2] = _mm_unpacklo_epi16(t[4 * j + 1], t[4 * j + 3]);
    a[4 * j + 3] = _mm_unpackhi_epi16(t[4 * j + 1], t[4 * j + 3]);
  }
  for (int k = 0; k < 2; ++k)  // rows 8k .. 8k + 7, two columns per register
    for (int q = 0; q < 4; ++q) {
      t[8 * k + 2 * q] = _mm_unpacklo_epi32(a[8 * k + q], a[8 * k + 4 + q]);
      t[8 * k + 2 * q + 1] = _mm_unpackhi_epi32(a[8 * k + q], a[8 * k + 4 + q]);
    }
  for (int m = 0; m < 8; ++m) {  // all 16 rows: column 2m, then 2m + 1
    out[2 * m] = _mm_unpacklo_epi64(t[m], t[8 + m]);
    out[2 * m + 1] = _mm_unpackhi_epi64(t[m], t[8 + m]);
  }
}
#endif

}  // namespace dlrt::cpu
