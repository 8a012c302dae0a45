// Kernel body (simd/simd.h), compiled once per vector width by
// conv_direct_sliced.cpp: the direct convolution (conv_direct.h) for
// weights packed in the 6 x 16 layout (the GEMM's panels on AVX2 and
// aarch64): the phase copy of the input, the 6 x 16 register tile over the
// offset-addressed B operand, run K slice by K slice over a group of M
// panels so a tile's B rows stay in L1, the store through the fused
// epilogue, and the split over threads. At 256 bits it runs the instruction
// sequences of the former AVX2-only kernel (12 ymm accumulators); at 128
// bits (NEON) the tile is 6 rows x 4 vectors (24 of the 32 registers).

namespace dlrt::cpu::simd::DLRT_SIMD_NS {

namespace conv_direct_sliced_body {
namespace {

constexpr int kMR = 6;   // rows of a packed A panel (the 6 x 16 GEMM's tile)
constexpr int kNR = 16;  // grid columns of a tile
constexpr int kL = kLanes;
// Vectors of a tile's row: 2 ymm, 4 NEON vectors, 1 zmm. The 6 x kNV
// accumulators, kNV B vectors and a broadcast fit the register file (16 at
// 256 bits, 32 on aarch64; SSE's 16 at 128 bits on x86 spill, a width that
// runs there only for tests and DLRT_CPU_ISA=neon).
constexpr int kNV = kNR / kL;
static_assert(kNV >= 1 && kNR % kL == 0, "a tile row is whole vectors");
#if defined(__aarch64__)
static_assert(kMR * kNV + kNV + 1 <= kRegisters, "the tile's accumulators and operands fit the registers");
#endif
// Vectors that hold one packed A column (the 6 rows of a panel) in narrow_tile.
constexpr int kPV = (kMR + kL - 1) / kL;

// A slices (6 x kc floats per panel) of one group of M panels, kept in L2
// while the tiles run over them; at most kMaxGroup panels (their partial sums).
constexpr int64_t kGroupBytes = 160 * 1024;
constexpr int64_t kMaxGroup = 32;
// The one-K-slice path's block of tiles: its B rows (K rows of the tiles'
// columns) are re-read by every panel of the group, from L2.
constexpr int64_t kBlockBBytes = 128 * 1024;

// dst[j] = src[j * s] for j < n (reads nothing past src[(n - 1) * s]).
void gather_row(const float* src, int64_t s, int64_t n, float* dst) {
  if (s == 1) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
    return;
  }
  int64_t j = 0;
  if (s == 2) {
    // kL outputs from src[2j, 2j + 2 kL): the even lanes of two loads.
    for (; j + kL + 1 <= n; j += kL) {
      Vf e, o;
      deinterleave2(loadu(src + 2 * j), loadu(src + 2 * j + kL), e, o);
      storeu(dst + j, e);
    }
  }
  for (; j < n; ++j) dst[j] = src[j * s];
}

void zero_floats(float* dst, int64_t n) {
  if (n > 0) std::memset(dst, 0, static_cast<size_t>(n) * sizeof(float));
}

// The phase copy's row primitives (conv_direct_fill.h), inlined into fill_channel.
struct Rows {
  static void zero(float* dst, int64_t n) { zero_floats(dst, n); }
  static void gather(const float* src, int64_t s, int64_t n, float* dst) { gather_row(src, s, n, dst); }
};

// Rows [r0, r1) of the copied planes of one input channel xc [in_h, in_w] into dst (nphase planes of hq x wq).
void fill_channel(const ConvDirectPlan& P, const float* xc, float* dst, int64_t r0, int64_t r1) {
  conv_direct_fill_phases<Rows>(P, xc, dst, r0, r1);
}

// Where finished tiles go: output row m is y + m * plane; grid column c is
// output (c / wq, c % wq), dropped when c % wq >= out_w.
struct TileOut {
  float* y = nullptr;
  int64_t plane = 0, wq = 0, out_w = 0;
  const float* bias = nullptr;      // per output row, or null
  const float* residual = nullptr;  // like y, or null
  bool clamp = false;               // Relu / Clip: min(hi, max(lo, v)), in the store
  bool other_act = false;           // any other activation: apply_activation on the stored runs
  float lo = 0.0f, hi = 0.0f;
  const Activation* act = nullptr;
};

// max/min with the operand order of the vector store's max(lo, v) / min(hi, v) (NaN v stays NaN).
inline float clamp_like_simd(float v, float lo, float hi) {
  v = lo > v ? lo : v;
  return hi < v ? hi : v;
}

// Raw sums t (rows [0, rows) of ld floats; grid columns [j0, j0 + n) of output
// rows m0 + i) to their compact places in y through the epilogue; with_act:
// also the activations the store does not clamp.
void store_piece(const float* t, int64_t ld, int rows, int64_t m0, int64_t j0, int64_t n, const TileOut& out,
                 bool with_act) {
  int64_t oh = j0 / out.wq, ow = j0 - oh * out.wq;
  for (int64_t jj = 0; jj < n; ow = 0, ++oh) {
    const int64_t len = std::min(n - jj, out.wq - ow);
    const int64_t valid = ow < out.out_w ? std::min(len, out.out_w - ow) : 0;
    if (valid > 0) {
      const int64_t idx = oh * out.out_w + ow;
      for (int i = 0; i < rows; ++i) {
        const int64_t m = m0 + i;
        const float* ti = t + i * ld + jj;
        float* yi = out.y + m * out.plane + idx;
        const float* zi = out.residual ? out.residual + m * out.plane + idx : nullptr;
        const float b = out.bias ? out.bias[m] : 0.0f;
        for (int64_t c = 0; c < valid; ++c) {
          float v = ti[c] + b;
          if (zi) v += zi[c];
          if (out.clamp) v = clamp_like_simd(v, out.lo, out.hi);
          yi[c] = v;
        }
        if (with_act && out.other_act) apply_activation(*out.act, yi, valid);
      }
    }
    jj += len;
  }
}

// The non-clamp activation over the outputs of grid columns [j0, j0 + n) of output row m.
void activate_piece(int64_t m, int64_t j0, int64_t n, const TileOut& out) {
  int64_t oh = j0 / out.wq, ow = j0 - oh * out.wq;
  for (int64_t jj = 0; jj < n; ow = 0, ++oh) {
    const int64_t len = std::min(n - jj, out.wq - ow);
    const int64_t valid = ow < out.out_w ? std::min(len, out.out_w - ow) : 0;
    if (valid > 0) apply_activation(*out.act, out.y + m * out.plane + oh * out.out_w + ow, valid);
    jj += len;
  }
}

// One k step of a 6 x (kL*NV) tile: B row s (the last vector only its
// `last` floats when kMask) times the first R of the 6 floats of A column
// a, into acc (rows past R are left alone).
template <int NV, bool kMask, int R = kMR>
__attribute__((always_inline)) inline void tile_step(const float* a, const float* s, int64_t last,
                                                     Vf (&acc)[kMR][NV]) {
  Vf b[NV];
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) b[v] = (kMask && v == NV - 1) ? load_first(s + kL * v, last) : loadu(s + kL * v);
#pragma GCC unroll 6
  for (int i = 0; i < R; ++i) {
    const Vf av = set1(a[i]);
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[i][v] = fmadd(av, b[v], acc[i][v]);
  }
}

// One 6 x (kL*NV) tile at grid column j0 (src already offset by j0) of M
// panel q over the K slices of the packed weights in [kb, ke): starts from
// zero when kb == 0, else from the partial sums in `part` (6 x 16 floats);
// stores the partial sums there when ke < K, else the finished tile.
// kMask: the last vector loads only its n - kL*(NV-1) grid columns
// (nothing past the B operand is read: the input itself when there is no
// copy). Columns [0, n) of rows [0, rows) are stored (output rows m0 + i).
// prefetch_next: pull the next M panel's slice (contiguous in the slice)
// towards L1 while this one computes.
template <int NV, bool kMask>
void direct_tile(const float* w, int64_t Mp, int64_t KC, int64_t K, int64_t kb, int64_t ke, int64_t q,
                 bool prefetch_next, const float* src, const int64_t* off, float* part, int rows, int64_t m0,
                 int64_t j0, int64_t n, const TileOut& out) {
  const int64_t last = n - kL * (NV - 1);
  Vf acc[kMR][NV];
  if (kb == 0) {
#pragma GCC unroll 6
    for (int i = 0; i < kMR; ++i)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[i][v] = zero();
  } else {
#pragma GCC unroll 6
    for (int i = 0; i < kMR; ++i)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[i][v] = loadu(part + i * kNR + kL * v);
  }
  for (int64_t p0 = kb / KC * KC; p0 < ke; p0 += KC) {
    const int64_t kc = std::min(KC, K - p0);
    const float* __restrict a = w + Mp * p0 + q * kMR * kc;
    const float* pf = prefetch_next ? a + kMR * kc : a;
    const int64_t* o = off + p0;
    const int64_t pe = std::min(kc, ke - p0);
#pragma GCC unroll 2
    for (int64_t p = std::max<int64_t>(0, kb - p0); p < pe; ++p) {
      __builtin_prefetch(pf + p * kMR, 0, 3);
      tile_step<NV, kMask>(a + p * kMR, src + o[p], last, acc);
    }
  }
  if (ke < K) {
#pragma GCC unroll 6
    for (int i = 0; i < kMR; ++i)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) storeu(part + i * kNR + kL * v, acc[i][v]);
    return;
  }
  // Per vector: whole (kL outputs in a row of y: stored from the register)
  // or pieces (through store_piece).
  bool whole[NV];
  int64_t o1[NV];
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) {
    const int64_t c = j0 + kL * v;
    const int64_t oh = c / out.wq, ow = c - oh * out.wq;
    whole[v] = n - kL * v >= kL && (out.wq == out.out_w || ow + kL <= out.out_w);
    o1[v] = out.wq == out.out_w ? c : oh * out.out_w + ow;
  }
  const Vf lo = set1(out.lo), hi = set1(out.hi);
