// What conv_blocked.cpp (dispatch, portable loops) and conv_blocked_avx512.cpp share.
#pragma once

#include <cstdint>

#include "backends/cpu/kernels/conv_blocked.h"
#include "backends/cpu/kernels/isa_target.h"
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

// Positions per group-1 tile on the vector path (2 blocks x 14: 28
// accumulators); outputs at most kConvT / 2 wide run two rows per tile, which
// needs every tap inside the input (a padded copy).
inline constexpr int kConvT = 14;

#if defined(__x86_64__) || defined(__i386__)
// Block 16 only. Units (unit_at, j.band_rows): (image, output block pair,
// row unit) for group-1 convs, (image, block, output row) for depthwise ones.
void conv_units_avx512(const ConvJob& j, int64_t u0, int64_t u1);
// Row units of a group-1 conv (one or two output rows each).
int64_t conv_row_units_avx512(const BlockedConvGeometry& g);
void depthwise_units_avx512(const ConvJob& j, int64_t u0, int64_t u1);

// max_pool_blocked's output rows [u0, u1) for 16-channel blocks.
void max_pool16_avx512(const float* x, const BlockedConvGeometry& g, float* y, int64_t u0, int64_t u1);
// One 16-channel block: hw positions of cn (<= 16) planes, `plane` floats
// apart, <-> [hw][16] (to: lanes past cn zero; from: only cn planes written).
void to_block16_avx512(const float* x, int64_t cn, int64_t hw, int64_t plane, float* y);
void from_block16_avx512(const float* x, int64_t cn, int64_t hw, int64_t plane, float* y);
#endif

}  // namespace dlrt::cpu::blocked_detail
