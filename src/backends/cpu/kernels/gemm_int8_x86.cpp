// The x86 microkernels of the 8-bit GEMM (gemm_int8.h). On VNNI each
// VPDPBUSD adds, per int32 lane, the four products of unsigned bytes of A and
// signed bytes of B to the accumulator, with no intermediate saturation; on
// plain AVX2 both were widened to 16 bits when packed, for VPMADDWD
// (VPMADDUBSW would saturate). Either way the sums are exact (mod 2^32), as the portable
// kernel's.
#include "backends/cpu/kernels/gemm_int8.h"
#include "backends/cpu/kernels/isa_target.h"

#if defined(__x86_64__) || defined(__i386__)
// GCC 12 reports the _mm512_undefined_*() its AVX-512 intrinsics start from
// as (maybe-)uninitialized once inlined: false positives.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include <algorithm>
#include <cstring>

namespace dlrt::cpu::int8_detail {
namespace {

inline int32_t load4(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// The sums of the 8-row tile into c: per group of 4 k, NV loads of B, 8
// broadcasts of A, 8*NV dot products. Inlined into both tile kernels, so
// that the accumulators stay in registers.
template <int NV>
DLRT_AVX512_VNNI __attribute__((always_inline)) inline void vnni_8x16nv(
    int64_t kg, const uint8_t* a, const int8_t* b, int64_t panel_stride, __m512i (&c)[8][NV]) {
  constexpr int MR = 8;
  const int8_t* b1 = b + panel_stride;
  const int8_t* b2 = b + 2 * panel_stride;
  for (int64_t g = 0; g < kg; ++g) {
    __m512i bv[NV];
    bv[0] = _mm512_load_si512(b + g * 64);
    if constexpr (NV > 1) bv[1] = _mm512_load_si512(b1 + g * 64);
    if constexpr (NV > 2) bv[2] = _mm512_load_si512(b2 + g * 64);
    const uint8_t* ag = a + g * MR * 4;
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const __m512i av = _mm512_set1_epi32(load4(ag + i * 4));
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) c[i][v] = _mm512_dpbusd_epi32(c[i][v], av, bv[v]);
    }
  }
}

// 8 rows x 16*NV columns in 8*NV zmm accumulators (vnni_8x16nv).
template <int NV>
DLRT_AVX512_VNNI void tile_avx512_vnni(int64_t kg, const uint8_t* a,
                                                                             const int8_t* b, int64_t panel_stride,
                                                                             int32_t* acc, bool accumulate) {
  constexpr int MR = 8;
  // Every loop over the tile is unrolled so that the accumulators live in
  // registers (a loop GCC leaves rolled keeps them in memory).
  __m512i c[MR][NV];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v)
      c[i][v] = accumulate ? _mm512_load_si512(acc + (i * NV + v) * 16) : _mm512_setzero_si512();
  vnni_8x16nv<NV>(kg, a, b, panel_stride, c);
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) _mm512_store_si512(acc + (i * NV + v) * 16, c[i][v]);
}

// tile_avx512_vnni with the uniform per-column requantization
// (Epilogues::requant_uniform_cols) applied to the accumulators in
// registers: the finished 8-bit tile goes straight to out.
template <int NV>
DLRT_AVX512_VNNI void tile_requant_cols_avx512_vnni(
    int64_t kg, const uint8_t* a, const int8_t* b, int64_t panel_stride, const RequantColsTile& q) {
  constexpr int MR = 8;
  __m512i c[MR][NV];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) c[i][v] = _mm512_setzero_si512();
  vnni_8x16nv<NV>(kg, a, b, panel_stride, c);
  const __m512 lo = _mm512_set1_ps(static_cast<float>((q.out_signed ? -128 : 0) - q.zero_point));
  const __m512 hi = _mm512_set1_ps(static_cast<float>((q.out_signed ? 127 : 255) - q.zero_point));
  const __m512i vzp = _mm512_set1_epi32(q.zero_point);
