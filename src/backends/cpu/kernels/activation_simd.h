// Body fragment (simd/simd.h): the activations of activation_epilogue.h
// over the width's operations, for kernels on the layer. Included by a
// kernel body inside its width namespace after simd/math_simd.h, once per
// width and translation unit; the including .cpp includes
// activation_epilogue.h and gelu_phi_table.h first.
//
// Sigmoid, Tanh and SiLU are math_simd.h's (exp of -|x|, a refined
// reciprocal); Gelu (erf form) is the table Phi of gelu_phi_table.h at 512
// bits (a 32-entry lookup is one vpermt2ps there) and Abramowitz-Stegun's
// erfc below (a lookup would be a gather or scalar loads). Accuracy against
// <cmath>: within 3e-7 + 4e-7 |y| (tests/cpu/activation_simd_test.cpp
// measures each in ulps); NaN stays NaN.

namespace act {

// Gelu by the table Phi on [-6, 6]: s = v / 0.375 + 15.5 for v clamped to
// [-6, 6] (a NaN to -6), its segment s rounded to nearest (capped at 31),
// w = s - segment; Phi = 0 below -6 (so Gelu(-inf) = -inf * 0 = NaN), and a
// NaN v stays NaN through the product.
template <int U>
__attribute__((always_inline)) inline void gelu_table_lockstep(Vf (&v)[U]) {
  Vf w[U], p[U], seg[U];
#pragma GCC unroll 4
  for (int i = 0; i < U; ++i) {
    const Vf t = min(max(v[i], set1(-6.0f)), set1(6.0f));
    const Vf s = fmadd(t, set1(1.0f / 0.375f), set1(15.5f));
    seg[i] = min(round_nearest(s), set1(31.0f));
    w[i] = sub(s, seg[i]);
  }
#pragma GCC unroll 4
  for (int i = 0; i < U; ++i)
    p[i] = fmadd(lookup32(kGeluPhiTable[5], seg[i]), w[i], lookup32(kGeluPhiTable[4], seg[i]));
#pragma GCC unroll 4
  for (int k = 3; k >= 0; --k)
#pragma GCC unroll 4
    for (int i = 0; i < U; ++i) p[i] = fmadd(p[i], w[i], lookup32(kGeluPhiTable[k], seg[i]));
#pragma GCC unroll 4
  for (int i = 0; i < U; ++i) v[i] = mul(v[i], select(nlt(v[i], set1(-6.0f)), p[i], zero()));
}

// Gelu = v Phi(v), Phi = 1 - q/2 for v >= 0 and q/2 below, q = erfc(|v|/sqrt 2)
// by Abramowitz-Stegun 7.1.26 (absolute error < 1.5e-7) taken directly, so
// negative v loses nothing to cancellation; q is 0 past z = 9 (erfc(9) <
// 1e-36), so Gelu(-inf) = -inf * 0 = NaN, and a NaN v stays NaN.
template <int U>
__attribute__((always_inline)) inline void gelu_erfc_lockstep(Vf (&v)[U]) {
  Vf z[U], t[U], q[U], w[U];
  const Vf one = set1(1.0f);
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) z[u] = mul(bit_andnot(set1(-0.0f), v[u]), set1(0.70710678118654752f));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) t[u] = recip_est(fmadd(z[u], set1(0.3275911f), one));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) q[u] = fmadd(set1(1.061405429f), t[u], set1(-1.453152027f));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) q[u] = fmadd(q[u], t[u], set1(1.421413741f));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) q[u] = fmadd(q[u], t[u], set1(-0.284496736f));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) q[u] = fmadd(q[u], t[u], set1(0.254829592f));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) q[u] = mul(q[u], t[u]);
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) w[u] = mul(bit_or(z[u], set1(-0.0f)), z[u]);  // -z^2 (z >= 0)
  math::exp_nonpositive_lockstep<U>(w);
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) {
    const Vf half = mul(select(lt(z[u], set1(9.0f)), mul(q[u], w[u]), zero()), set1(0.5f));
    v[u] = mul(v[u], select(lt(v[u], zero()), half, sub(one, half)));
  }
}

// Gelu (erf form) on U vectors in lockstep, so their long dependency chains overlap.
template <int U>
__attribute__((always_inline)) inline void gelu_lockstep(Vf (&v)[U]) {
  if constexpr (kWidth == SimdWidth::k512)
    gelu_table_lockstep<U>(v);
  else
    gelu_erfc_lockstep<U>(v);
}

