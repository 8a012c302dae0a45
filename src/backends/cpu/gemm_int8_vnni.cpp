// The VNNI microkernels of the 8-bit GEMM (gemm_int8.h): each VPDPBUSD adds,
// per int32 lane, the four products of unsigned bytes of A and signed bytes
// of B to the accumulator, with no intermediate saturation, so the sums are
// exact (mod 2^32) like the portable kernel's.
#include "backends/cpu/gemm_int8.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#include <cstring>

namespace dlrt::cpu::int8_detail {
namespace {

inline int32_t load4(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// 8 rows x 16*NV columns in 8*NV zmm accumulators; per group of 4 k: NV
// loads of B, 8 broadcasts of A, 8*NV dot products.
template <int NV>
__attribute__((target("avx512f,avx512bw,avx512vnni"))) void tile_avx512_vnni(int64_t kg, const uint8_t* a,
                                                                             const int8_t* b, int64_t panel_stride,
                                                                             int32_t* acc) {
  constexpr int MR = 8;
  __m512i c[MR][NV];
  for (int i = 0; i < MR; ++i)
    for (int v = 0; v < NV; ++v) c[i][v] = _mm512_setzero_si512();
  for (int64_t g = 0; g < kg; ++g) {
    __m512i bv[NV];
    for (int v = 0; v < NV; ++v) bv[v] = _mm512_load_si512(b + v * panel_stride + g * 64);
    const uint8_t* ag = a + g * MR * 4;
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const __m512i av = _mm512_set1_epi32(load4(ag + i * 4));
      for (int v = 0; v < NV; ++v) c[i][v] = _mm512_dpbusd_epi32(c[i][v], av, bv[v]);
    }
  }
  for (int i = 0; i < MR; ++i)
    for (int v = 0; v < NV; ++v) _mm512_store_si512(acc + (i * NV + v) * 16, c[i][v]);
}

// 4 rows x 16 columns in 8 ymm accumulators (each panel group is two ymm).
__attribute__((target("avx2,avxvnni"))) void tile_avx_vnni(int64_t kg, const uint8_t* a, const int8_t* b, int64_t,
                                                           int32_t* acc) {
  constexpr int MR = 4;
  __m256i c[MR][2];
  for (int i = 0; i < MR; ++i) c[i][0] = c[i][1] = _mm256_setzero_si256();
  for (int64_t g = 0; g < kg; ++g) {
    const __m256i b0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(b + g * 64));
    const __m256i b1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(b + g * 64 + 32));
    const uint8_t* ag = a + g * MR * 4;
    for (int i = 0; i < MR; ++i) {
      const __m256i av = _mm256_set1_epi32(load4(ag + i * 4));
      c[i][0] = _mm256_dpbusd_avx_epi32(c[i][0], av, b0);
      c[i][1] = _mm256_dpbusd_avx_epi32(c[i][1], av, b1);
    }
  }
  for (int i = 0; i < MR; ++i) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(acc + i * 16), c[i][0]);
    _mm256_store_si256(reinterpret_cast<__m256i*>(acc + i * 16 + 8), c[i][1]);
  }
}

}  // namespace

TileFn avx512_vnni_tile(int nv) {
  switch (nv) {
    case 1: return tile_avx512_vnni<1>;
    case 2: return tile_avx512_vnni<2>;
    case 3: return tile_avx512_vnni<3>;
    default: return nullptr;
  }
}
TileFn avx_vnni_tile() { return tile_avx_vnni; }

}  // namespace dlrt::cpu::int8_detail

#else

namespace dlrt::cpu::int8_detail {
TileFn avx512_vnni_tile(int) { return nullptr; }
TileFn avx_vnni_tile() { return nullptr; }
}  // namespace dlrt::cpu::int8_detail

#endif
