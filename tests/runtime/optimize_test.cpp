// The optimiser as a session runs it: standard passes before placement, CPU
// fusions after; results equal to the unoptimised session.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "dlrt/session.h"
#include "ir/onnx_export.h"
#include "runtime/optimize.h"
#include "../ir/graph_builder.h"

namespace dlrt::testing {
namespace {

using ir::Attribute;

// A small BERT-like block: dynamic batch/sequence, runtime Reshape shapes,
// attention with an additive mask, erf GELU, decomposed LayerNorm. With
// `dynamic_quant` its output goes through DynamicQuantizeLinear and
// DequantizeLinear, as a quantize_dynamic model's next layer reads it.
std::shared_ptr<ir::Graph> bert_block(int64_t hidden, int64_t heads, bool dynamic_quant = false) {
  const int64_t d = hidden / heads;
  GraphBuilder b;
  auto x = b.input("x", {-1, -1, hidden}, DType::kFloat32, {"batch", "seq"});
  auto mask = b.input("mask", {-1, -1}, DType::kFloat32, {"batch", "seq"});
  auto m4 = b.node("Unsqueeze", {mask, b.ints("ax12", {1, 2})});
  auto add_mask = b.node("Mul", {b.node("Sub", {b.scalar("one", 1.0f), m4}), b.scalar("neg", -10000.0f)});
  auto shape = b.node("Shape", {x});
  auto bdim = b.node("Unsqueeze", {b.node("Gather", {shape, b.constant("g0", Tensor::scalar<int64_t>(0))}, {{"axis", ai(0)}}),
                                   b.ints("ax0", {0})});
  auto sdim = b.node("Unsqueeze", {b.node("Gather", {shape, b.constant("g1", Tensor::scalar<int64_t>(1))}, {{"axis", ai(0)}}),
                                   b.ints("ax0b", {0})});
  auto split_shape = b.node("Concat", {bdim, sdim, b.ints("h", {heads}), b.ints("d", {d})}, {{"axis", ai(0)}});
  auto proj = [&](const char* name, uint32_t seed, std::vector<int64_t> perm) {
    auto mm = b.node("MatMul", {x, b.constant(std::string(name) + "_w", random_tensor({hidden, hidden}, seed, -0.3f, 0.3f))});
    auto y = b.node("Add", {b.constant(std::string(name) + "_b", random_tensor({hidden}, seed + 1)), mm});
    return b.node("Transpose", {b.node("Reshape", {y, split_shape})}, {{"perm", ais(perm)}});
  };
  auto q = proj("q", 10, {0, 2, 1, 3});
  auto k = proj("k", 20, {0, 2, 3, 1});
  auto v = proj("v", 30, {0, 2, 1, 3});
  auto s = b.node("Add", {b.node("Div", {b.node("MatMul", {q, k}), b.scalar("sqrtd", std::sqrt(float(d)))}), add_mask});
  auto ctxv = b.node("Transpose", {b.node("MatMul", {b.node("Softmax", {s}, {{"axis", ai(-1)}}), v})},
                     {{"perm", ais({0, 2, 1, 3})}});
  auto merged = b.node("Reshape", {ctxv, b.node("Concat", {bdim, sdim, b.ints("hid", {hidden})}, {{"axis", ai(0)}})});
  auto h = b.node("Add", {merged, x});
  // Decomposed LayerNorm.
  auto mean = b.node("ReduceMean", {h}, {{"axes", ais({-1})}});
  auto dv = b.node("Sub", {h, mean});
  auto var = b.node("ReduceMean", {b.node("Pow", {dv, b.scalar("two", 2.0f)})}, {{"axes", ais({-1})}});
  auto ln = b.node("Div", {dv, b.node("Sqrt", {b.node("Add", {var, b.scalar("eps", 1e-6f)})})});
  // FFN with erf GELU.
  auto f1 = b.node("Add", {b.node("MatMul", {ln, b.constant("f1_w", random_tensor({hidden, 2 * hidden}, 40, -0.3f, 0.3f))}),
                           b.constant("f1_b", random_tensor({2 * hidden}, 41))});
  auto a = b.node("Add", {b.node("Erf", {b.node("Div", {f1, b.scalar("r2", 1.4142135f)})}), b.scalar("one2", 1.0f)});
  auto gelu = b.node("Mul", {b.node("Mul", {f1, a}), b.scalar("half", 0.5f)});
  auto f2 = b.node("Add", {b.node("MatMul", {gelu, b.constant("f2_w", random_tensor({2 * hidden, hidden}, 42, -0.3f, 0.3f))}),
                           b.constant("f2_b", random_tensor({hidden}, 43))});
  auto y = b.node("Add", {f2, ln});
  if (dynamic_quant) {
    auto q = b.nodes("DynamicQuantizeLinear", {y}, 3);
    y = b.node("DequantizeLinear", {q[0], q[1], q[2]});
  }
  b.output(y, DType::kFloat32, {-1, -1, hidden}, {"batch", "seq"});
  return b.graph();
}

// The same bits, element for element.
void expect_same_bits(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.shape(), b.shape());
  ASSERT_EQ(a.dtype(), b.dtype());
  EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()), 0);
}