#pragma GCC unroll 6
  for (int i = 0; i < kMR; ++i) {
    if (i >= rows) break;
    const int64_t m = m0 + i;
    float* ym = out.y + m * out.plane;
    const float* zm = out.residual ? out.residual + m * out.plane : nullptr;
    const Vf bias = set1(out.bias ? out.bias[m] : 0.0f);
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      if (!whole[v]) {
        alignas(64) float raw[kL];
        storeu(raw, acc[i][v]);
        store_piece(raw, kL, 1, m, j0 + kL * v, std::min<int64_t>(kL, n - kL * v), out, false);
        continue;
      }
      Vf r = add(acc[i][v], bias);
      if (zm) r = add(r, loadu(zm + o1[v]));
      if (out.clamp) r = min(hi, max(lo, r));
      storeu(ym + o1[v], r);
    }
    if (out.other_act) activate_piece(m, j0, n, out);
  }
}

// One 6 x (kL*NV) tile of a conv whose K fits one slice and whose grid
// columns are the output positions (wq == out_w: a 1x1 stride-1 conv
// reading the input itself, mobilenet's pointwise convs of 16-256 input
// channels, or a tap-column copy, the strided stems): row p of B at
// src + off[p] (src already at grid column j0), the panel's A the one
// K x 6 slice, every vector stored whole from the register. The general
// tile's slice bookkeeping, per-call setup and row-straddling stores cost
// as much as the FMAs of a 16- or 24-deep K (docs/performance-decisions.md). kMask: the last vector holds
// n - kL*(NV-1) positions (loaded and stored partially; needed only
// when the input itself is B). R: the rows whose FMAs run (a last panel of
// 4 or 2 real rows runs only those; `rows` of them are stored).
template <int NV, bool kMask, int R = kMR>
void slice_tile(const float* __restrict a, int64_t K, const float* src, const int64_t* off, int rows, int64_t m0,
                int64_t j0, int64_t n, const TileOut& out) {
  const int64_t last = n - kL * (NV - 1);
  Vf acc[kMR][NV];
#pragma GCC unroll 6
  for (int i = 0; i < kMR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[i][v] = zero();
#pragma GCC unroll 4
  for (int64_t p = 0; p < K; ++p) {
    tile_step<NV, kMask, R>(a + p * kMR, src + off[p], last, acc);
  }
  const Vf lo = set1(out.lo), hi = set1(out.hi);
#pragma GCC unroll 6
  for (int i = 0; i < kMR; ++i) {
    if (i >= rows) break;
    const int64_t m = m0 + i;
    float* ym = out.y + m * out.plane + j0;
    const float* zm = out.residual ? out.residual + m * out.plane + j0 : nullptr;
    const Vf bias = set1(out.bias ? out.bias[m] : 0.0f);
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      const bool partial = kMask && v == NV - 1;
      Vf r = add(acc[i][v], bias);
      if (zm) r = add(r, partial ? load_first(zm + kL * v, last) : loadu(zm + kL * v));
      if (out.clamp) r = min(hi, max(lo, r));
      if (partial) store_first(ym + kL * v, r, last);
      else storeu(ym + kL * v, r);
    }
    if (out.other_act) apply_activation(*out.act, ym, n);
  }
}

