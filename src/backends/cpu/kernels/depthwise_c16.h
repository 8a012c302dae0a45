// AVX-512 depthwise convolution of 16 channels at once, one per zmm lane:
// the AVX-512 counterpart of depthwise_c8_avx2 (depthwise_avx2.h). Output
// rows go in bands; the band's input rows are transposed (16 x 16 in
// registers) into a zero-padded [rows][Wp][16] scratch, every tap is one FMA
// for 16 channels at any stride (no even/odd split, no lane wasted on a 7- or
// 14-wide row), and the [positions][16] results are transposed back into the
// 16 output planes with the residual and the clamp.
#pragma once

#include <cstdint>

#include "backends/cpu/kernels/depthwise_avx2.h"

namespace dlrt::cpu {

// Runs the geometries depthwise_c8_avx2_ok accepts, dilated too (g.dh,
// g.dw: tap (i, j) reads padded row oy * sh + i * dh, column ox * sw + j * dw
// of the scratch, so a dilated conv costs what an undilated one does). x holds 16 input planes
// (channel c at x + c * in_plane), w 16 filters (c at w + c * kh * kw), y
// receives 16 output planes (c at y + c * out_plane); o.bias, when set, has
// 16 values and o.residual 16 planes like y. Only output rows [row_begin,
// row_end) (row_end < 0: to the last). Writes every element of those rows.
// `channels` < 16: a layer's last, partial group (the first `channels`
// planes, filters and biases are real; nothing past them is written, and
// lanes past them compute a copy of the last channel that is dropped).
// Call only when cpu_has_avx512().
void depthwise_c16_avx512(const float* x, int64_t in_plane, const float* w, const DepthwiseGeometry& g, float* y,
                          int64_t out_plane, const DepthwiseC8Output& o, int64_t row_begin = 0, int64_t row_end = -1,
                          int channels = 16);

// depthwise_c16_avx512 on input already in the scratch layout: buf holds the
// padded rows [(out_h - 1) * sh + (kh - 1) * dh + 1][Wp][16] with
// Wp = (out_w - 1) * sw + (kw - 1) * dw + 1
// (padded row r, column c = input row r - pad_top, column c - pad_left;
// zeros outside the input). Call only when cpu_has_avx512().
void depthwise_c16_padded_avx512(const float* buf, int64_t Wp, const float* w, const DepthwiseGeometry& g, float* y,
                                 int64_t out_plane, const DepthwiseC8Output& o);

}  // namespace dlrt::cpu
