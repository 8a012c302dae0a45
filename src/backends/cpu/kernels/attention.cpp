// The attention kernels (attention.h).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>  // the x86 paths only
#endif

#include "backends/cpu/kernels/attention.h"
#include "backends/cpu/kernels/gemm_amx.h"
#include "backends/cpu/kernels/gemm_bf16.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/isa_target.h"
#include "backends/cpu/kernels/vec_avx512.h"
#include "backends/cpu/scratch.h"

#define DLRT_SIMD_BODY "backends/cpu/kernels/attention_softmax_simd.h"
#include "backends/cpu/kernels/simd/instantiate.h"

namespace dlrt::cpu::attention {
namespace {

// Per-thread scratch: grows to the largest problem seen, then stays.
float* scratch(size_t n) {
  thread_local AlignedScratch buf;
  return buf.get<float>(n);
}

int64_t round8(int64_t n) { return (n + 7) / 8 * 8; }

// Kᵀ of head (b, h) into kt [D][ldk] (ldk = Skv rounded up to 8, zero-padded).
void pack_kt(const Problem& p, int64_t b, int64_t h, float* kt, int64_t ldk) {
  const float* k = p.k.base + b * p.k.sb + h * p.k.sh;
  for (int64_t c = 0; c < p.D; ++c) {
    float* dst = kt + c * ldk;
    const float* src = k + c * p.k.sd;
    if (p.k.ss == 1) std::memcpy(dst, src, sizeof(float) * p.Skv);
    else
      for (int64_t j = 0; j < p.Skv; ++j) dst[j] = src[j * p.k.ss];
    for (int64_t j = p.Skv; j < ldk; ++j) dst[j] = 0;
  }
}

// Adds scale/mask to rows of scores and turns them into softmax numerators;
// returns 1/sum per row in inv. Generic version.
void softmax_rows_generic(const Problem& p, int64_t b, int64_t h, int64_t i0, int rows, float* s, int64_t lds,
                          float* inv) {
  for (int r = 0; r < rows; ++r) {
    float* row = s + r * lds;
    const float* m = p.mask_row(b, h, i0 + r);
    float mx = -std::numeric_limits<float>::infinity();
    for (int64_t j = 0; j < p.Skv; ++j) {
      float x = row[j] * p.scale + (m ? m[j * p.mk] : 0.0f);
      row[j] = x;
      mx = std::max(mx, x);
    }
    if (mx == -std::numeric_limits<float>::infinity()) mx = 0;  // fully masked row: NaN-free, as unfused
    float sum = 0;
    for (int64_t j = 0; j < p.Skv; ++j) {
      float e = std::exp(row[j] - mx);
      row[j] = e;
      sum += e;
    }
    inv[r] = 1.0f / sum;
  }
}

// Problem::zero_undefined_rows on rows [i0, i0 + rows) of head (b, h), once
// their outputs are written: inv[r] = 1/sum is not finite where the sum was 0 or NaN.
void clear_undefined_rows(const Problem& p, int64_t b, int64_t h, int64_t i0, int rows, const float* inv) {
  if (!p.zero_undefined_rows) return;
  for (int r = 0; r < rows; ++r)
    if (!std::isfinite(inv[r])) {
      float* o = p.out + b * p.ob + h * p.oh + (i0 + r) * p.os;
      for (int64_t c = 0; c < p.Dv; ++c) o[c] = 0.0f;
    }
}

}  // namespace

void attend_generic(const Problem& p, int64_t b, int64_t h, int64_t r0, int64_t r1) {
  const int64_t ldk = round8(p.Skv);
  float* kt = scratch(static_cast<size_t>(p.D * ldk + kRows * ldk + kRows * p.Dv));
  float* s = kt + p.D * ldk;
  float* acc = s + kRows * ldk;
  pack_kt(p, b, h, kt, ldk);
  const float* q = p.q.base + b * p.q.sb + h * p.q.sh;
  const float* v = p.v.base + b * p.v.sb + h * p.v.sh;
  for (int64_t i0 = r0; i0 < r1; i0 += kRows) {
    int rows = static_cast<int>(std::min<int64_t>(kRows, r1 - i0));
    for (int r = 0; r < rows; ++r) {
      float* srow = s + r * ldk;
      std::fill(srow, srow + p.Skv, 0.0f);
      const float* qr = q + (i0 + r) * p.q.ss;
      for (int64_t c = 0; c < p.D; ++c) {
        float qc = qr[c * p.q.sd];
        const float* kr = kt + c * ldk;
        for (int64_t j = 0; j < p.Skv; ++j) srow[j] += qc * kr[j];
      }
    }
    float inv[kRows];
    // On NEON (the simd/ level without x86 paths) the 128-bit softmax rows.
    if (cpu_has_simd_kernels())
      DLRT_SIMD_CALL(simd_width(), attention_softmax_rows, p, b, h, i0, rows, s, ldk, inv);
    else
      softmax_rows_generic(p, b, h, i0, rows, s, ldk, inv);
    for (int r = 0; r < rows; ++r) {
      float* a = acc + r * p.Dv;
      std::fill(a, a + p.Dv, 0.0f);
      const float* srow = s + r * ldk;
      for (int64_t j = 0; j < p.Skv; ++j) {
        const float* vr = v + j * p.v.ss;
        float pj = srow[j];
        for (int64_t c = 0; c < p.Dv; ++c) a[c] += pj * vr[c * p.v.sd];
      }
      float* o = p.out + b * p.ob + h * p.oh + (i0 + r) * p.os;
      for (int64_t c = 0; c < p.Dv; ++c) o[c] = a[c] * inv[r];
    }
    clear_undefined_rows(p, b, h, i0, rows, inv);
  }
}

#if defined(__x86_64__)
namespace {

// R rows x (8 * NV) columns of acc = sum over t < n of a[r * as + t] * b[t * ldb + (0 .. 8 NV)].
template <int NV>
DLRT_AVX2 __attribute__((always_inline)) inline void tile6_avx2(int64_t n, const float* a, int64_t as, const float* b,
                                                                int64_t ldb, __m256 (&acc)[kRowsAvx2][2]) {
#pragma GCC unroll 6
  for (int r = 0; r < kRowsAvx2; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm256_setzero_ps();
  for (int64_t t = 0; t < n; ++t) {
    __m256 bv[NV];
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) bv[v] = _mm256_loadu_ps(b + t * ldb + 8 * v);
#pragma GCC unroll 6
    for (int r = 0; r < kRowsAvx2; ++r) {
      const __m256 av = _mm256_broadcast_ss(a + r * as + t);
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm256_fmadd_ps(av, bv[v], acc[r][v]);
    }
  }
}

}  // namespace

DLRT_AVX2 void attend_avx2(const Problem& p, int64_t b, int64_t h, int64_t r0, int64_t r1) {
  constexpr int R = kRowsAvx2;
  const int64_t ldk = round8(p.Skv);
  const bool v_contig = p.v.sd == 1;
  const int64_t vsize = v_contig ? 0 : p.Skv * p.Dv;
  float* kt = scratch(static_cast<size_t>(p.D * ldk + R * ldk + R * p.D + vsize));
  float* s = kt + p.D * ldk;
  float* qbuf = s + R * ldk;
  float* vbuf = qbuf + R * p.D;
  pack_kt(p, b, h, kt, ldk);
  const float* q = p.q.base + b * p.q.sb + h * p.q.sh;
  const float* v = p.v.base + b * p.v.sb + h * p.v.sh;
  int64_t vss = p.v.ss;
  if (!v_contig) {
    for (int64_t j = 0; j < p.Skv; ++j)
      for (int64_t c = 0; c < p.Dv; ++c) vbuf[j * p.Dv + c] = v[j * p.v.ss + c * p.v.sd];
    v = vbuf;
    vss = p.Dv;
  }
  for (int64_t i0 = r0; i0 < r1; i0 += R) {
    const int rows = static_cast<int>(std::min<int64_t>(R, r1 - i0));
    // Rows past `rows` repeat the last one: computed, never stored.
    for (int r = 0; r < R; ++r) {
      const float* qr = q + (i0 + std::min(r, rows - 1)) * p.q.ss;
      for (int64_t c = 0; c < p.D; ++c) qbuf[r * p.D + c] = qr[c * p.q.sd];
    }
    __m256 acc[R][2];
    // Scores: R rows x 16 keys per tile (the last tile 8 keys if ldk % 16 == 8).
    for (int64_t j = 0; j < ldk; j += 16) {
      const bool two = j + 16 <= ldk;
      if (two) tile6_avx2<2>(p.D, qbuf, p.D, kt + j, ldk, acc);
      else tile6_avx2<1>(p.D, qbuf, p.D, kt + j, ldk, acc);
#pragma GCC unroll 6
      for (int r = 0; r < R; ++r) {
        _mm256_storeu_ps(s + r * ldk + j, acc[r][0]);
        if (two) _mm256_storeu_ps(s + r * ldk + j + 8, acc[r][1]);
      }
    }
    float inv[R];
    simd::w256::attention_softmax_rows(p, b, h, i0, rows, s, ldk, inv);
    // P·V: R rows x 16 (then 8) head dims per tile; dims past the last 8 one by one.
    float* o[R];
    for (int r = 0; r < R; ++r) o[r] = p.out + b * p.ob + h * p.oh + (i0 + std::min(r, rows - 1)) * p.os;
    int64_t c0 = 0;
    while (c0 + 8 <= p.Dv) {
      const bool two = c0 + 16 <= p.Dv;
      if (two) tile6_avx2<2>(p.Skv, s, ldk, v + c0, vss, acc);
      else tile6_avx2<1>(p.Skv, s, ldk, v + c0, vss, acc);
#pragma GCC unroll 6
      for (int r = 0; r < R; ++r) {  // constant indices keep `acc` in registers
        if (r >= rows) continue;
        const __m256 sc = _mm256_set1_ps(inv[r]);
        _mm256_storeu_ps(o[r] + c0, _mm256_mul_ps(acc[r][0], sc));
        if (two) _mm256_storeu_ps(o[r] + c0 + 8, _mm256_mul_ps(acc[r][1], sc));
      }
      c0 += two ? 16 : 8;
    }
    for (; c0 < p.Dv; ++c0)
      for (int r = 0; r < rows; ++r) {
        float a = 0;
        for (int64_t j = 0; j < p.Skv; ++j) a += s[r * ldk + j] * v[j * vss + c0];
        o[r][c0] = a * inv[r];
      }
    clear_undefined_rows(p, b, h, i0, rows, inv);
  }
}
#endif

#ifdef DLRT_HAVE_AVX512_PATHS
namespace {

// pack_kt for K stored with its dims contiguous (bshd/bhsd): 8 keys x 8
// dims per step through an 8x8 register transpose (row loads and stores, no
// gathers); the key tail (< 8) and the zero padding up to ldk are scalar.
DLRT_AVX512 void pack_kt_avx512(const Problem& p, int64_t b, int64_t h, float* kt, int64_t ldk) {
  if (p.k.sd != 1 || p.k.ss == 1) return pack_kt(p, b, h, kt, ldk);
  const float* k = p.k.base + b * p.k.sb + h * p.k.sh;
  const int64_t ss = p.k.ss, D8 = p.D / 8 * 8, S8 = p.Skv / 8 * 8;
  for (int64_t j = 0; j < S8; j += 8) {
    const float* r = k + j * ss;
    for (int64_t c = 0; c < D8; c += 8) {
      // rows: keys j..j+7 (dims c..c+7) -> columns of kt (dim rows c..c+7, keys j..j+7)
      const __m256 x0 = _mm256_loadu_ps(r + c), x1 = _mm256_loadu_ps(r + ss + c);
      const __m256 x2 = _mm256_loadu_ps(r + 2 * ss + c), x3 = _mm256_loadu_ps(r + 3 * ss + c);
      const __m256 x4 = _mm256_loadu_ps(r + 4 * ss + c), x5 = _mm256_loadu_ps(r + 5 * ss + c);
      const __m256 x6 = _mm256_loadu_ps(r + 6 * ss + c), x7 = _mm256_loadu_ps(r + 7 * ss + c);
      const __m256 t0 = _mm256_unpacklo_ps(x0, x1), t1 = _mm256_unpackhi_ps(x0, x1);
      const __m256 t2 = _mm256_unpacklo_ps(x2, x3), t3 = _mm256_unpackhi_ps(x2, x3);
      const __m256 t4 = _mm256_unpacklo_ps(x4, x5), t5 = _mm256_unpackhi_ps(x4, x5);
      const __m256 t6 = _mm256_unpacklo_ps(x6, x7), t7 = _mm256_unpackhi_ps(x6, x7);
      const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
      const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
      const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
      const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
      float* d = kt + c * ldk + j;
      _mm256_storeu_ps(d + 0 * ldk, _mm256_permute2f128_ps(u0, u4, 0x20));
      _mm256_storeu_ps(d + 1 * ldk, _mm256_permute2f128_ps(u1, u5, 0x20));
      _mm256_storeu_ps(d + 2 * ldk, _mm256_permute2f128_ps(u2, u6, 0x20));
      _mm256_storeu_ps(d + 3 * ldk, _mm256_permute2f128_ps(u3, u7, 0x20));
      _mm256_storeu_ps(d + 4 * ldk, _mm256_permute2f128_ps(u0, u4, 0x31));
      _mm256_storeu_ps(d + 5 * ldk, _mm256_permute2f128_ps(u1, u5, 0x31));
      _mm256_storeu_ps(d + 6 * ldk, _mm256_permute2f128_ps(u2, u6, 0x31));
      _mm256_storeu_ps(d + 7 * ldk, _mm256_permute2f128_ps(u3, u7, 0x31));
    }
    for (int64_t c = D8; c < p.D; ++c)
      for (int64_t jj = 0; jj < 8; ++jj) kt[c * ldk + j + jj] = r[jj * ss + c];
  }
  for (int64_t c = 0; c < p.D; ++c) {
    float* d = kt + c * ldk;
    for (int64_t j = S8; j < p.Skv; ++j) d[j] = k[j * ss + c];
    for (int64_t j = p.Skv; j < ldk; ++j) d[j] = 0.0f;
  }
}

// R rows of n scaled, masked scores, row[r] with maximum lanes vmx[r] (over
// the real keys only), into their softmax numerators; inv[r] = 1/sum. Four
// vectors per step go through the exp in lockstep: four of one row, or two
// of each of two rows. A row's work is short (minilm: 8 vectors), and alone
// its maximum, exps and sum form one chain; two rows interleave two
// independent chains (8 rows x 128 keys in a standalone loop: 3.5-3.9 ->
// 3.1-3.2 ns a vector). The rest one vector per row at a time (masked-off
// tail lanes load -inf and so add 0).
template <int R>
DLRT_AVX512 void softmax_exp_rows_avx512(float* const* row, int64_t n, const __m512* vmx, float* inv) {
  static_assert(R == 1 || R == 2, "four vectors a step: four of one row or two of each of two");
  constexpr int V = 4 / R;  // vectors of each row per step
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  __m512 vm[R];
  for (int r = 0; r < R; ++r) {
    float mx = avx512::hmax(vmx[r]);
    if (mx == kNegInf) mx = 0;  // fully masked row: NaN-free, as unfused
    vm[r] = _mm512_set1_ps(mx);
  }
  __m512 vs[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
  int64_t j = 0;
  for (; j + 16 * V <= n; j += 16 * V) {
    __m512 e[4];
#pragma GCC unroll 4
    for (int u = 0; u < 4; ++u) e[u] = _mm512_sub_ps(_mm512_loadu_ps(row[u / V] + j + 16 * (u % V)), vm[u / V]);
    avx512::exp_nonpositive_lockstep<4>(e);
#pragma GCC unroll 4
    for (int u = 0; u < 4; ++u) {
      _mm512_storeu_ps(row[u / V] + j + 16 * (u % V), e[u]);
      vs[u] = _mm512_add_ps(vs[u], e[u]);
    }
  }
  for (; j < n; j += 16) {
    const __mmask16 k = avx512::tail_mask(n - j);
    __m512 e[R];
    for (int r = 0; r < R; ++r)
      e[r] = _mm512_sub_ps(_mm512_mask_loadu_ps(_mm512_set1_ps(kNegInf), k, row[r] + j), vm[r]);
    avx512::exp_nonpositive_lockstep<R>(e);
    for (int r = 0; r < R; ++r) {
      _mm512_mask_storeu_ps(row[r] + j, k, e[r]);
      vs[r * V] = _mm512_add_ps(vs[r * V], e[r]);
    }
  }
  for (int r = 0; r < R; ++r) {
    const __m512* v = vs + r * V;
    __m512 t = _mm512_add_ps(v[0], v[1]);
    if constexpr (V == 4) t = _mm512_add_ps(t, _mm512_add_ps(v[2], v[3]));
    inv[r] = 1.0f / avx512::hsum(t);
  }
}

// Scale, mask and exponentiate rows of scores, 16 keys per step (the tail masked).
DLRT_AVX512 void softmax_rows_avx512(const Problem& p, int64_t b, int64_t h, int64_t i0, int rows, float* s,
                                     int64_t lds, float* inv) {
  const __m512 sc = _mm512_set1_ps(p.scale);
  for (int r = 0; r < rows; ++r) {
    float* row = s + r * lds;
    const float* m = p.mask_row(b, h, i0 + r);
    const bool mask_keys = m && p.mk == 1;
    const __m512 add = _mm512_set1_ps(m && !mask_keys ? m[0] : 0.0f);
    __m512 vmx = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
    for (int64_t j = 0; j < p.Skv; j += 16) {
      const __mmask16 k = avx512::tail_mask(p.Skv - j);
      const __m512 a = mask_keys ? _mm512_maskz_loadu_ps(k, m + j) : add;
      const __m512 x = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k, row + j), sc, a);
      _mm512_mask_storeu_ps(row + j, k, x);
      vmx = _mm512_mask_max_ps(vmx, k, vmx, x);
    }
    softmax_exp_rows_avx512<1>(&row, p.Skv, &vmx, &inv[r]);
  }
}

// As attend_avx2 with 16-lane vectors and 8 query rows per block: scores 8
// rows x 32 keys per step (Kᵀ packed with ldk a multiple of 32), P·V 8 rows x
// 32 dims per step (masked at the head dim's tail); 16 accumulators each.
constexpr int kRows512 = 8;
}  // namespace

