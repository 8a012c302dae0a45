// Kernel body (simd/simd.h), compiled once per vector width by
// gemm_int8_epilogue.cpp: the output stages of the 8-bit GEMM (gemm_int8.h)
// on one tile of raw sums. Each is the portable loops' arithmetic a vector at
// a time: the zero-point correction in uint32 (wrapping), then int32 to
// float, then the float stage's multiplies and add (separate roundings: the
// file is built without contraction into fused multiply-adds), or the
// requantization (clamp, round to nearest even, zero point, low byte).

namespace dlrt::cpu::simd::DLRT_SIMD_NS {

namespace int8_epilogue_body {
namespace {

const int32_t* as_i32(const uint32_t* p) { return reinterpret_cast<const int32_t*>(p); }

#include "backends/cpu/kernels/simd/for_vectors_simd.h"

// Lanes [q, q + n) of a tile row's corrected sums: acc - az * ct - rs * cz
// (mod 2^32), as acc + (-az) ct + (-rs) cz.
struct Corrected {
  const int32_t* acc;
  const int32_t* ct;
  const int32_t* cz;
  Vi32 neg_az, neg_rs;
  __attribute__((always_inline)) Vi32 operator()(int64_t q, int64_t n) const {
    const Vi32 t = add_i32(mullo_i32(neg_az, load_first_i32(ct + q, n)), mullo_i32(neg_rs, load_first_i32(cz + q, n)));
    return add_i32(load_first_i32(acc + q, n), t);
  }
};

Corrected corrected_row(const int32_t* acc, const uint32_t* az, const uint32_t* rs, const uint32_t* ct,
                        const uint32_t* cz) {
  return {acc, as_i32(ct), as_i32(cz), set1_i32(static_cast<int32_t>(0u - *az)),
          set1_i32(static_cast<int32_t>(0u - *rs))};
}

// The requantization of v (the scaled sums): clamped to [lo, hi] (the 8-bit
// range less the zero point), rounded, plus the zero point, stored as bytes.
struct Requant {
  Vf lo, hi, zp;
  Requant(int32_t zero_point, bool out_signed)
      : lo(set1(static_cast<float>((out_signed ? -128 : 0) - zero_point))),
        hi(set1(static_cast<float>((out_signed ? 127 : 255) - zero_point))),
        zp(set1(static_cast<float>(zero_point))) {}
  __attribute__((always_inline)) void store(uint8_t* o, Vf v, int64_t n) const {
    store_bytes(o, add(round_nearest(min(hi, max(lo, v))), zp), n);
  }
};

// The uniform requantization: acc - col_total - row_total + bias (wrapping),
// times mult, with mult and bias per column (kCols) or per row.
template <bool kCols>
void requant_uniform(const int32_t* acc, int64_t acc_ld, int64_t rows, int64_t cols, const uint32_t* col_total,
                     const uint32_t* row_total, const float* mult, const int32_t* bias, int32_t zp, bool out_signed,
                     uint8_t* out, int64_t ldo) {
  const Requant rq(zp, out_signed);
  const int32_t* ct = as_i32(col_total);
  for (int64_t r = 0; r < rows; ++r) {
    const uint32_t row_bias = !kCols && bias ? static_cast<uint32_t>(bias[r]) : 0u;
    const Vi32 vr = set1_i32(static_cast<int32_t>(row_bias - row_total[r]));
    const Vf row_mult = set1(kCols ? 0.0f : mult[r]);
    const int32_t* ar = acc + r * acc_ld;
    uint8_t* o = out + r * ldo;
    for_vectors(cols, [&](int64_t q, auto n) {
      Vi32 c = load_first_i32(ct + q, n);
      if (kCols && bias) c = sub_i32(c, load_first_i32(bias + q, n));
      const Vi32 v = add_i32(sub_i32(load_first_i32(ar + q, n), c), vr);
      rq.store(o + q, mul(to_float(v), kCols ? load_first(mult + q, n) : row_mult), n);
    });
  }
}

}  // namespace
}  // namespace int8_epilogue_body

// c[r][q] = acc[r][q] - az[r] ct[q] - rs[r] cz[q] (mod 2^32); c may be acc.
void int8_correct(const int32_t* acc, int64_t acc_ld, int64_t rows, int64_t cols, const uint32_t* az,
                  const uint32_t* rs, const uint32_t* ct, const uint32_t* cz, int32_t* c, int64_t ldc) {
  using namespace int8_epilogue_body;
  for (int64_t r = 0; r < rows; ++r) {
    const Corrected x = corrected_row(acc + r * acc_ld, az + r, rs + r, ct, cz);
    int32_t* cr = c + r * ldc;
    for_vectors(cols, [&](int64_t q, auto n) { store_first_i32(cr + q, x(q, n), n); });
  }
}

// int8_correct, then the float stage (Int8FloatOutput, the tile's first row
// i0 and column j0) in the same pass: float(C) * scale (row_scale * scale),
// + bias, to c.
void int8_correct_to_float(const int32_t* acc, int64_t acc_ld, int64_t rows, int64_t cols, const uint32_t* az,
                           const uint32_t* rs, const uint32_t* ct, const uint32_t* cz, const Int8FloatOutput& f,
                           int64_t i0, int64_t j0, float* c, int64_t ldc) {
  using namespace int8_epilogue_body;
  const float* sc = f.scale + j0 * f.scale_stride;
  const float* b = f.bias ? f.bias + j0 : nullptr;
  const Vf one_scale = set1(sc[0]);
  for (int64_t r = 0; r < rows; ++r) {
    const Corrected x = corrected_row(acc + r * acc_ld, az + r, rs + r, ct, cz);
    const Vf row = set1(f.row_scale ? f.row_scale[i0 + r] : 1.0f);
    float* cr = c + r * ldc;
    for_vectors(cols, [&](int64_t q, auto n) {
      Vf s = f.scale_stride ? load_first(sc + q, n) : one_scale;
      if (f.row_scale) s = mul(row, s);
      Vf y = mul(to_float(x(q, n)), s);
      if (b) y = add(y, load_first(b + q, n));
      store_first(cr + q, y, n);
    });
  }
}

// int8_correct, then row r requantized with mult[r] and bias[r] (or 0).
void int8_correct_requant(const int32_t* acc, int64_t acc_ld, int64_t rows, int64_t cols, const uint32_t* az,
                          const uint32_t* rs, const uint32_t* ct, const uint32_t* cz, const float* mult,
                          const int32_t* bias, int32_t zp, bool out_signed, uint8_t* out, int64_t ldo) {
  using namespace int8_epilogue_body;
  const Requant rq(zp, out_signed);
  for (int64_t r = 0; r < rows; ++r) {
    const Corrected x = corrected_row(acc + r * acc_ld, az + r, rs + r, ct, cz);
    const Vi32 vb = set1_i32(bias ? bias[r] : 0);
    const Vf m = set1(mult[r]);
    uint8_t* o = out + r * ldo;
    for_vectors(cols, [&](int64_t q, auto n) { rq.store(o + q, mul(to_float(add_i32(x(q, n), vb)), m), n); });
  }
}

// The same when the correction is col_total[q] + row_total[r] (one zero
// point for all of A and one for all of B), with mult and bias per row.
void int8_correct_requant_uniform(const int32_t* acc, int64_t acc_ld, int64_t rows, int64_t cols,
                                  const uint32_t* col_total, const uint32_t* row_total, const float* mult,
                                  const int32_t* bias, int32_t zp, bool out_signed, uint8_t* out, int64_t ldo) {
  int8_epilogue_body::requant_uniform<false>(acc, acc_ld, rows, cols, col_total, row_total, mult, bias, zp,
                                             out_signed, out, ldo);
}

// int8_correct_requant_uniform with mult and bias per column.
void int8_correct_requant_uniform_cols(const int32_t* acc, int64_t acc_ld, int64_t rows, int64_t cols,
                                       const uint32_t* col_total, const uint32_t* row_total, const float* mult,
                                       const int32_t* bias, int32_t zp, bool out_signed, uint8_t* out, int64_t ldo) {
  int8_epilogue_body::requant_uniform<true>(acc, acc_ld, rows, cols, col_total, row_total, mult, bias, zp,
                                            out_signed, out, ldo);
}

}  // namespace dlrt::cpu::simd::DLRT_SIMD_NS
