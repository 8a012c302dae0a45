// Conv and ConvTranspose over 1-D, 2-D and 3-D inputs (NC + spatial).
//
// Conv lowers each (image, group) to one GEMM: W_g [M/g, C/g*k] times the
// im2col matrix [C/g*k, out]; 1x1 stride-1 unpadded convs use the input as
// that matrix directly, and depthwise convs (one input channel per group) run
// a direct loop instead. ConvTranspose is the adjoint: W_g^T times X_g, then
// col2im scatters the columns into the output. Spatial dims are handled as
// 3-D internally (missing leading dims have size 1).
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <new>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "backends/cpu/kernel_build_options.h"
#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/conv_direct.h"
#include "backends/cpu/kernels/depthwise_avx2.h"
#include "backends/cpu/kernels/depthwise_c16.h"
#include "backends/cpu/kernels/depthwise_flat.h"
#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/gemm_amx.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/isa_target.h"
#include "backends/cpu/kernels/vec_avx512.h"
#include "backends/cpu/ops/conv_impl.h"
#include "backends/cpu/ops/nn_util.h"
#include "backends/cpu/scratch.h"
#include "core/first_error.h"

namespace dlrt::cpu {
namespace {

template <typename T>
void gemm_t(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const T* A, int64_t lda, const T* B, int64_t ldb,
            T beta, T* C, int64_t ldc, ThreadPool* pool) {
  if constexpr (std::is_same_v<T, float>) sgemm(ta, tb, M, N, K, 1.0f, A, lda, B, ldb, beta, C, ldc, pool);
  else dgemm(ta, tb, M, N, K, 1.0, A, lda, B, ldb, beta, C, ldc, pool);
}

// Window geometry padded to exactly 3 spatial dims.
struct Geo3 {
  int64_t in[3], out[3], k[3], s[3], d[3], p[3];
  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t k_size() const { return k[0] * k[1] * k[2]; }
};

Geo3 to_geo3(const nn::WindowGeometry& g) {
  Geo3 r;
  const int off = 3 - g.nd;
  for (int i = 0; i < 3; ++i) {
    const bool real = i >= off;
    r.in[i] = real ? g.in[i - off] : 1;
    r.out[i] = real ? g.out[i - off] : 1;
    r.k[i] = real ? g.kernel[i - off] : 1;
    r.s[i] = real ? g.stride[i - off] : 1;
    r.d[i] = real ? g.dilation[i - off] : 1;
    r.p[i] = real ? g.pad_begin[i - off] : 0;
  }
  return r;
}

// col[(c*K + kk), o] = x[c, pos(o, kk)] or 0 in the padding. `x` holds `channels` planes.
template <typename T>
void im2col(const T* x, int64_t channels, const Geo3& g, T* col) {
  const int64_t in_plane = g.in_size(), out_plane = g.out_size();
  int64_t row = 0;
  for (int64_t c = 0; c < channels; ++c) {
    const T* xc = x + c * in_plane;
    for (int64_t kd = 0; kd < g.k[0]; ++kd)
      for (int64_t kh = 0; kh < g.k[1]; ++kh)
        for (int64_t kw = 0; kw < g.k[2]; ++kw, ++row) {
          T* dst = col + row * out_plane;
          // Output columns whose input column is inside the image: ow in [w0, w1).
          const int64_t off_w = kw * g.d[2] - g.p[2];
          int64_t w0 = off_w >= 0 ? 0 : (-off_w + g.s[2] - 1) / g.s[2];
          int64_t w1 = g.in[2] - off_w > 0 ? (g.in[2] - off_w + g.s[2] - 1) / g.s[2] : 0;
          w1 = std::min(w1, g.out[2]);
          w0 = std::min(w0, w1);
          for (int64_t od = 0; od < g.out[0]; ++od) {
            const int64_t id = od * g.s[0] - g.p[0] + kd * g.d[0];
            for (int64_t oh = 0; oh < g.out[1]; ++oh, dst += g.out[2]) {
              const int64_t ih = oh * g.s[1] - g.p[1] + kh * g.d[1];
              if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1]) {
                std::fill(dst, dst + g.out[2], T(0));
                continue;
              }
              const T* src = xc + (id * g.in[1] + ih) * g.in[2];
              std::fill(dst, dst + w0, T(0));
              if (g.s[2] == 1) {
                if (w1 > w0) std::memcpy(dst + w0, src + w0 + off_w, static_cast<size_t>(w1 - w0) * sizeof(T));
              } else {
                for (int64_t ow = w0; ow < w1; ++ow) dst[ow] = src[ow * g.s[2] + off_w];
              }
              std::fill(dst + w1, dst + g.out[2], T(0));
            }
          }
        }
  }
}

#ifdef DLRT_HAVE_AVX512_PATHS
// dst[i] = src[2 i] for i in [0, n): 32 inputs -> 16 outputs per permute; reads
// nothing past src[2 (n - 1)].
DLRT_AVX512 void gather_stride2_avx512(const float* src, int64_t n, float* dst) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const int64_t span = 2 * n - 1;  // inputs that may be read
  for (int64_t i = 0; i < n; i += 16) {
    const int64_t at = 2 * i;
    const __m512 a = _mm512_maskz_loadu_ps(avx512::tail_mask(span - at), src + at);
    const __m512 b = _mm512_maskz_loadu_ps(avx512::tail_mask(std::max<int64_t>(0, span - at - 16)), src + at + 16);
    _mm512_mask_storeu_ps(dst + i, avx512::tail_mask(n - i), _mm512_permutex2var_ps(a, even, b));
  }
}
#endif

// Columns [j0, j0+n) of im2col row p = (c, kd, kh, kw), for the GEMM's
// packing to read directly (no im2col matrix in memory).
template <typename T>
void im2col_row(const T* x, const Geo3& g, int64_t p, int64_t j0, int64_t n, T* dst) {
  const int64_t ks = g.k_size();
  const int64_t c = p / ks;
  int64_t r = p % ks;
  const int64_t kw = r % g.k[2];
  r /= g.k[2];
  const int64_t kh = r % g.k[1], kd = r / g.k[1];
  const T* xc = x + c * g.in_size();
  const int64_t off_w = kw * g.d[2] - g.p[2];
  int64_t w0 = off_w >= 0 ? 0 : (-off_w + g.s[2] - 1) / g.s[2];
  int64_t w1 = g.in[2] - off_w > 0 ? (g.in[2] - off_w + g.s[2] - 1) / g.s[2] : 0;
  w1 = std::min(w1, g.out[2]);
  w0 = std::min(w0, w1);
  const int64_t end = j0 + n;
  // The output position of column j0, then stepped row by row (no divisions per row).
  const int64_t row0 = j0 / g.out[2];
  int64_t ow0 = j0 % g.out[2], oh = row0 % g.out[1], od = row0 / g.out[1];
  for (int64_t j = j0; j < end; ow0 = 0, oh = oh + 1 == g.out[1] ? 0 : oh + 1, od += oh == 0) {
    const int64_t ow1 = std::min(g.out[2], ow0 + (end - j));
    T* d = dst + (j - j0);  // d[ow - ow0] is output column ow of this row
    const int64_t id = od * g.s[0] - g.p[0] + kd * g.d[0];
    const int64_t ih = oh * g.s[1] - g.p[1] + kh * g.d[1];
    if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1]) {
      for (int64_t ow = ow0; ow < ow1; ++ow) d[ow - ow0] = T(0);
    } else {
      const T* src = xc + (id * g.in[1] + ih) * g.in[2];
      const int64_t lo = std::clamp(w0, ow0, ow1), hi = std::clamp(w1, lo, ow1);
      for (int64_t ow = ow0; ow < lo; ++ow) d[ow - ow0] = T(0);
      if (g.s[2] == 1) {
        if (hi > lo) std::memcpy(d + (lo - ow0), src + lo + off_w, static_cast<size_t>(hi - lo) * sizeof(T));
#ifdef DLRT_HAVE_AVX512_PATHS
      } else if (std::is_same_v<T, float> && g.s[2] == 2 && hi - lo >= 16 && cpu_has_avx512()) {
        gather_stride2_avx512(reinterpret_cast<const float*>(src) + lo * 2 + off_w, hi - lo,
                              reinterpret_cast<float*>(d) + (lo - ow0));
#endif
      } else {
        for (int64_t ow = lo; ow < hi; ++ow) d[ow - ow0] = src[ow * g.s[2] + off_w];
      }
      for (int64_t ow = hi; ow < ow1; ++ow) d[ow - ow0] = T(0);
    }
    j += ow1 - ow0;
  }
}

