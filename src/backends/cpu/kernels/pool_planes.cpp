// The float32 pooling kernels of pool_planes.h: the separable rows and
// columns passes, the 3x3/2 MaxPool and the global max and average, portable
// and over the vector layer (the body pool_planes_simd.h at every width).
#include "backends/cpu/kernels/pool_planes.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/simd/simd.h"
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

// 3x3/2 MaxPool on 2-D planes with begin pads of at most 1 (resnet18's
// after its stem): pool_planes_simd.h's maxpool3s2, chosen at 512 bits
// only, where it is faster than the rows and columns passes on one thread
// and the same on two (half the input comes from the other core;
// docs/performance-decisions.md).
bool maxpool3s2_ok(const Window3& g) {
  return g.k[0] == 1 && g.in[0] == 1 && g.out[0] == 1 && g.k[1] == 3 && g.k[2] == 3 && g.s[1] == 2 && g.s[2] == 2 &&
         g.pb[1] <= 1 && g.pb[2] <= 1;
}

}  // namespace

// Planes [p0, p1) through the rows pass rows_fn and the columns pass
// cols_fn (direct calls: the portable passes here, each width's from
// pool_planes_simd.h). Baseline code, not inlined into a width's entry:
// compiled there, this loop took more instructions (callgrind, AVX2).
template <bool kMax, RowsFn rows_fn, ColsFn cols_fn>
__attribute__((noinline)) void pool_planes_with(bool count_include_pad, const Window3& g, const float* X, float* Y, int64_t p0, int64_t p1) {
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

namespace {

}  // namespace
}  // namespace dlrt::cpu::pool_impl

#define DLRT_SIMD_BODY "backends/cpu/kernels/pool_planes_simd.h"
#include "backends/cpu/kernels/simd/instantiate.h"

namespace dlrt::cpu::pool_impl {
namespace {

}  // namespace

std::optional<SimdWidth> vector_width() {
  if (!cpu_has_simd_kernels()) return std::nullopt;  // honours DLRT_CPU_ISA
  return simd_width();
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
                     int64_t p1, std::optional<SimdWidth> width) {
  if (is_max && width == SimdWidth::k512 && maxpool3s2_ok(g)) {
    DLRT_SIMD_CALL(*width, maxpool3s2, g, X, Y, p0, p1);
    return;
  }
  if (width) {
    DLRT_SIMD_CALL(*width, pool_planes_run, is_max, count_include_pad, g, X, Y, p0, p1);
    return;
  }
  if (is_max) pool_planes_with<true, rows_scalar<true>, cols_scalar<true>>(false, g, X, Y, p0, p1);
  else pool_planes_with<false, rows_scalar<false>, cols_scalar<false>>(count_include_pad, g, X, Y, p0, p1);
}

void maxpool3s2_f32(SimdWidth width, const Window3& g, const float* X, float* Y, int64_t p0, int64_t p1) {
  DLRT_SIMD_CALL(width, maxpool3s2, g, X, Y, p0, p1);
}

void global_pool_planes_f32(bool is_max, const float* X, float* Y, int64_t plane_size, int64_t p0, int64_t p1,
                            std::optional<SimdWidth> width) {
  if (width) {
    DLRT_SIMD_CALL(*width, global_pool_planes, is_max, X, Y, plane_size, p0, p1);
    return;
  }
  for (int64_t p = p0; p < p1; ++p) {
    const float* xp = X + p * plane_size;
    Y[p] = is_max ? global_max_scalar(xp, plane_size)
                  : static_cast<float>(global_sum_scalar(xp, plane_size) / static_cast<double>(plane_size));
  }
}

}  // namespace dlrt::cpu::pool_impl
