// What conv_blocked.cpp (dispatch, portable loops) and conv_blocked_vec.cpp
// (the vector kernels, conv_blocked_simd.h at every width) share.
#pragma once

#include <cstdint>

#include "backends/cpu/kernels/conv_blocked.h"
#include "backends/cpu/kernels/simd/width.h"
#include "backends/cpu/kernels/unit_order.h"

namespace dlrt::cpu::blocked_detail {

// One conv call: x addressed as x[n * xs_n + icb * xs_cb + ih * xs_h + iw * sx + ic * sc]
// (ic within block icb), bias padded to whole output blocks.
struct ConvJob {
  const BlockedConvWeights* w = nullptr;
  BlockedConvGeometry g;
  const float* x = nullptr;
  int64_t xs_n = 0, xs_cb = 0, xs_h = 0, sx = 0, sc = 0;
  const float* bias = nullptr;
  const float* z = nullptr;
  Activation act;
  float* y = nullptr;
  // Input blocks [icb0, icb1) of the sum (icb1 < 0: to the last); !first: add
  // to the partial sums in y; !last: store partial sums (no bias, residual or
  // activation). Group-1 convs on the vector path run K in such chunks.
  int64_t icb0 = 0, icb1 = -1;
  bool first = true, last = true;
  // Row units per band of the unit order (unit_order.h); 0: one band.
  int64_t band_rows = 0;
};


// Whether a depthwise conv on blocks of `block` channels splits its units
// over `threads` threads by bands of output rows (else by channel
// blocks, each thread whole planes). Rows, unless the planes are so short
// that a band's halo (the input rows it reads past its share, (kh - 1) * dh
// of them beyond the band) is at least half its share, and there are two
// blocks per thread or more: a 5x5 conv on 7x7 planes in bands of 4 and 3
// rows reads 6 and 5 input rows each, 11 for 7, where whole planes by
// blocks read each row once. Whole planes also match what the ops around
// such convs do on small planes: the 1x1 convs split by output blocks where
// the weights outweigh the activations, and the global pool and channel
// scale go by planes, so each thread reads the planes it wrote.
bool depthwise_by_rows(const BlockedConvGeometry& g, int64_t block, int64_t threads);

// Output rows of the busiest of `threads` threads where an unpadded 1x1
// conv's OH x OW output rows merge k at a time (OH % k == 0) and the merged
// rows run in a band per thread (unit_order.h), in row units of one merged
// row, or two where a merged row has at most kConvT / 2 positions.
int64_t band_output_rows(int64_t OH, int64_t OW, int64_t k, int64_t threads);

// How many output rows of a 1x1, stride-1, unpadded conv on blocked input
// run as one row (a divisor of g.OH): the largest that leaves every thread
// a few units of the `pairs` output block pairs (and, `by_rows` on several
// threads, two merged rows each; on one thread, k rows' input within a
// quarter of `l2` bytes, `row_in_bytes` per row); by rows on several
// threads, of those the largest whose bands leave the busiest thread the
// fewest output rows (band_output_rows).
int64_t pointwise_merge_rows(const BlockedConvGeometry& g, int64_t pairs, int64_t threads, bool by_rows, int64_t l2,
                             int64_t row_in_bytes);

// Positions per group-1 tile of two output blocks on the vector path at
// width `w`: as many as leave 4 of the vector registers for weights and the
// broadcast input (16-channel blocks: 1, 2 or 4 vectors each; 2 x 14 of 32
// zmm, 4 x 3 of 16 ymm, 8 x 1 of 16 xmm). Outputs at most half that wide run
// two rows per tile, which needs every tap inside the input (a padded copy).
constexpr int conv_tile_positions(SimdWidth w) {
  return w == SimdWidth::k512 ? 14 : w == SimdWidth::k256 ? 3 : 1;
}
// The same with one output block (the last of an odd count): 28, 6 or 3.
constexpr int conv_tile_positions1(SimdWidth w) {
  return w == SimdWidth::k512 ? 28 : w == SimdWidth::k256 ? 6 : 3;
}
// Positions per depthwise tile: 8 zmm, 6 x 2 ymm, 3 x 4 xmm accumulators.
constexpr int depthwise_tile_positions(SimdWidth w) {
  return w == SimdWidth::k512 ? 8 : w == SimdWidth::k256 ? 6 : 3;
}

// The positions of an output row whose every tap lies inside the input: [lo, hi).
void interior(const BlockedConvGeometry& g, int64_t* lo, int64_t* hi);

// Rows per unit of a group-1 conv with tiles of `tile` positions: 2 where a
// row has few positions (a 7x7 plane: 14 per tile instead of 7 at 512
// bits, half the weight loads per product) and every tap of every row lies
// inside the input (the padded copy), else 1.
int64_t rows_per_unit(const BlockedConvGeometry& g, int64_t tile);

// Input blocks per K chunk: a chunk of a block pair's weights fills about
// half the L1 data cache the CPU reports, so that every tile of the rows a
// call runs reads them from L1.
int64_t chunk_blocks(const BlockedConvGeometry& g);

// A buffer of the calling thread of at least `floats` floats (the depthwise
// tiles' copy of a padded row), without a heap allocation once that size was seen.
float* depthwise_row_scratch(int64_t floats);

// The vector kernels at the width simd_width() picks, 16-channel blocks
// only. Units (unit_at, j.band_rows): (image, output block pair, row unit)
// for group-1 convs, (image, block, output row) for depthwise ones.
void conv_units_vec(const ConvJob& j, int64_t u0, int64_t u1);
// Row units of a group-1 conv (one or two output rows each).
int64_t conv_row_units_vec(const BlockedConvGeometry& g);
void depthwise_units_vec(const ConvJob& j, int64_t u0, int64_t u1);

// max_pool_blocked's output rows [u0, u1) for 16-channel blocks.
void max_pool16_vec(const float* x, const BlockedConvGeometry& g, float* y, int64_t u0, int64_t u1);
// One 16-channel block: hw positions of cn (<= 16) planes, `plane` floats
// apart, <-> [hw][16] (to: lanes past cn zero; from: only cn planes written).
void to_block16_vec(const float* x, int64_t cn, int64_t hw, int64_t plane, float* y);
void from_block16_vec(const float* x, int64_t cn, int64_t hw, int64_t plane, float* y);

}  // namespace dlrt::cpu::blocked_detail
