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
// One image: three parallel phases, like F(2x2, 3x3), run per block of
// tile rows (kWinograd4BlockBytes bounds a block's V and M):
//  1. per input channel: the rows the block's patches read copied
//     zero-padded into a buffer of the thread, then 16 tiles at a time (4 groups of 4 consecutive
//     tiles of a tile row, their patch rows loaded whole and transposed in
//     registers) are transformed into V [36][C][tiles of the block];
//  2. the 36 GEMMs M_e = U_e · V_e of the block;
//  3. per output channel: 16 tiles at a time back to 4x4 outputs each,
//     transposed back into 16 consecutive output columns per group and row.
// The epilogue runs over each plane after the last block's output
// transform of it. Against one gather per patch element and one scatter
// per output (resnet18 1 thread, per conv: transforms 0.45 -> 0.24 ms).
#include <algorithm>
#include <atomic>
#include <memory>
#include <vector>

#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/conv_winograd.h"
#include "backends/cpu/kernels/winograd4_transforms_avx512.h"
#include "backends/cpu/kernels/vec_avx512.h"
#include "backends/cpu/scratch.h"

namespace dlrt::cpu {

namespace {
std::atomic<uint64_t> g_runs4{0};
}  // namespace

uint64_t conv_winograd4_runs() { return g_runs4.load(std::memory_order_relaxed); }
void count_conv_winograd4_run() { g_runs4.fetch_add(1, std::memory_order_relaxed); }

std::shared_ptr<const WinogradFilters> winograd4_filters(const float* w, int64_t M, int64_t C, bool transposed) {
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
  f->transposed = transposed;
  for (int e = 0; e < 36; ++e)
    f->u.push_back(transposed ? PackedMatrix::pack_b(true, C, M, u.data() + e * M * C, C)
                              : PackedMatrix::pack_a(false, M, C, u.data() + e * M * C, C));
  return f;
}

#ifdef DLRT_HAVE_AVX512_PATHS

namespace {

using winograd4::at6;
using winograd4::bt6;
using winograd4::bt6_column;

struct Dims4 {
  int64_t C, M, TH, TW, Hp, Wp;  // channels, tile rows and columns, padded plane
  int64_t block_rows;  // tile rows per block
  int64_t block;       // tiles per block: block_rows * TW
};

// Lanes hold tiles in groups of 4 consecutive tiles of a tile row (128
// bits each, lane 4a + s: tile s of group a). A block's tile rows are cut
// into G = ceil(TW / 4) groups each, taken 4 at a time in (row, group)
// order, so the valid lanes of successive vectors are successive tiles of
// the block (V and M columns): stored compressed, loaded expanded.
struct Groups {
  int64_t row[4];   // tile row of group a
  int64_t col[4];   // first output (and patch) column of group a: 16 * its group index
  __mmask16 valid;  // lanes holding a tile of the block
};

inline Groups groups_at(const Dims4& d, int64_t th0, int64_t rows, int64_t q0) {
  const int64_t G = ceil_div(d.TW, 4), n = rows * G;
  Groups gr;
  gr.valid = 0;
  for (int a = 0; a < 4; ++a) {
    const int64_t q = std::min(q0 + a, n - 1);
    const int64_t gi = q % G;
    gr.row[a] = th0 + q / G;
    gr.col[a] = 16 * gi;
    if (q0 + a < n) {
      const int64_t tiles = std::min<int64_t>(4, d.TW - 4 * gi);
      gr.valid = static_cast<__mmask16>(gr.valid | (((1u << tiles) - 1u) << (4 * a)));
    }
  }
  return gr;
}

// x[q] lane 4a + s = p[a][4s + q] for q < 4 (patch column q of tile s of
// group a, whose patches start at p[a]): a transpose of 4 x 4 blocks of 128
// bits, then one of the floats within each block.
DLRT_AVX512 __attribute__((always_inline)) inline void strided4(const float* const (&p)[4], int64_t off,
                                                                __m512 (&x)[4]) {
  const __m512 l0 = _mm512_loadu_ps(p[0] + off), l1 = _mm512_loadu_ps(p[1] + off), l2 = _mm512_loadu_ps(p[2] + off),
               l3 = _mm512_loadu_ps(p[3] + off);
  // Block a of b_s: block s of l_a (tile s of group a).
  const __m512 u0 = _mm512_shuffle_f32x4(l0, l1, 0x44), u1 = _mm512_shuffle_f32x4(l0, l1, 0xEE);
  const __m512 u2 = _mm512_shuffle_f32x4(l2, l3, 0x44), u3 = _mm512_shuffle_f32x4(l2, l3, 0xEE);
  const __m512 b0 = _mm512_shuffle_f32x4(u0, u2, 0x88), b1 = _mm512_shuffle_f32x4(u0, u2, 0xDD);
  const __m512 b2 = _mm512_shuffle_f32x4(u1, u3, 0x88), b3 = _mm512_shuffle_f32x4(u1, u3, 0xDD);
  // Within block a: float s of x[q] is float q of b_s's block a.
  const __m512 t0 = _mm512_unpacklo_ps(b0, b1), t1 = _mm512_unpackhi_ps(b0, b1);
  const __m512 t2 = _mm512_unpacklo_ps(b2, b3), t3 = _mm512_unpackhi_ps(b2, b3);
  x[0] = _mm512_shuffle_ps(t0, t2, 0x44);
  x[1] = _mm512_shuffle_ps(t0, t2, 0xEE);
  x[2] = _mm512_shuffle_ps(t1, t3, 0x44);
  x[3] = _mm512_shuffle_ps(t1, t3, 0xEE);
}

// The inverse: y[l] lane 4a + s (column l of tile s of group a) to o[a]
// float 4s + l, the group's 16 output columns in order.
DLRT_AVX512 __attribute__((always_inline)) inline void interleave4(const __m512 (&y)[4], __m512 (&o)[4]) {
  // Block a of w_s: tile s of group a, its 4 columns.
  const __m512 u0 = _mm512_unpacklo_ps(y[0], y[1]), u1 = _mm512_unpackhi_ps(y[0], y[1]);
  const __m512 u2 = _mm512_unpacklo_ps(y[2], y[3]), u3 = _mm512_unpackhi_ps(y[2], y[3]);
  const __m512 w0 = _mm512_shuffle_ps(u0, u2, 0x44), w1 = _mm512_shuffle_ps(u0, u2, 0xEE);
  const __m512 w2 = _mm512_shuffle_ps(u1, u3, 0x44), w3 = _mm512_shuffle_ps(u1, u3, 0xEE);
  // o[a] block s = w_s block a.
  const __m512 v0 = _mm512_shuffle_f32x4(w0, w1, 0x44), v1 = _mm512_shuffle_f32x4(w0, w1, 0xEE);
  const __m512 v2 = _mm512_shuffle_f32x4(w2, w3, 0x44), v3 = _mm512_shuffle_f32x4(w2, w3, 0xEE);
  o[0] = _mm512_shuffle_f32x4(v0, v2, 0x88);
  o[1] = _mm512_shuffle_f32x4(v0, v2, 0xDD);
  o[2] = _mm512_shuffle_f32x4(v1, v3, 0x88);
  o[3] = _mm512_shuffle_f32x4(v1, v3, 0xDD);
}

// Phase 1 for channel c and the block's tile rows [th0, th0 + rows):
// V[e][c][tile of the block] for the 36 e, from `pad`, the padded rows
// [4 th0, 4 (th0 + rows) + 2) of the channel's plane, d.Wp floats apart.
DLRT_AVX512 void input_transform(const Dims4& d, const float* pad, float* V, int64_t c, int64_t th0, int64_t rows) {
  const int64_t ld = d.block, CT = d.C * ld, n = rows * ceil_div(d.TW, 4);
  float* v = V + c * ld;
  for (int64_t q0 = 0; q0 < n; q0 += 4) {
    const Groups gr = groups_at(d, th0, rows, q0);
    __m512 h[6][6];  // h[r][k]: patch row r transformed along its columns
#pragma GCC unroll 6
    for (int r = 0; r < 6; ++r) {
      const float* const p[4] = {pad + (4 * (gr.row[0] - th0) + r) * d.Wp + gr.col[0],
                                 pad + (4 * (gr.row[1] - th0) + r) * d.Wp + gr.col[1],
                                 pad + (4 * (gr.row[2] - th0) + r) * d.Wp + gr.col[2],
                                 pad + (4 * (gr.row[3] - th0) + r) * d.Wp + gr.col[3]};
      __m512 lo[4], hi[4];  // patch columns 0-3 and 2-5
      strided4(p, 0, lo);
      strided4(p, 2, hi);
      const __m512 x[6] = {lo[0], lo[1], lo[2], lo[3], hi[2], hi[3]};
      bt6(x, h[r]);
    }
#pragma GCC unroll 6
    for (int k = 0; k < 6; ++k) {
      __m512 out[6];
      bt6_column(h, k, out);
#pragma GCC unroll 6
      for (int i = 0; i < 6; ++i) _mm512_mask_compressstoreu_ps(v + (i * 6 + k) * CT, gr.valid, out[i]);
    }
    v += __builtin_popcount(gr.valid);
  }
}

// Phase 3 for output channel m and the block's tile rows: Mo[e][m][tile]
// back to 4x4 outputs, stored in ym a group's 16 columns at a time (raw sums).
DLRT_AVX512 void output_transform(const WinogradGeometry& g, const Dims4& d, const float* Mo, float* ym, int64_t m,
                                  int64_t th0, int64_t rows) {
  const int64_t ld = d.block, MT = d.M * ld, n = rows * ceil_div(d.TW, 4);
  const float* src = Mo + m * ld;
  for (int64_t q0 = 0; q0 < n; q0 += 4) {
    const Groups gr = groups_at(d, th0, rows, q0);
    __m512 s[4][6];  // s[j][k] = (Aᵀ M)[j][k]
#pragma GCC unroll 6
    for (int k = 0; k < 6; ++k) {
      __m512 col[6];
#pragma GCC unroll 6
      for (int i = 0; i < 6; ++i) col[i] = _mm512_maskz_expandloadu_ps(gr.valid, src + (i * 6 + k) * MT);
      __m512 out[4];
      at6(col, out);
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) s[j][k] = out[j];
    }
    src += __builtin_popcount(gr.valid);
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      __m512 y[4], o[4];
      at6(s[j], y);
      interleave4(y, o);
#pragma GCC unroll 4
      for (int a = 0; a < 4; ++a) {
        const int64_t oh = 4 * gr.row[a] + j;
        if (((gr.valid >> (4 * a)) & 0xF) == 0 || oh >= g.out_h) continue;
        _mm512_mask_storeu_ps(ym + oh * g.out_w + gr.col[a], avx512::tail_mask(g.out_w - gr.col[a]), o[a]);
      }
    }
  }
}

