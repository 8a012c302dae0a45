// The direct convolution for weights packed in 8-row panels (conv_direct.h,
// conv_direct_whole_k): the body conv_direct_whole_k_simd.h at every vector
// width.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/activation_epilogue.h"
#include "backends/cpu/kernels/conv_direct.h"
#include "backends/cpu/kernels/conv_direct_fill.h"
#include "backends/cpu/kernels/gelu_phi_table.h"
#include "backends/cpu/kernels/simd/simd.h"
#include "backends/cpu/kernels/vec_avx512.h"
#include "device/cpu_caches.h"

namespace dlrt::cpu::conv_direct_whole_k_detail {

#ifdef DLRT_HAVE_AVX512_PATHS
// A small plane's copy at 512 bits (conv_direct_whole_k_simd.h, fill_from_table): entry e of the
// copy is a permute of the channel's (at most 64) floats, in 16-entry chunks of the table.
DLRT_AVX512 __attribute__((always_inline)) inline void permute_small_plane(const float* xc, int64_t in,
                                                                           const int32_t* table, int64_t chunks,
                                                                           int64_t per, float* dc) {
  __m512 v[4];
#pragma GCC unroll 4
  for (int q = 0; q < 4; ++q)
    v[q] = _mm512_maskz_loadu_ps(avx512::tail_mask(std::max<int64_t>(0, in - 16 * q)), xc + 16 * q);
  const __m512i lanes32 = _mm512_set1_epi32(32);
  for (int64_t t = 0; t < chunks; ++t) {
    const __m512i ix = _mm512_loadu_si512(table + 16 * t);
    const __mmask16 real = _mm512_cmpge_epi32_mask(ix, _mm512_setzero_si512());
    const __mmask16 high = _mm512_cmpge_epi32_mask(ix, lanes32);
    const __m512 lo = _mm512_permutex2var_ps(v[0], ix, v[1]), hi = _mm512_permutex2var_ps(v[2], ix, v[3]);
    const __m512 r = _mm512_maskz_mov_ps(real, _mm512_mask_blend_ps(high, lo, hi));
    _mm512_mask_storeu_ps(dc + 16 * t, avx512::tail_mask(per - 16 * t), r);
  }
}
#endif

// A token per call that takes private phase copies (each thread copies once per token).
uint64_t next_call() {
  static std::atomic<uint64_t> calls{0};
  return ++calls;
}

}  // namespace dlrt::cpu::conv_direct_whole_k_detail

#define DLRT_SIMD_BODY "backends/cpu/kernels/conv_direct_whole_k_simd.h"
#include "backends/cpu/kernels/simd/instantiate.h"

namespace dlrt::cpu {

void conv_direct_whole_k(SimdWidth width, const ConvDirectPlan& plan, const int64_t* off, const float* x,
                         const PackedMatrix& w, float* y, const GemmEpilogue& ep, ThreadPool* pool, int64_t y_plane,
                         int64_t k_begin, int64_t k_end) {
  DLRT_SIMD_CALL(width, conv_direct_whole_k, plan, off, x, w, y, ep, pool, y_plane, k_begin, k_end);
}

}  // namespace dlrt::cpu
