// Shared definitions for every dlrt GPU kernel (this file is first in the program).
//
// The kernels are written in OpenCL C and compile unchanged as CUDA C++: the
// CUDA backend compiles them with NVRTC after a prelude (backends/cuda/
// cuda_kernels.cpp) that defines DLRT_CUDA and maps OpenCL's qualifiers and
// work-item functions to CUDA's. To stay inside that common dialect, kernels
// use only scalar types and math functions both languages have, declare
// work-group memory as fixed-size __local arrays inside the kernel (never as a
// kernel argument), spell a pointer to it LOCAL_PTR, and give a required
// work-group size with REQD_WG_SIZE.
#ifndef DLRT_CUDA
#define LOCAL_PTR __local
#define REQD_WG_SIZE(x, y, z) __attribute__((reqd_work_group_size(x, y, z)))
#endif

// geo_t describes an N-d iteration (rank <= 6, innermost dim last) and the
// element strides of up to four operands over it; a stride of 0 broadcasts.
// Its layout matches struct GeoArgs in lowering.h (ints only, no padding).
#define GEO_MAX_RANK 6
typedef struct {
  int rank;
  int n;
  int dims[GEO_MAX_RANK];
  int s[4][GEO_MAX_RANK];
} geo_t;

// Loops over a geometry's dims run over all GEO_MAX_RANK positions, unrolled,
// skipping those past g.rank, so that every index into g is a constant: a
// loop bounded by g.rank indexes the kernel argument dynamically, which makes
// a GPU compiler copy the whole struct to private memory in every work-item.
#define GEO_FOR_EACH_DIM(d) _Pragma("unroll") for (int d = GEO_MAX_RANK - 1; d >= 0; --d)

// Decomposes linear index i over g's dims and returns the offset of operand k.
inline int geo_offset(const geo_t g, int i, const int k) {
  if (g.rank == 1) return i * g.s[k][0];
  int off = 0;
  GEO_FOR_EACH_DIM(d) {
    if (d < g.rank) {
      int c = i % g.dims[d];
      i /= g.dims[d];
      off += c * g.s[k][d];
    }
  }
  return off;
}

// n / d for 0 <= n < 2^22 and d > 0, given rd = 1.0f / d: GPUs divide
// integers with a long instruction sequence, floats multiply in one. The
// float estimate is off by at most one either way, which the remainder fixes.
inline int fast_div(int n, int d, float rd) {
  int q = (int)((float)n * rd);
  int r = n - q * d;
  if (r < 0) --q;
  else if (r >= d) ++q;
  return q;
}

// Activation epilogues (Gemm, Conv, depthwise conv) and unary ops share these codes.
#define ACT_NONE 0
#define ACT_RELU 1
#define ACT_CLIP 2
#define ACT_SIGMOID 3
#define ACT_LEAKY 4
#define ACT_HARDSIGMOID 5
#define ACT_HARDSWISH 6
#define ACT_TANH 7
#define ACT_GELU_ERF 8
#define ACT_GELU_TANH 9
#define ACT_EXP 10
#define ACT_LOG 11
#define ACT_SQRT 12
#define ACT_ABS 13
#define ACT_NEG 14
#define ACT_ERF 15
#define ACT_RECIP 16
#define ACT_FLOOR 17
#define ACT_CEIL 18
#define ACT_SOFTPLUS 19
#define ACT_IDENTITY 20
#define ACT_SIN 21
#define ACT_COS 22
#define ACT_ELU 23
#define ACT_SELU 24
#define ACT_MUL 25   // x * a
#define ACT_ROUND 26
#define ACT_SIGN 27
#define ACT_SOFTSIGN 28
#define ACT_MISH 29
#define ACT_RSQRT 30

inline float apply_act(int op, float x, float a, float b) {
  switch (op) {
    case ACT_NONE: return x;
    case ACT_RELU: return x > 0.0f ? x : 0.0f;
    case ACT_CLIP: return fmin(fmax(x, a), b);
    case ACT_SIGMOID: return 1.0f / (1.0f + exp(-x));
    case ACT_LEAKY: return x >= 0.0f ? x : a * x;
    case ACT_HARDSIGMOID: return fmax(0.0f, fmin(1.0f, a * x + b));
    case ACT_HARDSWISH: return x * fmax(0.0f, fmin(1.0f, x / 6.0f + 0.5f));
    case ACT_TANH: return tanh(x);
    case ACT_GELU_ERF: return 0.5f * x * (1.0f + erf(x * 0.70710678118654752f));
    case ACT_GELU_TANH: return 0.5f * x * (1.0f + tanh(0.79788456080286536f * (x + 0.044715f * x * x * x)));
    case ACT_EXP: return exp(x);
    case ACT_LOG: return log(x);
    case ACT_SQRT: return sqrt(x);
    case ACT_ABS: return fabs(x);
    case ACT_NEG: return -x;
    case ACT_ERF: return erf(x);
    case ACT_RECIP: return 1.0f / x;
    case ACT_FLOOR: return floor(x);
    case ACT_CEIL: return ceil(x);
    case ACT_SOFTPLUS: return x > 20.0f ? x : log1p(exp(x));
    case ACT_IDENTITY: return x;
    case ACT_SIN: return sin(x);
    case ACT_COS: return cos(x);
    case ACT_ELU: return x >= 0.0f ? x : a * (exp(x) - 1.0f);
    case ACT_SELU: return x > 0.0f ? b * x : b * (a * exp(x) - a);
    case ACT_MUL: return x * a;
    case ACT_ROUND: return rint(x);
    case ACT_SIGN: return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f);
    case ACT_SOFTSIGN: return x / (1.0f + fabs(x));
    case ACT_MISH: return x * tanh(x > 20.0f ? x : log1p(exp(x)));
    case ACT_RSQRT: return rsqrt(x);
    default: return x;
  }
}
