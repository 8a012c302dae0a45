// The float32 pooling kernels of pool_planes.h: the separable rows and
// columns passes (portable and AVX2), the AVX-512 3x3/2 MaxPool, and the
// global max and average.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define DLRT_POOL_X86 1
#endif

#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/isa_target.h"
#include "backends/cpu/kernels/pool_planes.h"
#include "backends/cpu/kernels/vec_avx512.h"
#include "backends/cpu/scratch.h"

namespace dlrt::cpu::pool_impl {
namespace {

// t[j] = reduction over the nr >= 1 rows of rows[r][j], j < n.
template <bool kMax>
void rows_scalar(const float* const* rows, int64_t nr, float* t, int64_t n) {
  const float* r0 = rows[0];
  for (int64_t j = 0; j < n; ++j) t[j] = r0[j];
  for (int64_t r = 1; r < nr; ++r) {
    const float* x = rows[r];
    for (int64_t j = 0; j < n; ++j) {
      if constexpr (kMax) t[j] = x[j] > t[j] ? x[j] : t[j];
      else t[j] += x[j];
    }
  }
}

// y[o] = reduction of t[o*s .. o*s+k), o < out; the average divides by
// rowcnt * colcnt[o].
template <bool kMax>
void cols_scalar_from(const float* t, float* y, int64_t o, int64_t out, int64_t s, int64_t k, const float* colcnt,
                      float rowcnt) {
  for (; o < out; ++o) {
    const float* w = t + o * s;
    float a = w[0];
    for (int64_t i = 1; i < k; ++i) {
      if constexpr (kMax) a = w[i] > a ? w[i] : a;
      else a += w[i];
    }
    if constexpr (kMax) y[o] = a;
    else y[o] = a / (rowcnt * colcnt[o]);
  }
}

template <bool kMax>
void cols_scalar(const float* t, float* y, int64_t out, int64_t s, int64_t k, const float* colcnt, float rowcnt) {
  cols_scalar_from<kMax>(t, y, 0, out, s, k, colcnt, rowcnt);
}

#ifdef DLRT_POOL_X86
template <bool kMax>
DLRT_AVX2 inline __m256 vop(__m256 a, __m256 b) {
  if constexpr (kMax) return _mm256_max_ps(a, b);
  else return _mm256_add_ps(a, b);
}

// The even-indexed floats of w[0..16).
DLRT_AVX2 inline __m256 load_even(const float* w) {
  const __m256 sh = _mm256_shuffle_ps(_mm256_loadu_ps(w), _mm256_loadu_ps(w + 8), _MM_SHUFFLE(2, 0, 2, 0));
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(sh), _MM_SHUFFLE(3, 1, 2, 0)));
}

template <bool kMax>
DLRT_AVX2 void rows_avx2(const float* const* rows, int64_t nr, float* t, int64_t n) {
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    __m256 a0 = _mm256_loadu_ps(rows[0] + j), a1 = _mm256_loadu_ps(rows[0] + j + 8);
    for (int64_t r = 1; r < nr; ++r) {
      a0 = vop<kMax>(a0, _mm256_loadu_ps(rows[r] + j));
      a1 = vop<kMax>(a1, _mm256_loadu_ps(rows[r] + j + 8));
    }
    _mm256_storeu_ps(t + j, a0);
    _mm256_storeu_ps(t + j + 8, a1);
  }
  for (; j + 8 <= n; j += 8) {
    __m256 a = _mm256_loadu_ps(rows[0] + j);
    for (int64_t r = 1; r < nr; ++r) a = vop<kMax>(a, _mm256_loadu_ps(rows[r] + j));
    _mm256_storeu_ps(t + j, a);
  }
  for (; j < n; ++j) {
    float a = rows[0][j];
    for (int64_t r = 1; r < nr; ++r) {
      if constexpr (kMax) a = rows[r][j] > a ? rows[r][j] : a;
      else a += rows[r][j];
    }
    t[j] = a;
  }
}

