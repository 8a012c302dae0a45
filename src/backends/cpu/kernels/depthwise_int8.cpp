// The 8-bit depthwise plane (depthwise_int8.h).
#include "backends/cpu/kernels/depthwise_int8.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "backends/cpu/kernels/byte_transpose.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/isa_target.h"
#include "backends/cpu/kernels/quantize_rows.h"
#include "backends/cpu/scratch.h"
#include "device/cpu_features.h"

#if defined(__x86_64__) || defined(__i386__)
#include "backends/cpu/kernels/x86_intrinsics.h"  // <immintrin.h>

#define DLRT_DW8_X86 1
#endif

#define DLRT_SIMD_BODY "backends/cpu/kernels/depthwise_int8_simd.h"
#include "backends/cpu/kernels/simd/instantiate.h"

namespace dlrt::cpu {
namespace {

// The padded copy, split by phase: padded row r = ih + ph (r in [0, rows))
// and column c = iw + pw go to block (r mod sh, c mod sw), row r / sh,
// column c / sw; block (fr, fc) starts at ((fr * sw + fc) * r_len) * q_len.
// A value is x - x_zp, or 0 outside x. row(ih, f, lo, hi, d) converts the
// part inside x of one phase row: d[q] = x[ih][q * sw + f - pw] - x_zp for
// q in [lo, hi).
template <typename Row>
__attribute__((always_inline)) inline void fill_plane(const DepthwiseInt8Geometry& g, int64_t rows, int64_t r_len,
                                                      int64_t q_len, int16_t* buf, const Row& row) {
  const int64_t S = g.sw;
  for (int64_t fr = 0; fr < g.sh; ++fr)
    for (int64_t rq = 0; rq < r_len; ++rq) {
      const int64_t r = rq * g.sh + fr, ih = r - g.ph;
      for (int64_t f = 0; f < S; ++f) {
        int16_t* d = buf + ((fr * S + f) * r_len + rq) * q_len;
        if (r >= rows || ih < 0 || ih >= g.H) {
          std::fill(d, d + q_len, int16_t{0});
          continue;
        }
        // q with 0 <= q * S + f - pw < W: [lo, hi).
        const int64_t first = g.pw - f;  // q * S >= first
        const int64_t lo = std::min(q_len, first <= 0 ? int64_t{0} : (first + S - 1) / S);
        const int64_t last = g.W - 1 + g.pw - f;  // q * S <= last
        const int64_t hi = last < 0 ? lo : std::max(lo, std::min(q_len, last / S + 1));
        std::fill(d, d + lo, int16_t{0});
        row(ih, f, lo, hi, d);
        std::fill(d + hi, d + q_len, int16_t{0});
      }
    }
}

// fill_plane's portable row conversion.
template <typename X>
struct ConvertRow {
  const DepthwiseInt8Geometry& g;
  const X* x;
  int32_t xz;
  void operator()(int64_t ih, int64_t f, int64_t lo, int64_t hi, int16_t* d) const {
    const int64_t S = g.sw;
    const X* src = x + ih * g.W + f - g.pw;  // src[q * S] = x[ih][q * S + f - pw]
    if (S == 1) {
      for (int64_t q = lo; q < hi; ++q) d[q] = static_cast<int16_t>(static_cast<int32_t>(src[q]) - xz);
    } else if (S == 2) {
      for (int64_t q = lo; q < hi; ++q) d[q] = static_cast<int16_t>(static_cast<int32_t>(src[2 * q]) - xz);
    } else {
      for (int64_t q = lo; q < hi; ++q) d[q] = static_cast<int16_t>(static_cast<int32_t>(src[q * S]) - xz);
    }
  }
};

// out[i] = sum over t < taps of src[t][i] * w[t], i < n (uint32: wraps as int32 would).
void sum_taps_generic(const int16_t* const* src, const int32_t* w, int64_t taps, int64_t n, int32_t* out) {
  auto* o = reinterpret_cast<uint32_t*>(out);
  std::fill(o, o + n, 0u);
  for (int64_t t = 0; t < taps; ++t) {
    const int16_t* s = src[t];
    const uint32_t wt = static_cast<uint32_t>(w[t]);
    for (int64_t i = 0; i < n; ++i) o[i] += static_cast<uint32_t>(static_cast<int32_t>(s[i])) * wt;
  }
}

#ifdef DLRT_DW8_X86
// values [lo, hi) of one phase row: d[q] = src[q * S] - xz for S 1 or 2, 32 at a time.
template <bool kSigned, int S>
DLRT_AVX512 inline void convert_row_avx512(const uint8_t* src, int32_t xz, int64_t lo, int64_t hi, int16_t* d) {
  const __m512i z = _mm512_set1_epi16(static_cast<int16_t>(xz));
  for (int64_t q = lo; q < hi; q += 32) {
    const int64_t c = std::min<int64_t>(32, hi - q);
    const __mmask32 out = c == 32 ? ~__mmask32{0} : static_cast<__mmask32>((1u << c) - 1);
    __m512i v;
    if constexpr (S == 1) {
      const __m256i b = _mm256_maskz_loadu_epi8(out, src + q);
      v = kSigned ? _mm512_cvtepi8_epi16(b) : _mm512_cvtepu8_epi16(b);
    } else {
      // 2c - 1 bytes: the even ones are the values, as the low byte of each 16-bit lane.
      const int64_t bytes = 2 * c - 1;
      const __mmask64 in = (~__mmask64{0}) >> (64 - bytes);
      const __m512i b = _mm512_maskz_loadu_epi8(in, src + 2 * q);
      v = kSigned ? _mm512_srai_epi16(_mm512_slli_epi16(b, 8), 8) : _mm512_and_si512(b, _mm512_set1_epi16(0xFF));
    }
    _mm512_mask_storeu_epi16(d + q, out, _mm512_sub_epi16(v, z));
  }
}

// fill_plane's row conversion for the strides 1 and 2, in vector loops.
template <bool kSigned>
struct ConvertRowAvx512 {
  const DepthwiseInt8Geometry& g;
  const uint8_t* x;
  int32_t xz;
  DLRT_AVX512 void operator()(int64_t ih, int64_t f, int64_t lo, int64_t hi, int16_t* d) const {
    const uint8_t* src = x + ih * g.W + f - g.pw;  // src + q * sw is x[ih][q * sw + f - pw]
    if (g.sw == 1)
      convert_row_avx512<kSigned, 1>(src, xz, lo, hi, d);
    else
      convert_row_avx512<kSigned, 2>(src, xz, lo, hi, d);
  }
};

// convert_row_avx512 at 256 bits: 16 values at a time while the loads stay
// inside the row (stride 2 reads 2 * 16 bytes), then 8 at a time; the last
// values of a row at least one vector long by one more vector ending where
// the loads must stop (it rewrites some of the previous one's values, with
// the same values); the rest (rows shorter than a vector, and stride 2's
// last value) one by one.
template <bool kSigned, int S>
DLRT_AVX2_INT inline void convert16_avx2(const uint8_t* src, __m256i z, int64_t q, int16_t* d) {
  __m256i v;
  if constexpr (S == 1) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + q));
    v = kSigned ? _mm256_cvtepi8_epi16(b) : _mm256_cvtepu8_epi16(b);
  } else {
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 2 * q));
    v = kSigned ? _mm256_srai_epi16(_mm256_slli_epi16(b, 8), 8) : _mm256_and_si256(b, _mm256_set1_epi16(0xFF));
  }
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + q), _mm256_sub_epi16(v, z));
}

