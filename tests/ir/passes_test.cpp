// Each optimisation pass: it fires on its pattern, leaves near-misses alone,
// and the graph computes the same values afterwards.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include <onnx/onnx_pb.h>

#include "ir/onnx_export.h"
#include "ir/onnx_import.h"
#include "ir/passes/passes.h"
#include "runtime/optimize.h"
#include "graph_builder.h"
#include "backends/cpu/kernel.h"

namespace dlrt::testing {
namespace {

using ir::Attribute;
namespace p = ir::passes;

Attribute af(float v) { Attribute a; a.kind = Attribute::Kind::kFloat; a.f = v; return a; }

ThreadPool& pool() {
  static ThreadPool p(2);
  return p;
}

// Context with the CPU kernels as evaluator and as the supported-op oracle.
p::PassContext cpu_context() {
  p::PassContext ctx;
  ctx.evaluate = [](const ir::Node& n, const std::vector<const Tensor*>& in) -> Result<std::vector<Tensor>> {
    const cpu::KernelDef* def = cpu::builtin_kernels().find(n.op_type, n.domain, n.opset);
    if (!def) return Unsupported("no kernel");
    DLRT_ASSIGN_OR_RETURN(auto k, def->factory(n));
    std::vector<RunValue> vals(in.size());
    std::vector<const RunValue*> ptrs(in.size(), nullptr);
    for (size_t i = 0; i < in.size(); ++i)
      if (in[i]) vals[i] = RunValue::of(*in[i]), ptrs[i] = &vals[i];
    std::vector<RunValue> outs(n.outputs.size());
    cpu::KernelContext c(n, ptrs, outs, pool(), nullptr);
    DLRT_RETURN_IF_ERROR(k->compute(c));
    std::vector<Tensor> r;
    for (auto& o : outs) r.push_back(o.tensor);
    return r;
  };
  ctx.supports = [](const std::string& op, const std::string& domain, int opset) {
    return cpu::builtin_kernels().find(op, domain, opset) != nullptr;
  };
  return ctx;
}

// Runs the graph before and after `pass`, compares outputs.
template <typename Pass>
std::shared_ptr<ir::Graph> check_pass(std::shared_ptr<ir::Graph> g, const std::vector<Tensor>& inputs, Pass pass,
                                      const std::string& name, int expect_fired, float tol = 1e-5f) {
  auto before = run_graph(g, inputs);
  auto opt = std::make_shared<ir::Graph>(*g);
  p::PassContext ctx = cpu_context();
  int n = pass(*opt, ctx);
  EXPECT_EQ(n, expect_fired) << name;
  EXPECT_EQ(ctx.fired[name], expect_fired);
  EXPECT_TRUE(opt->topological_sort().ok());
  auto after = run_graph(opt, inputs);
  EXPECT_EQ(before.size(), after.size());
  for (size_t i = 0; i < before.size() && i < after.size(); ++i) expect_close(after[i], before[i], tol);
  return opt;
}

TEST(Passes, ConstantFoldingFoldsConstantSubgraphs) {
  GraphBuilder b;
  auto x = b.input("x", {2, 3});
  auto c = b.node("Add", {b.scalar("a", 1.5f), b.scalar("b", 2.0f)});
  auto d = b.node("Sqrt", {c});
  b.output(b.node("Mul", {x, d}));
  auto opt = check_pass(b.graph(), {random_tensor({2, 3}, 1)}, p::fold_constants, "constant-folding", 2);
  EXPECT_EQ(opt->nodes.size(), 1u);
  EXPECT_EQ(opt->nodes[0].op_type, "Mul");
}

TEST(Passes, ConstantFoldingOfAGraphOutput) {
  GraphBuilder b;
  auto x = b.input("x", {2});
  b.output(b.node("Neg", {x}));
  b.output(b.node("Add", {b.scalar("a", 1.0f), b.scalar("b", 2.0f)}));
  auto opt = check_pass(b.graph(), {random_tensor({2}, 42)}, p::fold_constants, "constant-folding", 1);
  EXPECT_EQ(opt->nodes.size(), 1u);
}

TEST(Passes, ConstantFoldingLeavesRandomOpsAndGraphInputs) {
  GraphBuilder b;
  auto x = b.input("x", {2});
  b.output(b.node("RandomUniformLike", {b.scalar("s", 1.0f)}));
  b.output(b.node("Neg", {x}));
  auto g = b.graph();
  p::PassContext ctx = cpu_context();
  EXPECT_EQ(p::fold_constants(*g, ctx), 0);
  EXPECT_EQ(g->nodes.size(), 2u);
}

TEST(Passes, DeadNodesRemovedInputsKept) {
  GraphBuilder b;
  auto x = b.input("x", {4});
  auto unused_in = b.input("unused", {4});
  b.node("Exp", {b.node("Neg", {unused_in})});  // nobody reads it
  b.output(b.node("Relu", {x}));
  auto g = b.graph();
  auto opt = check_pass(g, {random_tensor({4}, 2), random_tensor({4}, 3)}, p::eliminate_dead_nodes, "dead-nodes", 2);
  EXPECT_EQ(opt->nodes.size(), 1u);
  EXPECT_EQ(opt->inputs.size(), 2u);
}

TEST(Passes, ShapeFoldingWithSymbolicDims) {
  // x: [batch, 6, 4]; Reshape(x, Concat(Shape(x)[0:1], [-1])) -> [batch, 24];
  // Gather(Shape(x), 2) = 4 is static although batch is not.
  GraphBuilder b;
  auto x = b.input("x", {-1, 6, 4}, DType::kFloat32, {"batch"});
  auto shape = b.node("Shape", {x});
  auto head = b.node("Slice", {shape, b.ints("s0", {0}), b.ints("s1", {1})}, {}, 13);
  auto target = b.node("Concat", {head, b.ints("m1", {-1})}, {{"axis", ai(0)}});
  auto flat = b.node("Reshape", {x, target});
  auto last = b.node("Gather", {b.node("Shape", {flat}), b.constant("i1", Tensor::scalar<int64_t>(1))}, {{"axis", ai(0)}});
  auto lastf = b.node("Cast", {last}, {{"to", ai(1)}});
  b.output(b.node("Div", {flat, lastf}));
  auto g = b.graph();
  auto opt = check_pass(g, {random_tensor({3, 6, 4}, 4)}, [](ir::Graph& gr, p::PassContext& c) {
    return p::fold_shapes(gr, c);
  }, "shape-folding", 1);
  // The second Shape -> Gather (24) folds; the Reshape target depends on batch and stays.
  EXPECT_EQ(count_ops(*opt, "Reshape"), 1);
  p::PassContext ctx = cpu_context();
  p::fold_constants(*opt, ctx);
  p::eliminate_dead_nodes(*opt, ctx);
  EXPECT_EQ(count_ops(*opt, "Cast"), 0);
  EXPECT_EQ(count_ops(*opt, "Gather"), 0);
  const auto& fs = opt->values[flat].type.shape;
  ASSERT_TRUE(fs.has_value());
  ASSERT_EQ(fs->size(), 2u);
  EXPECT_EQ((*fs)[0].symbol, "batch");
  EXPECT_EQ((*fs)[1].size, 24);
  expect_close(run_graph(opt, {random_tensor({3, 6, 4}, 4)})[0], run_graph(g, {random_tensor({3, 6, 4}, 4)})[0]);
}

TEST(Passes, ShapeFoldingSharesEqualSymbolicShapeValues) {
  // Gather(Shape(a), 0) and Gather(Shape(Relu(a)), 0) are both `batch`:
  // the second reads the first, and its Shape/Gather die.
  GraphBuilder b;
  auto a = b.input("a", {-1, 4}, DType::kFloat32, {"batch"});
  auto r = b.node("Relu", {a});
  auto g0 = b.node("Gather", {b.node("Shape", {a}), b.constant("i0", Tensor::scalar<int64_t>(0))}, {{"axis", ai(0)}});
  auto g1 = b.node("Gather", {b.node("Shape", {r}), b.constant("j0", Tensor::scalar<int64_t>(0))}, {{"axis", ai(0)}});
  auto t0 = b.node("Concat", {b.node("Unsqueeze", {g0, b.ints("u0", {0})}), b.ints("m1", {-1})}, {{"axis", ai(0)}});
  auto t1 = b.node("Concat", {b.node("Unsqueeze", {g1, b.ints("u1", {0})}), b.ints("m2", {-1})}, {{"axis", ai(0)}});
  b.output(b.node("Add", {b.node("Reshape", {a, t0}), b.node("Reshape", {r, t1})}));
  auto g = b.graph();
  auto opt = check_pass(g, {random_tensor({3, 4}, 40)}, [](ir::Graph& gr, p::PassContext& c) {
    return p::fold_shapes(gr, c);
  }, "shape-folding", 4);  // Shape, Gather, Unsqueeze, Concat of the second chain
  p::PassContext ctx = cpu_context();
  p::eliminate_dead_nodes(*opt, ctx);
  EXPECT_EQ(count_ops(*opt, "Shape"), 1);
  EXPECT_EQ(count_ops(*opt, "Concat"), 1);
  expect_close(run_graph(opt, {random_tensor({2, 4}, 41)})[0], run_graph(g, {random_tensor({2, 4}, 41)})[0]);
}

TEST(Passes, ShapeFoldingWithPinnedInputShapes) {
  GraphBuilder b;
  auto x = b.input("x", {-1, 8}, DType::kFloat32, {"batch"});
  auto target = b.node("Concat", {b.node("Shape", {x}), b.ints("one", {1})}, {{"axis", ai(0)}});
  b.output(b.node("Reshape", {x, target}));
  auto g = b.graph();
  auto opt = check_pass(g, {random_tensor({5, 8}, 5)}, [](ir::Graph& gr, p::PassContext& c) {
    return p::fold_shapes(gr, c, {{"x", {5, 8}}});
  }, "shape-folding", 2);
  p::PassContext ctx = cpu_context();
  p::eliminate_dead_nodes(*opt, ctx);
  EXPECT_EQ(opt->nodes.size(), 1u);
}

TEST(Passes, ShapeFoldingTypesQuantizedMicrosoftOps) {
  // ONNX Runtime's QOperator ops (com.microsoft): libonnx knows no schema for
  // them, so dlrt's shape inference gives their outputs dtypes and shapes.
  GraphBuilder b;
  auto x = b.input("x", {-1, 8, 4, 4}, DType::kUInt8, {"batch"});
  auto s = b.scalar("s", 0.05f);
  auto z = b.constant("z", Tensor::scalar<uint8_t>(128));
  const std::string ms = "com.microsoft";
  auto sig = b.node("QLinearSigmoid", {x, s, z, s, z}, {}, 1, ms);
  auto bias = b.constant("c", Tensor::from_vector<uint8_t>({8, 1, 1}, std::vector<uint8_t>(8, 3)));
  auto add = b.node("QLinearAdd", {sig, s, z, bias, s, z, s, z}, {}, 1, ms);
  auto gap = b.node("QLinearGlobalAveragePool", {add, s, z, s, z}, {}, 1, ms);
  auto flat = b.node("Flatten", {gap});
  auto w = b.constant("w", Tensor::from_vector<int8_t>({10, 8}, std::vector<int8_t>(80, 1)));
  auto zw = b.constant("zw", Tensor::scalar<int8_t>(0));
  auto q = b.node("QGemm", {flat, s, z, w, s, zw, ir::kNoValue, s, z}, {{"transB", ai(1)}}, 1, ms);
  auto f = b.node("QGemm", {flat, s, z, w, s, zw}, {{"transB", ai(1)}}, 1, ms);
  b.output(q);
  b.output(f);
  auto g = b.graph();
  g->opsets["com.microsoft"] = 1;
  p::PassContext ctx = cpu_context();
  p::fold_shapes(*g, ctx);
  auto expect_type = [&](ir::ValueId v, DType dt, std::vector<int64_t> dims, const char* what) {
    const ir::TypeInfo& t = g->values[v].type;
    EXPECT_EQ(t.dtype, dt) << what;
    ASSERT_TRUE(t.shape.has_value()) << what;
    ASSERT_EQ(t.shape->size(), dims.size()) << what;
    EXPECT_EQ((*t.shape)[0].symbol, "batch") << what;
    for (size_t i = 1; i < dims.size(); ++i) EXPECT_EQ((*t.shape)[i].size, dims[i]) << what << " dim " << i;
  };
  expect_type(sig, DType::kUInt8, {-1, 8, 4, 4}, "QLinearSigmoid");
  expect_type(add, DType::kUInt8, {-1, 8, 4, 4}, "QLinearAdd");
  expect_type(gap, DType::kUInt8, {-1, 8, 1, 1}, "QLinearGlobalAveragePool");
  expect_type(flat, DType::kUInt8, {-1, 8}, "Flatten");
  expect_type(q, DType::kUInt8, {-1, 10}, "QGemm quantized");
  expect_type(f, DType::kFloat32, {-1, 10}, "QGemm float");
  // And the graph runs.
  auto out = run_graph(g, {Tensor::from_vector<uint8_t>({2, 8, 4, 4}, std::vector<uint8_t>(256, 140))});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), (Shape{2, 10}));
  EXPECT_EQ(out[1].dtype(), DType::kFloat32);
}