// The adjoint of im2col: y[c, pos(o, kk)] += col[(c*K + kk), o]. Here `g.in`
// is ConvTranspose's output extent (the "image") and `g.out` its input extent.
template <typename T>
void col2im(const T* col, int64_t channels, const Geo3& g, T* y) {
  const int64_t img = g.in_size(), cols = g.out_size();
  int64_t row = 0;
  for (int64_t c = 0; c < channels; ++c) {
    T* yc = y + c * img;
    for (int64_t kd = 0; kd < g.k[0]; ++kd)
      for (int64_t kh = 0; kh < g.k[1]; ++kh)
        for (int64_t kw = 0; kw < g.k[2]; ++kw, ++row) {
          const T* src = col + row * cols;
          const int64_t off_w = kw * g.d[2] - g.p[2];
          int64_t w0 = off_w >= 0 ? 0 : (-off_w + g.s[2] - 1) / g.s[2];
          int64_t w1 = g.in[2] - off_w > 0 ? (g.in[2] - off_w + g.s[2] - 1) / g.s[2] : 0;
          w1 = std::min(w1, g.out[2]);
          for (int64_t od = 0; od < g.out[0]; ++od) {
            const int64_t id = od * g.s[0] - g.p[0] + kd * g.d[0];
            for (int64_t oh = 0; oh < g.out[1]; ++oh, src += g.out[2]) {
              const int64_t ih = oh * g.s[1] - g.p[1] + kh * g.d[1];
              if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1]) continue;
              T* dst = yc + (id * g.in[1] + ih) * g.in[2];
              for (int64_t ow = w0; ow < w1; ++ow) dst[ow * g.s[2] + off_w] += src[ow];
            }
          }
        }
  }
}

// Depthwise: one input plane, one filter, one output plane.
template <typename T>
void depthwise_plane(const T* x, const T* w, const Geo3& g, T* y) {
  const int64_t out_w = g.out[2];
  for (int64_t kd = 0; kd < g.k[0]; ++kd)
    for (int64_t kh = 0; kh < g.k[1]; ++kh)
      for (int64_t kw = 0; kw < g.k[2]; ++kw) {
        const T wv = w[(kd * g.k[1] + kh) * g.k[2] + kw];
        const int64_t off_w = kw * g.d[2] - g.p[2];
        int64_t w0 = off_w >= 0 ? 0 : (-off_w + g.s[2] - 1) / g.s[2];
        int64_t w1 = g.in[2] - off_w > 0 ? (g.in[2] - off_w + g.s[2] - 1) / g.s[2] : 0;
        w1 = std::min(w1, out_w);
        for (int64_t od = 0; od < g.out[0]; ++od) {
          const int64_t id = od * g.s[0] - g.p[0] + kd * g.d[0];
          if (id < 0 || id >= g.in[0]) continue;
          for (int64_t oh = 0; oh < g.out[1]; ++oh) {
            const int64_t ih = oh * g.s[1] - g.p[1] + kh * g.d[1];
            if (ih < 0 || ih >= g.in[1]) continue;
            const T* src = x + (id * g.in[1] + ih) * g.in[2];
            T* dst = y + (od * g.out[1] + oh) * out_w;
            if (g.s[2] == 1) {
              for (int64_t ow = w0; ow < w1; ++ow) dst[ow] += wv * src[ow + off_w];
            } else {
              for (int64_t ow = w0; ow < w1; ++ow) dst[ow] += wv * src[ow * g.s[2] + off_w];
            }
          }
        }
      }
}

// Depthwise, row by row: each output row stays in L1 while every tap adds
// its shifted input row. Compiled for AVX2 where the CPU has it.
template <typename T>
__attribute__((always_inline)) inline void depthwise_rows(const T* __restrict x, const T* __restrict w, const Geo3& g,
                                                          T* __restrict y) {
  const int64_t out_w = g.out[2];
  for (int64_t od = 0; od < g.out[0]; ++od)
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
      T* dst = y + (od * g.out[1] + oh) * out_w;
      for (int64_t kd = 0; kd < g.k[0]; ++kd) {
        const int64_t id = od * g.s[0] - g.p[0] + kd * g.d[0];
        if (id < 0 || id >= g.in[0]) continue;
        for (int64_t kh = 0; kh < g.k[1]; ++kh) {
          const int64_t ih = oh * g.s[1] - g.p[1] + kh * g.d[1];
          if (ih < 0 || ih >= g.in[1]) continue;
          const T* src = x + (id * g.in[1] + ih) * g.in[2];
          const T* wk = w + (kd * g.k[1] + kh) * g.k[2];
          for (int64_t kw = 0; kw < g.k[2]; ++kw) {
            const T wv = wk[kw];
            const int64_t off_w = kw * g.d[2] - g.p[2];
            int64_t w0 = off_w >= 0 ? 0 : (-off_w + g.s[2] - 1) / g.s[2];
            int64_t w1 = g.in[2] - off_w > 0 ? (g.in[2] - off_w + g.s[2] - 1) / g.s[2] : 0;
            w1 = std::min(w1, out_w);
            if (g.s[2] == 1) {
              const T* sp = src + off_w;
              for (int64_t ow = w0; ow < w1; ++ow) dst[ow] += wv * sp[ow];
            } else if (g.s[2] == 2) {
              const T* sp = src + off_w;
              for (int64_t ow = w0; ow < w1; ++ow) dst[ow] += wv * sp[2 * ow];
            } else {
              for (int64_t ow = w0; ow < w1; ++ow) dst[ow] += wv * src[ow * g.s[2] + off_w];
            }
          }
        }
      }
    }
}

// Fast 2-D depthwise (no dilation, width stride 1 or 2): the AVX2 kernel
// (depthwise_avx2.h) and the AVX-512 one below first copy the plane into a
// zero-padded scratch (for stride 2, each row split into its even and odd
// columns), so every tap is a contiguous vector load with no bounds checks.
// Both write every output element (y need not be zeroed).
bool depthwise_fast_ok(const Geo3& g) {
  return g.k[0] == 1 && g.in[0] == 1 && g.out[0] == 1 && g.d[1] == 1 && g.d[2] == 1 && (g.s[2] == 1 || g.s[2] == 2) &&
         g.k[1] <= 16 && g.k[2] <= 16 && g.p[1] >= 0 && g.p[2] >= 0;
}

DepthwiseGeometry dw_geometry(const Geo3& g) {
  DepthwiseGeometry d;
  d.in_h = g.in[1], d.in_w = g.in[2], d.out_h = g.out[1], d.out_w = g.out[2];
  d.kh = g.k[1], d.kw = g.k[2], d.sh = g.s[1], d.sw = g.s[2];
  d.pad_top = g.p[1], d.pad_left = g.p[2];
  d.dh = g.d[1], d.dw = g.d[2];
  return d;
}

#ifdef DLRT_HAVE_AVX512_PATHS
float* dw_scratch(size_t n) {
  thread_local AlignedScratch s;
  return s.get<float>(n);
}
#endif


#ifdef DLRT_HAVE_AVX512_PATHS
// AVX-512 fast depthwise (same conditions as depthwise_fast_ok). The plane is
// copied into a zero-padded scratch as in the AVX2 version (stride 2: each
// row split into even and odd columns with two permutes per 32 inputs). Each
// step computes R output rows x NV 16-wide vectors in registers (loads of an
// input row are shared by the output rows that use it), then applies the
// bias, residual and Relu/Clip before the (tail-masked) store.

// KW > 0: the kernel width as a constant (the tap loop unrolled); 0: kw at run time.
template <int R, int NV, bool kS2, int KW>
DLRT_AVX512 inline void dw512_step(const float* buf, int64_t Wp, int64_t half, const float* w, int64_t kh, int64_t kw_rt,
                                   int64_t sh, int64_t oh, int64_t ow, int64_t out_w, float* y,
                                   const DepthwiseOutput& o) {
  const int64_t kw = KW > 0 ? KW : kw_rt;
  __m512 acc[R][NV];
  for (int r = 0; r < R; ++r)
    for (int q = 0; q < NV; ++q) acc[r][q] = _mm512_setzero_ps();
  const int64_t nrows = (R - 1) * sh + kh;
  for (int64_t ii = 0; ii < nrows; ++ii) {
    const float* row = buf + (oh * sh + ii) * Wp + ow;
#pragma GCC unroll 8
    for (int64_t j = 0; j < kw; ++j) {
      const float* p = kS2 ? row + (j & 1) * half + (j >> 1) : row + j;
      __m512 v[NV];
      for (int q = 0; q < NV; ++q) v[q] = _mm512_loadu_ps(p + 16 * q);
      for (int r = 0; r < R; ++r) {
        const int64_t i = ii - r * sh;
        if (i < 0 || i >= kh) continue;
        const __m512 wv = _mm512_set1_ps(w[i * kw + j]);
        for (int q = 0; q < NV; ++q) acc[r][q] = _mm512_fmadd_ps(wv, v[q], acc[r][q]);
      }
    }
  }
  const __m512 bias = _mm512_set1_ps(o.bias), lo = _mm512_set1_ps(o.lo), hi = _mm512_set1_ps(o.hi);
  for (int r = 0; r < R; ++r) {
    float* yr = y + (oh + r) * out_w;
    const float* rr = o.residual ? o.residual + (oh + r) * out_w : nullptr;
    for (int q = 0; q < NV; ++q) {
      const int64_t c = ow + 16 * q;
      const __mmask16 m = avx512::tail_mask(out_w - c);
      __m512 v = _mm512_add_ps(acc[r][q], bias);
      if (rr) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, rr + c));
      if (o.clamp) v = _mm512_min_ps(hi, _mm512_max_ps(lo, v));
      _mm512_mask_storeu_ps(yr + c, m, v);
    }
  }
}

