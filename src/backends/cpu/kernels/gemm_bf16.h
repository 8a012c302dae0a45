// Float GEMM in precision "bf16": one bf16 product per term, f32 sums, as
// AVX512-BF16's VDPBF16PS computes it. Used when the session asks for
// precision bf16 (docs/performance-precision.md) against a constant B (MatMul, Gemm
// and their fused forms: B rounded to bf16 and packed once by bf16_pack_b)
// and for attention's two products (B packed per head); op(A) is rounded and
// packed per call.
//
// Packed layout: K in pairs (an odd K gets a zero pair partner), each pair of
// one row or column stored as one 32-bit word (low half element 2p, high half
// 2p + 1). B: panels of kBf16NR columns, per pair kBf16NR words; A: panels of
// kBf16MR rows, per pair kBf16MR words. Rows and columns past the matrix are
// zero.
//
// Engines: the VDPBF16PS micro-kernel (x86) or the BFMMLA one (aarch64,
// gemm_bf16_neon.cpp) where bf16_dot_available(), else a scalar model of the
// same instruction (bit for bit the same results, far slower): the session
// picks f32 up front where the instruction is missing (session.cpp), so the
// model runs only in tests and when the ISA was capped after packing. The two
// instructions round differently, so x86 and aarch64 results differ in the
// last bits.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

#include "backends/cpu/kernels/gemm.h"
#include "core/thread_pool.h"

