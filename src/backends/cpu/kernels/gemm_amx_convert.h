// What the AMX float GEMM's files share (gemm_amx.h): the tile sets' sizes
// and the conversions of fp32 operands into bf16 tiles and of fp32 sums
// into C. Two forms give the same bits: a scalar one that runs on any CPU
// (with the tile model, for tests) and an AVX-512 one (AVX512-BF16's
// conversions) that the real tiles use.
#pragma once

#include <cstdint>

#include "backends/cpu/kernels/gemm.h"

namespace dlrt::cpu::amx_float {

constexpr int64_t kStep = 32;        // K per tile product (16 bf16 pairs)
constexpr int64_t kBlockN = 32;      // columns per C block (two tiles)
constexpr int64_t kTileElems = 512;  // bf16 per tile (16 x 32)

// Elements per K step of a 16-row block of A: its hi tile, and with `lo`
// (bf16x3) its lo tile after it.
constexpr int64_t a_set(bool lo) { return (lo ? 2 : 1) * kTileElems; }
// Elements per K step of a 32-column block of B: hi columns 0-15 and 16-31,
// and with `lo` the lo tiles of both after them.
constexpr int64_t b_set(bool lo) { return (lo ? 4 : 2) * kTileElems; }

// hi = bf16(x) and, for bf16x3, lo = bf16(x - hi) (0 when hi is not finite),
// each rounded as VCVTNEPS2BF16 rounds (bf16_round).
struct Convert {
  // Rows [0, rows) (rows <= 16) of the 16-row block of op(A) from row i0
  // (A, or A^T when trans) as KS K steps, step s at dst + s * step: the hi
  // tile (and the lo tile after it); rows past `rows` and k past K are
  // zeros. `row` holds K floats (used when trans).
  void (*a_block)(const float* A, int64_t lda, bool trans, int64_t i0, int64_t rows, int64_t K, int64_t KS,
                  uint16_t* dst, float* row, int64_t step, bool lo);
  // Columns [0, cols) (cols <= 32) of a row-major B (rows [0, K)) as KS
  // tile sets of b_set(lo) elements; rows 2p and 2p + 1 interleaved as k
  // pairs, the rest zeros.
  void (*b_block)(const float* B, int64_t ldb, int64_t K, int64_t KS, int64_t cols, uint16_t* dst, bool lo);
  // C[0:rows, 0:cols] = alpha * t + beta * C, t with row stride 32; C is not
  // read when beta == 0.
  void (*write)(const float* t, int64_t rows, int64_t cols, float alpha, float beta, float* c, int64_t ldc);
  // apply_epilogue on a block of C.
  void (*epilogue)(const GemmEpilogue& ep, float* c, int64_t ldc, int64_t i0, int64_t j0, int64_t rows,
                   int64_t cols);
};

Convert convert_scalar();
// The AVX-512 form where bf16_dot_available() (AVX512-BF16 and cpu_isa()
// AVX-512), else the scalar one.
Convert convert_best();

}  // namespace dlrt::cpu::amx_float
