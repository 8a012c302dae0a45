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

}  // namespace dlrt::cpu
