// The GEMM/Conv output stage: bias, residual and activation applied to a
// block of C in place. AVX-512 and AVX2 versions (vector exp/erf
// approximations, within a few float ulps of the scalar reference for
// Sigmoid/Tanh/Gelu) are picked at run time (isa.h) where the CPU has them;
// the portable version uses <cmath>.
#include <cmath>

#include "backends/cpu/kernels/activation_epilogue.h"
#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/gemm_kernels.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/isa_target.h"
#include "backends/cpu/kernels/vec_avx2.h"
#include "backends/cpu/kernels/vec_avx512.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define DLRT_EPI_X86 1
#endif

namespace dlrt::cpu {
namespace {

using EpilogueFn = void (*)(const GemmEpilogue&, float*, int64_t, int64_t, int64_t, int64_t, int64_t);
using ActFn = void (*)(const Activation&, float*, int64_t);

void epilogue_generic(const GemmEpilogue& ep, float* c, int64_t ldc, int64_t i0, int64_t j0, int64_t rows,
                      int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    float* cr = c + r * ldc;
    // Without a row bias -0, the identity of every sum (+0 would turn -0 into +0).
    const float rb = ep.row_bias ? ep.row_bias[i0 + r] : -0.0f;
    const float* cb = ep.col_bias ? ep.col_bias + j0 : nullptr;
    const float* res = ep.residual ? ep.residual + (i0 + r) * ep.ldr + j0 : nullptr;
    for (int64_t j = 0; j < cols; ++j) {
      float v = cr[j] + rb;
      if (cb) v += cb[j];
      if (res) v += res[j];
      cr[j] = activate(ep.act, v);
    }
  }
}

void act_generic(const Activation& a, float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = activate(a, x[i]);
}

#ifdef DLRT_EPI_X86

using avx2::exp_ps;

// 1 / d for d in [1, 2] (or NaN): the 12-bit estimate and two Newton steps
// (one leaves 1 / 1 at 1 - 2^-24, and tanh and sigmoid short of +-1 where
// they saturate); within an ulp of the division, at several times its throughput.
DLRT_AVX2 inline __m256 recip_1_2_ps(__m256 d) {
  __m256 y = _mm256_rcp_ps(d);
  y = _mm256_fmadd_ps(y, _mm256_fnmadd_ps(d, y, _mm256_set1_ps(1.0f)), y);
  return _mm256_fmadd_ps(y, _mm256_fnmadd_ps(d, y, _mm256_set1_ps(1.0f)), y);
}

// With e = exp(-|x|) in [0, 1]: 1 / (1 + e) for x >= 0, e / (1 + e) for
// x < 0 (relative accuracy on both sides, no division); e is 0 below -87.3
// where exp_ps clamps, so sigmoid(-inf) = 0. NaN stays NaN.
DLRT_AVX2 inline __m256 sigmoid_ps(__m256 x) {
  const __m256 nax = _mm256_or_ps(x, _mm256_set1_ps(-0.0f));
  const __m256 e = _mm256_and_ps(exp_ps(nax), _mm256_cmp_ps(nax, _mm256_set1_ps(-87.3f), _CMP_NLT_UQ));
  const __m256 r = recip_1_2_ps(_mm256_add_ps(_mm256_set1_ps(1.0f), e));
  return _mm256_blendv_ps(r, _mm256_mul_ps(e, r), _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ));
}

// tanh(x) = sign(x) * (1 - e) / (1 + e), e = exp(-2|x|); small |x| uses the odd series (no cancellation).
DLRT_AVX2 inline __m256 tanh_ps(__m256 x) {
  const __m256 sign = _mm256_and_ps(x, _mm256_set1_ps(-0.0f));
  const __m256 ax = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
  const __m256 e = exp_ps(_mm256_mul_ps(ax, _mm256_set1_ps(-2.0f)));
  __m256 big = _mm256_mul_ps(_mm256_sub_ps(_mm256_set1_ps(1.0f), e), recip_1_2_ps(_mm256_add_ps(_mm256_set1_ps(1.0f), e)));
  const __m256 x2 = _mm256_mul_ps(ax, ax);
  // tanh(x) ~ x - x^3/3 + 2x^5/15 - 17x^7/315 + 62x^9/2835 for |x| < 0.25
  __m256 p = _mm256_set1_ps(62.0f / 2835.0f);
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(-17.0f / 315.0f));
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(2.0f / 15.0f));
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(-1.0f / 3.0f));
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(1.0f));
  const __m256 small = _mm256_mul_ps(p, ax);
  const __m256 use_small = _mm256_cmp_ps(ax, _mm256_set1_ps(0.25f), _CMP_LT_OQ);
  const __m256 r = _mm256_blendv_ps(big, small, use_small);
  // keep NaN: (NaN < 0.25) is false, big is NaN
  return _mm256_or_ps(r, sign);
}

