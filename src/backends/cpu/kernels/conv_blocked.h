// Float32 kernels on the channel-blocked activation layout NCHWc: a tensor
// [N, C, H, W] is stored as [N, ceil(C / b), H, W, b], channel c at block
// c / b, lane c % b (b = blocked_width(): 16; the kernels also take 8). The
// lanes past C in the last block ("pad lanes") hold unspecified finite or
// non-finite values: every kernel here computes lanes independently and
// never lets a pad lane reach a real one (the convs stop their input-channel
// loop at C), and from_blocked drops them.
//
// The convs run one output-channel block (or two) over a row of output
// positions in registers: acc[block][position] += x[ic at position] *
// w[ic][16 output channels] (one vector of 16, or 2 of 8 or 4 of 4 at the
// narrower widths), the input broadcast one channel at a time and
// the weights packed once as [ocb][icb][kh][kw][ic b][oc b]. The input is
// either blocked or plain NCHW (a stem of few input channels reads its image
// directly, no reorder). Depthwise convs (one channel per group) take their
// 16 channels' taps as one vector per position.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/cpu/kernels/activation_epilogue.h"
#include "core/thread_pool.h"

namespace dlrt::cpu {

// The block width the blocked-layout pass picks: 16 at every vector width
// (a block is 1 zmm, 2 ymm or 4 xmm vectors; the blocked Winograd kernels
// take 16-channel blocks; docs/performance-decisions.md).
int blocked_width();

// Whether the blocked kernels run vector code for `block` (16, at
// simd_width(); else the portable loops, correct for any block).
bool blocked_vector_path(int block);

// A Conv's geometry (2-D; pads at the start, the end implied by out_h/out_w).
struct BlockedConvGeometry {
  int64_t N = 1, C = 0, H = 0, W = 0, M = 0, OH = 0, OW = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1, pad_top = 0, pad_left = 0;
};

// Weights of a Conv with one group, or one channel per group (depthwise:
// M == C == group), packed for `block`.
struct BlockedConvWeights {
  int block = 16;
  bool depthwise = false;
  int64_t M = 0, C = 0, kh = 1, kw = 1;
  // group 1: [ceil(M/b)][ceil(C/b)][kh][kw][b ic][b oc]; depthwise: [ceil(C/b)][kh][kw][b]; zeros past M and C.
  std::vector<float> w;
};

// Packs W [M, C / group, kh, kw] (group 1, or group == C == M).
BlockedConvWeights pack_blocked_conv(const float* w, int64_t M, int64_t C, int64_t kh, int64_t kw, bool depthwise,
                                     int block);
// The inverse: writes W [M, C / group, kh, kw] from `p`.
void unpack_blocked_conv(const BlockedConvWeights& p, float* w);

// y (blocked, [N, ceil(M/b), OH, OW, b]) = act(conv(x, w) + bias + z): x blocked
// ([N, ceil(C/b), H, W, b]) or, when !x_blocked, NCHW [N, C, H, W]; bias M values
// or null; z null or y's blocked shape. Pad lanes of y get act(0 + z's pad lane).
void conv_blocked(const BlockedConvWeights& w, const BlockedConvGeometry& g, const float* x, bool x_blocked,
                  const float* bias, const float* z, const Activation& act, float* y, ThreadPool* pool);

// NCHW [N, C, hw] -> blocked [N, ceil(C/b), hw, b] (pad lanes zero), and back.
void to_blocked(const float* x, int64_t N, int64_t C, int64_t hw, int block, float* y, ThreadPool* pool);
void from_blocked(const float* x, int64_t N, int64_t C, int64_t hw, int block, float* y, ThreadPool* pool);

// Global average (or max) pool of blocked x [N, cb, hw, b] into y [N, cb, 1, 1, b].
void global_pool_blocked(const float* x, int64_t N, int64_t cb, int64_t hw, int block, bool max, float* y,
                         ThreadPool* pool);

// y = x * s for blocked x [N, cb, hw, b] and s [N (per_image) or 1, cb, 1, 1, b].
void channel_scale_blocked(const float* x, const float* s, int64_t N, int64_t cb, int64_t hw, int block,
                           bool per_image, float* y, ThreadPool* pool);

// 2-D MaxPool of blocked x [N, cb, H, W, b] into y [N, cb, OH, OW, b] (the
// geometry's C counts blocks here, M is unused; pads past the input are skipped).
void max_pool_blocked(const float* x, const BlockedConvGeometry& g, int64_t cb, int block, float* y,
                      ThreadPool* pool);

}  // namespace dlrt::cpu