// Columns past a panel column that a plain load of its kPV vectors reaches into.
constexpr int64_t kAhead = (kPV * kL - kMR + kMR - 1) / kMR;

// The 6 floats of packed A column p of a slice of kc columns in lanes
// [0, 6) of kPV vectors. kPlain: plain loads, which read the next column's
// first floats too (the caller knows that column is in the slice); else
// the column's own floats only (AVX2's masked loads are slow: Zen 1).
template <bool kPlain>
__attribute__((always_inline)) inline void load_panel_column(const float* a, int64_t p, Vf (&col)[kPV]) {
#pragma GCC unroll 2
  for (int u = 0; u < kPV; ++u)
    col[u] = kPlain ? loadu(a + p * kMR + kL * u) : load_first(a + p * kMR + kL * u, kMR - kL * u);
}

// U K steps from column p into partial sums u = 0 .. U-1 (U == 1: into
// sum 0), for NC columns of B.
template <int NC, int U, int kSums, bool kPlain>
__attribute__((always_inline)) inline void narrow_steps(const float* a, int64_t p, const float* src,
                                                        const int64_t* o, Vf (&acc)[NC][kSums][kPV]) {
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) {
    Vf av[kPV];
    load_panel_column<kPlain>(a, p + u, av);
    const float* s = src + o[p + u];
#pragma GCC unroll 4
    for (int j = 0; j < NC; ++j) {
      const Vf bj = set1(s[j]);
#pragma GCC unroll 2
      for (int h = 0; h < kPV; ++h) acc[j][u][h] = fmadd(av[h], bj, acc[j][u][h]);
    }
  }
}