// Needs t readable up to index (out-1)*s + k (one past the last tap).
template <bool kMax>
DLRT_AVX2 void cols_avx2(const float* t, float* y, int64_t out, int64_t s, int64_t k,
                                                   const float* colcnt, float rowcnt) {
  int64_t o = 0;
  const __m256 vrow = _mm256_set1_ps(rowcnt);
#define DLRT_POOL_FINISH(a, at)                                                                    \
  do {                                                                                             \
    if constexpr (!kMax) a = _mm256_div_ps(a, _mm256_mul_ps(vrow, _mm256_loadu_ps(colcnt + (at)))); \
    _mm256_storeu_ps(y + (at), a);                                                                 \
  } while (0)
  if (s == 1) {
    for (; o + 8 <= out; o += 8) {
      const float* w = t + o;
      __m256 a = _mm256_loadu_ps(w);
      for (int64_t i = 1; i < k; ++i) a = vop<kMax>(a, _mm256_loadu_ps(w + i));
      DLRT_POOL_FINISH(a, o);
    }
  } else if (s == 2) {
    for (; o + 8 <= out; o += 8) {
      const float* w = t + 2 * o;
      __m256 a = load_even(w);
      for (int64_t i = 1; i < k; ++i) a = vop<kMax>(a, load_even(w + i));
      DLRT_POOL_FINISH(a, o);
    }
  } else {
    const __m256i idx =
        _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(static_cast<int>(s)));
    for (; o + 8 <= out; o += 8) {
      const float* w = t + s * o;
      __m256 a = _mm256_i32gather_ps(w, idx, 4);
      for (int64_t i = 1; i < k; ++i) a = vop<kMax>(a, _mm256_i32gather_ps(w + i, idx, 4));
      DLRT_POOL_FINISH(a, o);
    }
  }
#undef DLRT_POOL_FINISH
  cols_scalar_from<kMax>(t, y, o, out, s, k, colcnt, rowcnt);
}

DLRT_AVX2 float global_max_avx2(const float* x, int64_t n) {
  if (n < 8) {
    float m = x[0];
    for (int64_t i = 1; i < n; ++i) m = x[i] > m ? x[i] : m;
    return m;
  }
  __m256 a = _mm256_loadu_ps(x);
  int64_t i = 8;
  for (; i + 8 <= n; i += 8) a = _mm256_max_ps(a, _mm256_loadu_ps(x + i));
  if (i < n) a = _mm256_max_ps(a, _mm256_loadu_ps(x + n - 8));  // overlapping tail: max is idempotent
  __m128 h = _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
  h = _mm_max_ps(h, _mm_movehl_ps(h, h));
  h = _mm_max_ss(h, _mm_shuffle_ps(h, h, 1));
  return _mm_cvtss_f32(h);
}

// Sum in double, like the reference walk.
DLRT_AVX2 double global_sum_avx2(const float* x, int64_t n) {
  __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    a0 = _mm256_add_pd(a0, _mm256_cvtps_pd(_mm_loadu_ps(x + i)));
    a1 = _mm256_add_pd(a1, _mm256_cvtps_pd(_mm_loadu_ps(x + i + 4)));
  }
  a0 = _mm256_add_pd(a0, a1);
  __m128d h = _mm_add_pd(_mm256_castpd256_pd128(a0), _mm256_extractf128_pd(a0, 1));
  double sum = _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
  for (; i < n; ++i) sum += static_cast<double>(x[i]);
  return sum;
}
#endif

float global_max_scalar(const float* x, int64_t n) {
  float m = x[0];
  for (int64_t i = 1; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

double global_sum_scalar(const float* x, int64_t n) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]);
  return sum;
}

using RowsFn = void (*)(const float* const*, int64_t, float*, int64_t);
using ColsFn = void (*)(const float*, float*, int64_t, int64_t, int64_t, const float*, float);

#ifdef DLRT_HAVE_AVX512_PATHS
// MaxPool 3x3, stride 2, begin pads of at most 1 on 2-D planes (resnet18's
// after its stem), on AVX-512: per output row, the maximum of its (up to)
// three input rows into a row buffer framed by -inf, then 16 outputs per
// step from that buffer's even floats, odd floats and even floats one
// further: faster than the AVX2 rows and columns passes on one thread, the
// same on two, where half the input comes from the other core (docs/performance-decisions.md).
bool maxpool3s2_ok(const Window3& g) {
  return g.k[0] == 1 && g.in[0] == 1 && g.out[0] == 1 && g.k[1] == 3 && g.k[2] == 3 && g.s[1] == 2 && g.s[2] == 2 &&
         g.pb[1] <= 1 && g.pb[2] <= 1;
}

