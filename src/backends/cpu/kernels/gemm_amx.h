// Float GEMM on Intel AMX tiles, in two precisions.
//
// "bf16x3": every fp32 operand x is split into two bf16 parts, hi = bf16(x)
// and lo = bf16(x - hi), and a product a*b is taken as hi_a*hi_b + hi_a*lo_b
// + lo_a*hi_b, accumulated in fp32 by TDPBF16PS. That keeps about 16
// significant bits of each operand: a result's relative error is about 1e-5
// (fp32 FMAs: about 1e-7), while the three tile products per K step still
// run several times faster than fp32 FMAs on AVX-512.
//
// "bf16": the hi parts alone, one TDPBF16PS per K step (each operand rounded
// to 8 significant bits, fp32 sums: the contract of precision bf16).
//
// Used when the session asks for precision bf16x3 or bf16
// (docs/performance-decisions.md) and amx_engine() is not kNone, for a
// constant weight matrix on either side: a plain fp32 op(A) against a B
// packed by amx_pack_b (MatMul, Gemm), or an A packed by amx_pack_a against a
// plain or generated B (Conv: the filters times the im2col matrix).
//
// The kernel is written once over the tile operations of amx_tiles.h: it
// runs on the real tiles, or on the scalar tile model where a test asks for
// it (ScopedAmxTileModel), so that any CPU tests its tiling, packing and
// edges.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/cpu/kernels/gemm.h"
#include "core/thread_pool.h"

namespace dlrt::cpu {

// Which tiles the AMX GEMM runs on now: kModel while a ScopedAmxTileModel
// lives, else kTiles where amx_tiles_unavailable() is null, else kNone.
enum class AmxEngine : uint8_t { kNone, kTiles, kModel };
AmxEngine amx_engine();

// Why the real tiles do not run (null when they do): AMX-TILE, AMX-BF16 or
// AVX512-BF16 absent (DLRT_CPU_FEATURES_OFF=amx_bf16 too), cpu_isa() below
// AVX-512 (DLRT_CPU_ISA, ScopedCpuIsa), Linux refused the tile state
// (arch_prctl), or the tiles' first-use self-check disagreed with the model
// beyond amx::tdpbf16ps_tolerance.
const char* amx_tiles_unavailable();

// amx_engine() != kNone (precision bf16 runs on the same engine).
bool amx_bf16x3_available();

// Runs every AMX GEMM on the scalar tile model while it lives (tests; any
// CPU; nests). Operands packed for AMX stay valid across it.
class ScopedAmxTileModel {
 public:
  ScopedAmxTileModel();
  ~ScopedAmxTileModel();
  ScopedAmxTileModel(const ScopedAmxTileModel&) = delete;
  ScopedAmxTileModel& operator=(const ScopedAmxTileModel&) = delete;
};

// The precisions the AMX GEMM runs: kBf16x3 and kBf16.
inline bool is_amx_precision(GemmPrecision p) { return p == GemmPrecision::kBf16x3 || p == GemmPrecision::kBf16; }

// True when `pm` holds AMX tiles: PackedMatrix::pack_a / pack_b in kBf16x3 or
// kBf16 while amx_engine() was not kNone (else kBf16 packs for VDPBF16PS).
bool packed_for_amx(const PackedMatrix& pm);

// The functions below take `precision` kBf16x3 (hi and lo tiles) or kBf16
// (hi tiles alone); the amx_bf16x3_* forms are the kBf16x3 ones.

// Bytes amx_pack_b writes for a K x N op(B): K and N are padded to
// multiples of 32, each element takes two bf16 (bf16x3) or one.
size_t amx_packed_b_bytes(GemmPrecision precision, int64_t K, int64_t N);
// Packs op(B) = B (K x N, row stride ldb) or B^T (trans) into `dst` (64-byte
// aligned, amx_packed_b_bytes bytes). Runs on any CPU.
void amx_pack_b(GemmPrecision precision, bool trans, int64_t K, int64_t N, const float* B, int64_t ldb, void* dst);
// C = epilogue(alpha * op(A) * B + beta * C) with B packed by amx_pack_b in
// this precision for this K and N; op(A) is A (M x K, row stride lda) or A^T
// when trans_a. C is not read when beta == 0. `ep` and `pool` may be null.
// Call only when amx_engine() is not kNone.
void amx_gemm(GemmPrecision precision, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
              bool trans_a, const void* packed_b, float beta, float* C, int64_t ldc, const GemmEpilogue* ep,
              ThreadPool* pool);
// Bytes amx_pack_a writes for an M x K A (M and K padded to multiples of 32).
size_t amx_packed_a_bytes(GemmPrecision precision, int64_t M, int64_t K);
// Packs A (M x K, row stride lda) into `dst` (64-byte aligned): per 32-row
// pair of blocks, per 32-deep K step, the tiles of its upper and of its lower
// 16 rows (a pass over some K steps of a row pair reads one contiguous
// range). Runs on any CPU.
void amx_pack_a(GemmPrecision precision, int64_t M, int64_t K, const float* A, int64_t lda, void* dst);
// C = epilogue(alpha * A * B + beta * C) with A packed by amx_pack_a in this
// precision for this M and K, and B (K x N) either a plain row-major matrix
// (b_rows null: B, row stride ldb) or rows supplied by `b_rows` (B unused).
// B is split into tiles at run time, a block of columns at a time. C is not
// read when beta == 0. `ep` and `pool` may be null. Call only when
// amx_engine() is not kNone.
void amx_gemm_packed_a(GemmPrecision precision, int64_t M, int64_t N, int64_t K, float alpha, const void* packed_a,
                       const float* B, int64_t ldb, const BRowSource* b_rows, float beta, float* C, int64_t ldc,
                       const GemmEpilogue* ep, ThreadPool* pool);

inline size_t amx_bf16x3_packed_bytes(int64_t K, int64_t N) {
  return amx_packed_b_bytes(GemmPrecision::kBf16x3, K, N);
}
inline void amx_bf16x3_pack_b(bool trans, int64_t K, int64_t N, const float* B, int64_t ldb, void* dst) {
  amx_pack_b(GemmPrecision::kBf16x3, trans, K, N, B, ldb, dst);
}
inline void amx_bf16x3_gemm(int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda, bool trans_a,
                            const void* packed_b, float beta, float* C, int64_t ldc, const GemmEpilogue* ep,
                            ThreadPool* pool) {
  amx_gemm(GemmPrecision::kBf16x3, M, N, K, alpha, A, lda, trans_a, packed_b, beta, C, ldc, ep, pool);
}

}  // namespace dlrt::cpu
