// The attention half of com.microsoft Attention (contrib_transformer.cpp),
// shared with QAttention (contrib_quant_transformer.cpp): from the rows of
// the input's Q | K | V projection to the output, with mask_index,
// attention_bias, past/present and the node's num_heads-independent
// attributes (scale, mask_filter_value, unidirectional).
#pragma once

#include "backends/cpu/kernel.h"

namespace dlrt::cpu {

// qkv: B * S rows of 2 * qk_hidden + v_hidden floats (Q, then K, then V);
// H heads. mask_index, attention_bias and past ([2, B, H, P, head_size])
// may be null. Allocates and writes output 0 ([B, S, v_hidden]) and, when the
// node asks for it, output 1 (present: [2, B, H, P + S, head_size]).
Status ms_attention_from_qkv(KernelContext& ctx, const float* qkv, int64_t B, int64_t S, int64_t H, int64_t qk_hidden,
                             int64_t v_hidden, const Tensor* mask_index, const Tensor* attention_bias,
                             const Tensor* past = nullptr);

}  // namespace dlrt::cpu
