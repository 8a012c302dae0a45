// GEMMs of the shared kernels' gemm_f32 launch as cuBLAS calls.
//
// gemm_f32 computes, for bz < batch, C = act(alpha * A x B + beta * bias) on
// row-major operands given by element strides (lowering.h, GemmArgs). cuBLAS
// is column-major, so a row-major C with unit column stride is handed over as
// its transpose: C' = B' A'. Operands whose strides fit (one unit stride, no
// overlapping rows) become one strided-batched SGEMM, or one per outer batch
// when the two batch levels do not combine linearly; the bias and activation
// then run as the gemm_epilogue_f32 kernel.
#pragma once

#include <vector>

#include "backends/cuda/cuda_api.h"
#include "backends/gpu/lowering.h"

namespace dlrt::cuda {

// One cuBLAS call of a GEMM: column-major C' (N x M) = op(B') op(A'), the
// row-major product C = A x B seen transposed.
struct BlasCall {
  cublasOperation_t op_b = CUBLAS_OP_N, op_a = CUBLAS_OP_N;
  int n = 0, m = 0, k = 0, ldb = 0, lda = 0, ldc = 0;
  CUdeviceptr b = 0, a = 0, c = 0;  // offsets applied
  long long sb = 0, sa = 0, sc = 0;
  int count = 1;
  float alpha = 1;
};

// The cuBLAS calls computing alpha * A x B for gemm_f32's parameters `p` over
// `batch` products on the buffers A, B, C; empty when the strides do not fit.
std::vector<BlasCall> blas_calls(const gpu::GemmArgs& p, int batch, CUdeviceptr A, CUdeviceptr B, CUdeviceptr C);

}  // namespace dlrt::cuda
