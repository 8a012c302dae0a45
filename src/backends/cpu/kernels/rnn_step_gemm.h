// C[M, N] += A[M, K] B[K, N] for a recurrence's few rows (the batch of an
// RNN/GRU/LSTM step, ops/rnn.cpp), with C in registers over the whole K.
// Call the AVX-512 one only where cpu_has_avx512(), the AVX2 one where
// cpu_has_avx2().
#pragma once

#include <cstdint>

namespace dlrt::cpu {

#if defined(__x86_64__)
void few_rows_gemm_acc_avx512(int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* B,
                              int64_t ldb, float* C, int64_t ldc);
void few_rows_gemm_acc_avx2(int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* B, int64_t ldb,
                            float* C, int64_t ldc);
#endif

}  // namespace dlrt::cpu
