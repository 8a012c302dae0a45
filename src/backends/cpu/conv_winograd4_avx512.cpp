// Winograd F(4x4, 3x3) on AVX-512 (see conv_winograd.h): 4x4 outputs per
// tile from a 6x6 input patch, 36 products per channel pair instead of 144.
// Interpolation points 0, ±1, ±2 and ∞:
//
//   Bᵀ = [4  0 -5  0  1  0]   G = [ 1/4     0    0 ]   Aᵀ = [1  1  1  1  1  0]
//        [0 -4 -4  1  1  0]       [-1/6 -1/6 -1/6 ]        [0  1 -1  2 -2  0]
//        [0  4 -4 -1  1  0]       [-1/6  1/6 -1/6 ]        [0  1  1  4  4  0]
//        [0 -2 -1  2  1  0]       [1/24 1/12  1/6 ]        [0  1 -1  8 -8  1]
//        [0  2 -1 -2  1  0]       [1/24 -1/12 1/6 ]
//        [0  4  0 -5  0  1]       [   0    0    1 ]
//
// One image runs in three parallel phases, like F(2x2, 3x3), on blocks of
// tiles small enough that the block's V and M stay in L2:
//  1. per input channel: the plane is copied zero-padded, then 16 tiles at
//     a time (one per lane, gathered from the padded plane) are transformed
//     into V [36][C][16-tile block];
//  2. the 36 GEMMs M_e = U_e · V_e of the block;
//  3. per output channel: 16 tiles at a time back to 4x4 outputs each,
//     scattered to their places in y; the epilogue runs over the plane once
//     every block is done.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <vector>

#include "backends/cpu/conv_winograd.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/scratch.h"
#include "backends/cpu/vec_avx512.h"

