// The executor's run arenas (exec/arena.h ArenaPool): shared by the plans of
// all input shapes, so that a run at another shape reuses mapped memory, and
// a planned run in an arena an earlier plan wrote gives the results of a
// fresh executor.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "../ir/graph_builder.h"
#include "exec/arena.h"
#include "kernel_test_util.h"

namespace dlrt::cpu {
namespace {

using dlrt::testing::GraphBuilder;
using dlrt::testing::random_tensor;

TEST(ArenaPool, ReusesTheSmallestFreeArenaThatFitsAndDropsSmallerOnes) {
  ArenaPool pool;
  ArenaPool::Arena a = pool.acquire(4096);
  ASSERT_NE(a.data, nullptr);
  EXPECT_EQ(a.capacity, 4096u);
  ArenaPool::Arena b = pool.acquire(2u << 20);  // a is in use: a new one
  ASSERT_NE(b.data, nullptr);
  EXPECT_NE(b.data, a.data);
  pool.release(a);
  pool.release(b);
  // A small run takes the small arena, a large one the large arena.
  ArenaPool::Arena small = pool.acquire(1000);
  EXPECT_EQ(small.data, a.data);
  ArenaPool::Arena large = pool.acquire(1u << 20);
  EXPECT_EQ(large.data, b.data);
  EXPECT_EQ(large.capacity, size_t{2} << 20);
  pool.release(small);
  pool.release(large);
  // Larger than every free arena: a new one (the free ones are unmapped).
  ArenaPool::Arena bigger = pool.acquire(3u << 20);
  ASSERT_NE(bigger.data, nullptr);
  EXPECT_EQ(bigger.capacity, size_t{3} << 20);
  pool.release(bigger);
  // Now the only free arena: any smaller run takes it.
  ArenaPool::Arena again = pool.acquire(64);
  EXPECT_EQ(again.data, bigger.data);
  pool.release(again);
}

// One executor run at alternating batch sizes (each its own plan, all in the
// shared arenas, which hold other plans' data) gives bit for bit what a fresh
// executor gives at each size.
TEST(ArenaPool, AlternatingShapesMatchFreshExecutors) {
  auto make_graph = [] {
    GraphBuilder b;
    const ir::ValueId x = b.input("x", {-1, 512}, DType::kFloat32, {"batch"});
    const ir::ValueId c = b.constant("c", random_tensor({512}, 2));
    const ir::ValueId t1 = b.node("Mul", {x, c});
    const ir::ValueId t2 = b.node("Tanh", {t1});
    const ir::ValueId t3 = b.node("Softmax", {t2});
    const ir::ValueId t4 = b.node("Add", {t3, t1});
    b.output(b.node("Neg", {t4}));
    return b.graph();
  };
  ThreadPool pool(2);
  auto ex = Executor::create(make_graph(), pool, cpu::builtin_kernels());
  ASSERT_TRUE(ex.ok()) << ex.status().to_string();
  for (int64_t batch : {64, 8, 64, 256, 8, 256, 64, 1, 8}) {
    const Tensor x = random_tensor({batch, 512}, static_cast<uint32_t>(batch));
    auto fresh = Executor::create(make_graph(), pool, cpu::builtin_kernels());
    ASSERT_TRUE(fresh.ok());
    std::vector<Tensor> want;
    for (int rep = 0; rep < 2; ++rep) {  // the second run is planned
      auto w = (*fresh)->run({RunValue::of(x)});
      ASSERT_TRUE(w.ok()) << w.status().to_string();
      want = {(*w)[0].tensor.clone().value()};
    }
    for (int rep = 0; rep < 2; ++rep) {
      auto got = (*ex)->run({RunValue::of(x)});
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      const Tensor& t = (*got)[0].tensor;
      ASSERT_EQ(t.shape(), want[0].shape());
      EXPECT_EQ(0, std::memcmp(t.raw_data(), want[0].raw_data(), t.nbytes())) << "batch " << batch << ", run " << rep;
    }
  }
  EXPECT_TRUE((*ex)->memory_stats().has_value());
}

}  // namespace
}  // namespace dlrt::cpu
