// Body fragment (simd/simd.h): the 1-D transforms of Winograd F(4x4, 3x3)
// (conv_winograd.h) on one vector width, shared by the NCHW kernel (lanes:
// tiles) and the blocked one (lanes: channels). Included by their bodies,
// once per width and translation unit, inside their namespace.

namespace winograd4 {

// y = Bᵀ x for one 6-vector (x and y may not alias).
__attribute__((always_inline)) inline void bt6(const Vf (&x)[6], Vf (&y)[6]) {
  const Vf four = set1(4.0f), five = set1(-5.0f), two = set1(2.0f);
  y[0] = fmadd(four, x[0], fmadd(five, x[2], x[4]));
  y[1] = fnmadd(four, add(x[1], x[2]), add(x[3], x[4]));
  y[2] = fmadd(four, sub(x[1], x[2]), sub(x[4], x[3]));
  y[3] = fmadd(two, sub(x[3], x[1]), sub(x[4], x[2]));
  y[4] = fmadd(two, sub(x[1], x[3]), sub(x[4], x[2]));
  y[5] = fmadd(four, x[1], fmadd(five, x[3], x[5]));
}

// y = Aᵀ x for one 6-vector.
__attribute__((always_inline)) inline void at6(const Vf (&x)[6], Vf (&y)[4]) {
  const Vf p12 = add(x[1], x[2]), m12 = sub(x[1], x[2]);
  const Vf p34 = add(x[3], x[4]), m34 = sub(x[3], x[4]);
  y[0] = add(add(x[0], p12), p34);
  y[1] = fmadd(set1(2.0f), m34, m12);
  y[2] = fmadd(set1(4.0f), p34, p12);
  y[3] = add(fmadd(set1(8.0f), m34, m12), x[5]);
}

// The second pass of Bᵀ d B: column k of h (h[r]: patch row r after the
// first pass) transformed, out[i] the element (i, k).
__attribute__((always_inline)) inline void bt6_column(const Vf (&h)[6][6], int k, Vf (&out)[6]) {
  const Vf col[6] = {h[0][k], h[1][k], h[2][k], h[3][k], h[4][k], h[5][k]};
  bt6(col, out);
}

}  // namespace winograd4