TEST(Passes, ShapeFoldingKeepsTheRankOfRunTimeShapes) {
  // Reshape to a shape known only at run time but of known length, then
  // Slice with run-time bounds, then ConstantOfShape of a run-time shape:
  // no dims are known, but every rank is.
  GraphBuilder b;
  auto x = b.input("x", {-1, 8, 4}, DType::kFloat32, {"batch"});
  auto target = b.input("target", {4}, DType::kInt64);
  auto starts = b.input("starts", {1}, DType::kInt64);
  auto ends = b.input("ends", {1}, DType::kInt64);
  auto r = b.node("Reshape", {x, target});
  auto sl = b.node("Slice", {r, starts, ends, b.ints("axes", {1})}, {}, 13);
  auto filled = b.node("ConstantOfShape", {target});
  b.output(b.node("Relu", {sl}));
  b.output(filled);
  auto g = b.graph();
  p::PassContext ctx = cpu_context();
  EXPECT_EQ(p::fold_shapes(*g, ctx), 0);
  for (auto [v, what] : {std::pair{r, "Reshape"}, std::pair{sl, "Slice"}, std::pair{filled, "ConstantOfShape"}}) {
    const auto& shape = g->values[v].type.shape;
    ASSERT_TRUE(shape.has_value()) << what << ": the rank was not inferred";
    EXPECT_EQ(shape->size(), 4u) << what;
  }
  // An export keeps what was learnt, and a graph output of unknown rank
  // (Relu's, whose type the builder leaves open) passes the re-import's
  // checks: a partition exported this way reads back with the same types.
  g->values[g->outputs[0]].type.shape.reset();
  auto bytes = ir::export_onnx(*g);
  ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
  auto back = ir::import_onnx_bytes(*bytes, "");
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  const ir::Graph& bg = *back->graph;
  for (const char* name : {"x", "target"}) ASSERT_NE(bg.find_value(name), ir::kNoValue) << name;
  const auto& rs = bg.values[bg.find_value(g->values[r].name)].type.shape;
  ASSERT_TRUE(rs.has_value()) << "the Reshape's rank was lost in the export";
  EXPECT_EQ(rs->size(), 4u);
  onnx::ModelProto exported;
  ASSERT_TRUE(exported.ParseFromString(*bytes));
  EXPECT_FALSE(exported.graph().output(0).type().tensor_type().has_shape()) << "the case under test was not exported";
}