#pragma GCC unroll 3
  for (int v = 0; v < NV; ++v) {
    const int64_t left = q.cols - 16 * v;
    const __mmask16 m = left >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << left) - 1);
    // col_total - bias per column (uint32, wrapping), and the multipliers.
    const __m512i vc = _mm512_sub_epi32(_mm512_maskz_loadu_epi32(m, q.col_total + 16 * v),
                                        q.bias ? _mm512_maskz_loadu_epi32(m, q.bias + 16 * v) : _mm512_setzero_si512());
    const __m512 vm = _mm512_maskz_loadu_ps(m, q.mult + 16 * v);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      if (i >= q.rows) break;
      const __m512i x = _mm512_sub_epi32(_mm512_sub_epi32(c[i][v], vc),
                                         _mm512_set1_epi32(static_cast<int32_t>(q.row_total[i])));
      __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(x), vm);
      f = _mm512_min_ps(hi, _mm512_max_ps(lo, f));
      f = _mm512_roundscale_ps(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      _mm512_mask_cvtepi32_storeu_epi8(q.out + i * q.ldo + 16 * v, m, _mm512_add_epi32(_mm512_cvtps_epi32(f), vzp));
    }
  }
}

// 6 rows x 16 columns in 12 ymm accumulators (each panel group is two ymm):
// enough independent sums to cover the dot product's latency.
DLRT_AVX2_VNNI void tile_avx_vnni(int64_t kg, const uint8_t* a, const int8_t* b, int64_t,
                                                           int32_t* acc, bool accumulate) {
  constexpr int MR = 6;
  __m256i c[MR][2];
#pragma GCC unroll 6
  for (int i = 0; i < MR; ++i) {
    c[i][0] = accumulate ? _mm256_load_si256(reinterpret_cast<const __m256i*>(acc + i * 16)) : _mm256_setzero_si256();
    c[i][1] = accumulate ? _mm256_load_si256(reinterpret_cast<const __m256i*>(acc + i * 16 + 8)) : _mm256_setzero_si256();
  }
  for (int64_t g = 0; g < kg; ++g) {
    const __m256i b0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(b + g * 64));
    const __m256i b1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(b + g * 64 + 32));
    const uint8_t* ag = a + g * MR * 4;
#pragma GCC unroll 6
    for (int i = 0; i < MR; ++i) {
      const __m256i av = _mm256_set1_epi32(load4(ag + i * 4));
      c[i][0] = _mm256_dpbusd_avx_epi32(c[i][0], av, b0);
      c[i][1] = _mm256_dpbusd_avx_epi32(c[i][1], av, b1);
    }
  }
#pragma GCC unroll 6
  for (int i = 0; i < MR; ++i) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(acc + i * 16), c[i][0]);
    _mm256_store_si256(reinterpret_cast<__m256i*>(acc + i * 16 + 8), c[i][1]);
  }
}

// AVX2 without VNNI: 4 rows x 16 columns on operands widened when packed.
// Per group and k pair h: B's 16 columns x 2 k are two ymm of int16 pairs,
// each row's two values of A one broadcast dword; VPMADDWD adds each
// column's pair of products into an int32 lane (at most 2 x 255 x 128, no
// saturation), VPADDD accumulates.
DLRT_AVX2_INT void tile_avx2_wide(int64_t kg, const uint8_t* a8, const int8_t* b8, int64_t, int32_t* acc,
                                  bool accumulate) {
  constexpr int MR = 4;
  const auto* a = reinterpret_cast<const int16_t*>(a8);
  const auto* b = reinterpret_cast<const int16_t*>(b8);
  __m256i c[MR][2];
#pragma GCC unroll 4
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 2
    for (int v = 0; v < 2; ++v)
      c[i][v] = accumulate ? _mm256_load_si256(reinterpret_cast<const __m256i*>(acc + i * 16 + 8 * v))
                           : _mm256_setzero_si256();
  for (int64_t g = 0; g < kg; ++g) {
    const int16_t* bg = b + g * 64;
    const int16_t* ag = a + g * MR * 4;
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const __m256i b0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(bg + h * 32));
      const __m256i b1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(bg + h * 32 + 16));