template <int R, bool kS2, int KW>
DLRT_AVX512 inline void dw512_rows(const float* buf, int64_t Wp, int64_t half, const float* w, int64_t kh, int64_t kw,
                                   int64_t sh, int64_t oh, int64_t out_w, float* y, const DepthwiseOutput& o) {
  const int64_t nv = (out_w + 15) / 16;
  int64_t v = 0;
  for (; v + 4 <= nv; v += 4) dw512_step<R, 4, kS2, KW>(buf, Wp, half, w, kh, kw, sh, oh, v * 16, out_w, y, o);
  switch (nv - v) {
    case 3: dw512_step<R, 3, kS2, KW>(buf, Wp, half, w, kh, kw, sh, oh, v * 16, out_w, y, o); break;
    case 2: dw512_step<R, 2, kS2, KW>(buf, Wp, half, w, kh, kw, sh, oh, v * 16, out_w, y, o); break;
    case 1: dw512_step<R, 1, kS2, KW>(buf, Wp, half, w, kh, kw, sh, oh, v * 16, out_w, y, o); break;
    default: break;
  }
}

template <bool kS2, int KW>
DLRT_AVX512 void dw512_plane(const float* buf, int64_t Wp, int64_t half, const float* w, int64_t kh, int64_t kw,
                             int64_t sh, int64_t out_h, int64_t out_w, float* y, const DepthwiseOutput& o) {
  int64_t oh = 0;
  for (; oh + 2 <= out_h; oh += 2) dw512_rows<2, kS2, KW>(buf, Wp, half, w, kh, kw, sh, oh, out_w, y, o);
  if (oh < out_h) dw512_rows<1, kS2, KW>(buf, Wp, half, w, kh, kw, sh, oh, out_w, y, o);
}

// dst[0, n) = 0 with inline stores: a libc memset per padded row (a few
// hundred bytes) cost a quarter of a stride-2 112x112 depthwise layer.
DLRT_AVX512 inline void zero_floats(float* dst, int64_t n) {
  for (int64_t c = 0; c < n; c += 16) _mm512_mask_storeu_ps(dst + c, avx512::tail_mask(n - c), _mm512_setzero_ps());
}

// Writes every element of y: conv + bias (+ residual) (+ clamp) per `o`.
DLRT_AVX512 void depthwise_fast_avx512(const float* x, const float* w, const Geo3& g, float* y,
                                       const DepthwiseOutput& o) {
  const int64_t kh = g.k[1], kw = g.k[2], sh = g.s[1], sw = g.s[2];
  const int64_t in_h = g.in[1], in_w = g.in[2], out_h = g.out[1], out_w = g.out[2];
  const int64_t ow16 = (out_w + 15) / 16 * 16;
  const int64_t Hp = (out_h - 1) * sh + kh;
  // Stride 1: Wp columns; stride 2: the even half then the odd half, `half` each.
  const int64_t half = ow16 + kw;
  const int64_t Wp = sw == 1 ? ow16 + kw : 2 * half;
  float* buf = dw_scratch(static_cast<size_t>(Hp * Wp + 16));
  const int64_t pl = g.p[2];
  for (int64_t r = 0; r < Hp; ++r) {
    float* dst = buf + r * Wp;
    const int64_t ih = r - g.p[1];
    if (ih < 0 || ih >= in_h) {
      zero_floats(dst, Wp);
      continue;
    }
    const float* src = x + ih * in_w;
    if (sw == 1) {
      // [0, lead) zeros, then the row, then zeros to Wp: short rows, so inline masked moves (no libc calls).
      const int64_t lead = std::min(pl, Wp), n = std::max<int64_t>(0, std::min(in_w, Wp - lead));
      for (int64_t c = 0; c < lead; c += 16) _mm512_mask_storeu_ps(dst + c, avx512::tail_mask(lead - c), _mm512_setzero_ps());
      float* body = dst + lead;
      for (int64_t c = 0; c < n; c += 16) {
        const __mmask16 k = avx512::tail_mask(n - c);
        _mm512_mask_storeu_ps(body + c, k, _mm512_maskz_loadu_ps(k, src + c));
      }
      float* rest = body + n;
      const int64_t nz = Wp - lead - n;
      for (int64_t c = 0; c < nz; c += 16) _mm512_mask_storeu_ps(rest + c, avx512::tail_mask(nz - c), _mm512_setzero_ps());
      continue;
    }
    // Stride 2: padded column c = i + pl goes to half (c & 1) at c >> 1, so the
    // even inputs start at (pl & 1, pl >> 1) and the odd ones at ((pl + 1) & 1, (pl + 1) >> 1).
    zero_floats(dst, Wp);
    float* ev = dst + (pl & 1) * half + (pl >> 1);
    float* od = dst + ((pl + 1) & 1) * half + ((pl + 1) >> 1);
    const int64_t n_ev = std::min((in_w + 1) / 2, half - (pl >> 1));
    const int64_t n_od = std::min(in_w / 2, half - ((pl + 1) >> 1));
    const __m512i ie = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i io = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    for (int64_t k = 0; k < std::max(n_ev, n_od); k += 16) {
      const int64_t i = 2 * k;  // first input of this step
      const __m512 a = _mm512_maskz_loadu_ps(avx512::tail_mask(in_w - i), src + i);
      const __m512 b = _mm512_maskz_loadu_ps(avx512::tail_mask(in_w - i - 16), src + i + 16);
      if (k < n_ev) _mm512_mask_storeu_ps(ev + k, avx512::tail_mask(n_ev - k), _mm512_permutex2var_ps(a, ie, b));
      if (k < n_od) _mm512_mask_storeu_ps(od + k, avx512::tail_mask(n_od - k), _mm512_permutex2var_ps(a, io, b));
    }
  }
  if (sw == 1) {
    if (kw == 3) return dw512_plane<false, 3>(buf, Wp, half, w, kh, kw, sh, out_h, out_w, y, o);
    return dw512_plane<false, 0>(buf, Wp, half, w, kh, kw, sh, out_h, out_w, y, o);
  }
  if (kw == 3) return dw512_plane<true, 3>(buf, Wp, half, w, kh, kw, sh, out_h, out_w, y, o);
  dw512_plane<true, 0>(buf, Wp, half, w, kh, kw, sh, out_h, out_w, y, o);
}
#endif

void depthwise_generic_f32(const float* x, const float* w, const Geo3& g, float* y) { depthwise_rows<float>(x, w, g, y); }
#if defined(__x86_64__) || defined(__i386__)
DLRT_AVX2 void depthwise_avx2_f32(const float* x, const float* w, const Geo3& g, float* y) {
  depthwise_rows<float>(x, w, g, y);
}
#endif

bool depthwise_writes_all(const Geo3& g) { return cpu_has_avx2() && depthwise_fast_ok(g); }

// y must be zero-filled unless depthwise_writes_all(g).
void depthwise_plane_f32(const float* x, const float* w, const Geo3& g, float* y) {
#if defined(__x86_64__) || defined(__i386__)
  const CpuIsa isa = cpu_isa();
  if (isa >= CpuIsa::kAvx2 && depthwise_fast_ok(g)) return depthwise_plane_avx2(x, w, dw_geometry(g), y, DepthwiseOutput{});
  if (isa >= CpuIsa::kAvx2) return depthwise_avx2_f32(x, w, g, y);
#endif
  depthwise_generic_f32(x, w, g, y);
}

// The in-register output stage of plane m for the epilogue `ep` (no
// col_bias; Relu, Clip or no activation: clamp_or_none).
DepthwiseOutput depthwise_output(const GemmEpilogue& ep, int64_t m) {
  const ClampStage c = clamp_stage(ep.act);
  DepthwiseOutput o;
  o.bias = ep.row_bias ? ep.row_bias[m] : 0.0f;
  o.residual = ep.residual ? ep.residual + m * ep.ldr : nullptr;
  o.clamp = c.clamp;
  o.lo = c.lo;
  o.hi = c.hi;
  return o;
}

// A 2-D depthwise conv at stride 1 dilated by (dh, dw) is dh x dw undilated
// ones, interleaved: the outputs of rows a, a + dh, ... and columns b, b + dw,
// ... read only the inputs of one row phase and one column phase. Each is
// gathered into scratch, convolved by the fast undilated kernels and
// scattered back (the epilogue is the caller's).
bool dilated_depthwise_split_ok(const Geo3& g) {
  return g.k[0] == 1 && g.in[0] == 1 && g.out[0] == 1 && g.s[1] == 1 && g.s[2] == 1 && (g.d[1] > 1 || g.d[2] > 1) &&
         g.p[1] >= 0 && g.p[2] >= 0 && g.k[1] <= 16 && g.k[2] <= 16;
}