template <bool kSigned, int S>
DLRT_AVX2_INT inline void convert8_avx2(const uint8_t* src, __m128i z, int64_t q, int16_t* d) {
  __m128i v;
  if constexpr (S == 1) {
    const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + q));
    v = kSigned ? _mm_cvtepi8_epi16(b) : _mm_cvtepu8_epi16(b);
  } else {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * q));
    v = kSigned ? _mm_srai_epi16(_mm_slli_epi16(b, 8), 8) : _mm_and_si128(b, _mm_set1_epi16(0xFF));
  }
  _mm_storeu_si128(reinterpret_cast<__m128i*>(d + q), _mm_sub_epi16(v, z));
}

template <bool kSigned, int S>
DLRT_AVX2_INT inline void convert_row_avx2(const uint8_t* src, int32_t xz, int64_t lo, int64_t hi, int16_t* d) {
  const __m256i z = _mm256_set1_epi16(static_cast<int16_t>(xz));
  const __m128i z8 = _mm_set1_epi16(static_cast<int16_t>(xz));
  // A vector of n values at q reads inside the row while q + n + (S - 1) <= hi,
  // so the vectors reach end = hi - (S - 1) at most (the last S - 1 values one by one).
  const int64_t end = hi - (S - 1);
  int64_t q = lo;
  for (; q + 16 <= end; q += 16) convert16_avx2<kSigned, S>(src, z, q, d);
  if (q > lo && q < end) {
    convert16_avx2<kSigned, S>(src, z, end - 16, d);
    q = end;
  }
  for (; q + 8 <= end; q += 8) convert8_avx2<kSigned, S>(src, z8, q, d);
  if (q > lo && q < end && end - 8 >= lo) {
    convert8_avx2<kSigned, S>(src, z8, end - 8, d);
    q = end;
  }
  using X = std::conditional_t<kSigned, int8_t, uint8_t>;
  const X* x = reinterpret_cast<const X*>(src);
  for (; q < hi; ++q) d[q] = static_cast<int16_t>(static_cast<int32_t>(x[q * S]) - xz);
}

template <bool kSigned>
struct ConvertRowAvx2 {
  const DepthwiseInt8Geometry& g;
  const uint8_t* x;
  int32_t xz;
  DLRT_AVX2_INT void operator()(int64_t ih, int64_t f, int64_t lo, int64_t hi, int16_t* d) const {
    const uint8_t* src = x + ih * g.W + f - g.pw;  // src + q * sw is x[ih][q * sw + f - pw]
    if (g.sw == 1)
      convert_row_avx2<kSigned, 1>(src, xz, lo, hi, d);
    else
      convert_row_avx2<kSigned, 2>(src, xz, lo, hi, d);
  }
};