// A last tile of NC <= 4 grid columns (a 7x7 pointwise grid leaves 1, 14x14
// leaves 4): vectorised over the 6 rows of the A panel instead (one FMA per
// vector, column and K step); U partial sums per column hide the FMA
// latency. Stored through store_piece.
template <int NC>
void narrow_tile(const float* w, int64_t Mp, int64_t KC, int64_t K, int64_t q, const float* src, const int64_t* off,
                 int rows, int64_t m0, int64_t j0, const TileOut& out) {
  constexpr int U = NC == 1 ? 4 : NC <= 3 ? 3 : 2;
  Vf acc[NC][U][kPV];
#pragma GCC unroll 4
  for (int j = 0; j < NC; ++j)
#pragma GCC unroll 4
    for (int u = 0; u < U; ++u)
#pragma GCC unroll 2
      for (int h = 0; h < kPV; ++h) acc[j][u][h] = zero();
  for (int64_t p0 = 0; p0 < K; p0 += KC) {
    const int64_t kc = std::min(KC, K - p0);
    const float* a = w + Mp * p0 + q * kMR * kc;
    const int64_t* o = off + p0;
    int64_t p = 0;
    // Groups of U steps (the same groups whichever loads they take).
    for (; p + U + kAhead <= kc; p += U) narrow_steps<NC, U, U, true>(a, p, src, o, acc);
    for (; p + U <= kc; p += U) narrow_steps<NC, U, U, false>(a, p, src, o, acc);
    for (; p < kc; ++p) narrow_steps<NC, 1, U, false>(a, p, src, o, acc);
  }
  float t[kMR * NC];
#pragma GCC unroll 4
  for (int j = 0; j < NC; ++j) {
    alignas(64) float col[kPV * kL];
#pragma GCC unroll 2
    for (int h = 0; h < kPV; ++h) {
      Vf sum = acc[j][0][h];
#pragma GCC unroll 4
      for (int u = 1; u < U; ++u) sum = add(sum, acc[j][u][h]);
      storeu(col + kL * h, sum);
    }
    for (int i = 0; i < kMR; ++i) t[i * NC + j] = col[i];
  }
  store_piece(t, NC, rows, m0, j0, NC, out, true);
}

