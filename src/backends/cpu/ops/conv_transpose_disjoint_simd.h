// Kernel body (simd/simd.h), compiled once per vector width by
// conv_transpose_disjoint.cpp: the product rows of a few-row GEMM and the
// interleaved output rows of kernel width 2. At 512 bits the former
// AVX-512-only loops' results (the same FMA chain per output) at their speed.

namespace dlrt::cpu::simd::DLRT_SIMD_NS {

namespace conv_transpose_disjoint_body {
namespace {

// col [R, nc] = W^T X for the kCols vectors of columns at p: R accumulators
// each (two vectors when they fit the register file with the column and
// weight vectors), each X vector loaded once; kTail: the last, partial ones.
template <int R, int kCols, bool kTail>
__attribute__((always_inline)) inline void few_rows_tile(const float* W, const float* X, int64_t ldx, int64_t Cg,
                                                         int64_t nc, int64_t p, float* col) {
  Mask m[kCols];  // the tail's lanes (unused for full vectors)
#pragma GCC unroll 16
  for (int j = 0; j < kCols; ++j) m[j] = first_lanes(kTail ? nc - p - j * kLanes : kLanes);
  Vf acc[kCols][R];
#pragma GCC unroll 16
  for (int j = 0; j < kCols; ++j)
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) acc[j][r] = zero();
  for (int64_t c = 0; c < Cg; ++c) {
    Vf x[kCols];
#pragma GCC unroll 16
    for (int j = 0; j < kCols; ++j) {
      const float* xp = X + c * ldx + p + j * kLanes;
      x[j] = in_register(kTail ? load_where(m[j], xp) : loadu(xp));
    }
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const Vf w = set1(W[c * R + r]);
#pragma GCC unroll 16
      for (int j = 0; j < kCols; ++j) acc[j][r] = fmadd(w, x[j], acc[j][r]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
    for (int j = 0; j < kCols; ++j) {
      float* cp = col + r * nc + p + j * kLanes;
      if (kTail) store_where(cp, m[j], acc[j][r]);
      else storeu(cp, acc[j][r]);
    }
}

template <int R>
void few_rows(const float* W, const float* X, int64_t ldx, int64_t Cg, int64_t nc, float* col) {
  constexpr int kCols = 2 * R + 3 <= kRegisters ? 2 : 1;
  int64_t p = 0;
  for (; p + kCols * kLanes <= nc; p += kCols * kLanes) few_rows_tile<R, kCols, false>(W, X, ldx, Cg, nc, p, col);
  if (p < nc) few_rows_tile<R, kCols, true>(W, X, ldx, Cg, nc, p, col);
}

}  // namespace
}  // namespace conv_transpose_disjoint_body

// few_rows for R in 1..8; false for more rows.
bool conv_transpose_few_rows(int64_t R, const float* W, const float* X, int64_t ldx, int64_t Cg, int64_t nc,
                             float* col) {
  using namespace conv_transpose_disjoint_body;
  switch (R) {
    case 1: few_rows<1>(W, X, ldx, Cg, nc, col); return true;
    case 2: few_rows<2>(W, X, ldx, Cg, nc, col); return true;
    case 3: few_rows<3>(W, X, ldx, Cg, nc, col); return true;
    case 4: few_rows<4>(W, X, ldx, Cg, nc, col); return true;
    case 5: few_rows<5>(W, X, ldx, Cg, nc, col); return true;
    case 6: few_rows<6>(W, X, ldx, Cg, nc, col); return true;
    case 7: few_rows<7>(W, X, ldx, Cg, nc, col); return true;
    case 8: few_rows<8>(W, X, ldx, Cg, nc, col); return true;
    default: return false;
  }
}

// out[2 i] = a[i] + bias, out[2 i + 1] = b[i] + bias for i < n.
void conv_transpose_interleave2_bias(const float* a, const float* b, float bias, float* out, int64_t n) {
  const Vf vb = set1(bias);
  for (int64_t i = 0; i < n; i += kLanes) {
    Vf lo, hi;
    interleave2(add(load_first(a + i, n - i), vb), add(load_first(b + i, n - i), vb), lo, hi);
    store_first(out + 2 * i, lo, 2 * (n - i));
    store_first(out + 2 * i + kLanes, hi, 2 * (n - i) - kLanes);
  }
}

}  // namespace dlrt::cpu::simd::DLRT_SIMD_NS
