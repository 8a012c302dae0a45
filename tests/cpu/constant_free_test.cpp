// Weights held once (Executor::create_freeing_constants, OpKernel::
// can_drop_constant): a constant whose readers all keep a packed copy is
// freed when the executor is built, and the runs give what they gave with the
// constant kept, including the forms made on first use from the packing
// (cropped taps, Wᵀ, Winograd filters). Constants that another node, a graph
// output or nothing at all depends on are handled as the contract says; the
// unpacking the forms rely on is exact.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "../ir/graph_builder.h"
#include "backends/cpu/kernels/conv_blocked.h"
#include "backends/cpu/kernels/conv_winograd.h"
#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/ops/conv_impl.h"
#include "exec/executor.h"
#include "isa_test_util.h"
#include "kernel_test_util.h"

namespace dlrt::cpu {
namespace {

using dlrt::testing::GraphBuilder;
using dlrt::testing::random_tensor;
using testing::attr_int;
using testing::attr_ints;
using testing::attr_string;

// Random float32 values whose storage the test watches: `watch` expires
// once nothing holds the storage any more.
Tensor watched_weights(Shape shape, uint32_t seed, std::weak_ptr<void>* watch) {
  const Tensor values = random_tensor(shape, seed);
  std::shared_ptr<void> owner(std::aligned_alloc(64, (values.nbytes() + 63) / 64 * 64), std::free);
  std::memcpy(owner.get(), values.raw_data(), values.nbytes());
  *watch = owner;
  void* data = owner.get();
  return Tensor::adopt(DType::kFloat32, std::move(shape), std::move(owner), data);
}

std::vector<Tensor> run_on(Executor& ex, const std::vector<Tensor>& inputs) {
  std::vector<RunValue> in;
  for (const auto& t : inputs) in.push_back(RunValue::of(t));
  auto out = ex.run(std::move(in));
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  std::vector<Tensor> r;
  if (out.ok())
    for (auto& v : *out) r.push_back(v.tensor.clone().value());
  return r;
}

// Runs `graph` on each input set with the constants kept (Executor::create),
// then builds the freeing executor on the same graph and expects `freed`
// constants freed, every watched storage gone, and the same outputs: bit for
// bit, or within `tol` (relative) when tol > 0.
void expect_freed_and_same(const std::shared_ptr<ir::Graph>& graph, const std::vector<std::vector<Tensor>>& runs,
                           std::vector<std::weak_ptr<void>> watches, size_t freed, float tol = 0.0f) {
  ThreadPool pool(2);
  std::vector<std::vector<Tensor>> want;
  {
    auto kept = Executor::create(graph, pool, builtin_kernels());
    ASSERT_TRUE(kept.ok()) << kept.status().to_string();
    for (const auto& in : runs) want.push_back(run_on(**kept, in));
  }
  for (const auto& w : watches) ASSERT_FALSE(w.expired()) << "the graph holds its constants";
  auto ex = Executor::create_freeing_constants(graph, pool, builtin_kernels());
  ASSERT_TRUE(ex.ok()) << ex.status().to_string();
  EXPECT_EQ((*ex)->freed_constants(), freed);
  for (const auto& w : watches) EXPECT_TRUE(w.expired()) << "a packed weight's constant is still held";
  for (size_t r = 0; r < runs.size(); ++r) {
    SCOPED_TRACE("input set " + std::to_string(r));
    const std::vector<Tensor> got = run_on(**ex, runs[r]);
    ASSERT_EQ(got.size(), want[r].size());
    for (size_t k = 0; k < got.size(); ++k) {
      ASSERT_EQ(got[k].shape(), want[r][k].shape());
      const float* a = got[k].data<float>();
      const float* b = want[r][k].data<float>();
      if (tol == 0.0f) {
        EXPECT_EQ(0, std::memcmp(a, b, got[k].nbytes())) << "output " << k << " differs from the run with W kept";
        continue;
      }
      for (int64_t i = 0; i < got[k].size(); ++i)
        ASSERT_NEAR(a[i], b[i], tol * (1.0f + std::abs(b[i]))) << "output " << k << " at " << i;
    }
  }
}

ir::Attributes conv_attrs(std::vector<int64_t> pads, int64_t group = 1, std::vector<int64_t> strides = {1, 1}) {
  return {{"pads", attr_ints(std::move(pads))}, {"group", attr_int(group)}, {"strides", attr_ints(std::move(strides))}};
}

// Conv and FusedConv (GEMM packing): freed, and the same on the sizes the
// packing was made for and on an input of height 1, where the top and bottom
// kernel rows read padding only (the cropped weights come from the packing).
// The first conv is 3x1, so that no ISA runs it as Winograd (whose convs keep
// W for the forms made on first use).
TEST(ConstantFree, ConvWeightsAreFreedAndCroppedOnesMadeLaterMatch) {
  GraphBuilder b;
  const ir::ValueId x = b.input("x", {1, 24, -1, -1});
  std::vector<std::weak_ptr<void>> w(3);
  const ir::ValueId c1 =
      b.node("Conv", {x, b.constant("w1", watched_weights({40, 24, 3, 1}, 1, &w[0]))}, conv_attrs({1, 0, 1, 0}));
  ir::Attributes fa = conv_attrs({0, 0, 0, 0}, 2);
  fa["activation"] = attr_string("Relu");
  b.output(b.node(
      "FusedConv",
      {c1, b.constant("w2", watched_weights({32, 20, 1, 1}, 2, &w[1])), b.constant("b2", random_tensor({32}, 3))}, fa,
      1, "com.dlrt"));
  // Read by two Convs: freed once both let go of it.
  const ir::ValueId w3 = b.constant("w3", watched_weights({8, 40, 1, 1}, 4, &w[2]));
  b.output(b.node("Conv", {c1, w3}, conv_attrs({0, 0, 0, 0})));
  b.output(b.node("Conv", {c1, w3}, conv_attrs({0, 0, 0, 0})));
  const uint64_t cropped = conv_cropped_runs();
  expect_freed_and_same(b.graph(), {{random_tensor({1, 24, 12, 16}, 10)}, {random_tensor({1, 24, 1, 16}, 11)}}, w, 3);
  EXPECT_GT(conv_cropped_runs(), cropped) << "no run took the cropped weights";
}

// A patch embedding (kernel = stride = 4, no padding) runs as
// Yᵀ = im2colᵀ · Wᵀ on AVX2: Wᵀ is packed on the first run, from the packing.
TEST(ConstantFree, PatchEmbeddingWtMadeLaterMatches) {
  GraphBuilder b;
  const ir::ValueId x = b.input("x", {1, 24, 16, 16});
  std::vector<std::weak_ptr<void>> w(1);
  b.output(b.node("Conv", {x, b.constant("w", watched_weights({16, 24, 4, 4}, 4, &w[0]))},
                  conv_attrs({0, 0, 0, 0}, 1, {4, 4})));
  const uint64_t transposed = conv_transposed_runs();
  expect_freed_and_same(b.graph(), {{random_tensor({1, 24, 16, 16}, 10)}}, w, 1);
  if (cpu_has_avx2()) {
    EXPECT_GT(conv_transposed_runs(), transposed) << "the patch embedding did not run transposed";
  }
}

// ConvBlocked (group 1 and depthwise): freed; the cropped weights and, on
// AVX-512, the F(4x4, 3x3) filters are made on first use from the blocked
// packing.
TEST(ConstantFree, BlockedConvWeightsAreFreedAndFormsMadeLaterMatch) {
  GraphBuilder b;
  const ir::ValueId x = b.input("x", {1, 64, -1, -1});
  const ir::Attributes blk = {{"block", attr_int(16)}};
  std::vector<std::weak_ptr<void>> w(2);
  ir::Attributes a = conv_attrs({1, 1, 1, 1});
  a["block"] = attr_int(16);
  const ir::ValueId xb = b.node("ToBlocked", {x}, blk, 1, "com.dlrt");
  const ir::ValueId y1 =
      b.node("ConvBlocked", {xb, b.constant("w1", watched_weights({64, 64, 3, 3}, 1, &w[0]))}, a, 1, "com.dlrt");
  ir::Attributes d = conv_attrs({1, 1, 1, 1}, 64);
  d["block"] = attr_int(16);
  const ir::ValueId y2 =
      b.node("ConvBlocked", {y1, b.constant("w2", watched_weights({64, 1, 3, 3}, 2, &w[1]))}, d, 1, "com.dlrt");
  b.output(b.node("FromBlocked", {y2}, {{"block", attr_int(16)}, {"channels", attr_int(64)}}, 1, "com.dlrt"));
  const uint64_t cropped = conv_cropped_runs(), w4 = conv_winograd4_runs();
  expect_freed_and_same(b.graph(), {{random_tensor({1, 64, 32, 32}, 10)}, {random_tensor({1, 64, 1, 24}, 11)}}, w, 2);
  EXPECT_GT(conv_cropped_runs(), cropped) << "no run took the cropped weights";
  if (cpu_has_avx512() && winograd_enabled()) {
    EXPECT_GT(conv_winograd4_runs(), w4) << "no run took F(4x4, 3x3)";
  }
}

// MatMul, Gemm (transB) and LSTM: freed, the same results. A Gemm of one
// row runs on the packing instead of the GEMV on B: equal up to rounding.
TEST(ConstantFree, MatMulGemmAndLstmWeightsAreFreed) {
  GraphBuilder b;
  const ir::ValueId a = b.input("a", {-1, 64});
  std::vector<std::weak_ptr<void>> w(5);
  b.output(b.node("MatMul", {a, b.constant("b1", watched_weights({64, 40}, 1, &w[0]))}));
  b.output(b.node("Gemm",
                  {a, b.constant("b2", watched_weights({24, 64}, 2, &w[1])), b.constant("c2", random_tensor({24}, 3))},
                  {{"transB", attr_int(1)}}));
  const int64_t H = 16;
  const ir::ValueId x = b.input("x", {5, 1, 64});
  b.output(b.node("LSTM",
                  {x, b.constant("w", watched_weights({1, 4 * H, 64}, 4, &w[2])),
                   b.constant("r", watched_weights({1, 4 * H, H}, 5, &w[3])),
                   b.constant("bias", watched_weights({1, 8 * H}, 6, &w[4]))},
                  {{"hidden_size", attr_int(H)}}, 14));
  const Tensor xs = random_tensor({5, 1, 64}, 9);
  expect_freed_and_same(b.graph(), {{random_tensor({7, 64}, 10), xs}, {random_tensor({1, 64}, 11), xs}}, w, 5, 1e-5f);
}

// What stays: a constant another kind of node also reads (its kernel keeps
// no copy), and a graph output. A constant nothing reads goes.
TEST(ConstantFree, SharedConstantsAndOutputsStayUnreadOnesGo) {
  GraphBuilder b;
  const ir::ValueId x = b.input("x", {1, 8, 6, 6});
  std::weak_ptr<void> shared, output, unread;
  const ir::ValueId ws = b.constant("ws", watched_weights({8, 8, 1, 1}, 1, &shared));
  b.output(b.node("Conv", {x, ws}, conv_attrs({0, 0, 0, 0})));
  b.output(b.node("Mul", {ws, ws}));
  const ir::ValueId wo = b.constant("wo", watched_weights({8, 8, 1, 1}, 2, &output));
  b.output(b.node("Conv", {x, wo}, conv_attrs({0, 0, 0, 0})));
  b.output(wo);
  b.constant("unused", watched_weights({4, 4}, 3, &unread));
  auto g = b.graph();
  ThreadPool pool(1);
  auto ex = Executor::create_freeing_constants(g, pool, builtin_kernels());
  ASSERT_TRUE(ex.ok()) << ex.status().to_string();
  EXPECT_EQ((*ex)->freed_constants(), 1u);
  EXPECT_EQ((*ex)->freed_constant_bytes(), 16u * sizeof(float));
  EXPECT_TRUE(unread.expired());
  EXPECT_FALSE(shared.expired());
  EXPECT_FALSE(output.expired());
  EXPECT_TRUE(is_freed_constant(*g->values[g->find_value("unused")].constant));
  EXPECT_FALSE(is_freed_constant(*g->values[ws].constant));
  const std::vector<Tensor> out = run_on(**ex, {random_tensor({1, 8, 6, 6}, 4)});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(0, std::memcmp(out[3].raw_data(), g->values[wo].constant->raw_data(), out[3].nbytes()));
}

// The unpacking the forms above rely on gives back exactly what was packed:
// the GEMM's A and B packings at every ISA level, the blocked conv weights.
TEST(ConstantFree, UnpackingIsExact) {
  for (CpuIsa isa : testing::runnable_isas()) {
    ScopedCpuIsa cap(isa);
    for (auto [R, K] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {13, 700}, {50, 37}}) {
      const Tensor m = random_tensor({R, K}, static_cast<uint32_t>(R * K));
      std::vector<float> out(static_cast<size_t>(R * K));
      ASSERT_TRUE(PackedMatrix::pack_a(false, R, K, m.data<float>(), K)->unpack(out.data()));
      EXPECT_EQ(0, std::memcmp(out.data(), m.raw_data(), m.nbytes())) << "A " << R << "x" << K;
      ASSERT_TRUE(PackedMatrix::pack_b(false, R, K, m.data<float>(), K)->unpack(out.data()));
      EXPECT_EQ(0, std::memcmp(out.data(), m.raw_data(), m.nbytes())) << "B " << R << "x" << K;
    }
  }
  for (bool depthwise : {false, true})
    for (int block : {8, 16}) {
      const int64_t M = 21, C = depthwise ? 21 : 19;
      const Tensor w = random_tensor({M, depthwise ? 1 : C, 3, 2}, 7);
      const BlockedConvWeights p = pack_blocked_conv(w.data<float>(), M, C, 3, 2, depthwise, block);
      std::vector<float> out(static_cast<size_t>(w.size()));
      unpack_blocked_conv(p, out.data());
      EXPECT_EQ(0, std::memcmp(out.data(), w.raw_data(), w.nbytes()))
          << "depthwise " << depthwise << " block " << block;
    }
}

}  // namespace
}  // namespace dlrt::cpu
