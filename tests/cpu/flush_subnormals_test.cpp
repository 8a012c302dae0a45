// Subnormal floats (core/fp_mode.h): the flushing scope, its reach into the
// thread pool's workers, and which kernels the executor runs with it.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "../ir/graph_builder.h"
#include "core/fp_mode.h"
#include "kernel_test_util.h"

namespace dlrt::cpu {
namespace {

using dlrt::testing::GraphBuilder;

constexpr float kSub = 1e-39f;  // subnormal in float32

bool is_subnormal(float v) { return v != 0.0f && std::fabs(v) < std::numeric_limits<float>::min(); }

// Half of a subnormal, computed at run time (not folded by the compiler).
float halve(float v) {
  volatile float x = v;
  return x * 0.5f;
}

TEST(FlushSubnormals, ScopeFlushesAndRestores) {
#if !(defined(__x86_64__) || defined(__i386__) || defined(__aarch64__))
  GTEST_SKIP() << "the flushing mode is implemented for x86's MXCSR and aarch64's FPCR only";
#endif
  const uint32_t before = fp_control();
  EXPECT_TRUE(is_subnormal(halve(kSub)));
  {
    ScopedFlushSubnormals on(true);
    EXPECT_EQ(halve(kSub), 0.0f);
    ScopedFlushSubnormals off(false);  // a disabled scope changes nothing
    EXPECT_EQ(halve(kSub), 0.0f);
  }
  EXPECT_EQ(fp_control(), before);
  EXPECT_TRUE(is_subnormal(halve(kSub)));
}

// Workers run a range in the caller's mode, and go back to their own after.
TEST(FlushSubnormals, PoolWorkersTakeTheCallersMode) {
#if !(defined(__x86_64__) || defined(__i386__) || defined(__aarch64__))
  GTEST_SKIP() << "the flushing mode is implemented for x86's MXCSR and aarch64's FPCR only";
#endif
  ThreadPool pool(2);
  constexpr int64_t kN = 4096;
  std::vector<float> out(kN);
  auto body = [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) out[static_cast<size_t>(i)] = halve(kSub);
  };
  for (int rep = 0; rep < 20; ++rep) {
    {
      ScopedFlushSubnormals on(true);
      pool.parallel_for(kN, 1, body);
    }
    for (int64_t i = 0; i < kN; ++i) ASSERT_EQ(out[static_cast<size_t>(i)], 0.0f) << "flushing, at " << i;
    pool.parallel_for(kN, 1, body);
    for (int64_t i = 0; i < kN; ++i) ASSERT_TRUE(is_subnormal(out[static_cast<size_t>(i)])) << "not flushing, at " << i;
  }
}

Tensor filled(Shape shape, float v) {
  Tensor t = Tensor::allocate(DType::kFloat32, std::move(shape)).value();
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = v;
  return t;
}

// A Conv (a product kernel) flushes the subnormals it reads and makes; a Mul
// (elementwise, not marked) keeps them; the caller's mode is unchanged after.
TEST(FlushSubnormals, ConvFlushesElementwiseDoesNot) {
#if !(defined(__x86_64__) || defined(__i386__) || defined(__aarch64__))
  GTEST_SKIP() << "the flushing mode is implemented for x86's MXCSR and aarch64's FPCR only";
#endif
  if (!flush_subnormals_enabled()) GTEST_SKIP() << "DLRT_FLUSH_SUBNORMALS=0 in the environment";
  GraphBuilder b;
  const ir::ValueId x = b.input("x", {1, 16, 8, 8});
  const ir::ValueId w = b.constant("w", filled({16, 16, 1, 1}, 0.5f));
  const ir::ValueId half = b.constant("half", filled({1}, 0.5f));
  b.output(b.node("Conv", {x, w}));
  b.output(b.node("Mul", {x, half}));
  ThreadPool pool(2);
  auto ex = Executor::create(b.graph(), pool, cpu::builtin_kernels());
  ASSERT_TRUE(ex.ok()) << ex.status().to_string();
  const uint32_t before = fp_control();
  for (int rep = 0; rep < 3; ++rep) {  // the recording run and planned ones
    std::vector<RunValue> in{RunValue::of(filled({1, 16, 8, 8}, kSub))};
    auto out = (*ex)->run(in);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    const Tensor& conv = (*out)[0].tensor;
    const Tensor& mul = (*out)[1].tensor;
    for (int64_t i = 0; i < conv.size(); ++i) ASSERT_EQ(conv.data<float>()[i], 0.0f) << "conv at " << i;
    for (int64_t i = 0; i < mul.size(); ++i) ASSERT_TRUE(is_subnormal(mul.data<float>()[i])) << "mul at " << i;
    EXPECT_EQ(fp_control(), before);
  }
}

}  // namespace
}  // namespace dlrt::cpu
