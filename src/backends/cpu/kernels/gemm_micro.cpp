// The float and double GEMM microkernels (portable, AVX2; the AVX-512 tile
// is in gemm_avx512.cpp) and the choice of one per ISA.
#include <cstdint>

#include "backends/cpu/kernels/gemm_internal.h"
#include "backends/cpu/kernels/isa_target.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define DLRT_GEMM_X86 1
#endif

namespace dlrt::cpu::gemm_detail {
namespace {

// Portable microkernel; the compiler vectorises the j loops. Inlined into
// per-target wrappers below so the same source yields SSE2 and AVX2 code.
template <typename T, int MR, int NR>
__attribute__((always_inline)) inline void micro_generic(int64_t kc, const T* __restrict a, const T* __restrict b,
                                                         T* __restrict c, int64_t ldc, T alpha, T beta) {
  T acc[MR][NR];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) acc[i][j] = T(0);
  for (int64_t p = 0; p < kc; ++p) {
    const T* bp = b + p * NR;
    const T* ap = a + p * MR;
    for (int i = 0; i < MR; ++i) {
      const T av = ap[i];
      for (int j = 0; j < NR; ++j) acc[i][j] += av * bp[j];
    }
  }
  for (int i = 0; i < MR; ++i) {
    T* ci = c + i * ldc;
    if (beta == T(0)) {
      for (int j = 0; j < NR; ++j) ci[j] = alpha * acc[i][j];
    } else {
      for (int j = 0; j < NR; ++j) ci[j] = alpha * acc[i][j] + beta * ci[j];
    }
  }
}


void skernel_generic(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta) {
  micro_generic<float, kSMR, kSNR>(kc, a, b, c, ldc, alpha, beta);
}
// The AVX-512 tile in portable code: runs operands packed for that layout
// when cpu_isa() has been capped below AVX-512 after they were packed.
void skernel_generic_avx512_tile(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha,
                          float beta) {
  micro_generic<float, kSgemmAvx512MR, kSgemmAvx512NR>(kc, a, b, c, ldc, alpha, beta);
}
void dkernel_generic(int64_t kc, const double* a, const double* b, double* c, int64_t ldc, double alpha,
                     double beta) {
  micro_generic<double, kDMR, kDNR>(kc, a, b, c, ldc, alpha, beta);
}

#ifdef DLRT_GEMM_X86
DLRT_AVX2 void skernel_avx2(int64_t kc, const float* a, const float* b, float* c,
                                                      int64_t ldc, float alpha, float beta) {
  __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
  __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
  __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
  __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
  __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps();
  __m256 c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
  for (int64_t p = 0; p < kc; ++p) {
    const __m256 b0 = _mm256_load_ps(b);
    const __m256 b1 = _mm256_load_ps(b + 8);
    __m256 av = _mm256_broadcast_ss(a + 0);
    c00 = _mm256_fmadd_ps(av, b0, c00);
    c01 = _mm256_fmadd_ps(av, b1, c01);
    av = _mm256_broadcast_ss(a + 1);
    c10 = _mm256_fmadd_ps(av, b0, c10);
    c11 = _mm256_fmadd_ps(av, b1, c11);
    av = _mm256_broadcast_ss(a + 2);
    c20 = _mm256_fmadd_ps(av, b0, c20);
    c21 = _mm256_fmadd_ps(av, b1, c21);
    av = _mm256_broadcast_ss(a + 3);
    c30 = _mm256_fmadd_ps(av, b0, c30);
    c31 = _mm256_fmadd_ps(av, b1, c31);
    av = _mm256_broadcast_ss(a + 4);
    c40 = _mm256_fmadd_ps(av, b0, c40);
    c41 = _mm256_fmadd_ps(av, b1, c41);
    av = _mm256_broadcast_ss(a + 5);
    c50 = _mm256_fmadd_ps(av, b0, c50);
    c51 = _mm256_fmadd_ps(av, b1, c51);
    a += kSMR;
    b += kSNR;
  }
  const __m256 va = _mm256_set1_ps(alpha);
  if (beta == 0.0f) {
#define DLRT_STORE_ROW(r, x0, x1)                                 \
  _mm256_storeu_ps(c + (r) * ldc, _mm256_mul_ps(va, x0));         \
  _mm256_storeu_ps(c + (r) * ldc + 8, _mm256_mul_ps(va, x1));
    DLRT_STORE_ROW(0, c00, c01) DLRT_STORE_ROW(1, c10, c11) DLRT_STORE_ROW(2, c20, c21)
    DLRT_STORE_ROW(3, c30, c31) DLRT_STORE_ROW(4, c40, c41) DLRT_STORE_ROW(5, c50, c51)
#undef DLRT_STORE_ROW
  } else {
    const __m256 vb = _mm256_set1_ps(beta);
#define DLRT_STORE_ROW(r, x0, x1)                                                                      \
  _mm256_storeu_ps(c + (r) * ldc, _mm256_fmadd_ps(va, x0, _mm256_mul_ps(vb, _mm256_loadu_ps(c + (r) * ldc)))); \
  _mm256_storeu_ps(c + (r) * ldc + 8,                                                                  \
                   _mm256_fmadd_ps(va, x1, _mm256_mul_ps(vb, _mm256_loadu_ps(c + (r) * ldc + 8))));
    DLRT_STORE_ROW(0, c00, c01) DLRT_STORE_ROW(1, c10, c11) DLRT_STORE_ROW(2, c20, c21)
    DLRT_STORE_ROW(3, c30, c31) DLRT_STORE_ROW(4, c40, c41) DLRT_STORE_ROW(5, c50, c51)
#undef DLRT_STORE_ROW
  }
}

DLRT_AVX2 void dkernel_avx2(int64_t kc, const double* a, const double* b, double* c,
                                                      int64_t ldc, double alpha, double beta) {
  micro_generic<double, kDMR, kDNR>(kc, a, b, c, ldc, alpha, beta);
}

void skernel_avx512_full(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha,
                         float beta) {
  sgemm_kernel_avx512(kc, a, b, c, ldc, alpha, beta, kSgemmAvx512MR, kSgemmAvx512NR);
}
#endif

}  // namespace