#pragma GCC unroll 4
      for (int i = 0; i < MR; ++i) {
        int32_t pair;
        std::memcpy(&pair, ag + i * 4 + 2 * h, 4);
        const __m256i av = _mm256_set1_epi32(pair);
        c[i][0] = _mm256_add_epi32(c[i][0], _mm256_madd_epi16(av, b0));
        c[i][1] = _mm256_add_epi32(c[i][1], _mm256_madd_epi16(av, b1));
      }
      // Each k pair's sums into the accumulators before the next pair: left
      // free, GCC adds the two pairs' products first and then runs out of
      // registers (two accumulators spilled to the stack every group).
#pragma GCC unroll 4
      for (int i = 0; i < MR; ++i) __asm__("" : "+x"(c[i][0]), "+x"(c[i][1]));
    }
  }
#pragma GCC unroll 4
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 2
    for (int v = 0; v < 2; ++v) _mm256_store_si256(reinterpret_cast<__m256i*>(acc + i * 16 + 8 * v), c[i][v]);
}

// One panel and group in the wide layout: rows 0/1 and 2/3 interleaved by
// byte (column c's k pair side by side), sign-extended to int16.
DLRT_AVX2_INT void pack_wide_avx2(const uint8_t* const* r, uint8_t flip, int16_t* dst, int32_t* colsum) {
  const __m128i f = _mm_set1_epi8(static_cast<char>(flip));
  __m128i x[4];
  for (int t = 0; t < 4; ++t) x[t] = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r[t])), f);
  auto* out = reinterpret_cast<__m256i*>(dst);
  const __m256i w0 = _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(x[0], x[1]));
  const __m256i w1 = _mm256_cvtepi8_epi16(_mm_unpackhi_epi8(x[0], x[1]));
  const __m256i w2 = _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(x[2], x[3]));
  const __m256i w3 = _mm256_cvtepi8_epi16(_mm_unpackhi_epi8(x[2], x[3]));
  _mm256_store_si256(out + 0, w0);
  _mm256_store_si256(out + 1, w1);
  _mm256_store_si256(out + 2, w2);
  _mm256_store_si256(out + 3, w3);
  // Column sums: each dword of w holds one column's pair; VPMADDWD by 1 adds it.
  const __m256i one = _mm256_set1_epi16(1);
  const __m256i lo = _mm256_add_epi32(_mm256_madd_epi16(w0, one), _mm256_madd_epi16(w2, one));
  const __m256i hi = _mm256_add_epi32(_mm256_madd_epi16(w1, one), _mm256_madd_epi16(w3, one));
  auto* cs = reinterpret_cast<__m256i*>(colsum);
  _mm256_storeu_si256(cs, _mm256_add_epi32(_mm256_loadu_si256(cs), lo));
  _mm256_storeu_si256(cs + 1, _mm256_add_epi32(_mm256_loadu_si256(cs + 1), hi));
}

// Four rows' 16 bytes (4 groups) XORed with flip, transposed by dwords to
// one 16-byte group of 4 rows each, zero-extended to int16.
DLRT_AVX2_INT int64_t pack_a4_wide_avx2(const uint8_t* const* rows, int64_t groups, uint8_t flip, uint8_t* dst) {
  const __m128i f = _mm_set1_epi8(static_cast<char>(flip));
  int64_t g = 0;
  for (; g + 4 <= groups; g += 4) {
    __m128i x[4];
    for (int r = 0; r < 4; ++r)
      x[r] = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[r] + g * 4)), f);
    const __m128i t0 = _mm_unpacklo_epi32(x[0], x[1]), t1 = _mm_unpacklo_epi32(x[2], x[3]);
    const __m128i t2 = _mm_unpackhi_epi32(x[0], x[1]), t3 = _mm_unpackhi_epi32(x[2], x[3]);
    const __m128i grp[4] = {_mm_unpacklo_epi64(t0, t1), _mm_unpackhi_epi64(t0, t1), _mm_unpacklo_epi64(t2, t3),
                            _mm_unpackhi_epi64(t2, t3)};
    for (int q = 0; q < 4; ++q)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + (g + q) * 32), _mm256_cvtepu8_epi16(grp[q]));
  }
  return g;
}

