// Depthwise 2-D convolution (stride 1, no dilation) of one small plane on a
// flattened, zero-padded grid: one source at every vector width
// (depthwise_flat_simd.h over simd/simd.h), chosen at 512 bits only. Conv
// uses it for depthwise layers whose output rows are at most 16 wide
// (mobilenet_v2's 14x14 and 7x7 planes) that the one-channel-per-lane
// kernel does not take, where the row-wise kernels in conv.cpp spend most
// of their time on masked tails and per-row overhead.
//
// The input plane is copied once into a zero-padded scratch whose rows are
// wq = out_w + kw - 1 floats wide. Output (oh, ow) then lives at grid index
// oh * wq + ow, and tap (i, j) reads the scratch at i * wq + j past that
// index, so the whole plane is one flat vector loop over the grid, 16
// outputs per 512-bit vector, rows included. Grid columns ow >= out_w are
// computed and dropped when the grid is compacted into y together with the fused
// bias / residual / activation. Faster than the row kernels on small planes
// only, so Conv keeps the row kernels for 28x28 and stride 2 (docs/performance-decisions.md).
#pragma once

#include <cstdint>

#include "backends/cpu/kernels/activation_epilogue.h"
#include "backends/cpu/kernels/simd/width.h"

namespace dlrt::cpu {

struct DepthwiseFlatGeometry {
  int64_t in_h = 0, in_w = 0;
  int64_t out_h = 0, out_w = 0;
  int64_t kh = 0, kw = 0;
  int64_t pad_top = 0, pad_left = 0;  // >= 0 (bottom/right padding is implied by the output size)
};

// Fused output stage of one plane: y = act(conv + bias + residual[idx]).
struct DepthwiseFlatOutput {
  float bias = 0.0f;
  const float* residual = nullptr;  // this plane's residual (out_h * out_w), or null
  Activation act;
};

// Everything about a geometry that does not depend on the plane: built once
// per Conv call, shared by the planes (and threads).
struct DepthwiseFlatPlan {
  static constexpr int kMaxTaps = 64;
  DepthwiseFlatGeometry g;
  int64_t hq = 0, wq = 0;  // rows and columns of the padded copy (wq is the grid's row length)
  int64_t grid = 0;        // floats computed: out_h * wq rounded up to 16
  int64_t src_floats = 0;  // hq * wq
  int64_t slack = 0;       // zeroed floats after the copy (taps of the last vectors read them)
  int64_t taps = 0;
  int64_t off[kMaxTaps] = {};  // tap (i, j) reads the scratch at grid index + off[i * kw + j]
};

// Fills `plan` and returns true when depthwise_flat handles this geometry
// (stride 1 and no dilation are the caller's to check; at most 64 taps, a
// padded plane of at most 64K floats) and Conv should use it: only where
// simd_width() is 512 (at 256 bits Conv's choice of the lanes and plane
// kernels stays as it was). The plan itself holds for every width.
bool depthwise_flat_plan(const DepthwiseFlatGeometry& g, DepthwiseFlatPlan* plan);
// The geometry part of depthwise_flat_plan, whatever the width (tests).
bool depthwise_flat_fits(const DepthwiseFlatGeometry& g, DepthwiseFlatPlan* plan);

// y[oh * out_w + ow] for the whole plane (every element written), at
// `width` (simd_width() or narrower). Thread-safe (per-thread scratch, no
// allocation once warm).
void depthwise_flat(SimdWidth width, const float* x, const float* w, const DepthwiseFlatPlan& plan, float* y,
                    const DepthwiseFlatOutput& o);

}  // namespace dlrt::cpu
