// Kernel body (simd/simd.h), compiled once per vector width by
// attention.cpp: the attention of one head's block of query rows
// (attention_attend: Q·Kᵀ tiles with scale, mask and row maxima fused into
// their stores, the softmax, P·V tiles), the fused scale / mask / softmax
// numerators of score rows (attention_softmax_rows: the AMX and bf16 paths
// at 512 bits, the portable path's on NEON at 128) and the 1/sum scaling of
// P·V rows (attention_scale_rows). Needs attention.cpp's scratch and
// pack_kt declared before it is instantiated.

namespace dlrt::cpu::simd::DLRT_SIMD_NS {

namespace attention_body {
namespace {
#include "backends/cpu/kernels/simd/math_simd.h"

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// R rows of n scaled, masked scores, row[r] with maximum lanes vmx[r] (over
// the real keys only), into their softmax numerators; inv[r] = 1/sum. Four
// vectors a step go through the exp in lockstep: four of one row, or two
// of each of two rows (two rows' chains overlap: a row's work is short,
// minilm's 8 vectors at 512 bits). The rest one vector per row at a time
// (the lanes past n load -inf and so add 0).
template <int R>
__attribute__((always_inline)) inline void softmax_exp_rows(float* const* row, int64_t n, const Vf* vmx, float* inv) {
  static_assert(R == 1 || R == 2, "four vectors a step: four of one row or two of each of two");
  constexpr int V = 4 / R;  // vectors of each row per step
  Vf vm[R];
  for (int r = 0; r < R; ++r) {
    float mx = hmax(vmx[r]);
    if (mx == kNegInf) mx = 0;  // fully masked row: NaN-free, as unfused
    vm[r] = set1(mx);
  }
  Vf vs[4] = {zero(), zero(), zero(), zero()};
  int64_t j = 0;
  for (; j + kLanes * V <= n; j += kLanes * V) {
    Vf e[4];
#pragma GCC unroll 4
    for (int u = 0; u < 4; ++u) e[u] = sub(loadu(row[u / V] + j + kLanes * (u % V)), vm[u / V]);
    math::exp_nonpositive_lockstep<4>(e);
#pragma GCC unroll 4
    for (int u = 0; u < 4; ++u) {
      storeu(row[u / V] + j + kLanes * (u % V), e[u]);
      vs[u] = add(vs[u], e[u]);
    }
  }
  for (; j < n; j += kLanes) {
    const Mask k = first_lanes(n - j);
    Vf e[R];
    for (int r = 0; r < R; ++r) e[r] = sub(select(k, load_first(row[r] + j, n - j), set1(kNegInf)), vm[r]);
    math::exp_nonpositive_lockstep<R>(e);
    for (int r = 0; r < R; ++r) {
      store_first(row[r] + j, e[r], n - j);
      vs[r * V] = add(vs[r * V], e[r]);
    }
  }
  for (int r = 0; r < R; ++r) {
    const Vf* v = vs + r * V;
    Vf t = add(v[0], v[1]);
    if constexpr (V == 4) t = add(t, add(v[2], v[3]));
    inv[r] = 1.0f / hsum(t);
  }
}

// Query rows a block of attention_attend: R rows x 2 vectors of
// accumulators, plus the 2 vectors of keys (or V) and a broadcast, fit the
// register file (8 at 512 bits and on NEON, 6 with 16 registers).
constexpr int kTileRows = kRegisters >= 32 ? 8 : 6;

}  // namespace
}  // namespace attention_body

// Kᵀ of head (b, h) into kt [D][ldk] (zero-padded up to ldk). K with its
// dims contiguous (bshd/bhsd) goes kHalfLanes keys x kHalfLanes dims a step
// through a register transpose (row loads and stores, no gathers); other
// layouts, the tails and the padding are scalar.
void attention_pack_kt(const attention::Problem& p, int64_t b, int64_t h, float* kt, int64_t ldk) {
  if (p.k.sd != 1 || p.k.ss == 1) return attention::pack_kt(p, b, h, kt, ldk);
  constexpr int H = kHalfLanes;
  const float* k = p.k.base + b * p.k.sb + h * p.k.sh;
  const int64_t ss = p.k.ss, DH = p.D / H * H, SH = p.Skv / H * H;
  for (int64_t j = 0; j < SH; j += H) {
    const float* r = k + j * ss;
    for (int64_t c = 0; c < DH; c += H) {
      Vh x[H];
#pragma GCC unroll 8
      for (int i = 0; i < H; ++i) x[i] = loadu_h(r + i * ss + c);
      transpose_half(x);  // keys j.. (dims c..) -> dim rows c.. of kt (keys j..)
      float* d = kt + c * ldk + j;
#pragma GCC unroll 8
      for (int i = 0; i < H; ++i) storeu_h(d + i * ldk, x[i]);
    }
    for (int64_t c = DH; c < p.D; ++c)
      for (int64_t jj = 0; jj < H; ++jj) kt[c * ldk + j + jj] = r[jj * ss + c];
  }
  for (int64_t c = 0; c < p.D; ++c) {
    float* d = kt + c * ldk;
    for (int64_t j = SH; j < p.Skv; ++j) d[j] = k[j * ss + c];
    for (int64_t j = p.Skv; j < ldk; ++j) d[j] = 0.0f;
  }
}

// Rows [0, rows) of scores at s (lds apart), query rows i0.. of head (b, h):
// x = score * scale + mask, then exp(x - max) in place; inv[r] = 1 / the
// row's sum. A fully masked row (max -inf) takes max 0, NaN-free as unfused.
void attention_softmax_rows(const attention::Problem& p, int64_t b, int64_t h, int64_t i0, int rows, float* s,
                            int64_t lds, float* inv) {
  using namespace attention_body;
  const Vf sc = set1(p.scale);
  for (int r = 0; r < rows; ++r) {
    float* row = s + r * lds;
    const float* m = p.mask_row(b, h, i0 + r);
    const bool mask_keys = m && p.mk == 1;  // else one mask value for every key
    const Vf madd = set1(m && !mask_keys ? m[0] : 0.0f);
    Vf vmx = set1(kNegInf);
    for (int64_t j = 0; j < p.Skv; j += kLanes) {
      const int64_t n = p.Skv - j;
      const Vf a = mask_keys ? load_first(m + j, n) : madd;
      const Vf x = fmadd(load_first(row + j, n), sc, a);
      store_first(row + j, x, n);
      vmx = select(first_lanes(n), max(vmx, x), vmx);
    }
    softmax_exp_rows<1>(&row, p.Skv, &vmx, &inv[r]);
  }
}

// out row r (rows of head (b, h) from i0) = o row r (ldo apart) * inv[r], the first Dv floats.
void attention_scale_rows(const attention::Problem& p, int64_t b, int64_t h, int64_t i0, int rows, const float* o,
                          int64_t ldo, const float* inv) {
  for (int r = 0; r < rows; ++r) {
    float* dst = p.out + b * p.ob + h * p.oh + (i0 + r) * p.os;
    const Vf sc = set1(inv[r]);
    for (int64_t c = 0; c < p.Dv; c += kLanes)
      store_first(dst + c, mul(load_first(o + r * ldo + c, p.Dv - c), sc), p.Dv - c);
  }
}

// Rows [r0, r1) of head (b, h), kTileRows query rows a block: scores
// kTileRows rows x 2 vectors of keys a step (Kᵀ packed with ldk a multiple of
// 2 vectors), scaled and masked on the way out with each row's running
// maximum over its real keys (the softmax then needs one pass over the
// scores, not two); then P·V kTileRows rows x 2 vectors of head dims a step
// (the head dim's tail partial), each row times its 1/sum.
void attention_attend(const attention::Problem& p, int64_t b, int64_t h, int64_t r0, int64_t r1) {
  using namespace attention_body;
  constexpr int R = kTileRows, L = kLanes;
  const int64_t ldk = (p.Skv + 2 * L - 1) / (2 * L) * (2 * L);
  const int64_t D = p.D, Skv = p.Skv;  // loop bounds in registers, not reloaded after each store
  const Vf sc = set1(p.scale);
  const bool v_contig = p.v.sd == 1;
  const int64_t vsize = v_contig ? 0 : p.Skv * p.Dv;
  float* kt = attention::scratch(static_cast<size_t>(p.D * ldk + R * ldk + R * p.D + vsize));
  float* s = kt + p.D * ldk;
  float* qbuf = s + R * ldk;
  float* vbuf = qbuf + R * p.D;
  attention_pack_kt(p, b, h, kt, ldk);
  const float* q = p.q.base + b * p.q.sb + h * p.q.sh;
  const float* v = p.v.base + b * p.v.sb + h * p.v.sh;
  int64_t vss = p.v.ss;
  if (!v_contig) {
    for (int64_t j = 0; j < p.Skv; ++j)
      for (int64_t c = 0; c < p.Dv; ++c) vbuf[j * p.Dv + c] = v[j * p.v.ss + c * p.v.sd];
    v = vbuf;
    vss = p.Dv;
  }
  const bool mask_keys = p.mask && p.mk == 1;
  for (int64_t i0 = r0; i0 < r1; i0 += R) {
    const int rows = static_cast<int>(std::min<int64_t>(R, r1 - i0));
    // The block's query rows, read in place where their head dims are
    // contiguous (copied otherwise); rows past the block repeat its last.
    const float* qr[R];
    for (int r = 0; r < R; ++r) {
      const float* src = q + (i0 + std::min(r, rows - 1)) * p.q.ss;
      if (p.q.sd == 1) {
        qr[r] = src;
        continue;
      }
      for (int64_t c = 0; c < p.D; ++c) qbuf[r * p.D + c] = src[c * p.q.sd];
      qr[r] = qbuf + r * p.D;
    }
    // Row r's mask: per key (mrow[r], a row of the mask) or one value for
    // all its keys (madd[r]; 0 without a mask).
    const float* mrow[R];
    float madd[R];
    Vf vmx[R];
    for (int r = 0; r < R; ++r) {
      const float* m = p.mask_row(b, h, i0 + std::min(r, rows - 1));
      mrow[r] = m;
      madd[r] = m && !mask_keys ? m[0] : 0.0f;
      vmx[r] = set1(kNegInf);
    }
    for (int64_t j = 0; j < ldk; j += 2 * L) {
      Vf a[R][2];
      for (auto& x : a) x[0] = x[1] = zero();
      const float* kc = kt + j;
#pragma GCC unroll 4
      for (int64_t c = 0; c < D; ++c) {
        const Vf k0 = loadu(kc + c * ldk), k1 = loadu(kc + c * ldk + L);
        for (int r = 0; r < R; ++r) {
          const Vf qv = set1(qr[r][c]);
          a[r][0] = fmadd(qv, k0, a[r][0]);
          a[r][1] = fmadd(qv, k1, a[r][1]);
        }
      }
      const int64_t n0 = Skv - j, n1 = Skv - j - L;  // real keys of the two vectors
      const Mask k0 = first_lanes(n0), k1 = first_lanes(n1);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const Vf add0 = mask_keys ? load_where(k0, mrow[r] + j) : set1(madd[r]);
        const Vf add1 = mask_keys ? load_where(k1, mrow[r] + j + L) : set1(madd[r]);
        const Vf x0 = fmadd(a[r][0], sc, add0), x1 = fmadd(a[r][1], sc, add1);
        storeu(s + r * ldk + j, x0);
        storeu(s + r * ldk + j + L, x1);
        vmx[r] = select(k0, max(vmx[r], x0), vmx[r]);
        vmx[r] = select(k1, max(vmx[r], x1), vmx[r]);
      }
    }
    float inv[R];
    int paired = 0;  // rows two at a time, then an odd last one alone
    for (; paired + 2 <= rows; paired += 2) {
      float* const pair[2] = {s + paired * ldk, s + (paired + 1) * ldk};
      softmax_exp_rows<2>(pair, Skv, vmx + paired, inv + paired);
    }
    if (paired < rows) {
      float* const last = s + paired * ldk;
      softmax_exp_rows<1>(&last, Skv, vmx + paired, inv + paired);
    }
    for (int r = rows; r < R; ++r) std::fill(s + r * ldk, s + r * ldk + p.Skv, 0.0f);
    float* o[R];
    for (int r = 0; r < R; ++r) o[r] = p.out + b * p.ob + h * p.oh + (i0 + std::min(r, rows - 1)) * p.os;
    for (int64_t c0 = 0; c0 < p.Dv; c0 += 2 * L) {
      const Mask m0 = first_lanes(p.Dv - c0), m1 = first_lanes(p.Dv - c0 - L);  // loop-invariant, in mask registers
      Vf a[R][2];
      for (auto& x : a) x[0] = x[1] = zero();
#pragma GCC unroll 4
      for (int64_t j = 0; j < Skv; ++j) {
        const float* vr = v + j * vss + c0;
        const Vf v0 = load_where(m0, vr), v1 = load_where(m1, vr + L);
        for (int r = 0; r < R; ++r) {
          const Vf pr = set1(s[r * ldk + j]);
          a[r][0] = fmadd(pr, v0, a[r][0]);
          a[r][1] = fmadd(pr, v1, a[r][1]);
        }
      }
      // Constant indices only (a runtime bound on r would put `a` in memory).
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        if (r >= rows) continue;
        const Vf f = set1(inv[r]);
        store_where(o[r] + c0, m0, mul(a[r][0], f));
        store_where(o[r] + c0 + L, m1, mul(a[r][1], f));
      }
    }
    attention::clear_undefined_rows(p, b, h, i0, rows, inv);
  }
}

}  // namespace dlrt::cpu::simd::DLRT_SIMD_NS
