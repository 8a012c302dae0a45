// Body fragment (simd/simd.h): exp (of non-positive inputs; of a bounded
// range), sigmoid and tanh over the width's operations, for kernels on the
// layer. Included by a kernel body inside its width namespace, once per
// width and translation unit. At 512 bits these are the operations, in order,
// of the AVX-512-only exp, sigmoid and tanh they replaced (same results); the
// narrower widths differ only in recip_1_2 and scale2 (simd.h).
// Accuracy: exp within a few float ulps (0 below ln(FLT_MIN)), sigmoid a
// few ulps relative, tanh 2e-7 absolute; NaN stays NaN.

namespace math {

// x[u] = exp(x[u]) for U vectors of x <= 0 (NaN stays NaN) in lockstep, so
// their dependency chains overlap: e^r as one degree-6 minimax polynomial on
// |r| <= ln(2)/2 with p(0) = 1, 2^n applied where x >= ln(FLT_MIN), 0 below
// (-inf included).
template <int U>
__attribute__((always_inline)) inline void exp_nonpositive_lockstep(Vf (&x)[U]) {
  Mask normal[U];
  Vf n[U], r[U], p[U];
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) normal[u] = nlt(x[u], set1(-87.33f));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) n[u] = round_nearest(mul(x[u], set1(1.44269504088896341f)));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) r[u] = fnmadd(n[u], set1(0.693359375f), x[u]);
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) r[u] = fnmadd(n[u], set1(-2.12194440e-4f), r[u]);
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) p[u] = fmadd(set1(1.3843653723597527e-3f), r[u], set1(8.37415549904108e-3f));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) p[u] = fmadd(p[u], r[u], set1(4.166800156235695e-2f));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) p[u] = fmadd(p[u], r[u], set1(1.6666431725025177e-1f));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) p[u] = fmadd(p[u], r[u], set1(4.999999403953552e-1f));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) p[u] = fmadd(p[u], r[u], set1(1.0f));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) p[u] = fmadd(p[u], r[u], set1(1.0f));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) x[u] = scale2_where(normal[u], p[u], n[u]);
}

// exp(x) for x in [-87.33, 88.72] (the caller's bound: no clamps, no
// underflow to 0): the former AVX-512 exp_ps without its clamps, the same
// results there.
__attribute__((always_inline)) inline Vf exp_in_range(Vf x) {
  const Vf n = round_nearest(mul(x, set1(1.44269504088896341f)));
  Vf r = fnmadd(n, set1(0.693359375f), x);
  r = fnmadd(n, set1(-2.12194440e-4f), r);
  Vf p = set1(1.9875691500e-4f);
  p = fmadd(p, r, set1(1.3981999507e-3f));
  p = fmadd(p, r, set1(8.3334519073e-3f));
  p = fmadd(p, r, set1(4.1665795894e-2f));
  p = fmadd(p, r, set1(1.6666665459e-1f));
  p = fmadd(p, r, set1(5.0000001201e-1f));
  p = fmadd(p, mul(r, r), add(r, set1(1.0f)));
  return scale2(p, n);
}

// With e = exp(-|x|) in [0, 1]: 1 / (1 + e) for x >= 0, e / (1 + e) for
// x < 0 (relative accuracy on both sides, no division).
__attribute__((always_inline)) inline Vf sigmoid(Vf x) {
  Vf e[1] = {bit_or(x, set1(-0.0f))};
  exp_nonpositive_lockstep<1>(e);
  const Vf r = recip_1_2(add(set1(1.0f), e[0]));
  return mul_where(lt(x, zero()), e[0], r, r);
}

// sign(x) (1 - e) / (1 + e) with e = exp(-2|x|); |x| < 0.25 the odd series
// (no cancellation).
__attribute__((always_inline)) inline Vf tanh(Vf x) {
  const Vf sign = bit_and(x, set1(-0.0f));
  const Vf ax = bit_andnot(set1(-0.0f), x);
  Vf e[1] = {mul(ax, set1(-2.0f))};
  exp_nonpositive_lockstep<1>(e);
  const Vf big = mul(sub(set1(1.0f), e[0]), recip_1_2(add(set1(1.0f), e[0])));
  const Vf x2 = mul(ax, ax);
  Vf p = set1(62.0f / 2835.0f);
  p = fmadd(p, x2, set1(-17.0f / 315.0f));
  p = fmadd(p, x2, set1(2.0f / 15.0f));
  p = fmadd(p, x2, set1(-1.0f / 3.0f));
  p = fmadd(p, x2, set1(1.0f));
  const Vf r = select(lt(ax, set1(0.25f)), mul(p, ax), big);  // NaN: not small, big is NaN
  return bit_or(r, sign);
}

}  // namespace math
