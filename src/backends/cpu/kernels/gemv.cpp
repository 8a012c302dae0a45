// Matrix-vector products (M == 1 or N == 1) of the float and double GEMM.
#include <algorithm>
#include <cstdint>

#include "backends/cpu/kernels/gemm_internal.h"
#include "backends/cpu/kernels/isa_target.h"
#include "backends/cpu/scratch.h"

#if defined(__x86_64__) || defined(__i386__)
#define DLRT_GEMM_X86 1
#endif

namespace dlrt::cpu::gemm_detail {
namespace {

// The per-thread row buffer of gemv_cols (grows, never shrinks: steady-state
// calls allocate nothing).
template <typename T>
T* row_scratch(size_t n) {
  thread_local AlignedScratch buf;
  return buf.get<T>(std::max<size_t>(n, 1), AlignedScratch::Growth::kByHalf);
}

// Matrix-vector products (M == 1 or N == 1) are memory bound: a packed
// microkernel would waste most of its tile, so stream the matrix once.
template <typename T>
__attribute__((always_inline)) inline void gemv_rows_impl(int64_t rows, int64_t cols, T alpha, const T* A, int64_t lda, const T* x, int64_t incx, T beta, T* y,
               int64_t incy) {
  // y[r] = alpha * dot(A[r, :], x) + beta * y[r]
  for (int64_t r = 0; r < rows; ++r) {
    const T* a = A + r * lda;
    T acc[8] = {};
    int64_t c = 0;
    if (incx == 1) {
      for (; c + 8 <= cols; c += 8)
        for (int u = 0; u < 8; ++u) acc[u] += a[c + u] * x[c + u];
    }
    T s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    for (; c < cols; ++c) s += a[c] * x[c * incx];
    T& out = y[r * incy];
    out = beta == T(0) ? alpha * s : alpha * s + beta * out;
  }
}

template <typename T>
__attribute__((always_inline)) inline void gemv_cols_impl(int64_t rows, int64_t cols, T alpha, const T* A, int64_t lda, const T* x, int64_t incx, T beta, T* y,
               int64_t incy, T* scratch) {
  // y[c] = alpha * sum_r x[r] * A[r, c] + beta * y[c]
  std::fill(scratch, scratch + cols, T(0));
  for (int64_t r = 0; r < rows; ++r) {
    const T xv = x[r * incx];
    const T* a = A + r * lda;
    for (int64_t c = 0; c < cols; ++c) scratch[c] += xv * a[c];
  }
  for (int64_t c = 0; c < cols; ++c) {
    T& out = y[c * incy];
    out = beta == T(0) ? alpha * scratch[c] : alpha * scratch[c] + beta * out;
  }
}

template <typename T>
struct GemvFns {
  void (*rows)(int64_t, int64_t, T, const T*, int64_t, const T*, int64_t, T, T*, int64_t);
  void (*cols)(int64_t, int64_t, T, const T*, int64_t, const T*, int64_t, T, T*, int64_t, T*);
};

#define DLRT_GEMV_FNS(T, suffix, attr)                                                                            \
  attr void gemv_rows_##suffix(int64_t rows, int64_t cols, T alpha, const T* A, int64_t lda, const T* x,          \
                               int64_t incx, T beta, T* y, int64_t incy) {                                        \
    gemv_rows_impl<T>(rows, cols, alpha, A, lda, x, incx, beta, y, incy);                                         \
  }                                                                                                               \
  attr void gemv_cols_##suffix(int64_t rows, int64_t cols, T alpha, const T* A, int64_t lda, const T* x,          \
                               int64_t incx, T beta, T* y, int64_t incy, T* scratch) {                            \
    gemv_cols_impl<T>(rows, cols, alpha, A, lda, x, incx, beta, y, incy, scratch);                                \
  }
