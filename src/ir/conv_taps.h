// Conv kernel taps that read padding only, along one spatial axis: the
// arithmetic shared by the conv-padding-taps pass (sizes known statically,
// ir/passes/conv_padding_taps.cpp) and the CPU conv kernels (the run's sizes,
// backends/cpu/ops/conv_dead_taps.cpp). Each then decides how the pads follow.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "dlrt/tensor.h"

namespace dlrt::ir {

// One spatial axis: input and output sizes, kernel, stride, dilation and the
// leading pad.
struct ConvTapAxis {
  int64_t in = 0, out = 0, kernel = 1, stride = 1, dilation = 1, pad_begin = 0;
};

// Whether tap k reads padding only: o * stride - pad_begin + k * dilation is
// outside [0, in) for every output position o in [0, out). Closed form (no
// loop over the output positions).
inline bool conv_tap_dead(const ConvTapAxis& a, int64_t k) {
  const int64_t first = k * a.dilation - a.pad_begin;  // input position read by output 0
  // The first output position reading at or after input 0, then whether it reads inside the input.
  const int64_t o = first >= 0 ? 0 : (-first + a.stride - 1) / a.stride;
  return o >= a.out || o * a.stride + first >= a.in;
}

struct ConvTapCut {
  int64_t lead = 0, trail = 0;
};

// The leading dead taps whose removal the leading pad absorbs (each moves the
// first tap's input position by `dilation`, so pad_begin must stay >= 0),
// then the trailing dead taps; at least one tap stays.
inline ConvTapCut dead_conv_taps(const ConvTapAxis& a) {
  ConvTapCut c;
  while (c.lead < a.kernel - 1 && (c.lead + 1) * a.dilation <= a.pad_begin && conv_tap_dead(a, c.lead)) ++c.lead;
  while (c.lead + c.trail < a.kernel - 1 && conv_tap_dead(a, a.kernel - 1 - c.trail)) ++c.trail;
  return c;
}

// W ([M, C/group, k...]) without the cut taps, one cut per spatial axis of W,
// as a new tensor of W's dtype; nullopt when a weight cut out is not finite
// (0 * inf is NaN: those taps were not dead) or there is no memory.
std::optional<Tensor> crop_conv_taps(const Tensor& w, const std::vector<ConvTapCut>& cuts);

}  // namespace dlrt::ir