// The tile kernels for a tile of n > 4 columns: NV = ceil(n / kL) vectors,
// the last loaded partially when `mask` (the input itself is B) and n is
// not whole vectors.
template <int NV>
void direct_tile_n(bool mask, const float* w, int64_t Mp, int64_t KC, int64_t K, int64_t kb, int64_t ke, int64_t q,
                   bool pf, const float* src, const int64_t* off, float* part, int rows, int64_t m0, int64_t j0,
                   int64_t n, const TileOut& out) {
  if (mask && n % kL != 0)
    direct_tile<NV, true>(w, Mp, KC, K, kb, ke, q, pf, src, off, part, rows, m0, j0, n, out);
  else
    direct_tile<NV, false>(w, Mp, KC, K, kb, ke, q, pf, src, off, part, rows, m0, j0, n, out);
}

void any_direct_tile(bool mask, const float* w, int64_t Mp, int64_t KC, int64_t K, int64_t kb, int64_t ke, int64_t q,
                     bool pf, const float* src, const int64_t* off, float* part, int rows, int64_t m0, int64_t j0,
                     int64_t n, const TileOut& out) {
  const int64_t nv = (n + kL - 1) / kL;
  if constexpr (kNV >= 4) {
    if (nv == 4) return direct_tile_n<4>(mask, w, Mp, KC, K, kb, ke, q, pf, src, off, part, rows, m0, j0, n, out);
    if (nv == 3) return direct_tile_n<3>(mask, w, Mp, KC, K, kb, ke, q, pf, src, off, part, rows, m0, j0, n, out);
  }
  if constexpr (kNV >= 2) {
    if (nv == 2) return direct_tile_n<2>(mask, w, Mp, KC, K, kb, ke, q, pf, src, off, part, rows, m0, j0, n, out);
  }
  direct_tile_n<1>(mask, w, Mp, KC, K, kb, ke, q, pf, src, off, part, rows, m0, j0, n, out);
}

// slice_tile for a tile of n > 4 columns (a full one: only the panel's real rows' FMAs).
template <int NV>
void slice_tile_n(const float* a, int64_t K, const float* src, const int64_t* off, int rows, int64_t m0, int64_t j0,
                  int64_t n, const TileOut& out) {
  // The last panel of an M that is not a multiple of 6 (mobilenet_v2's
  // 16- and 32-channel projections) runs the FMAs of its real rows only.
  if (n == kNR && rows == 4) return slice_tile<NV, false, 4>(a, K, src, off, rows, m0, j0, n, out);
  if (n == kNR && rows == 2) return slice_tile<NV, false, 2>(a, K, src, off, rows, m0, j0, n, out);
  if (n % kL == 0) return slice_tile<NV, false>(a, K, src, off, rows, m0, j0, n, out);
  slice_tile<NV, true>(a, K, src, off, rows, m0, j0, n, out);
}

