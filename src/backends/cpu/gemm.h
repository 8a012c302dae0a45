// Dense matrix multiply for the CPU backend: C = alpha * op(A) * op(B) + beta * C.
//
// All matrices are row-major with explicit leading dimensions (elements
// between consecutive rows). op(A) is M x K (A is K x M when trans_a), op(B)
// is K x N (B is N x K when trans_b), C is M x N. When beta == 0, C is only
// written, never read (it may hold garbage or NaN).
//
// The float path packs A and B panels into contiguous buffers and runs a
// register-tiled microkernel; an AVX2/FMA kernel is chosen at run time where
// the CPU has it, a portable one otherwise. Work is split over M/N blocks on
// `pool` (may be null for a single-threaded call). Thread-safety: every
// function here may be called concurrently from any thread; a call from
// inside a pool task runs single-threaded (the pool runs nested work inline).
#pragma once

#include <cstdint>
#include <functional>

#include "core/thread_pool.h"

namespace dlrt::cpu {

void sgemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
           const float* B, int64_t ldb, float beta, float* C, int64_t ldc, ThreadPool* pool);

// Supplies op(B) without materialising it (e.g. Conv's im2col matrix): fills
// dst[0, n) with op(B)(p, j0 .. j0+n). Called concurrently from pool threads.
using BRowSource = std::function<void(int64_t p, int64_t j0, int64_t n, float* dst)>;

// sgemm with op(B) (K x N) read through `b_rows` while packing.
void sgemm_rows(bool trans_a, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
                const BRowSource& b_rows, float beta, float* C, int64_t ldc, ThreadPool* pool);

void dgemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, double alpha, const double* A, int64_t lda,
           const double* B, int64_t ldb, double beta, double* C, int64_t ldc, ThreadPool* pool);

// Integer matmul with wrap-around arithmetic in T (C = A * B, or C += A * B
// when accumulate); no transposes. Cache-friendly i-k-j order, split over rows.
template <typename T>
void igemm(int64_t M, int64_t N, int64_t K, const T* A, int64_t lda, const T* B, int64_t ldb, T* C, int64_t ldc,
           bool accumulate, ThreadPool* pool);

// Name of the float kernel picked for this CPU ("avx2-fma" or "generic"), for logs and benchmarks.
const char* sgemm_kernel_name();

}  // namespace dlrt::cpu
