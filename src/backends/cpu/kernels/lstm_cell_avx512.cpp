// The fused LSTM cell update (lstm_cell_avx512.h).
#include "backends/cpu/kernels/lstm_cell_avx512.h"

#include "backends/cpu/kernels/isa_target.h"
#include "backends/cpu/kernels/vec_avx512.h"

namespace dlrt::cpu {
#if defined(__x86_64__)

DLRT_AVX512 void lstm_cell_avx512(int64_t n, const float* gates, float* c, float* h) {
  const float* gi = gates;
  const float* go = gates + n;
  const float* gf = gates + 2 * n;
  const float* gg = gates + 3 * n;
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 m = avx512::tail_mask(n - j);
    const __m512 i = avx512::sigmoid_ps(_mm512_maskz_loadu_ps(m, gi + j));
    const __m512 f = avx512::sigmoid_ps(_mm512_maskz_loadu_ps(m, gf + j));
    const __m512 g = avx512::tanh_ps(_mm512_maskz_loadu_ps(m, gg + j));
    const __m512 cn = _mm512_add_ps(_mm512_mul_ps(f, _mm512_maskz_loadu_ps(m, c + j)), _mm512_mul_ps(i, g));
    _mm512_mask_storeu_ps(c + j, m, cn);
    const __m512 o = avx512::sigmoid_ps(_mm512_maskz_loadu_ps(m, go + j));
    _mm512_mask_storeu_ps(h + j, m, _mm512_mul_ps(o, avx512::tanh_ps(cn)));
  }
}

#endif
}  // namespace dlrt::cpu