TEST(Passes, ConvBatchNormFolds) {
  GraphBuilder b;
  auto x = b.input("x", {1, 3, 6, 6});
  auto conv = b.node("Conv", {x, b.constant("w", random_tensor({4, 3, 3, 3}, 6)), b.constant("cb", random_tensor({4}, 7))},
                     {{"pads", ais({1, 1, 1, 1})}});
  auto bn = b.node("BatchNormalization", {conv, b.constant("s", random_tensor({4}, 8, 0.5f, 1.5f)),
                                          b.constant("bb", random_tensor({4}, 9)), b.constant("m", random_tensor({4}, 10)),
                                          b.constant("v", random_tensor({4}, 11, 0.5f, 2.0f))},
                   {{"epsilon", af(1e-3f)}});
  b.output(b.node("Relu", {bn}));
  auto opt = check_pass(b.graph(), {random_tensor({1, 3, 6, 6}, 12)}, p::fold_conv_batchnorm, "conv-bn", 1, 1e-4f);
  EXPECT_EQ(count_ops(*opt, "BatchNormalization"), 0);
  EXPECT_EQ(count_ops(*opt, "Conv"), 1);
}

TEST(Passes, TransposePairsMergeOrVanish) {
  GraphBuilder b;
  auto x = b.input("x", {2, 3, 4, 5});
  auto t1 = b.node("Transpose", {x}, {{"perm", ais({0, 2, 1, 3})}});
  auto t2 = b.node("Transpose", {t1}, {{"perm", ais({0, 2, 1, 3})}});  // cancels t1
  auto t3 = b.node("Transpose", {b.node("Neg", {t2})}, {{"perm", ais({0, 2, 1, 3})}});
  auto t4 = b.node("Transpose", {t3}, {{"perm", ais({0, 1, 3, 2})}});  // merges with t3
  b.output(t4);
  auto opt = check_pass(b.graph(), {random_tensor({2, 3, 4, 5}, 13)}, p::eliminate_transposes, "transpose", 3);
  EXPECT_EQ(count_ops(*opt, "Transpose"), 1);
  EXPECT_EQ(opt->nodes.size(), 2u);
}

TEST(Passes, DecomposedLayerNormFuses) {
  GraphBuilder b;
  auto x = b.input("x", {2, 5, 8});
  auto mean = b.node("ReduceMean", {x}, {{"axes", ais({-1})}});
  auto d = b.node("Sub", {x, mean});
  auto var = b.node("ReduceMean", {b.node("Pow", {d, b.scalar("two", 2.0f)})}, {{"axes", ais({-1})}});
  auto den = b.node("Sqrt", {b.node("Add", {var, b.scalar("eps", 1e-5f)})});
  auto n = b.node("Div", {d, den});
  auto y = b.node("Add", {b.node("Mul", {n, b.constant("gamma", random_tensor({8}, 14))}),
                          b.constant("beta", random_tensor({8}, 15))});
  b.output(y);
  auto opt = check_pass(b.graph(), {random_tensor({2, 5, 8}, 16)}, [](ir::Graph& gr, p::PassContext& c) { return p::fuse_layer_norm(gr, c); }, "layer-norm", 1, 1e-4f);
  ASSERT_EQ(opt->nodes.size(), 1u);
  EXPECT_EQ(opt->nodes[0].op_type, "LayerNormalization");
}

TEST(Passes, LayerNormNearMissLeftAlone) {
  GraphBuilder b;
  auto x = b.input("x", {2, 8});
  auto mean = b.node("ReduceMean", {x}, {{"axes", ais({0})}});  // not the last axis
  auto d = b.node("Sub", {x, mean});
  auto var = b.node("ReduceMean", {b.node("Pow", {d, b.scalar("two", 2.0f)})}, {{"axes", ais({0})}});
  b.output(b.node("Div", {d, b.node("Sqrt", {b.node("Add", {var, b.scalar("eps", 1e-5f)})})}));
  check_pass(b.graph(), {random_tensor({2, 8}, 17)}, [](ir::Graph& gr, p::PassContext& c) { return p::fuse_layer_norm(gr, c); }, "layer-norm", 0);
}

