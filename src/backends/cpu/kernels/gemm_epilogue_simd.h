// Kernel body (simd/simd.h), compiled once per vector width by
// gemm_epilogue.cpp: the GEMM/Conv output stage (bias, residual, activation
// on a block of C in place) and apply_activation.

namespace dlrt::cpu::simd::DLRT_SIMD_NS {

namespace epilogue_body {
namespace {

#include "backends/cpu/kernels/simd/math_simd.h"
#include "backends/cpu/kernels/activation_simd.h"

// One row's epilogue input at columns [j, j + n) (lanes past n read 0):
// C plus the row bias (-0 without one: the identity of every sum), the
// column bias and the residual where there are.
struct RowInputs {
  const float* c;
  const float* col_bias;  // or null
  const float* residual;  // or null
  Vf row_bias;
  __attribute__((always_inline)) Vf operator()(int64_t j, int64_t n) const {
    Vf v = add(load_first(c + j, n), row_bias);
    if (col_bias) v = add(v, load_first(col_bias + j, n));
    if (residual) v = add(v, load_first(residual + j, n));
    return v;
  }
};

// Gelu on U vectors of one row from column j, in lockstep.
template <int U>
__attribute__((always_inline)) inline void gelu_step(float* cr, int64_t j, int64_t cols, const RowInputs& pre,
                                                     const act::Post& post) {
  Vf v[U];
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) v[u] = pre(j + kLanes * u, cols - j - kLanes * u);
  act::gelu_lockstep<U>(v);
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) store_first(cr + j + kLanes * u, post(v[u]), cols - j - kLanes * u);
}

// At 512 bits row by row, every step one vector with its tail lanes masked
// (k-masks: the tail costs no more than a whole vector); Gelu four vectors
// of a row in lockstep, the row's last one to four likewise (a 48-column
// tile row is one step of three).
template <ActKind K>
void run_rows(const GemmEpilogue& ep, float* c, int64_t ldc, int64_t i0, int64_t j0, int64_t rows, int64_t cols) {
  const Vf p0 = set1(ep.act.p0), p1 = set1(ep.act.p1);
  const act::Post post = act::post_of(ep.act);
  for (int64_t r = 0; r < rows; ++r) {
    float* cr = c + r * ldc;
    const RowInputs pre{cr, ep.col_bias ? ep.col_bias + j0 : nullptr,
                        ep.residual ? ep.residual + (i0 + r) * ep.ldr + j0 : nullptr,
                        set1(ep.row_bias ? ep.row_bias[i0 + r] : -0.0f)};
    if constexpr (K == ActKind::kGelu) {
      int64_t j = 0;
      for (; j + 4 * kLanes <= cols; j += 4 * kLanes) gelu_step<4>(cr, j, cols, pre, post);
      switch ((cols - j + kLanes - 1) / kLanes) {  // the last 1 to 4 kLanes - 1 columns
        case 4: gelu_step<4>(cr, j, cols, pre, post); break;
        case 3: gelu_step<3>(cr, j, cols, pre, post); break;
        case 2: gelu_step<2>(cr, j, cols, pre, post); break;
        case 1: gelu_step<1>(cr, j, cols, pre, post); break;
        default: break;
      }
    } else {
      for (int64_t j = 0; j < cols; j += kLanes)
        store_first(cr + j, post(act::apply<K>(pre(j, cols - j), p0, p1)), cols - j);
    }
  }
}

// The whole vectors of the block go four at a time, from as many as four
// rows (a 6 x 16 GEMM tile is 2 vectors a row at 256 bits): the activations
// with long dependency chains (exp, erf, a reciprocal) then overlap four at
// once instead of one vector waiting on the last
// (docs/performance-decisions.md). Each row's last cols % kLanes columns go
// through one vector whose lanes past the row read 0 and are not stored.
// (At 512 bits run_rows instead.)
template <ActKind K>
void run(const GemmEpilogue& ep, float* c, int64_t ldc, int64_t i0, int64_t j0, int64_t rows, int64_t cols) {
  if constexpr (kWidth == SimdWidth::k512) return run_rows<K>(ep, c, ldc, i0, j0, rows, cols);
  const Vf p0 = set1(ep.act.p0), p1 = set1(ep.act.p1);
  const act::Post post = act::post_of(ep.act);
  // The input of the activation at (row r, columns [j, j + n)): C plus the biases and the residual.
  auto pre = [&](int64_t r, int64_t j, int64_t n) {
    const bool whole = n >= kLanes;
    Vf v = whole ? loadu(c + r * ldc + j) : load_first(c + r * ldc + j, n);
    if (ep.row_bias) v = add(v, set1(ep.row_bias[i0 + r]));
    if (ep.col_bias) {
      const float* cb = ep.col_bias + j0 + j;
      v = add(v, whole ? loadu(cb) : load_first(cb, n));
    }
    if (ep.residual) {
      const float* res = ep.residual + (i0 + r) * ep.ldr + j0 + j;
      v = add(v, whole ? loadu(res) : load_first(res, n));
    }
    return v;
  };
  const int64_t nvec = cols / kLanes, total = rows * nvec;
  int64_t r = 0, jv = 0;  // the next whole vector: row r, columns [kLanes jv, kLanes jv + kLanes)
  auto advance = [&] {
    if (++jv == nvec) jv = 0, ++r;
  };
  int64_t t = 0;
  for (; t + 4 <= total; t += 4) {
    float* dst[4];
    Vf v[4];
    for (int u = 0; u < 4; ++u) {
      dst[u] = c + r * ldc + kLanes * jv;
      v[u] = pre(r, kLanes * jv, kLanes);
      advance();
    }
    if constexpr (K == ActKind::kGelu) {
      act::gelu_lockstep<4>(v);
      for (int u = 0; u < 4; ++u) v[u] = post(v[u]);
    } else {
      for (int u = 0; u < 4; ++u) v[u] = post(act::apply<K>(v[u], p0, p1));
    }
    for (int u = 0; u < 4; ++u) storeu(dst[u], v[u]);
  }
  for (; t < total; ++t) {
    storeu(c + r * ldc + kLanes * jv, post(act::apply<K>(pre(r, kLanes * jv, kLanes), p0, p1)));
    advance();
  }
  const int64_t j = kLanes * nvec, n = cols - j;
  if (n == 0) return;
  for (r = 0; r < rows; ++r) store_first(c + r * ldc + j, post(act::apply<K>(pre(r, j, n), p0, p1)), n);
}

template <ActKind K>
void run_act(const Activation& a, float* x, int64_t n) {
  GemmEpilogue ep;
  ep.act = a;
  run<K>(ep, x, n, 0, 0, 1, n);
}

}  // namespace
}  // namespace epilogue_body