DLRT_GEMV_FNS(float, f_generic, )
DLRT_GEMV_FNS(double, d_generic, )
#ifdef DLRT_GEMM_X86
DLRT_GEMV_FNS(float, f_avx2, DLRT_AVX2)
DLRT_GEMV_FNS(double, d_avx2, DLRT_AVX2)
DLRT_GEMV_FNS(float, f_avx512, DLRT_AVX512F)
// Several rows per pass, two accumulator chains per row (the generic
// loop's single 8-lane chain is FMA-latency bound): gemm_simd.h's sgemv_rows.
void gemv_rows_f_avx512_wide(int64_t rows, int64_t cols, float alpha, const float* A, int64_t lda, const float* x,
                             int64_t incx, float beta, float* y, int64_t incy) {
  if (incx == 1) sgemv_rows_at(SimdWidth::k512, rows, cols, alpha, A, lda, x, beta, y, incy);
  else gemv_rows_f_avx512(rows, cols, alpha, A, lda, x, incx, beta, y, incy);
}
void gemv_rows_f_avx2_wide(int64_t rows, int64_t cols, float alpha, const float* A, int64_t lda, const float* x,
                           int64_t incx, float beta, float* y, int64_t incy) {
  if (incx == 1) sgemv_rows_at(SimdWidth::k256, rows, cols, alpha, A, lda, x, beta, y, incy);
  else gemv_rows_f_avx2(rows, cols, alpha, A, lda, x, incx, beta, y, incy);
}
#endif
// The neon level (aarch64's; on x86 its stand-in): the rows at 128 bits.
void gemv_rows_f_simd128(int64_t rows, int64_t cols, float alpha, const float* A, int64_t lda, const float* x,
                         int64_t incx, float beta, float* y, int64_t incy) {
  if (incx == 1) sgemv_rows_at(SimdWidth::k128, rows, cols, alpha, A, lda, x, beta, y, incy);
  else gemv_rows_f_generic(rows, cols, alpha, A, lda, x, incx, beta, y, incy);
}
#undef DLRT_GEMV_FNS

GemvFns<float> pick_sgemv() {
#ifdef DLRT_GEMM_X86
  if (cpu_has_avx512()) return {gemv_rows_f_avx512_wide, gemv_cols_f_avx512};
  if (cpu_has_avx2_fma()) return {gemv_rows_f_avx2_wide, gemv_cols_f_avx2};
#endif
  if (cpu_has_simd_kernels()) return {gemv_rows_f_simd128, gemv_cols_f_generic};
  return {gemv_rows_f_generic, gemv_cols_f_generic};
}
GemvFns<double> pick_dgemv() {
#ifdef DLRT_GEMM_X86
  if (cpu_has_avx2_fma()) return {gemv_rows_d_avx2, gemv_cols_d_avx2};
#endif
  return {gemv_rows_d_generic, gemv_cols_d_generic};
}

template <typename T>
bool try_gemv_with(const GemvFns<T>& fns, bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const T* A,
              int64_t lda, const T* B, int64_t ldb, T beta, T* C, int64_t ldc, ThreadPool* pool) {
  if (K <= 0 || alpha == T(0)) return false;
  if (M == 1) {
    // C[0, j] = sum_p opA(0, p) * opB(p, j); opA's row has stride lda when transposed.
    const int64_t incx = ta ? lda : 1;
    if (tb) {
      // opB(p, j) = B[j*ldb + p]: one dot product per j, split over N.
      auto body = [&](int64_t b, int64_t e) { fns.rows(e - b, K, alpha, B + b * ldb, ldb, A, incx, beta, C + b, 1); };
      if (pool && N * K > 65536) par_for(*pool, N, 64, body);
      else body(0, N);
    } else {
      auto body = [&](int64_t b, int64_t e) {
        T* buf = row_scratch<T>( static_cast<size_t>(N));  // all of N: see pack_b_rows
        fns.cols(K, e - b, alpha, B + b, ldb, A, incx, beta, C + b, 1, buf);
      };
      if (pool && N * K > 65536) par_for(*pool, N, 256, body);
      else body(0, N);
    }
    return true;
  }
  if (N == 1) {
    const int64_t incx = tb ? 1 : ldb;  // opB(p, 0)
    if (!ta) {
      auto body = [&](int64_t b, int64_t e) {
        fns.rows(e - b, K, alpha, A + b * lda, lda, B, incx, beta, C + b * ldc, ldc);
      };
      if (pool && M * K > 65536) par_for(*pool, M, 64, body);
      else body(0, M);
    } else {
      T* buf = row_scratch<T>( static_cast<size_t>(M));
      fns.cols(K, M, alpha, A, lda, B, incx, beta, C, ldc, buf);
    }
    return true;
  }
  return false;
}

}  // namespace

bool try_gemv(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
              const float* B, int64_t ldb, float beta, float* C, int64_t ldc, ThreadPool* pool) {
  const GemvFns<float> fns = pick_sgemv();  // per call: cpu_isa() can be capped at run time
  return try_gemv_with<float>(fns, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, pool);
}

bool try_gemv(bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const double* A, int64_t lda,
              const double* B, int64_t ldb, double beta, double* C, int64_t ldc, ThreadPool* pool) {
  const GemvFns<double> fns = pick_dgemv();
  return try_gemv_with<double>(fns, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, pool);
}

}  // namespace dlrt::cpu::gemm_detail
