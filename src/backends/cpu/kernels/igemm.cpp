// Integer matmul with wrap-around arithmetic (igemm, gemm.h).
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "backends/cpu/kernels/gemm.h"

namespace dlrt::cpu {

template <typename T>
void igemm(int64_t M, int64_t N, int64_t K, const T* A, int64_t lda, const T* B, int64_t ldb, T* C, int64_t ldc,
           bool accumulate, ThreadPool* pool) {
  // Signed overflow is UB in C++; compute in the unsigned type of the same width (wraps like numpy).
  using U = std::make_unsigned_t<T>;
  using W = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, U>;
  auto rows = [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      T* c = C + i * ldc;
      if (!accumulate) std::fill(c, c + N, T(0));
      for (int64_t p = 0; p < K; ++p) {
        const W a = static_cast<W>(static_cast<U>(A[i * lda + p]));
        const T* brow = B + p * ldb;
        for (int64_t j = 0; j < N; ++j)
          c[j] = static_cast<T>(static_cast<U>(static_cast<W>(static_cast<U>(c[j])) +
                                               a * static_cast<W>(static_cast<U>(brow[j]))));
      }
    }
  };
  if (pool && M > 1 && M * N * K > 65536) pool->parallel_for(M, 1, rows);
  else rows(0, M);
}

#define DLRT_INSTANTIATE_IGEMM(T)                                                                          \
  template void igemm<T>(int64_t, int64_t, int64_t, const T*, int64_t, const T*, int64_t, T*, int64_t, bool, \
                         ThreadPool*);
DLRT_INSTANTIATE_IGEMM(int8_t)
DLRT_INSTANTIATE_IGEMM(uint8_t)
DLRT_INSTANTIATE_IGEMM(int16_t)
DLRT_INSTANTIATE_IGEMM(uint16_t)
DLRT_INSTANTIATE_IGEMM(int32_t)
DLRT_INSTANTIATE_IGEMM(uint32_t)
DLRT_INSTANTIATE_IGEMM(int64_t)
DLRT_INSTANTIATE_IGEMM(uint64_t)
#undef DLRT_INSTANTIATE_IGEMM

}  // namespace dlrt::cpu