DLRT_AVX512 void maxpool3s2_avx512(const Window3& g, const float* X, float* Y, int64_t p0, int64_t p1) {
  const int64_t H = g.in[1], W = g.in[2], OH = g.out[1], OW = g.out[2];
  const int64_t b = 1 - g.pb[2];  // vb[b + 2 ow + i] is tap i of output column ow
  // vb[1 + x]: the rows' maximum at input column x; -inf at 0 and from 1 + W
  // on, past every tap (ceil_mode windows included) and the last step's reads.
  const int64_t vlen = std::max(W + 1, 2 * OW + 2) + 48;
  // On the stack for planes up to 2000 columns wide (no heap on the run path).
  float stack_buf[2048];
  std::vector<float> heap_buf;
  float* vb = stack_buf;
  if (vlen > 2048) {
    heap_buf.resize(static_cast<size_t>(vlen));
    vb = heap_buf.data();
  }
  std::fill(vb, vb + vlen, -std::numeric_limits<float>::infinity());
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  for (int64_t p = p0; p < p1; ++p) {
    const float* xp = X + p * H * W;
    float* yp = Y + p * OH * OW;
    for (int64_t oh = 0; oh < OH; ++oh) {
      const float* rows[3];
      int nr = 0;
      for (int64_t i = 2 * oh - g.pb[1]; i < 2 * oh - g.pb[1] + 3; ++i)
        if (i >= 0 && i < H) rows[nr++] = xp + i * W;
      for (int64_t x = 0; x < W; x += 16) {
        const __mmask16 m = avx512::tail_mask(W - x);
        __m512 v = _mm512_maskz_loadu_ps(m, rows[0] + x);
        for (int r = 1; r < nr; ++r) v = _mm512_max_ps(v, _mm512_maskz_loadu_ps(m, rows[r] + x));
        _mm512_mask_storeu_ps(vb + 1 + x, m, v);
      }
      float* y = yp + oh * OW;
      for (int64_t ow = 0; ow < OW; ow += 16) {
        const float* t = vb + b + 2 * ow;
        const __m512 a = _mm512_loadu_ps(t), c = _mm512_loadu_ps(t + 16);
        const __m512 a2 = _mm512_loadu_ps(t + 2), c2 = _mm512_loadu_ps(t + 18);
        const __m512 v = _mm512_max_ps(_mm512_max_ps(_mm512_permutex2var_ps(a, even, c), _mm512_permutex2var_ps(a, odd, c)),
                                       _mm512_permutex2var_ps(a2, even, c2));
        _mm512_mask_storeu_ps(y + ow, avx512::tail_mask(OW - ow), v);
      }
    }
  }
}
#endif