void depthwise_dilated_plane_f32(const float* x, const float* w, const Geo3& g, float* y) {
  const int64_t dh = g.d[1], dw = g.d[2], out_w = g.out[2];
  thread_local AlignedScratch in_buf, out_buf;
  auto floor_mod = [](int64_t v, int64_t d) { return ((v % d) + d) % d; };
  for (int64_t a = 0; a < dh; ++a)
    for (int64_t b = 0; b < dw; ++b) {
      const int64_t oh_n = (g.out[1] - a + dh - 1) / dh, ow_n = (out_w - b + dw - 1) / dw;
      if (oh_n <= 0 || ow_n <= 0) continue;
      // Output (a + dh i, b + dw j) reads input row a - pad_top + dh (i + ky): the rows of
      // phase rem_h, offset by q_h whole steps (likewise for columns).
      const int64_t rem_h = floor_mod(a - g.p[1], dh), q_h = (a - g.p[1] - rem_h) / dh;
      const int64_t rem_w = floor_mod(b - g.p[2], dw), q_w = (b - g.p[2] - rem_w) / dw;
      const int64_t ih_n = g.in[1] > rem_h ? (g.in[1] - rem_h + dh - 1) / dh : 0;
      const int64_t iw_n = g.in[2] > rem_w ? (g.in[2] - rem_w + dw - 1) / dw : 0;
      float* sub_out = out_buf.get<float>(static_cast<size_t>(oh_n * ow_n));
      Geo3 sg = g;
      sg.in[1] = ih_n;
      sg.in[2] = iw_n;
      sg.out[1] = oh_n;
      sg.out[2] = ow_n;
      sg.d[1] = sg.d[2] = 1;
      sg.p[1] = -q_h;
      sg.p[2] = -q_w;
      if (ih_n == 0 || iw_n == 0) {
        std::fill(sub_out, sub_out + oh_n * ow_n, 0.0f);
      } else {
        float* sub_in = in_buf.get<float>(static_cast<size_t>(ih_n * iw_n));
        for (int64_t i = 0; i < ih_n; ++i) {
          const float* row = x + (rem_h + dh * i) * g.in[2] + rem_w;
          for (int64_t j = 0; j < iw_n; ++j) sub_in[i * iw_n + j] = row[dw * j];
        }
        if (!depthwise_writes_all(sg)) std::fill(sub_out, sub_out + oh_n * ow_n, 0.0f);
        depthwise_plane_f32(sub_in, w, sg, sub_out);
      }
      for (int64_t i = 0; i < oh_n; ++i) {
        float* dst = y + (a + dh * i) * out_w + b;
        for (int64_t j = 0; j < ow_n; ++j) dst[dw * j] = sub_out[i * ow_n + j];
      }
    }
}

// Output plane m of image n: the depthwise conv followed by the epilogue `ep`
// (row_bias indexed by m; residual already offset to image n, ldr = plane size).
void depthwise_plane_with_epilogue_f32(const float* x, const float* w, const Geo3& g, float* y, const GemmEpilogue& ep,
                                       int64_t m) {
  const int64_t out_plane = g.out_size();
  if (cpu_has_avx2() && dilated_depthwise_split_ok(g)) {
    depthwise_dilated_plane_f32(x, w, g, y);
    return apply_epilogue(ep, y, out_plane, m, 0, 1, out_plane);
  }
#ifdef DLRT_HAVE_AVX512_PATHS
  // Rows of at most 8 outputs at stride 1 fill an AVX2 vector but not half an AVX-512 one: keep AVX2 there.
  const bool narrow = g.s[2] == 1 && g.out[2] <= 8;
  if (cpu_has_avx512() && depthwise_fast_ok(g) && !narrow && !ep.col_bias && clamp_or_none(ep.act))
    return depthwise_fast_avx512(x, w, g, y, depthwise_output(ep, m));
  if (cpu_has_avx512() && depthwise_fast_ok(g) && !narrow) {
    depthwise_fast_avx512(x, w, g, y, DepthwiseOutput{});
    return apply_epilogue(ep, y, out_plane, m, 0, 1, out_plane);
  }
#endif
#if defined(__x86_64__) || defined(__i386__)
  if (cpu_has_avx2() && depthwise_fast_ok(g) && !ep.col_bias && clamp_or_none(ep.act))
    return depthwise_plane_avx2(x, w, dw_geometry(g), y, depthwise_output(ep, m));
#endif
  depthwise_plane_f32(x, w, g, y);
  apply_epilogue(ep, y, out_plane, m, 0, 1, out_plane);
}

// Shared attribute checks: kernel shape from the attribute or W.
Result<IntList> kernel_shape_of(const KernelContext& ctx, const Tensor& w, int nd) {
  IntList k(w.shape().begin() + 2, w.shape().end());
  if (ctx.node().has_attr("kernel_shape")) {
    const IntList attr = ints_attr(ctx.node(), "kernel_shape", 0, 0);
    if (attr != k)
      return ctx.invalid("kernel_shape " + shape_to_string(attr) + " does not match W's spatial dims " +
                         shape_to_string(k));
  }
  if (static_cast<int>(k.size()) != nd) return ctx.invalid("W's rank does not match X's");
  return k;
}

// Winograd (conv_winograd.h): output planes of at least this many
// positions (7x7 planes would compute 8x8), and transformed filters (16 x M
// x C floats for F(2x2, 3x3), 36 x M x C for F(4x4, 3x3)) of at most this
// many bytes.
constexpr int64_t kWinogradMinPlane = 100;
constexpr int64_t kWinogradMaxBytes = int64_t{5} << 20;
// ... and at most this much per-image scratch (V and M: 16 x (C + M) floats
// per 2x2 tile; resnet18's layer1 takes 6.4 MiB): larger images keep the
// direct path rather than grow a thread's scratch without bound.
constexpr int64_t kWinogradMaxScratchBytes = int64_t{32} << 20;
// Input channels of the AVX-512 variants (see winograd_tile), and the 4x4
// tiles F(4x4, 3x3) wants in a plane.
constexpr int64_t kWinograd4MinChannels = 64, kWinograd4MaxChannels = 128, kWinograd4MinTiles = 32;
constexpr int64_t kWinogradMinChannelsAvx512 = 128;

// Whether a conv takes Winograd as far as W and the conv's attributes
// decide: 2-D 3x3 (kh x kw), stride and dilation 1, group 1, at most
// kWinogradMaxBytes of transformed filters (16/9 of W for F(2x2, 3x3):
// resnet18's layer1-layer3, not layer4's 512 x 512), on an AVX2 CPU, with
// DLRT_CONV_WINOGRAD not 0. On AVX-512 CPUs only from kWinograd4MinChannels
// input channels (winograd_tile says which variant). conv_run also wants the
// output plane and the scratch within bounds; prepack_conv_weights
// transforms such a conv's filters at session create instead of packing W.
bool winograd_candidate(int64_t group, int64_t M, int64_t C, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                        int64_t dh, int64_t dw) {
  return group == 1 && kh == 3 && kw == 3 && sh == 1 && sw == 1 && dh == 1 && dw == 1 &&
         16 * M * C * int64_t{sizeof(float)} <= kWinogradMaxBytes && cpu_has_avx2() &&
         (!cpu_has_avx512() || C >= kWinograd4MinChannels) && winograd_enabled();
}

// Whether F(4x4, 3x3) takes an M x C conv on a large enough plane: an
// AVX-512 CPU, the channel range, and its filters within kWinogradMaxBytes.
bool winograd4_channels(int64_t M, int64_t C) {
  return cpu_has_avx512() && C >= kWinograd4MinChannels && C <= kWinograd4MaxChannels &&
         36 * M * C * int64_t{sizeof(float)} <= kWinogradMaxBytes;
}

// Which Winograd a candidate conv runs on this CPU: 4 for F(4x4, 3x3), 2
// for F(2x2, 3x3), 0 for neither (the direct or GEMM path). AVX2 without
// AVX-512: F(2x2, 3x3). AVX-512: F(4x4, 3x3) for kWinograd4MinChannels to
// kWinograd4MaxChannels input channels on planes of kWinograd4MinTiles+ 4x4
// tiles; F(2x2, 3x3) from kWinogradMinChannelsAvx512 channels otherwise (on
// small planes such as resnet18's layer3 a quarter of the 4x4 tiles would be
// padding). Under 128 channels F(2x2, 3x3)'s memory-bound transforms cost
// more than its products save, so smaller planes of 64-127 channels keep the
// direct path. Per-conv figures: bench/results/2026-11-24_winograd_f4x4_resnet18.json.
int winograd_tile(int64_t M, int64_t C, int64_t out_h, int64_t out_w) {
  if (!cpu_has_avx512()) return 2;
  if (winograd4_channels(M, C) && ((out_h + 3) / 4) * ((out_w + 3) / 4) >= kWinograd4MinTiles) return 4;
  return C >= kWinogradMinChannelsAvx512 ? 2 : 0;
}

// The filters prepack_conv_weights transforms at session create, before
// the plane is known: F(4x4, 3x3)'s where winograd_tile takes it on large
// planes, else F(2x2, 3x3)'s. A plane that picks the other variant
// transforms its filters on first use.
int winograd_prepack_tile(int64_t M, int64_t C) { return winograd4_channels(M, C) ? 4 : 2; }

}  // namespace

#if defined(__x86_64__) || defined(__i386__)
namespace {

// Output planes up to this many positions run as Yᵀ = im2colᵀ · Wᵀ on AVX2
// (see conv_run): a 7x7 plane is 49 positions.
constexpr int64_t kTransposedMaxPlane = 64;

// Row p of im2colᵀ for image x (C channels, 2-D geometry g): the K = C * kh * kw
// inputs output position p reads, in W's (channel, ky, kx) order; 0 in the padding.
void im2col_t_row(const float* x, int64_t C, const Geo3& g, int64_t p, float* row) {
  const int64_t H = g.in[1], Wd = g.in[2], kh = g.k[1], kw = g.k[2];
  const int64_t oy = p / g.out[2], ox = p % g.out[2];
  const int64_t y0 = oy * g.s[1] - g.p[1], x0 = ox * g.s[2] - g.p[2];
  int64_t i = 0;
  for (int64_t c = 0; c < C; ++c) {
    const float* xc = x + c * H * Wd;
    for (int64_t ky = 0; ky < kh; ++ky) {
      const int64_t iy = y0 + ky * g.d[1];
      const bool row_in = iy >= 0 && iy < H;
      if (row_in && g.d[2] == 1 && x0 >= 0 && x0 + kw <= Wd) {  // the whole kernel row inside: one copy
        std::memcpy(row + i, xc + iy * Wd + x0, static_cast<size_t>(kw) * sizeof(float));
        i += kw;
        continue;
      }
      for (int64_t kx = 0; kx < kw; ++kx, ++i) {
        const int64_t ix = x0 + kx * g.d[2];
        row[i] = row_in && ix >= 0 && ix < Wd ? xc[iy * Wd + ix] : 0.0f;
      }
    }
  }
}

std::atomic<uint64_t> g_transposed_runs{0};

}  // namespace
#endif

