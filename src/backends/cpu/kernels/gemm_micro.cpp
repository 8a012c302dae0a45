// The float and double GEMM microkernels and the choice of one per ISA: the
// float ones from one source for every vector width (the body gemm_simd.h
// over simd/simd.h: 8 x 48 at 512 bits, 6 x 16 at 256 and at 128, NEON's),
// the portable ones for the generic level and the double GEMM.
#include <cstdint>
#include <type_traits>

#include "backends/cpu/kernels/gemm_internal.h"
#include "backends/cpu/kernels/isa_target.h"
#include "backends/cpu/kernels/simd/simd.h"

#define DLRT_SIMD_BODY "backends/cpu/kernels/gemm_simd.h"
#include "backends/cpu/kernels/simd/instantiate.h"

#if defined(__x86_64__) || defined(__i386__)
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
DLRT_AVX2 void dkernel_avx2(int64_t kc, const double* a, const double* b, double* c,
                                                      int64_t ldc, double alpha, double beta) {
  micro_generic<double, kDMR, kDNR>(kc, a, b, c, ldc, alpha, beta);
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

namespace {
// The width whose tile `layout` is, if the current cpu_isa() runs it: 512
// bits for the 8 x 48 layout; 256 (AVX2 and up) or 128 (the neon level) for 6 x 16.
bool layout_width(SLayout layout, SimdWidth& w) {
  if (layout == SLayout::kAvx512) {
    w = SimdWidth::k512;
    return cpu_has_avx512();
  }
  w = cpu_has_avx2() ? SimdWidth::k256 : SimdWidth::k128;
  return cpu_has_simd_kernels();
}
}  // namespace

// The fastest kernel the current cpu_isa() allows for a layout.
Kernels<float> skernels_for(SLayout layout, bool uniform_edges) {
  SimdWidth w;
  if (layout_width(layout, w)) return DLRT_SIMD_CALL(w, sgemm_kernels, uniform_edges);
  if (layout == SLayout::kAvx512) return {skernel_generic_avx512_tile, nullptr};
  return {skernel_generic, nullptr};
}

RowsPath rows_path_for(SLayout layout) {
  SimdWidth w;
  if (!layout_width(layout, w)) return {};
  return {DLRT_SIMD_CALL(w, sgemm_rows_kernel), w == SimdWidth::k512 ? apply_epilogue_zmm_tile : apply_epilogue};
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
  if (k.full == gemm_detail::skernel_generic) return "generic";
  return cpu_has_avx2() ? "avx2-fma" : "neon-6x16";
}

SgemmRowsKernel sgemm_rows_kernel_at(SimdWidth w) { return DLRT_SIMD_PICK(w, sgemm_rows_kernel); }

SgemmPackPanel sgemm_pack_panel_for(int mr) {
  if (!cpu_has_simd_kernels()) return nullptr;
  return DLRT_SIMD_PICK(simd_width(), sgemm_pack_panel, mr);
}

void sgemv_rows_at(SimdWidth w, int64_t rows, int64_t cols, float alpha, const float* A, int64_t lda, const float* x,
                   float beta, float* y, int64_t incy) {
  DLRT_SIMD_CALL(w, sgemv_rows, rows, cols, alpha, A, lda, x, beta, y, incy);
}

}  // namespace dlrt::cpu
