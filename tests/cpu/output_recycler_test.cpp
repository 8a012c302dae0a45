// Large graph outputs reuse an earlier run's buffer (exec/output_recycler.h)
// once the caller has dropped it, and never while the caller still holds it.
#include <gtest/gtest.h>

#include <cstring>

#include "../ir/graph_builder.h"
#include "core/large_alloc.h"
#include "exec/output_recycler.h"
#include "kernel_test_util.h"

namespace dlrt::cpu {
namespace {

using dlrt::testing::GraphBuilder;
using dlrt::testing::random_tensor;

constexpr size_t kBig = kLargeAllocBytes * 2;

TEST(OutputRecycler, ReusesOnlyABufferNobodyElseHolds) {
  OutputRecycler r;
  bool reused = true;
  std::shared_ptr<void> a = r.take(0, kBig, &reused);
  ASSERT_TRUE(a);
  EXPECT_FALSE(reused);
  EXPECT_EQ(static_cast<unsigned char*>(a.get())[kBig - 1], 0) << "a new buffer is zero-filled";
  void* pa = a.get();
  // Held by the caller: a second run gets another buffer.
  std::shared_ptr<void> b = r.take(0, kBig, &reused);
  EXPECT_FALSE(reused);
  EXPECT_NE(b.get(), pa);
  void* pb = b.get();
  a.reset();  // the slot now holds b's buffer, which b still refers to
  std::shared_ptr<void> c = r.take(0, kBig, &reused);
  EXPECT_FALSE(reused);
  EXPECT_NE(c.get(), pb);
  void* pc = c.get();
  b.reset();
  c.reset();
  std::shared_ptr<void> d = r.take(0, kBig, &reused);
  EXPECT_TRUE(reused);
  EXPECT_EQ(d.get(), pc);
  d.reset();
  // Another size or another output index: a new buffer.
  std::shared_ptr<void> e = r.take(0, kBig + 4096, &reused);
  EXPECT_FALSE(reused);
  std::shared_ptr<void> f = r.take(1, kBig, &reused);
  EXPECT_FALSE(reused);
}

// A graph whose output is 4 MiB: planned runs whose caller dropped the last
// output write into its buffer; one the caller keeps is never written over.
TEST(OutputRecycler, PlannedRunsReuseDroppedOutputsAndKeepHeldOnes) {
  GraphBuilder b;
  const ir::ValueId x = b.input("x", {1024, 1024});
  b.output(b.node("Relu", {b.node("Neg", {x})}));
  ThreadPool pool(2);
  auto ex = Executor::create(b.graph(), pool, cpu::builtin_kernels());
  ASSERT_TRUE(ex.ok()) << ex.status().to_string();
  auto run = [&](uint32_t seed, Tensor* in_out) {
    Tensor in = random_tensor({1024, 1024}, seed);
    *in_out = in;
    std::vector<RunValue> v{RunValue::of(in)};
    auto out = (*ex)->run(v);
    EXPECT_TRUE(out.ok()) << out.status().to_string();
    return out.ok() ? (*out)[0].tensor : Tensor();
  };
  auto expect_relu_neg = [](const Tensor& in, const Tensor& out) {
    ASSERT_EQ(out.size(), in.size());
    for (int64_t i = 0; i < in.size(); ++i) {
      const float want = std::max(0.0f, -in.data<float>()[i]);
      ASSERT_EQ(out.data<float>()[i], want) << "at " << i;
    }
  };
  Tensor in;
  run(1, &in);                     // records the plan
  const void* first_planned = nullptr;
  {
    Tensor out = run(2, &in);      // planned: a new buffer
    expect_relu_neg(in, out);
    first_planned = out.raw_data();
  }                                // dropped
  Tensor held = run(3, &in);       // writes into the dropped buffer
  EXPECT_EQ(held.raw_data(), first_planned);
  expect_relu_neg(in, held);
  Tensor held_in = in;
  Tensor next = run(4, &in);       // `held` is still ours: a new buffer
  EXPECT_NE(next.raw_data(), held.raw_data());
  expect_relu_neg(in, next);
  expect_relu_neg(held_in, held);  // unchanged by the later run
}

}  // namespace
}  // namespace dlrt::cpu