// Four panels (64 columns) of one group of 4 k: the rows' bytes flipped to
// their stored int8 values, transposed to 16 columns x 4 bytes per panel (the
// 128-bit lanes do the four panels side by side, then a 4 x 4 lane
// transpose puts each panel's 64 bytes together), and the columns' sums.
DLRT_AVX512BW void pack_quad_avx512(const uint8_t* const* r, uint8_t flip,
                                                                  int8_t* dst, int64_t panel_bytes,
                                                                  int32_t* colsum) {
  const __m512i f = _mm512_set1_epi8(static_cast<char>(flip));
  const __m512i a = _mm512_xor_si512(_mm512_loadu_si512(r[0]), f), b = _mm512_xor_si512(_mm512_loadu_si512(r[1]), f);
  const __m512i c = _mm512_xor_si512(_mm512_loadu_si512(r[2]), f), d = _mm512_xor_si512(_mm512_loadu_si512(r[3]), f);
  const __m512i ab_lo = _mm512_unpacklo_epi8(a, b), ab_hi = _mm512_unpackhi_epi8(a, b);
  const __m512i cd_lo = _mm512_unpacklo_epi8(c, d), cd_hi = _mm512_unpackhi_epi8(c, d);
  const __m512i o0 = _mm512_unpacklo_epi16(ab_lo, cd_lo), o1 = _mm512_unpackhi_epi16(ab_lo, cd_lo);
  const __m512i o2 = _mm512_unpacklo_epi16(ab_hi, cd_hi), o3 = _mm512_unpackhi_epi16(ab_hi, cd_hi);
  const __m512i t0 = _mm512_shuffle_i64x2(o0, o1, 0x44), t1 = _mm512_shuffle_i64x2(o0, o1, 0xEE);
  const __m512i t2 = _mm512_shuffle_i64x2(o2, o3, 0x44), t3 = _mm512_shuffle_i64x2(o2, o3, 0xEE);
  _mm512_store_si512(dst, _mm512_shuffle_i64x2(t0, t2, 0x88));
  _mm512_store_si512(dst + panel_bytes, _mm512_shuffle_i64x2(t0, t2, 0xDD));
  _mm512_store_si512(dst + 2 * panel_bytes, _mm512_shuffle_i64x2(t1, t3, 0x88));
  _mm512_store_si512(dst + 3 * panel_bytes, _mm512_shuffle_i64x2(t1, t3, 0xDD));
  // Column sums: the 4 bytes sign-extended to 16 bits and added, then to 32.
  const __m512i s_lo = _mm512_add_epi16(
      _mm512_add_epi16(_mm512_cvtepi8_epi16(_mm512_castsi512_si256(a)), _mm512_cvtepi8_epi16(_mm512_castsi512_si256(b))),
      _mm512_add_epi16(_mm512_cvtepi8_epi16(_mm512_castsi512_si256(c)), _mm512_cvtepi8_epi16(_mm512_castsi512_si256(d))));
  const __m512i s_hi = _mm512_add_epi16(
      _mm512_add_epi16(_mm512_cvtepi8_epi16(_mm512_extracti64x4_epi64(a, 1)),
                       _mm512_cvtepi8_epi16(_mm512_extracti64x4_epi64(b, 1))),
      _mm512_add_epi16(_mm512_cvtepi8_epi16(_mm512_extracti64x4_epi64(c, 1)),
                       _mm512_cvtepi8_epi16(_mm512_extracti64x4_epi64(d, 1))));
  const __m512i sums[4] = {_mm512_cvtepi16_epi32(_mm512_castsi512_si256(s_lo)),
                           _mm512_cvtepi16_epi32(_mm512_extracti64x4_epi64(s_lo, 1)),
                           _mm512_cvtepi16_epi32(_mm512_castsi512_si256(s_hi)),
                           _mm512_cvtepi16_epi32(_mm512_extracti64x4_epi64(s_hi, 1))};
  for (int q = 0; q < 4; ++q)
    _mm512_storeu_si512(colsum + 16 * q, _mm512_add_epi32(_mm512_loadu_si512(colsum + 16 * q), sums[q]));
}