namespace {
std::atomic<uint64_t> g_amx_runs{0};
}  // namespace

// Conv with an optional fused stage (see conv_impl.h).
Status conv_run(KernelContext& ctx, const ConvPrepacked* pre, const ConvFusion& fuse) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* w, required_input(ctx, 1));
  const Tensor* bias = ctx.input(2);
  const Tensor* z = fuse.residual_input >= 0 ? ctx.input(static_cast<size_t>(fuse.residual_input)) : nullptr;
  if (nn::is_half(x->dtype()))
    return nn::run_as_float32(ctx, [&](KernelContext& c) { return conv_run(c, nullptr, fuse); });
  if (x->dtype() != DType::kFloat32 && x->dtype() != DType::kFloat64)
    return ctx.unsupported(std::string("Conv on ") + dtype_name(x->dtype()) + " is not supported");
  if (w->dtype() != x->dtype() || (bias && bias->dtype() != x->dtype()) || (z && z->dtype() != x->dtype()))
    return ctx.invalid("X, W, B (and Z) must have the same dtype");
  if (x->rank() < 3 || x->rank() > 5) return ctx.unsupported("Conv supports 1-D, 2-D and 3-D inputs only");
  if (w->rank() != x->rank()) return ctx.invalid("W must have the same rank as X");
  const int nd = static_cast<int>(x->rank()) - 2;
  const int64_t N = x->dim(0), C = x->dim(1), M = w->dim(0);
  const int64_t group = ctx.node().attr_int("group", 1);
  if (group <= 0 || C % group != 0 || M % group != 0)
    return ctx.invalid("group " + std::to_string(group) + " must divide the channel counts (" + std::to_string(C) +
                       " in, " + std::to_string(M) + " out)");
  const int64_t Cg = C / group, Mg = M / group;
  if (w->dim(1) != Cg)
    return ctx.invalid("W has " + std::to_string(w->dim(1)) + " input channels per group, expected " +
                       std::to_string(Cg));
  if (bias && (bias->rank() != 1 || bias->dim(0) != M)) return ctx.invalid("B must have shape [M]");
  DLRT_ASSIGN_OR_RETURN(IntList kshape, kernel_shape_of(ctx, *w, nd));
  IntList in_sp(x->shape().begin() + 2, x->shape().end());
  DLRT_ASSIGN_OR_RETURN(nn::WindowGeometry wg, nn::resolve_window(ctx, in_sp, kshape, false));
  Shape out_shape = {N, M};
  out_shape.insert(out_shape.end(), wg.out.begin(), wg.out.end());
  if (z && z->shape() != out_shape)
    return ctx.invalid("Z has shape " + shape_to_string(z->shape()) + ", expected the output shape " +
                       shape_to_string(out_shape));
  const Geo3 g = to_geo3(wg);
  const bool depthwise = Cg == 1 && Mg == 1 && group > 1;
  // The float32 paths write every element except the slow depthwise fallback.
  const bool writes_all = x->dtype() == DType::kFloat32 && (!depthwise || depthwise_writes_all(g));
  DLRT_ASSIGN_OR_RETURN(Tensor * y, writes_all ? ctx.allocate_output_uninitialized(0, x->dtype(), out_shape)
                                               : ctx.allocate_output(0, x->dtype(), out_shape));
  if (y->size() == 0) return Status::Ok();
  // The packed weights apply only to the very tensor they were packed from.
  if (pre && (x->dtype() != DType::kFloat32 || pre->source.raw_data() != w->raw_data() ||
              pre->source.shape() != w->shape() || pre->group_count != group))
    pre = nullptr;

  const int64_t in_plane = g.in_size(), out_plane = g.out_size(), ks = g.k_size();
  ThreadPool& pool = ctx.pool();
  const bool pointwise = ks == 1 && g.s[0] == 1 && g.s[1] == 1 && g.s[2] == 1 && g.p[0] == 0 && g.p[1] == 0 &&
                         g.p[2] == 0 && out_plane == in_plane;
  const int64_t col_rows = Cg * ks;

  if (x->dtype() == DType::kFloat32) {
    const float* X = x->data<float>();
    const float* W = w->data<float>();
    const float* Bv = bias ? bias->data<float>() : nullptr;
    const float* Z = z ? z->data<float>() : nullptr;
    float* Y = y->data<float>();
    GemmEpilogue ep;
    ep.act = fuse.act;

    if (depthwise) {
      ep.row_bias = Bv;
      ep.ldr = out_plane;
      // Stride 1 with output rows of at most 16 (mobilenet's 14x14 and 7x7
      // planes): the flat-grid kernel (depthwise_flat.h).
      DepthwiseFlatPlan flat;
      const bool use_flat = g.k[0] == 1 && g.in[0] == 1 && g.out[0] == 1 && g.d[1] == 1 && g.d[2] == 1 &&
                            g.s[1] == 1 && g.s[2] == 1 && g.out[2] <= 16 &&
                            depthwise_flat_plan({g.in[1], g.in[2], g.out[1], g.out[2], g.k[1], g.k[2], g.p[1], g.p[2]},
                                                &flat);
      auto body = [&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t) {
          const int64_t n = t / M, m = t % M;
          if (use_flat) {
            DepthwiseFlatOutput o;
            o.bias = Bv ? Bv[m] : 0.0f;
            o.residual = Z ? Z + t * out_plane : nullptr;
            o.act = fuse.act;
            depthwise_flat_avx512(X + (n * C + m) * in_plane, W + m * ks, flat, Y + t * out_plane, o);
            continue;
          }
          GemmEpilogue pe = ep;
          pe.residual = Z ? Z + n * M * out_plane : nullptr;
          depthwise_plane_with_epilogue_f32(X + (n * C + m) * in_plane, W + m * ks, g, Y + t * out_plane, pe, m);
        }
      };
#if defined(__x86_64__) || defined(__i386__)
      // AVX2 without AVX-512, 2-D, whole groups of 8 channels: 8 channels
      // per vector (depthwise_c8_avx2) instead of one plane at a time: faster
      // on every plane size inside mobilenet_v2, where outputs are cold in
      // cache, though not alone on large planes (docs/performance.md).
      //
      // AVX-512, whole groups of 16 channels, strided or with output rows
      // narrower than a vector: the same with 16 channels per zmm
      // (depthwise_c16_avx512). There the plane kernels split even and odd
      // columns or waste lanes; at stride 1 on wider rows they run without
      // the two 16 x 16 transposes, which cost more than the taps (64
      // shuffles per 256 floats each, on a port the FMAs use too), so wide
      // stride-1 rows keep the plane kernels (docs/performance.md).
      const DepthwiseGeometry dg = dw_geometry(g);
      // The 16-channel kernel applies any activation in its store, and
      // takes dilated convs at any width (their taps read the scratch
      // dh rows and dw columns apart, where the plane kernels split a
      // dilated conv into dh x dw gathered phases: lraspp's d=2 5x5 on
      // 20x20), and a channel count off 16 (the last group partial:
      // mobilenet_v3's 72 and 88); the 8-channel one takes a clamp, no
      // dilation and whole groups.
      const bool dilated = g.d[1] != 1 || g.d[2] != 1;
      const bool plain2d = g.k[0] == 1 && g.in[0] == 1 && g.out[0] == 1 && depthwise_c8_avx2_ok(dg);
      const bool c16 = cpu_has_avx512() && M >= 16 &&
                       (dg.sw >= 2 || dg.out_w < 16 || dilated || !clamp_or_none(fuse.act));
      const bool c8 =
          cpu_has_avx2() && !cpu_has_avx512() && M % 8 == 0 && clamp_or_none(fuse.act) && !dilated;
      const int64_t lanes = !plain2d ? 0 : c16 ? 16 : c8 ? 8 : 0;
      if (lanes > 0) {
        const ClampStage c = clamp_stage(fuse.act);
        DepthwiseC8Output o;
        o.clamp = c.clamp;
        o.lo = c.lo;
        o.hi = c.hi;
        o.act = clamp_or_none(fuse.act) ? nullptr : &fuse.act;
        const int64_t blocks = ceil_div(M, lanes), bands = depthwise_c8_row_bands(dg.out_h, pool.num_threads());
        pool.parallel_for(N * bands * blocks, 1, [&](int64_t b, int64_t e) {
          for (int64_t t = b; t < e; ++t) {
            const int64_t n = t / (bands * blocks), band = t / blocks % bands, m = (t % blocks) * lanes;
            DepthwiseC8Output oc = o;
            oc.bias = Bv ? Bv + m : nullptr;
            oc.residual = Z ? Z + (n * M + m) * out_plane : nullptr;
            const int64_t r0 = dg.out_h * band / bands, r1 = dg.out_h * (band + 1) / bands;
            if (lanes == 16)
              depthwise_c16_avx512(X + (n * C + m) * in_plane, in_plane, W + m * ks, dg, Y + (n * M + m) * out_plane,
                                   out_plane, oc, r0, r1, static_cast<int>(std::min<int64_t>(16, M - m)));
            else
              depthwise_c8_avx2(X + (n * C + m) * in_plane, in_plane, W + m * ks, dg, Y + (n * M + m) * out_plane,
                                out_plane, oc, r0, r1);
          }
        });
        return Status::Ok();
      }
#endif
      // Planes per chunk: at least ~16K multiply-adds (late 7x7 planes are tiny).
      pool.parallel_for(N * M, std::max<int64_t>(1, 16384 / std::max<int64_t>(out_plane * ks, 1)), body);
      return Status::Ok();
    }

    // Precision bf16x3 with the filters packed for AMX: a conv that does not
    // run Winograd is the GEMM of the filters (A) and the image or its
    // im2col rows (B, split into tiles as it is read), skipping the other
    // fp32 paths below. Winograd keeps its convs: F(4x4, 3x3) multiplies 4x
    // less, bf16x3 makes three tile products for each one, and the im2col
    // rows of large planes cost as much again (docs/performance.md). A patch embedding
    // runs transposed, with Wᵀ as AMX tiles: its im2col rows gather every
    // k-th float, its im2colᵀ rows copy whole kernel rows (docs/performance.md).
    const bool amx = pre && pre->amx_group(0) && amx_bf16x3_available();