TEST(Passes, GeluFusesAllArrangements) {
  for (int form = 0; form < 3; ++form) {
    GraphBuilder b;
    auto x = b.input("x", {3, 16});
    auto a = b.node("Add", {b.node("Erf", {b.node("Div", {x, b.scalar("r2", 1.4142135f)})}), b.scalar("one", 1.0f)});
    ir::ValueId y;
    if (form == 0) y = b.node("Mul", {b.node("Mul", {x, a}), b.scalar("h", 0.5f)});
    else if (form == 1) y = b.node("Mul", {x, b.node("Mul", {a, b.scalar("h", 0.5f)})});
    else y = b.node("Mul", {b.node("Mul", {x, b.scalar("h", 0.5f)}), a});
    b.output(y);
    auto opt = check_pass(b.graph(), {random_tensor({3, 16}, 18, -4, 4)}, p::fuse_gelu, "gelu", 1, 1e-5f);
    ASSERT_EQ(opt->nodes.size(), 1u) << "form " << form;
    EXPECT_EQ(opt->nodes[0].op_type, "Gelu");
  }
}

// x * Clip(x + 3, 0, 6) / 6 as exporters decompose HardSwish: Div by 6 or Mul
// by 1/6, after the Mul by x or before it; Clip with inputs (opset 11+) or
// attributes (opset 6).
TEST(Passes, HardSwishFusesAllArrangements) {
  for (int form = 0; form < 5; ++form) {
    GraphBuilder b;
    auto x = b.input("x", {3, 16});
    auto a = b.node("Add", {x, b.scalar("three", 3.0f)});
    ir::ValueId c;
    if (form == 4) {
      c = b.node("Clip", {a}, {{"min", af(0.0f)}, {"max", af(6.0f)}}, 6);
    } else {
      c = b.node("Clip", {a, b.scalar("lo", 0.0f), b.scalar("hi", 6.0f)});
    }
    ir::ValueId y;
    if (form == 0 || form == 4) y = b.node("Div", {b.node("Mul", {x, c}), b.scalar("six", 6.0f)});
    else if (form == 1) y = b.node("Mul", {b.node("Mul", {c, x}), b.scalar("sixth", 1.0f / 6.0f)});
    else if (form == 2) y = b.node("Mul", {x, b.node("Div", {c, b.scalar("six", 6.0f)})});
    else y = b.node("Mul", {b.node("Mul", {c, b.scalar("sixth", 1.0f / 6.0f)}), x});
    b.output(y);
    auto opt = check_pass(b.graph(), {random_tensor({3, 16}, 21, -6, 6)}, p::fuse_hard_swish, "hard-swish", 1, 1e-5f);
    ASSERT_EQ(opt->nodes.size(), 1u) << "form " << form;
    EXPECT_EQ(opt->nodes[0].op_type, "HardSwish") << "form " << form;
  }
}

// Near misses stay: another offset, another bound, a Mul by something other than
// x, and an intermediate that is also read elsewhere.
TEST(Passes, HardSwishNearMissesLeftAlone) {
  for (int form = 0; form < 4; ++form) {
    GraphBuilder b;
    auto x = b.input("x", {8});
    auto z = b.input("z", {8});
    auto a = b.node("Add", {x, b.scalar("k", form == 0 ? 2.0f : 3.0f)});
    auto c = b.node("Clip", {a, b.scalar("lo", 0.0f), b.scalar("hi", form == 1 ? 8.0f : 6.0f)});
    auto m = b.node("Mul", {form == 2 ? z : x, c});
    b.output(b.node("Div", {m, b.scalar("six", 6.0f)}));
    if (form == 3) b.output(m);
    check_pass(b.graph(), {random_tensor({8}, 22, -6, 6), random_tensor({8}, 23)}, p::fuse_hard_swish, "hard-swish", 0);
  }
}

TEST(Passes, GeluNotFusedWhenIntermediateIsAlsoRead) {
  GraphBuilder b;
  auto x = b.input("x", {8});
  auto e = b.node("Erf", {b.node("Div", {x, b.scalar("r2", 1.4142135f)})});
  auto a = b.node("Add", {e, b.scalar("one", 1.0f)});
  b.output(b.node("Mul", {b.node("Mul", {x, a}), b.scalar("h", 0.5f)}));
  b.output(e);  // escapes
  check_pass(b.graph(), {random_tensor({8}, 19)}, p::fuse_gelu, "gelu", 0);
}

// BERT-style attention: [B,S,H*D] projections reshaped to [B,S,H,D], transposed.
std::shared_ptr<ir::Graph> bert_attention(GraphBuilder& b, int64_t B, int64_t S, int64_t H, int64_t D, bool mask) {
  auto q = b.input("q", {B, S, H, D});
  auto k = b.input("k", {B, S, H, D});
  auto v = b.input("v", {B, S, H, D});
  auto m = mask ? b.input("mask", {B, 1, 1, S}) : ir::kNoValue;
  auto qt = b.node("Transpose", {q}, {{"perm", ais({0, 2, 1, 3})}});
  auto kt = b.node("Transpose", {k}, {{"perm", ais({0, 2, 3, 1})}});
  auto vt = b.node("Transpose", {v}, {{"perm", ais({0, 2, 1, 3})}});
  auto s = b.node("Div", {b.node("MatMul", {qt, kt}), b.scalar("sqrt_d", std::sqrt(static_cast<float>(D)))});
  if (mask) s = b.node("Add", {s, m});
  auto pr = b.node("Softmax", {s}, {{"axis", ai(-1)}});
  auto o = b.node("Transpose", {b.node("MatMul", {pr, vt})}, {{"perm", ais({0, 2, 1, 3})}});
  b.output(o);
  return b.graph();
}

TEST(Passes, AttentionFusesBertPattern) {
  GraphBuilder b;
  const int64_t B = 2, S = 13, H = 3, D = 8;
  auto g = bert_attention(b, B, S, H, D, true);
  auto mask = Tensor::allocate(DType::kFloat32, {B, 1, 1, S}).value();
  for (int64_t j = 0; j < S; ++j) mask.data<float>()[S + j] = j >= 9 ? -3.4e38f : 0.0f;  // second row padded
  std::vector<Tensor> in = {random_tensor({B, S, H, D}, 20), random_tensor({B, S, H, D}, 21),
                            random_tensor({B, S, H, D}, 22), mask};
  auto opt = check_pass(g, in, p::fuse_attention, "attention", 1, 1e-5f);
  ASSERT_EQ(opt->nodes.size(), 1u);
  EXPECT_EQ(opt->nodes[0].op_type, "Attention");
  EXPECT_EQ(opt->nodes[0].attr_string("output_layout", ""), "bshd");
}