template <bool kSigned>
DLRT_AVX2_INT void fill_plane_avx2(const DepthwiseInt8Geometry& g, const uint8_t* x, int32_t xz, int64_t rows,
                                   int64_t r_len, int64_t q_len, int16_t* buf) {
  using X = std::conditional_t<kSigned, int8_t, uint8_t>;
  if (g.sw > 2) return fill_plane(g, rows, r_len, q_len, buf, ConvertRow<X>{g, reinterpret_cast<const X*>(x), xz});
  fill_plane(g, rows, r_len, q_len, buf, ConvertRowAvx2<kSigned>{g, x, xz});
}

template <bool kSigned>
DLRT_AVX512 void fill_plane_avx512(const DepthwiseInt8Geometry& g, const uint8_t* x, int32_t xz, int64_t rows,
                                   int64_t r_len, int64_t q_len, int16_t* buf) {
  using X = std::conditional_t<kSigned, int8_t, uint8_t>;
  if (g.sw > 2) return fill_plane(g, rows, r_len, q_len, buf, ConvertRow<X>{g, reinterpret_cast<const X*>(x), xz});
  fill_plane(g, rows, r_len, q_len, buf, ConvertRowAvx512<kSigned>{g, x, xz});
}
#endif

}  // namespace

void depthwise_int8_plane(const DepthwiseInt8Geometry& g, const uint8_t* x, bool x_signed, int32_t x_zp,
                          const int32_t* w, DepthwiseRowSink sink) {
  if (g.OH <= 0 || g.OW <= 0) return;
  // Padded extent the output reads: rows [0, rows), columns [0, cols).
  const int64_t rows = (g.OH - 1) * g.sh + (g.KH - 1) * g.dh + 1;
  const int64_t cols = (g.OW - 1) * g.sw + (g.KW - 1) * g.dw + 1;
  const int64_t r_len = (rows + g.sh - 1) / g.sh, q_len = (cols + g.sw - 1) / g.sw;
  const int64_t taps = g.KH * g.KW;
  // Output rows per pass: about 4096 sums (in L1), at least one row.
  const int64_t chunk = std::max<int64_t>(1, 4096 / q_len);
  thread_local AlignedScratch plane_scratch, sum_scratch, tap_scratch;
  int16_t* buf =
      plane_scratch.get<int16_t>(static_cast<size_t>(g.sh * g.sw * r_len * q_len), AlignedScratch::Growth::kByHalf);
  int32_t* sums =
      sum_scratch.get<int32_t>(static_cast<size_t>(std::min(chunk, g.OH) * q_len), AlignedScratch::Growth::kByHalf);
  const int16_t** src = tap_scratch.get<const int16_t*>(static_cast<size_t>(2 * taps), AlignedScratch::Growth::kByHalf);
  const int16_t** base = src + taps;
  [[maybe_unused]] const bool avx512 = cpu_isa() >= CpuIsa::kAvx512;
#ifdef DLRT_DW8_X86
  if (avx512) {
    if (x_signed)
      fill_plane_avx512<true>(g, x, x_zp, rows, r_len, q_len, buf);
    else
      fill_plane_avx512<false>(g, x, x_zp, rows, r_len, q_len, buf);
  } else if (cpu_isa() >= CpuIsa::kAvx2) {
    if (x_signed)
      fill_plane_avx2<true>(g, x, x_zp, rows, r_len, q_len, buf);
    else
      fill_plane_avx2<false>(g, x, x_zp, rows, r_len, q_len, buf);
  } else
#endif
  {
    if (x_signed)
      fill_plane(g, rows, r_len, q_len, buf, ConvertRow<int8_t>{g, reinterpret_cast<const int8_t*>(x), x_zp});
    else
      fill_plane(g, rows, r_len, q_len, buf, ConvertRow<uint8_t>{g, x, x_zp});
  }
  // Tap (kh, kw) of output (oh, ow) reads its block at row oh + (kh * dh) / sh,
  // column ow + (kw * dw) / sw: flat index oh * q_len + ow from `base`.
  for (int64_t kh = 0; kh < g.KH; ++kh)
    for (int64_t kw = 0; kw < g.KW; ++kw) {
      const int64_t r = kh * g.dh, c = kw * g.dw;
      base[kh * g.KW + kw] = buf + (((r % g.sh) * g.sw + c % g.sw) * r_len + r / g.sh) * q_len + c / g.sw;
    }
  for (int64_t oh0 = 0; oh0 < g.OH; oh0 += chunk) {
    const int64_t oh1 = std::min(g.OH, oh0 + chunk);
    // Rows [oh0, oh1) as one run; the columns past OW of each row but the last are not used.
    const int64_t n = (oh1 - oh0 - 1) * q_len + g.OW;
    for (int64_t t = 0; t < taps; ++t) src[t] = base[t] + oh0 * q_len;
    if (cpu_has_simd_kernels())
      DLRT_SIMD_CALL(simd_width(), depthwise_int8_sum_taps, src, w, taps, n, sums);
    else
      sum_taps_generic(src, w, taps, n, sums);
    sink(oh0, oh1, sums, q_len);
  }
}

