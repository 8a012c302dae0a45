// Dense matrix multiply for the CPU backend: C = alpha * op(A) * op(B) + beta * C.
//
// All matrices are row-major with explicit leading dimensions (elements
// between consecutive rows). op(A) is M x K (A is K x M when trans_a), op(B)
// is K x N (B is N x K when trans_b), C is M x N. When beta == 0, C is only
// written, never read (it may hold garbage or NaN).
//
// The float path packs A and B panels into contiguous buffers and runs a
// register-tiled microkernel chosen at run time through cpu_isa() (isa.h, so
// DLRT_CPU_ISA and ScopedCpuIsa apply): an 8x48 AVX-512F tile, a 6x16
// AVX2/FMA tile, or portable code. Work is split over M/N blocks on
// `pool` (may be null for a single-threaded call). Thread-safety: every
// function here may be called concurrently from any thread; a call from
// inside a pool task runs single-threaded (the pool runs nested work inline).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>

#include "backends/cpu/kernels/activation_epilogue.h"
#include "core/thread_pool.h"
#include "dlrt/status.h"
#include "exec/kernel_build_options.h"

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

// ---- Fused output stage and pre-packed operands (float32) ----

// How a float GEMM against a pre-packed constant B multiplies: the
// contract's GemmPrecision (exec/kernel_build_options.h).
using exec::GemmPrecision;
using exec::gemm_precision_from_name;
using exec::gemm_precision_name;

// Applied to every element of C once its final value is known, while the
// tile is still in cache: C[i, j] = act(C[i, j] + row_bias[i] + col_bias[j]
// + residual[i * ldr + j]). Null pointers are skipped.
struct GemmEpilogue {
  const float* row_bias = nullptr;
  const float* col_bias = nullptr;
  const float* residual = nullptr;
  int64_t ldr = 0;
  Activation act;
  bool empty() const { return !row_bias && !col_bias && !residual && act.none(); }
};

// Applies `ep` to the rows x cols block at c (element (0, 0) is C[i0, j0]).
void apply_epilogue(const GemmEpilogue& ep, float* c, int64_t ldc, int64_t i0, int64_t j0, int64_t rows,
                    int64_t cols);

// op(A) (M x K) or op(B) (K x N) packed once, in the layout the blocked GEMM
// consumes, e.g. a constant weight matrix packed when a kernel is created.
// Immutable after packing; safe to share between concurrent calls.
class PackedMatrix {
 public:
  // Packs op(A) = A (M x K, row stride lda) or A^T when trans. With
  // kBf16x3 or kBf16, an untransposed A and amx_engine() not kNone, in the
  // AMX layout (gemm_amx.h); otherwise for the fp32 tile.
  static std::shared_ptr<const PackedMatrix> pack_a(bool trans, int64_t M, int64_t K, const float* A, int64_t lda,
                                                    GemmPrecision precision = GemmPrecision::kF32);
  // Packs op(B) = B (K x N, row stride ldb) or B^T when trans. With
  // kBf16x3 or kBf16 and amx_engine() not kNone, in the AMX layout
  // (gemm_amx.h); else with kBf16 for VDPBF16PS (gemm_bf16.h); otherwise
  // for the fp32 tile.
  static std::shared_ptr<const PackedMatrix> pack_b(bool trans, int64_t K, int64_t N, const float* B, int64_t ldb,
                                                    GemmPrecision precision = GemmPrecision::kF32);

  bool is_a() const { return is_a_; }
  int64_t rows() const { return rows_; }  // M for A, K for B
  int64_t cols() const { return cols_; }  // K for A, N for B
  // The register tile (MR x NR) the panels were packed for: picked from
  // cpu_isa() when packing; sgemm_ex runs a kernel for this tile.
  int mr() const { return mr_; }
  int nr() const { return nr_; }
  // kBf16x3 or kBf16 when data() holds bf16 pairs, not floats (AMX tiles
  // where packed_for_amx, gemm_amx.h).
  GemmPrecision precision() const { return precision_; }
  const float* data() const { return data_.get(); }
  size_t bytes() const { return bytes_; }
  // Writes the matrix back out, row-major: op(A) (rows() x cols()) or op(B)
  // (rows() x cols()), exactly as packed. False (nothing written) for AMX
  // tiles, whose bf16 parts need not sum to the floats they came from.
  bool unpack(float* out) const;

 private:
  friend int64_t packed_kc(const PackedMatrix& pm);
  // Sets the shape, tile and precision and allocates `bytes` for the panels.
  void init(bool is_a, int64_t rows, int64_t cols, int mr, int nr, GemmPrecision precision, size_t bytes);

  struct Free {  // returns the block to packed_store.h
    size_t bytes;  // no initialiser: unique_ptr needs Free default-constructible inside this class
    void operator()(float* p) const;
  };
  bool is_a_ = true;
  int64_t rows_ = 0, cols_ = 0;
  int mr_ = 0, nr_ = 0;
  GemmPrecision precision_ = GemmPrecision::kF32;
  int64_t kc_ = 0;  // depth of the K slices (fp32 tiles; packed_kc)
  size_t bytes_ = 0;
  std::unique_ptr<float[], Free> data_;
};

// Depth of the K slices a PackedMatrix is cut into: packed op(A) column p of
// the slice starting at p0 (kc = min(packed_kc(pm), K - p0) columns) lies at
// data() + round_up(M, mr) * p0 + panel * mr * kc + (p - p0) * mr.
// The depth is fixed when packing (from the caches, gemm_blocking.h) and kept
// with the panels, so every reader slices K as the packing did.
int64_t packed_kc(const PackedMatrix& pm);

// One GEMM operand: a plain row-major matrix (data, ld, trans), a packed one,
// or (B only) rows supplied by a BRowSource.
struct SgemmOperand {
  const float* data = nullptr;
  int64_t ld = 0;
  bool trans = false;
  const PackedMatrix* packed = nullptr;
  const BRowSource* rows = nullptr;
  // (B only) each element of C summed in the same order whatever N, so that
  // a padded batch's columns get the bits of an unpadded run (per-item runs,
  // RunOptions::item_lengths): no GEMV for one row or column, no narrow-edge
  // kernel; costs speed there.
  bool uniform_edges = false;
};

// C = epilogue(alpha * op(A) op(B) + beta * C). `ep` may be null. A B packed
// for kBf16x3 needs a plain A; if AMX has become unusable since (a
// ScopedCpuIsa), b.data must hold the unpacked B, which is then used. An A
// packed for kBf16x3 runs on AMX against a plain untransposed B or a
// BRowSource; otherwise (another B, AMX unusable) a.data must hold the
// unpacked A, which is then used. Fails (InvalidArgument, nothing written)
// when a packed operand cannot run and has no unpacked copy, or A and B were
// packed for different tiles; plain operands never fail.
Status sgemm_ex(int64_t M, int64_t N, int64_t K, float alpha, const SgemmOperand& a, const SgemmOperand& b, float beta,
              float* C, int64_t ldc, const GemmEpilogue* ep, ThreadPool* pool);

// Name of the float kernel cpu_isa() picks now ("avx512-8x48", "avx2-fma" or "generic"), for logs and benchmarks.
const char* sgemm_kernel_name();

}  // namespace dlrt::cpu