namespace dlrt::cpu {

namespace {
std::atomic<uint64_t> g_runs4{0};
}  // namespace

uint64_t conv_winograd4_runs() { return g_runs4.load(std::memory_order_relaxed); }

std::shared_ptr<const WinogradFilters> winograd4_filters(const float* w, int64_t M, int64_t C) {
  static constexpr double G[6][3] = {{1.0 / 4, 0.0, 0.0},           {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                     {-1.0 / 6, 1.0 / 6, -1.0 / 6}, {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                     {1.0 / 24, -1.0 / 12, 1.0 / 6}, {0.0, 0.0, 1.0}};
  std::vector<float> u(static_cast<size_t>(36 * M * C));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t c = 0; c < C; ++c) {
      const float* g = w + (m * C + c) * 9;
      double t[6][3];  // G g, in double: U is rounded once
      for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 3; ++j) t[i][j] = G[i][0] * g[j] + G[i][1] * g[3 + j] + G[i][2] * g[6 + j];
      for (int i = 0; i < 6; ++i)
        for (int l = 0; l < 6; ++l)
          u[static_cast<size_t>(((i * 6 + l) * M + m) * C + c)] =
              static_cast<float>(t[i][0] * G[l][0] + t[i][1] * G[l][1] + t[i][2] * G[l][2]);
    }
  auto f = std::make_shared<WinogradFilters>();
  f->M = M;
  f->C = C;
  f->tile = 4;
  for (int e = 0; e < 36; ++e) f->u.push_back(PackedMatrix::pack_a(false, M, C, u.data() + e * M * C, C));
  return f;
}

#ifdef DLRT_HAVE_AVX512_PATHS

namespace {

constexpr int kLanes = 16;

struct Dims4 {
  int64_t C, M, TH, TW, T, Hp, Wp;
  int64_t block;  // tiles per block, a multiple of kLanes
};

// y = Bᵀ x for one 6-vector (x and y may not alias).
DLRT_AVX512 __attribute__((always_inline)) inline void bt6(const __m512 (&x)[6], __m512 (&y)[6]) {
  const __m512 four = _mm512_set1_ps(4.0f), five = _mm512_set1_ps(-5.0f), two = _mm512_set1_ps(2.0f);
  y[0] = _mm512_fmadd_ps(four, x[0], _mm512_fmadd_ps(five, x[2], x[4]));
  y[1] = _mm512_fnmadd_ps(four, _mm512_add_ps(x[1], x[2]), _mm512_add_ps(x[3], x[4]));
  y[2] = _mm512_fmadd_ps(four, _mm512_sub_ps(x[1], x[2]), _mm512_sub_ps(x[4], x[3]));
  y[3] = _mm512_fmadd_ps(two, _mm512_sub_ps(x[3], x[1]), _mm512_sub_ps(x[4], x[2]));
  y[4] = _mm512_fmadd_ps(two, _mm512_sub_ps(x[1], x[3]), _mm512_sub_ps(x[4], x[2]));
  y[5] = _mm512_fmadd_ps(four, x[1], _mm512_fmadd_ps(five, x[3], x[5]));
}

// y = Aᵀ x for one 6-vector.
DLRT_AVX512 __attribute__((always_inline)) inline void at6(const __m512 (&x)[6], __m512 (&y)[4]) {
  const __m512 p12 = _mm512_add_ps(x[1], x[2]), m12 = _mm512_sub_ps(x[1], x[2]);
  const __m512 p34 = _mm512_add_ps(x[3], x[4]), m34 = _mm512_sub_ps(x[3], x[4]);
  y[0] = _mm512_add_ps(_mm512_add_ps(x[0], p12), p34);
  y[1] = _mm512_fmadd_ps(_mm512_set1_ps(2.0f), m34, m12);
  y[2] = _mm512_fmadd_ps(_mm512_set1_ps(4.0f), p34, p12);
  y[3] = _mm512_add_ps(_mm512_fmadd_ps(_mm512_set1_ps(8.0f), m34, m12), x[5]);
}

// Tile t's (row, column) of tiles, for the 16 tiles from t0 (tiles past T
// repeat the last one: computed, never stored).
struct TileLanes {
  alignas(64) int32_t th[kLanes];
  alignas(64) int32_t tw[kLanes];
  __mmask16 valid;
};

inline void tile_lanes(const Dims4& d, int64_t t0, TileLanes& tl) {
  tl.valid = 0;
  for (int j = 0; j < kLanes; ++j) {
    const int64_t t = std::min(t0 + j, d.T - 1);
    tl.th[j] = static_cast<int32_t>(t / d.TW);
    tl.tw[j] = static_cast<int32_t>(t % d.TW);
    if (t0 + j < d.T) tl.valid = static_cast<__mmask16>(tl.valid | (1u << j));
  }
}

// Phase 1 for channel c and tiles [b0, b0 + d.block): V[e][c][t - b0] for the 36 e.
DLRT_AVX512 void input_transform(const Dims4& d, const float* pad, float* V, int64_t c, int64_t b0) {
  const int64_t nb = std::min(d.block, d.T - b0);
  const int64_t ld = d.block;
  for (int64_t t0 = b0; t0 < b0 + nb; t0 += kLanes) {
    TileLanes tl;
    tile_lanes(d, t0, tl);
    // Offset of each tile's patch corner in the padded plane.
    const __m512i base = _mm512_add_epi32(
        _mm512_mullo_epi32(_mm512_load_si512(tl.th), _mm512_set1_epi32(static_cast<int32_t>(4 * d.Wp))),
        _mm512_slli_epi32(_mm512_load_si512(tl.tw), 2));
    __m512 h[6][6];  // h[r][k] = (d Bᵀᵀ)[r][k]: patch row r transformed along its columns
#pragma GCC unroll 6
    for (int r = 0; r < 6; ++r) {
      __m512 x[6];
#pragma GCC unroll 6
      for (int q = 0; q < 6; ++q)
        x[q] = _mm512_i32gather_ps(_mm512_add_epi32(base, _mm512_set1_epi32(static_cast<int32_t>(r * d.Wp + q))), pad,
                                   4);
      bt6(x, h[r]);
    }
    float* v = V + c * ld + (t0 - b0);
    const int64_t CT = d.C * ld;
#pragma GCC unroll 6
    for (int k = 0; k < 6; ++k) {
      const __m512 col[6] = {h[0][k], h[1][k], h[2][k], h[3][k], h[4][k], h[5][k]};
      __m512 out[6];
      bt6(col, out);
#pragma GCC unroll 6
      for (int i = 0; i < 6; ++i) _mm512_store_ps(v + (i * 6 + k) * CT, out[i]);
    }
  }
}

// Phase 3 for output channel m and tiles [b0, b0 + d.block): Mo[e][m][t - b0]
// back to 4x4 outputs, stored in ym (raw sums).
DLRT_AVX512 void output_transform(const WinogradGeometry& g, const Dims4& d, const float* Mo, float* ym, int64_t m,
                                  int64_t b0) {
  const int64_t nb = std::min(d.block, d.T - b0);
  const int64_t ld = d.block, MT = d.M * ld;
  for (int64_t t0 = b0; t0 < b0 + nb; t0 += kLanes) {
    TileLanes tl;
    tile_lanes(d, t0, tl);
    const __m512i th = _mm512_load_si512(tl.th), tw = _mm512_load_si512(tl.tw);
    const __m512i base = _mm512_add_epi32(
        _mm512_mullo_epi32(th, _mm512_set1_epi32(static_cast<int32_t>(4 * g.out_w))), _mm512_slli_epi32(tw, 2));
    // Rows and columns of output left below/right of each tile's corner.
    const __m512i rows_left = _mm512_sub_epi32(_mm512_set1_epi32(static_cast<int32_t>(g.out_h)), _mm512_slli_epi32(th, 2));
    const __m512i cols_left = _mm512_sub_epi32(_mm512_set1_epi32(static_cast<int32_t>(g.out_w)), _mm512_slli_epi32(tw, 2));
    const float* src = Mo + m * ld + (t0 - b0);
    __m512 s[4][6];  // s[j][k] = (Aᵀ M)[j][k]
#pragma GCC unroll 6
    for (int k = 0; k < 6; ++k) {
      __m512 col[6];
#pragma GCC unroll 6
      for (int i = 0; i < 6; ++i) col[i] = _mm512_maskz_load_ps(tl.valid, src + (i * 6 + k) * MT);
      __m512 out[4];
      at6(col, out);
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) s[j][k] = out[j];
    }
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      __m512 y[4];
      at6(s[j], y);
      const __mmask16 row_ok =
          _mm512_mask_cmpgt_epi32_mask(tl.valid, rows_left, _mm512_set1_epi32(j));
      const __m512i row_base = _mm512_add_epi32(base, _mm512_set1_epi32(static_cast<int32_t>(j * g.out_w)));
#pragma GCC unroll 4
      for (int l = 0; l < 4; ++l) {
        const __mmask16 ok = _mm512_mask_cmpgt_epi32_mask(row_ok, cols_left, _mm512_set1_epi32(l));
        _mm512_mask_i32scatter_ps(ym, ok, _mm512_add_epi32(row_base, _mm512_set1_epi32(l)), y[l], 4);
      }
    }
  }
}