// The activation K on one vector (p0, p1: its parameters broadcast).
template <ActKind K>
__attribute__((always_inline)) inline Vf apply(Vf v, Vf p0, Vf p1) {
  if constexpr (K == ActKind::kNone) {
    return v;
  } else if constexpr (K == ActKind::kRelu) {
    return max(zero(), v);  // NaN stays NaN (max returns its second operand)
  } else if constexpr (K == ActKind::kClip) {
    return min(p1, max(p0, v));
  } else if constexpr (K == ActKind::kSigmoid) {
    return math::sigmoid(v);
  } else if constexpr (K == ActKind::kTanh) {
    return math::tanh(v);
  } else if constexpr (K == ActKind::kLeakyRelu) {
    return mul_where(lt(v, zero()), v, p0, v);
  } else if constexpr (K == ActKind::kHardSigmoid) {
    return max(zero(), min(set1(1.0f), fmadd(v, p0, p1)));
  } else if constexpr (K == ActKind::kHardSwish) {
    const Vf h = fmadd(v, set1(1.0f / 6.0f), set1(0.5f));
    return mul(v, max(zero(), min(set1(1.0f), h)));
  } else if constexpr (K == ActKind::kGelu) {
    Vf one[1] = {v};
    gelu_lockstep<1>(one);
    return one[0];
  } else if constexpr (K == ActKind::kGeluTanh) {
    const Vf v3 = mul(mul(v, v), v);
    const Vf in = mul(set1(0.7978845608028654f), fmadd(v3, set1(0.044715f), v));
    return mul(mul(set1(0.5f), v), add(set1(1.0f), math::tanh(in)));
  } else {  // kSilu: sigmoid is 0 below -87.33, so -inf gives -inf * 0 = NaN as Mul(x, Sigmoid(x))
    return mul(v, math::sigmoid(v));
  }
}

// The post-affine and post-clamp of an Activation (activation_epilogue.h),
// their constants broadcast once.
struct Post {
  bool affine, bounded;
  Vf sc, sh, lo, hi;
  __attribute__((always_inline)) Vf operator()(Vf v) const {
    if (affine) v = fmadd(v, sc, sh);
    if (bounded) v = min(hi, max(lo, v));  // NaN and ties keep v (second operand)
    return v;
  }
};
__attribute__((always_inline)) inline Post post_of(const Activation& a) {
  return {a.affine, a.bounded, set1(a.scale), set1(a.shift), set1(a.lo), set1(a.hi)};
}

template <ActKind K>
inline void apply_each(const Activation& a, Vf* v, int n) {
  const Vf p0 = set1(a.p0), p1 = set1(a.p1);
  for (int i = 0; i < n; ++i) v[i] = apply<K>(v[i], p0, p1);
}

// apply<K> on v[0, n) for an activation known at run time only, then the
// post-stages: one branch on the kind for all n vectors, out of line, for
// output stages that keep a few vectors per row in registers.
__attribute__((noinline)) inline void apply_array(const Activation& a, Vf* v, int n) {
  switch (a.kind) {
    case ActKind::kNone: break;
    case ActKind::kRelu: apply_each<ActKind::kRelu>(a, v, n); break;
    case ActKind::kClip: apply_each<ActKind::kClip>(a, v, n); break;
    case ActKind::kSigmoid: apply_each<ActKind::kSigmoid>(a, v, n); break;
    case ActKind::kTanh: apply_each<ActKind::kTanh>(a, v, n); break;
    case ActKind::kLeakyRelu: apply_each<ActKind::kLeakyRelu>(a, v, n); break;
    case ActKind::kHardSigmoid: apply_each<ActKind::kHardSigmoid>(a, v, n); break;
    case ActKind::kHardSwish: apply_each<ActKind::kHardSwish>(a, v, n); break;
    case ActKind::kGelu: apply_each<ActKind::kGelu>(a, v, n); break;
    case ActKind::kGeluTanh: apply_each<ActKind::kGeluTanh>(a, v, n); break;
    case ActKind::kSilu: apply_each<ActKind::kSilu>(a, v, n); break;
  }
  if (a.affine || a.bounded) {
    const Post post = post_of(a);
    for (int i = 0; i < n; ++i) v[i] = post(v[i]);
  }
}

}  // namespace act