#ifdef DLRT_DW8_X86
namespace {

constexpr int64_t kBlock = 64;  // channels per block of depthwise_int8_channels

// One block of NV * 16 channels, channels innermost: xt [H][W][kBlock],
// wt [taps][kBlock] int32, yt [OH][OW][kBlock] requantized bytes.
template <int NV, bool kSigned>
DLRT_AVX512 void channels_block_avx512(const DepthwiseInt8Geometry& g, const uint8_t* xt, int32_t xz,
                                       const int32_t* wt, const float* mult, const int32_t* bias,
                                       const DepthwiseInt8Requant& rq, uint8_t* yt) {
  const __m512i vxz = _mm512_set1_epi32(xz), vzp = _mm512_set1_epi32(rq.zero_point);
  const int32_t lowest = rq.out_signed ? -128 : 0, highest = rq.out_signed ? 127 : 255;
  const __m512 lo = _mm512_set1_ps(static_cast<float>(lowest - rq.zero_point));
  const __m512 hi = _mm512_set1_ps(static_cast<float>(highest - rq.zero_point));
  __m512 vm[NV];
  __m512i vb[NV];
  for (int v = 0; v < NV; ++v) {
    vm[v] = _mm512_loadu_ps(mult + 16 * v);
    vb[v] = _mm512_loadu_si512(bias + 16 * v);
  }
  for (int64_t oh = 0; oh < g.OH; ++oh)
    for (int64_t ow = 0; ow < g.OW; ++ow) {
      __m512i acc[NV];
      for (int v = 0; v < NV; ++v) acc[v] = _mm512_setzero_si512();
      for (int64_t kh = 0; kh < g.KH; ++kh) {
        const int64_t ih = oh * g.sh - g.ph + kh * g.dh;
        if (ih < 0 || ih >= g.H) continue;  // padding: x - x_zp is 0 there
        for (int64_t kw = 0; kw < g.KW; ++kw) {
          const int64_t iw = ow * g.sw - g.pw + kw * g.dw;
          if (iw < 0 || iw >= g.W) continue;
          const uint8_t* px = xt + (ih * g.W + iw) * kBlock;
          const int32_t* wp = wt + (kh * g.KW + kw) * kBlock;
          for (int v = 0; v < NV; ++v) {
            const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(px + 16 * v));
            const __m512i xv = _mm512_sub_epi32(kSigned ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b), vxz);
            acc[v] = _mm512_add_epi32(acc[v], _mm512_mullo_epi32(xv, _mm512_loadu_si512(wp + 16 * v)));
          }
        }
      }
      uint8_t* out = yt + (oh * g.OW + ow) * kBlock;
      for (int v = 0; v < NV; ++v) {
        // requantize_u8/s8's operations, per lane with its channel's bias and multiplier.
        __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(acc[v], vb[v])), vm[v]);
        f = _mm512_min_ps(hi, _mm512_max_ps(lo, f));
        f = _mm512_roundscale_ps(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        const __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(f), vzp);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 16 * v), _mm512_cvtepi32_epi8(q));
      }
    }
}

template <bool kSigned>
void channels_block(int nv, const DepthwiseInt8Geometry& g, const uint8_t* xt, int32_t xz, const int32_t* wt,
                    const float* mult, const int32_t* bias, const DepthwiseInt8Requant& rq, uint8_t* yt) {
  switch (nv) {
    case 1: return channels_block_avx512<1, kSigned>(g, xt, xz, wt, mult, bias, rq, yt);
    case 2: return channels_block_avx512<2, kSigned>(g, xt, xz, wt, mult, bias, rq, yt);
    case 3: return channels_block_avx512<3, kSigned>(g, xt, xz, wt, mult, bias, rq, yt);
    default: return channels_block_avx512<4, kSigned>(g, xt, xz, wt, mult, bias, rq, yt);
  }
}

// The VNNI block: 4 taps per VPDPBUSD. After interleaving the bytes of 4
// taps (unpacks within 128-bit lanes, as the GEMM's B packing), vector m's
// int32 lane i holds the 4 bytes of channel vnni_channel(16 m + i); weights,
// bias and multipliers are laid out in that order and the output transposed
// back through it.
constexpr int64_t vnni_channel(int64_t q) { return (q % 16) / 4 * 16 + q / 16 * 4 + q % 4; }