#if defined(__x86_64__) || defined(__i386__)
    // Winograd F(2x2, 3x3) or F(4x4, 3x3), 2.25x or 4x fewer products
    // (conv_winograd.h), for the convs winograd_candidate takes, on output
    // planes of kWinogradMinPlane+ positions whose F(2x2, 3x3) scratch
    // would be at most kWinogradMaxScratchBytes (F(4x4, 3x3) works on blocks
    // of tiles and needs less), in the variant winograd_tile picks.
    // DLRT_CONV_WINOGRAD=0 turns it off, and DLRT_CONV_DIRECT=1 (direct for
    // every shape) too.
    const int wtile = pre && g.k[0] == 1 && g.in[0] == 1 && g.out[0] == 1 &&
                              winograd_candidate(group, M, C, g.k[1], g.k[2], g.s[1], g.s[2], g.d[1], g.d[2]) &&
                              out_plane >= kWinogradMinPlane &&
                              16 * (M + C) * ((g.out[1] + 1) / 2) * ((g.out[2] + 1) / 2) * int64_t{sizeof(float)} <=
                                  kWinogradMaxScratchBytes &&
                              conv_direct_mode() != ConvDirectMode::kForce
                          ? winograd_tile(M, C, g.out[1], g.out[2])
                          : 0;
    if (wtile != 0) {
      WinogradGeometry wg;
      wg.in_h = g.in[1], wg.in_w = g.in[2], wg.out_h = g.out[1], wg.out_w = g.out[2];
      wg.pad_top = g.p[1], wg.pad_left = g.p[2];
      if (winograd_ok(wg)) {
        const bool w4 = wtile == 4;
        const WinogradFilters& wf = w4 ? pre->winograd4() : pre->winograd();
        for (int64_t n = 0; n < N; ++n) {
          GemmEpilogue e = ep;
          e.row_bias = Bv;
          e.residual = Z ? Z + n * M * out_plane : nullptr;
          e.ldr = out_plane;
          if (w4) conv_winograd4_avx512(wf, wg, X + n * C * in_plane, Y + n * M * out_plane, e, pool);
          else conv_winograd(wf, wg, X + n * C * in_plane, Y + n * M * out_plane, e, pool);
        }
        return Status::Ok();
      }
    }

    // Group-1 2-D convs, kernels larger than 1x1, with output planes of at
    // most 64 positions (resnet18's 7x7 layer4) on AVX2 without AVX-512:
    // over M x positions, the 6 x 16 tile spends a whole 16-wide tile on the
    // 49th column, and the direct path computes the padding columns of each
    // 7-wide row (63 grid columns for 49 outputs). As Yᵀ = im2colᵀ · Wᵀ the
    // positions are the rows (the last tile runs just its rows) and the
    // channels fill 16-wide panels of Wᵀ, packed once
    // (ConvPrepacked::transposed); faster on Zen 1 for resnet18's layer4. 1x1
    // convs on 7x7 (mobilenet_v2's) stay on the direct path, which measured
    // faster there. Patch embeddings (kernel = stride, no padding:
    // tiny_vit's 16x16/16) go this way at any size: each row of im2colᵀ is
    // whole kernel rows copied from the image, where the GEMM path gathers
    // every 16th float. DLRT_CONV_DIRECT=1 (direct for every shape) turns
    // this off.
    //
    // On AVX-512 only the patch embeddings go this way; resnet18's 7x7 layer4
    // convs measured slower transposed there (the im2colᵀ copy) and keep the
    // direct tile or the GEMM path (docs/performance.md, "Convolution").
    const bool patchify = g.k[1] == g.s[1] && g.k[2] == g.s[2] && g.k[2] >= 4 && g.p[1] == 0 && g.p[2] == 0 &&
                          g.d[1] == 1 && g.d[2] == 1;
    const bool small_plane = out_plane <= kTransposedMaxPlane && ks > 1 && !cpu_has_avx512();
    if ((!amx || patchify) && pre && group == 1 && (small_plane || patchify) && cpu_has_avx2() && g.k[0] == 1 &&
        g.in[0] == 1 && g.out[0] == 1 && conv_direct_mode() != ConvDirectMode::kForce) {
      const PackedMatrix& wt = pre->transposed();
      const int64_t K = col_rows, P = out_plane;
      thread_local AlignedScratch scratch;  // im2colᵀ, then Yᵀ
      float* at = scratch.get<float>(static_cast<size_t>(P * K + P * M));
      float* ct = at + P * K;
      for (int64_t n = 0; n < N; ++n) {
        const float* xn = X + n * C * in_plane;
        pool.parallel_for(P, std::max<int64_t>(1, 16384 / std::max<int64_t>(K, 1)), [&](int64_t b, int64_t e) {
          for (int64_t p = b; p < e; ++p) im2col_t_row(xn, C, g, p, at + p * K);
        });
        // W itself (M x K: op(B) = Wᵀ) rides along for sgemm_ex's fp32
        // fallback, should a Wᵀ packed for AMX meet a thread where AMX is off.
        DLRT_RETURN_IF_ERROR(sgemm_ex(P, M, K, 1.0f, SgemmOperand{at, K, false, nullptr, nullptr},
                                      SgemmOperand{W, K, true, &wt, nullptr}, 0.0f, ct, M, nullptr, &pool));
        float* yn = Y + n * M * P;
        for (int64_t m = 0; m < M; ++m)
          for (int64_t p = 0; p < P; ++p) yn[m * P + p] = ct[p * M + m];
        GemmEpilogue e = ep;
        e.row_bias = Bv;
        e.residual = Z ? Z + n * M * P : nullptr;
        e.ldr = P;
        apply_epilogue(e, yn, P, 0, 0, M, P);
        g_transposed_runs.fetch_add(1, std::memory_order_relaxed);
      }
      return Status::Ok();
    }
#endif

    // 1-D/2-D convs with weights packed for the AVX-512 8x48 tile or the
    // AVX2 6x16 one run the direct path for that tile where it is the faster
    // one (conv_direct.h; DLRT_CONV_DIRECT =0 turns it off, =1 takes it for
    // every shape).
    ConvDirectPlan dplan;
    const int64_t* doff = nullptr;
#ifdef DLRT_HAVE_CONV_DIRECT_AVX2
    const ConvDirectMode dmode = pre && !amx ? conv_direct_mode() : ConvDirectMode::kOff;
    // The direct kernel for the weights' tile; generic: none (mode on means cpu_isa() >= kAvx2).
    CpuIsa disa = CpuIsa::kGeneric;
    if (dmode != ConvDirectMode::kOff) {
      const PackedMatrix& pw = pre->group(0);
      if (pw.mr() == 6 && pw.nr() == 16) disa = CpuIsa::kAvx2;
#ifdef DLRT_HAVE_AVX512_PATHS
      if (pw.mr() == 8 && pw.nr() == 48 && cpu_isa() >= CpuIsa::kAvx512) disa = CpuIsa::kAvx512;
#endif
    }
    if (disa != CpuIsa::kGeneric && g.k[0] == 1 && g.in[0] == 1 && g.out[0] == 1 && g.p[0] == 0) {
      ConvDirectGeometry dg;
      dg.channels = Cg;
      dg.in_h = g.in[1], dg.in_w = g.in[2], dg.out_h = g.out[1], dg.out_w = g.out[2];
      dg.kh = g.k[1], dg.kw = g.k[2], dg.sh = g.s[1], dg.sw = g.s[2], dg.dh = g.d[1], dg.dw = g.d[2];
      dg.pad_top = g.p[1], dg.pad_left = g.p[2];
      const bool avx2 = disa == CpuIsa::kAvx2;
      if (conv_direct_plan(dg, &dplan, avx2, conv_direct_tap_columns(dg, disa)) &&
          (dmode == ConvDirectMode::kForce || conv_direct_worth(dplan, disa, pool.num_threads()))) {
        thread_local std::vector<int64_t> offsets;  // grows only: no allocation once warm
        if (offsets.size() < static_cast<size_t>(dplan.k)) offsets.resize(static_cast<size_t>(dplan.k));
        conv_direct_offsets(dplan, offsets.data());
        doff = offsets.data();
      }
    }
