// A small blocked GEMM shared by the RNN and quantized-op kernels:
// C[M,N] += A[M,K] * B[K,N], all row-major with leading dimensions.
//
// The inner loop is an axpy over a row of B (contiguous), so it vectorises
// without fast-math; four rows of A share each load of B. Tiles of C are
// spread over the thread pool when the product is big enough to be worth it.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/thread_pool.h"

namespace dlrt::cpu::detail {

template <typename T>
void gemm_tile(int64_t m0, int64_t m1, int64_t n0, int64_t n1, int64_t K, const T* A, int64_t lda, const T* B,
               int64_t ldb, T* C, int64_t ldc) {
  constexpr int64_t kKBlock = 256;
  for (int64_t k0 = 0; k0 < K; k0 += kKBlock) {
    const int64_t k1 = std::min(K, k0 + kKBlock);
    int64_t i = m0;
    for (; i + 4 <= m1; i += 4) {
      T* __restrict c0 = C + (i + 0) * ldc;
      T* __restrict c1 = C + (i + 1) * ldc;
      T* __restrict c2 = C + (i + 2) * ldc;
      T* __restrict c3 = C + (i + 3) * ldc;
      for (int64_t k = k0; k < k1; ++k) {
        const T a0 = A[(i + 0) * lda + k], a1 = A[(i + 1) * lda + k];
        const T a2 = A[(i + 2) * lda + k], a3 = A[(i + 3) * lda + k];
        const T* __restrict b = B + k * ldb;
        for (int64_t n = n0; n < n1; ++n) {
          const T bn = b[n];
          c0[n] += a0 * bn;
          c1[n] += a1 * bn;
          c2[n] += a2 * bn;
          c3[n] += a3 * bn;
        }
      }
    }
    for (; i < m1; ++i) {
      T* __restrict c = C + i * ldc;
      for (int64_t k = k0; k < k1; ++k) {
        const T a = A[i * lda + k];
        const T* __restrict b = B + k * ldb;
        for (int64_t n = n0; n < n1; ++n) c[n] += a * b[n];
      }
    }
  }
}

// C += A * B. `pool` may be null (runs on the caller).
template <typename T>
void gemm_acc(int64_t M, int64_t N, int64_t K, const T* A, int64_t lda, const T* B, int64_t ldb, T* C, int64_t ldc,
              ThreadPool* pool) {
  if (M <= 0 || N <= 0 || K <= 0) return;
  constexpr int64_t kMBlock = 32, kNBlock = 256;
  const int64_t mt = (M + kMBlock - 1) / kMBlock, nt = (N + kNBlock - 1) / kNBlock;
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t mi = t / nt, ni = t % nt;
      gemm_tile(mi * kMBlock, std::min(M, (mi + 1) * kMBlock), ni * kNBlock, std::min(N, (ni + 1) * kNBlock), K, A,
                lda, B, ldb, C, ldc);
    }
  };
  const double work = static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
  if (pool && pool->num_threads() > 1 && mt * nt > 1 && work > 65536.0)
    pool->parallel_for(mt * nt, 1, run);
  else
    run(0, mt * nt);
}

}  // namespace dlrt::cpu::detail