// The zero-padded plane of channel xc: row r, column q hold x[r - pad_top][q - pad_left].
void pad_plane(const WinogradGeometry& g, const Dims4& d, const float* xc, float* pad) {
  for (int64_t r = 0; r < d.Hp; ++r) {
    float* row = pad + r * d.Wp;
    const int64_t ih = r - g.pad_top;
    if (ih < 0 || ih >= g.in_h) {
      std::memset(row, 0, static_cast<size_t>(d.Wp) * sizeof(float));
      continue;
    }
    std::memset(row, 0, static_cast<size_t>(g.pad_left) * sizeof(float));
    const int64_t n = std::max<int64_t>(0, std::min(g.in_w, d.Wp - g.pad_left));
    std::memcpy(row + g.pad_left, xc + ih * g.in_w, static_cast<size_t>(n) * sizeof(float));
    std::memset(row + g.pad_left + n, 0, static_cast<size_t>(d.Wp - g.pad_left - n) * sizeof(float));
  }
}

}  // namespace

void conv_winograd4_avx512(const WinogradFilters& f, const WinogradGeometry& g, const float* x, float* y,
                           const GemmEpilogue& ep, ThreadPool& pool) {
  Dims4 d;
  d.C = f.C;
  d.M = f.M;
  d.TH = ceil_div(g.out_h, 4);
  d.TW = ceil_div(g.out_w, 4);
  d.T = d.TH * d.TW;
  d.Hp = 4 * d.TH + 2;
  d.Wp = 4 * d.TW + 2;
  // Tiles per block: V and M of a block (36 x (C + M) floats per tile)
  // within about kWinograd4BlockBytes, the blocks of even size.
  const int64_t per_tile = 36 * (d.C + d.M) * int64_t{sizeof(float)};
  const int64_t blocks = ceil_div(d.T * per_tile, kWinograd4BlockBytes);
  d.block = ceil_div(ceil_div(d.T, blocks), kLanes) * kLanes;
  const int64_t in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
  thread_local AlignedScratch scratch;  // V, then Mo, then the padded planes
  float* V = scratch.get<float>(static_cast<size_t>(36 * (d.C + d.M) * d.block + d.C * d.Hp * d.Wp));
  float* Mo = V + 36 * d.C * d.block;
  float* pads = Mo + 36 * d.M * d.block;

  pool.parallel_for(d.C, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) pad_plane(g, d, x + c * in_plane, pads + c * d.Hp * d.Wp);
  });
  for (int64_t b0 = 0; b0 < d.T; b0 += d.block) {
    const int64_t nb = std::min(d.block, d.T - b0);
    pool.parallel_for(d.C, 1, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c) input_transform(d, pads + c * d.Hp * d.Wp, V, c, b0);
    });
    pool.parallel_for(36, 1, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k)
        sgemm_ex(d.M, nb, d.C, 1.0f, SgemmOperand{nullptr, 0, false, f.u[static_cast<size_t>(k)].get(), nullptr},
                 SgemmOperand{V + k * d.C * d.block, d.block, false, nullptr, nullptr}, 0.0f,
                 Mo + k * d.M * d.block, d.block, nullptr, nullptr);
    });
    pool.parallel_for(d.M, 1, [&](int64_t b, int64_t e) {
      for (int64_t m = b; m < e; ++m) output_transform(g, d, Mo, y + m * out_plane, m, b0);
    });
  }
  if (!ep.empty()) {
    pool.parallel_for(d.M, 1, [&](int64_t b, int64_t e) {
      for (int64_t m = b; m < e; ++m) apply_epilogue(ep, y + m * out_plane, out_plane, m, 0, 1, out_plane);
    });
  }
  g_runs4.fetch_add(1, std::memory_order_relaxed);
}

#else

void conv_winograd4_avx512(const WinogradFilters&, const WinogradGeometry&, const float*, float*, const GemmEpilogue&,
                           ThreadPool&) {}

#endif

}  // namespace dlrt::cpu