template <bool kMax>
void pool_planes(bool count_include_pad, const Window3& g, const float* X, float* Y, int64_t p0, int64_t p1,
                 bool avx2) {
  RowsFn rows_fn = rows_scalar<kMax>;
  ColsFn cols_fn = cols_scalar<kMax>;
#ifdef DLRT_POOL_X86
  if (avx2) {
    rows_fn = rows_avx2<kMax>;
    cols_fn = cols_avx2<kMax>;
  }
#endif
  const int64_t in_plane = g.in[0] * g.in[1] * g.in[2], out_plane = g.out[0] * g.out[1] * g.out[2];
  // Row buffer: [0, pb) and [pb + in, end) hold the identity, [pb, pb + in)
  // the reduced input row; one spare float for the stride-2 loads.
  const int64_t tlen = std::max(g.pb[2] + g.in[2], (g.out[2] - 1) * g.s[2] + g.k[2]) + 1;
  // Per-thread buffers kept from call to call: the run path allocates nothing.
  static thread_local AlignedScratch tbuf, colbuf, rowbuf;
  float* t = tbuf.get<float>(static_cast<size_t>(tlen));
  std::fill(t, t + tlen, kMax ? -std::numeric_limits<float>::infinity() : 0.0f);
  float* colcnt = colbuf.get<float>(static_cast<size_t>(g.out[2]));
  for (int64_t ow = 0; ow < g.out[2]; ++ow) {
    const int64_t c0 = ow * g.s[2] - g.pb[2];
    const int64_t valid = std::min(g.k[2], g.in[2] - c0) - std::max<int64_t>(0, -c0);
    const int64_t padded = std::min(g.k[2], g.in[2] + g.pe[2] - c0);
    colcnt[ow] = static_cast<float>(count_include_pad ? padded : valid);
  }
  const float** rows = rowbuf.get<const float*>(static_cast<size_t>(g.k[0] * g.k[1]));
  for (int64_t p = p0; p < p1; ++p) {
    const float* xp = X + p * in_plane;
    float* yp = Y + p * out_plane;
    for (int64_t od = 0; od < g.out[0]; ++od) {
      const int64_t d0 = od * g.s[0] - g.pb[0];
      const int64_t kd_lo = std::max<int64_t>(0, -d0), kd_hi = std::min(g.k[0], g.in[0] - d0);
      const int64_t cnt_d = count_include_pad ? std::min(g.k[0], g.in[0] + g.pe[0] - d0) : kd_hi - kd_lo;
      for (int64_t oh = 0; oh < g.out[1]; ++oh) {
        const int64_t h0 = oh * g.s[1] - g.pb[1];
        const int64_t kh_lo = std::max<int64_t>(0, -h0), kh_hi = std::min(g.k[1], g.in[1] - h0);
        const int64_t cnt_h = count_include_pad ? std::min(g.k[1], g.in[1] + g.pe[1] - h0) : kh_hi - kh_lo;
        int64_t nr = 0;
        for (int64_t kd = kd_lo; kd < kd_hi; ++kd)
          for (int64_t kh = kh_lo; kh < kh_hi; ++kh) rows[nr++] = xp + ((d0 + kd) * g.in[1] + h0 + kh) * g.in[2];
        rows_fn(rows, nr, t + g.pb[2], g.in[2]);
        cols_fn(t, yp + (od * g.out[1] + oh) * g.out[2], g.out[2], g.s[2], g.k[2], colcnt,
                static_cast<float>(cnt_d * cnt_h));
      }
    }
  }
}

}  // namespace

bool have_avx2() {
#ifdef DLRT_POOL_X86
  return cpu_has_avx2();  // honours DLRT_CPU_ISA
#else
  return false;
#endif
}

bool fast_window_ok(const Window3& g) {
  for (int i = 0; i < 3; ++i) {
    if (g.in[i] < 1 || g.out[i] < 1 || g.k[i] < 1 || g.s[i] < 1 || g.pb[i] < 0 || g.pe[i] < 0) return false;
    if (g.pb[i] >= g.k[i]) return false;                     // a window could lie wholly in the begin padding
    if ((g.out[i] - 1) * g.s[i] - g.pb[i] >= g.in[i]) return false;  // ... or start past the input
    if (g.in[i] > (int64_t{1} << 28) || g.k[i] > (int64_t{1} << 28) || g.s[i] > (int64_t{1} << 24)) return false;
  }
  // int32 gather offsets: the whole row buffer must be addressable.
  return g.pb[2] + g.in[2] + g.out[2] * g.s[2] + g.k[2] < (int64_t{1} << 30);
}

void pool_planes_f32(bool is_max, bool count_include_pad, const Window3& g, const float* X, float* Y, int64_t p0,
                     int64_t p1, bool avx2) {
#ifdef DLRT_HAVE_AVX512_PATHS
  if (is_max && avx2 && cpu_has_avx512() && maxpool3s2_ok(g)) return maxpool3s2_avx512(g, X, Y, p0, p1);
#endif
  if (is_max) pool_planes<true>(false, g, X, Y, p0, p1, avx2);
  else pool_planes<false>(count_include_pad, g, X, Y, p0, p1, avx2);
}

void global_pool_planes_f32(bool is_max, const float* X, float* Y, int64_t plane_size, int64_t p0, int64_t p1,
                            bool avx2) {
  float (*max_fn)(const float*, int64_t) = global_max_scalar;
  double (*sum_fn)(const float*, int64_t) = global_sum_scalar;
#ifdef DLRT_POOL_X86
  if (avx2) {
    max_fn = global_max_avx2;
    sum_fn = global_sum_avx2;
  }
#endif
  for (int64_t p = p0; p < p1; ++p) {
    const float* xp = X + p * plane_size;
    Y[p] = is_max ? max_fn(xp, plane_size) : static_cast<float>(sum_fn(xp, plane_size) / static_cast<double>(plane_size));
  }
}

}  // namespace dlrt::cpu::pool_impl