// Gelu(x) = x * Phi(x) for U vectors, every step for all U before the next:
// Zen 1 overlaps too little of one vector's long dependency chain
// (docs/performance-decisions.md).
// Phi(x) = 1 - q/2 for x >= 0 and q/2 below, q = erfc(|x|/sqrt 2) by
// Abramowitz-Stegun 7.1.26 (absolute error < 1.5e-7) taken directly rather
// than as 1 + erf(x), so negative x loses nothing to cancellation; 1/(1 + p z)
// is a reciprocal estimate and one Newton step instead of a division; q is 0
// past z = 9 (erfc(9) < 1e-36), so Gelu(-inf) is -inf * 0 = NaN as in the
// reference, and a NaN x stays NaN through the final product.
template <int U>
DLRT_AVX2 __attribute__((always_inline)) inline void gelu_lockstep(__m256 (&v)[U]) {
  __m256 z[U], t[U], q[U], w[U];
  const __m256 one = _mm256_set1_ps(1.0f);
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u)
    z[u] = _mm256_mul_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), v[u]), _mm256_set1_ps(0.70710678118654752f));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) w[u] = _mm256_fmadd_ps(z[u], _mm256_set1_ps(0.3275911f), one);
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) t[u] = _mm256_rcp_ps(w[u]);
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) t[u] = _mm256_mul_ps(t[u], _mm256_fnmadd_ps(w[u], t[u], _mm256_set1_ps(2.0f)));
  // q = t * poly(t)
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) q[u] = _mm256_fmadd_ps(_mm256_set1_ps(1.061405429f), t[u], _mm256_set1_ps(-1.453152027f));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) q[u] = _mm256_fmadd_ps(q[u], t[u], _mm256_set1_ps(1.421413741f));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) q[u] = _mm256_fmadd_ps(q[u], t[u], _mm256_set1_ps(-0.284496736f));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) q[u] = _mm256_fmadd_ps(q[u], t[u], _mm256_set1_ps(0.254829592f));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) q[u] = _mm256_mul_ps(q[u], t[u]);
  // w = exp(-z^2)
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) w[u] = _mm256_mul_ps(_mm256_xor_ps(z[u], _mm256_set1_ps(-0.0f)), z[u]);
  avx2::exp_lockstep<U>(w);
  // q = erfc(z), zero past z = 9; Phi by the sign of x; Gelu = x * Phi.
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u)
    q[u] = _mm256_and_ps(_mm256_mul_ps(q[u], w[u]), _mm256_cmp_ps(z[u], _mm256_set1_ps(9.0f), _CMP_LT_OQ));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) {
    const __m256 half = _mm256_mul_ps(q[u], _mm256_set1_ps(0.5f));
    v[u] = _mm256_mul_ps(v[u], _mm256_blendv_ps(_mm256_sub_ps(one, half), half, v[u]));
  }
}

template <ActKind K>
DLRT_AVX2 inline __m256 act_ps(__m256 v, __m256 p0, __m256 p1) {
  if constexpr (K == ActKind::kNone) {
    return v;
  } else if constexpr (K == ActKind::kRelu) {
    return _mm256_max_ps(_mm256_setzero_ps(), v);  // NaN stays NaN
  } else if constexpr (K == ActKind::kClip) {
    return _mm256_min_ps(p1, _mm256_max_ps(p0, v));  // NaN stays NaN
  } else if constexpr (K == ActKind::kSigmoid) {
    return sigmoid_ps(v);
  } else if constexpr (K == ActKind::kTanh) {
    return tanh_ps(v);
  } else if constexpr (K == ActKind::kLeakyRelu) {
    return _mm256_blendv_ps(v, _mm256_mul_ps(v, p0), _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LT_OQ));
  } else if constexpr (K == ActKind::kHardSigmoid) {
    return _mm256_max_ps(_mm256_setzero_ps(), _mm256_min_ps(_mm256_set1_ps(1.0f), _mm256_fmadd_ps(v, p0, p1)));
  } else if constexpr (K == ActKind::kHardSwish) {
    const __m256 h = _mm256_fmadd_ps(v, _mm256_set1_ps(1.0f / 6.0f), _mm256_set1_ps(0.5f));
    return _mm256_mul_ps(v, _mm256_max_ps(_mm256_setzero_ps(), _mm256_min_ps(_mm256_set1_ps(1.0f), h)));
  } else if constexpr (K == ActKind::kGelu) {
    __m256 x[1] = {v};
    gelu_lockstep<1>(x);
    return x[0];
  } else if constexpr (K == ActKind::kSilu) {
    // sigmoid_ps clamps e^-x to a finite value; Sigmoid is 0 where e^-x
    // overflows (x < -88.72, as in <cmath>), so huge negative x give -0 and
    // -inf gives NaN, as Mul(x, Sigmoid(x)) does.
    const __m256 keep = _mm256_cmp_ps(v, _mm256_set1_ps(-88.7228394f), _CMP_NLT_UQ);
    return _mm256_mul_ps(v, _mm256_and_ps(sigmoid_ps(v), keep));
  } else {  // kGeluTanh
    const __m256 v3 = _mm256_mul_ps(_mm256_mul_ps(v, v), v);
    const __m256 in = _mm256_mul_ps(_mm256_set1_ps(0.7978845608028654f), _mm256_fmadd_ps(v3, _mm256_set1_ps(0.044715f), v));
    return _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), v), _mm256_add_ps(_mm256_set1_ps(1.0f), tanh_ps(in)));
  }
}