// xp: the block padded ([Hp][Wp][kBlock] bytes, x + 128 when signed, the pad
// being x_zp's byte); off[t]: tap t's byte offset from an output's window
// origin (groups * 4 taps, the missing ones with zero weights); wv[4g + m]:
// tap group g's weights for vector m; bias / mult[kBlock] in the interleaved
// order, x_zp * sum of the weights folded into the bias.
DLRT_AVX512_VNNI void channels_block_vnni(
    const DepthwiseInt8Geometry& g, const uint8_t* xp, int64_t Wp, const int64_t* off, int64_t groups,
    const __m512i* wv, const int32_t* bias, const float* mult, const DepthwiseInt8Requant& rq, uint8_t* yt) {
  const __m512i vzp = _mm512_set1_epi32(rq.zero_point);
  const int32_t lowest = rq.out_signed ? -128 : 0, highest = rq.out_signed ? 127 : 255;
  const __m512 lo = _mm512_set1_ps(static_cast<float>(lowest - rq.zero_point));
  const __m512 hi = _mm512_set1_ps(static_cast<float>(highest - rq.zero_point));
  __m512i vb[4];
  __m512 vm[4];
  for (int m = 0; m < 4; ++m) {
    vb[m] = _mm512_loadu_si512(bias + 16 * m);
    vm[m] = _mm512_loadu_ps(mult + 16 * m);
  }
  for (int64_t oh = 0; oh < g.OH; ++oh)
    for (int64_t ow = 0; ow < g.OW; ++ow) {
      const uint8_t* base = xp + (oh * g.sh * Wp + ow * g.sw) * kBlock;
      __m512i acc[4] = {vb[0], vb[1], vb[2], vb[3]};
      for (int64_t gi = 0; gi < groups; ++gi) {
        const int64_t* o = off + 4 * gi;
        const __m512i a = _mm512_loadu_si512(base + o[0]), b = _mm512_loadu_si512(base + o[1]);
        const __m512i c = _mm512_loadu_si512(base + o[2]), d = _mm512_loadu_si512(base + o[3]);
        const __m512i ab_lo = _mm512_unpacklo_epi8(a, b), ab_hi = _mm512_unpackhi_epi8(a, b);
        const __m512i cd_lo = _mm512_unpacklo_epi8(c, d), cd_hi = _mm512_unpackhi_epi8(c, d);
        const __m512i* w = wv + 4 * gi;
        acc[0] = _mm512_dpbusd_epi32(acc[0], _mm512_unpacklo_epi16(ab_lo, cd_lo), w[0]);
        acc[1] = _mm512_dpbusd_epi32(acc[1], _mm512_unpackhi_epi16(ab_lo, cd_lo), w[1]);
        acc[2] = _mm512_dpbusd_epi32(acc[2], _mm512_unpacklo_epi16(ab_hi, cd_hi), w[2]);
        acc[3] = _mm512_dpbusd_epi32(acc[3], _mm512_unpackhi_epi16(ab_hi, cd_hi), w[3]);
      }
      uint8_t* out = yt + (oh * g.OW + ow) * kBlock;
      for (int m = 0; m < 4; ++m) {
        __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(acc[m]), vm[m]);
        f = _mm512_min_ps(hi, _mm512_max_ps(lo, f));
        f = _mm512_roundscale_ps(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 16 * m),
                         _mm512_cvtepi32_epi8(_mm512_add_epi32(_mm512_cvtps_epi32(f), vzp)));
      }
    }
}

// XORs n bytes with 0x80 (int8 to uint8 + 128).
DLRT_AVX512BW void flip_bytes(uint8_t* p, int64_t n) {
  const __m512i f = _mm512_set1_epi8(static_cast<char>(0x80));
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) _mm512_storeu_si512(p + i, _mm512_xor_si512(_mm512_loadu_si512(p + i), f));
  for (; i < n; ++i) p[i] ^= 0x80;
}

// One block of cb channels (x and y at the block's first plane) through
// channels_block_vnni, when every weight fits int8. False (nothing done) otherwise.
// dst[p * kBlock + c] = src[p * ld + c] for p < n, c < cb (channels-last
// pixels into a block; lanes past cb are 0).
DLRT_AVX512BW void pixels_in(const uint8_t* src, int64_t ld, int64_t n, int64_t cb,
                                                           uint8_t* dst) {
  const __mmask64 k = cb >= 64 ? ~__mmask64{0} : (~__mmask64{0}) >> (64 - cb);
  for (int64_t p = 0; p < n; ++p) _mm512_storeu_si512(dst + p * kBlock, _mm512_maskz_loadu_epi8(k, src + p * ld));
}

// dst[p * ld + c] = src[p * kBlock + c] for p < n, c < cb (a block's natural-order rows out to channels-last pixels).
DLRT_AVX512BW void pixels_out(const uint8_t* src, int64_t n, int64_t cb, uint8_t* dst,
                                                            int64_t ld) {
  const __mmask64 k = cb >= 64 ? ~__mmask64{0} : (~__mmask64{0}) >> (64 - cb);
  for (int64_t p = 0; p < n; ++p) _mm512_mask_storeu_epi8(dst + p * ld, k, _mm512_loadu_si512(src + p * kBlock));
}

// pixels_out for the VNNI block's rows, whose position q holds channel
// vnni_channel(q): dword 4m + j holds channels 16j + 4m .. 16j + 4m + 3, so
// one dword permute per pixel restores the order.
DLRT_AVX512BW void pixels_out_vnni(const uint8_t* src, int64_t n, int64_t cb,
                                                                 uint8_t* dst, int64_t ld) {
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  const __mmask64 k = cb >= 64 ? ~__mmask64{0} : (~__mmask64{0}) >> (64 - cb);
  for (int64_t p = 0; p < n; ++p)
    _mm512_mask_storeu_epi8(dst + p * ld, k, _mm512_permutexvar_epi32(order, _mm512_loadu_si512(src + p * kBlock)));
}

