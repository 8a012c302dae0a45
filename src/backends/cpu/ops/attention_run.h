// Runs an attention problem (kernels/attention.h) over a pool: the split of
// batch x head x query-row blocks into tasks and the pick of the fastest path
// the CPU has (AMX when `amx_allowed`, the session's precision is bf16x3;
// VDPBF16PS when `bf16_allowed`, the session's precision is bf16; AVX-512,
// AVX2, portable). Shared by com.dlrt Attention (transformer.cpp)
// and com.microsoft Attention (contrib_transformer.cpp).
#pragma once

#include "backends/cpu/kernels/attention.h"
#include "core/thread_pool.h"

namespace dlrt::cpu {

void run_attention(ThreadPool& pool, const attention::Problem& p, bool amx_allowed, bool bf16_allowed = false);

}  // namespace dlrt::cpu
