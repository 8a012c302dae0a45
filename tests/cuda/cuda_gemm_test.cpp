// The GEMM -> cuBLAS mapping (backends/cuda/cuda_gemm.h) checked on the host:
// the calls it makes are executed by a column-major reference with cuBLAS's
// SGEMM semantics on host memory, and must give what gemm_f32 defines (the
// row-major product over strided operands and two batch levels). No GPU needed.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "backends/cuda/cuda_gemm.h"

namespace dlrt::cuda {
namespace {

float* fp(CUdeviceptr p) { return reinterpret_cast<float*>(static_cast<uintptr_t>(p)); }
CUdeviceptr dp(float* p) { return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p)); }

// cublasSgemm(StridedBatched) with beta = 0, column-major.
void run_blas(const BlasCall& c) {
  for (int i = 0; i < c.count; ++i) {
    const float* B = fp(c.b) + i * c.sb;
    const float* A = fp(c.a) + i * c.sa;
    float* C = fp(c.c) + i * c.sc;
    for (int col = 0; col < c.m; ++col)
      for (int row = 0; row < c.n; ++row) {
        double acc = 0;
        for (int k = 0; k < c.k; ++k) {
          float x = c.op_b == CUBLAS_OP_N ? B[row + k * c.ldb] : B[k + row * c.ldb];
          float y = c.op_a == CUBLAS_OP_N ? A[k + col * c.lda] : A[col + k * c.lda];
          acc += static_cast<double>(x) * y;
        }
        C[row + col * c.ldc] = static_cast<float>(c.alpha * acc);
      }
  }
}

// gemm_f32's definition (without bias and activation).
void reference(const gpu::GemmArgs& p, int batch, const float* A, const float* B, float* C) {
  int nb2 = std::max(1, p.nb2);
  for (int bz = 0; bz < batch; ++bz) {
    int b1 = bz / nb2, b2 = bz % nb2;
    const float* a = A + p.a_off + b1 * p.a_sb1 + b2 * p.a_sb2;
    const float* b = B + p.b_off + b1 * p.b_sb1 + b2 * p.b_sb2;
    float* c = C + p.c_off + b1 * p.c_sb1 + b2 * p.c_sb2;
    for (int m = 0; m < p.M; ++m)
      for (int n = 0; n < p.N; ++n) {
        double acc = 0;
        for (int k = 0; k < p.K; ++k) acc += static_cast<double>(a[m * p.a_sm + k * p.a_sk]) * b[k * p.b_sk + n * p.b_sn];
        c[m * p.c_sm + n * p.c_sn] = static_cast<float>(p.alpha * acc);
      }
  }
}

struct Case {
  int M, N, K;
  bool ta, tb;  // A stored as K x M, B stored as N x K
  int nb1, nb2;
  bool a_broadcast;  // A shared by every product (weights)
  bool padded_c;     // C rows wider than N
};

void check(const Case& cs) {
  gpu::GemmArgs p;
  p.M = cs.M;
  p.N = cs.N;
  p.K = cs.K;
  p.alpha = 0.5f;
  p.nb2 = cs.nb2;
  int batch = cs.nb1 * cs.nb2;
  int a_size = cs.M * cs.K, b_size = cs.K * cs.N;
  int c_row = cs.N + (cs.padded_c ? 3 : 0), c_size = cs.M * c_row;
  p.a_sm = cs.ta ? 1 : cs.K;
  p.a_sk = cs.ta ? cs.M : 1;
  p.b_sk = cs.tb ? 1 : cs.N;
  p.b_sn = cs.tb ? cs.K : 1;
  p.c_sm = c_row;
  p.c_sn = 1;
  p.a_off = 2;
  p.b_off = 1;
  p.c_off = 4;
  p.a_sb2 = cs.a_broadcast ? 0 : a_size;
  p.a_sb1 = cs.a_broadcast ? 0 : a_size * cs.nb2;
  p.b_sb2 = b_size;
  // Outer batch of B not contiguous with the inner one: one call per b1.
  p.b_sb1 = b_size * cs.nb2 + (cs.nb1 > 1 ? 5 : 0);
  p.c_sb2 = c_size;
  p.c_sb1 = c_size * cs.nb2;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> A(p.a_off + a_size * batch + 8), B(p.b_off + (b_size * cs.nb2 + 5) * cs.nb1 + 8);
  for (auto& v : A) v = u(rng);
  for (auto& v : B) v = u(rng);
  std::vector<float> want(p.c_off + c_size * batch + 8, -7.f), got = want;
  reference(p, batch, A.data(), B.data(), want.data());
  auto calls = blas_calls(p, batch, dp(A.data()), dp(B.data()), dp(got.data()));
  ASSERT_FALSE(calls.empty());
  for (const auto& c : calls) run_blas(c);
  for (int bz = 0; bz < batch; ++bz)
    for (int m = 0; m < cs.M; ++m)
      for (int n = 0; n < c_row; ++n) {
        size_t i = p.c_off + static_cast<size_t>(bz) * c_size + m * c_row + n;
        ASSERT_NEAR(got[i], want[i], 1e-5) << "M " << cs.M << " N " << cs.N << " K " << cs.K << " ta " << cs.ta
                                           << " tb " << cs.tb << " batch " << bz << " m " << m << " n " << n;
      }
}

TEST(CudaGemm, CublasCallsMatchGemmDefinition) {
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (Case cs : {Case{5, 7, 3, ta, tb, 1, 1, false, false}, Case{1, 9, 4, ta, tb, 1, 1, false, false},
                      Case{6, 1, 5, ta, tb, 1, 1, false, false}, Case{4, 6, 1, ta, tb, 1, 1, false, false},
                      Case{8, 5, 6, ta, tb, 1, 3, false, true}, Case{3, 4, 5, ta, tb, 2, 3, false, false},
                      Case{3, 4, 5, ta, tb, 4, 1, true, false}, Case{16, 12, 9, ta, tb, 2, 2, true, true}})
        check(cs);
}

TEST(CudaGemm, RefusesWhatCublasCannotTake) {
  gpu::GemmArgs p;
  p.M = 4;
  p.N = 4;
  p.K = 4;
  p.a_sm = 4;
  p.a_sk = 1;
  p.b_sk = 4;
  p.b_sn = 1;
  p.c_sm = 1;  // C column-major: not handed to cuBLAS
  p.c_sn = 4;
  EXPECT_TRUE(blas_calls(p, 1, 0, 0, 0).empty());
  p.c_sm = 4;
  p.c_sn = 1;
  p.b_sk = 8;  // no unit stride in B
  p.b_sn = 2;
  EXPECT_TRUE(blas_calls(p, 1, 0, 0, 0).empty());
  p.b_sk = 0;  // B's rows overlap (a broadcast row)
  p.b_sn = 1;
  EXPECT_TRUE(blas_calls(p, 1, 0, 0, 0).empty());
}

}  // namespace
}  // namespace dlrt::cuda
