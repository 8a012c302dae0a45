// y = x * s + r on the channel-blocked layout (channel_scale_residual.h).
#include "backends/cpu/kernels/channel_scale_residual.h"

#include <algorithm>

namespace dlrt::cpu {
namespace {

// Planes [u0, u1) of N * cb, B lanes (a constant: the lane loop vectorises).
// The product is stored to a named float first so that it is rounded
// before the add, as the unfused Mul's output is.
template <int B>
void planes(const float* x, const float* s, const float* r, int64_t cb, int64_t hw, bool per_image, float* y,
            int64_t u0, int64_t u1) {
  for (int64_t u = u0; u < u1; ++u) {
    const float* sv = s + (per_image ? u : u % cb) * B;
    const int64_t base = u * hw * B;
    for (int64_t p = 0; p < hw; ++p) {
      const int64_t o = base + p * B;
      float prod[B];
      for (int c = 0; c < B; ++c) prod[c] = x[o + c] * sv[c];
      for (int c = 0; c < B; ++c) y[o + c] = prod[c] + r[o + c];
    }
  }
}

}  // namespace

void channel_scale_residual_blocked(const float* x, const float* s, const float* r, int64_t N, int64_t cb,
                                    int64_t hw, int block, bool per_image, float* y, ThreadPool* pool) {
  const int64_t units = N * cb;
  if (units <= 0) return;
  auto body = [&](int64_t u0, int64_t u1) {
    if (block == 16) planes<16>(x, s, r, cb, hw, per_image, y, u0, u1);
    else planes<8>(x, s, r, cb, hw, per_image, y, u0, u1);
  };
  if (!pool) return body(0, units);
  const int64_t grain = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, hw * block));
  pool->parallel_for(units, pool->balanced_grain(units, grain), body);
}

}  // namespace dlrt::cpu
