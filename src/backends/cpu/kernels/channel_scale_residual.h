// y = x * s + r on the channel-blocked layout (conv_blocked.h): squeeze-excite's
// residual form y + y * s (r = x) in one pass, for ChannelScaleBlocked's
// third input.
#pragma once

#include <cstdint>

#include "core/thread_pool.h"

namespace dlrt::cpu {

// x, r, y: [N, cb, hw, block] (r may be x; y may be neither unless it is
// both x and r); s: [N or 1, cb, 1, block] (per_image: N). Each element is
// rounded as x * s, then + r (the unfused Mul and Add). Splits the N * cb
// planes over `pool` (null: this thread).
void channel_scale_residual_blocked(const float* x, const float* s, const float* r, int64_t N, int64_t cb,
                                    int64_t hw, int block, bool per_image, float* y, ThreadPool* pool);

}  // namespace dlrt::cpu
