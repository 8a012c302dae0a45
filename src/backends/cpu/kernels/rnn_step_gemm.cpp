// The step products of the recurrent layers (rnn_step_gemm.h): the body
// rnn_step_gemm_simd.h at every vector width.
#include "backends/cpu/kernels/rnn_step_gemm.h"

#include <algorithm>
#include <type_traits>

#include "backends/cpu/kernels/simd/simd.h"

#define DLRT_SIMD_BODY "backends/cpu/kernels/rnn_step_gemm_simd.h"
#include "backends/cpu/kernels/simd/instantiate.h"

namespace dlrt::cpu {

void few_rows_gemm_acc(SimdWidth width, int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* B,
                       int64_t ldb, float* C, int64_t ldc) {
  DLRT_SIMD_CALL(width, few_rows_gemm_acc, M, N, K, A, lda, B, ldb, C, ldc);
}

}  // namespace dlrt::cpu
