// Float GEMM microkernels shared between gemm.cpp (the packing/blocking
// driver), gemv.cpp and gemm_micro.cpp, which compiles them from one source
// for every vector width (gemm_simd.h over simd/simd.h) and picks one per ISA.
//
// Contract: a is a packed MR x kc panel (column p at a + p*MR), b a packed
// kc x NR panel (row p at b + p*NR, 64-byte aligned); the kernel writes
// rows [0, mr) x columns [0, nr) of c = alpha * a*b + beta * c (c is not read
// when beta == 0) and touches nothing else. Rows/columns past mr/nr in the
// panels are zero padding.
#pragma once

#include <cstdint>

#include "backends/cpu/kernels/simd/width.h"

namespace dlrt::cpu {

// The 512-bit tile: 8 rows x 48 columns (three zmm per row, 24 accumulators).
// Chosen over 14 x 32: the zoo's row counts fill 8-row panels exactly and a
// narrow last panel runs only the zmm columns it needs (docs/performance-decisions.md).
constexpr int kSgemmAvx512MR = 8;
constexpr int kSgemmAvx512NR = 48;

// The 256-bit tile: 6 rows x 16 columns (two ymm per row, 12 accumulators
// in AVX2's 16 registers). Also the 128-bit tile (four vectors per row, 24
// accumulators in NEON's 32 registers): one packed layout for both.
constexpr int kSgemmAvx2MR = 6;
constexpr int kSgemmAvx2NR = 16;

// A column bias and a residual that a rows kernel adds to its tile as it
// stores it: c[i][j] = (alpha * ab + beta * c) + col_bias[j] + residual[i *
// ldr + j], both relative to the tile's first row and column; either may be
// null. Saves the epilogue a second pass over the tile.
struct TileAdd {
  const float* col_bias = nullptr;
  const float* residual = nullptr;
  int64_t ldr = 0;
};

// A tile (mr <= MR, nr <= NR) with A not packed: row i of op(A) is a + i*lda
// (row-major, k step 1); rows [0, mr) are read, nothing past them.
// `prefetch` (may be null): pf_rows (<= kc) rows of a packed B panel (NR
// floats each) to pull toward L2 meanwhile, spread over the k steps.
// `add` (may be null): see TileAdd.
using SgemmRowsKernel = void (*)(int64_t kc, const float* a, int64_t lda, const float* b, float* c, int64_t ldc,
                                 float alpha, float beta, int mr, int nr, const float* prefetch, int64_t pf_rows,
                                 const TileAdd* add);

// Packs MR rows of a row-major A (row stride lda), columns [0, kc), into one
// MR-row panel (column p at dst + MR*p).
using SgemmPackPanel = void (*)(const float* A, int64_t lda, int64_t kc, float* dst);

// The rows kernel on the tile of width `w` (8 x 48 at k512, 6 x 16 below);
// `w` must run on this CPU (simd_width_runs).
SgemmRowsKernel sgemm_rows_kernel_at(SimdWidth w);

// The panel packer for MR-row panels at the current ISA; null at the generic
// level or for an MR without one.
SgemmPackPanel sgemm_pack_panel_for(int mr);

// y[r * incy] = alpha * dot(A[r, :cols], x[:cols]) + beta * y[r * incy] for
// r < rows (x contiguous; y not read when beta == 0) on vectors of width `w`
// (which must run on this CPU).
void sgemv_rows_at(SimdWidth w, int64_t rows, int64_t cols, float alpha, const float* A, int64_t lda, const float* x,
                   float beta, float* y, int64_t incy);

struct GemmEpilogue;
struct Activation;
// apply_epilogue for a tile the AVX-512 kernel has just stored (16-lane
// vectors from its first column): runs the epilogue's AVX-512 version (the
// generic apply_epilogue keeps narrow blocks on 8 lanes for AVX2-stored tiles).
void apply_epilogue_zmm_tile(const GemmEpilogue& ep, float* c, int64_t ldc, int64_t i0, int64_t j0, int64_t rows,
                             int64_t cols);
// apply_epilogue and apply_activation at the width `w` (which must run on
// this CPU), whatever cpu_isa() is: for tests of every instantiation.
void apply_epilogue_at(SimdWidth w, const GemmEpilogue& ep, float* c, int64_t ldc, int64_t i0, int64_t j0,
                       int64_t rows, int64_t cols);
void apply_activation_at(SimdWidth w, const Activation& a, float* x, int64_t n);

}  // namespace dlrt::cpu
