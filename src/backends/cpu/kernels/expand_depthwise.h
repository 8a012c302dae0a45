// A dense conv (the "expand" stage: mobilenet_v2's 1x1 expand convs, or a
// small stem such as its 3x3/2 on the RGB input) and the depthwise conv that
// reads its output, in one pass (com.dlrt FusedExpandDepthwise): for each
// block of expanded channels (one vector's lanes: 16 at 512 bits, 8 at 256,
// 4 at 128; 8 on the portable path), the first conv writes its output
// straight into the depthwise kernel's padded [rows][columns][lanes]
// scratch, so the expanded tensor never goes to memory in NCHW and the
// depthwise conv transposes nothing on the way in.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/cpu/kernels/activation_epilogue.h"
#include "backends/cpu/kernels/depthwise_plane.h"
#include "backends/cpu/kernels/gemm.h"
#include "core/thread_pool.h"

namespace dlrt::cpu {

// The first conv: group 1, no dilation; kernel, strides and leading pads
// (trailing pads are implied by the expanded plane's size).
struct ExpandConvGeometry {
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, pad_top = 0, pad_left = 0;
  bool pointwise() const { return kh == 1 && kw == 1 && sh == 1 && sw == 1 && pad_top == 0 && pad_left == 0; }
};

struct ExpandDepthwiseShape {
  int64_t K = 0, M = 0;   // input channels; expanded channels (a multiple of 8)
  int64_t in_h = 0, in_w = 0;  // input plane
  ExpandConvGeometry e;        // the first conv
  int64_t H = 0, W = 0;   // expanded plane (the first conv's output)
  DepthwiseGeometry g;    // the depthwise conv on the H x W planes (in_h = H, in_w = W)
  ClampStage act_e, act_d;  // the expand and the depthwise activations (Relu/Clip or none)
  int64_t lanes = 8;        // channels per block of the packed weights: 16, 8 or 4 (expand_depthwise_lanes)
};

// Whether expand_depthwise runs this shape (s.lanes 8, or the lanes of a
// vector width selected under cpu_isa(): 16 needs AVX-512, 4 the neon level).
bool expand_depthwise_ok(const ExpandDepthwiseShape& s);

// The channel block expand_depthwise takes for M expanded channels on this
// CPU (under cpu_isa()): 16 on AVX-512 when M is a multiple of 16 (one zmm
// per position), else 8 on AVX2 and AVX-512, 4 at the neon level, 8 on the
// portable path.
int64_t expand_depthwise_lanes(int64_t M);

// Row bands of the AVX-512 projection path for `out_h` output rows on
// `threads` threads (1: the plane whole): one per thread from 14 rows per
// thread, bands of at most 28 rows from 56 rows (also on one thread), on
// several threads a multiple of their count (80 rows on 2: 4, not 3, which
// left one thread two of them).
inline int64_t expand_row_bands(int64_t out_h, int64_t threads) {
  const int64_t bands = threads > 1 && out_h >= 14 * threads ? threads : 1;
  const int64_t capped = ((out_h + 27) / 28 + threads - 1) / threads * threads;
  return out_h >= 56 && capped > bands ? capped : bands;
}

// The expand weights We [M][T] (T = K * kh * kw) as blocks of `lanes` (16,
// 8 or 4) output channels, [M / lanes][T][lanes].
std::vector<float> pack_expand_weights(const float* We, int64_t M, int64_t T, int64_t lanes = 8);

// The optional third conv: a 1x1 one (mobilenet_v2's projection) of N x M
// weights packed as a GEMM A operand, with its epilogue (row bias, residual
// of y's shape at ldr = out_h * out_w, activation).
struct ProjectStage {
  const PackedMatrix* w = nullptr;
  GemmEpilogue ep;
};

// y [M][out_h][out_w] = act_d(dw(act_e(conv(x, We) + be)) + bd) for one image x [K][in_h][in_w];
// be, bd may be null. Blocks of s.lanes channels (the vector paths: pairs of
// blocks) split over the pool, with weights packed for s.lanes.
// With proj, y [N][out_h][out_w] = proj.ep(Wp * that): below 512 bits, with
// Wp packed for the 6 x 16 tile, when the layer splits by rows (one thread,
// or row bands), band by band with the depthwise output kept in L2.
void expand_depthwise(const ExpandDepthwiseShape& s, const float* x, const float* we_packed, const float* be,
                      const float* wd, const float* bd, float* y, ThreadPool& pool,
                      const ProjectStage* proj = nullptr);

}  // namespace dlrt::cpu
