#include <cmath>
#include <random>

#include "backends/cpu/kernels/gemm.h"
#include "isa_test_util.h"
#include "kernel_test_util.h"

namespace dlrt::cpu {
namespace {

using testing::attr_float;
using testing::attr_int;
using testing::expect_near;
using testing::run_op;

// Straightforward reference in double.
template <typename T>
void ref_gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const T* A, int64_t lda, const T* B,
              int64_t ldb, double beta, T* C, int64_t ldc) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t p = 0; p < K; ++p)
        s += static_cast<double>(ta ? A[p * lda + i] : A[i * lda + p]) * static_cast<double>(tb ? B[j * ldb + p] : B[p * ldb + j]);
      const double c = beta == 0 ? 0.0 : beta * static_cast<double>(C[i * ldc + j]);
      C[i * ldc + j] = static_cast<T>(alpha * s + c);
    }
}

template <typename T>
void check_random_gemms(int iterations, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  ThreadPool pool(3);
  for (int it = 0; it < iterations; ++it) {
    int64_t M = 1 + rng() % 40, N = 1 + rng() % 40, K = 1 + rng() % 300;
    if (it % 5 == 0) {  // larger blocks: several MC/KC/NC blocks and edge tiles
      M = 1 + rng() % 200;
      N = 1 + rng() % 300;
      K = 1 + rng() % 600;
    }
    if (it % 11 == 0) M = 1;
    if (it % 13 == 0) N = 1;
    if (it % 17 == 0) K = 1;
    const bool ta = rng() % 2, tb = rng() % 2;
    const double alpha = it % 3 == 0 ? 1.0 : dist(rng);
    const double beta = it % 4 == 0 ? 0.0 : (it % 4 == 1 ? 1.0 : dist(rng));
    const int64_t lda = (ta ? M : K) + rng() % 3, ldb = (tb ? K : N) + rng() % 3, ldc = N + rng() % 3;
    std::vector<T> A((ta ? K : M) * lda), B((tb ? N : K) * ldb), C(M * ldc);
    for (auto& v : A) v = static_cast<T>(dist(rng));
    for (auto& v : B) v = static_cast<T>(dist(rng));
    for (auto& v : C) v = static_cast<T>(dist(rng));
    if (beta == 0.0)  // C must not be read when beta == 0
      for (auto& v : C) v = std::numeric_limits<T>::quiet_NaN();
    std::vector<T> R = C;
    ThreadPool* p = it % 2 ? &pool : nullptr;
    if constexpr (std::is_same_v<T, float>) {
      sgemm(ta, tb, M, N, K, static_cast<float>(alpha), A.data(), lda, B.data(), ldb, static_cast<float>(beta), C.data(),
            ldc, p);
    } else {
      dgemm(ta, tb, M, N, K, alpha, A.data(), lda, B.data(), ldb, beta, C.data(), ldc, p);
    }
    ref_gemm<T>(ta, tb, M, N, K, static_cast<T>(alpha), A.data(), lda, B.data(), ldb, static_cast<T>(beta), R.data(), ldc);
    const double tol = (std::is_same_v<T, float> ? 2e-5 : 1e-12) * std::sqrt(static_cast<double>(K) + 1) * 4;
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        const T got = C[i * ldc + j], want = R[i * ldc + j];
        ASSERT_NEAR(got, want, tol * (1 + std::fabs(want)))
            << "M=" << M << " N=" << N << " K=" << K << " ta=" << ta << " tb=" << tb << " at (" << i << "," << j << ")";
      }
    // Padding columns beyond N (ldc > N) stay untouched.
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = N; j < ldc; ++j) {
        const T got = C[i * ldc + j], want = R[i * ldc + j];
        if (std::isnan(want)) ASSERT_TRUE(std::isnan(got));
        else ASSERT_EQ(got, want);
      }
  }
}

TEST(Sgemm, MatchesReferenceOnRandomShapes) { check_random_gemms<float>(300, 1); }
TEST(Dgemm, MatchesReferenceOnRandomShapes) { check_random_gemms<double>(120, 2); }

TEST(Sgemm, ZeroKScalesC) {
  for (CpuIsa isa : testing::runnable_isas()) {
    SCOPED_TRACE(cpu_isa_name(isa));
    ScopedCpuIsa scope(isa);
    std::vector<float> C = {1, 2, 3, 4};
    sgemm(false, false, 2, 2, 0, 1.0f, nullptr, 1, nullptr, 2, 0.5f, C.data(), 2, nullptr);
    EXPECT_EQ(C, (std::vector<float>{0.5f, 1, 1.5f, 2}));
    sgemm(false, false, 2, 2, 0, 1.0f, nullptr, 1, nullptr, 2, 0.0f, C.data(), 2, nullptr);
    EXPECT_EQ(C, (std::vector<float>{0, 0, 0, 0}));
  }
}