// nhwc: x and y are channels-last, x_stride and y_stride their pixel strides
// (x and y at the block's first channel); else planes x_stride and y_stride apart.
bool block_vnni(const DepthwiseInt8Geometry& g, int64_t cb, const uint8_t* x, int64_t x_stride, bool x_signed,
                int32_t x_zp, const int32_t* w, const float* mult_in, const int32_t* bias_in,
                const DepthwiseInt8Requant& rq, uint8_t* y, int64_t y_stride, bool nhwc) {
  const int64_t taps = g.KH * g.KW, groups = (taps + 3) / 4;
  for (int64_t i = 0; i < cb * taps; ++i)
    if (w[i] < -128 || w[i] > 127) return false;
  const int64_t in = g.H * g.W, out = g.OH * g.OW;
  const int64_t Hp = (g.OH - 1) * g.sh + (g.KH - 1) * g.dh + 1, Wp = (g.OW - 1) * g.sw + (g.KW - 1) * g.dw + 1;
  thread_local AlignedScratch xt_scratch, xp_scratch, yt_scratch, wv_scratch, off_scratch, row_scratch;
  uint8_t* xp = xp_scratch.get<uint8_t>(static_cast<size_t>(Hp * Wp * kBlock), AlignedScratch::Growth::kByHalf);
  uint8_t* yt = yt_scratch.get<uint8_t>(static_cast<size_t>(out * kBlock), AlignedScratch::Growth::kByHalf);
  auto* wv = static_cast<__m512i*>(wv_scratch.bytes(static_cast<size_t>(groups * 4) * sizeof(__m512i) + 2 * kBlock * 4,
                                                    AlignedScratch::Growth::kByHalf));
  auto* bias = reinterpret_cast<int32_t*>(wv + groups * 4);
  auto* mult = reinterpret_cast<float*>(bias + kBlock);
  int64_t* off = off_scratch.get<int64_t>(static_cast<size_t>(groups * 4), AlignedScratch::Growth::kByHalf);
  // The padded block: the input rows, from planes transposed (whole planes
  // at once, the widest run for the 16 x 16 transposes) or from
  // channels-last pixels, and x_zp's byte around them.
  const int64_t iw0 = std::max<int64_t>(0, -g.pw), iw1 = std::max(iw0, std::min(g.W, Wp - g.pw));
  uint8_t* xt = nullptr;
  if (!nhwc) {
    xt = xt_scratch.get<uint8_t>(static_cast<size_t>(in * kBlock), AlignedScratch::Growth::kByHalf);
    transpose_bytes(x, x_stride, cb, in, xt, kBlock);
  }
  const uint8_t pad = static_cast<uint8_t>(x_zp);
  for (int64_t r = 0; r < Hp; ++r) {
    uint8_t* row = xp + r * Wp * kBlock;
    const int64_t ih = r - g.ph;
    if (ih < 0 || ih >= g.H || iw0 == iw1) {
      std::memset(row, pad, static_cast<size_t>(Wp * kBlock));
      continue;
    }
    const int64_t c0 = iw0 + g.pw, c1 = iw1 + g.pw;  // the copied columns of the padded row
    std::memset(row, pad, static_cast<size_t>(c0 * kBlock));
    if (nhwc) pixels_in(x + (ih * g.W + iw0) * x_stride, x_stride, iw1 - iw0, cb, row + c0 * kBlock);
    else std::memcpy(row + c0 * kBlock, xt + (ih * g.W + iw0) * kBlock, static_cast<size_t>((iw1 - iw0) * kBlock));
    std::memset(row + c1 * kBlock, pad, static_cast<size_t>((Wp - c1) * kBlock));
  }
  if (x_signed) flip_bytes(xp, Hp * Wp * kBlock);
  const int32_t xz = x_signed ? x_zp + 128 : x_zp;  // in the stored (unsigned) domain
  for (int64_t t = 0; t < groups * 4; ++t) {
    const int64_t tt = t < taps ? t : 0;  // a missing tap reads tap 0, with weight 0
    off[t] = ((tt / g.KW) * g.dh * Wp + (tt % g.KW) * g.dw) * kBlock;
  }
  for (int64_t q = 0; q < kBlock; ++q) {
    const int64_t ch = vnni_channel(q);
    const bool real = ch < cb;
    int32_t wsum = 0;
    for (int64_t t = 0; t < taps; ++t) wsum += real ? w[ch * taps + t] : 0;
    mult[q] = real ? mult_in[ch] : 0.0f;
    bias[q] = static_cast<int32_t>(static_cast<uint32_t>(real && bias_in ? bias_in[ch] : 0) -
                                   static_cast<uint32_t>(xz) * static_cast<uint32_t>(wsum));
    for (int64_t gi = 0; gi < groups; ++gi) {
      auto* lanes = reinterpret_cast<int8_t*>(wv + 4 * gi + q / 16) + (q % 16) * 4;
      for (int64_t u = 0; u < 4; ++u) {
        const int64_t t = 4 * gi + u;
        lanes[u] = static_cast<int8_t>(real && t < taps ? w[ch * taps + t] : 0);
      }
    }
  }
  channels_block_vnni(g, xp, Wp, off, groups, wv, bias, mult, rq, yt);
  if (nhwc) {
    pixels_out_vnni(yt, out, cb, y, y_stride);
    return true;
  }
  // Back to planes: position q of yt's rows is channel vnni_channel(q).
  uint8_t* dummy = row_scratch.get<uint8_t>(static_cast<size_t>(out), AlignedScratch::Growth::kByHalf);
  uint8_t* rows[kBlock];
  for (int64_t q = 0; q < kBlock; ++q) rows[q] = vnni_channel(q) < cb ? y + vnni_channel(q) * y_stride : dummy;
  int64_t p = 0;
  for (; p + 16 <= out; p += 16)
    for (int64_t q0 = 0; q0 < kBlock; q0 += 16) {
      __m128i cols[16];
      transpose16x16_regs(yt + p * kBlock + q0, kBlock, cols);
      for (int c = 0; c < 16; ++c) _mm_storeu_si128(reinterpret_cast<__m128i*>(rows[q0 + c] + p), cols[c]);
    }
  for (; p < out; ++p)
    for (int64_t q = 0; q < kBlock; ++q) rows[q][p] = yt[p * kBlock + q];
  return true;
}

}  // namespace
#endif