std::vector<Tensor> run_session(const std::string& bytes, bool optimize, const std::map<std::string, Tensor>& in,
                                size_t* nodes = nullptr) {
  SessionOptions o;
  o.device = "cpu";
  o.threads = 2;
  o.optimize = optimize;
  auto s = Session::create_from_bytes(bytes, o);
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  if (!s.ok()) return {};
  auto out = (*s)->run(in);
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  return out.ok() ? *out : std::vector<Tensor>{};
}

TEST(Optimize, BertBlockSameResultsFewerNodes) {
  auto g = bert_block(32, 4);
  auto bytes = ir::export_onnx(*g);
  ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
  for (auto [B, S] : std::vector<std::pair<int64_t, int64_t>>{{1, 7}, {3, 5}}) {
    auto mask = Tensor::allocate(DType::kFloat32, {B, S}).value();
    for (int64_t i = 0; i < B * S; ++i) mask.data<float>()[i] = (i % S) < S - (i / S) ? 1.0f : 0.0f;
    std::map<std::string, Tensor> in = {{"x", random_tensor({B, S, 32}, 50)}, {"mask", mask}};
    auto want = run_session(*bytes, false, in);
    auto got = run_session(*bytes, true, in);
    ASSERT_EQ(want.size(), 1u);
    ASSERT_EQ(got.size(), 1u);
    expect_close(got[0], want[0], 1e-4f);
  }
}

TEST(Optimize, PassesFireOnBertBlock) {
  auto g = bert_block(32, 4);
  ThreadPool pool(1);
  auto fired = optimize_standard(*g, pool);
  ASSERT_TRUE(fired.ok());
  EXPECT_GE((*fired)["layer-norm"], 1);
  EXPECT_EQ(count_ops(*g, "ReduceMean"), 0);
  auto fused = optimize_cpu_fusions(*g);
  ASSERT_TRUE(fused.ok());
  EXPECT_EQ((*fused)["attention"], 1);
  EXPECT_EQ((*fused)["gelu"] + (*fused)["bias-activation"] > 0, true);
  EXPECT_EQ(count_ops(*g, "Softmax"), 0);
  EXPECT_EQ(count_ops(*g, "Erf"), 0);
}

// Ahead of a dynamic quantizer every float bit counts (its per-tensor scale
// turns an ulp into an integer step): the fusions that round differently
// leave the whole block alone, and the optimised session equals the
// unoptimised one bit for bit.
TEST(Optimize, NoRoundingChangeAheadOfDynamicQuantizer) {
  auto g = bert_block(32, 4, /*dynamic_quant=*/true);
  auto bytes = ir::export_onnx(*g);
  ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
  ThreadPool pool(1);
  auto fired = optimize_standard(*g, pool);
  ASSERT_TRUE(fired.ok());
  EXPECT_EQ((*fired)["layer-norm"], 0);
  auto fused = optimize_cpu_fusions(*g);
  ASSERT_TRUE(fused.ok());
  EXPECT_EQ((*fused)["attention"], 0);
  EXPECT_EQ((*fused)["gelu"], 0);
  EXPECT_EQ((*fused)["bias-activation"], 0);
  EXPECT_EQ(count_ops(*g, "Softmax"), 1);
  for (auto [B, S] : std::vector<std::pair<int64_t, int64_t>>{{1, 7}, {2, 5}}) {
    auto mask = Tensor::allocate(DType::kFloat32, {B, S}).value();
    for (int64_t i = 0; i < B * S; ++i) mask.data<float>()[i] = 1.0f;
    std::map<std::string, Tensor> in = {{"x", random_tensor({B, S, 32}, 60)}, {"mask", mask}};
    auto want = run_session(*bytes, false, in);
    auto got = run_session(*bytes, true, in);
    ASSERT_EQ(want.size(), 1u);
    ASSERT_EQ(got.size(), 1u);
    expect_same_bits(got[0], want[0]);
  }
}