TEST(Igemm, WrapsLikeNumpy) {
  std::vector<int32_t> A = {2147483647, 1}, B = {2, 3};
  std::vector<int32_t> C(1);
  igemm<int32_t>(1, 1, 2, A.data(), 2, B.data(), 1, C.data(), 1, false, nullptr);
  EXPECT_EQ(C[0], static_cast<int32_t>(static_cast<uint32_t>(2147483647u) * 2u + 3u));
}

TEST(MatMul, TwoD) {
  auto a = Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto b = Tensor::from_vector<float>({3, 2}, {7, 8, 9, 10, 11, 12});
  auto r = run_op("MatMul", {a, b});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{2, 2}));
  expect_near((*r)[0], {58, 64, 139, 154});
}

TEST(MatMul, VectorOperands) {
  auto v = Tensor::from_vector<float>({3}, {1, 2, 3});
  auto m = Tensor::from_vector<float>({3, 2}, {1, 0, 0, 1, 1, 1});
  auto r = run_op("MatMul", {v, m});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{2}));
  expect_near((*r)[0], {4, 5});
  auto mt = Tensor::from_vector<float>({2, 3}, {1, 0, 1, 0, 1, 1});
  r = run_op("MatMul", {mt, v});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (Shape{2}));
  expect_near((*r)[0], {4, 5});
  r = run_op("MatMul", {v, v});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (Shape{}));
  expect_near((*r)[0], {14});
}

TEST(MatMul, BroadcastsBatchDims) {
  // A [2,1,2,2] x B [3,2,2] -> [2,3,2,2]
  std::vector<float> av = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<float> bv = {1, 0, 0, 1, 2, 0, 0, 2, 0, 1, 1, 0};
  auto r = run_op("MatMul", {Tensor::from_vector<float>({2, 1, 2, 2}, av), Tensor::from_vector<float>({3, 2, 2}, bv)});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{2, 3, 2, 2}));
  std::vector<float> want;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int r0 = 0; r0 < 2; ++r0)
        for (int c0 = 0; c0 < 2; ++c0) {
          float s = 0;
          for (int k = 0; k < 2; ++k) s += av[i * 4 + r0 * 2 + k] * bv[j * 4 + k * 2 + c0];
          want.push_back(s);
        }
  expect_near((*r)[0], want);
}

TEST(MatMul, BatchedAgainstSharedWeights) {
  // [4, 5, 7] x [7, 3]: the folded (20 x 7) path.
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> av(4 * 5 * 7), bv(7 * 3);
  for (auto& v : av) v = d(rng);
  for (auto& v : bv) v = d(rng);
  auto r = run_op("MatMul", {Tensor::from_vector<float>({4, 5, 7}, av), Tensor::from_vector<float>({7, 3}, bv)});
  ASSERT_TRUE(r.ok());
  std::vector<float> want(4 * 5 * 3);
  ref_gemm<float>(false, false, 20, 3, 7, 1, av.data(), 7, bv.data(), 3, 0, want.data(), 3);
  expect_near((*r)[0], want, 1e-5f);
}

TEST(MatMul, IntegersAndDoubles) {
  auto r = run_op("MatMul", {Tensor::from_vector<int64_t>({1, 2}, {3, -4}), Tensor::from_vector<int64_t>({2, 1}, {5, 6})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].data<int64_t>()[0], -9);
  r = run_op("MatMul", {Tensor::from_vector<double>({2, 2}, {1, 2, 3, 4}), Tensor::from_vector<double>({2, 2}, {1, 1, 1, 1})});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].data<double>()[3], 7.0);
}

TEST(MatMul, Float16ComputesInFloat) {
  auto a = Tensor::from_vector<Float16>({1, 2}, {Float16(1.5f), Float16(2.0f)});
  auto b = Tensor::from_vector<Float16>({2, 1}, {Float16(2.0f), Float16(0.25f)});
  auto r = run_op("MatMul", {a, b});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ((*r)[0].dtype(), DType::kFloat16);
  EXPECT_EQ(static_cast<float>((*r)[0].data<Float16>()[0]), 3.5f);
}