bool depthwise_int8_channels_available() {
#ifdef DLRT_DW8_X86
  return cpu_isa() >= CpuIsa::kAvx512;
#else
  return false;
#endif
}

void depthwise_int8_channels(const DepthwiseInt8Geometry& g, int64_t C, const uint8_t* x, int64_t x_stride,
                             bool x_signed, int32_t x_zp, const int32_t* w, const DepthwiseInt8Requant& rq, uint8_t* y,
                             int64_t y_stride) {
#ifdef DLRT_DW8_X86
  const int64_t in = g.H * g.W, out = g.OH * g.OW, taps = g.KH * g.KW;
  thread_local AlignedScratch x_scratch, y_scratch, w_scratch, p_scratch;
  uint8_t* xt = x_scratch.get<uint8_t>(static_cast<size_t>(in * kBlock), AlignedScratch::Growth::kByHalf);
  uint8_t* yt = y_scratch.get<uint8_t>(static_cast<size_t>(out * kBlock), AlignedScratch::Growth::kByHalf);
  int32_t* wt = w_scratch.get<int32_t>(static_cast<size_t>(taps * kBlock), AlignedScratch::Growth::kByHalf);
  float* mult = p_scratch.get<float>(static_cast<size_t>(2 * kBlock), AlignedScratch::Growth::kByHalf);
  auto* bias = reinterpret_cast<int32_t*>(mult + kBlock);
  const bool vnni = device::cpu_features().avx512_vnni;
  for (int64_t c0 = 0; c0 < C; c0 += kBlock) {
    const int64_t cb = std::min(kBlock, C - c0);
    if (vnni && block_vnni(g, cb, x + c0 * x_stride, x_stride, x_signed, x_zp, w + c0 * taps, rq.mult + c0,
                           rq.bias ? rq.bias + c0 : nullptr, rq, y + c0 * y_stride, y_stride, false))
      continue;
    const int nv = static_cast<int>((cb + 15) / 16);
    if (cb < nv * 16) std::fill(xt, xt + in * kBlock, uint8_t{0});  // lanes past the last channel
    transpose_bytes(x + c0 * x_stride, x_stride, cb, in, xt, kBlock);
    for (int64_t c = 0; c < nv * 16; ++c) {
      const bool real = c < cb;
      for (int64_t t = 0; t < taps; ++t) wt[t * kBlock + c] = real ? w[(c0 + c) * taps + t] : 0;
      mult[c] = real ? rq.mult[c0 + c] : 0.0f;
      bias[c] = real && rq.bias ? rq.bias[c0 + c] : 0;
    }
    if (x_signed) channels_block<true>(nv, g, xt, x_zp, wt, mult, bias, rq, yt);
    else channels_block<false>(nv, g, xt, x_zp, wt, mult, bias, rq, yt);
    transpose_bytes(yt, kBlock, out, cb, y + c0 * y_stride, y_stride);
  }
#else
  (void)g, (void)C, (void)x, (void)x_stride, (void)x_signed, (void)x_zp, (void)w, (void)rq, (void)y, (void)y_stride;
#endif
}

