// Float GEMM microkernels shared between gemm.cpp (the packing/blocking
// driver) and the per-ISA files that define them (gemm_avx2.cpp,
// gemm_avx512.cpp).
//
// Contract: a is a packed MR x kc panel (column p at a + p*MR), b a packed
// kc x NR panel (row p at b + p*NR, 64-byte aligned); the kernel writes
// rows [0, mr) x columns [0, nr) of c = alpha * a*b + beta * c (c is not read
// when beta == 0) and touches nothing else. Rows/columns past mr/nr in the
// panels are zero padding.
#pragma once

#include <cstdint>

namespace dlrt::cpu {

// AVX-512F tile: 8 rows x 48 columns (three zmm per row, 24 accumulators).
// Chosen over 14 x 32: the zoo's row counts fill 8-row panels exactly and a
// narrow last panel runs only the zmm columns it needs (docs/performance-decisions.md).
constexpr int kSgemmAvx512MR = 8;
constexpr int kSgemmAvx512NR = 48;

// AVX2+FMA tile: 6 rows x 16 columns (two ymm per row, 12 accumulators).
constexpr int kSgemmAvx2MR = 6;
constexpr int kSgemmAvx2NR = 16;

// Full or partial (mr <= MR, nr <= NR; edge columns through k-masks) tile.
// Defined only on x86 builds; call only when cpu_isa() >= kAvx512.
void sgemm_kernel_avx512(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta,
                         int mr, int nr);
// The same without the narrow-edge kernel (a last panel of under 7 columns
// summed in several chains over k): every element is one chain over k, as in
// full tiles, so an element's bits do not depend on N.
void sgemm_kernel_avx512_uniform(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha,
                                 float beta, int mr, int nr);

// A column bias and a residual that a rows kernel adds to its tile as it
// stores it: c[i][j] = (alpha * ab + beta * c) + col_bias[j] + residual[i *
// ldr + j], both relative to the tile's first row and column; either may be
// null. Saves the epilogue a second pass over the tile.
struct TileAdd {
  const float* col_bias = nullptr;
  const float* residual = nullptr;
  int64_t ldr = 0;
};

// The same tile with A not packed: row i of op(A) is a + i*lda (row-major,
// k step 1); rows [0, mr) are read, nothing past them. Call only when
// cpu_isa() >= kAvx512.
// `prefetch` (may be null): pf_rows (<= kc) rows of a packed B panel (NR
// floats each) to pull toward L2 meanwhile, spread over the k steps.
// `add` (may be null): see TileAdd.
void sgemm_kernel_avx512_rows(int64_t kc, const float* a, int64_t lda, const float* b, float* c, int64_t ldc,
                              float alpha, float beta, int mr, int nr, const float* prefetch, int64_t pf_rows,
                              const TileAdd* add);

// sgemm_kernel_avx512_rows on the AVX2 6 x 16 tile (mr <= 6, nr <= 16; edge
// columns through masked stores). Call only when cpu_isa() >= kAvx2.
void sgemm_kernel_avx2_rows(int64_t kc, const float* a, int64_t lda, const float* b, float* c, int64_t ldc,
                            float alpha, float beta, int mr, int nr, const float* prefetch, int64_t pf_rows,
                            const TileAdd* add);

// Packs 8 rows of a row-major A (row stride lda), columns [0, kc), into one
// 8-row panel (column p at dst + 8p). Call only when cpu_isa() >= kAvx512.
void sgemm_pack_a8_avx512(const float* A, int64_t lda, int64_t kc, float* dst);

// y[r * incy] = alpha * dot(A[r, :cols], x[:cols]) + beta * y[r * incy] for
// r < rows (x contiguous; y not read when beta == 0). Call only when
// cpu_isa() >= kAvx512.
void sgemv_rows_avx512(int64_t rows, int64_t cols, float alpha, const float* A, int64_t lda, const float* x,
                       float beta, float* y, int64_t incy);

// sgemv_rows_avx512 on 8-lane vectors. Call only when cpu_isa() >= kAvx2.
void sgemv_rows_avx2(int64_t rows, int64_t cols, float alpha, const float* A, int64_t lda, const float* x, float beta,
                     float* y, int64_t incy);

struct GemmEpilogue;
// apply_epilogue for a tile the AVX-512 kernel has just stored (16-lane
// vectors from its first column): runs the epilogue's AVX-512 version (the
// generic apply_epilogue keeps narrow blocks on 8 lanes for AVX2-stored tiles).
void apply_epilogue_zmm_tile(const GemmEpilogue& ep, float* c, int64_t ldc, int64_t i0, int64_t j0, int64_t rows,
                             int64_t cols);

}  // namespace dlrt::cpu