void any_slice_tile(const float* a, int64_t K, const float* src, const int64_t* off, int rows, int64_t m0, int64_t j0,
                    int64_t n, const TileOut& out) {
  const int64_t nv = (n + kL - 1) / kL;
  if constexpr (kNV >= 4) {
    if (nv == 4) return slice_tile_n<4>(a, K, src, off, rows, m0, j0, n, out);
    if (nv == 3) return slice_tile_n<3>(a, K, src, off, rows, m0, j0, n, out);
  }
  if constexpr (kNV >= 2) {
    if (nv == 2) return slice_tile_n<2>(a, K, src, off, rows, m0, j0, n, out);
  }
  slice_tile_n<1>(a, K, src, off, rows, m0, j0, n, out);
}

void any_narrow_tile(int64_t n, const float* w, int64_t Mp, int64_t KC, int64_t K, int64_t q, const float* src,
                     const int64_t* off, int rows, int64_t m0, int64_t j0, const TileOut& out) {
  switch (n) {
    case 1: return narrow_tile<1>(w, Mp, KC, K, q, src, off, rows, m0, j0, out);
    case 2: return narrow_tile<2>(w, Mp, KC, K, q, src, off, rows, m0, j0, out);
    case 3: return narrow_tile<3>(w, Mp, KC, K, q, src, off, rows, m0, j0, out);
    default: return narrow_tile<4>(w, Mp, KC, K, q, src, off, rows, m0, j0, out);
  }
}

}  // namespace
}  // namespace conv_direct_sliced_body

