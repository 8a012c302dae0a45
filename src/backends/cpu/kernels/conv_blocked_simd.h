// Kernel body (simd/simd.h), compiled once per vector width by
// conv_blocked_vec.cpp: the convolutions, max pool and reorders of the
// 16-channel blocked layout (conv_blocked.h), a block being kV vectors
// (1 at 512 bits, 2 at 256, 4 at 128). Group-1 convs keep NB output blocks
// x T positions of one output row in accumulators, depthwise convs T
// positions of one block; the tile sizes follow the register count
// (conv_blocked_impl.h). Positions whose window lies inside the input's
// columns take the T-wide tiles with no bounds checks on the columns
// (kernel rows outside the input are skipped). At a row's ends, group-1
// convs run one position at a time with independent accumulator chains
// (where they read the input in place rather than a copy with the column
// padding), depthwise convs T-wide tiles on a copy of the rows they read,
// zeros in the padding.

namespace dlrt::cpu::simd::DLRT_SIMD_NS {

namespace nchwc {
namespace {

using blocked_detail::ConvJob;
using blocked_detail::interior;

constexpr int kB = 16;
constexpr int kBB = kB * kB;
constexpr int kV = kB / kLanes;  // vectors per block
constexpr int kConvT = blocked_detail::conv_tile_positions(kWidth);
constexpr int kConvT1 = blocked_detail::conv_tile_positions1(kWidth);
constexpr int kDwT = blocked_detail::depthwise_tile_positions(kWidth);
// Accumulator chains per block vector of conv_point: its registers stay within the file.
constexpr int kChains = kV == 1 ? 4 : kV == 2 ? 2 : 1;

// Stores T results of one lane group of one output block (bias already in
// acc; y and z at the group's first lane): adds the residual z and clamps.
template <int T>
__attribute__((always_inline)) inline void store_lanes(const ClampStage& cs, const Vf* acc, float* y, const float* z) {
  const Vf lo = set1(cs.lo), hi = set1(cs.hi);
#pragma GCC unroll 32
  for (int t = 0; t < T; ++t) {
    Vf v = acc[t];
    if (z) v = add(v, loadu(z + t * kB));
    if (cs.clamp) v = min(max(v, lo), hi);
    storeu(y + t * kB, v);
  }
}

// Where an activation other than a clamp runs: below 512 bits once per
// stored output row and block (activate_rows), as a tile there is 3 to 6
// positions (6 to 12 vectors) and the call's dispatch cost as much as a few
// vectors (efficientnet_b0 at 256 bits: 3-4% less CPU time, 10% fewer
// instructions per run); at 512 bits per tile of up to 28 positions right
// after its stores (per row there cost 2% more CPU time on efficientnet_b0).
constexpr bool kRowActivation = kWidth != SimdWidth::k512;

// Stores T results of one output block, its kV lane groups acc[v][0, T):
// store_lanes, then (kRowActivation false) any other activation over the
// stored row.
template <int T, int S>
__attribute__((always_inline)) inline void store_row(const ConvJob& j, const Vf (*acc)[S], int first, float* y,
                                                     const float* z) {
  const ClampStage cs = clamp_stage(j.act);
#pragma GCC unroll 4
  for (int v = 0; v < kV; ++v)
    store_lanes<T>(cs, acc[v] + first, y + v * kLanes, z ? z + v * kLanes : nullptr);
  if constexpr (!kRowActivation)
    if (!cs.clamp && !j.act.none()) apply_activation(j.act, y, T * kB);
}

// Whether the activation runs over the stored rows (not in store_row).
inline bool row_activation(const Activation& a) { return kRowActivation && !a.none() && !clamp_stage(a).clamp; }

// That activation over `rows` output rows from oh of NB blocks from `block`
// (blocks of cbs, planes of OH x OW), once the tiles of those rows are
// stored (the rows just written, still in cache).
inline void activate_rows(const ConvJob& j, int64_t cbs, int64_t n, int64_t block, int64_t nb, int64_t oh,
                          int64_t rows) {
  const BlockedConvGeometry& g = j.g;
  for (int64_t b = block; b < block + nb; ++b)
    apply_activation(j.act, j.y + ((n * cbs + b) * g.OH + oh) * g.OW * kB, rows * g.OW * kB);
}

// How a tile of P positions x Q accumulator vectors feeds one input channel
// to its FMAs: the Q weight vectors loaded once and each position's input
// broadcast in turn (Q + 1 registers beside the P x Q accumulators), or,
// where those do not fit the register file but P + 1 do, the P broadcasts
// first and each weight vector loaded in turn. At 256 bits a two-block tile
// (3 positions x 4 vectors) needs 17 the first way; the compiler then folds
// the fourth weight vector into three of the FMAs as a memory operand,
// 9 loads per 12 FMAs instead of 7.
template <int P, int Q>
constexpr bool kWeightsFirst = Q + 1 + P * Q <= kRegisters || P + 1 + P * Q > kRegisters;

// NB output blocks from `ocb` on, output rows [oh, oh + R), positions
// [ow0, ow0 + T) (R > 1: every tap of those rows inside the input; every
// column tap of the T positions inside the input row). XS: floats between
// the inputs of neighbouring positions when the input is blocked (16 * stride,
// a constant so that every position is a displacement off one pointer), or 0
// (any layout: j.sx and j.sc).
template <int NB, int R, int T, int XS>
void conv_tile(const ConvJob& j, int64_t n, int64_t ocb, int64_t oh, int64_t ow0) {
  constexpr int P = R * T, Q = NB * kV;  // Q: accumulator vectors per position
  const BlockedConvGeometry& g = j.g;
  const int64_t icbs = (g.C + kB - 1) / kB, kk = g.kh * g.kw, ocbs = (g.M + kB - 1) / kB;
  const int64_t w_ocb = icbs * kk * kBB;  // floats between output blocks' weights
  const int64_t xstep = XS ? XS : g.sw * j.sx, sc = XS ? 1 : j.sc, rs = g.sh * j.xs_h;
  Vf acc[Q][P];  // [block * kV + lane group][position]
  auto y_at = [&](int b, int r) { return (((n * ocbs + ocb + b) * g.OH + oh + r) * g.OW + ow0) * kB; };
#pragma GCC unroll 4
  for (int q = 0; q < Q; ++q) {
    const int b = q / kV, lane0 = q % kV * kLanes;
    const Vf bv = loadu(j.bias + (ocb + b) * kB + lane0);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 32
      for (int t = 0; t < T; ++t) acc[q][r * T + t] = j.first ? bv : loadu(j.y + y_at(b, r) + t * kB + lane0);
  }
  const int64_t ib0 = j.icb0, ib1 = j.icb1 < 0 ? icbs : j.icb1;
  for (int64_t kh = 0; kh < g.kh; ++kh) {
    const int64_t ih = oh * g.sh - g.pad_top + kh * g.dh;
    if (R == 1 && (ih < 0 || ih >= g.H)) continue;
    for (int64_t icb = ib0; icb < ib1; ++icb) {
      const int64_t icn = std::min<int64_t>(kB, g.C - icb * kB);
      const float* xr = j.x + n * j.xs_n + icb * j.xs_cb + ih * j.xs_h;
      const float* wk = j.w->w.data() + (ocb * icbs + icb) * kk * kBB + kh * g.kw * kBB;
      for (int64_t kw = 0; kw < g.kw; ++kw) {
        const int64_t iw0 = ow0 * g.sw - g.pad_left + kw * g.dw;
        const float* xp = xr + iw0 * j.sx;
        const float* wp = wk + kw * kBB;
        for (int64_t ic = 0; ic < icn; ++ic) {
          const float* xi = xp + ic * sc;
          if constexpr (kWeightsFirst<P, Q>) {
            Vf wv[Q];
#pragma GCC unroll 4
            for (int q = 0; q < Q; ++q) wv[q] = loadu(wp + q / kV * w_ocb + ic * kB + q % kV * kLanes);
#pragma GCC unroll 4
            for (int r = 0; r < R; ++r) {
#pragma GCC unroll 32
              for (int t = 0; t < T; ++t) {
                const Vf xv = set1(xi[r * rs + t * xstep]);
#pragma GCC unroll 4
                for (int q = 0; q < Q; ++q) acc[q][r * T + t] = fmadd(xv, wv[q], acc[q][r * T + t]);
              }
            }
          } else {
            Vf xv[P];
#pragma GCC unroll 4
            for (int r = 0; r < R; ++r)
#pragma GCC unroll 32
              for (int t = 0; t < T; ++t) xv[r * T + t] = set1(xi[r * rs + t * xstep]);
#pragma GCC unroll 4
            for (int q = 0; q < Q; ++q) {
              const Vf wv = loadu(wp + q / kV * w_ocb + ic * kB + q % kV * kLanes);
#pragma GCC unroll 32
              for (int p = 0; p < P; ++p) acc[q][p] = fmadd(xv[p], wv, acc[q][p]);
            }
          }
        }
      }
    }
  }
#pragma GCC unroll 4
  for (int b = 0; b < NB; ++b)
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const int64_t off = y_at(b, r);
      if (j.last) {
        store_row<T>(j, acc + b * kV, r * T, j.y + off, j.z ? j.z + off : nullptr);
      } else {
#pragma GCC unroll 4
        for (int v = 0; v < kV; ++v)
#pragma GCC unroll 32
          for (int t = 0; t < T; ++t) storeu(j.y + off + t * kB + v * kLanes, acc[b * kV + v][r * T + t]);
      }
    }
}

// One output position of NB output blocks whose window reaches past the
// input (a row's ends read in place): taps outside the input are skipped, and
// the input channels alternate over kChains accumulators per block vector,
// so that the sum is not one chain of dependent FMAs as long as the window.
template <int NB, int XS>
void conv_point(const ConvJob& j, int64_t n, int64_t ocb, int64_t oh, int64_t ow) {
  constexpr int Q = NB * kV;
  const BlockedConvGeometry& g = j.g;
  const int64_t icbs = (g.C + kB - 1) / kB, kk = g.kh * g.kw, ocbs = (g.M + kB - 1) / kB;
  const int64_t w_ocb = icbs * kk * kBB, sc = XS ? 1 : j.sc;
  Vf acc[Q][kChains];
  auto y_at = [&](int b) { return (((n * ocbs + ocb + b) * g.OH + oh) * g.OW + ow) * kB; };
#pragma GCC unroll 4
  for (int q = 0; q < Q; ++q) {
    const int b = q / kV, lane0 = q % kV * kLanes;
    acc[q][0] = j.first ? loadu(j.bias + (ocb + b) * kB + lane0) : loadu(j.y + y_at(b) + lane0);
#pragma GCC unroll 4
    for (int a = 1; a < kChains; ++a) acc[q][a] = zero();
  }
  const int64_t ib0 = j.icb0, ib1 = j.icb1 < 0 ? icbs : j.icb1;
  for (int64_t kh = 0; kh < g.kh; ++kh) {
    const int64_t ih = oh * g.sh - g.pad_top + kh * g.dh;
    if (ih < 0 || ih >= g.H) continue;
    for (int64_t icb = ib0; icb < ib1; ++icb) {
      const int64_t icn = std::min<int64_t>(kB, g.C - icb * kB);
      const float* xr = j.x + n * j.xs_n + icb * j.xs_cb + ih * j.xs_h;
      const float* wk = j.w->w.data() + (ocb * icbs + icb) * kk * kBB + kh * g.kw * kBB;
      for (int64_t kw = 0; kw < g.kw; ++kw) {
        const int64_t iw = ow * g.sw - g.pad_left + kw * g.dw;
        if (iw < 0 || iw >= g.W) continue;
        const float* xp = xr + iw * j.sx;
        const float* wp = wk + kw * kBB;
        int64_t ic = 0;
        for (; ic + kChains <= icn; ic += kChains) {
#pragma GCC unroll 4
          for (int a = 0; a < kChains; ++a) {
            const Vf xv = set1(xp[(ic + a) * sc]);
#pragma GCC unroll 4
            for (int q = 0; q < Q; ++q)
              acc[q][a] = fmadd(xv, loadu(wp + q / kV * w_ocb + (ic + a) * kB + q % kV * kLanes), acc[q][a]);
          }
        }
        for (; ic < icn; ++ic) {
          const Vf xv = set1(xp[ic * sc]);
#pragma GCC unroll 4
          for (int q = 0; q < Q; ++q)
            acc[q][0] = fmadd(xv, loadu(wp + q / kV * w_ocb + ic * kB + q % kV * kLanes), acc[q][0]);
        }
      }
    }
  }
#pragma GCC unroll 4
  for (int b = 0; b < NB; ++b) {
    Vf v[kV][1];
#pragma GCC unroll 4
    for (int l = 0; l < kV; ++l) {
      const Vf* a = acc[b * kV + l];
      if constexpr (kChains == 4) v[l][0] = add(add(a[0], a[1]), add(a[2], a[3]));
      else if constexpr (kChains == 2) v[l][0] = add(a[0], a[1]);
      else v[l][0] = a[0];
    }
    const int64_t off = y_at(b);
    if (j.last) {
      store_row<1>(j, v, 0, j.y + off, j.z ? j.z + off : nullptr);
    } else {
#pragma GCC unroll 4
      for (int l = 0; l < kV; ++l) storeu(j.y + off + l * kLanes, v[l][0]);
    }
  }
}

// Remainder tiles of 1..T-1 positions: a switch over the instantiations.
template <int NB, int R, int T, int XS>
void conv_rest(const ConvJob& j, int64_t n, int64_t ocb, int64_t oh, int64_t ow0, int64_t count) {
  if constexpr (T > 1) {
    if (count == T - 1) return conv_tile<NB, R, T - 1, XS>(j, n, ocb, oh, ow0);
    return conv_rest<NB, R, T - 1, XS>(j, n, ocb, oh, ow0, count);
  }
}

// Tiles of about equal width (at most T) over the interior of a row.
template <int NB, int T, int XS>
void conv_row(const ConvJob& j, int64_t n, int64_t ocb, int64_t oh) {
  int64_t lo, hi;
  interior(j.g, &lo, &hi);
  for (int64_t ow = 0; ow < lo; ++ow) conv_point<NB, XS>(j, n, ocb, oh, ow);
  const int64_t len = hi - lo, tiles = (len + T - 1) / T, width = tiles ? (len + tiles - 1) / tiles : 0;
  for (int64_t ow = lo; ow < hi; ow += width) {
    const int64_t cnt = std::min(width, hi - ow);
    if (cnt == T) conv_tile<NB, 1, T, XS>(j, n, ocb, oh, ow);
    else conv_rest<NB, 1, T, XS>(j, n, ocb, oh, ow, cnt);
  }
  for (int64_t ow = std::max(hi, lo); ow < j.g.OW; ++ow) conv_point<NB, XS>(j, n, ocb, oh, ow);
}

// Depthwise: T positions of one block. EDGE: some windows of the tile reach
// past the input row; each input row the tile reads is then first copied
// with zeros in the padding (as the group-1 convs' padded copy), so the
// row's ends run as T-wide tiles too.
template <int T, bool EDGE>
void dw_tile(const ConvJob& j, int64_t n, int64_t cb, int64_t oh, int64_t ow0) {
  const BlockedConvGeometry& g = j.g;
  const int64_t cbs = (g.C + kB - 1) / kB;
  const int64_t xstep = g.sw * kB, x0 = ow0 * g.sw - g.pad_left;  // x0: the first window's first column
  Vf acc[kV][T];
#pragma GCC unroll 4
  for (int v = 0; v < kV; ++v) {
    const Vf bv = loadu(j.bias + cb * kB + v * kLanes);
#pragma GCC unroll 32
    for (int t = 0; t < T; ++t) acc[v][t] = bv;
  }
  const float* xc = j.x + (n * cbs + cb) * g.H * g.W * kB;
  const float* wc = j.w->w.data() + cb * g.kh * g.kw * kB;
  float* row = nullptr;
  const int64_t span = (T - 1) * g.sw + (g.kw - 1) * g.dw + 1;  // input columns the tile reads
  if constexpr (EDGE) row = blocked_detail::depthwise_row_scratch(span * kB);
  for (int64_t kh = 0; kh < g.kh; ++kh) {
    const int64_t ih = oh * g.sh - g.pad_top + kh * g.dh;
    if (ih < 0 || ih >= g.H) continue;
    const float* xr = xc + ih * g.W * kB;
    int64_t xb = x0;  // the input column xr[0] stands for
    if constexpr (EDGE) {
      for (int64_t c = 0; c < span; ++c) {
        const int64_t iw = x0 + c;
        const bool in = iw >= 0 && iw < g.W;
#pragma GCC unroll 4
        for (int v = 0; v < kV; ++v)
          storeu(row + c * kB + v * kLanes, in ? loadu(xr + iw * kB + v * kLanes) : zero());
      }
      xr = row;
      xb = 0;
    }
    for (int64_t kw = 0; kw < g.kw; ++kw) {
      const int64_t iw0 = xb + kw * g.dw;
      const float* xp = xr + iw0 * kB;
#pragma GCC unroll 4
      for (int v = 0; v < kV; ++v) {
        const Vf wv = loadu(wc + (kh * g.kw + kw) * kB + v * kLanes);
#pragma GCC unroll 32
        for (int t = 0; t < T; ++t) acc[v][t] = fmadd(loadu(xp + t * xstep + v * kLanes), wv, acc[v][t]);
      }
    }
  }
  const int64_t off = (((n * cbs + cb) * g.OH + oh) * g.OW + ow0) * kB;
  store_row<T>(j, acc, 0, j.y + off, j.z ? j.z + off : nullptr);
}

// Depthwise: one position of one block, skipping the taps in the padding.
inline void dw_point(const ConvJob& j, int64_t n, int64_t cb, int64_t oh, int64_t ow) {
  const BlockedConvGeometry& g = j.g;
  const int64_t cbs = (g.C + kB - 1) / kB;
  Vf acc[kV][1];
#pragma GCC unroll 4
  for (int v = 0; v < kV; ++v) acc[v][0] = loadu(j.bias + cb * kB + v * kLanes);
  const float* xc = j.x + (n * cbs + cb) * g.H * g.W * kB;
  const float* wc = j.w->w.data() + cb * g.kh * g.kw * kB;
  for (int64_t kh = 0; kh < g.kh; ++kh) {
    const int64_t ih = oh * g.sh - g.pad_top + kh * g.dh;
    if (ih < 0 || ih >= g.H) continue;
    for (int64_t kw = 0; kw < g.kw; ++kw) {
      const int64_t iw = ow * g.sw - g.pad_left + kw * g.dw;
      if (iw < 0 || iw >= g.W) continue;
#pragma GCC unroll 4
      for (int v = 0; v < kV; ++v)
        acc[v][0] = fmadd(loadu(xc + (ih * g.W + iw) * kB + v * kLanes),
                          loadu(wc + (kh * g.kw + kw) * kB + v * kLanes), acc[v][0]);
    }
  }
  const int64_t off = (((n * cbs + cb) * g.OH + oh) * g.OW + ow) * kB;
  store_row<1>(j, acc, 0, j.y + off, j.z ? j.z + off : nullptr);
}

template <int T, bool EDGE>
void dw_rest(const ConvJob& j, int64_t n, int64_t cb, int64_t oh, int64_t ow0, int64_t count) {
  if constexpr (T > 1) {
    if (count == T - 1) return dw_tile<T - 1, EDGE>(j, n, cb, oh, ow0);
    return dw_rest<T - 1, EDGE>(j, n, cb, oh, ow0, count);
  }
}

template <int XS>
void conv_units(const ConvJob& j, int64_t u0, int64_t u1) {
  const BlockedConvGeometry& g = j.g;
  const int64_t ocbs = (g.M + kB - 1) / kB, pairs = (ocbs + 1) / 2, rpu = blocked_detail::rows_per_unit(g, kConvT);
  const int64_t row_units = (g.OH + rpu - 1) / rpu, icbs = (g.C + kB - 1) / kB;
  const int64_t chunk = blocked_detail::chunk_blocks(g);
  ConvJob jc = j;
  for (int64_t ua = u0; ua < u1;) {
    // The units of one (image, band, block pair) run chunk by chunk of K.
    const UnitPos pos = unit_at(ua, pairs, row_units, j.band_rows);
    const int64_t n = pos.n, ub = std::min(u1, pos.end), ocb = pos.group * 2;
    const bool two = ocb + 1 < ocbs;
    for (int64_t c0 = 0; c0 < icbs; c0 += chunk) {
      jc.icb0 = c0;
      jc.icb1 = std::min(icbs, c0 + chunk);
      jc.first = c0 == 0;
      jc.last = jc.icb1 == icbs;
      for (int64_t u = ua; u < ub; ++u) {
        const int64_t oh = (pos.row + u - ua) * rpu;
        if (rpu == 2 && oh + 1 < g.OH) {
          if (two) conv_rest<2, 2, kConvT / 2 + 1, XS>(jc, n, ocb, oh, 0, g.OW);
          else conv_rest<1, 2, kConvT / 2 + 1, XS>(jc, n, ocb, oh, 0, g.OW);
        } else if (two) {
          conv_row<2, kConvT, XS>(jc, n, ocb, oh);
        } else {
          conv_row<1, kConvT1, XS>(jc, n, ocb, oh);
        }
        if constexpr (kRowActivation) {
          const int64_t rows = rpu == 2 && oh + 1 < g.OH ? 2 : 1;
          if (jc.last && row_activation(j.act)) activate_rows(jc, ocbs, n, ocb, two ? 2 : 1, oh, rows);
        }
      }
    }
    ua = ub;
  }
}

// One output position of max_pool16 with bounds checks (the row's ends), lane group v.
inline Vf max_pool_edge(const float* xs, const BlockedConvGeometry& g, int64_t oh, int64_t ow, int v) {
  Vf m = set1(-std::numeric_limits<float>::infinity());
  for (int64_t kh = 0; kh < g.kh; ++kh) {
    const int64_t ih = oh * g.sh - g.pad_top + kh * g.dh;
    if (ih < 0 || ih >= g.H) continue;
    const float* xr = xs + ih * g.W * kB + v * kLanes;
    for (int64_t kw = 0; kw < g.kw; ++kw) {
      const int64_t iw = ow * g.sw - g.pad_left + kw * g.dw;
      if (iw >= 0 && iw < g.W) m = max(m, loadu(xr + iw * kB));
    }
  }
  return m;
}

}  // namespace
}  // namespace nchwc

