// Convolution helpers (im2col for the GEMM path, direct depthwise), pooling
// and Resize, all on NCHW float32.

// Layout matches struct ConvArgs in lowering.h.
typedef struct {
  int C, H, W, OH, OW, KH, KW, sh, sw, ph, pw, dh, dw;
  int x_off, n;
  int kp, x_bstride, fast;
  float r_p, r_ow, r_kw, r_kh;  // 1 / (OH*OW), 1 / OW, 1 / KW, 1 / KH
  int col_img, col_row;
} conv_t;

// col[img * col_img + ((c*KH + kh)*KW + kw) * col_row + oh*OW + ow]: images
// one after another (col_img = kp, col_row = OH*OW) or side by side in each
// row (col_img = OH*OW, col_row = images * OH*OW). Dimension 0 runs over one
// image's p.kp elements (rounded up to the work-group size), dimension 1 over
// the images, p.x_bstride elements of x apart. With p.fast (kp < 2^22) the
// index arithmetic divides through float reciprocals.
__kernel void im2col_f32(__global const float* x, __global float* col, conv_t p) {
  int j = get_global_id(0), img = get_global_id(1);
  if (j >= p.kp) return;
  int P = p.OH * p.OW;
  int row, q, kw, t, kh, c, oh, ow;
  if (p.fast) {
    row = fast_div(j, P, p.r_p);
    q = j - row * P;
    t = fast_div(row, p.KW, p.r_kw);
    kw = row - t * p.KW;
    c = fast_div(t, p.KH, p.r_kh);
    kh = t - c * p.KH;
    oh = fast_div(q, p.OW, p.r_ow);
    ow = q - oh * p.OW;
  } else {
    row = j / P;
    q = j % P;
    kw = row % p.KW;
    t = row / p.KW;
    kh = t % p.KH;
    c = t / p.KH;
    oh = q / p.OW;
    ow = q % p.OW;
  }
  int ih = oh * p.sh - p.ph + kh * p.dh, iw = ow * p.sw - p.pw + kw * p.dw;
  col[(long)img * p.col_img + (long)row * p.col_row + q] = (ih >= 0 && ih < p.H && iw >= 0 && iw < p.W)
                                  ? x[p.x_off + img * p.x_bstride + (c * p.H + ih) * p.W + iw]
                                  : 0.0f;
}

// Layout matches struct DwArgs in lowering.h.
typedef struct {
  int C, H, W, M, OH, OW, KH, KW, sh, sw, ph, pw, dh, dw, mult, has_bias, act, n;
  float act_a, act_b;
} dw_t;

// Depthwise (group == C): one work-item per output element.
__kernel void dwconv_f32(__global const float* x, __global const float* w, __global const float* bias,
                         __global float* y, dw_t p) {
  int i = get_global_id(0);
  if (i >= p.n) return;
  int ow = i % p.OW;
  int t = i / p.OW;
  int oh = t % p.OH;
  t /= p.OH;
  int m = t % p.M, nb = t / p.M;
  int c = m / p.mult;
  __global const float* xp = x + ((long)nb * p.C + c) * p.H * p.W;
  __global const float* wp = w + (long)m * p.KH * p.KW;
  float acc = p.has_bias ? bias[m] : 0.0f;
  for (int kh = 0; kh < p.KH; ++kh) {
    int ih = oh * p.sh - p.ph + kh * p.dh;
    if (ih < 0 || ih >= p.H) continue;
    for (int kw = 0; kw < p.KW; ++kw) {
      int iw = ow * p.sw - p.pw + kw * p.dw;
      if (iw < 0 || iw >= p.W) continue;
      acc = fma(xp[ih * p.W + iw], wp[kh * p.KW + kw], acc);
    }
  }
  y[i] = apply_act(p.act, acc, p.act_a, p.act_b);
}

// Layout matches struct ConvTArgs in lowering.h.
typedef struct {
  int C, H, W, M, G, OH, OW, KH, KW, sh, sw, ph, pw, dh, dw, has_bias, act, n;
  float act_a, act_b;
} convt_t;

// ConvTranspose as a gather: one work-item per output element sums the
// input positions whose scatter would reach it (no scatter-add, no atomics).
// x [N, G*C, H, W], w [G*C, M, KH, KW], y [N, G*M, OH, OW].
__kernel void convtranspose_f32(__global const float* x, __global const float* w, __global const float* bias,
                                __global float* y, convt_t p) {
  int i = get_global_id(0);
  if (i >= p.n) return;
  int ow = i % p.OW;
  int t = i / p.OW;
  int oh = t % p.OH;
  t /= p.OH;
  int GM = p.G * p.M;
  int om = t % GM, nb = t / GM;
  int g = om / p.M, m = om % p.M;
  float acc = p.has_bias ? bias[om] : 0.0f;
  for (int kh = 0; kh < p.KH; ++kh) {
    int th = oh + p.ph - kh * p.dh;
    if (th < 0 || th % p.sh != 0) continue;
    int ih = th / p.sh;
    if (ih >= p.H) continue;
    for (int kw = 0; kw < p.KW; ++kw) {
      int tw = ow + p.pw - kw * p.dw;
      if (tw < 0 || tw % p.sw != 0) continue;
      int iw = tw / p.sw;
      if (iw >= p.W) continue;
      __global const float* xp = x + (((long)nb * p.G + g) * p.C * p.H + ih) * p.W + iw;
      __global const float* wp = w + (((long)g * p.C * p.M + m) * p.KH + kh) * p.KW + kw;
      for (int c = 0; c < p.C; ++c) acc = fma(xp[(long)c * p.H * p.W], wp[(long)c * p.M * p.KH * p.KW], acc);
    }
  }
  y[i] = apply_act(p.act, acc, p.act_a, p.act_b);
}