namespace dlrt::cpu {

constexpr int kBf16MR = 8;   // rows per register tile
constexpr int kBf16NR = 48;  // columns per register tile (three 16-lane vectors)

// True when the bf16 kernel can run now: x86: the CPU has AVX512-BF16 and
// cpu_isa() (DLRT_CPU_ISA, ScopedCpuIsa) allows AVX-512; aarch64: the CPU has
// the BF16 extension (cpu_features().bf16: HWCAP2_BF16, less
// DLRT_CPU_FEATURES_OFF) and cpu_isa() allows NEON.
bool bf16_dot_available();
// Why it cannot ("" when it can), for the run report.
const char* bf16_dot_unavailable_reason();

// fp32 -> bf16 as VCVTNE2PS2BF16 converts (Intel SDM): zero and denormal
// inputs give a zero of the same sign; infinity is truncated; a NaN is
// truncated with its quiet bit set; any other value rounds to nearest even
// (and may round up to infinity). MXCSR plays no part.
uint16_t bf16_round(float x);
inline float bf16_widen(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

// One 32-bit lane of VDPBF16PS, the scalar model: a and b each hold a bf16
// pair (element 0 in the low half). Per the SDM the lane adds the high
// product first, then the low one, each as an fp32 FMA rounded to nearest
// even; inputs (the bf16 values and acc) that are denormal count as zero and
// a denormal result is flushed to zero (keeping its sign), whatever MXCSR says.
float bf16_dot_model(float acc, uint32_t a, uint32_t b);

enum class Bf16Engine : uint8_t {
  kAuto,         // the instruction where bf16_dot_available(), else its model
  kModel,        // the scalar model of VDPBF16PS, any CPU (tests)
  kInstruction,  // VDPBF16PS (x86) or BFMMLA (aarch64); only where bf16_dot_available()
  kMmlaModel     // the scalar model of BFMMLA (tests; aarch64 builds, x86 ones run kModel)
};

// Bytes bf16_pack_b writes for a K x N op(B).
size_t bf16_packed_b_bytes(int64_t K, int64_t N);
// Packs op(B) = B (K x N, row stride ldb) or B^T when trans into dst
// (64-byte aligned). Any CPU; same bytes on every CPU (VCVTNE2PS2BF16
// where bf16_dot_available() and !trans).
void bf16_pack_b(bool trans, int64_t K, int64_t N, const float* B, int64_t ldb, void* dst);

// Bytes bf16_pack_a writes for an M x K op(A).
size_t bf16_packed_a_bytes(int64_t M, int64_t K);
// Packs op(A) = A (M x K, row stride lda) or A^T when trans into dst. With
// `instruction`, converts with VCVTNE2PS2BF16 (same bits as without).
void bf16_pack_a(bool trans, int64_t M, int64_t K, const float* A, int64_t lda, void* dst, bool instruction);

// C = epilogue(alpha * op(A) * B + beta * C) with B packed by bf16_pack_b for
// this K and N; op(A) is A (M x K, row stride lda) or A^T when trans_a. `ep`
// may be null; C is not read when beta == 0.
void bf16_gemm(int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda, bool trans_a,
               const void* packed_b, float beta, float* C, int64_t ldc, const GemmEpilogue* ep, ThreadPool* pool,
               Bf16Engine engine = Bf16Engine::kAuto);

// The engine bf16_gemm's kAuto runs now: "avx512_bf16", "neon-bfmmla" or
// "scalar model".
const char* bf16_engine_name();

// ---- Per-ISA pieces (gemm_bf16_avx512.cpp); call only when bf16_dot_available(). ----

// The register tile: kp pairs of a packed A panel (a + p * kBf16MR) times a
// packed B panel (b + p * kBf16NR); writes rows [0, mr) x columns [0, nr) of
// c = alpha * ab + beta * c (c not read when beta == 0; with beta != 0 each
// element is fma(beta, c, alpha * ab), as the scalar model computes it).
void bf16_kernel_avx512(int64_t kp, const uint32_t* a, const uint32_t* b, float* c, int64_t ldc, float alpha,
                        float beta, int mr, int nr);
// Converts rows [0, mr) (mr <= kBf16MR) of a row-major A (columns [0, K)) into
// one packed panel of kp = ceil(K / 2) pairs; rows past mr are zero.
void bf16_pack_a_panel_avx512(const float* A, int64_t lda, int mr, int64_t K, uint32_t* dst);
// Converts columns [0, nr) (nr <= kBf16NR) of a row-major B (rows [0, K))
// into one packed panel; columns past nr are zero.
void bf16_pack_b_panel_avx512(const float* B, int64_t ldb, int64_t K, int nr, uint32_t* dst);

// ---- BFMMLA (gemm_bf16_neon.cpp) ----

// One BFDotAdd step of BFMMLA, the scalar model (Arm ARM pseudocode BFDotAdd,
// BFMul, BFAdd, BFRound; FEAT_EBF16's extended behaviour off, FPCR.EBF clear
// as Linux starts a process): acc + (a0 * b0 + a1 * b1) for the bf16 pairs
// a and b (element 0 in the low half), each product, their sum and the sum
// with acc rounded on its own to odd (an inexact result is whichever of the
// two floats around it has its last mantissa bit set). Inputs (bf16 values
// and acc) that are denormal count as zero; a result below 2^-126 in
// magnitude is a zero of its sign, one from 2^128 an infinity; an exact zero
// sum is +0; any NaN gives the default NaN. FPCR plays no part. BFMMLA adds
// its pairs 2q, then 2q + 1 of each k group of four this way.
float bf16_mmla_dot_model(float acc, uint32_t a, uint32_t b);
// The register tile (bf16_kernel_avx512's contract) on the BFMMLA model: per
// element the pairs in order, then a zero pair when kp is odd (the padding of
// the last BFMMLA); c = fma(beta, c, alpha * ab).
void bf16_kernel_mmla_model(int64_t kp, const uint32_t* a, const uint32_t* b, float* c, int64_t ldc, float alpha,
                            float beta, int mr, int nr);
#if defined(__aarch64__)
// The BFMMLA tile, the same contract and bits; call only when bf16_dot_available().
void bf16_kernel_neon(int64_t kp, const uint32_t* a, const uint32_t* b, float* c, int64_t ldc, float alpha, float beta,
                      int mr, int nr);
#endif

}  // namespace dlrt::cpu