// Rows [r0, r1) of channel plane xc zero-padded (padded row r is input row
// r - pad_top, column j input column j - pad_left), wp floats each, at dst.
void pad_rows(const WinogradGeometry& g, const float* xc, int64_t r0, int64_t r1, int64_t wp, float* dst) {
  const int64_t n = std::max<int64_t>(0, std::min(g.in_w, wp - g.pad_left));
  for (int64_t r = r0; r < r1; ++r, dst += wp) {
    const int64_t ih = r - g.pad_top;
    if (ih < 0 || ih >= g.in_h) {
      std::fill(dst, dst + wp, 0.0f);
      continue;
    }
    std::fill(dst, dst + g.pad_left, 0.0f);
    std::copy(xc + ih * g.in_w, xc + ih * g.in_w + n, dst + g.pad_left);
    std::fill(dst + g.pad_left + n, dst + wp, 0.0f);
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
  d.Hp = 4 * d.TH + 2;
  // A group of 4 tiles reads 16 + 2 floats from its first patch column
  // (strided4 at +0 and +2): the last group's spare lanes read zeros.
  d.Wp = 16 * ceil_div(d.TW, 4) + 4;
  // Tile rows per block: V and M of a block (36 x (C + M) floats per tile)
  // within about kWinograd4BlockBytes, the blocks of even size.
  const int64_t row_bytes = 36 * (d.C + d.M) * d.TW * int64_t{sizeof(float)};
  const int64_t blocks = std::min(d.TH, ceil_div(d.TH * row_bytes, kWinograd4BlockBytes));
  d.block_rows = ceil_div(d.TH, blocks);
  d.block = d.block_rows * d.TW;
  const int64_t in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
  thread_local AlignedScratch scratch;  // V, then Mo
  float* V = scratch.get<float>(static_cast<size_t>(36 * (d.C + d.M) * d.block));
  float* Mo = V + 36 * d.C * d.block;

  // Three parallel sections per block: the first pads the rows of each
  // channel that the block's patches read into a small buffer of its
  // thread (in cache when they are transformed, where whole padded planes
  // would be C times that and stream through memory) and transforms them;
  // the last block's third also runs the epilogue on the planes it completes.
  for (int64_t th0 = 0; th0 < d.TH; th0 += d.block_rows) {
    const int64_t rows = std::min(d.block_rows, d.TH - th0), nb = rows * d.TW;
    const bool last = th0 + rows >= d.TH;
    pool.parallel_for(d.C, 1, [&](int64_t b, int64_t e) {
      thread_local AlignedScratch pad_scratch;  // the padded rows of one channel
      float* pad = pad_scratch.get<float>(static_cast<size_t>((4 * rows + 2) * d.Wp));
      for (int64_t c = b; c < e; ++c) {
        pad_rows(g, x + c * in_plane, 4 * th0, 4 * (th0 + rows) + 2, d.Wp, pad);
        input_transform(d, pad, V, c, th0, rows);
      }
    });
    winograd_products(f, nb, d.block, V, Mo, pool);
    pool.parallel_for(d.M, 1, [&](int64_t b, int64_t e) {
      for (int64_t m = b; m < e; ++m) {
        output_transform(g, d, Mo, y + m * out_plane, m, th0, rows);
        if (last && !ep.empty()) apply_epilogue(ep, y + m * out_plane, out_plane, m, 0, 1, out_plane);
      }
    });
  }
  g_runs4.fetch_add(1, std::memory_order_relaxed);
}

#else

void conv_winograd4_avx512(const WinogradFilters&, const WinogradGeometry&, const float*, float*, const GemmEpilogue&,
                           ThreadPool&) {}

#endif

}  // namespace dlrt::cpu
