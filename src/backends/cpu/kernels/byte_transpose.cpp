// Byte-matrix transposes (byte_transpose.h).
#include "backends/cpu/kernels/byte_transpose.h"

namespace dlrt::cpu {

#if defined(__x86_64__) || defined(__i386__)
namespace {

// dst[c * ds + r] = src[r * ss + c] for r, c < 16.
inline void transpose16x16(const uint8_t* src, int64_t ss, uint8_t* dst, int64_t ds) {
  __m128i out[16];
  transpose16x16_regs(src, ss, out);
  for (int c = 0; c < 16; ++c) _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + c * ds), out[c]);
}

}  // namespace

void transpose_bytes(const uint8_t* src, int64_t src_stride, int64_t rows, int64_t cols, uint8_t* dst,
                     int64_t dst_stride) {
  int64_t r = 0;
  for (; r + 16 <= rows; r += 16) {
    int64_t c = 0;
    for (; c + 16 <= cols; c += 16)
      transpose16x16(src + r * src_stride + c, src_stride, dst + c * dst_stride + r, dst_stride);
    for (; c < cols; ++c)
      for (int64_t i = 0; i < 16; ++i) dst[c * dst_stride + r + i] = src[(r + i) * src_stride + c];
  }
  for (; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) dst[c * dst_stride + r] = src[r * src_stride + c];
}

#else

void transpose_bytes(const uint8_t* src, int64_t src_stride, int64_t rows, int64_t cols, uint8_t* dst,
                     int64_t dst_stride) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) dst[c * dst_stride + r] = src[r * src_stride + c];
}

#endif

}  // namespace dlrt::cpu
