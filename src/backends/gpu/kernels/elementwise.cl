// Element-wise kernels: unary (with parameters), binary and Where with
// N-d broadcasting through geo_t strides, comparisons, casts.

__kernel void unary_f32(__global const float* x, __global float* y, int n, int op, float a, float b) {
  int i = get_global_id(0);
  if (i < n) y[i] = apply_act(op, x[i], a, b);
}

#define BIN_ADD 0
#define BIN_SUB 1
#define BIN_MUL 2
#define BIN_DIV 3
#define BIN_POW 4
#define BIN_MAX 5
#define BIN_MIN 6
#define BIN_PRELU 7
#define BIN_MOD 8

inline float binary_op(int op, float a, float b) {
  switch (op) {
    case BIN_ADD: return a + b;
    case BIN_SUB: return a - b;
    case BIN_MUL: return a * b;
    case BIN_DIV: return a / b;
    case BIN_POW:
      if (b == 2.0f) return a * a;
      if (b == 0.5f) return sqrt(a);
      return pow(a, b);
    case BIN_MAX: return (isnan(a) || isnan(b)) ? NAN : fmax(a, b);
    case BIN_MIN: return (isnan(a) || isnan(b)) ? NAN : fmin(a, b);
    case BIN_PRELU: return a < 0.0f ? a * b : a;
    case BIN_MOD: return fmod(a, b);
    default: return a;
  }
}

// g.s[0] = strides of a, g.s[1] = strides of b; y is contiguous over g.
__kernel void binary_f32(__global const float* a, __global const float* b, __global float* y, geo_t g, int op) {
  int i = get_global_id(0);
  if (i >= g.n) return;
  int ia = 0, ib = 0;
  if (g.rank == 1) {
    ia = i * g.s[0][0];
    ib = i * g.s[1][0];
  } else {
    int r = i;
    GEO_FOR_EACH_DIM(d) {
      if (d < g.rank) {
        int c = r % g.dims[d];
        r /= g.dims[d];
        ia += c * g.s[0][d];
        ib += c * g.s[1][d];
      }
    }
  }
  y[i] = binary_op(op, a[ia], b[ib]);
}

#define CMP_EQ 0
#define CMP_LT 1
#define CMP_LE 2
#define CMP_GT 3
#define CMP_GE 4

__kernel void compare_f32(__global const float* a, __global const float* b, __global uchar* y, geo_t g, int op) {
  int i = get_global_id(0);
  if (i >= g.n) return;
  float x = a[geo_offset(g, i, 0)], z = b[geo_offset(g, i, 1)];
  int r = 0;
  switch (op) {
    case CMP_EQ: r = x == z; break;
    case CMP_LT: r = x < z; break;
    case CMP_LE: r = x <= z; break;
    case CMP_GT: r = x > z; break;
    case CMP_GE: r = x >= z; break;
  }
  y[i] = (uchar)r;
}

// g.s[0] = cond strides, g.s[1] = x strides, g.s[2] = y strides.
__kernel void where_f32(__global const uchar* c, __global const float* x, __global const float* z, __global float* y,
                        geo_t g) {
  int i = get_global_id(0);
  if (i >= g.n) return;
  y[i] = c[geo_offset(g, i, 0)] ? x[geo_offset(g, i, 1)] : z[geo_offset(g, i, 2)];
}

__kernel void cast_i64_f32(__global const long* x, __global float* y, int n) {
  int i = get_global_id(0);
  if (i < n) y[i] = (float)x[i];
}
__kernel void cast_i32_f32(__global const int* x, __global float* y, int n) {
  int i = get_global_id(0);
  if (i < n) y[i] = (float)x[i];
}
__kernel void cast_u8_f32(__global const uchar* x, __global float* y, int n) {
  int i = get_global_id(0);
  if (i < n) y[i] = (float)x[i];
}
__kernel void cast_f32_u8(__global const float* x, __global uchar* y, int n) {
  int i = get_global_id(0);
  if (i < n) y[i] = x[i] != 0.0f ? 1 : 0;
}

// float16 and bfloat16 <-> float32 from their bits (ushort storage), round to
// nearest even, NaN kept NaN, overflow to infinity; for the borders of a half
// model the executor computes in float32.
inline float half_bits_to_float(uint h) {
  uint sign = (h & 0x8000u) << 16;
  // Exponent and mantissa moved into a float's place then scaled by 2^112:
  // exact for normal and subnormal halves alike.
  float mag = as_float((h & 0x7fffu) << 13) * 0x1p112f;
  if ((h & 0x7c00u) == 0x7c00u) mag = as_float(0x7f800000u | ((h & 0x3ffu) << 13));  // inf, NaN
  return as_float(as_uint(mag) | sign);
}

inline uint float_to_half_bits(float f) {
  uint x = as_uint(f);
  uint sign = (x >> 16) & 0x8000u;
  uint ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return sign | (ax > 0x7f800000u ? 0x7e00u : 0x7c00u);
  if (ax >= 0x477ff000u) return sign | 0x7c00u;  // 65520 and up round to infinity
  uint hm, rem, tie;
  if (ax < 0x38800000u) {                        // below 2^-14: a subnormal half (or zero)
    if (ax <= 0x33000000u) return sign;          // up to 2^-25 rounds to zero
    uint e = ax >> 23, m = (ax & 0x7fffffu) | 0x800000u, s = 126u - e;
    hm = m >> s;
    rem = m & ((1u << s) - 1u);
    tie = 1u << (s - 1u);
  } else {
    hm = (((ax >> 23) - 112u) << 10) | ((ax & 0x7fffffu) >> 13);
    rem = ax & 0x1fffu;
    tie = 0x1000u;
  }
  if (rem > tie || (rem == tie && (hm & 1u))) ++hm;
  return sign | hm;
}

__kernel void cast_f16_f32(__global const ushort* x, __global float* y, int n) {
  int i = get_global_id(0);
  if (i < n) y[i] = half_bits_to_float(x[i]);
}
__kernel void cast_f32_f16(__global const float* x, __global ushort* y, int n) {
  int i = get_global_id(0);
  if (i < n) y[i] = (ushort)float_to_half_bits(x[i]);
}
__kernel void cast_bf16_f32(__global const ushort* x, __global float* y, int n) {
  int i = get_global_id(0);
  if (i < n) y[i] = as_float((uint)x[i] << 16);
}
__kernel void cast_f32_bf16(__global const float* x, __global ushort* y, int n) {
  int i = get_global_id(0);
  if (i >= n) return;
  uint b = as_uint(x[i]);
  if ((b & 0x7fffffffu) > 0x7f800000u) y[i] = (ushort)((b >> 16) | 0x40u);  // NaN stays NaN
  else y[i] = (ushort)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}