// Units (unit_at, j.band_rows): (image, output block pair, row unit).
inline void blocked_conv_units(const blocked_detail::ConvJob& j, int64_t u0, int64_t u1) {
  using namespace nchwc;
  if (j.sx == kB && j.sc == 1 && j.g.sw == 1) return conv_units<kB>(j, u0, u1);
  if (j.sx == kB && j.sc == 1 && j.g.sw == 2) return conv_units<2 * kB>(j, u0, u1);
  conv_units<0>(j, u0, u1);
}

// Units: (image, block, output row).
inline void blocked_depthwise_units(const blocked_detail::ConvJob& j, int64_t u0, int64_t u1) {
  using namespace nchwc;
  const BlockedConvGeometry& g = j.g;
  const int64_t cbs = (g.C + kB - 1) / kB;
  int64_t lo, hi;
  interior(g, &lo, &hi);
  // A row end with one position whose window reaches into the padding runs
  // it alone (one FMA chain, taps in the padding skipped); an end with more
  // joins the tiles, which copy the rows they read (one position at a time,
  // each would be a serial chain of every tap).
  const int64_t first = lo < 2 ? lo : 0, end = g.OW - hi < 2 ? hi : g.OW;
  const int64_t len = end - first, tiles = (len + kDwT - 1) / kDwT, width = tiles ? (len + tiles - 1) / tiles : 1;
  for (int64_t u = u0; u < u1; ++u) {
    const UnitPos pos = unit_at(u, cbs, g.OH, j.band_rows);
    const int64_t oh = pos.row, cb = pos.group, n = pos.n;
    // Tiles of about equal width (at most kDwT) over [first, end); those
    // reaching past the interior [lo, hi) copy their rows.
    for (int64_t ow = 0; ow < first; ++ow) dw_point(j, n, cb, oh, ow);
    for (int64_t ow = first; ow < end; ow += width) {
      const int64_t cnt = std::min(width, end - ow);
      if (ow < lo || ow + cnt > hi) {
        if (cnt == kDwT) dw_tile<kDwT, true>(j, n, cb, oh, ow);
        else dw_rest<kDwT, true>(j, n, cb, oh, ow, cnt);
      } else if (cnt == kDwT) {
        dw_tile<kDwT, false>(j, n, cb, oh, ow);
      } else {
        dw_rest<kDwT, false>(j, n, cb, oh, ow, cnt);
      }
    }
    for (int64_t ow = end; ow < g.OW; ++ow) dw_point(j, n, cb, oh, ow);
    if constexpr (kRowActivation)
      if (row_activation(j.act)) activate_rows(j, cbs, n, cb, 1, oh, 1);
  }
}