// The entries: the activation's kind picks the instantiation once per call.
void epilogue_run(const GemmEpilogue& ep, float* c, int64_t ldc, int64_t i0, int64_t j0, int64_t rows,
                  int64_t cols) {
  using epilogue_body::run;
  switch (ep.act.kind) {
    case ActKind::kNone: return run<ActKind::kNone>(ep, c, ldc, i0, j0, rows, cols);
    case ActKind::kRelu: return run<ActKind::kRelu>(ep, c, ldc, i0, j0, rows, cols);
    case ActKind::kClip: return run<ActKind::kClip>(ep, c, ldc, i0, j0, rows, cols);
    case ActKind::kSigmoid: return run<ActKind::kSigmoid>(ep, c, ldc, i0, j0, rows, cols);
    case ActKind::kTanh: return run<ActKind::kTanh>(ep, c, ldc, i0, j0, rows, cols);
    case ActKind::kLeakyRelu: return run<ActKind::kLeakyRelu>(ep, c, ldc, i0, j0, rows, cols);
    case ActKind::kHardSigmoid: return run<ActKind::kHardSigmoid>(ep, c, ldc, i0, j0, rows, cols);
    case ActKind::kHardSwish: return run<ActKind::kHardSwish>(ep, c, ldc, i0, j0, rows, cols);
    case ActKind::kGelu: return run<ActKind::kGelu>(ep, c, ldc, i0, j0, rows, cols);
    case ActKind::kGeluTanh: return run<ActKind::kGeluTanh>(ep, c, ldc, i0, j0, rows, cols);
    case ActKind::kSilu: return run<ActKind::kSilu>(ep, c, ldc, i0, j0, rows, cols);
  }
}

void activation_run(const Activation& a, float* x, int64_t n) {
  using epilogue_body::run_act;
  switch (a.kind) {
    case ActKind::kNone: return run_act<ActKind::kNone>(a, x, n);
    case ActKind::kRelu: return run_act<ActKind::kRelu>(a, x, n);
    case ActKind::kClip: return run_act<ActKind::kClip>(a, x, n);
    case ActKind::kSigmoid: return run_act<ActKind::kSigmoid>(a, x, n);
    case ActKind::kTanh: return run_act<ActKind::kTanh>(a, x, n);
    case ActKind::kLeakyRelu: return run_act<ActKind::kLeakyRelu>(a, x, n);
    case ActKind::kHardSigmoid: return run_act<ActKind::kHardSigmoid>(a, x, n);
    case ActKind::kHardSwish: return run_act<ActKind::kHardSwish>(a, x, n);
    case ActKind::kGelu: return run_act<ActKind::kGelu>(a, x, n);
    case ActKind::kGeluTanh: return run_act<ActKind::kGeluTanh>(a, x, n);
    case ActKind::kSilu: return run_act<ActKind::kSilu>(a, x, n);
  }
}

}  // namespace dlrt::cpu::simd::DLRT_SIMD_NS
