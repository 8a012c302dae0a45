#include "backends/cuda/cuda_gemm.h"

#include <algorithm>

namespace dlrt::cuda {

namespace {

// How the transpose of a strided operand X (rows x cols, element (r, c) at
// r * s_row + c * s_col) is given to cuBLAS: with c unit-strided it is a
// column-major cols x rows matrix (op N, ld s_row); with r unit-strided it is
// the transpose of a column-major rows x cols one (op T, ld s_col). False when
// neither fits (no unit stride, or overlapping rows such as a broadcast).
bool blas_operand(int rows, int cols, int s_row, int s_col, cublasOperation_t* op, int* ld) {
  // cuBLAS sees the transpose (cols x rows, column-major): element (c, r) at c + r * ld.
  if (s_col == 1 && (rows <= 1 || s_row >= std::max(1, cols))) {
    *op = CUBLAS_OP_N;
    *ld = rows <= 1 ? std::max(1, cols) : s_row;
    return true;
  }
  if (s_row == 1 && (cols <= 1 || s_col >= std::max(1, rows))) {
    *op = CUBLAS_OP_T;
    *ld = cols <= 1 ? std::max(1, rows) : s_col;
    return true;
  }
  return false;
}

}  // namespace

std::vector<BlasCall> blas_calls(const gpu::GemmArgs& p, int batch, CUdeviceptr A, CUdeviceptr B, CUdeviceptr C) {
  BlasCall t;
  // C' = B' A' in column-major terms: C' (N x M, ld c_sm) is row-major C;
  // B' (N x K) is B transposed, A' (K x M) is A transposed.
  if (p.c_sn != 1 || (p.M > 1 && p.c_sm < p.N)) return {};
  if (!blas_operand(p.K, p.N, p.b_sk, p.b_sn, &t.op_b, &t.ldb)) return {};
  if (!blas_operand(p.M, p.K, p.a_sm, p.a_sk, &t.op_a, &t.lda)) return {};
  t.n = p.N;
  t.m = p.M;
  t.k = p.K;
  t.ldc = std::max(1, p.M > 1 ? p.c_sm : p.N);
  t.alpha = p.alpha;
  // Batches: bz -> (b1, b2) = (bz / nb2, bz % nb2) at offset b1 * sb1 + b2 * sb2.
  // One strided-batched call when that offset is linear in bz, else one per b1.
  int nb2 = std::max(1, p.nb2);
  int nb1 = (batch + nb2 - 1) / nb2;
  auto at = [](CUdeviceptr base, long long elems) { return base + static_cast<CUdeviceptr>(elems * 4); };
  auto one_call = [&](long long b1, long long sa, long long sb, long long sc, int count) {
    BlasCall u = t;
    u.a = at(A, p.a_off + b1 * p.a_sb1);
    u.b = at(B, p.b_off + b1 * p.b_sb1);
    u.c = at(C, p.c_off + b1 * p.c_sb1);
    u.sa = sa;
    u.sb = sb;
    u.sc = sc;
    u.count = count;
    return u;
  };
  if (nb1 <= 1) return {one_call(0, p.a_sb2, p.b_sb2, p.c_sb2, batch)};
  if (nb2 == 1) return {one_call(0, p.a_sb1, p.b_sb1, p.c_sb1, batch)};
  if (p.a_sb1 == nb2 * p.a_sb2 && p.b_sb1 == nb2 * p.b_sb2 && p.c_sb1 == nb2 * p.c_sb2)
    return {one_call(0, p.a_sb2, p.b_sb2, p.c_sb2, batch)};
  std::vector<BlasCall> out;
  for (int b1 = 0; b1 < nb1; ++b1) out.push_back(one_call(b1, p.a_sb2, p.b_sb2, p.c_sb2, std::min(nb2, batch - b1 * nb2)));
  return out;
}

}  // namespace dlrt::cuda