// The whole 8-lane vectors of the block go four at a time, from as many as
// four rows (a 6 x 16 GEMM tile is 2 vectors a row): the activations with
// long dependency chains (exp, erf, a division) then overlap four at once
// instead of one vector waiting on the last (docs/performance-decisions.md).
// A row's last cols % 8 elements go through a zero-padded vector.
template <ActKind K>
DLRT_AVX2 void epilogue_avx2_t(const GemmEpilogue& ep, float* c, int64_t ldc, int64_t i0, int64_t j0, int64_t rows,
                               int64_t cols) {
  const __m256 p0 = _mm256_set1_ps(ep.act.p0), p1 = _mm256_set1_ps(ep.act.p1);
  // The post-affine and post-clamp (activation_epilogue.h) after the activation.
  const bool affine = ep.act.affine, bounded = ep.act.bounded;
  const __m256 sc = _mm256_set1_ps(ep.act.scale), sh = _mm256_set1_ps(ep.act.shift);
  const __m256 lo = _mm256_set1_ps(ep.act.lo), hi = _mm256_set1_ps(ep.act.hi);
  auto post = [&](__m256 v) DLRT_AVX2 {
    if (affine) v = _mm256_fmadd_ps(v, sc, sh);
    if (bounded) v = _mm256_min_ps(hi, _mm256_max_ps(lo, v));  // NaN and ties keep v (second operand)
    return v;
  };
  auto act = [&](__m256 v) DLRT_AVX2 { return post(act_ps<K>(v, p0, p1)); };
  // The input of the activation at (row r, column j): C plus the biases and the residual.
  auto pre = [&](int64_t r, int64_t j) DLRT_AVX2 {
    __m256 v = _mm256_loadu_ps(c + r * ldc + j);
    if (ep.row_bias) v = _mm256_add_ps(v, _mm256_set1_ps(ep.row_bias[i0 + r]));
    if (ep.col_bias) v = _mm256_add_ps(v, _mm256_loadu_ps(ep.col_bias + j0 + j));
    if (ep.residual) v = _mm256_add_ps(v, _mm256_loadu_ps(ep.residual + (i0 + r) * ep.ldr + j0 + j));
    return v;
  };
  const int64_t nvec = cols / 8, total = rows * nvec;
  int64_t r = 0, jv = 0;  // the next whole vector: row r, columns [8 jv, 8 jv + 8)
  auto advance = [&] {
    if (++jv == nvec) jv = 0, ++r;
  };
  int64_t t = 0;
  for (; t + 4 <= total; t += 4) {
    float* dst[4];
    __m256 v[4];
    for (int u = 0; u < 4; ++u) {
      dst[u] = c + r * ldc + 8 * jv;
      v[u] = pre(r, 8 * jv);
      advance();
    }
    if constexpr (K == ActKind::kGelu) {
      gelu_lockstep<4>(v);
      for (int u = 0; u < 4; ++u) v[u] = post(v[u]);
    } else {
      for (int u = 0; u < 4; ++u) v[u] = act(v[u]);
    }
    for (int u = 0; u < 4; ++u) _mm256_storeu_ps(dst[u], v[u]);
  }
  for (; t < total; ++t) {
    _mm256_storeu_ps(c + r * ldc + 8 * jv, act(pre(r, 8 * jv)));
    advance();
  }
  if (cols % 8 == 0) return;
  const int64_t j = 8 * nvec, n = cols - j;
  for (r = 0; r < rows; ++r) {
    float* cr = c + r * ldc;
    const float rbs = ep.row_bias ? ep.row_bias[i0 + r] : -0.0f;
    const float* cb = ep.col_bias ? ep.col_bias + j0 : nullptr;
    const float* res = ep.residual ? ep.residual + (i0 + r) * ep.ldr + j0 : nullptr;
    alignas(32) float tmp[8] = {};
    for (int64_t e = 0; e < n; ++e) {
      float v = cr[j + e] + rbs;
      if (cb) v += cb[j + e];
      if (res) v += res[j + e];
      tmp[e] = v;
    }
    _mm256_store_ps(tmp, act(_mm256_load_ps(tmp)));
    for (int64_t e = 0; e < n; ++e) cr[j + e] = tmp[e];
  }
}