TEST(Passes, AttentionFusesPackedQkvWithMulScale) {
  // ViT-style: qkv [B,N,3,H,D] -> Transpose(2,0,3,1,4) -> Gather 0/1/2.
  const int64_t B = 1, N = 11, H = 3, D = 16;
  GraphBuilder b;
  auto x = b.input("qkv", {B, N, 3, H, D});
  auto t = b.node("Transpose", {x}, {{"perm", ais({2, 0, 3, 1, 4})}});
  auto q = b.node("Gather", {t, b.constant("i0", Tensor::scalar<int64_t>(0))}, {{"axis", ai(0)}});
  auto k = b.node("Gather", {t, b.constant("i1", Tensor::scalar<int64_t>(1))}, {{"axis", ai(0)}});
  auto v = b.node("Gather", {t, b.constant("i2", Tensor::scalar<int64_t>(2))}, {{"axis", ai(0)}});
  auto kt = b.node("Transpose", {k}, {{"perm", ais({0, 1, 3, 2})}});
  auto s = b.node("Mul", {b.node("MatMul", {q, kt}), b.scalar("scale", 0.25f)});
  auto o = b.node("MatMul", {b.node("Softmax", {s}, {{"axis", ai(-1)}}), v});
  b.output(b.node("Transpose", {o}, {{"perm", ais({0, 2, 1, 3})}}));
  auto opt = check_pass(b.graph(), {random_tensor({B, N, 3, H, D}, 23, -2, 2)}, p::fuse_attention, "attention", 1, 1e-5f);
  ASSERT_EQ(opt->nodes.size(), 1u);
  EXPECT_EQ(opt->nodes[0].attr_string("qkv_layout", ""), "packed");
}

TEST(Passes, AttentionNotFusedWhenScoresAreRead) {
  GraphBuilder b;
  auto q = b.input("q", {1, 2, 4, 8});
  auto k = b.input("k", {1, 2, 4, 8});
  auto v = b.input("v", {1, 2, 4, 8});
  auto kt = b.node("Transpose", {k}, {{"perm", ais({0, 1, 3, 2})}});
  auto s = b.node("MatMul", {q, kt});
  auto pr = b.node("Softmax", {s}, {{"axis", ai(-1)}});
  b.output(b.node("MatMul", {pr, v}));
  b.output(s);
  check_pass(b.graph(), {random_tensor({1, 2, 4, 8}, 24), random_tensor({1, 2, 4, 8}, 25), random_tensor({1, 2, 4, 8}, 26)},
             p::fuse_attention, "attention", 0);
}

// mobilenet_v2's block: 1x1 Conv + Clip (after bias-activation a FusedConv),
// then a depthwise 3x3/2 Conv + Relu -> one FusedExpandDepthwise; a 1x1 conv
// whose output is also read elsewhere is left alone.
TEST(Passes, ExpandDepthwiseFusesPointwiseThenDepthwise) {
  if (!cpu::builtin_kernels().find("FusedExpandDepthwise", "com.dlrt", 1)) GTEST_SKIP() << "no kernel in this build";
  auto both = [](ir::Graph& g, p::PassContext& ctx) {
    p::fuse_bias_activation(g, ctx);
    return p::fuse_expand_depthwise(g, ctx);
  };
  for (bool shared : {false, true}) {
    GraphBuilder b;
    auto x = b.input("x", {1, 6, 9, 10});
    auto e = b.node("Conv", {x, b.constant("we", random_tensor({16, 6, 1, 1}, 50)), b.constant("be", random_tensor({16}, 51))});
    auto lo = b.scalar("lo", 0.0f), hi = b.scalar("hi", 6.0f);
    auto c = b.node("Clip", {e, lo, hi});
    auto d = b.node("Conv", {c, b.constant("wd", random_tensor({16, 1, 3, 3}, 52)), b.constant("bd", random_tensor({16}, 53))},
                    {{"group", ai(16)}, {"pads", ais({1, 1, 1, 1})}, {"strides", ais({2, 2})}});
    b.output(b.node("Relu", {d}));
    if (shared) b.output(b.node("Neg", {c}));
    auto opt = check_pass(b.graph(), {random_tensor({1, 6, 9, 10}, 54, -2, 2)}, both, "expand-depthwise", shared ? 0 : 1, 2e-5f);
    if (!shared) {
      ASSERT_EQ(opt->nodes.size(), 1u);
      EXPECT_EQ(opt->nodes[0].op_type, "FusedExpandDepthwise");
      EXPECT_EQ(opt->nodes[0].attr_string("expand_activation", ""), "Clip");
      EXPECT_EQ(opt->nodes[0].attr_string("activation", ""), "Relu");
    }
  }
}

// x [1, 6, 9, 10] (a 9 x 10 = 90-position plane) -> 1x1 Conv to `channels`
// -> Relu -> depthwise 3x3 (pad 1) -> Relu, the graph's output; returns the
// first Relu (the expanded plane). Weights from seeds `seed` and `seed` + 1.
ir::ValueId expand_then_depthwise(GraphBuilder& b, int64_t channels, uint32_t seed) {
  auto x = b.input("x", {1, 6, 9, 10});
  auto e = b.node("Conv", {x, b.constant("we", random_tensor({channels, 6, 1, 1}, seed))});
  auto r = b.node("Relu", {e});
  auto d = b.node("Conv", {r, b.constant("wd", random_tensor({channels, 1, 3, 3}, seed + 1))},
                  {{"group", ai(channels)}, {"pads", ais({1, 1, 1, 1})}});
  b.output(b.node("Relu", {d}));
  return r;
}

// bias-activation then expand-depthwise, on a context `setup` adjusts first.
template <typename Setup>
auto expand_depthwise_passes(Setup setup) {
  return [setup](ir::Graph& g, p::PassContext& ctx) {
    setup(ctx);
    p::fuse_bias_activation(g, ctx);
    return p::fuse_expand_depthwise(g, ctx);
  };
}

// With expand_depthwise_min_positions (AVX-512 CPUs: 64), an expanded plane
// of fewer positions is left to the separate convs; one of at least as many fuses.
TEST(Passes, ExpandDepthwiseSkipsPlanesUnderTheMinimum) {
  if (!cpu::builtin_kernels().find("FusedExpandDepthwise", "com.dlrt", 1)) GTEST_SKIP() << "no kernel in this build";
  for (int64_t min_positions : {91, 90}) {
    auto both = expand_depthwise_passes([min_positions](p::PassContext& ctx) {
      ctx.expand_depthwise_min_positions = min_positions;
    });
    GraphBuilder b;
    const ir::ValueId r = expand_then_depthwise(b, 16, 55);
    // The expanded plane's shape, as the importer's shape inference records it.
    ir::TypeInfo& t = b.graph()->values[r].type;
    t.dtype = DType::kFloat32;
    t.shape = std::vector<ir::Dim>{{1, ""}, {16, ""}, {9, ""}, {10, ""}};
    SCOPED_TRACE("min positions " + std::to_string(min_positions));
    check_pass(b.graph(), {random_tensor({1, 6, 9, 10}, 57, -2, 2)}, both, "expand-depthwise", min_positions > 90 ? 0 : 1,
               2e-5f);
  }
}

