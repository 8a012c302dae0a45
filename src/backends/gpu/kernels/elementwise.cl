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