DLRT_AVX512 void attend_avx512(const Problem& p, int64_t b, int64_t h, int64_t r0, int64_t r1) {
  const int64_t ldk = (p.Skv + 31) / 32 * 32;
  const int64_t D = p.D, Skv = p.Skv;  // loop bounds in registers, not reloaded after each store
  const __m512 sc = _mm512_set1_ps(p.scale);
  const bool v_contig = p.v.sd == 1;
  const int64_t vsize = v_contig ? 0 : p.Skv * p.Dv;
  float* kt = scratch(static_cast<size_t>(p.D * ldk + kRows512 * ldk + kRows512 * p.D + vsize));
  float* s = kt + p.D * ldk;
  float* qbuf = s + kRows512 * ldk;
  float* vbuf = qbuf + kRows512 * p.D;
  pack_kt_avx512(p, b, h, kt, ldk);
  const float* q = p.q.base + b * p.q.sb + h * p.q.sh;
  const float* v = p.v.base + b * p.v.sb + h * p.v.sh;
  int64_t vss = p.v.ss;
  if (!v_contig) {
    for (int64_t j = 0; j < p.Skv; ++j)
      for (int64_t c = 0; c < p.Dv; ++c) vbuf[j * p.Dv + c] = v[j * p.v.ss + c * p.v.sd];
    v = vbuf;
    vss = p.Dv;
  }
  for (int64_t i0 = r0; i0 < r1; i0 += kRows512) {
    const int rows = static_cast<int>(std::min<int64_t>(kRows512, r1 - i0));
    // The block's query rows, read in place where their head dims are
    // contiguous (copied otherwise); rows past the block repeat its last.
    const float* qr[kRows512];
    for (int r = 0; r < kRows512; ++r) {
      const float* src = q + (i0 + std::min(r, rows - 1)) * p.q.ss;
      if (p.q.sd == 1) {
        qr[r] = src;
        continue;
      }
      for (int64_t c = 0; c < p.D; ++c) qbuf[r * p.D + c] = src[c * p.q.sd];
      qr[r] = qbuf + r * p.D;
    }
    // Row r's mask: per key (mrow[r], a row of the mask) or one value for
    // all its keys (madd[r]; 0 without a mask).
    const bool mask_keys = p.mask && p.mk == 1;
    const float* mrow[kRows512];
    float madd[kRows512];
    __m512 vmx[kRows512];
    for (int r = 0; r < kRows512; ++r) {
      const float* m = p.mask_row(b, h, i0 + std::min(r, rows - 1));
      mrow[r] = m;
      madd[r] = m && !mask_keys ? m[0] : 0.0f;
      vmx[r] = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
    }
    for (int64_t j = 0; j < ldk; j += 32) {
      __m512 a[kRows512][2];
      for (auto& x : a) x[0] = x[1] = _mm512_setzero_ps();
      const float* kc = kt + j;
#pragma GCC unroll 4
      for (int64_t c = 0; c < D; ++c) {
        const __m512 k0 = _mm512_loadu_ps(kc + c * ldk), k1 = _mm512_loadu_ps(kc + c * ldk + 16);
        for (int r = 0; r < kRows512; ++r) {
          const __m512 qv = _mm512_set1_ps(qr[r][c]);
          a[r][0] = _mm512_fmadd_ps(qv, k0, a[r][0]);
          a[r][1] = _mm512_fmadd_ps(qv, k1, a[r][1]);
        }
      }
      // Scale and mask on the way out, and each row's running maximum over
      // its real keys (the padding up to ldk is left out): the softmax then
      // needs one pass over the scores instead of two.
      const __mmask16 k0 = avx512::tail_mask(Skv - j), k1 = avx512::tail_mask(Skv - j - 16);
#pragma GCC unroll 8
      for (int r = 0; r < kRows512; ++r) {
        const __m512 add0 = mask_keys ? _mm512_maskz_loadu_ps(k0, mrow[r] + j) : _mm512_set1_ps(madd[r]);
        const __m512 add1 = mask_keys ? _mm512_maskz_loadu_ps(k1, mrow[r] + j + 16) : _mm512_set1_ps(madd[r]);
        const __m512 x0 = _mm512_fmadd_ps(a[r][0], sc, add0), x1 = _mm512_fmadd_ps(a[r][1], sc, add1);
        _mm512_storeu_ps(s + r * ldk + j, x0);
        _mm512_storeu_ps(s + r * ldk + j + 16, x1);
        vmx[r] = _mm512_mask_max_ps(vmx[r], k0, vmx[r], x0);
        vmx[r] = _mm512_mask_max_ps(vmx[r], k1, vmx[r], x1);
      }
    }
    float inv[kRows512];
    int paired = 0;  // rows two at a time, then an odd last one alone
    for (; paired + 2 <= rows; paired += 2) {
      float* const pair[2] = {s + paired * ldk, s + (paired + 1) * ldk};
      softmax_exp_rows_avx512<2>(pair, Skv, vmx + paired, inv + paired);
    }
    if (paired < rows) {
      float* const last = s + paired * ldk;
      softmax_exp_rows_avx512<1>(&last, Skv, vmx + paired, inv + paired);
    }
    for (int r = rows; r < kRows512; ++r) std::fill(s + r * ldk, s + r * ldk + p.Skv, 0.0f);
    float* o[kRows512];
    for (int r = 0; r < kRows512; ++r) o[r] = p.out + b * p.ob + h * p.oh + (i0 + std::min(r, rows - 1)) * p.os;
    for (int64_t c0 = 0; c0 < p.Dv; c0 += 32) {
      const __mmask16 m0 = avx512::tail_mask(p.Dv - c0), m1 = avx512::tail_mask(std::max<int64_t>(0, p.Dv - c0 - 16));
      __m512 a[kRows512][2];
      for (auto& x : a) x[0] = x[1] = _mm512_setzero_ps();
#pragma GCC unroll 4
      for (int64_t j = 0; j < Skv; ++j) {
        const float* vr = v + j * vss + c0;
        const __m512 v0 = _mm512_maskz_loadu_ps(m0, vr), v1 = _mm512_maskz_loadu_ps(m1, vr + 16);
        for (int r = 0; r < kRows512; ++r) {
          const __m512 pr = _mm512_set1_ps(s[r * ldk + j]);
          a[r][0] = _mm512_fmadd_ps(pr, v0, a[r][0]);
          a[r][1] = _mm512_fmadd_ps(pr, v1, a[r][1]);
        }
      }
      // Constant indices only (a runtime bound on r would put `a` in memory).
#pragma GCC unroll 8
      for (int r = 0; r < kRows512; ++r) {
        if (r >= rows) continue;
        const __m512 sc = _mm512_set1_ps(inv[r]);
        _mm512_mask_storeu_ps(o[r] + c0, m0, _mm512_mul_ps(a[r][0], sc));
        _mm512_mask_storeu_ps(o[r] + c0 + 16, m1, _mm512_mul_ps(a[r][1], sc));
      }
    }
    clear_undefined_rows(p, b, h, i0, rows, inv);
  }
}

