// Float GEMM on Intel AMX tiles in "bf16x3" precision: every fp32 operand x
// is split into two bf16 parts, hi = bf16(x) and lo = bf16(x - hi), and a
// product a*b is taken as hi_a*hi_b + hi_a*lo_b + lo_a*hi_b, accumulated in
// fp32 by TDPBF16PS. That keeps about 16 significant bits of each operand:
// a result's relative error is about 1e-5 (fp32 FMAs: about 1e-7), while the
// three tile products per K step still run several times faster than fp32
// FMAs on AVX-512.
//
// Used when the session asks for precision bf16x3 (docs/performance-decisions.md) and
// amx_bf16x3_available() holds, for a constant weight matrix on either side:
// a plain fp32 op(A) against a B packed by amx_bf16x3_pack_b (MatMul, Gemm),
// or an A packed by amx_bf16x3_pack_a against a plain or generated B (Conv:
// the filters times the im2col matrix).
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/cpu/kernels/gemm.h"
#include "core/thread_pool.h"

namespace dlrt::cpu {

// True when this CPU and OS can run the AMX path now: AMX-TILE, AMX-BF16 and
// AVX512-BF16 present, Linux granted the tile state (arch_prctl), and
// cpu_isa() is AVX-512 (DLRT_CPU_ISA=avx2 or a ScopedCpuIsa turns it off).
bool amx_bf16x3_available();

// Bytes amx_bf16x3_pack_b writes for a K x N op(B): K and N are padded to
// multiples of 32, and each element takes two bf16 (4 bytes, as in fp32).
size_t amx_bf16x3_packed_bytes(int64_t K, int64_t N);

// Packs op(B) = B (K x N, row stride ldb) or B^T (trans) into `dst` (64-byte
// aligned, amx_bf16x3_packed_bytes(K, N) bytes). Runs on any CPU.
void amx_bf16x3_pack_b(bool trans, int64_t K, int64_t N, const float* B, int64_t ldb, void* dst);

// C = epilogue(alpha * op(A) * B + beta * C) with B packed by
// amx_bf16x3_pack_b for this K and N; op(A) is A (M x K, row stride lda) or
// A^T when trans_a. C is not read when beta == 0. `ep` and `pool` may be
// null. Call only when amx_bf16x3_available().
void amx_bf16x3_gemm(int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda, bool trans_a,
                     const void* packed_b, float beta, float* C, int64_t ldc, const GemmEpilogue* ep,
                     ThreadPool* pool);

// Bytes amx_bf16x3_pack_a writes for an M x K A: M is padded to a multiple
// of 32, K to one of 32, and each element takes two bf16 (4 bytes).
size_t amx_bf16x3_packed_a_bytes(int64_t M, int64_t K);

// Packs A (M x K, row stride lda) into `dst` (64-byte aligned,
// amx_bf16x3_packed_a_bytes(M, K) bytes): per 32-row pair of blocks, per
// 32-deep K step, the hi and lo tiles of its upper and of its lower 16 rows
// (a pass over some K steps of a row pair reads one contiguous range).
// Call only when amx_bf16x3_available().
void amx_bf16x3_pack_a(int64_t M, int64_t K, const float* A, int64_t lda, void* dst);

// C = epilogue(alpha * A * B + beta * C) with A packed by amx_bf16x3_pack_a
// for this M and K, and B (K x N) either a plain row-major matrix (b_rows
// null: B, row stride ldb) or rows supplied by `b_rows` (B unused). B is
// split into tiles at run time, a block of columns at a time. C is not read
// when beta == 0. `ep` and `pool` may be null. Call only when
// amx_bf16x3_available().
void amx_bf16x3_gemm_packed_a(int64_t M, int64_t N, int64_t K, float alpha, const void* packed_a, const float* B,
                              int64_t ldb, const BRowSource* b_rows, float beta, float* C, int64_t ldc,
                              const GemmEpilogue* ep, ThreadPool* pool);

}  // namespace dlrt::cpu