// The layout the float GEMM packs for under the current cpu_isa().
SLayout pick_slayout() {
#ifdef DLRT_GEMM_X86
  if (cpu_has_avx512()) return SLayout::kAvx512;
#endif
  return SLayout::k6x16;
}

// The fastest kernel the current cpu_isa() allows for a layout.
Kernels<float> skernels_for(SLayout layout, bool uniform_edges) {
  if (layout == SLayout::kAvx512) {
#ifdef DLRT_GEMM_X86
    if (cpu_has_avx512())
      return {skernel_avx512_full, uniform_edges ? sgemm_kernel_avx512_uniform : sgemm_kernel_avx512,
              apply_epilogue_zmm_tile};
#endif
    return {skernel_generic_avx512_tile, nullptr};
  }
#ifdef DLRT_GEMM_X86
  if (cpu_has_avx2_fma()) return {skernel_avx2, nullptr};
#endif
  return {skernel_generic, nullptr};
}

MicroKernel<double> pick_dkernel() {
#ifdef DLRT_GEMM_X86
  if (cpu_has_avx2_fma()) return dkernel_avx2;
#endif
  return dkernel_generic;
}

}  // namespace dlrt::cpu::gemm_detail

namespace dlrt::cpu {

const char* sgemm_kernel_name() {
  const gemm_detail::SLayout layout = gemm_detail::pick_slayout();
  const gemm_detail::Kernels<float> k = gemm_detail::skernels_for(layout);
  if (layout == gemm_detail::SLayout::kAvx512) return k.edge ? "avx512-8x48" : "generic-8x48";
  return k.full == gemm_detail::skernel_generic ? "generic" : "avx2-fma";
}

}  // namespace dlrt::cpu
