// Depthwise convolution of one group of channels at once, one channel per
// vector lane: 16 at 512 bits, 8 at 256, 4 at 128 (one source,
// depthwise_lanes_simd.h over simd/simd.h). Output rows go in bands; the
// band's input rows are transposed (lanes x lanes in registers) into a
// zero-padded [rows][Wp][lanes] scratch, every tap is one FMA for the group
// at any stride (no even/odd split, no lane wasted on a 7- or 14-wide row),
// and the [positions][lanes] results are transposed back into the group's
// output planes with the residual, the clamp and any other activation.
#pragma once

#include <cstdint>

#include "backends/cpu/kernels/depthwise_plane.h"
#include "backends/cpu/kernels/simd/width.h"

namespace dlrt::cpu {

// Channels per call at `width`.
constexpr int depthwise_lanes_width(SimdWidth width) {
  return width == SimdWidth::k512 ? 16 : width == SimdWidth::k256 ? 8 : 4;
}

// Runs the geometries depthwise_c8_avx2_ok accepts, dilated too (g.dh,
// g.dw: tap (i, j) reads padded row oy * sh + i * dh, column ox * sw + j * dw
// of the scratch, so a dilated conv costs what an undilated one does). With
// L = depthwise_lanes_width(width): x holds L input planes (channel c at
// x + c * in_plane), w L filters (c at w + c * kh * kw), y receives L output
// planes (c at y + c * out_plane); o.bias, when set, has L values and
// o.residual L planes like y. Only output rows [row_begin, row_end)
// (row_end < 0: to the last). Writes every element of those rows.
// `channels` < L: a layer's last, partial group (the first `channels`
// planes, filters and biases are real; nothing past them is written, and
// lanes past them compute a copy of the last channel that is dropped).
// `width` must run on this CPU (simd_width() or narrower).
void depthwise_lanes(SimdWidth width, const float* x, int64_t in_plane, const float* w, const DepthwiseGeometry& g,
                     float* y, int64_t out_plane, const DepthwiseC8Output& o, int64_t row_begin = 0,
                     int64_t row_end = -1, int channels = 16);

// depthwise_lanes on input already in the scratch layout: buf holds the
// padded rows [(out_h - 1) * sh + (kh - 1) * dh + 1][Wp][L] with
// Wp = (out_w - 1) * sw + (kw - 1) * dw + 1
// (padded row r, column c = input row r - pad_top, column c - pad_left;
// zeros outside the input).
void depthwise_lanes_padded(SimdWidth width, const float* buf, int64_t Wp, const float* w, const DepthwiseGeometry& g,
                            float* y, int64_t out_plane, const DepthwiseC8Output& o);

}  // namespace dlrt::cpu
