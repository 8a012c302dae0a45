// Depthwise convolution of one 2-D plane (one input channel, one filter,
// one output channel) with the fused output stage, written once over simd/
// (depthwise_plane_simd.h) and run at 512, 256 or 128 bits: the plane
// kernel of depthwise FusedConv where one channel per lane
// (depthwise_lanes.h) is not taken (conv_depthwise.cpp records the choice).
//
// The plane is copied into a zero-padded scratch (stride 2: each row split
// into its even and its odd columns), so every tap is an unaligned vector
// load with no bounds checks. Each step keeps R output rows x NV vectors in
// registers; an input row loaded once feeds every output row that uses it.
// Bias, residual and Relu/Clip are applied in registers before the store.
#pragma once

#include <cstdint>

#include "backends/cpu/kernels/activation_epilogue.h"
#include "backends/cpu/kernels/simd/width.h"

namespace dlrt::cpu {

struct DepthwiseGeometry {
  int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1;
  int64_t pad_top = 0, pad_left = 0;  // bottom/right padding is implied by the output size
  int64_t dh = 1, dw = 1;  // dilation: only depthwise_lanes takes other than 1
};

// Applied to each output element: v = conv + bias (+ residual[i]), then
// clamped to [lo, hi] when `clamp` (Relu: lo 0, hi +inf).
struct DepthwiseOutput {
  float bias = 0.0f;
  const float* residual = nullptr;  // this plane's residual [out_h, out_w], or null
  bool clamp = false;
  float lo = 0.0f, hi = 0.0f;
};

// Whether depthwise_plane runs this geometry: width stride 1 or 2, any
// height stride, kernels up to 16 x 16, non-negative leading pads, no dilation
// (the caller checks dilation). Does not check the CPU.
bool depthwise_plane_ok(const DepthwiseGeometry& g);

// y [out_h, out_w] = output stage of the depthwise conv of x [in_h, in_w] with
// w [kh, kw], at vector width `width` (simd_width_runs(width) must hold).
// Writes every element of y. The sums are taken in the same order at every
// width, so the widths agree bit for bit (with fused multiply-adds).
void depthwise_plane(SimdWidth width, const float* x, const float* w, const DepthwiseGeometry& g, float* y,
                     const DepthwiseOutput& o);

// The output stage of depthwise_lanes (depthwise_lanes.h), whose groups of
// 8 or 16 channels (one per lane) it applies to.
struct DepthwiseC8Output {
  const float* bias = nullptr;      // one value per channel of the group, or null
  const float* residual = nullptr;  // the group's planes [out_h, out_w], out_plane apart, or null
  bool clamp = false;
  float lo = 0.0f, hi = 0.0f;
  // Any other activation (HardSwish, Sigmoid, SiLU, ...) after the residual,
  // or null.
  const Activation* act = nullptr;
};

// Row bands per image for depthwise_lanes on `threads` threads: one per
// thread when each gets at least 14 output rows, so the layer splits by rows
// as well as channels and the pointwise convs around it (split by positions)
// read what the same core wrote; else 1.
int64_t depthwise_c8_row_bands(int64_t out_h, int64_t threads);

// Whether depthwise_lanes runs this geometry (does not check the CPU).
bool depthwise_c8_avx2_ok(const DepthwiseGeometry& g);

}  // namespace dlrt::cpu