#endif

    // One (image, group) product: Y_g = epilogue(W_g * col). General convs
    // read the im2col matrix straight from the image while packing.
    FirstError err;
    auto one = [&](int64_t n, int64_t gi, ThreadPool* p) {
      const float* xg = X + (n * C + gi * Cg) * in_plane;
      float* yg = Y + (n * M + gi * Mg) * out_plane;
      GemmEpilogue e = ep;
      e.row_bias = Bv ? Bv + gi * Mg : nullptr;
      e.residual = Z ? Z + (n * M + gi * Mg) * out_plane : nullptr;
      e.ldr = out_plane;
#ifdef DLRT_HAVE_CONV_DIRECT_AVX2
      if (doff) {
        const PackedMatrix& pw = pre->group(gi);
#ifdef DLRT_HAVE_AVX512_PATHS
        if (disa == CpuIsa::kAvx512) return conv_direct_avx512(dplan, doff, xg, pw, yg, e, p);
#endif
        return conv_direct_avx2(dplan, doff, xg, pw, yg, e, p);
      }
#endif
      SgemmOperand a;
      if (amx) {
        a.packed = pre->amx_group(gi);
        a.data = W + gi * Mg * col_rows;  // sgemm_ex's fp32 fallback, should AMX become unusable meanwhile
        a.ld = col_rows;
      } else if (pre) {
        a.packed = &pre->group(gi);
      } else {
        a.data = W + gi * Mg * col_rows;
        a.ld = col_rows;
      }
      if (pointwise) {
        SgemmOperand b{xg, out_plane, false, nullptr, nullptr};
        err.record(sgemm_ex(Mg, out_plane, col_rows, 1.0f, a, b, 0.0f, yg, out_plane, &e, p));
      } else {
        BRowSource rows = [&](int64_t row, int64_t j0, int64_t cnt, float* dst) {
          im2col_row<float>(xg, g, row, j0, cnt, dst);
        };
        SgemmOperand b{nullptr, 0, false, nullptr, &rows};
        err.record(sgemm_ex(Mg, out_plane, col_rows, 1.0f, a, b, 0.0f, yg, out_plane, &e, p));
      }
    };
    if (amx) g_amx_runs.fetch_add(1, std::memory_order_relaxed);
    const int64_t tasks = N * group;
    if (tasks >= 2 * pool.num_threads() && Mg * out_plane * col_rows < (int64_t{1} << 22)) {
      // Many small products (grouped convs, batches of small images): one per task.
      auto body = [&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t) one(t / group, t % group, nullptr);
      };
      pool.parallel_for(tasks, 1, body);
    } else {
      for (int64_t t = 0; t < tasks; ++t) one(t / group, t % group, &pool);
    }
    return err.take();
  }

  // float64: bias first, GEMM accumulates, then the fused stage element-wise.
  {
    using T = double;
    const T* X = x->data<T>();
    const T* W = w->data<T>();
    const T* Bv = bias ? bias->data<T>() : nullptr;
    T* Y = y->data<T>();
    if (Bv) {
      for (int64_t n = 0; n < N; ++n)
        for (int64_t m = 0; m < M; ++m) std::fill_n(Y + (n * M + m) * out_plane, out_plane, Bv[m]);
    }
    if (depthwise) {
      pool.parallel_for(N * M, 1, [&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t) {
          const int64_t n = t / M, m = t % M;
          depthwise_plane<T>(X + (n * C + m) * in_plane, W + m * ks, g, Y + t * out_plane);
        }
      });
    } else {
      const T beta = Bv ? T(1) : T(0);
      auto one = [&](int64_t n, int64_t gi, T* col, ThreadPool* p) {
        const T* xg = X + (n * C + gi * Cg) * in_plane;
        const T* wg = W + gi * Mg * col_rows;
        T* yg = Y + (n * M + gi * Mg) * out_plane;
        if (pointwise) {
          gemm_t<T>(false, false, Mg, out_plane, col_rows, wg, col_rows, xg, out_plane, beta, yg, out_plane, p);
        } else {
          im2col<T>(xg, Cg, g, col);
          gemm_t<T>(false, false, Mg, out_plane, col_rows, wg, col_rows, col, out_plane, beta, yg, out_plane, p);
        }
      };
      const int64_t tasks = N * group;
      const size_t col_elems = pointwise ? 0 : static_cast<size_t>(col_rows * out_plane);
      if (tasks >= 2 * pool.num_threads() && Mg * out_plane * col_rows < (int64_t{1} << 22)) {
        pool.parallel_for(tasks, 1, [&](int64_t b, int64_t e) {
          auto col = std::make_unique_for_overwrite<T[]>(col_elems);
          for (int64_t t = b; t < e; ++t) one(t / group, t % group, col.get(), nullptr);
        });
      } else {
        auto col = std::make_unique_for_overwrite<T[]>(col_elems);
        for (int64_t t = 0; t < tasks; ++t) one(t / group, t % group, col.get(), &pool);
      }
    }
    if (z || !fuse.act.none()) {
      const T* Z = z ? z->data<T>() : nullptr;
      for (int64_t i = 0; i < y->size(); ++i) {
        double v = Y[i] + (Z ? Z[i] : 0.0);
        Y[i] = fuse.act.none() ? v : static_cast<double>(activate(fuse.act, static_cast<float>(v)));
      }
    }
  }
  return Status::Ok();
}

uint64_t conv_amx_runs() { return g_amx_runs.load(std::memory_order_relaxed); }

uint64_t conv_transposed_runs() {
#if defined(__x86_64__) || defined(__i386__)
  return g_transposed_runs.load(std::memory_order_relaxed);
#else
  return 0;
#endif
}

const PackedMatrix& ConvPrepacked::transposed() const {
  std::call_once(transposed_once_, [&] {
    const int64_t M = source.dim(0), K = source.size() / M;
    transposed_ = PackedMatrix::pack_b(true, K, M, source.data<float>(), K,
                                       amx_groups_.empty() ? GemmPrecision::kF32 : GemmPrecision::kBf16x3);
  });
  return *transposed_;
}

void ConvPrepacked::pack_groups() const {
  std::call_once(groups_once_, [&] {
    const int64_t Mg = source.dim(0) / group_count, K = source.size() / source.dim(0);
    for (int64_t gi = 0; gi < group_count; ++gi)
      groups_.push_back(PackedMatrix::pack_a(false, Mg, K, source.data<float>() + gi * Mg * K, K));
  });
}

const PackedMatrix& ConvPrepacked::group(int64_t gi) const {
  pack_groups();
  return *groups_[static_cast<size_t>(gi)];
}

const WinogradFilters& ConvPrepacked::winograd4() const {
  std::call_once(winograd4_once_, [&] { winograd4_ = winograd4_filters(source.data<float>(), source.dim(0), source.dim(1)); });
  return *winograd4_;
}

const WinogradFilters& ConvPrepacked::winograd() const {
  std::call_once(winograd_once_, [&] { winograd_ = winograd_filters(source.data<float>(), source.dim(0), source.dim(1)); });
  return *winograd_;
}

Result<std::shared_ptr<const ConvPrepacked>> prepack_conv_weights(const ir::Node& node, const Tensor* w) {
  if (!w || w->dtype() != DType::kFloat32 || w->rank() < 3 || w->rank() > 5) return std::shared_ptr<const ConvPrepacked>();
  const int64_t group = node.attr_int("group", 1);
  const int64_t M = w->dim(0);
  if (group <= 0 || M % group != 0) return std::shared_ptr<const ConvPrepacked>();
  const int64_t Mg = M / group;
  int64_t K = 1;
  for (size_t i = 1; i < w->rank(); ++i) K *= w->dim(i);
  if (Mg == 1 && w->dim(1) == 1 && group > 1) return std::shared_ptr<const ConvPrepacked>();  // depthwise: direct loop
  auto pre = std::make_shared<ConvPrepacked>();
  pre->source = *w;
  pre->group_count = group;
  // A conv that will run Winograd gets its transformed filters now (the
  // variant winograd_prepack_tile expects) and the GEMM packing only if
  // another path ever asks (an output plane under kWinogradMinPlane, the
  // switch turned off): resnet18 keeps 9 MiB less.
  const std::vector<int64_t> ones = {1, 1};
  const std::vector<int64_t> st = node.attr_ints("strides", ones), di = node.attr_ints("dilations", ones);
  const bool winograd = w->rank() == 4 && st.size() == 2 && di.size() == 2 &&
                        winograd_candidate(group, M, w->dim(1), w->dim(2), w->dim(3), st[0], st[1], di[0], di[1]);
  if (winograd && winograd_prepack_tile(M, w->dim(1)) == 4) pre->winograd4();
  else if (winograd) pre->winograd();
  // Precision bf16x3 on AMX: the filters as AMX tiles too, which conv_run
  // takes over every fp32 path but Winograd and patch embeddings (conv_run
  // says why); the fp32 GEMM packing then waits for a first use, should AMX
  // become unusable.
  if (kernel_build_options().precision == GemmPrecision::kBf16x3 && amx_bf16x3_available()) {
    for (int64_t gi = 0; gi < group; ++gi)
      pre->amx_groups_.push_back(
          PackedMatrix::pack_a(false, Mg, K, w->data<float>() + gi * Mg * K, K, GemmPrecision::kBf16x3));
    // A patch embedding (kernel = stride >= 4, no padding) runs as Yᵀ =
    // im2colᵀ · Wᵀ: its Wᵀ, as AMX tiles, now rather than on the first run.
    const std::vector<int64_t> pads = node.attr_ints("pads", {0, 0, 0, 0});
    const std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
    const bool no_pads = std::all_of(pads.begin(), pads.end(), [](int64_t v) { return v == 0; }) &&
                         (auto_pad == "NOTSET" || auto_pad == "VALID");
    if (w->rank() == 4 && group == 1 && st.size() == 2 && di.size() == 2 && st[0] == w->dim(2) && st[1] == w->dim(3) &&
        w->dim(3) >= 4 && di[0] == 1 && di[1] == 1 && no_pads)
      pre->transposed();
  } else if (!winograd) {
    pre->pack_groups();
  }
  return std::shared_ptr<const ConvPrepacked>(std::move(pre));
}

