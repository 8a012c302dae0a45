// The geometry of an integer convolution, shared by the NCHW kernels
// (quantize_conv.cpp) and the channels-last one (quantize_conv_nhwc.cpp).
#pragma once

#include <cstdint>

#include "backends/cpu/kernel.h"
#include "dlrt/shape.h"

namespace dlrt::cpu {

struct ConvGeometry {
  int64_t N = 0, C = 0, M = 0, group = 1;
  Shape in, kernel, out, stride, dilation, pad_begin;
  int64_t in_size = 1, kernel_size = 1, out_size = 1;
};

// Checks and resolves a conv's attributes (group, kernel_shape, strides,
// dilations, pads, auto_pad) for x of shape [N, C, spatial...] and w of
// shape [M, C / group, kernel...] (x's logical NCHW shape for a
// channels-last conv).
Result<ConvGeometry> conv_geometry(const KernelContext& ctx, const Shape& x, const Shape& w);

// QLinearConv's inputs (x, x_scale, x_zero_point, w, w_scale, w_zero_point,
// y_scale, y_zero_point, B), checked as both layouts need them; the zero
// points of x and w are left to the kernels.
struct QLinearConvArgs {
  const Tensor* x = nullptr;
  const Tensor* w = nullptr;
  const Tensor* bias = nullptr;  // B, or null
  DType out = DType::kUndefined;  // uint8 or int8
  int32_t y_zero_point = 0;
  ConvGeometry g;
  // Per output channel m: x_scale * w_scale[m] / y_scale, the multiplier of its sums.
  const float* mult = nullptr;  // g.M values, thread-local: valid until the next call on this thread
};

// Reads and checks them; channels_last: x is [N, H, W, C] (2-D only), the
// geometry that of its NCHW view.
Result<QLinearConvArgs> qlinear_conv_args(const KernelContext& ctx, bool channels_last);

}  // namespace dlrt::cpu
