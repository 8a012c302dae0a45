// What the float and double GEMM files share: the microkernel types and
// tiles (gemm_micro.cpp defines the kernels and picks one per ISA), the
// matrix-vector path (gemv.cpp) and the parallel-loop helper. Internal to
// gemm.cpp, gemm_micro.cpp and gemv.cpp.
#pragma once

#include <cstdint>

#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/gemm_kernels.h"
#include "backends/cpu/kernels/isa.h"
#include "core/thread_pool.h"

namespace dlrt::cpu::gemm_detail {

// Microkernel contract: a is a packed MR x kc panel (column p at a + p*MR),
// b a packed kc x NR panel (row p at b + p*NR); writes the full MR x NR tile
// c = alpha * a*b + beta * c (c not read when beta == 0).
template <typename T>
using MicroKernel = void (*)(int64_t kc, const T* a, const T* b, T* c, int64_t ldc, T alpha, T beta);
// Same, writing only rows [0, mr) x columns [0, nr) of c (edge tiles without a scratch tile).
template <typename T>
using EdgeKernel = void (*)(int64_t kc, const T* a, const T* b, T* c, int64_t ldc, T alpha, T beta, int mr, int nr);

template <typename T>
struct Kernels {
  MicroKernel<T> full = nullptr;
  EdgeKernel<T> edge = nullptr;  // null: edge tiles go through a scratch tile
  // Fused output stage for a finished tile (float only).
  void (*epilogue)(const GemmEpilogue&, float*, int64_t, int64_t, int64_t, int64_t, int64_t) = apply_epilogue;
};

constexpr int kSMR = kSgemmAvx2MR, kSNR = kSgemmAvx2NR;  // float tile below 512 bits: 6 x 16
constexpr int kDMR = 4, kDNR = 8;   // double tile

// Packed-operand layouts of the float GEMM: the tile (MR x NR) the panels were built for.
enum class SLayout : uint8_t { k6x16, kAvx512 };

// The layout the float GEMM packs for under the current cpu_isa().
SLayout pick_slayout();
// The fastest kernel the current cpu_isa() allows for a layout.
// uniform_edges: no edge kernel whose order of sums depends on N (gemm.h SgemmOperand).
Kernels<float> skernels_for(SLayout layout, bool uniform_edges = false);

// The kernel that reads op(A) in place against a packed B of a layout, and
// the epilogue for the tiles it stores; kernel null where the current
// cpu_isa() has none (the generic level, or 8 x 48 below AVX-512).
struct RowsPath {
  SgemmRowsKernel kernel = nullptr;
  void (*epilogue)(const GemmEpilogue&, float*, int64_t, int64_t, int64_t, int64_t, int64_t) = nullptr;
};
RowsPath rows_path_for(SLayout layout);
MicroKernel<double> pick_dkernel();

inline bool cpu_has_avx2_fma() { return cpu_has_avx2(); }

// parallel_for through a one-pointer closure (fits std::function's inline
// storage: no heap allocation per call).
template <typename F>
void par_for(ThreadPool& pool, int64_t n, int64_t grain, const F& f) {
  pool.parallel_for(n, grain, [pf = &f](int64_t b, int64_t e) { (*pf)(b, e); });
}

// C = alpha * op(A) * op(B) + beta * C as a matrix-vector product when M or
// N is 1 (gemv.cpp); false, touching nothing, for any other shape, K <= 0 or
// alpha == 0.
bool try_gemv(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
              const float* B, int64_t ldb, float beta, float* C, int64_t ldc, ThreadPool* pool);
bool try_gemv(bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const double* A, int64_t lda,
              const double* B, int64_t ldb, double beta, double* C, int64_t ldc, ThreadPool* pool);

}  // namespace dlrt::cpu::gemm_detail
