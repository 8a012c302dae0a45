// Tiled GEMM: C = act(alpha * A x B + beta * bias), with arbitrary element
// strides for A, B, C and bias (so transposes, per-row/per-column/full bias
// and two levels of batch broadcasting need no copies). Each work-group
// computes a GEMM_TS x GEMM_TS tile of C; each work-item GEMM_WPT x GEMM_WPT
// outputs spread GEMM_RTS apart. GEMM_TS and GEMM_WPT come from the build
// options, chosen from the device's work-group and local-memory limits.
#ifndef GEMM_TS
#define GEMM_TS 64
#endif
#ifndef GEMM_WPT
#define GEMM_WPT 4
#endif
#define GEMM_TK 16
#define GEMM_RTS (GEMM_TS / GEMM_WPT)

// Layout matches struct GemmArgs in lowering.h.
typedef struct {
  int M, N, K;
  int a_off, a_sm, a_sk, a_sb1, a_sb2;
  int b_off, b_sk, b_sn, b_sb1, b_sb2;
  int c_off, c_sm, c_sn, c_sb1, c_sb2;
  int bias_off, bias_sm, bias_sn, has_bias;
  int nb2, act;
  float alpha, beta, act_a, act_b;
} gemm_t;

__kernel REQD_WG_SIZE(GEMM_RTS, GEMM_RTS, 1)
void gemm_f32(__global const float* A, __global const float* B, __global float* C, __global const float* bias,
              gemm_t p) {
  __local float As[GEMM_TK][GEMM_TS];
  __local float Bs[GEMM_TK][GEMM_TS];
  const int tx = get_local_id(0), ty = get_local_id(1);
  const int tid = ty * GEMM_RTS + tx;
  const int n0 = get_group_id(0) * GEMM_TS, m0 = get_group_id(1) * GEMM_TS;
  const int bz = get_group_id(2), b1 = bz / p.nb2, b2 = bz % p.nb2;
  __global const float* a = A + p.a_off + b1 * p.a_sb1 + b2 * p.a_sb2;
  __global const float* b = B + p.b_off + b1 * p.b_sb1 + b2 * p.b_sb2;
  float acc[GEMM_WPT][GEMM_WPT];
  for (int i = 0; i < GEMM_WPT; ++i)
    for (int j = 0; j < GEMM_WPT; ++j) acc[i][j] = 0.0f;
  for (int k0 = 0; k0 < p.K; k0 += GEMM_TK) {
    for (int l = tid; l < GEMM_TK * GEMM_TS; l += GEMM_RTS * GEMM_RTS) {
      int mm = l / GEMM_TK, kk = l % GEMM_TK;
      int gm = m0 + mm, gk = k0 + kk;
      As[kk][mm] = (gm < p.M && gk < p.K) ? a[gm * p.a_sm + gk * p.a_sk] : 0.0f;
      int kb = l / GEMM_TS, nn = l % GEMM_TS;
      int gn = n0 + nn, gkb = k0 + kb;
      Bs[kb][nn] = (gn < p.N && gkb < p.K) ? b[gkb * p.b_sk + gn * p.b_sn] : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < GEMM_TK; ++k) {
      float bv[GEMM_WPT];
      for (int j = 0; j < GEMM_WPT; ++j) bv[j] = Bs[k][tx + j * GEMM_RTS];
      for (int i = 0; i < GEMM_WPT; ++i) {
        float av = As[k][ty + i * GEMM_RTS];
        for (int j = 0; j < GEMM_WPT; ++j) acc[i][j] = fma(av, bv[j], acc[i][j]);
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  __global float* c = C + p.c_off + b1 * p.c_sb1 + b2 * p.c_sb2;
  for (int i = 0; i < GEMM_WPT; ++i) {
    int m = m0 + ty + i * GEMM_RTS;
    if (m >= p.M) continue;
    for (int j = 0; j < GEMM_WPT; ++j) {
      int n = n0 + tx + j * GEMM_RTS;
      if (n >= p.N) continue;
      float v = p.alpha * acc[i][j];
      if (p.has_bias) v += p.beta * bias[p.bias_off + m * p.bias_sm + n * p.bias_sn];
      c[m * p.c_sm + n * p.c_sn] = apply_act(p.act, v, p.act_a, p.act_b);
    }
  }
}

// The epilogue of gemm_f32 alone, for a device that computed alpha * A x B
// with a vendor GEMM into C: C = act(C + beta * bias), one work-item per
// element of the `batch` products.
__kernel void gemm_epilogue_f32(__global float* C, __global const float* bias, gemm_t p, int batch) {
  int i = get_global_id(0);
  int mn = p.M * p.N;
  if (i >= mn * batch) return;
  int bz = i / mn, r = i % mn;
  int m = r / p.N, n = r % p.N;
  int b1 = bz / p.nb2, b2 = bz % p.nb2;
  __global float* c = C + p.c_off + b1 * p.c_sb1 + b2 * p.c_sb2 + m * p.c_sm + n * p.c_sn;
  float v = *c;
  if (p.has_bias) v += p.beta * bias[p.bias_off + m * p.bias_sm + n * p.bias_sn];
  *c = apply_act(p.act, v, p.act_a, p.act_b);
}
