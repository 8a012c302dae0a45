// Reductions, Softmax/LogSoftmax and LayerNormalization.

#define RED_SUM 0
#define RED_MEAN 1
#define RED_MAX 2
#define RED_MIN 3
#define RED_PROD 4
#define RED_L1 5
#define RED_L2 6
#define RED_SUMSQ 7
#define RED_LOGSUM 8
#define RED_LOGSUMEXP 9

// One work-item per output element. keep: the kept dims with the input's
// strides in s[0]; red: the reduced dims with the input's strides in s[0].
__kernel void reduce_f32(__global const float* x, __global float* y, geo_t keep, geo_t red, int op) {
  int i = get_global_id(0);
  if (i >= keep.n) return;
  int base = geo_offset(keep, i, 0);
  float acc;
  if (op == RED_MAX) acc = -INFINITY;
  else if (op == RED_MIN) acc = INFINITY;
  else if (op == RED_PROD) acc = 1.0f;
  else acc = 0.0f;
  float mx = -INFINITY;
  if (op == RED_LOGSUMEXP) {
    for (int r = 0; r < red.n; ++r) mx = fmax(mx, x[base + geo_offset(red, r, 0)]);
    if (isinf(mx)) mx = 0.0f;
  }
  for (int r = 0; r < red.n; ++r) {
    float v = x[base + geo_offset(red, r, 0)];
    switch (op) {
      case RED_SUM: case RED_MEAN: case RED_LOGSUM: acc += v; break;
      case RED_MAX: acc = (isnan(v) || isnan(acc)) ? NAN : fmax(acc, v); break;
      case RED_MIN: acc = (isnan(v) || isnan(acc)) ? NAN : fmin(acc, v); break;
      case RED_PROD: acc *= v; break;
      case RED_L1: acc += fabs(v); break;
      case RED_L2: case RED_SUMSQ: acc += v * v; break;
      case RED_LOGSUMEXP: acc += exp(v - mx); break;
    }
  }
  if (op == RED_MEAN) acc = red.n > 0 ? acc / (float)red.n : NAN;
  else if (op == RED_L2) acc = sqrt(acc);
  else if (op == RED_LOGSUM) acc = log(acc);
  else if (op == RED_LOGSUMEXP) acc = log(acc) + mx;
  y[i] = acc;
}

// Work-group reduction helpers (work-group size a power of two, at most
// WG_ROW_MAX, the size of the kernels' scratch arrays).
#define WG_ROW_MAX 256
inline float wg_max(LOCAL_PTR float* tmp, float v) {
  int l = get_local_id(0), n = get_local_size(0);
  tmp[l] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = n / 2; s > 0; s >>= 1) {
    if (l < s) tmp[l] = fmax(tmp[l], tmp[l + s]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  float r = tmp[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return r;
}
inline float wg_sum(LOCAL_PTR float* tmp, float v) {
  int l = get_local_id(0), n = get_local_size(0);
  tmp[l] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = n / 2; s > 0; s >>= 1) {
    if (l < s) tmp[l] += tmp[l + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  float r = tmp[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return r;
}

// One work-group per row. Row r = (o, in): elements x[(o*len + k)*inner + in], k < len.
__kernel void softmax_f32(__global const float* x, __global float* y, int len, int inner, int is_log) {
  __local float tmp[WG_ROW_MAX];
  int row = get_group_id(0);
  int o = row / inner, in = row % inner;
  long base = (long)o * len * inner + in;
  int l = get_local_id(0), n = get_local_size(0);
  float m = -INFINITY;
  for (int k = l; k < len; k += n) m = fmax(m, x[base + (long)k * inner]);
  m = wg_max(tmp, m);
  float s = 0.0f;
  for (int k = l; k < len; k += n) s += exp(x[base + (long)k * inner] - m);
  s = wg_sum(tmp, s);
  if (is_log) {
    float ls = log(s);
    for (int k = l; k < len; k += n) y[base + (long)k * inner] = x[base + (long)k * inner] - m - ls;
  } else {
    float inv = 1.0f / s;
    for (int k = l; k < len; k += n) y[base + (long)k * inner] = exp(x[base + (long)k * inner] - m) * inv;
  }
}

// One work-group per row of `len` contiguous elements; scale/bias have `len` elements.
__kernel void layernorm_f32(__global const float* x, __global const float* scale, __global const float* bias,
                            __global float* y, int len, float eps, int has_bias) {
  __local float tmp[WG_ROW_MAX];
  long base = (long)get_group_id(0) * len;
  int l = get_local_id(0), n = get_local_size(0);
  float s = 0.0f;
  for (int k = l; k < len; k += n) s += x[base + k];
  float mean = wg_sum(tmp, s) / (float)len;
  float v = 0.0f;
  for (int k = l; k < len; k += n) {
    float d = x[base + k] - mean;
    v += d * d;
  }
  float inv = rsqrt(wg_sum(tmp, v) / (float)len + eps);
  for (int k = l; k < len; k += n) {
    float r = (x[base + k] - mean) * inv * scale[k];
    y[base + k] = has_bias ? r + bias[k] : r;
  }
}
