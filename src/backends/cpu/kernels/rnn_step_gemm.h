// C[M, N] += A[M, K] B[K, N] for a recurrence's few rows (the batch of an
// RNN/GRU/LSTM step, ops/rnn.cpp), with C in registers over the whole K:
// one source (rnn_step_gemm_simd.h over simd/simd.h) at 512, 256 and 128
// bits (NEON on aarch64). Pass simd_width(), or a width simd_width_runs().
#pragma once

#include <cstdint>

#include "backends/cpu/kernels/simd/width.h"

namespace dlrt::cpu {

void few_rows_gemm_acc(SimdWidth width, int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* B,
                       int64_t ldb, float* C, int64_t ldc);

}  // namespace dlrt::cpu