// max_pool_blocked's output rows [u0, u1) for 16-channel blocks.
inline void blocked_max_pool16(const float* x, const BlockedConvGeometry& g, float* y, int64_t u0, int64_t u1) {
  using namespace nchwc;
  // Output columns [ow0, ow1) have every tap inside the row: no bounds checks there.
  int64_t ow0, ow1;
  interior(g, &ow0, &ow1);
  constexpr int64_t kMaxRows = 16;
  int64_t rows[kMaxRows];  // offsets of the rows in the plane
  for (int64_t u = u0; u < u1; ++u) {
    const int64_t oh = u % g.OH, plane = u / g.OH;
    const float* xs = x + plane * g.H * g.W * kB;
    float* yd = y + u * g.OW * kB;
    int64_t nr = 0;  // the input rows the window covers, in kh order
    for (int64_t kh = 0; kh < g.kh && nr <= kMaxRows; ++kh) {
      const int64_t ih = oh * g.sh - g.pad_top + kh * g.dh;
      if (ih < 0 || ih >= g.H) continue;
      if (nr < kMaxRows) rows[nr] = ih * g.W * kB;
      ++nr;
    }
    const int64_t mid0 = nr <= kMaxRows ? ow0 : g.OW, mid1 = nr <= kMaxRows ? ow1 : g.OW;
    for (int64_t ow = 0; ow < mid0; ++ow)
#pragma GCC unroll 4
      for (int v = 0; v < kV; ++v) storeu(yd + ow * kB + v * kLanes, max_pool_edge(xs, g, oh, ow, v));
    for (int64_t ow = mid0; ow < mid1; ++ow) {
      Vf m[kV];
#pragma GCC unroll 4
      for (int v = 0; v < kV; ++v) m[v] = set1(-std::numeric_limits<float>::infinity());
      const float* xw = xs + (ow * g.sw - g.pad_left) * kB;
      for (int64_t r = 0; r < nr; ++r)
        for (int64_t kw = 0; kw < g.kw; ++kw)
#pragma GCC unroll 4
          for (int v = 0; v < kV; ++v) m[v] = max(m[v], loadu(xw + rows[r] + kw * g.dw * kB + v * kLanes));
#pragma GCC unroll 4
      for (int v = 0; v < kV; ++v) storeu(yd + ow * kB + v * kLanes, m[v]);
    }
    for (int64_t ow = std::max(mid0, mid1); ow < g.OW; ++ow)
#pragma GCC unroll 4
      for (int v = 0; v < kV; ++v) storeu(yd + ow * kB + v * kLanes, max_pool_edge(xs, g, oh, ow, v));
  }
}