namespace {

// Precision bf16x3 (gemm_amx.h): Q·Kᵀ and P·V as AMX tile products, the
// softmax between them as in attend_avx512. Per task: Kᵀ (as
// pack_kt_avx512 lays it out) and V split into tiles once, then blocks of
// up to kAmxRows query rows: scores, softmax, P·V, each row scaled by its
// 1/sum on the way out. Needs Q's and V's head dims contiguous.
constexpr int64_t kAmxRows = 64;
std::atomic<uint64_t> g_amx_runs{0};
std::atomic<uint64_t> g_bf16_runs{0};
}  // namespace

namespace {

// Q·Kᵀ and P·V through a GEMM against a B packed per task: bf16x3 on AMX
// tiles (attend_amx) or bf16 (attend_bf16); both take the same arguments.
using PackedBytes = size_t (*)(int64_t, int64_t);
using PackB = void (*)(bool, int64_t, int64_t, const float*, int64_t, void*);
template <PackedBytes packed_bytes, PackB pack_b, typename Gemm>
DLRT_AVX512 void attend_packed(const Problem& p, int64_t b, int64_t h, int64_t r0, int64_t r1, Gemm gemm) {
  const int64_t ldk = (p.Skv + 31) / 32 * 32;
  const size_t kt_floats = static_cast<size_t>(p.D * ldk), s_floats = static_cast<size_t>(kAmxRows * ldk);
  const size_t o_floats = static_cast<size_t>(kAmxRows * p.Dv);
  // Packed operands in float units (rounded up to 16: the offsets stay 64-byte aligned).
  const size_t bk_floats = (packed_bytes(p.D, p.Skv) / 4 + 15) / 16 * 16;
  const size_t bv_floats = (packed_bytes(p.Skv, p.Dv) / 4 + 15) / 16 * 16;
  float* kt = scratch(kt_floats + s_floats + o_floats + bk_floats + bv_floats + kAmxRows);
  float* s = kt + kt_floats;
  float* o = s + s_floats;
  float* bk = o + o_floats;
  float* bv = bk + bk_floats;
  float* inv = bv + bv_floats;
  pack_kt_avx512(p, b, h, kt, ldk);
  pack_b(false, p.D, p.Skv, kt, ldk, bk);
  const float* v = p.v.base + b * p.v.sb + h * p.v.sh;
  pack_b(false, p.Skv, p.Dv, v, p.v.ss, bv);
  const float* q = p.q.base + b * p.q.sb + h * p.q.sh;
  for (int64_t i0 = r0; i0 < r1; i0 += kAmxRows) {
    const int rows = static_cast<int>(std::min<int64_t>(kAmxRows, r1 - i0));
    gemm(rows, p.Skv, p.D, 1.0f, q + i0 * p.q.ss, p.q.ss, false, bk, 0.0f, s, ldk, nullptr, nullptr);
    softmax_rows_avx512(p, b, h, i0, rows, s, ldk, inv);
    gemm(rows, p.Dv, p.Skv, 1.0f, s, ldk, false, bv, 0.0f, o, p.Dv, nullptr, nullptr);
    for (int r = 0; r < rows; ++r) {
      float* dst = p.out + b * p.ob + h * p.oh + (i0 + r) * p.os;
      const __m512 sc = _mm512_set1_ps(inv[r]);
      for (int64_t c = 0; c < p.Dv; c += 16) {
        const __mmask16 m = avx512::tail_mask(p.Dv - c);
        _mm512_mask_storeu_ps(dst + c, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, o + r * p.Dv + c), sc));
      }
    }
    clear_undefined_rows(p, b, h, i0, rows, inv);
  }
}

}  // namespace