template <ActKind K>
DLRT_AVX2 void act_avx2_t(const Activation& a, float* x, int64_t n) {
  GemmEpilogue ep;
  ep.act = a;
  epilogue_avx2_t<K>(ep, x, n, 0, 0, 1, n);
}

// One row's epilogue input at column j: C plus the row bias, the column
// bias and the residual where there are.
struct RowInputs512 {
  const float* c;
  const float* col_bias;  // or null
  const float* residual;  // or null
  __m512 row_bias;
  DLRT_AVX512 __attribute__((always_inline)) __m512 operator()(int64_t j, __mmask16 m) const {
    __m512 v = _mm512_add_ps(_mm512_maskz_loadu_ps(m, c + j), row_bias);
    if (col_bias) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, col_bias + j));
    if (residual) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, residual + j));
    return v;
  }
};

// Gelu over one row of `cols` floats at cr, the inputs from pre(j, mask):
// four vectors in lockstep, the last one to three likewise (a 48-column
// tile row is one step of three); lockstep with the table Phi of
// gelu_lockstep quarters the cost of one vector at a time (docs/performance-decisions.md).
template <int U>
DLRT_AVX512 __attribute__((always_inline)) inline void gelu_step_avx512(float* cr, int64_t j, int64_t cols,
                                                                         const RowInputs512& pre, const Activation& a) {
  __m512 v[U];
  __mmask16 m[U];
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) {
    m[u] = avx512::tail_mask(cols - j - 16 * u);
    v[u] = pre(j + 16 * u, m[u]);
  }
  avx512::gelu_lockstep<U>(v);
  const avx512::Post512 post = avx512::post_of(a);
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) v[u] = post(v[u]);
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) _mm512_mask_storeu_ps(cr + j + 16 * u, m[u], v[u]);
}

DLRT_AVX512 inline void gelu_row_avx512(float* cr, int64_t cols, const RowInputs512& pre, const Activation& a) {
  int64_t j = 0;
  for (; j + 64 <= cols; j += 64) gelu_step_avx512<4>(cr, j, cols, pre, a);
  switch ((cols - j + 15) / 16) {  // the last 1 to 63 columns
    case 4: gelu_step_avx512<4>(cr, j, cols, pre, a); break;
    case 3: gelu_step_avx512<3>(cr, j, cols, pre, a); break;
    case 2: gelu_step_avx512<2>(cr, j, cols, pre, a); break;
    case 1: gelu_step_avx512<1>(cr, j, cols, pre, a); break;
    default: break;
  }
}

// 16 lanes per step; the row's tail is one masked step.
template <ActKind K>
DLRT_AVX512 void epilogue_avx512_t(const GemmEpilogue& ep, float* c, int64_t ldc, int64_t i0, int64_t j0,
                                   int64_t rows, int64_t cols) {
  const __m512 p0 = _mm512_set1_ps(ep.act.p0), p1 = _mm512_set1_ps(ep.act.p1);
  const avx512::Post512 post = avx512::post_of(ep.act);
  for (int64_t r = 0; r < rows; ++r) {
    float* cr = c + r * ldc;
    const __m512 rb = _mm512_set1_ps(ep.row_bias ? ep.row_bias[i0 + r] : -0.0f);  // -0 keeps -0
    const float* cb = ep.col_bias ? ep.col_bias + j0 : nullptr;
    const float* res = ep.residual ? ep.residual + (i0 + r) * ep.ldr + j0 : nullptr;
    const RowInputs512 pre{cr, cb, res, rb};
    if constexpr (K == ActKind::kGelu) {
      gelu_row_avx512(cr, cols, pre, ep.act);
      continue;
    }
    for (int64_t j = 0; j < cols; j += 16) {
      const __mmask16 m = avx512::tail_mask(cols - j);
      const __m512 v = avx512::act_ps<K>(pre(j, m), p0, p1);
      _mm512_mask_storeu_ps(cr + j, m, post(v));
    }
  }
}