// expand_depthwise_channel_multiple (AVX-512 CPUs: 16): 24 channels fuse
// at a multiple of 8 and stay separate convs at 16; 32 fuse at either.
TEST(Passes, ExpandDepthwiseChannelMultiple) {
  if (!cpu::builtin_kernels().find("FusedExpandDepthwise", "com.dlrt", 1)) GTEST_SKIP() << "no kernel in this build";
  for (int64_t channels : {24, 32})
    for (int64_t multiple : {8, 16}) {
      auto both = expand_depthwise_passes([multiple](p::PassContext& ctx) {
        ctx.expand_depthwise_channel_multiple = multiple;
      });
      GraphBuilder b;
      expand_then_depthwise(b, channels, 80);
      SCOPED_TRACE(std::to_string(channels) + " channels, multiple " + std::to_string(multiple));
      check_pass(b.graph(), {random_tensor({1, 6, 9, 10}, 82, -2, 2)}, both, "expand-depthwise",
                 channels % multiple == 0 ? 1 : 0, 2e-5f);
    }
}

// A stem (3x3/2 on 3 channels: 27 taps) fuses with the depthwise conv after
// it; a 3x3 conv on 8 channels (72 taps) keeps its own kernel.
TEST(Passes, ExpandDepthwiseFusesSmallStemsOnly) {
  if (!cpu::builtin_kernels().find("FusedExpandDepthwise", "com.dlrt", 1)) GTEST_SKIP() << "no kernel in this build";
  auto both = [](ir::Graph& g, p::PassContext& ctx) {
    p::fuse_bias_activation(g, ctx);
    return p::fuse_expand_depthwise(g, ctx);
  };
  for (int64_t cin : {3, 8}) {
    GraphBuilder b;
    auto x = b.input("x", {1, cin, 12, 11});
    auto e = b.node("Conv", {x, b.constant("we", random_tensor({16, cin, 3, 3}, 60))},
                    {{"strides", ais({2, 2})}, {"pads", ais({1, 1, 1, 1})}});
    auto c = b.node("Relu", {e});
    auto d = b.node("Conv", {c, b.constant("wd", random_tensor({16, 1, 3, 3}, 61))},
                    {{"group", ai(16)}, {"pads", ais({1, 1, 1, 1})}});
    b.output(b.node("Relu", {d}));
    auto opt = check_pass(b.graph(), {random_tensor({1, cin, 12, 11}, 62, -2, 2)}, both, "expand-depthwise",
                          cin == 3 ? 1 : 0, 2e-5f);
    if (cin == 3) {
      ASSERT_EQ(opt->nodes.size(), 1u);
      EXPECT_EQ(opt->nodes[0].op_type, "FusedExpandDepthwise");
    }
  }
}

// The whole inverted-residual block: expand 1x1 + Clip, depthwise 3x3 +
// Clip, then the 1x1 projection with the block's input added (a FusedConv
// with Z) or alone (a plain Conv) -> one FusedExpandDepthwise with Wp, Bp
// [and Z]; a projection with a 3x3 kernel, or a depthwise output also read
// elsewhere, is left alone.
TEST(Passes, ExpandDepthwiseProjectFoldsThePointwiseConv) {
  if (!cpu::builtin_kernels().find("FusedExpandDepthwise", "com.dlrt", 1)) GTEST_SKIP() << "no kernel in this build";
  auto all = [](ir::Graph& g, p::PassContext& ctx) {
    p::fold_shapes(g, ctx);  // the residual check reads the values' shapes
    p::fuse_bias_activation(g, ctx);
    p::fuse_expand_depthwise(g, ctx);
    return p::fuse_expand_depthwise_project(g, ctx);
  };
  enum Variant { kResidual, kPlain, kWideKernel, kShared };
  for (Variant v : {kResidual, kPlain, kWideKernel, kShared}) {
    SCOPED_TRACE(static_cast<int>(v));
    GraphBuilder b;
    auto x = b.input("x", {1, 8, 10, 9});
    auto lo = b.scalar("lo", 0.0f), hi = b.scalar("hi", 6.0f);
    auto e = b.node("Conv", {x, b.constant("we", random_tensor({24, 8, 1, 1}, 70)), b.constant("be", random_tensor({24}, 71))});
    auto d = b.node("Conv", {b.node("Clip", {e, lo, hi}), b.constant("wd", random_tensor({24, 1, 3, 3}, 72))},
                    {{"group", ai(24)}, {"pads", ais({1, 1, 1, 1})}});
    auto dc = b.node("Clip", {d, lo, hi});
    const int64_t k = v == kWideKernel ? 3 : 1;
    auto pr = b.node("Conv", {dc, b.constant("wp", random_tensor({8, 24, k, k}, 73)), b.constant("bp", random_tensor({8}, 74))},
                     {{"pads", ais(std::vector<int64_t>(4, k / 2))}});
    b.output(v == kPlain ? pr : b.node("Add", {pr, x}));
    if (v == kShared) b.output(b.node("Neg", {dc}));
    auto opt = check_pass(b.graph(), {random_tensor({1, 8, 10, 9}, 75, -2, 2)}, all, "expand-depthwise-project",
                          v == kResidual || v == kPlain ? 1 : 0, 2e-5f);
    if (v == kResidual || v == kPlain) {
      ASSERT_EQ(opt->nodes.size(), 1u);
      EXPECT_EQ(opt->nodes[0].op_type, "FusedExpandDepthwise");
      EXPECT_EQ(opt->nodes[0].inputs.size(), v == kResidual ? 8u : 7u);  // X We Be Wd Bd Wp Bp [Z]
    }
  }
}

Tensor random_bytes(Shape shape, DType dt, uint32_t seed) {
  auto t = Tensor::allocate(dt, shape).value();
  std::mt19937 rng(seed);
  auto* p = static_cast<uint8_t*>(t.raw_data());
  for (int64_t i = 0; i < t.size(); ++i) p[i] = static_cast<uint8_t>(rng());
  return t;
}