DLRT_AVX512 void attend_amx(const Problem& p, int64_t b, int64_t h, int64_t r0, int64_t r1) {
  g_amx_runs.fetch_add(1, std::memory_order_relaxed);
  attend_packed<amx_bf16x3_packed_bytes, amx_bf16x3_pack_b>(p, b, h, r0, r1, amx_bf16x3_gemm);
}

DLRT_AVX512 void attend_bf16(const Problem& p, int64_t b, int64_t h, int64_t r0, int64_t r1) {
  g_bf16_runs.fetch_add(1, std::memory_order_relaxed);
  auto gemm = [](int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda, bool ta, const void* pb,
                 float beta, float* C, int64_t ldc, const GemmEpilogue* ep, ThreadPool* pool) {
    bf16_gemm(M, N, K, alpha, A, lda, ta, pb, beta, C, ldc, ep, pool);
  };
  attend_packed<bf16_packed_b_bytes, bf16_pack_b>(p, b, h, r0, r1, gemm);
}
#endif

uint64_t amx_runs() {
#ifdef DLRT_HAVE_AVX512_PATHS
  return g_amx_runs.load(std::memory_order_relaxed);
#else
  return 0;
#endif
}

uint64_t bf16_runs() {
#ifdef DLRT_HAVE_AVX512_PATHS
  return g_bf16_runs.load(std::memory_order_relaxed);
#else
  return 0;
#endif
}

}  // namespace dlrt::cpu::attention