// One 16-channel block: hw positions of cn (<= 16) planes, `plane` floats
// apart, -> [hw][16] (lanes past cn zero), kLanes positions x kLanes
// channels at a time transposed in registers.
inline void blocked_to_block16(const float* x, int64_t cn, int64_t hw, int64_t plane, float* y) {
  using namespace nchwc;
  Vf r[kLanes];
  for (int64_t p0 = 0; p0 < hw; p0 += kLanes) {
    const int64_t pn = std::min<int64_t>(kLanes, hw - p0);
#pragma GCC unroll 4
    for (int v = 0; v < kV; ++v) {
#pragma GCC unroll 16
      for (int c = 0; c < kLanes; ++c) {
        const int64_t ch = v * kLanes + c;
        r[c] = ch < cn ? load_first(x + ch * plane + p0, pn) : zero();
      }
      transpose_square(r);
      for (int64_t p = 0; p < pn; ++p) storeu(y + (p0 + p) * kB + v * kLanes, r[p]);
    }
  }
}

// The inverse: [hw][16] -> cn planes (only those written).
inline void blocked_from_block16(const float* x, int64_t cn, int64_t hw, int64_t plane, float* y) {
  using namespace nchwc;
  Vf r[kLanes];
  for (int64_t p0 = 0; p0 < hw; p0 += kLanes) {
    const int64_t pn = std::min<int64_t>(kLanes, hw - p0);
#pragma GCC unroll 4
    for (int v = 0; v < kV; ++v) {
#pragma GCC unroll 16
      for (int p = 0; p < kLanes; ++p) r[p] = p < pn ? loadu(x + (p0 + p) * kB + v * kLanes) : zero();
      transpose_square(r);
      for (int64_t c = 0; c < kLanes && v * kLanes + c < cn; ++c) store_first(y + (v * kLanes + c) * plane + p0, r[c], pn);
    }
  }
}

}  // namespace dlrt::cpu::simd::DLRT_SIMD_NS