// Packs the `groups` groups of 4 k of 8 rows of A (rows[r], each XORed with
// flip) as the 8-row kernel reads them: group g is 8 x 4 bytes at
// dst + g * 32, row r's 4 bytes at offset 4 r. Per 16 groups (the last ones
// through masked loads): the 8 x 16 dwords transposed by unpacks within
// 128-bit lanes, then stored by lane. Returns the groups packed (all).
DLRT_AVX512BW int64_t pack_a8_avx512(const uint8_t* const* rows, int64_t groups,
                                                                   uint8_t flip, uint8_t* dst) {
  const __m512i f = _mm512_set1_epi8(static_cast<char>(flip));
  for (int64_t g0 = 0; g0 < groups; g0 += 16) {
    const int64_t n = std::min<int64_t>(16, groups - g0);
    const __mmask64 bytes = n == 16 ? ~__mmask64{0} : (__mmask64{1} << (4 * n)) - 1;
    __m512i r[8], t[8], u[8];
    for (int i = 0; i < 8; ++i) r[i] = _mm512_xor_si512(_mm512_maskz_loadu_epi8(bytes, rows[i] + g0 * 4), f);
    for (int i = 0; i < 4; ++i) {  // lane L: rows 2i, 2i + 1 at dwords 4L, 4L + 1 (lo) and 4L + 2, 4L + 3 (hi)
      t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
      t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
    }
    for (int h = 0; h < 2; ++h) {  // u[4h + j], lane L: rows 4h .. 4h + 3 of group 4L + j
      u[4 * h + 0] = _mm512_unpacklo_epi64(t[4 * h], t[4 * h + 2]);
      u[4 * h + 1] = _mm512_unpackhi_epi64(t[4 * h], t[4 * h + 2]);
      u[4 * h + 2] = _mm512_unpacklo_epi64(t[4 * h + 1], t[4 * h + 3]);
      u[4 * h + 3] = _mm512_unpackhi_epi64(t[4 * h + 1], t[4 * h + 3]);
    }
    uint8_t* d = dst + g0 * 32;
    alignas(64) __m128i lanes[8][4];
    for (int i = 0; i < 8; ++i) _mm512_store_si512(lanes[i], u[i]);
    for (int64_t gl = 0; gl < n; ++gl) {  // group gl = 4L + j
      const int64_t L = gl / 4, j = gl % 4;
      _mm_storeu_si128(reinterpret_cast<__m128i*>(d + gl * 32), lanes[j][L]);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(d + gl * 32 + 16), lanes[4 + j][L]);
    }
  }
  return groups;
}

}  // namespace

PackA8Fn avx512_pack_a8() { return pack_a8_avx512; }
RequantColsTileFn avx512_vnni_requant_cols_tile(int nv) {
  switch (nv) {
    case 1: return tile_requant_cols_avx512_vnni<1>;
    case 2: return tile_requant_cols_avx512_vnni<2>;
    case 3: return tile_requant_cols_avx512_vnni<3>;
    default: return nullptr;
  }
}
PackQuadFn avx512_pack_quad() { return pack_quad_avx512; }
TileFn avx2_wide_tile() { return tile_avx2_wide; }
PackWideFn avx2_pack_wide() { return pack_wide_avx2; }
PackA8Fn avx2_pack_a4_wide() { return pack_a4_wide_avx2; }

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
TileFn avx2_wide_tile() { return nullptr; }
PackWideFn avx2_pack_wide() { return nullptr; }
PackA8Fn avx2_pack_a4_wide() { return nullptr; }
PackQuadFn avx512_pack_quad() { return nullptr; }
PackA8Fn avx512_pack_a8() { return nullptr; }
RequantColsTileFn avx512_vnni_requant_cols_tile(int) { return nullptr; }
TileFn avx_vnni_tile() { return nullptr; }
}  // namespace dlrt::cpu::int8_detail

#endif