// An empty inner dimension gives zeros (Gemm: beta * C) of the right shape,
// for every element type and at every ISA level (no K slices to divide into).
TEST(MatMul, EmptyInnerDimensionOnEveryIsa) {
  for (CpuIsa isa : testing::runnable_isas()) {
    SCOPED_TRACE(cpu_isa_name(isa));
    ScopedCpuIsa scope(isa);
    for (DType t : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64, DType::kFloat16}) {
      SCOPED_TRACE(dtype_name(t));
      for (Shape a : {Shape{3, 0}, Shape{2, 3, 0}, Shape{200, 0}}) {
        const int64_t M = a[a.size() - 2];
        auto r = run_op("MatMul", {*Tensor::allocate(t, a), *Tensor::allocate(t, {0, 70})});
        ASSERT_TRUE(r.ok()) << r.status().to_string();
        const Tensor& y = (*r)[0];
        Shape want = a;
        want.back() = 70;
        ASSERT_EQ(y.shape(), want);
        ASSERT_EQ(y.dtype(), t);
        const auto* bytes = static_cast<const unsigned char*>(y.raw_data());  // +0 is all-zero bits in every type here
        for (size_t i = 0; i < y.nbytes(); ++i) ASSERT_EQ(bytes[i], 0) << "byte " << i << " of M " << M;
      }
    }
    auto r = run_op("Gemm", {*Tensor::allocate(DType::kFloat32, {4, 0}), *Tensor::allocate(DType::kFloat32, {0, 5}),
                             Tensor::from_vector<float>({1, 5}, {1, 2, 3, 4, 5})},
                    {{"beta", attr_float(2.0f)}});
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    ASSERT_EQ((*r)[0].shape(), (Shape{4, 5}));
    for (int64_t i = 0; i < 20; ++i) EXPECT_EQ((*r)[0].data<float>()[i], 2.0f * static_cast<float>(i % 5 + 1));
  }
}

TEST(MatMul, RejectsMismatchedShapes) {
  auto r = run_op("MatMul", {Tensor::from_vector<float>({2, 3}, std::vector<float>(6)),
                             Tensor::from_vector<float>({2, 3}, std::vector<float>(6))});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  r = run_op("MatMul", {Tensor::from_vector<float>({2, 2, 3}, std::vector<float>(12)),
                        Tensor::from_vector<float>({3, 3, 1}, std::vector<float>(9))});
  ASSERT_FALSE(r.ok());
}

TEST(Gemm, AllAttributes) {
  // Y = 0.5 * A^T * B^T + 2 * C, C broadcast from [1, 2].
  auto a = Tensor::from_vector<float>({3, 2}, {1, 4, 2, 5, 3, 6});  // A^T = [[1,2,3],[4,5,6]]
  auto b = Tensor::from_vector<float>({2, 3}, {1, 0, 1, 0, 1, 0});  // B^T = [[1,0],[0,1],[1,0]]
  auto c = Tensor::from_vector<float>({1, 2}, {1, -1});
  auto r = run_op("Gemm", {a, b, c},
                  {{"transA", attr_int(1)}, {"transB", attr_int(1)}, {"alpha", attr_float(0.5f)}, {"beta", attr_float(2.0f)}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{2, 2}));
  expect_near((*r)[0], {0.5f * 4 + 2, 0.5f * 2 - 2, 0.5f * 10 + 2, 0.5f * 5 - 2});
}

TEST(Gemm, BiasShapesAndOptionalC) {
  auto a = Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4});
  auto b = Tensor::from_vector<float>({2, 2}, {1, 0, 0, 1});
  auto r = run_op("Gemm", {a, b, Tensor::from_vector<float>({2, 1}, {10, 20})});
  ASSERT_TRUE(r.ok());
  expect_near((*r)[0], {11, 12, 23, 24});
  r = run_op("Gemm", {a, b, Tensor::scalar<float>(1)});
  ASSERT_TRUE(r.ok());
  expect_near((*r)[0], {2, 3, 4, 5});
  r = run_op("Gemm", {a, b});  // C omitted (opset 11+)
  ASSERT_TRUE(r.ok());
  expect_near((*r)[0], {1, 2, 3, 4});
  r = run_op("Gemm", {a, b}, {}, 1, 9);  // C required before opset 11
  EXPECT_FALSE(r.ok());
  r = run_op("Gemm", {a, b, Tensor::from_vector<float>({3}, {1, 2, 3})});
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace dlrt::cpu