namespace {

class ConvKernel final : public OpKernel {
 public:
  ConvKernel(std::shared_ptr<const ConvPrepacked> pre, ConvFusion fuse) : pre_(std::move(pre)), fuse_(fuse) {}
  Status compute(KernelContext& ctx) const override { return conv_run(ctx, pre_.get(), fuse_); }

 private:
  std::shared_ptr<const ConvPrepacked> pre_;
  ConvFusion fuse_;
};

Status conv_compute(KernelContext& ctx) { return conv_run(ctx, nullptr, ConvFusion{}); }

Status conv_transpose_compute(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* w, required_input(ctx, 1));
  const Tensor* bias = ctx.input(2);
  if (nn::is_half(x->dtype())) return nn::run_as_float32(ctx, conv_transpose_compute);
  if (x->dtype() != DType::kFloat32 && x->dtype() != DType::kFloat64)
    return ctx.unsupported(std::string("ConvTranspose on ") + dtype_name(x->dtype()) + " is not supported");
  if (w->dtype() != x->dtype() || (bias && bias->dtype() != x->dtype()))
    return ctx.invalid("X, W and B must have the same dtype");
  if (x->rank() < 3 || x->rank() > 5) return ctx.unsupported("ConvTranspose supports 1-D, 2-D and 3-D inputs only");
  if (w->rank() != x->rank()) return ctx.invalid("W must have the same rank as X");
  const ir::Node& node = ctx.node();
  const int nd = static_cast<int>(x->rank()) - 2;
  const int64_t N = x->dim(0), C = x->dim(1);
  const int64_t group = node.attr_int("group", 1);
  if (group <= 0 || C % group != 0) return ctx.invalid("group must divide the input channels");
  if (w->dim(0) != C) return ctx.invalid("W's first dim must equal X's channels");
  const int64_t Cg = C / group, Mg = w->dim(1), M = Mg * group;
  if (bias && (bias->rank() != 1 || bias->dim(0) != M)) return ctx.invalid("B must have shape [M]");
  DLRT_ASSIGN_OR_RETURN(IntList kshape, kernel_shape_of(ctx, *w, nd));

  IntList stride = ints_attr(node, "strides", nd, 1);
  IntList dil = ints_attr(node, "dilations", nd, 1);
  IntList outpad = ints_attr(node, "output_padding", nd, 0);
  IntList pads = ints_attr(node, "pads", 2 * nd, 0);
  IntList out_attr = ints_attr(node, "output_shape", 0, 0);
  const std::string_view auto_pad = [&]() -> std::string_view {
    const ir::Attribute* a = node.attr("auto_pad");
    return a ? std::string_view(a->s) : std::string_view("NOTSET");
  }();
  if (static_cast<int>(stride.size()) != nd || static_cast<int>(dil.size()) != nd ||
      static_cast<int>(outpad.size()) != nd || static_cast<int>(pads.size()) != 2 * nd)
    return ctx.invalid("strides, dilations, output_padding and pads must have one value (two for pads) per spatial dim");
  if (!out_attr.empty()) {
    if (static_cast<int>(out_attr.size()) == nd + 2) out_attr.erase(out_attr.begin(), out_attr.begin() + 2);
    if (static_cast<int>(out_attr.size()) != nd) return ctx.invalid("output_shape must have one value per spatial dim");
  }
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER")
    return ctx.invalid("unknown auto_pad '" + std::string(auto_pad) + "'");

  nn::WindowGeometry wg;  // in = ConvTranspose's output ("image"), out = its input (columns)
  wg.nd = nd;
  wg.in.resize(nd);
  wg.out.assign(x->shape().begin() + 2, x->shape().end());
  wg.kernel = kshape;
  wg.stride = stride;
  wg.dilation = dil;
  wg.pad_begin.resize(nd);
  wg.pad_end.resize(nd);
  auto floor_half = [](int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); };
  for (int i = 0; i < nd; ++i) {
    if (stride[i] <= 0 || dil[i] <= 0 || kshape[i] <= 0) return ctx.invalid("strides, dilations and kernel dims must be positive");
    if (outpad[i] < 0) return ctx.invalid("output_padding must be non-negative");
    const int64_t in = wg.out[i];
    const int64_t full = stride[i] * (in - 1) + outpad[i] + (kshape[i] - 1) * dil[i] + 1;
    int64_t target = -1;
    if (!out_attr.empty()) target = out_attr[i];
    else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") target = in * stride[i];
    if (target >= 0) {
      const int64_t total = full - target;
      if (auto_pad == "SAME_UPPER") {
        wg.pad_begin[i] = floor_half(total);
        wg.pad_end[i] = total - floor_half(total);
      } else {
        wg.pad_begin[i] = total - floor_half(total);
        wg.pad_end[i] = floor_half(total);
      }
      wg.in[i] = target;
    } else {
      if (auto_pad == "VALID") pads[i] = pads[i + nd] = 0;
      if (pads[i] < 0 || pads[i + nd] < 0) return ctx.invalid("pads must be non-negative");
      wg.pad_begin[i] = pads[i];
      wg.pad_end[i] = pads[i + nd];
      wg.in[i] = full - pads[i] - pads[i + nd];
    }
    if (wg.in[i] < 0) return ctx.invalid("the computed output size is negative");
  }
  Shape out_shape = {N, M};
  out_shape.insert(out_shape.end(), wg.in.begin(), wg.in.end());
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), out_shape));
  if (y->size() == 0) return Status::Ok();
  const Geo3 g = to_geo3(wg);

  auto run = [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* X = x->data<T>();
    const T* W = w->data<T>();
    T* Y = y->data<T>();
    const int64_t img = g.in_size(), cols = g.out_size(), ks = g.k_size();
    const int64_t col_rows = Mg * ks;
    ThreadPool& pool = ctx.pool();
    // Per (image, group): col = W_g^T X_g, then scatter into Y (zero-initialised).
    auto one = [&](int64_t n, int64_t gi, T* col, ThreadPool* p) {
      gemm_t<T>(true, false, col_rows, cols, Cg, W + gi * Cg * col_rows, col_rows, X + (n * C + gi * Cg) * cols, cols,
                T(0), col, cols, p);
      col2im<T>(col, Mg, g, Y + (n * M + gi * Mg) * img);
    };
    // The columns live in a per-thread buffer that is kept from run to run.
    auto col_buffer = [&]() {
      static thread_local AlignedScratch col;
      return col.get<T>(static_cast<size_t>(col_rows * cols));
    };
    const int64_t tasks = N * group;
    if (tasks >= 2 * pool.num_threads()) {
      pool.parallel_for(tasks, 1, [&](int64_t b, int64_t e) {
        T* col = col_buffer();
        for (int64_t t = b; t < e; ++t) one(t / group, t % group, col, nullptr);
      });
    } else {
      T* col = col_buffer();
      for (int64_t t = 0; t < tasks; ++t) one(t / group, t % group, col, &pool);
    }
    if (bias) {
      const T* Bv = bias->data<T>();
      for (int64_t n = 0; n < N; ++n)
        for (int64_t m = 0; m < M; ++m) {
          T* yp = Y + (n * M + m) * img;
          for (int64_t i = 0; i < img; ++i) yp[i] += Bv[m];
        }
    }
    return Status::Ok();
  };
  if (x->dtype() == DType::kFloat32) return run(std::type_identity<float>{});
  return run(std::type_identity<double>{});
}

}  // namespace

Status register_conv_kernels(KernelRegistry& r) {
  KernelDef conv;
  conv.op_type = "Conv";
  conv.min_opset = 1;
  conv.factory = [](const ir::Node&) -> Result<std::unique_ptr<OpKernel>> {
    return std::unique_ptr<OpKernel>(new FnKernel(conv_compute));
  };
  conv.factory_with_constants = [](const ir::Node& node,
                                   const ConstantInputs& constants) -> Result<std::unique_ptr<OpKernel>> {
    DLRT_ASSIGN_OR_RETURN(auto pre, prepack_conv_weights(node, constants(1)));
    return std::unique_ptr<OpKernel>(new ConvKernel(std::move(pre), ConvFusion{}));
  };
  DLRT_RETURN_IF_ERROR(r.add(std::move(conv)));
  DLRT_RETURN_IF_ERROR(r.add_fn("ConvTranspose", conv_transpose_compute, 1));
  return Status::Ok();
}

}  // namespace dlrt::cpu
