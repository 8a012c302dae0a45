// MatMul with one A for every product of a batch (A 2-D, or with batch dims
// of 1) against a stack of B matrices: where the products are many and
// small (one per task), A is packed once per run and every product reads it.
// Compared with a reference in double on odd sizes, edge tiles (M not a
// multiple of the register tile, N below and above one panel), large
// products one after the other (A not packed up front), A with broadcast
// batch dims of 1, a 1-D A (no packing), on 1 and 2 threads; and
// FusedMatMul's bias, residual and activation on that path.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_util.h"

namespace dlrt::cpu {
namespace {

using testing::attr_string;
using testing::run_op;

using testing::random_floats;

// C[t] = A @ B[t] for A [M, K] and B [batch, K, N], in double.
std::vector<float> reference(const std::vector<float>& a, const std::vector<float>& b, int64_t batch, int64_t M,
                             int64_t K, int64_t N) {
  std::vector<float> c(static_cast<size_t>(batch * M * N));
  for (int64_t t = 0; t < batch; ++t)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double s = 0;
        for (int64_t p = 0; p < K; ++p) s += double(a[i * K + p]) * b[(t * K + p) * N + j];
        c[(t * M + i) * N + j] = static_cast<float>(s);
      }
  return c;
}

void expect_close(const Tensor& got, const std::vector<float>& want, int64_t K) {
  ASSERT_EQ(got.size(), static_cast<int64_t>(want.size()));
  const float* g = got.data<float>();
  const float tol = 2e-5f * std::sqrt(static_cast<float>(K) + 1) * 4;
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(g[i], want[i], tol * (1 + std::fabs(want[i]))) << i;
}

struct Case {
  int64_t batch, M, K, N;
  Shape a_shape;  // {M, K} or with leading 1s
};

TEST(MatMulSharedA, MatchesReference) {
  const std::vector<Case> cases = {
      {187, 64, 64, 32, {64, 64}},           // many small products, one per task
      {9, 13, 7, 5, {13, 7}},                // odd sizes, edge tiles
      {5, 17, 33, 70, {1, 17, 33}},          // N over one 48-column panel, A with a batch dim of 1
      {3, 200, 300, 90, {1, 1, 200, 300}},   // large products one after the other
      {40, 2, 16, 16, {2, 16}},              // two rows
  };
  for (const Case& c : cases) {
    for (int threads : {1, 2}) {
      SCOPED_TRACE("batch " + std::to_string(c.batch) + " M " + std::to_string(c.M) + " K " + std::to_string(c.K) +
                   " N " + std::to_string(c.N) + " threads " + std::to_string(threads));
      const auto a = random_floats(static_cast<size_t>(c.M * c.K), 1);
      const auto b = random_floats(static_cast<size_t>(c.batch * c.K * c.N), 2);
      Shape b_shape = {c.batch, c.K, c.N};
      if (c.a_shape.size() == 4) b_shape = {1, c.batch, c.K, c.N};
      auto r = run_op("MatMul", {Tensor::from_vector<float>(c.a_shape, a), Tensor::from_vector<float>(b_shape, b)}, {},
                      1, 17, "", threads);
      ASSERT_TRUE(r.ok()) << r.status().to_string();
      Shape want_shape = b_shape;
      want_shape[want_shape.size() - 2] = c.M;
      EXPECT_EQ((*r)[0].shape(), want_shape);
      expect_close((*r)[0], reference(a, b, c.batch, c.M, c.K, c.N), c.K);
    }
  }
}

TEST(MatMulSharedA, VectorAIsNotPacked) {
  // A 1-D A [K] against B [batch, K, N]: numpy's row vector, result [batch, N].
  const int64_t batch = 6, K = 11, N = 9;
  const auto a = random_floats(K, 3);
  const auto b = random_floats(static_cast<size_t>(batch * K * N), 4);
  auto r = run_op("MatMul", {Tensor::from_vector<float>({K}, a), Tensor::from_vector<float>({batch, K, N}, b)});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{batch, N}));
  expect_close((*r)[0], reference(a, b, batch, 1, K, N), K);
}

TEST(MatMulSharedA, FusedBiasResidualActivation) {
  const int64_t batch = 23, M = 10, K = 12, N = 20;
  const auto a = random_floats(static_cast<size_t>(M * K), 5);
  const auto b = random_floats(static_cast<size_t>(batch * K * N), 6);
  const auto bias = random_floats(static_cast<size_t>(N), 7);
  const auto z = random_floats(static_cast<size_t>(batch * M * N), 8);
  ir::Attributes attrs = {{"activation", attr_string("Relu")}};
  for (int threads : {1, 2}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    auto r = run_op("FusedMatMul",
                    {Tensor::from_vector<float>({M, K}, a), Tensor::from_vector<float>({batch, K, N}, b),
                     Tensor::from_vector<float>({N}, bias), Tensor::from_vector<float>({batch, M, N}, z)},
                    attrs, 1, 1, "com.dlrt", threads);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    std::vector<float> want = reference(a, b, batch, M, K, N);
    for (size_t i = 0; i < want.size(); ++i) want[i] = std::max(0.0f, want[i] + bias[i % N] + z[i]);
    expect_close((*r)[0], want, K);
  }
}

}  // namespace
}  // namespace dlrt::cpu