// Only what a dynamic quantizer reads is held back: a Gelu after the last one still fuses.
TEST(Optimize, FusesAfterTheLastDynamicQuantizer) {
  GraphBuilder b;
  auto x = b.input("x", {2, 8});
  auto q = b.nodes("DynamicQuantizeLinear", {x}, 3);
  auto d = b.node("DequantizeLinear", {q[0], q[1], q[2]});
  b.graph()->values[d].type = b.graph()->values[x].type;  // float32 [2, 8], as an exporter's value_info says
  auto a = b.node("Add", {b.node("Erf", {b.node("Div", {d, b.scalar("r2", 1.4142135f)})}), b.scalar("one", 1.0f)});
  b.output(b.node("Mul", {b.node("Mul", {d, a}), b.scalar("half", 0.5f)}));
  auto g = b.graph();
  auto fused = optimize_cpu_fusions(*g);
  ASSERT_TRUE(fused.ok());
  EXPECT_EQ((*fused)["gelu"], 1);
}

// A float16 graph of com.microsoft transformer ops (CPU kernels in float32
// only) runs with the optimizer off too: computed in float32, as optimised.
TEST(Optimize, HalfContribGraphRunsUnoptimized) {
  GraphBuilder b;
  auto x = b.input("x", {2, 3, 8}, DType::kFloat16);
  auto skip = b.input("skip", {2, 3, 8}, DType::kFloat16);
  auto gamma_t = Tensor::allocate(DType::kFloat16, {8}).value();
  for (int i = 0; i < 8; ++i) gamma_t.data<Float16>()[i] = Float16(1.0f + 0.125f * i);
  auto gamma = b.constant("gamma", std::move(gamma_t));
  ir::Node ln;
  ln.name = "sln";
  ln.op_type = "SkipLayerNormalization";
  ln.domain = "com.microsoft";
  ln.opset = 1;
  ln.inputs = {x, skip, gamma};
  auto y = b.graph()->add_value("y");
  ln.outputs = {y};
  b.graph()->nodes.push_back(ln);
  b.graph()->opsets["com.microsoft"] = 1;
  b.output(y, DType::kFloat16, {2, 3, 8});
  auto bytes = ir::export_onnx(*b.graph());
  ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
  auto half = [](const Tensor& f) {
    auto h = Tensor::allocate(DType::kFloat16, f.shape()).value();
    for (int64_t i = 0; i < f.size(); ++i) h.data<Float16>()[i] = Float16(f.data<float>()[i]);
    return h;
  };
  std::map<std::string, Tensor> in = {{"x", half(random_tensor({2, 3, 8}, 70))}, {"skip", half(random_tensor({2, 3, 8}, 71))}};
  auto want = run_session(*bytes, true, in);
  auto got = run_session(*bytes, false, in);
  ASSERT_EQ(want.size(), 1u);
  ASSERT_EQ(got.size(), 1u);
  expect_same_bits(got[0], want[0]);
}

TEST(Optimize, StaticModelShapesFoldAway) {
  // Static input: Shape -> Gather -> Cast -> Div folds to a constant.
  GraphBuilder b;
  auto x = b.input("x", {2, 6});
  auto n = b.node("Cast", {b.node("Gather", {b.node("Shape", {x}), b.constant("i", Tensor::scalar<int64_t>(1))}, {{"axis", ai(0)}})},
                  {{"to", ai(1)}});
  b.output(b.node("Div", {x, n}));
  auto g = b.graph();
  ThreadPool pool(1);
  auto fired = optimize_standard(*g, pool);
  ASSERT_TRUE(fired.ok());
  EXPECT_EQ(g->nodes.size(), 1u);
  EXPECT_GE((*fired)["shape-folding"], 1);
}

}  // namespace
}  // namespace dlrt::testing