// Layout matches struct PoolArgs in lowering.h. C here is batch * channels.
typedef struct {
  int C, H, W, OH, OW, KH, KW, sh, sw, ph, pw, ph_end, pw_end, dh, dw, count_include_pad, n;
} pool_t;

__kernel void maxpool_f32(__global const float* x, __global float* y, pool_t p) {
  int i = get_global_id(0);
  if (i >= p.n) return;
  int ow = i % p.OW;
  int t = i / p.OW;
  int oh = t % p.OH, c = t / p.OH;
  __global const float* xp = x + (long)c * p.H * p.W;
  float m = -INFINITY;
  for (int kh = 0; kh < p.KH; ++kh) {
    int ih = oh * p.sh - p.ph + kh * p.dh;
    if (ih < 0 || ih >= p.H) continue;
    for (int kw = 0; kw < p.KW; ++kw) {
      int iw = ow * p.sw - p.pw + kw * p.dw;
      if (iw < 0 || iw >= p.W) continue;
      float v = xp[ih * p.W + iw];
      m = (isnan(v) || v > m) ? v : m;
    }
  }
  y[i] = m;
}

__kernel void avgpool_f32(__global const float* x, __global float* y, pool_t p) {
  int i = get_global_id(0);
  if (i >= p.n) return;
  int ow = i % p.OW;
  int t = i / p.OW;
  int oh = t % p.OH, c = t / p.OH;
  __global const float* xp = x + (long)c * p.H * p.W;
  int hs = oh * p.sh - p.ph, ws = ow * p.sw - p.pw;
  int he = min(hs + p.KH, p.H + p.ph_end), we = min(ws + p.KW, p.W + p.pw_end);
  int padded = (he - hs) * (we - ws);
  int h0 = max(hs, 0), w0 = max(ws, 0), h1 = min(he, p.H), w1 = min(we, p.W);
  float s = 0.0f;
  for (int ih = h0; ih < h1; ++ih)
    for (int iw = w0; iw < w1; ++iw) s += xp[ih * p.W + iw];
  int cnt = p.count_include_pad ? padded : (h1 - h0) * (w1 - w0);
  y[i] = cnt > 0 ? s / (float)cnt : 0.0f;
}

#define COORD_HALF_PIXEL 0
#define COORD_ASYMMETRIC 1
#define COORD_ALIGN_CORNERS 2
#define COORD_PYTORCH_HALF_PIXEL 3
#define COORD_TF_HALF_PIXEL_FOR_NN 4
#define NEAREST_ROUND_PREFER_FLOOR 0
#define NEAREST_ROUND_PREFER_CEIL 1
#define NEAREST_FLOOR 2
#define NEAREST_CEIL 3

// Layout matches struct ResizeArgs in lowering.h. C here is batch * channels.
typedef struct {
  int C, H, W, OH, OW, linear, coord, nearest, n;
  float scale_h, scale_w;
} resize_t;

inline float resize_coord(int coord, int o, float scale, int in_len, int out_len) {
  switch (coord) {
    case COORD_ASYMMETRIC: return o / scale;
    case COORD_ALIGN_CORNERS: return out_len > 1 ? o * (float)(in_len - 1) / (float)(out_len - 1) : 0.0f;
    case COORD_PYTORCH_HALF_PIXEL: return out_len > 1 ? (o + 0.5f) / scale - 0.5f : 0.0f;
    case COORD_TF_HALF_PIXEL_FOR_NN: return (o + 0.5f) / scale;
    default: return (o + 0.5f) / scale - 0.5f;
  }
}

inline int resize_nearest(int mode, float v, int len) {
  int r;
  switch (mode) {
    case NEAREST_FLOOR: r = (int)floor(v); break;
    case NEAREST_CEIL: r = (int)ceil(v); break;
    case NEAREST_ROUND_PREFER_CEIL: r = (int)floor(v + 0.5f); break;
    default: r = (v - floor(v) == 0.5f) ? (int)floor(v) : (int)floor(v + 0.5f); break;
  }
  return clamp(r, 0, len - 1);
}

__kernel void resize_f32(__global const float* x, __global float* y, resize_t p) {
  int i = get_global_id(0);
  if (i >= p.n) return;
  int ow = i % p.OW;
  int t = i / p.OW;
  int oh = t % p.OH, c = t / p.OH;
  __global const float* xp = x + (long)c * p.H * p.W;
  float fh = resize_coord(p.coord, oh, p.scale_h, p.H, p.OH);
  float fw = resize_coord(p.coord, ow, p.scale_w, p.W, p.OW);
  if (!p.linear) {
    y[i] = xp[resize_nearest(p.nearest, fh, p.H) * p.W + resize_nearest(p.nearest, fw, p.W)];
    return;
  }
  fh = clamp(fh, 0.0f, (float)(p.H - 1));
  fw = clamp(fw, 0.0f, (float)(p.W - 1));
  int h0 = (int)floor(fh), w0 = (int)floor(fw);
  int h1 = min(h0 + 1, p.H - 1), w1 = min(w0 + 1, p.W - 1);
  float ah = fh - h0, aw = fw - w0;
  float top = xp[h0 * p.W + w0] * (1.0f - aw) + xp[h0 * p.W + w1] * aw;
  float bot = xp[h1 * p.W + w0] * (1.0f - aw) + xp[h1 * p.W + w1] * aw;
  y[i] = top * (1.0f - ah) + bot * ah;
}