void conv_direct_sliced(const ConvDirectPlan& plan, const int64_t* off, const float* x, const PackedMatrix& w,
                        float* y, const GemmEpilogue& ep, ThreadPool* pool, int64_t y_plane) {
  using namespace conv_direct_sliced_body;
  conv_direct_note_run();
  const ConvDirectGeometry& g = plan.g;
  const int threads = pool ? pool->num_threads() : 1;
  // Split from 16K floats on (the scalar stride-2 gather of a 1x1/2
  // downsample's 64 x 28 x 28 phase took a fifth of its conv on one thread).
  const float* src = plan.copy ? conv_direct_copy_input(plan, x, pool, &fill_channel, zero_floats, 16384, 4096, true) : x;
  const int64_t M = w.rows(), K = plan.k, KC = packed_kc(w);
  const int64_t panels = ceil_div(M, kMR), Mp = panels * kMR;
  const int64_t tiles = ceil_div(plan.grid, kNR);
  // Loop order: for a group of M panels whose K slices of A stay in L2, for
  // each 16-column tile, for each K slice, every panel of the group: the
  // tile's B rows of one slice (kc rows of 16 floats, a few input rows per
  // channel) stay in L1 while the panels stream their A slices from L2;
  // partial sums wait in `part` between slices (6 x 16 floats per panel and slice).
  int64_t group = std::clamp<int64_t>(kGroupBytes / (kMR * std::min(KC, K) * int64_t{sizeof(float)}), 1, kMaxGroup);
  int64_t groups = ceil_div(panels, group);
  group = ceil_div(panels, groups);
  // At least 8 work units per thread where the panels allow (smaller
  // groups), so the pool can balance a small layer: 576 -> 160 at 7x7 on 2
  // threads made 4 units, 2 full tiles against 1 and a 1-column sliver.
  auto enough_units = [&](int64_t units_per_group) {
    if (threads <= 1 || groups * units_per_group >= 8 * threads) return;
    const int64_t want = std::min(panels, ceil_div(8 * threads, units_per_group));
    if (want <= groups) return;
    group = ceil_div(panels, want);
    groups = ceil_div(panels, group);
  };
  const float* wd = w.data();
  TileOut out;
  out.y = y;
  out.plane = y_plane > 0 ? y_plane : g.out_h * g.out_w;
  out.wq = plan.wq;
  out.out_w = g.out_w;
  out.bias = ep.row_bias;
  out.residual = ep.residual;
  {
    const ClampStage c = clamp_stage(ep.act);
    out.clamp = c.clamp;
    out.other_act = !clamp_or_none(ep.act);
    out.lo = c.lo;
    out.hi = c.hi;
    out.act = &ep.act;
  }
  // Partial tiles need a partial load only when the input itself is B; the
  // scratch has slack past the grid.
  const bool mask_tail = !plan.copy;
  // K in one slice and grid columns that are output positions: slice_tile.
  const bool one_slice = K <= KC && (!plan.copy || plan.tap_columns);

  // One K slice: for a block of tiles whose B rows (K x block columns) stay
  // in L2, each panel of the group runs over the whole block. Each panel then
  // writes its 6 output rows as runs of whole cache lines, and the
  // hardware prefetcher follows those few streams; tile by tile, every tile
  // touched all M output rows, as many write streams as output channels,
  // which missed to memory when the output was not in cache (docs/performance-decisions.md).
  if (one_slice) {
    const int64_t block_tiles = std::clamp<int64_t>(kBlockBBytes / (K * kNR * int64_t{sizeof(float)}), 1,
                                                    std::max<int64_t>(1, ceil_div(tiles, 4 * threads)));
    const int64_t blocks = ceil_div(tiles, block_tiles);
    enough_units(blocks);
    auto block_body = [&](int64_t ub, int64_t ue) {
      for (int64_t u = ub; u < ue; ++u) {
        const int64_t gi = u / blocks, bi = u % blocks;
        const int64_t q0 = gi * group, q1 = std::min(panels, q0 + group);
        const int64_t t0 = bi * block_tiles, t1 = std::min(tiles, t0 + block_tiles);
        for (int64_t q = q0; q < q1; ++q) {
          const int rows = static_cast<int>(std::min<int64_t>(kMR, M - q * kMR));
          const float* a = wd + q * kMR * K;
          for (int64_t ti = t0; ti < t1; ++ti) {
            const int64_t j0 = ti * kNR, n = std::min<int64_t>(kNR, plan.grid - j0);
            const float* sj = src + j0;
            if (n <= 4) any_narrow_tile(n, wd, Mp, KC, K, q, sj, off, rows, q * kMR, j0, out);
            else any_slice_tile(a, K, sj, off, rows, q * kMR, j0, n, out);
          }
        }
      }
    };
    const int64_t block_units = groups * blocks;
    if (threads > 1 && block_units > 1) pool->parallel_for(block_units, 1, block_body);
    else block_body(0, block_units);
    return;
  }

  enough_units(tiles);
  const int64_t units = groups * tiles;
  auto body = [&](int64_t ub, int64_t ue) {
    alignas(64) float part[kMaxGroup * kMR * kNR];
    for (int64_t u = ub; u < ue; ++u) {
      const int64_t gi = u / tiles, ti = u % tiles;
      const int64_t q0 = gi * group, q1 = std::min(panels, q0 + group);
      const int64_t j0 = ti * kNR, n = std::min<int64_t>(kNR, plan.grid - j0);
      const float* sj = src + j0;
      if (n <= 4) {
        for (int64_t q = q0; q < q1; ++q) {
          const int rows = static_cast<int>(std::min<int64_t>(kMR, M - q * kMR));
          any_narrow_tile(n, wd, Mp, KC, K, q, sj, off, rows, q * kMR, j0, out);
        }
        continue;
      }
      for (int64_t kb = 0; kb < K; kb += KC) {
        const int64_t ke = std::min(K, kb + KC);
        for (int64_t q = q0; q < q1; ++q) {
          const int rows = static_cast<int>(std::min<int64_t>(kMR, M - q * kMR));
          const bool pf = q + 1 < q1;
          float* pq = part + (q - q0) * kMR * kNR;
          any_direct_tile(mask_tail, wd, Mp, KC, K, kb, ke, q, pf, sj, off, pq, rows, q * kMR, j0, n, out);
        }
      }
    }
  };
  if (threads > 1 && units > 1) pool->parallel_for(units, 1, body);
  else body(0, units);
}

}  // namespace dlrt::cpu::simd::DLRT_SIMD_NS