void depthwise_int8_nhwc(const DepthwiseInt8Geometry& g, int64_t C, const uint8_t* x, int64_t x_ld, bool x_signed,
                         int32_t x_zp, const int32_t* w, const DepthwiseInt8Requant& rq, uint8_t* y, int64_t y_ld) {
  [[maybe_unused]] const int64_t taps = g.KH * g.KW, out = g.OH * g.OW;  // out: the x86 path only
#ifdef DLRT_DW8_X86
  if (cpu_isa() >= CpuIsa::kAvx512) {
    const int64_t in = g.H * g.W;
    thread_local AlignedScratch x_scratch, y_scratch, w_scratch, p_scratch;
    const bool vnni = device::cpu_features().avx512_vnni;
    for (int64_t c0 = 0; c0 < C; c0 += kBlock) {
      const int64_t cb = std::min(kBlock, C - c0);
      if (vnni && block_vnni(g, cb, x + c0, x_ld, x_signed, x_zp, w + c0 * taps, rq.mult + c0,
                             rq.bias ? rq.bias + c0 : nullptr, rq, y + c0, y_ld, true))
        continue;
      uint8_t* xt = x_scratch.get<uint8_t>(static_cast<size_t>(in * kBlock), AlignedScratch::Growth::kByHalf);
      uint8_t* yt = y_scratch.get<uint8_t>(static_cast<size_t>(out * kBlock), AlignedScratch::Growth::kByHalf);
      int32_t* wt = w_scratch.get<int32_t>(static_cast<size_t>(taps * kBlock), AlignedScratch::Growth::kByHalf);
      float* mult = p_scratch.get<float>(static_cast<size_t>(2 * kBlock), AlignedScratch::Growth::kByHalf);
      auto* bias = reinterpret_cast<int32_t*>(mult + kBlock);
      const int nv = static_cast<int>((cb + 15) / 16);
      pixels_in(x + c0, x_ld, in, cb, xt);
      for (int64_t c = 0; c < nv * 16; ++c) {
        const bool real = c < cb;
        for (int64_t t = 0; t < taps; ++t) wt[t * kBlock + c] = real ? w[(c0 + c) * taps + t] : 0;
        mult[c] = real ? rq.mult[c0 + c] : 0.0f;
        bias[c] = real && rq.bias ? rq.bias[c0 + c] : 0;
      }
      if (x_signed) channels_block<true>(nv, g, xt, x_zp, wt, mult, bias, rq, yt);
      else channels_block<false>(nv, g, xt, x_zp, wt, mult, bias, rq, yt);
      pixels_out(yt, out, cb, y + c0, y_ld);
    }
    return;
  }
#endif
#if defined(__aarch64__)
  if (cpu_isa() >= CpuIsa::kNeon && depthwise_int8_nhwc_neon(g, C, x, x_ld, x_signed, x_zp, w, rq, y, y_ld)) return;
#endif
  // Portable: per output pixel and channel, the taps inside x.
  for (int64_t oh = 0; oh < g.OH; ++oh)
    for (int64_t ow = 0; ow < g.OW; ++ow)
      for (int64_t c = 0; c < C; ++c) {
        uint32_t acc = 0;
        for (int64_t kh = 0; kh < g.KH; ++kh) {
          const int64_t ih = oh * g.sh - g.ph + kh * g.dh;
          if (ih < 0 || ih >= g.H) continue;
          for (int64_t kw = 0; kw < g.KW; ++kw) {
            const int64_t iw = ow * g.sw - g.pw + kw * g.dw;
            if (iw < 0 || iw >= g.W) continue;
            const uint8_t b = x[(ih * g.W + iw) * x_ld + c];
            const int32_t v = (x_signed ? static_cast<int32_t>(static_cast<int8_t>(b)) : static_cast<int32_t>(b)) - x_zp;
            acc += static_cast<uint32_t>(v * w[c * taps + kh * g.KW + kw]);
          }
        }
        const int32_t sum = static_cast<int32_t>(acc);
        uint8_t* dst = y + (oh * g.OW + ow) * y_ld + c;
        const int32_t b = rq.bias ? rq.bias[c] : 0;
        if (rq.out_signed) requantize_s8(&sum, 1, b, rq.mult[c], rq.zero_point, reinterpret_cast<int8_t*>(dst));
        else requantize_u8(&sum, 1, b, rq.mult[c], rq.zero_point, dst);
      }
}

void for_each_depthwise_int8_task(const DepthwiseInt8Geometry& g, int64_t N, int64_t C, ThreadPool& pool,
                                  FunctionRef<void(const DepthwiseInt8Task&)> task) {
  constexpr int64_t kChannels = 64;  // per block
  const int64_t blocks = (C + kChannels - 1) / kChannels;
  const int64_t bands =
      std::clamp<int64_t>((2 * pool.num_threads() + N * blocks - 1) / (N * blocks), 1, std::max<int64_t>(1, g.OH / 4));
  const int64_t band_rows = (g.OH + bands - 1) / bands;
  auto run = [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t band = t % bands, nb = t / bands;
      DepthwiseInt8Task k;
      k.n = nb / blocks;
      k.c0 = (nb % blocks) * kChannels;
      k.cb = std::min(kChannels, C - k.c0);
      k.oh0 = band * band_rows;
      const int64_t oh1 = std::min(g.OH, k.oh0 + band_rows);
      if (k.oh0 >= oh1) continue;
      const int64_t top = k.oh0 * g.sh - g.ph;
      k.ih0 = std::max<int64_t>(0, top);
      const int64_t ih1 = std::min(g.H, (oh1 - 1) * g.sh - g.ph + (g.KH - 1) * g.dh + 1);
      k.band = g;
      k.band.OH = oh1 - k.oh0;
      k.band.H = std::max<int64_t>(0, ih1 - k.ih0);
      k.band.ph = k.ih0 - top;
      task(k);
    }
  };
  const int64_t tasks = N * blocks * bands;
  pool.parallel_for(tasks, pool.balanced_grain(tasks, 1), run);
}

}  // namespace dlrt::cpu
