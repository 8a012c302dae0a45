// Kernel body (simd/simd.h), compiled once per vector width by
// conv_winograd4.cpp: Winograd F(4x4, 3x3) on NCHW planes, lanes holding
// tiles (see conv_winograd4.cpp for the phases).

namespace dlrt::cpu::simd::DLRT_SIMD_NS {

namespace winograd4_nchw {
namespace {  // internal linkage: per translation unit and width, open to inter-procedural optimisation

#include "backends/cpu/kernels/winograd4_transforms_simd.h"

using winograd4::at6;
using winograd4::bt6;
using winograd4::bt6_column;

struct Dims4 {
  int64_t C, M, TH, TW, Hp, Wp;  // channels, tile rows and columns, padded plane
  int64_t block_rows;            // tile rows per block
  int64_t block;                 // tiles per block: block_rows * TW
  int64_t ld;                    // floats between V (and M) rows: block, plus slack where stores are not compressed
};

// Lanes hold tiles in groups of 4 consecutive tiles of a tile row (one
// 128-bit block each, lane 4a + s: tile s of group a). A block's tile rows
// are cut into G = ceil(TW / 4) groups each, taken kBlocks at a time in
// (row, group) order, so the valid lanes of successive vectors are
// successive tiles of the block (V and M columns): stored packed, loaded
// expanded.
struct Groups {
  int64_t row[kBlocks];  // tile row of group a
  int64_t col[kBlocks];  // first output (and patch) column of group a: 16 * its group index
  Lanes valid;           // lanes holding a tile of the block
  int count(int a) const { return __builtin_popcount((valid >> (4 * a)) & 0xFu); }  // tiles in group a
};

inline Groups groups_at(const Dims4& d, int64_t th0, int64_t rows, int64_t q0) {
  const int64_t G = ceil_div(d.TW, 4), n = rows * G;
  Groups gr;
  gr.valid = 0;
  for (int a = 0; a < kBlocks; ++a) {
    const int64_t q = std::min(q0 + a, n - 1);
    const int64_t gi = q % G;
    gr.row[a] = th0 + q / G;
    gr.col[a] = 16 * gi;
    if (q0 + a < n) {
      const int64_t tiles = std::min<int64_t>(4, d.TW - 4 * gi);
      gr.valid |= ((1u << tiles) - 1u) << (4 * a);
    }
  }
  return gr;
}

constexpr Lanes kAllLanes = kLanes >= 32 ? ~Lanes{0} : (Lanes{1} << kLanes) - 1u;

// The valid lanes of v packed at p. Without a native compress, a partial
// group's block is stored whole: up to 3 floats past the packed ones are
// overwritten (Dims4::ld leaves that slack).
__attribute__((always_inline)) inline void store_tiles(float* p, const Groups& gr, Vf v) {
  if constexpr (kNativeCompress) {
    compress_store(p, gr.valid, v);
  } else if (gr.valid == kAllLanes) {
    storeu(p, v);
  } else {
    for (int a = 0; a < kBlocks; ++a)
      if (gr.count(a) > 0) {
        store_block(p, v, a);
        p += gr.count(a);
      }
  }
}

// The inverse: packed tiles at p into their lanes (others unspecified
// where compress is not native; up to 3 floats read past the packed ones).
__attribute__((always_inline)) inline Vf load_tiles(const float* p, const Groups& gr) {
  if constexpr (kNativeCompress) {
    return expand_load(p, gr.valid);
  } else {
    if (gr.valid == kAllLanes) return loadu(p);
    const float* q[kBlocks];
    for (int a = 0; a < kBlocks; ++a) {
      q[a] = p;
      p += gr.count(a);
    }
    return load_blocks(q);
  }
}

// Phase 1 for channel c and the block's tile rows [th0, th0 + rows):
// V[e][c][tile of the block] for the 36 e, from `pad`, the padded rows
// [4 th0, 4 (th0 + rows) + 2) of the channel's plane, d.Wp floats apart.
void input_transform(const Dims4& d, const float* pad, float* V, int64_t c, int64_t th0, int64_t rows) {
  const int64_t ld = d.ld, CT = d.C * ld, n = rows * ceil_div(d.TW, 4);
  float* v = V + c * ld;
  for (int64_t q0 = 0; q0 < n; q0 += kBlocks) {
    const Groups gr = groups_at(d, th0, rows, q0);
    Vf h[6][6];  // h[r][k]: patch row r transformed along its columns
#pragma GCC unroll 6
    for (int r = 0; r < 6; ++r) {
      const float* p[kBlocks];
      for (int a = 0; a < kBlocks; ++a) p[a] = pad + (4 * (gr.row[a] - th0) + r) * d.Wp + gr.col[a];
      const float* p2[kBlocks];
      for (int a = 0; a < kBlocks; ++a) p2[a] = p[a] + 2;
      Vf lo[4], hi[4];  // patch columns 0-3 and 2-5
      deinterleave4(p, lo);
      deinterleave4(p2, hi);
      const Vf x[6] = {lo[0], lo[1], lo[2], lo[3], hi[2], hi[3]};
      bt6(x, h[r]);
    }
#pragma GCC unroll 6
    for (int k = 0; k < 6; ++k) {
      Vf out[6];
      bt6_column(h, k, out);
#pragma GCC unroll 6
      for (int i = 0; i < 6; ++i) store_tiles(v + (i * 6 + k) * CT, gr, out[i]);
    }
    v += __builtin_popcount(gr.valid);
  }
}

// Phase 3 for output channel m and the block's tile rows: Mo[e][m][tile]
// back to 4x4 outputs, stored in ym a group's 16 columns at a time (raw sums).
void output_transform(const WinogradGeometry& g, const Dims4& d, const float* Mo, float* ym, int64_t m, int64_t th0,
                      int64_t rows) {
  constexpr int kPerGroup = 16 / kLanes;  // vectors holding a group's 16 columns
  const int64_t ld = d.ld, MT = d.M * ld, n = rows * ceil_div(d.TW, 4);
  const float* src = Mo + m * ld;
  for (int64_t q0 = 0; q0 < n; q0 += kBlocks) {
    const Groups gr = groups_at(d, th0, rows, q0);
    Vf s[4][6];  // s[j][k] = (Aᵀ M)[j][k]
#pragma GCC unroll 6
    for (int k = 0; k < 6; ++k) {
      Vf col[6];
#pragma GCC unroll 6
      for (int i = 0; i < 6; ++i) col[i] = load_tiles(src + (i * 6 + k) * MT, gr);
      Vf out[4];
      at6(col, out);
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) s[j][k] = out[j];
    }
    src += __builtin_popcount(gr.valid);
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      Vf y[4], o[4];
      at6(s[j], y);
      interleave4(y, o);
#pragma GCC unroll 4
      for (int a = 0; a < kBlocks; ++a) {
        const int64_t oh = 4 * gr.row[a] + j;
        if (__builtin_expect(((gr.valid >> (4 * a)) & 0xFu) == 0 || oh >= g.out_h, 0)) continue;
#pragma GCC unroll 4
        for (int u = 0; u < kPerGroup; ++u)
          store_first(ym + oh * g.out_w + gr.col[a] + u * kLanes, o[a * kPerGroup + u],
                      g.out_w - gr.col[a] - u * kLanes);
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
}  // namespace winograd4_nchw

void conv_winograd4(const WinogradFilters& f, const WinogradGeometry& g, const float* x, float* y,
                    const GemmEpilogue& ep, ThreadPool& pool) {
  using namespace winograd4_nchw;
  Dims4 d;
  d.C = f.C;
  d.M = f.M;
  d.TH = ceil_div(g.out_h, 4);
  d.TW = ceil_div(g.out_w, 4);
  d.Hp = 4 * d.TH + 2;
  // A group of 4 tiles reads 16 + 2 floats from its first patch column
  // (deinterleave4 at +0 and +2): the last group's spare lanes read zeros.
  d.Wp = 16 * ceil_div(d.TW, 4) + 4;
  // Tile rows per block: V and M of a block (36 x (C + M) floats per tile)
  // within about kWinograd4BlockBytes, the blocks of even size.
  const int64_t row_bytes = 36 * (d.C + d.M) * d.TW * int64_t{sizeof(float)};
  const int64_t blocks = std::min(d.TH, ceil_div(d.TH * row_bytes, kWinograd4BlockBytes));
  d.block_rows = ceil_div(d.TH, blocks);
  d.block = d.block_rows * d.TW;
  d.ld = kNativeCompress ? d.block : d.block + 4;
  const int64_t in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
  thread_local AlignedScratch scratch;  // V, then Mo (+ the slack load_tiles may read)
  float* V = scratch.get<float>(static_cast<size_t>(36 * (d.C + d.M) * d.ld + 4));
  float* Mo = V + 36 * d.C * d.ld;

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
    winograd_products(f, nb, d.ld, V, Mo, pool);
    pool.parallel_for(d.M, 1, [&](int64_t b, int64_t e) {
      for (int64_t m = b; m < e; ++m) {
        output_transform(g, d, Mo, y + m * out_plane, m, th0, rows);
        if (last && !ep.empty()) apply_epilogue(ep, y + m * out_plane, out_plane, m, 0, 1, out_plane);
      }
    });
  }
}

}  // namespace dlrt::cpu::simd::DLRT_SIMD_NS
