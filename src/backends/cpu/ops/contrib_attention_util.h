// Helpers shared by the com.microsoft attention-family kernels
// (contrib_attention.cpp: FusedMatMul, RotaryEmbedding, MultiHeadAttention;
// contrib_gqa.cpp: GroupQueryAttention).
#pragma once

#include <cstdint>

#include "backends/cpu/kernel.h"

namespace dlrt::cpu::ms_attn {

// The additive mask value of keys a query row must not see (GroupQueryAttention,
// MultiHeadAttention's causal rows): its softmax weight is exactly 0.
inline constexpr float kHidden = -1.0e30f;

// Input i as float32; null when optional and omitted (`what` names it in errors).
Result<const Tensor*> float_in(KernelContext& ctx, size_t i, const char* what, bool required);

// Rotates one head (head values at x) into y (may be x): the first `rot`
// values by the cache rows cs/sn (rot / 2 values each), in halves or, when
// `inter`, in even/odd pairs; the rest copied.
void rotate_head(const float* x, float* y, const float* cs, const float* sn, int64_t head, int64_t rot, bool inter);

// The cos/sin caches [positions, half], inputs ci and si.
struct RotaryCache {
  const float* cos = nullptr;
  const float* sin = nullptr;
  int64_t positions = 0, half = 0;
};
Result<RotaryCache> rotary_cache(KernelContext& ctx, size_t ci, size_t si);

}  // namespace dlrt::cpu::ms_attn

namespace dlrt::cpu {
// Registers com.microsoft GroupQueryAttention (contrib_gqa.cpp).
Status register_group_query_attention(KernelRegistry& r);
}  // namespace dlrt::cpu
