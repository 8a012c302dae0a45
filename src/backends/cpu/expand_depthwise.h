// A pointwise "expand" conv and the depthwise conv that reads its output, in
// one pass (com.dlrt FusedExpandDepthwise, mobilenet_v2's inverted residual
// blocks): for each block of 8 expanded channels, the expand conv writes its
// output straight into the depthwise kernel's padded [rows][columns][8]
// scratch, so the expanded tensor never goes to memory in NCHW and the
// depthwise conv transposes nothing on the way in.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/cpu/activation_epilogue.h"
#include "backends/cpu/depthwise_avx2.h"
#include "core/thread_pool.h"

namespace dlrt::cpu {

struct ExpandDepthwiseShape {
  int64_t K = 0, M = 0;   // input channels; expanded channels (a multiple of 8)
  int64_t H = 0, W = 0;   // input (and expanded) plane
  DepthwiseGeometry g;    // the depthwise conv on the H x W planes (in_h = H, in_w = W)
  ClampStage act_e, act_d;  // the expand and the depthwise activations (Relu/Clip or none)
};

// Whether expand_depthwise runs this shape.
bool expand_depthwise_ok(const ExpandDepthwiseShape& s);

// The expand weights We [M][K] as blocks of 8 output channels, [M / 8][K][8].
std::vector<float> pack_expand_weights(const float* We, int64_t M, int64_t K);

// y [M][out_h][out_w] = act_d(dw(act_e(We x + be)) + bd) for one image x [K][H][W];
// be, bd may be null. Blocks of 8 (AVX2: pairs of blocks) split over the pool.
void expand_depthwise(const ExpandDepthwiseShape& s, const float* x, const float* we_packed, const float* be,
                      const float* wd, const float* bd, float* y, ThreadPool& pool);

}  // namespace dlrt::cpu