// quantize_dynamic's product, MatMulInteger -> Cast -> Mul(scale) -> Add(bias),
// becomes one MatMulIntegerToFloat with bit-identical outputs, for a scale of
// one value and one per column; a Cast output read twice is left alone.
TEST(Passes, IntegerMatMulToFloatFusesCastMulAdd) {
  if (!cpu::builtin_kernels().find("MatMulIntegerToFloat", "com.dlrt", 1))
    GTEST_SKIP() << "no MatMulIntegerToFloat kernel in this build";
  for (bool per_column : {false, true}) {
    for (bool read_twice : {false, true}) {
      SCOPED_TRACE(std::string(per_column ? "per-column" : "one") + " scale" + (read_twice ? ", cast read twice" : ""));
      GraphBuilder b;
      auto a = b.input("a", {2, 5, 40}, DType::kUInt8);
      auto w = b.constant("w", random_bytes({40, 24}, DType::kInt8, 31));
      auto mm = b.node("MatMulInteger", {a, w, b.constant("azp", Tensor::scalar<uint8_t>(131)),
                                         b.constant("wzp", Tensor::scalar<int8_t>(-3))}, {}, 17);
      auto cast = b.node("Cast", {mm}, {{"to", ai(static_cast<int64_t>(DType::kFloat32))}});
      auto scale = per_column ? b.constant("scale", random_tensor({24}, 32, 1e-4f, 1e-2f)) : b.scalar("scale", 0.0123f);
      auto mul = b.node("Mul", {cast, scale});
      b.output(b.node("Add", {b.constant("bias", random_tensor({24}, 33)), mul}));
      if (read_twice) b.output(cast);
      auto opt = check_pass(b.graph(), {random_bytes({2, 5, 40}, DType::kUInt8, 34)}, p::fuse_integer_matmul_to_float,
                            "integer-matmul-float", read_twice ? 0 : 1, 0.0f);
      if (!read_twice) {
        ASSERT_EQ(opt->nodes.size(), 1u);
        EXPECT_EQ(opt->nodes[0].op_type, "MatMulIntegerToFloat");
      }
    }
  }
}

Tensor to_half(const Tensor& t) {
  auto h = Tensor::allocate(DType::kFloat16, t.shape()).value();
  for (int64_t i = 0; i < t.size(); ++i) h.data<Float16>()[i] = Float16(t.data<float>()[i]);
  return h;
}

// A float16 model with float32 inputs and outputs (onnxconverter_common's
// keep_io_types): computed in float32, every half value and constant gone,
// results within half precision of the half computation.
TEST(Passes, HalfModelComputesInFloat32) {
  GraphBuilder b;
  auto x = b.input("x", {1, 3, 8, 8});
  auto xh = b.node("Cast", {x}, {{"to", ai(static_cast<int64_t>(DType::kFloat16))}});
  auto conv = b.node("Conv", {xh, b.constant("w", to_half(random_tensor({4, 3, 3, 3}, 41))),
                              b.constant("bias", to_half(random_tensor({4}, 42)))},
                     {{"pads", ais({1, 1, 1, 1})}});
  auto act = b.node("Relu", {b.node("Add", {conv, b.constant("c", to_half(random_tensor({1, 4, 1, 1}, 43)))})});
  b.output(b.node("Cast", {act}, {{"to", ai(static_cast<int64_t>(DType::kFloat32))}}));
  auto opt = check_pass(b.graph(), {random_tensor({1, 3, 8, 8}, 44)}, p::compute_half_in_float32, "half-in-float32", 1,
                        1e-2f);
  for (const auto& v : opt->values) {
    EXPECT_NE(v.type.dtype, DType::kFloat16) << v.name;
    if (v.constant) {
      EXPECT_NE(v.constant->dtype(), DType::kFloat16) << v.name;
    }
  }
}

// Half graph inputs and outputs keep their type (a Cast at each border); an
// op outside the float-agnostic list leaves the whole graph as it is.
TEST(Passes, HalfModelBordersAndUnknownOps) {
  for (bool unknown : {false, true}) {
    GraphBuilder b;
    auto x = b.input("x", {2, 6}, DType::kFloat16);
    auto y = b.node("MatMul", {x, b.constant("w", to_half(random_tensor({6, 5}, 45)))});
    if (unknown) y = b.node("Hardmax", {y});
    b.output(y, DType::kFloat16, {2, 5});
    auto g = b.graph();
    auto opt = std::make_shared<ir::Graph>(*g);
    p::PassContext ctx = cpu_context();
    EXPECT_EQ(p::compute_half_in_float32(*opt, ctx), unknown ? 0 : 1);
    EXPECT_EQ(opt->values[opt->inputs[0]].type.dtype, DType::kFloat16);
    EXPECT_EQ(opt->values[opt->outputs[0]].type.dtype, DType::kFloat16);
    if (unknown) continue;
    EXPECT_EQ(count_ops(*opt, "Cast"), 2);
    const Tensor in = to_half(random_tensor({2, 6}, 46));
    auto want = run_graph(g, {in}), got = run_graph(opt, {in});
    ASSERT_EQ(got.size(), 1u);
    ASSERT_EQ(got[0].dtype(), DType::kFloat16);
    for (int64_t i = 0; i < got[0].size(); ++i)
      EXPECT_NEAR(static_cast<float>(got[0].data<Float16>()[i]), static_cast<float>(want[0].data<Float16>()[i]),
                  1e-2f * (1 + std::abs(static_cast<float>(want[0].data<Float16>()[i]))));
  }
}

TEST(Passes, BiasActivationFusesMatMulAddGelu) {
  if (!cpu::builtin_kernels().find("FusedMatMul", "com.dlrt", 1)) GTEST_SKIP() << "no FusedMatMul kernel in this build";
  GraphBuilder b;
  auto x = b.input("x", {2, 5, 16});
  auto mm = b.node("MatMul", {x, b.constant("w", random_tensor({16, 24}, 27))});
  auto y = b.node("Add", {b.constant("bias", random_tensor({24}, 28)), mm});
  b.output(b.node("Gelu", {y}, {}, 20));
  auto opt = check_pass(b.graph(), {random_tensor({2, 5, 16}, 29)}, p::fuse_bias_activation, "bias-activation", 1, 1e-4f);
  ASSERT_EQ(opt->nodes.size(), 1u);
  EXPECT_EQ(opt->nodes[0].op_type, "FusedMatMul");
}

