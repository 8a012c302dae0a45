// shared-weight-rows: Gemm / MatMul products of a few rows with one constant
// weight, whose inputs do not depend on one another's outputs, become one
// product between a Concat and a Split. Each case runs the graph before and
// after the pass (outputs must agree) and counts the products left, with the
// near misses that must stay as they are.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fusion_test_util.h"
#include "graph_builder.h"
#include "ir/passes/passes.h"

namespace dlrt::testing {
namespace {

namespace p = ir::passes;

// Shapes first (the pass reads A's rank and rows), then the pass.
int swr_pass(ir::Graph& g, p::PassContext& ctx) {
  p::fold_shapes(g, ctx);
  return p::stack_shared_weight_rows(g, ctx);
}

int swr_count(const ir::Graph& g, const char* op) {
  int n = 0;
  for (const auto& node : g.nodes) n += node.op_type == op;
  return n;
}

ir::Attributes swr_gemm_attrs(int64_t trans_b, float alpha = 1, float beta = 1) {
  return {{"transB", ai(trans_b)}, {"alpha", af(alpha)}, {"beta", af(beta)}};
}

TEST(SharedWeightRows, MatMulsOfOneWeightOnIndependentRowsBecomeOne) {
  GraphBuilder b;
  auto w = b.constant("w", random_tensor({24, 40}, 1));
  // Rows 1, 3 and 2: a Split with explicit sizes.
  std::vector<ir::ValueId> xs = {b.input("x0", {1, 24}), b.input("x1", {3, 24}), b.input("x2", {2, 24})};
  for (auto x : xs) b.output(b.node("Relu", {b.node("MatMul", {x, w})}));
  auto opt = check_pass(b.graph(), {random_tensor({1, 24}, 2), random_tensor({3, 24}, 3), random_tensor({2, 24}, 4)},
                        swr_pass, "shared-weight-rows", 1);
  EXPECT_EQ(swr_count(*opt, "MatMul"), 1);
  EXPECT_EQ(swr_count(*opt, "Split"), 1);
}

TEST(SharedWeightRows, GemmsWithBiasAndTransposedWeightEqualRows) {
  GraphBuilder b;
  auto w = b.constant("w", random_tensor({16, 32}, 5));  // [N, K], transB
  auto c = b.constant("c", random_tensor({16}, 6));
  std::vector<Tensor> in;
  for (int i = 0; i < 4; ++i) {
    auto x = b.input("x" + std::to_string(i), {2, 32});
    b.output(b.node("Gemm", {x, w, c}, swr_gemm_attrs(1, 0.5f, 2.0f)));
    in.push_back(random_tensor({2, 32}, 10 + i));
  }
  auto opt = check_pass(b.graph(), in, swr_pass, "shared-weight-rows", 1);
  EXPECT_EQ(swr_count(*opt, "Gemm"), 1);
}

// An unrolled recurrence: every step's input product is independent (stacked),
// every step's recurrent product reads the step before (left alone).
TEST(SharedWeightRows, UnrolledRecurrenceStacksInputProductsOnly) {
  GraphBuilder b;
  const int64_t steps = 5, k = 12, h = 8;
  auto wx = b.constant("wx", random_tensor({k, h}, 7));
  auto wh = b.constant("wh", random_tensor({h, h}, 8));
  auto xs = b.input("xs", {steps, k});
  ir::ValueId state = b.input("h0", {1, h});
  std::vector<Tensor> in = {random_tensor({steps, k}, 9), random_tensor({1, h}, 10)};
  for (int64_t t = 0; t < steps; ++t) {
    auto x = b.node("Slice", {xs, b.ints("s" + std::to_string(t), {t}), b.ints("e" + std::to_string(t), {t + 1})});
    state = b.node("Tanh", {b.node("Add", {b.node("MatMul", {x, wx}), b.node("MatMul", {state, wh})})});
  }
  b.output(state);
  auto opt = check_pass(b.graph(), in, swr_pass, "shared-weight-rows", 1);
  EXPECT_EQ(swr_count(*opt, "MatMul"), 1 + steps);  // one stacked input product, the recurrent ones
}

// A member whose A reads another member's output stays out; the others stack.
TEST(SharedWeightRows, DependentMemberLeftOut) {
  GraphBuilder b;
  auto w = b.constant("w", random_tensor({10, 10}, 11));
  auto x0 = b.input("x0", {1, 10}), x1 = b.input("x1", {1, 10});
  auto y0 = b.node("MatMul", {x0, w});
  auto y1 = b.node("MatMul", {x1, w});
  auto y2 = b.node("MatMul", {b.node("Sigmoid", {y0}), w});  // depends on y0
  b.output(y1);
  b.output(y2);
  auto opt = check_pass(b.graph(), {random_tensor({1, 10}, 12), random_tensor({1, 10}, 13)}, swr_pass,
                        "shared-weight-rows", 1);
  EXPECT_EQ(swr_count(*opt, "MatMul"), 2);
}

TEST(SharedWeightRows, NearMissesStay) {
  GraphBuilder b;
  auto w = b.constant("w", random_tensor({8, 8}, 14));
  auto w2 = b.constant("w2", random_tensor({8, 8}, 15));
  std::vector<Tensor> in;
  auto add_input = [&](const std::string& name, std::vector<int64_t> dims, uint32_t seed) {
    in.push_back(random_tensor(Shape(dims.begin(), dims.end()), seed));
    return b.input(name, dims);
  };
  // Too many rows per product (17 > 16).
  b.output(b.node("MatMul", {add_input("big0", {17, 8}, 16), w}));
  b.output(b.node("MatMul", {add_input("big1", {17, 8}, 17), w}));
  // Different weights.
  b.output(b.node("MatMul", {add_input("a", {1, 8}, 18), w2}));
  b.output(b.node("Gemm", {add_input("c", {1, 8}, 19), w2}, swr_gemm_attrs(0)));  // Gemm vs MatMul
  // Different Gemm attributes on one weight.
  auto v = b.constant("v", random_tensor({8, 8}, 20));
  b.output(b.node("Gemm", {add_input("d", {1, 8}, 21), v}, swr_gemm_attrs(0)));
  b.output(b.node("Gemm", {add_input("e", {1, 8}, 22), v}, swr_gemm_attrs(1)));
  // A per-row bias ([M, N]).
  auto u = b.constant("u", random_tensor({8, 8}, 23));
  auto per_row = b.constant("per_row", random_tensor({2, 8}, 24));
  b.output(b.node("Gemm", {add_input("f", {2, 8}, 25), u, per_row}, swr_gemm_attrs(0)));
  b.output(b.node("Gemm", {add_input("g", {2, 8}, 26), u, per_row}, swr_gemm_attrs(0)));
  // Rank 3 A.
  auto t = b.constant("t", random_tensor({8, 8}, 27));
  b.output(b.node("MatMul", {add_input("r0", {1, 1, 8}, 28), t}));
  b.output(b.node("MatMul", {add_input("r1", {1, 1, 8}, 29), t}));
  check_pass(b.graph(), in, swr_pass, "shared-weight-rows", 0);
}

// Rows named by a symbol (a dynamic batch): stacked, with the Split's sizes
// read from the inputs at run time, so inputs of different batch sizes that
// share the name still split right.
TEST(SharedWeightRows, SymbolicRowsSplitBySizesAtRunTime) {
  GraphBuilder b;
  auto w = b.constant("w", random_tensor({6, 5}, 30));
  auto x0 = b.input("x0", {-1, 6}, DType::kFloat32, {"batch"});
  auto x1 = b.input("x1", {-1, 6}, DType::kFloat32, {"batch"});
  b.output(b.node("MatMul", {x0, w}));
  b.output(b.node("MatMul", {x1, w}));
  auto g = b.graph();
  auto opt = check_pass(g, {random_tensor({3, 6}, 31), random_tensor({3, 6}, 32)}, swr_pass, "shared-weight-rows", 1);
  EXPECT_EQ(swr_count(*opt, "MatMul"), 1);
  for (auto rows : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {2, 5}, {4, 1}}) {
    const std::vector<Tensor> in = {random_tensor({rows.first, 6}, 33), random_tensor({rows.second, 6}, 34)};
    auto want = run_graph(g, in);
    auto got = run_graph(opt, in);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) expect_close(got[i], want[i]);
  }
}

}  // namespace
}  // namespace dlrt::testing