template <ActKind K>
DLRT_AVX512 void act_avx512_t(const Activation& a, float* x, int64_t n) {
  GemmEpilogue ep;
  ep.act = a;
  epilogue_avx512_t<K>(ep, x, n, 0, 0, 1, n);
}

template <template <ActKind> class Pick>
auto by_kind(ActKind k) {
  switch (k) {
    case ActKind::kNone: return Pick<ActKind::kNone>::fn;
    case ActKind::kRelu: return Pick<ActKind::kRelu>::fn;
    case ActKind::kClip: return Pick<ActKind::kClip>::fn;
    case ActKind::kSigmoid: return Pick<ActKind::kSigmoid>::fn;
    case ActKind::kTanh: return Pick<ActKind::kTanh>::fn;
    case ActKind::kLeakyRelu: return Pick<ActKind::kLeakyRelu>::fn;
    case ActKind::kHardSigmoid: return Pick<ActKind::kHardSigmoid>::fn;
    case ActKind::kHardSwish: return Pick<ActKind::kHardSwish>::fn;
    case ActKind::kGelu: return Pick<ActKind::kGelu>::fn;
    case ActKind::kGeluTanh: return Pick<ActKind::kGeluTanh>::fn;
    case ActKind::kSilu: return Pick<ActKind::kSilu>::fn;
  }
  return Pick<ActKind::kNone>::fn;
}
template <ActKind K>
struct PickEpilogue {
  static constexpr EpilogueFn fn = epilogue_avx2_t<K>;
};
template <ActKind K>
struct PickAct {
  static constexpr ActFn fn = act_avx2_t<K>;
};
template <ActKind K>
struct PickEpilogue512 {
  static constexpr EpilogueFn fn = epilogue_avx512_t<K>;
};
template <ActKind K>
struct PickAct512 {
  static constexpr ActFn fn = act_avx512_t<K>;
};
#endif

}  // namespace

void apply_epilogue(const GemmEpilogue& ep, float* c, int64_t ldc, int64_t i0, int64_t j0, int64_t rows,
                    int64_t cols) {
  if (ep.empty() || rows <= 0 || cols <= 0) return;
#ifdef DLRT_EPI_X86
  // GEMM tiles (a few rows of <= 48 columns) stay on 8-lane vectors: the micro-kernel
  // has just stored them, and a 16-lane load spanning two 8-lane stores misses
  // store-to-load forwarding (a clear loss on AVX2 tiles, docs/performance-decisions.md).
  // Loads inside one wider store forward, so this also suits an
  // AVX-512 micro-kernel. Wide blocks (whole planes, rows >= 64) take 16 lanes.
  const CpuIsa isa = cpu_isa();
  if (isa >= CpuIsa::kAvx512 && cols >= 64) return by_kind<PickEpilogue512>(ep.act.kind)(ep, c, ldc, i0, j0, rows, cols);
  if (isa >= CpuIsa::kAvx2) return by_kind<PickEpilogue>(ep.act.kind)(ep, c, ldc, i0, j0, rows, cols);
#endif
  epilogue_generic(ep, c, ldc, i0, j0, rows, cols);
}

void apply_epilogue_zmm_tile(const GemmEpilogue& ep, float* c, int64_t ldc, int64_t i0, int64_t j0, int64_t rows,
                             int64_t cols) {
  if (ep.empty() || rows <= 0 || cols <= 0) return;
#ifdef DLRT_EPI_X86
  // The AVX-512 micro-kernel stored this tile in 16-lane vectors from its
  // first column: 16-lane loads at the same offsets forward from those stores.
  if (cpu_isa() >= CpuIsa::kAvx512) return by_kind<PickEpilogue512>(ep.act.kind)(ep, c, ldc, i0, j0, rows, cols);
#endif
  apply_epilogue(ep, c, ldc, i0, j0, rows, cols);
}

void apply_activation(const Activation& a, float* x, int64_t n) {
  if (a.none() || n <= 0) return;
#ifdef DLRT_EPI_X86
  const CpuIsa isa = cpu_isa();
  if (isa >= CpuIsa::kAvx512) return by_kind<PickAct512>(a.kind)(a, x, n);
  if (isa >= CpuIsa::kAvx2) return by_kind<PickAct>(a.kind)(a, x, n);
#endif
  act_generic(a, x, n);
}

}  // namespace dlrt::cpu