// A transformer residual: MatMul + bias + Add(skip) -> one FusedMatMul with
// the skip as input 3 (added in the GEMM epilogue); a skip that broadcasts
// (not the output's shape) stays a separate Add.
TEST(Passes, BiasActivationFusesMatMulResidual) {
  if (!cpu::builtin_kernels().find("FusedMatMul", "com.dlrt", 1)) GTEST_SKIP() << "no FusedMatMul kernel in this build";
  // The residual check reads the values' shapes: infer them first, as the optimiser does.
  auto shaped = [](GraphBuilder& b) {
    auto g = b.graph();
    p::PassContext ctx = cpu_context();
    p::fold_shapes(*g, ctx);
    return g;
  };
  {
    GraphBuilder b;
    auto x = b.input("x", {2, 5, 16});
    auto r = b.input("r", {2, 5, 24});
    auto mm = b.node("MatMul", {x, b.constant("w", random_tensor({16, 24}, 40))});
    auto y = b.node("Add", {mm, b.constant("bias", random_tensor({24}, 41))});
    b.output(b.node("Add", {r, y}));
    auto opt = check_pass(shaped(b), {random_tensor({2, 5, 16}, 42), random_tensor({2, 5, 24}, 43)},
                          p::fuse_bias_activation, "bias-activation", 1, 1e-4f);
    ASSERT_EQ(opt->nodes.size(), 1u);
    EXPECT_EQ(opt->nodes[0].op_type, "FusedMatMul");
    ASSERT_EQ(opt->nodes[0].inputs.size(), 4u);
  }
  {
    GraphBuilder b;  // no bias: Z still goes to input 3
    auto x = b.input("x", {3, 16});
    auto r = b.input("r", {3, 24});
    auto mm = b.node("MatMul", {x, b.constant("w", random_tensor({16, 24}, 44))});
    b.output(b.node("Relu", {b.node("Add", {mm, r})}));
    auto opt = check_pass(shaped(b), {random_tensor({3, 16}, 45), random_tensor({3, 24}, 46)},
                          p::fuse_bias_activation, "bias-activation", 1, 1e-4f);
    ASSERT_EQ(opt->nodes.size(), 1u);
    EXPECT_EQ(opt->nodes[0].op_type, "FusedMatMul");
  }
  {
    GraphBuilder b;  // a broadcast skip ([24] against [3, 24] with no constant bias) is not a residual
    auto x = b.input("x", {3, 16});
    auto r = b.input("r", {1, 24});
    auto mm = b.node("MatMul", {x, b.constant("w", random_tensor({16, 24}, 47))});
    b.output(b.node("Add", {mm, r}));
    check_pass(shaped(b), {random_tensor({3, 16}, 48), random_tensor({1, 24}, 49)}, p::fuse_bias_activation,
               "bias-activation", 0);
  }
}

TEST(Passes, BiasActivationFusesConvClipAndGemmRelu) {
  if (!cpu::builtin_kernels().find("FusedConv", "com.dlrt", 1) ||
      !cpu::builtin_kernels().find("FusedGemm", "com.dlrt", 1))
    GTEST_SKIP() << "no FusedConv/FusedGemm kernel in this build";
  GraphBuilder b;
  auto x = b.input("x", {1, 3, 8, 8});
  auto c = b.node("Conv", {x, b.constant("w", random_tensor({4, 3, 3, 3}, 30)), b.constant("cb", random_tensor({4}, 31))},
                  {{"pads", ais({1, 1, 1, 1})}});
  auto r = b.node("Clip", {c, b.scalar("lo", 0.0f), b.scalar("hi", 0.5f)}, {}, 13);
  auto f = b.node("Flatten", {r});
  auto gm = b.node("Gemm", {f, b.constant("gw", random_tensor({10, 256}, 32)), b.constant("gb", random_tensor({10}, 33))},
                   {{"transB", ai(1)}});
  b.output(b.node("Relu", {gm}));
  auto opt = check_pass(b.graph(), {random_tensor({1, 3, 8, 8}, 34)}, p::fuse_bias_activation, "bias-activation", 2, 1e-4f);
  EXPECT_EQ(count_ops(*opt, "FusedConv"), 1);
  EXPECT_EQ(count_ops(*opt, "FusedGemm"), 1);
}

// SiLU (Sigmoid(v) then Mul by v, either operand order) after a Conv and a
// MatMul + bias fuses as activation "Silu"; a Conv output also read by a
// third node keeps its Sigmoid and Mul.
TEST(Passes, BiasActivationFusesSilu) {
  if (!cpu::builtin_kernels().find("FusedConv", "com.dlrt", 1) ||
      !cpu::builtin_kernels().find("FusedMatMul", "com.dlrt", 1))
    GTEST_SKIP() << "no FusedConv/FusedMatMul kernel in this build";
  for (bool shared : {false, true}) {
    GraphBuilder b;
    auto x = b.input("x", {1, 3, 8, 8});
    auto c = b.node("Conv", {x, b.constant("w", random_tensor({4, 3, 3, 3}, 70)), b.constant("cb", random_tensor({4}, 71))},
                    {{"pads", ais({1, 1, 1, 1})}});
    auto s = b.node("Mul", {b.node("Sigmoid", {c}), c});
    if (shared) b.output(b.node("Neg", {c}));
    auto f = b.node("Reshape", {s, b.constant("shape", Tensor::from_vector<int64_t>({2}, {1, 256}))});
    auto m = b.node("MatMul", {f, b.constant("mw", random_tensor({256, 10}, 72))});
    auto a = b.node("Add", {m, b.constant("mb", random_tensor({10}, 73))});
    b.output(b.node("Mul", {a, b.node("Sigmoid", {a})}));
    auto opt = check_pass(b.graph(), {random_tensor({1, 3, 8, 8}, 74, -3, 3)}, p::fuse_bias_activation,
                          "bias-activation", shared ? 1 : 2, 1e-4f);
    SCOPED_TRACE(shared ? "conv output read elsewhere" : "conv output read by the SiLU only");
    EXPECT_EQ(count_ops(*opt, "Sigmoid"), shared ? 1 : 0);
    for (const auto& n : opt->nodes) {
      if (n.op_type == "FusedMatMul" || (n.op_type == "FusedConv" && !shared)) {
        EXPECT_EQ(n.attr_string("activation", ""), "Silu") << n.describe();
      }
    }
  }
}

TEST(Passes, FusionsKeepNodeTagsAligned) {
  GraphBuilder b;
  auto g = bert_attention(b, 1, 4, 2, 8, false);
  std::vector<int> tags;
  for (size_t i = 0; i < g->nodes.size(); ++i) tags.push_back(static_cast<int>(i));
  p::PassContext ctx = cpu_context();
  ctx.node_tags = &tags;
  EXPECT_EQ(p::fuse_attention(*g, ctx), 1);
  ASSERT_EQ(tags.size(), g->nodes.size());
}

}  // namespace
}  // namespace dlrt::testing
