#include "core/narrow_types.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace dlrt {
namespace {

// A small binary float format: exponent and mantissa widths, bias, and how
// its special values are encoded.
struct Format {
  int exp_bits;
  int man_bits;
  int bias;
  bool has_inf;  // all-ones exponent with zero mantissa is infinity (IEEE-like: E5M2)
  bool fnuz;     // no negative zero; 0x80 is the only NaN
  bool fn;       // no infinity; all-ones exponent and mantissa is NaN (E4M3FN)
};

Format format_of(DType t) {
  switch (t) {
    case DType::kFloat8E4M3FN: return {4, 3, 7, false, false, true};
    case DType::kFloat8E4M3FNUZ: return {4, 3, 8, false, true, false};
    case DType::kFloat8E5M2: return {5, 2, 15, true, false, false};
    case DType::kFloat8E5M2FNUZ: return {5, 2, 16, false, true, false};
    default: return {2, 1, 1, false, false, false};  // float4e2m1: no inf, no NaN
  }
}

int total_bits(const Format& f) { return 1 + f.exp_bits + f.man_bits; }

double largest(const Format& f) {
  const int emax_field = (1 << f.exp_bits) - 1;
  int top_exp = emax_field;
  int top_man = (1 << f.man_bits) - 1;
  if (f.has_inf) top_exp = emax_field - 1;      // E5M2: the all-ones exponent is inf/NaN
  else if (f.fn) top_man = top_man - 1;         // E4M3FN: S.1111.111 is NaN
  return std::ldexp(1.0 + top_man / static_cast<double>(1 << f.man_bits), top_exp - f.bias);
}

double decode(const Format& f, uint8_t v) {
  const int bits = total_bits(f);
  const uint8_t sign_bit = static_cast<uint8_t>(1u << (bits - 1));
  if (f.fnuz && v == 0x80) return std::numeric_limits<double>::quiet_NaN();
  const bool neg = (v & sign_bit) != 0;
  const int e = (v >> f.man_bits) & ((1 << f.exp_bits) - 1);
  const int m = v & ((1 << f.man_bits) - 1);
  const int emax_field = (1 << f.exp_bits) - 1;
  double r;
  if (f.has_inf && e == emax_field) {
    r = m == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  } else if (f.fn && e == emax_field && m == (1 << f.man_bits) - 1) {
    r = std::numeric_limits<double>::quiet_NaN();
  } else if (e == 0) {
    r = std::ldexp(static_cast<double>(m), 1 - f.bias - f.man_bits);
  } else {
    r = std::ldexp(1.0 + m / static_cast<double>(1 << f.man_bits), e - f.bias);
  }
  return neg ? -r : r;
}

uint8_t nan_code(const Format& f, bool neg) {
  if (f.fnuz) return 0x80;
  if (f.fn) return neg ? 0xFF : 0x7F;
  if (f.has_inf) return neg ? 0xFE : 0x7E;
  return 0x8;  // float4e2m1 (what ml_dtypes gives)
}

uint8_t encode(const Format& f, double x, bool saturate) {
  const int bits = total_bits(f);
  const uint8_t sign = static_cast<uint8_t>(std::signbit(x) ? 1u << (bits - 1) : 0u);
  const bool is_f4 = !f.has_inf && !f.fnuz && !f.fn;
  if (std::isnan(x)) return nan_code(f, std::signbit(x));
  const double top = largest(f);
  double a = std::fabs(x);
  if (saturate || is_f4) a = std::min(a, top);
  if (std::isinf(a)) {
    if (f.has_inf) return static_cast<uint8_t>(sign | (((1 << f.exp_bits) - 1) << f.man_bits));
    return nan_code(f, std::signbit(x));
  }
  // Round to the format's grid: the quantum is that of a's binade, or of the
  // subnormals below the smallest normal.
  int e = a > 0 ? std::ilogb(a) : 1 - f.bias;
  if (e < 1 - f.bias) e = 1 - f.bias;
  const double quantum = std::ldexp(1.0, e - f.man_bits);
  const double r = std::nearbyint(a / quantum) * quantum;  // default rounding: to nearest, ties to even
  if (r > top) {
    if (f.has_inf) return static_cast<uint8_t>(sign | (((1 << f.exp_bits) - 1) << f.man_bits));
    return nan_code(f, std::signbit(x));
  }
  if (r == 0) return f.fnuz ? 0 : sign;
  int re = std::ilogb(r);
  uint8_t code;
  if (re < 1 - f.bias) {
    code = static_cast<uint8_t>(std::lround(std::ldexp(r, f.bias - 1 + f.man_bits)));
  } else {
    const int m = static_cast<int>(std::lround((std::ldexp(r, -re) - 1.0) * (1 << f.man_bits)));
    code = static_cast<uint8_t>(((re + f.bias) << f.man_bits) | m);
  }
  return static_cast<uint8_t>(sign | code);
}

uint8_t encode_e8m0(double x, bool saturate, E8M0Rounding rounding) {
  const float xf = static_cast<float>(x);
  uint32_t b;
  std::memcpy(&b, &xf, sizeof b);
  uint32_t exponent = (b >> 23) & 0xFF;
  if (exponent == 0xFF) return 0xFF;
  const uint32_t fraction = b & 0x7FFFFF;
  bool up = false;
  if (rounding == E8M0Rounding::kUp) {
    up = fraction != 0;
  } else if (rounding == E8M0Rounding::kNearest) {
    const bool g = (b & 0x400000) != 0, r = (b & 0x200000) != 0, s = (b & 0x1FFFFF) != 0;
    up = g && (r || s || exponent > 0);
  }
  if (up && saturate && exponent == 0xFE) up = false;
  if (up) ++exponent;
  return static_cast<uint8_t>(exponent);
}

// ONNX's rule for Cast to int4/uint4/int2/uint2 (its technical notes "4 bit
// integer types" and "2 bit integer types"): round to the nearest integer,
// ties to even, then keep the low bits (truncate to the width).
uint8_t wrap_int(double x, int bits, bool is_signed) {
  if (!std::isfinite(x)) return 0;
  const double t = std::nearbyint(x);  // default rounding: to nearest, ties to even
  // Beyond int64 the low bits are all zero anyway.
  const uint64_t u = std::fabs(t) >= 9.2e18 ? 0 : static_cast<uint64_t>(static_cast<int64_t>(t));
  uint8_t low = static_cast<uint8_t>(u & ((1u << bits) - 1));
  if (is_signed && (low & (1u << (bits - 1)))) low = static_cast<uint8_t>(low | (0xFFu << bits));
  return low;
}

}  // namespace

double narrow_to_double(DType t, uint8_t v) {
  switch (t) {
    case DType::kInt4: case DType::kInt2: return static_cast<double>(static_cast<int8_t>(v));
    case DType::kUInt4: case DType::kUInt2: return static_cast<double>(v);
    case DType::kFloat8E8M0:
      return v == 0xFF ? std::numeric_limits<double>::quiet_NaN() : std::ldexp(1.0, static_cast<int>(v) - 127);
    default: return decode(format_of(t), v);
  }
}

uint8_t narrow_from_double(DType t, double x, bool saturate, E8M0Rounding rounding) {
  switch (t) {
    case DType::kInt4: return wrap_int(x, 4, true);
    case DType::kUInt4: return wrap_int(x, 4, false);
    case DType::kInt2: return wrap_int(x, 2, true);
    case DType::kUInt2: return wrap_int(x, 2, false);
    case DType::kFloat8E8M0: return encode_e8m0(x, saturate, rounding);
    default: return encode(format_of(t), x, saturate);
  }
}

}  // namespace dlrt
